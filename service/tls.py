"""The server's TLS credentials, re-read from disk when the files change: a renewed certificate is
served without a restart.

gRPC asks :meth:`CertificateFiles.fetch` at every new TLS handshake
(``grpc.dynamic_ssl_server_credentials``). It looks at the files' identity (``stat``: device, inode,
size, modification time; a Kubernetes Secret volume swaps a symlink, cert-manager rewrites the files)
and answers None, "keep what you have", while nothing changed: a handshake costs one ``stat`` a file
more. When a file changed, it reads the certificate chain, the key and the client CA (mutual TLS),
checks that they go together (the key is the certificate's, every PEM parses) and hands gRPC the new
configuration; connections already open keep the certificate they were opened with. Files caught
half written, or a key that is not the new certificate's yet (two files replaced one after the
other), are refused with a warning and the previous pair is served until the files change again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from .telemetry import logger


class TlsFilesError(ValueError):
    """The TLS files cannot be served: unreadable, not PEM, or a key that is not the certificate's."""


@dataclass(frozen=True)
class Loaded:
    config: grpc.ServerCertificateConfiguration
    subject: str
    serial: str
    not_after: str


def _public(key: object) -> bytes:
    return key.public_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load(cert_path: Path, key_path: Path, ca_path: Path | None) -> Loaded:
    """Read and check the files; raise :class:`TlsFilesError` saying what is wrong."""
    try:
        cert, key = cert_path.read_bytes(), key_path.read_bytes()
        ca = ca_path.read_bytes() if ca_path is not None else None
    except OSError as exc:
        raise TlsFilesError(f"cannot read {exc.filename}: {exc.strerror}") from None
    try:
        chain = x509.load_pem_x509_certificates(cert)
        private = serialization.load_pem_private_key(key, password=None)
        if ca is not None:
            x509.load_pem_x509_certificates(ca)
    except ValueError as exc:
        raise TlsFilesError(f"not a usable PEM certificate, key or CA: {exc}") from None
    if _public(chain[0].public_key()) != _public(private.public_key()):
        raise TlsFilesError(f"the key in {key_path} is not the key of the certificate in {cert_path}")
    config = grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=ca)
    leaf = chain[0]
    return Loaded(
        config, leaf.subject.rfc4514_string(), format(leaf.serial_number, "x"), leaf.not_valid_after_utc.isoformat()
    )


class CertificateFiles:
    """The certificate chain, key and client CA files of a server, for gRPC's certificate fetcher."""

    def __init__(self, cert: str, key: str, client_ca: str = "") -> None:
        self.paths = (Path(cert), Path(key), *((Path(client_ca),) if client_ca else ()))
        self._lock = threading.Lock()
        self._seen = self._stamp()
        self.current = load(self.paths[0], self.paths[1], self.paths[2] if client_ca else None)
        self.reloads = 0

    def _stamp(self) -> tuple[tuple[int, int, int, int], ...]:
        stats = [os.stat(path) for path in self.paths]
        return tuple((s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns) for s in stats)

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's fetcher: a new configuration when the files changed and go together, else None."""
        try:
            stamp = self._stamp()
        except OSError:
            return None  # a file missing for a moment (being replaced): keep serving the last pair
        if stamp == self._seen:
            return None
        with self._lock:
            if stamp == self._seen:
                return None
            self._seen = stamp
            try:
                loaded = load(self.paths[0], self.paths[1], self.paths[2] if len(self.paths) > 2 else None)
            except TlsFilesError as exc:
                logger().warning("tls files not reloaded", error=str(exc), serving=self.current.serial)
                return None
            self.current, self.reloads = loaded, self.reloads + 1
        logger().info(
            "tls certificate reloaded", subject=loaded.subject, serial=loaded.serial, not_after=loaded.not_after
        )
        return loaded.config

    def credentials(self) -> grpc.ServerCredentials:
        # gRPC takes a fetcher's None as "no change" (its documented contract); the stubs omit it.
        fetch = cast(Callable[[], grpc.ServerCertificateConfiguration], self.fetch)
        return grpc.dynamic_ssl_server_credentials(
            self.current.config, fetch, require_client_authentication=len(self.paths) > 2
        )


def server_credentials(cert: str, key: str, client_ca: str = "") -> grpc.ServerCredentials | None:
    """Reloading credentials for ``--tls-cert``/``--tls-key`` (and ``--tls-client-ca``); None
    without TLS. Files that cannot be served at start raise :class:`TlsFilesError`."""
    if not cert and not key:
        return None
    if not (cert and key):
        raise TlsFilesError("--tls-cert and --tls-key go together")
    return CertificateFiles(cert, key, client_ca).credentials()


__all__ = ["CertificateFiles", "Loaded", "TlsFilesError", "load", "server_credentials"]
