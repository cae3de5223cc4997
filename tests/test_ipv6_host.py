"""``bigtwo serve --host ::1``: a server bound to the IPv6 loopback serves there (gRPC was handed
``::1:PORT``, which it reads as a name, and the server exited "cannot bind")."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import grpc
import pytest
from bigtwo.tools.local_server import LocalServer
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc
from bigtwo.v1 import types_pb2 as pb
from grpc_health.v1 import health_pb2, health_pb2_grpc


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_a_server_bound_to_the_ipv6_loopback_serves_there(tmp_path: Path) -> None:
    server = LocalServer("--host", "::1", grace=5, log=tmp_path / "server.log", wait=False)
    try:
        with grpc.insecure_channel(f"[::1]:{server.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 120
            while True:
                assert server.alive(), server.log()
                try:
                    status = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1).status
                    if status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.RpcError:
                    pass
                assert time.monotonic() < deadline, server.log()
                time.sleep(0.1)
            dealt = service_pb2_grpc.BigTwoServiceStub(channel).Deal(
                api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code="7K3M9QX2AB4H8"), timeout=10
            )
            assert dealt.state_token
        assert '"host": "::1"' in server.log()
    finally:
        assert server.stop() == 0, server.log()
