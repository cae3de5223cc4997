"""``bigtwo serve``: the gRPC server (docs/SERVICE.md).

One process by default, bound on 127.0.0.1 with SO_REUSEPORT off, so a port already taken fails
loudly. ``--workers N`` starts N processes sharing the port with SO_REUSEPORT (the kernel spreads
connections, not calls, across them) and serves their merged metrics from the parent.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import signal
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import TYPE_CHECKING, NamedTuple

import grpc
from bigtwo.codec.rpcs import SERVICE_NAME
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from .admission import CappedHandlers, backstop, pending_options
from .callscope import STREAM
from .container import read_budget, size
from .health_port import grpc_address
from .health_port import start_aio as start_health_aio
from .keys import KeyConfigError, load_keys
from .limits import LIMITS
from .offload import Offload
from .servicer import AUTH_TOKEN_RULE, UNARY, HostedCore, Hosting, ServiceCore, valid_auth_token
from .telemetry import (
    CALLS,
    GRPC,
    LOOP_LAG,
    MULTIPROC_ENV,
    SERVING,
    configure_logging,
    logger,
    start_metrics_server,
)
from .tls import server_credentials
from .tokens import TokenCodec

if TYPE_CHECKING:
    from .web_server import WebPort


class BoundPorts(NamedTuple):
    """The ports a server process listens on, once bound (a port given as 0: the one chosen)."""

    grpc: int
    web: int | None = None


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    metrics_port: int = 9464
    workers: int = 1
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    auth_token: str | None = None
    """None: no bearer token asked; a given token must be a usable one (an empty one is refused)."""
    token_keys_file: str = ""
    max_message_bytes: int = LIMITS.message_bytes
    max_concurrent_rpcs: int | None = None
    """Calls in flight per process before RESOURCE_EXHAUSTED; 0: no cap; None: sized from the
    container's memory (:func:`bigtwo.service.container.size`)."""
    keepalive_seconds: int = 60
    grace: float = 10.0
    log_level: str = "info"
    log_calls: bool = True
    heavy_workers: int = 0
    """Workers of the heavy calls (bots, audits, large move lists) per server process; 0: sized from
    the container's CPUs and memory (:mod:`bigtwo.service.container`)."""
    heavy_waiting: int | None = None
    """Heavy calls that may wait for a worker beyond those computing; more are RESOURCE_EXHAUSTED;
    None: sized with the workers."""
    health_port: int | None = None
    """A plaintext port serving only the health service (for the kubelet's grpc probes when the
    service port speaks TLS; :mod:`bigtwo.service.health_port`): None, off."""
    web_port: int | None = None
    """The browser port (Connect and gRPC-Web, and the table; :mod:`bigtwo.service.web`): None, off;
    0, one the system chose."""
    web_origins: tuple[str, ...] = ()
    """Origins whose pages may call the browser port (CORS), e.g. ``https://cards.example``."""
    web_hosts: tuple[str, ...] = ()
    """``Host`` values the browser port answers (``--web-host``); none: the loopback names when
    bound to loopback, else any; ``*``: any (an ingress checks it)."""
    web_limits: tuple[tuple[str, float], ...] = ()
    """Overrides of the browser port's bounds (``--web-limit NAME=VALUE``,
    :class:`~bigtwo.service.limits.WebLimits`)."""
    token_ledger: str = ""
    """``redis://HOST:PORT/DB``: the spent-token ledger (:mod:`bigtwo.service.ledger`); empty, none."""
    token_ledger_ttl: int = 86_400
    token_ledger_mode: str = "fail-closed"
    heavy_kind: str = "process"
    """``process``: worker processes, beside the event loop; ``thread``: threads of the server
    process (no extra processes, but they hold the interpreter lock the event loop needs)."""


def grpc_options(cfg: ServerConfig, reuse_port: bool) -> list[tuple[str, int]]:
    return [
        ("grpc.so_reuseport", 1 if reuse_port else 0),
        ("grpc.max_receive_message_length", cfg.max_message_bytes),
        ("grpc.max_send_message_length", cfg.max_message_bytes),
        ("grpc.keepalive_time_ms", cfg.keepalive_seconds * 1000),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.keepalive_permit_without_calls", 1),
        *pending_options(cfg.max_concurrent_rpcs),
    ]


def _bind(server: grpc.aio.Server, cfg: ServerConfig) -> int:
    address = grpc_address(cfg.host, cfg.port)
    creds = server_credentials(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca)  # re-read when the files change
    try:
        port = server.add_secure_port(address, creds) if creds else server.add_insecure_port(address)
    except RuntimeError as exc:
        raise OSError(f"cannot bind {address}: {exc}") from None
    if not port:
        raise OSError(f"cannot bind {address} (in use?)")
    return int(port)


CoreFactory = Callable[[TokenCodec], HostedCore]

DRAINING_DETAILS = "the server is draining (shutting down): call another replica"
WEB_CLOSE_SECONDS = 1.0
"""Past the grace, how long the browser port's connections get to close once their calls are cut."""
HEALTH_PREFIX = f"/{health.SERVICE_NAME}/"
LOOP_LAG_INTERVAL = 0.05
"""Seconds between the event loop lag's samples."""
DRAIN_POLL = 0.05
"""Seconds between looks at the open streams while draining."""


class DrainGate(grpc.GenericRpcHandler):
    """From the first moment of a drain, refuse new calls with UNAVAILABLE (never started, so safe
    to retry elsewhere) while the health service keeps answering, NOT_SERVING.

    gRPC's own ``stop(grace)`` refuses every new call at once, health checks included: a probe or
    a load balancer asking during the drain saw UNAVAILABLE or CANCELLED, never NOT_SERVING. So
    the server stops only once its open streams have finished (or the grace is spent), and this
    handler, placed before the service's, turns the calls away meanwhile. Calls already running
    go on. Before a drain it declines every call (one attribute read)."""

    def __init__(self) -> None:
        self.draining = False
        self.handler = self._refusing_handler()

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        if not self.draining:
            return None
        method: str = handler_call_details.method
        if method.startswith(HEALTH_PREFIX):
            return None
        name = method.rsplit("/", 1)[-1]
        if method == f"/{SERVICE_NAME}/{name}" and (name in UNARY or name == STREAM):  # no made-up labels
            CALLS.labels(name, "UNAVAILABLE", GRPC).inc()
        return self.handler

    @staticmethod
    def _refusing_handler() -> grpc.RpcMethodHandler[bytes, bytes]:
        # A stream-stream handler suits every kind of method: it ends the call without reading.
        async def refuse(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, DRAINING_DETAILS)

        return grpc.stream_stream_rpc_method_handler(refuse)


async def _sample_loop_lag() -> None:
    """Observe how late the loop wakes a sleeper: the wait any call or stream message meets
    before its code runs. The aio server starts each call's handler as a task of this loop, and
    gRPC exposes no time of a call's arrival, so the loop's lag is the queueing it can measure."""
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time()
        await asyncio.sleep(LOOP_LAG_INTERVAL)
        LOOP_LAG.observe(max(0.0, loop.time() - asked - LOOP_LAG_INTERVAL))


def _setup(cfg: ServerConfig, make_core: CoreFactory | None = None) -> Hosting:
    loaded = load_keys(cfg.token_keys_file or None)
    log = logger()
    if loaded.development:
        log.warning(
            "development signing key",
            source=loaded.source,
            advice="tokens from other machines will not verify; give keys with --token-keys-file or BIGTWO_TOKEN_KEYS",
        )
    else:
        log.info("token keys", source=loaded.source)
    core = (make_core or ServiceCore)(TokenCodec(loaded.ring))
    if cfg.heavy_waiting is None or cfg.heavy_waiting < 0 or cfg.heavy_workers < 1:
        raise ValueError("--heavy-workers is 1 or more and --heavy-waiting 0 or more once sized")
    workers = cfg.heavy_workers
    waiting = cfg.heavy_waiting
    if cfg.heavy_kind == "thread" or make_core is not None:  # a stand-in core lives in this process only
        heavy = Offload.threads(core, workers, waiting)
    else:
        ring = loaded.ring
        keys = [ring.signing_key, *(key for key in ring.verifying.values() if key != ring.signing_key)]
        heavy = Offload.processes(keys, workers, waiting)
    hosting = Hosting(core, auth_token=cfg.auth_token, log_calls=cfg.log_calls, heavy=heavy)
    if cfg.token_ledger:  # the redis client is imported only then
        from .ledger import ledger_from

        hosting.ledger = ledger_from(cfg.token_ledger, cfg.token_ledger_ttl, cfg.token_ledger_mode)
        at = cfg.token_ledger.rpartition("@")[2]  # never a password in the log
        log.info("token ledger", at=at, mode=cfg.token_ledger_mode, ttl_seconds=cfg.token_ledger_ttl)
    return hosting


def _web_port(cfg: ServerConfig, hosting: Hosting, reuse_port: bool) -> WebPort | None:
    if cfg.web_port is None:
        return None
    # The browser port is the 'web' extra (connectrpc, granian, starlette): imported only when a port
    # is asked for, so a server installed without it serves gRPC alone.
    from .web import WebConfig
    from .web_server import WebPort, web_limits

    config = WebConfig(
        cfg.host,
        cfg.web_port,
        cfg.web_origins,
        cfg.max_message_bytes,
        max_calls=cfg.max_concurrent_rpcs or None,
        hosts=cfg.web_hosts,
        limits=web_limits(cfg.web_limits),
    )
    return WebPort(hosting, config, draining_message=DRAINING_DETAILS, reuse_port=reuse_port)


def _announce(
    cfg: ServerConfig, port: int, reuse_port: bool, hosting: Hosting, web: WebPort | None, health_port: int | None
) -> None:
    logger().info(
        "serving",
        service=SERVICE_NAME,
        host=cfg.host,
        port=port,
        web_port=web.port if web is not None else None,
        health_port=health_port,
        pid=os.getpid(),
        tls=bool(cfg.tls_cert),
        mutual_tls=bool(cfg.tls_client_ca),
        auth=bool(cfg.auth_token),
        so_reuseport=reuse_port,
        max_message_bytes=cfg.max_message_bytes,
        heavy=hosting.heavy.kind,
        heavy_workers=hosting.heavy.workers,
        heavy_waiting=hosting.heavy.waiting,
    )


async def _run_aio(
    cfg: ServerConfig,
    reuse_port: bool,
    make_core: CoreFactory | None = None,
    on_bound: Callable[[BoundPorts], None] | None = None,
) -> int:
    hosting = _setup(cfg, make_core)
    server = grpc.aio.server(
        options=grpc_options(cfg, reuse_port), maximum_concurrent_rpcs=backstop(cfg.max_concurrent_rpcs)
    )
    gate = DrainGate()
    service: grpc.GenericRpcHandler = hosting.generic_handler()
    if cfg.max_concurrent_rpcs:  # our cap answers overload (a shed); gRPC's limit is a backstop above it
        service = CappedHandlers(service, cfg.max_concurrent_rpcs)
    server.add_generic_rpc_handlers((gate, service))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    port = _bind(server, cfg)
    web = _web_port(cfg, hosting, reuse_port)
    if on_bound is not None:  # the caller learns the ports bound (0: the one the system chose)
        on_bound(BoundPorts(port, web.port if web is not None else None))
    hosting.heavy.warm()  # the heavy calls' workers start beside the server, which serves meanwhile
    await server.start()
    probes = await start_health_aio(cfg.host, cfg.health_port, health_servicer, reuse_port)
    if web is not None:
        await web.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    SERVING.set(1)
    watching = None
    if hosting.ledger is not None:  # its own health name and gauge follow Redis (docs/SECURITY.md)
        from .ledger import watch

        watching = asyncio.create_task(watch(hosting.ledger, health_servicer))
    _announce(cfg, port, reuse_port, hosting, web, probes[1] if probes else None)
    lag = asyncio.create_task(_sample_loop_lag())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await health_servicer.enter_graceful_shutdown()  # NOT_SERVING, before anything else
    gate.draining = True
    if web is not None:
        web.drain()
    SERVING.set(0)
    logger().info("draining", grace_seconds=cfg.grace, open_streams=hosting.open_streams)
    deadline = loop.time() + cfg.grace
    while hosting.open_streams and loop.time() < deadline:
        await asyncio.sleep(DRAIN_POLL)
    hosting.cutting = bool(hosting.open_streams)
    await server.stop(max(0.0, deadline - loop.time()))
    if probes is not None:  # last: a probe during the drain reads NOT_SERVING
        await probes[0].stop(0)
    if web is not None:
        await web.stop(max(WEB_CLOSE_SECONDS, deadline - loop.time()))
    lag.cancel()
    if watching is not None:
        watching.cancel()
    await asyncio.to_thread(hosting.heavy.shutdown)
    logger().info("stopped")
    return 0


def run_aio(
    cfg: ServerConfig,
    reuse_port: bool,
    make_core: CoreFactory | None = None,
    on_bound: Callable[[BoundPorts], None] | None = None,
) -> int:
    import uvloop

    return uvloop.run(_run_aio(cfg, reuse_port, make_core, on_bound))


def _on_signals(callback: Callable[[], None]) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        callback()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def sized(cfg: ServerConfig) -> ServerConfig:
    """``cfg`` with what it leaves to the container (0 or None) sized from the budget its cgroup
    sets (:mod:`bigtwo.service.container`); logs the budget read, what was chosen, and which of it
    was given (by a flag or its environment variable) rather than sized."""
    budget = read_budget()
    sizing = size(budget, cfg.workers)
    chosen = replace(
        cfg,
        heavy_workers=cfg.heavy_workers or sizing.heavy_workers,
        heavy_waiting=sizing.heavy_waiting if cfg.heavy_waiting is None else cfg.heavy_waiting,
        max_concurrent_rpcs=sizing.max_concurrent_rpcs if cfg.max_concurrent_rpcs is None else cfg.max_concurrent_rpcs,
    )
    given = [
        flag
        for flag, value in (
            ("--heavy-workers", cfg.heavy_workers or None),
            ("--heavy-waiting", cfg.heavy_waiting),
            ("--max-concurrent-rpcs", cfg.max_concurrent_rpcs),
        )
        if value is not None
    ]
    logger().info(
        "container budget",
        **budget.as_log(),
        server_processes=cfg.workers,
        heavy_workers=chosen.heavy_workers,
        heavy_waiting=chosen.heavy_waiting,
        max_concurrent_rpcs=chosen.max_concurrent_rpcs,
        workers_bound_by=sizing.bound_by,
        given=given,
    )
    if not sizing.fits:
        logger().warning(
            "memory limit too small",
            memory_mib=budget.as_log()["memory_mib"],
            advice="one server, one heavy worker and a few calls need more at full load: docs/DEPLOY.md, Memory",
        )
    return chosen


def run_one(
    cfg: ServerConfig,
    reuse_port: bool,
    make_core: CoreFactory | None = None,
    on_bound: Callable[[BoundPorts], None] | None = None,
) -> int:
    """Serve in this process until SIGTERM; ``make_core`` swaps the handlers (the bench's no-op)."""
    configure_logging(cfg.log_level)
    # Everything loaded so far lives as long as the process: keep it out of the cyclic collector,
    # and collect the young generation less often (each move makes short-lived objects only).
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)
    try:
        cfg = sized(cfg)
        return run_aio(cfg, reuse_port, make_core, on_bound)
    except (OSError, KeyConfigError, ValueError) as exc:
        logger().error("cannot serve", error=str(exc))
        return 1


def _worker_main(cfg: ServerConfig) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns Ctrl-C into SIGTERM
    raise SystemExit(run_one(cfg, reuse_port=True))


def _workers_refusal(cfg: ServerConfig) -> str | None:
    """Why ``cfg`` cannot start workers, checked before any is spawned; None when it can."""
    if cfg.port == 0:
        return "--workers needs a fixed --port"
    if cfg.health_port == 0:
        return "--workers needs a fixed --health-port"
    if cfg.web_port == 0:
        return "--workers needs a fixed --web-port"
    if cfg.auth_token is not None and not valid_auth_token(cfg.auth_token):
        return f"--auth-token: {AUTH_TOKEN_RULE}"
    try:
        load_keys(cfg.token_keys_file or None)  # make the development key once, before the workers read it
    except KeyConfigError as exc:
        return str(exc)
    return None


def _supervise(processes: Sequence[BaseProcess], stopping: threading.Event, stop_all: Callable[[], None]) -> None:
    """Wait for every worker; the first to exit unasked stops the others."""
    log = logger()
    while any(p.is_alive() for p in processes):
        for process in processes:
            process.join(0.2)
            if not process.is_alive() and not stopping.is_set():
                log.error("worker exited", pid=process.pid, exitcode=process.exitcode)
                stop_all()


def run_workers(cfg: ServerConfig) -> int:
    log = logger()
    refusal = _workers_refusal(cfg)
    if refusal is not None:
        log.error("cannot serve", error=refusal)
        return 1
    metrics_dir = tempfile.mkdtemp(prefix="bigtwo-metrics-")
    os.environ[MULTIPROC_ENV] = metrics_dir
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker_main, args=(cfg,), daemon=False) for _ in range(cfg.workers)]
    for process in processes:
        process.start()
    if cfg.metrics_port:
        start_metrics_server(cfg.host, cfg.metrics_port, lambda: [p.pid if p.is_alive() else None for p in processes])
    log.info("workers", count=cfg.workers, pids=[p.pid for p in processes], metrics_dir=metrics_dir)
    stopping = threading.Event()

    def stop_all() -> None:
        stopping.set()
        for process in processes:
            if process.is_alive() and process.pid:
                os.kill(process.pid, signal.SIGTERM)

    _on_signals(stop_all)
    _supervise(processes, stopping, stop_all)
    from prometheus_client import multiprocess

    for process in processes:
        if process.pid:
            multiprocess.mark_process_dead(process.pid)  # type: ignore[no-untyped-call]
    codes = [p.exitcode or 0 for p in processes]
    return max(codes) if not stopping.is_set() or any(codes) else 0


__all__ = ["BoundPorts", "ServerConfig", "run_one", "run_workers"]
