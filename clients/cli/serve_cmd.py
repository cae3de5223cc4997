"""``bigtwo serve``: the service's flags (each with its environment variable), checked as they are
parsed, and the start-up checks that name the flag at fault; then :mod:`bigtwo.service.server` runs it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from bigtwo.service.keys import KeyConfigError, load_keys
from bigtwo.service.offload import KINDS
from bigtwo.service.server import BoundPorts, ServerConfig, run_one, run_workers
from bigtwo.service.servicer import AUTH_TOKEN_RULE, valid_auth_token
from bigtwo.service.telemetry import configure_logging, logger, start_metrics_server

REMOVED_MODE = (
    "is no setting any more: the server has one mode, asyncio (grpc.aio on uvloop), since the sync thread-pool "
    "mode was removed (docs/SERVICE.md, 'One mode: asyncio')"
)


def removed_mode(text: str) -> NoReturn:
    """``--mode``/``BIGTWO_MODE`` and ``--threads``/``BIGTWO_THREADS``, the sync mode's settings:
    refused, naming the flag or the variable, with :data:`REMOVED_MODE`."""
    from bigtwo.cli.arguments import refuse

    refuse(text, REMOVED_MODE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bigtwo serve`` (and ``bigtwo run``), each with its environment variable.
    Every value is checked as it is parsed, a default from the environment too (naming the
    variable): a wrong port, path or number is refused at once instead of failing later, or
    quietly binding another port (gRPC takes a port modulo 65536)."""
    from bigtwo.cli.arguments import (
        env_default,
        env_flag,
        log_level,
        non_negative_int,
        non_negative_seconds,
        one_of,
        pem_certificates,
        pem_private_key,
        port,
        positive_int,
        readable_file,
        web_origin,
    )

    d = ServerConfig()
    add = parser.add_argument
    add(
        "--host",
        default=env_default("BIGTWO_HOST", d.host),
        help="address to bind (env BIGTWO_HOST; default %(default)s)",
    )
    add(
        "--port",
        type=port,
        default=env_default("BIGTWO_PORT", d.port),
        help="gRPC port, 0 for any free one (env BIGTWO_PORT; default %(default)s)",
    )
    add(
        "--metrics-port",
        type=port,
        default=env_default("BIGTWO_METRICS_PORT", d.metrics_port),
        help="Prometheus /metrics port, 0 for none (env BIGTWO_METRICS_PORT; default %(default)s)",
    )
    add(
        "--web-port",
        type=port,
        default=env_default("BIGTWO_WEB_PORT", d.web_port),
        help="also answer the API as Connect and gRPC-Web for browsers, and serve the browser table, on "
        "this port; 0 for any free one (env BIGTWO_WEB_PORT; default off)",
    )
    add(
        "--health-port",
        type=port,
        default=env_default("BIGTWO_HEALTH_PORT", None),
        help="also serve only the gRPC health service, in plaintext, on this port: for probes that cannot "
        "speak TLS (Kubernetes grpc probes); it carries nothing secret (env BIGTWO_HEALTH_PORT; default off)",
    )
    add(
        "--web-origin",
        dest="web_origins",
        type=web_origin,
        action="append",
        default=None,
        help="an origin whose pages may call the browser port (CORS), e.g. https://cards.example; "
        "repeat for more (env BIGTWO_WEB_ORIGINS, comma-separated; default none: only the table served "
        "on that port)",
    )
    add(
        "--web-host",
        dest="web_hosts",
        type=web_host,
        action="append",
        default=None,
        help="a Host header the browser port answers (name:port, or a name for any port; * for any), against "
        "DNS rebinding; repeat for more (env BIGTWO_WEB_HOSTS, comma-separated; default: 127.0.0.1, localhost "
        "and [::1] with the port when bound to loopback, else any: set it, or have the ingress check it)",
    )
    add(
        "--web-limit",
        dest="web_limits",
        type=web_limit,
        action="append",
        default=None,
        help="override one of the browser port's bounds, NAME=VALUE (docs/SECURITY.md lists them: connections, "
        "streams_per_connection, header_seconds, header_bytes, body_seconds, call_seconds, ping_seconds); repeatable",
    )
    add(
        "--workers",
        type=positive_int,
        default=env_default("BIGTWO_WORKERS", d.workers),
        help="server processes sharing the port with SO_REUSEPORT (env BIGTWO_WORKERS; default %(default)s)",
    )
    # The sync server mode left in issue 34 (docs/SERVICE.md, "One mode: asyncio"): its flags and
    # variables are refused with a sentence, not ignored or unknown, so a deployment still setting
    # them learns why.
    for removed, variable in (("--mode", "BIGTWO_MODE"), ("--threads", "BIGTWO_THREADS")):
        add(removed, type=removed_mode, default=env_default(variable, None), help=argparse.SUPPRESS)
    add(
        "--tls-cert",
        type=pem_certificates,
        default=env_default("BIGTWO_TLS_CERT", ""),
        help="PEM certificate chain (env BIGTWO_TLS_CERT)",
    )
    add(
        "--tls-key",
        type=pem_private_key,
        default=env_default("BIGTWO_TLS_KEY", ""),
        help="PEM private key (env BIGTWO_TLS_KEY)",
    )
    add(
        "--tls-client-ca",
        type=pem_certificates,
        default=env_default("BIGTWO_TLS_CLIENT_CA", ""),
        help="PEM CA bundle: require client certificates signed by it (mutual TLS; env BIGTWO_TLS_CLIENT_CA)",
    )
    add(
        "--auth-token",
        default=os.environ.get("BIGTWO_AUTH_TOKEN"),
        help="require 'authorization: Bearer TOKEN' on every call; at least 16 visible characters, never empty "
        "(env BIGTWO_AUTH_TOKEN)",
    )
    add(
        "--token-keys-file",
        type=readable_file,
        default=env_default("BIGTWO_TOKEN_KEYS_FILE", ""),
        help="state-token keys, one a line, the first signs (env BIGTWO_TOKEN_KEYS_FILE; or BIGTWO_TOKEN_KEYS)",
    )
    add(
        "--token-ledger",
        default=env_default("BIGTWO_TOKEN_LEDGER", d.token_ledger),
        metavar="redis://HOST:PORT/DB",
        help="record each state token a move is applied from in this Redis, shared by the replicas: another "
        "move from a spent token is refused (TOKEN_SPENT), the same move again answered again; needs the "
        "'ledger' extra (env BIGTWO_TOKEN_LEDGER; default: none, the service stays stateless)",
    )
    add(
        "--token-ledger-ttl",
        type=positive_int,
        default=env_default("BIGTWO_TOKEN_LEDGER_TTL", d.token_ledger_ttl),
        help="seconds a spent token stays recorded (env BIGTWO_TOKEN_LEDGER_TTL; default %(default)s)",
    )
    add(
        "--token-ledger-mode",
        choices=("fail-closed", "fail-open"),
        default=env_default("BIGTWO_TOKEN_LEDGER_MODE", d.token_ledger_mode),
        help="when Redis cannot be reached: refuse moves from tokens (UNAVAILABLE) or apply them unrecorded "
        "and count them (env BIGTWO_TOKEN_LEDGER_MODE; default %(default)s)",
    )
    add(
        "--max-message-bytes",
        type=positive_int,
        default=env_default("BIGTWO_MAX_MESSAGE_BYTES", d.max_message_bytes),
        help="largest message accepted or sent (env BIGTWO_MAX_MESSAGE_BYTES; default %(default)s)",
    )
    add(
        "--max-concurrent-rpcs",
        type=non_negative_int,
        default=env_default("BIGTWO_MAX_CONCURRENT_RPCS", d.max_concurrent_rpcs),
        help="calls in flight per process before RESOURCE_EXHAUSTED, 0 for no limit (env BIGTWO_MAX_CONCURRENT_RPCS; "
        "default: as many as the container's memory limit holds, at most 10000)",
    )
    add(
        "--keepalive-seconds",
        type=positive_int,
        default=env_default("BIGTWO_KEEPALIVE_SECONDS", d.keepalive_seconds),
        help="HTTP/2 keepalive ping interval (env BIGTWO_KEEPALIVE_SECONDS; default %(default)s)",
    )
    add(
        "--grace",
        type=non_negative_seconds,
        default=env_default("BIGTWO_GRACE", d.grace),
        help="seconds in-flight calls and streams get to finish after SIGTERM (env BIGTWO_GRACE; default %(default)s)",
    )
    add(
        "--heavy-workers",
        type=non_negative_int,
        default=env_default("BIGTWO_HEAVY_WORKERS", d.heavy_workers),
        help="per server process, workers that run the heavy calls (bots, audits, large move lists) off the "
        "event loop; 0: half the container's CPUs (its cgroup's CPU limit, else the affinity mask) shared among "
        "--workers, at least 1, fewer where the memory limit would not hold them (env BIGTWO_HEAVY_WORKERS)",
    )
    add(
        "--heavy-waiting",
        type=non_negative_int,
        default=env_default("BIGTWO_HEAVY_WAITING", d.heavy_waiting),
        help="heavy calls that may wait for a worker; more are RESOURCE_EXHAUSTED (env BIGTWO_HEAVY_WAITING; "
        "default: 8 per heavy worker)",
    )
    add(
        "--heavy-kind",
        type=one_of(KINDS),
        choices=KINDS,
        default=env_default("BIGTWO_HEAVY_KIND", d.heavy_kind),
        help="heavy calls in worker processes, or in threads of the server process (env BIGTWO_HEAVY_KIND; "
        "default %(default)s)",
    )
    add(
        "--log-level",
        type=log_level,
        default=env_default("BIGTWO_LOG_LEVEL", d.log_level),
        help="debug, info, warning, error or critical (env BIGTWO_LOG_LEVEL; default %(default)s)",
    )
    add(
        "--no-call-log",
        dest="log_calls",
        action="store_false",
        default=env_flag("BIGTWO_LOG_CALLS", True),
        help="no log line per call (errors are still logged; env BIGTWO_LOG_CALLS=0)",
    )


def web_host(text: str) -> str:
    """A ``--web-host`` value: ``*``, or a host name or address, with or without ``:port``."""
    value = text.strip().lower()
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789.-_:[]")
    if value != "*" and (not value or not set(value) <= allowed):
        raise argparse.ArgumentTypeError(f"{text!r} is not a host (a name or address, maybe :port; or *)")
    return value


def web_limit(text: str) -> tuple[str, float]:
    """A ``--web-limit NAME=VALUE`` override, checked against the limits table at once."""
    from bigtwo.service.web_server import web_limits

    name, _, value = text.partition("=")
    try:
        pair = (name.strip(), float(value))
        web_limits((pair,))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc) if value else f"{text!r} is not NAME=VALUE") from None
    return pair


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    from bigtwo.cli.arguments import web_origins_from_env

    names = ServerConfig.__dataclass_fields__
    values = {name: getattr(args, name) for name in names if hasattr(args, name)}
    origins = values.get("web_origins")
    values["web_origins"] = tuple(origins) if origins is not None else web_origins_from_env("BIGTWO_WEB_ORIGINS")
    hosts = values.get("web_hosts")
    from_env = [web_host(item) for item in os.environ.get("BIGTWO_WEB_HOSTS", "").split(",") if item.strip()]
    values["web_hosts"] = tuple(hosts) if hosts is not None else tuple(from_env)
    values["web_limits"] = tuple(values.get("web_limits") or ())
    return ServerConfig(**values)


def _check_tls(cfg: ServerConfig) -> None:
    """Refuse TLS files that do not go together."""
    from bigtwo.cli.errors import UsageError

    if bool(cfg.tls_cert) != bool(cfg.tls_key):
        raise UsageError("--tls-cert and --tls-key go together: give both, or neither.")
    if cfg.tls_client_ca and not cfg.tls_cert:
        raise UsageError("--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key as well.")


def _taken_ports(cfg: ServerConfig) -> list[tuple[str, int]]:
    """The flags whose port another process already holds (the workers' shared --port is not checked)."""
    from bigtwo.cli.arguments import port_free

    return [
        (flag, number)
        for flag, number in (
            ("--port", cfg.port),
            ("--metrics-port", cfg.metrics_port),
            ("--web-port", cfg.web_port),
            ("--health-port", cfg.health_port),
        )
        if number and (cfg.workers == 1 or flag == "--metrics-port") and not port_free(cfg.host, number)
    ]


def check_arguments(cfg: ServerConfig) -> None:
    """Refuse at once, in one sentence naming the flag, what would otherwise fail only after
    start-up (as a log line): TLS files that do not go together, an auth token too weak, token
    keys that do not load, a port already taken (a single process binds without SO_REUSEPORT, so
    a plain bind tells)."""
    from bigtwo.cli.errors import CommandError, UsageError

    _check_tls(cfg)
    if cfg.workers > 1 and cfg.port == 0:
        raise UsageError("--workers needs a fixed --port (the processes share it).")
    if cfg.workers > 1 and cfg.health_port == 0:
        raise UsageError("--workers needs a fixed --health-port (the processes share it).")
    if cfg.workers > 1 and cfg.web_port == 0:
        raise UsageError("--workers needs a fixed --web-port (the processes share it).")
    if cfg.auth_token is not None and not valid_auth_token(cfg.auth_token):
        raise UsageError(f"--auth-token (or BIGTWO_AUTH_TOKEN): {AUTH_TOKEN_RULE}")
    try:
        load_keys(cfg.token_keys_file or None)
    except KeyConfigError as exc:
        raise UsageError(f"{exc}. Fix --token-keys-file, BIGTWO_TOKEN_KEYS_FILE or BIGTWO_TOKEN_KEYS.") from None
    if cfg.token_ledger:
        from bigtwo.service.ledger import LedgerConfig, LedgerConfigError, LedgerMode

        try:
            LedgerConfig(cfg.token_ledger, cfg.token_ledger_ttl, LedgerMode(cfg.token_ledger_mode))
        except (LedgerConfigError, ValueError) as exc:
            raise UsageError(f"{exc}.") from None
    taken = _taken_ports(cfg)
    if taken:
        flag, number = taken[0]
        raise CommandError(
            f"{cfg.host}:{number} is already in use (is a service already running?). "
            f"Stop it, or choose another port with {flag}."
        )


def serve_main(args: argparse.Namespace, on_bound: Callable[[BoundPorts], None] | None = None) -> int:
    """Serve until SIGTERM; ``on_bound`` is told the ports served on once they are bound."""
    cfg = config_from_args(args)
    check_arguments(cfg)
    configure_logging(cfg.log_level)
    if cfg.workers > 1:
        if on_bound is not None:  # the workers share a fixed --port (and --web-port)
            on_bound(BoundPorts(cfg.port, cfg.web_port))
        return run_workers(cfg)
    if cfg.metrics_port:
        try:
            start_metrics_server(cfg.host, cfg.metrics_port)
        except OSError as exc:
            logger().error("cannot serve metrics", port=cfg.metrics_port, error=str(exc))
            return 1
    return run_one(cfg, reuse_port=False, on_bound=on_bound)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="run the stateless gRPC rules service",
        description="Run the Big Two gRPC service (docs/SERVICE.md). Every flag has an environment variable.",
    )
    add_arguments(parser)
    parser.set_defaults(func=serve_main)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bigtwo serve")
    add_arguments(parser)
    return serve_main(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
