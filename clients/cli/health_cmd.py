"""``bigtwo health``: ask a server's gRPC health service (grpc.health.v1) whether it is SERVING.

Exit status 0 when SERVING, 1 otherwise (NOT_SERVING, unknown service, no answer): what a container
HEALTHCHECK or a script needs. Kubernetes uses its own ``grpc:`` probe against the same service.
``--wait SECONDS`` asks again until the answer is SERVING or the time is up, so a script that has
just started a server waits for it with one command.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

DEFAULT_TARGET = "127.0.0.1:50051"
WAIT_POLL = 0.25
"""Seconds between two questions under ``--wait``."""
RETRY_SOON = (("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 500))
"""Under ``--wait``: a server that has just started is seen within half a second, not after
gRPC's default backoff of up to two minutes."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from .arguments import env_default, non_negative_seconds, pem_certificates, positive_seconds, target

    parser: argparse.ArgumentParser = sub.add_parser(
        "health",
        help="check a server with the gRPC health checking protocol (exit 0 when SERVING)",
        description="Ask grpc.health.v1.Health/Check; exit 0 when the service is SERVING, 1 otherwise.",
    )
    parser.add_argument(
        "--target",
        type=target,
        default=env_default("BIGTWO_HEALTH_TARGET", DEFAULT_TARGET),
        help="HOST:PORT (env BIGTWO_HEALTH_TARGET; default %(default)s)",
    )
    parser.add_argument(
        "--service", default="", help="service name to ask about ('' = the server as a whole; bigtwo.v1.BigTwoService)"
    )
    parser.add_argument(
        "--timeout", type=positive_seconds, default=2.0, help="seconds to connect and to answer (default %(default)s)"
    )
    parser.add_argument(
        "--tls-ca",
        type=pem_certificates,
        default=env_default("BIGTWO_HEALTH_TLS_CA", ""),
        help="PEM CA bundle: connect with TLS and verify the server against it (env BIGTWO_HEALTH_TLS_CA)",
    )
    parser.add_argument(
        "--server-name", default="", help="with --tls-ca: the name to check the certificate against (SNI override)"
    )
    parser.add_argument(
        "--wait",
        type=non_negative_seconds,
        default=0.0,
        metavar="SECONDS",
        help="ask again until SERVING, for at most this many seconds (default %(default)s: ask once)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="print nothing, only the exit status")
    parser.set_defaults(func=health_main)
    return parser


def check(
    target: str,
    service: str = "",
    timeout: float = 2.0,
    tls_ca: str = "",
    server_name: str = "",
    *,
    wait_for_ready: bool = False,
) -> str:
    """The status name (SERVING, NOT_SERVING, SERVICE_UNKNOWN...) or the gRPC error code name.
    ``wait_for_ready``: a target not accepting connections yet is tried again (quickly) within
    ``timeout`` instead of answering UNAVAILABLE at once."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    options: list[tuple[str, int | str]] = list(RETRY_SOON) if wait_for_ready else []
    if tls_ca:
        with open(tls_ca, "rb") as handle:
            creds = grpc.ssl_channel_credentials(root_certificates=handle.read())
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        channel = grpc.secure_channel(target, creds, options=options)
    else:
        channel = grpc.insecure_channel(target, options=options)
    with channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout, wait_for_ready=wait_for_ready
            )
        except grpc.RpcError as error:
            code = error.code() if hasattr(error, "code") else None
            return code.name if code is not None else "ERROR"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def health_main(args: argparse.Namespace) -> int:
    from bigtwo.client.client import BigTwoUnavailable, Security, check_reachable

    if args.wait and _wait_for_serving(args):
        status = "SERVING"
    else:  # one question, and when it fails the sentence saying why
        security = Security(tls=bool(args.tls_ca), ca_file=args.tls_ca, server_name=args.server_name)
        try:
            # A dead address, a TLS mismatch or a port that is no gRPC server: one sentence saying which.
            check_reachable(args.target, timeout=args.timeout, security=security)
        except BigTwoUnavailable:
            if args.quiet:
                return 1
            raise
        status = check(args.target, args.service, args.timeout, args.tls_ca, args.server_name)
    if not args.quiet:
        print(
            f"{args.target} {args.service or '(server)'}: {status}",
            file=sys.stdout if status == "SERVING" else sys.stderr,
        )
    return 0 if status == "SERVING" else 1


def _wait_for_serving(args: argparse.Namespace) -> bool:
    """Ask until the answer is SERVING (True) or ``--wait`` seconds are up (False). Each question
    waits for the connection itself (no connectivity watch: a channel closed under one can leave
    a thread's traceback behind, and this may open many)."""
    deadline = time.monotonic() + args.wait
    while (left := deadline - time.monotonic()) > 0:
        status = check(args.target, args.service, left, args.tls_ca, args.server_name, wait_for_ready=True)
        if status == "SERVING":
            return True
        time.sleep(max(0.0, min(WAIT_POLL, deadline - time.monotonic())))
    return False
