"""Helpers for the client tests: a server on a chosen port (so it can be restarted on the same one),
a deterministic autoplayer, and a self-signed certificate authority made with ``cryptography``."""

from __future__ import annotations

import datetime
import ipaddress
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service_support import KEY_A, free_port

BIGTWO = str(Path(sys.executable).with_name("bigtwo"))


class Server:
    """``bigtwo serve`` on 127.0.0.1:``port`` (free when not given); :meth:`stop` always ends it."""

    def __init__(self, tmp: Path, *args: str, port: int | None = None, keys: str = KEY_A) -> None:
        self.tmp = tmp
        self.args = args
        self.port = port or free_port()
        self.keys = keys
        self.target = f"127.0.0.1:{self.port}"
        self.starts = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.starts += 1
        self.log_path = self.tmp / f"server-{self.port}-{self.starts}.log"
        env = {**os.environ, "BIGTWO_TOKEN_KEYS": self.keys, "BIGTWO_HOME": str(self.tmp / "home")}
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        command = [sys.executable, "-m", "bigtwo.cli.main", "serve", "--port", str(self.port)]
        command += ["--metrics-port", "0", "--grace", "1", *self.args]
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 120) -> None:
        """Until the port accepts a call (any answer, even UNAUTHENTICATED or a TLS refusal)."""
        import socket

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited {self.process.returncode}: {self.log()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise TimeoutError(f"server on {self.port} not ready")

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def calls(self, method: str) -> int:
        return sum(1 for line in self.log().splitlines() if f'"method": "{method}"' in line)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


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
