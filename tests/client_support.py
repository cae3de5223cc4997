"""Helpers for the client tests: a server on a chosen port (restarted on the same one),
a deterministic autoplayer, and a self-signed certificate authority made with ``cryptography``."""

from __future__ import annotations

import datetime
import ipaddress
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bigtwo.tools.local_server import LocalServer
from service_support import KEY_A

BIGTWO = str(Path(sys.executable).with_name("bigtwo"))


class Server(LocalServer):
    """``bigtwo serve`` on 127.0.0.1:``port`` (free when not given), started at once, not waited for;
    each :meth:`start` writes a log of its own. :meth:`stop` always ends it."""

    def __init__(self, tmp: Path, *args: str, port: int | None = None, keys: str = KEY_A) -> None:
        self.tmp = tmp
        self.starts = 0
        super().__init__(*args, port=port, grace=1, keys=keys, home=tmp / "home", log=tmp / "server.log", wait=False)

    def start(self) -> None:
        self.starts += 1
        self.log_path = self.tmp / f"server-{self.port}-{self.starts}.log"
        super().start()

    def calls(self, method: str) -> int:
        return sum(1 for line in self.log().splitlines() if f'"method": "{method}"' in line)


def hint_or_pass(client: Any, game: Any) -> str:
    """The deterministic autoplayer every test uses: the first hint, else pass."""
    hint = client.next_hint(game)
    return hint.play.text if hint.play is not None else "pass"


@dataclass
class Pki:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, as PEM files."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def make_pki(folder: Path) -> Pki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def key_pem(key: Any) -> bytes:
        return key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(name("bigtwo test CA"))
        .issuer_name(name("bigtwo test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(common: str, usage: Any, san: bool) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(common))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if san:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), key_pem(key)

    server_cert, server_key = leaf("localhost", ExtendedKeyUsageOID.SERVER_AUTH, True)
    client_cert, client_key = leaf("bigtwo test client", ExtendedKeyUsageOID.CLIENT_AUTH, False)
    files = {
        "ca.pem": ca_cert.public_bytes(serialization.Encoding.PEM),
        "server.pem": server_cert,
        "server.key": server_key,
        "client.pem": client_cert,
        "client.key": client_key,
    }
    for file_name, data in files.items():
        (folder / file_name).write_bytes(data)
    return Pki(*(folder / n for n in ("ca.pem", "server.pem", "server.key", "client.pem", "client.key")))
