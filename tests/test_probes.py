"""Probes and certificates that cost nothing (issue 31, item 5): the plaintext health-only port that
the kubelet's grpc probes ask when the service port speaks TLS, and TLS files swapped under a running
server served to new connections without a restart (service/health_port.py, service/tls.py)."""

from __future__ import annotations

import os
import queue
import shutil
import socket
import ssl
import time
from pathlib import Path

import grpc
import pytest
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from client_support import Pki, make_pki
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from service_support import CODE, ServerProcess, free_port

SERVICE = "bigtwo.v1.BigTwoService"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def peer_certificate(port: int) -> bytes:
    """The DER certificate a new TLS connection to 127.0.0.1:``port`` is shown (ALPN h2, as gRPC)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def der_of(pem_path: Path) -> bytes:
    return x509.load_pem_x509_certificate(pem_path.read_bytes()).public_bytes(serialization.Encoding.DER)


def health_status(port: int, service: str = "") -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10, wait_for_ready=True).status)


def wait_health(port: int, server: ServerProcess, seconds: float = 120) -> None:
    until = time.monotonic() + seconds
    while True:
        assert server.process.poll() is None, server.log()[-3000:]
        try:
            if health_status(port) == SERVING:
                return
        except grpc.RpcError:
            pass
        assert time.monotonic() < until, server.log()[-3000:]
        time.sleep(0.2)


def install(pki: Pki, live: Path) -> None:
    """Put ``pki``'s server certificate and key where the server reads them: the key first, then the
    certificate, each replaced whole (os.replace), as a renewal that rewrites two files does."""
    for source, name in ((pki.server_key, "tls.key"), (pki.server_cert, "tls.crt")):
        staged = live / f".{name}.new"
        shutil.copyfile(source, staged)
        os.replace(staged, live / name)


def tls_server(tmp_path: Path, live: Path, *extra: str) -> tuple[ServerProcess, int]:
    health_port = free_port()
    server = ServerProcess(
        tmp_path,
        "--tls-cert",
        str(live / "tls.crt"),
        "--tls-key",
        str(live / "tls.key"),
        "--health-port",
        str(health_port),
        "--no-call-log",
        *extra,
        metrics=False,
        wait=False,
    )
    wait_health(health_port, server)
    return server, health_port


def list_presets(port: int, ca: Path) -> int:
    credentials = grpc.ssl_channel_credentials(ca.read_bytes())
    with grpc.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
        return len(rpc.BigTwoServiceStub(channel).ListPresets(api.ListPresetsRequest(), timeout=10).presets)


def test_tls_files_swapped_under_a_running_server_are_served_to_new_connections(tmp_path: Path) -> None:
    for name in ("first", "second", "live"):
        (tmp_path / name).mkdir()
    first, second, live = make_pki(tmp_path / "first"), make_pki(tmp_path / "second"), tmp_path / "live"
    install(first, live)
    server, _ = tls_server(tmp_path, live)
    try:
        assert peer_certificate(server.port) == der_of(first.server_cert)
        old = grpc.secure_channel(server.target, grpc.ssl_channel_credentials(first.ca.read_bytes()))
        stub = rpc.BigTwoServiceStub(old)
        assert stub.ListPresets(api.ListPresetsRequest(), timeout=10).presets

        install(second, live)
        until = time.monotonic() + 30
        while peer_certificate(server.port) != der_of(second.server_cert):
            assert time.monotonic() < until, f"the new certificate was never served: {server.log()[-3000:]}"
            time.sleep(0.1)
        assert list_presets(server.port, second.ca)  # verified against the new certificate's CA
        with pytest.raises(grpc.RpcError) as refused:  # a new client that trusts only the old CA
            list_presets(server.port, first.ca)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        assert stub.ListPresets(api.ListPresetsRequest(), timeout=10).presets, "an open connection goes on"
        old.close()
        assert '"tls certificate reloaded"' in server.log()

        # A certificate caught half written is not served; the last good pair is.
        (live / "tls.crt").write_text((live / "tls.crt").read_text()[:200])
        for _ in range(3):
            assert peer_certificate(server.port) == der_of(second.server_cert)
        assert '"tls files not reloaded"' in server.log()
        install(first, live)  # and a good pair after it is
        until = time.monotonic() + 30
        while peer_certificate(server.port) != der_of(first.server_cert):
            assert time.monotonic() < until, server.log()[-3000:]
            time.sleep(0.1)
        assert list_presets(server.port, first.ca)
    finally:
        assert server.stop() == 0


def test_the_health_port_serves_only_health_in_plaintext_and_says_not_serving_in_a_drain(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    live = tmp_path / "live"
    live.mkdir()
    install(pki, live)
    server, health_port = tls_server(tmp_path, live)
    try:
        assert health_status(health_port, "") == SERVING and health_status(health_port, SERVICE) == SERVING
        with grpc.insecure_channel(f"127.0.0.1:{health_port}") as channel:
            with pytest.raises(grpc.RpcError) as caught:
                rpc.BigTwoServiceStub(channel).ListPresets(api.ListPresetsRequest(), timeout=10)
            assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
            reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
            with pytest.raises(grpc.RpcError) as caught:
                list(reflect.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
            assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
        with grpc.insecure_channel(server.target) as plaintext:  # the service port itself stays TLS only
            with pytest.raises(grpc.RpcError) as caught:
                health_pb2_grpc.HealthStub(plaintext).Check(health_pb2.HealthCheckRequest(), timeout=3)
            assert caught.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
        assert f'"health_port": {health_port}' in server.log()

        # An open stream holds the drain; meanwhile the health port answers NOT_SERVING.
        credentials = grpc.ssl_channel_credentials(pki.ca.read_bytes())
        with grpc.secure_channel(server.target, credentials) as channel:
            pending: queue.Queue[api.PlayStreamRequest | None] = queue.Queue()
            log = pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE)
            pending.put(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
            stream = rpc.BigTwoServiceStub(channel).PlayStream(iter(pending.get, None), timeout=60)
            assert next(stream).HasField("opened")
            server.terminate()
            until = time.monotonic() + 10
            while health_status(health_port, SERVICE) != NOT_SERVING:
                assert time.monotonic() < until, server.log()[-3000:]
                time.sleep(0.05)
            pending.put(None)  # the client ends its stream; the drain ends
            for _ in stream:
                pass
    finally:
        assert server.stop() == 0


def test_the_fetcher_hands_grpc_a_new_pair_only_when_the_files_changed_and_go_together(tmp_path: Path) -> None:
    """service/tls.py without a server: None while nothing changed; a key that is not the new
    certificate's is refused (the last good pair stays); a client CA changed alone is reloaded."""
    from bigtwo.service.tls import CertificateFiles, TlsFilesError, load

    for name in ("first", "second", "live"):
        (tmp_path / name).mkdir()
    first, second, live = make_pki(tmp_path / "first"), make_pki(tmp_path / "second"), tmp_path / "live"
    install(first, live)
    shutil.copyfile(first.ca, live / "ca.crt")
    files = CertificateFiles(str(live / "tls.crt"), str(live / "tls.key"), str(live / "ca.crt"))
    assert files.fetch() is None and files.reloads == 0
    serial = files.current.serial

    shutil.copyfile(second.server_cert, live / "tls.crt")  # the certificate before its key
    with pytest.raises(TlsFilesError, match="is not the key of the certificate"):
        load(live / "tls.crt", live / "tls.key", None)
    assert files.fetch() is None and files.current.serial == serial
    shutil.copyfile(second.server_key, live / "tls.key")
    assert files.fetch() is not None and files.current.serial != serial and files.reloads == 1
    assert files.fetch() is None

    shutil.copyfile(second.ca, live / "ca.crt")  # mutual TLS: a new client CA alone
    os.utime(live / "ca.crt", ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert files.fetch() is not None and files.reloads == 2
    (live / "ca.crt").write_text("not a certificate\n")
    assert files.fetch() is None and files.reloads == 2
