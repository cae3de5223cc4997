"""The health-only port (``--health-port``): ``grpc.health.v1.Health`` in plaintext, and nothing else.

Why: the kubelet's native ``grpc:`` probe speaks plaintext only. With TLS on the service port, the
probes used to be ``exec`` probes, each a fresh Python process running ``bigtwo health`` over TLS: a
third of a second of CPU or more a probe, against about a millisecond of the server's for a native
probe, a new connection and one Check (docs/DEPLOY.md, "Probes"). This port lets the native probe
ask the same health service the TLS port serves (the same servicer: ``""`` and
``bigtwo.v1.BigTwoService``, ``NOT_SERVING`` from the first moment of a drain) without TLS. It
carries nothing secret: no game, no token, no call of the API, no reflection; a caller learns only
whether the server is serving, which a TCP connect to the service port says as well
(docs/SECURITY.md). It answers at most :data:`MAX_CALLS` calls at once, and stops after the service
port, so a probe during the drain reads ``NOT_SERVING``.
"""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2_grpc

MAX_CALLS = 16
"""Health calls in flight on the port: a probe is one call; more are refused RESOURCE_EXHAUSTED."""


def _options(reuse_port: bool) -> list[tuple[str, int]]:
    return [("grpc.so_reuseport", 1 if reuse_port else 0), ("grpc.max_receive_message_length", 1024)]


def grpc_address(host: str, port: int) -> str:
    """``host:port`` as gRPC parses a listening address: an IPv6 literal goes in brackets
    (``[::1]:50051``); without them gRPC read ``::1:0`` as a name and could not bind it."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def _bind(server: grpc.aio.Server, host: str, port: int) -> int:
    address = grpc_address(host, port)
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise OSError(f"cannot bind the health port {address}: {exc}") from None
    if not bound:
        raise OSError(f"cannot bind the health port {address} (in use?)")
    return int(bound)


async def start_aio(
    host: str, port: int | None, servicer: health_pb2_grpc.HealthServicer, reuse_port: bool
) -> tuple[grpc.aio.Server, int] | None:
    """Serve ``servicer`` (the aio health servicer the main server uses) on ``host:port``; None when
    ``port`` is None (no health port)."""
    if port is None:
        return None
    server = grpc.aio.server(options=_options(reuse_port), maximum_concurrent_rpcs=MAX_CALLS)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    bound = _bind(server, host, port)
    await server.start()
    return server, bound


__all__ = ["MAX_CALLS", "start_aio"]
