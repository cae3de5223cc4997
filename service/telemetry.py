"""Prometheus metrics and structlog JSON logs (every metric is described in docs/OBSERVABILITY.md).

Metrics work with several worker processes through prometheus-client's multiprocess mode: the
parent sets ``PROMETHEUS_MULTIPROC_DIR`` before the workers start (each worker's metrics live in
files there) and serves the merged view on the metrics port, with each worker's ``process_*``
metrics read from ``/proc`` (:class:`WorkerProcesses`). One process serves its own registry.

Every series an alert or a dashboard panel reads is created at zero when a server process starts
(:func:`initialise`): a labelled series that does not exist yet reads "No data" in a panel and
gives an alert nothing to evaluate, where it should read 0.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from wsgiref.simple_server import WSGIServer

import structlog
from bigtwo.engine.cache import cache_stats
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from structlog.typing import FilteringBoundLogger

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)
QUEUE_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)

CODES = (
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "FAILED_PRECONDITION",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "UNAUTHENTICATED",
    "INTERNAL",
    "UNAVAILABLE",
    "UNIMPLEMENTED",
)
"""The status codes the service answers with (errors.py's mapping, cancellations, the drain's
refusals, the browser port's refusals of what it does not speak): each method's series of each is
created at zero."""

JUDGED = ("accepted", "refused", "duplicate", "validated")
"""Results of a move the rules judged (a refusal is an OK answer, not an error)."""
MALFORMED = "malformed"
"""A move message refused INVALID_ARGUMENT (undecodable, a field missing or out of range)."""
FAILED = "failed"
"""A move message refused with another status (a wrong move index, a seat not the token's...);
its reason label is the status code."""

GRPC = "grpc"
GRPC_WEB = "grpc_web"
CONNECT = "connect"
PROTOCOLS = (GRPC, GRPC_WEB, CONNECT)
"""The ``protocol`` label of a call: gRPC (the gRPC port, or ``application/grpc`` on the browser
port), gRPC-Web or Connect (the browser port)."""

CALLS = Counter(
    "bigtwo_rpc_calls_total",
    "RPCs handled, by method, status code and protocol (grpc, grpc_web, connect)",
    ["method", "code", "protocol"],
)
LATENCY = Histogram(
    "bigtwo_rpc_duration_seconds",
    "Time handling an RPC, in seconds (a stream: its whole life), by method and protocol",
    ["method", "protocol"],
    buckets=LATENCY_BUCKETS,
)
MOVES = Counter(
    "bigtwo_moves_total",
    "Move messages (unary ApplyMove/ValidateMove/TimeoutMove and each PlayStream move), counted as each "
    "is answered, by result (accepted/refused/duplicate/validated/malformed/failed) and reason",
    ["result", "reason"],
)
MOVE_LATENCY = Histogram(
    "bigtwo_move_duration_seconds",
    "Time from a move message reaching its handler to its answer being ready, in seconds, by method",
    ["method"],
    buckets=LATENCY_BUCKETS,
)
LOOP_LAG = Histogram(
    "bigtwo_event_loop_lag_seconds",
    "How late the event loop runs a timer, sampled every 50 ms, in seconds (the wait any "
    "call or stream message meets before its code runs)",
    buckets=QUEUE_BUCKETS,
)
BOT_MOVES = Counter(
    "bigtwo_bot_moves_total",
    "Moves chosen by a bot, by method (BotMove, PlayBots, or TimeoutMove with bot_level) and level",
    ["method", "level"],
)
DEALS_STARTED = Counter("bigtwo_deals_started_total", "Deals dealt, by preset", ["preset"])
DEALS_FINISHED = Counter("bigtwo_deals_finished_total", "Deals that ended, by preset", ["preset"])
OPEN_STREAMS = Gauge("bigtwo_open_streams", "PlayStream calls open now", multiprocess_mode="livesum")
SERVING = Gauge(
    "bigtwo_serving",
    "Server processes taking calls: 1 each while serving, 0 from the first moment of a drain",
    multiprocess_mode="livesum",
)
SHED_REASONS = ("HEAVY_CALLS_BUSY", "HEAVY_WORKER_LOST", "CALLS_BUSY")
"""Why a call is refused for load (``errors.Shed``): the heavy-call pool full, a worker lost, either
port at its cap of calls (``--max-concurrent-rpcs``, :mod:`bigtwo.service.admission`). gRPC's own
limit, a backstop far above that cap, refuses in its core, before any handler: it is counted
nowhere here (clients see it)."""
SHEDS = Counter(
    "bigtwo_shed_total",
    "Calls refused for load (RESOURCE_EXHAUSTED with a RetryInfo: worth sending again shortly), by reason",
    ["reason"],
)


LEDGER_REACHABLE = Gauge(
    "bigtwo_token_ledger_reachable",
    "1 while the spent-token ledger (Redis) answers, 0 while not (only with --token-ledger)",
    ["mode"],
    multiprocess_mode="livemin",
)
LEDGER_MOVES = Counter(
    "bigtwo_token_ledger_moves_total",
    "Moves from state tokens checked by the ledger: first, retry, spent (refused TOKEN_SPENT), "
    "unavailable (refused, fail-closed) or unchecked (applied unrecorded, fail-open)",
    ["verdict"],
)
"""The spent-token ledger's (:mod:`bigtwo.service.ledger`): labelled, so without a ledger they show
no sample, only their help."""


def count_shed(reason: str) -> None:
    """One call refused for load (counted where its status is made, ``errors.to_rpc_status``)."""
    SHEDS.labels(reason).inc()


def initialise(
    methods: Iterable[str],
    move_methods: Iterable[str],
    refusal_reasons: Iterable[str],
    presets: Iterable[str],
    bot_levels: Iterable[str],
) -> None:
    """Create every series the alerts and the dashboard read, at zero, in this process (the call
    series of the gRPC protocol; :func:`initialise_protocols` adds the browser port's)."""
    initialise_protocols(methods, (GRPC,))
    for method in move_methods:
        MOVE_LATENCY.labels(method)
    for result in (*JUDGED, MALFORMED):
        MOVES.labels(result, "")
    for reason in refusal_reasons:
        MOVES.labels("refused", reason)
    for preset in presets:
        DEALS_STARTED.labels(preset)
        DEALS_FINISHED.labels(preset)
    for level in bot_levels:
        BOT_MOVES.labels("BotMove", level)
        BOT_MOVES.labels("TimeoutMove", level)
        BOT_MOVES.labels("PlayBots", level)
    for reason in SHED_REASONS:
        SHEDS.labels(reason)
    OPEN_STREAMS.set(0)
    SERVING.set(0)


def initialise_protocols(methods: Iterable[str], protocols: Iterable[str]) -> None:
    """Create each method's call series of each of ``protocols`` at zero (the browser port adds
    gRPC-Web's and Connect's when it opens)."""
    for protocol in protocols:
        for method in methods:
            LATENCY.labels(method, protocol)
            for code in CODES:
                CALLS.labels(method, code, protocol)


class CacheFigures(Collector):
    """Every memo's figures (:func:`bigtwo.engine.cache.cache_stats`), read at each scrape, by the
    ``cache`` label (the owner's name): entries and capacity as gauges, misses and clears as the
    counters they are. Each process's own caches: with ``--workers`` the figures live in each
    worker, which multiprocess mode does not merge, so only a single process exports them."""

    def collect(self) -> Iterable[Metric]:
        entries = GaugeMetricFamily("bigtwo_cache_entries", "Entries a memo holds now, by cache", labels=["cache"])
        capacity = GaugeMetricFamily(
            "bigtwo_cache_capacity", "Entries a memo holds at most before it empties, by cache", labels=["cache"]
        )
        misses = CounterMetricFamily(
            "bigtwo_cache_misses", "Values a memo computed and stored (lookups that missed), by cache", labels=["cache"]
        )
        clears = CounterMetricFamily(
            "bigtwo_cache_clears", "Times a memo was full and emptied to make room, by cache", labels=["cache"]
        )
        for stats in cache_stats():
            label = [stats.owner]
            entries.add_metric(label, stats.entries)
            capacity.add_metric(label, stats.capacity)
            misses.add_metric(label, stats.misses)
            clears.add_metric(label, stats.clears)
        return [entries, capacity, misses, clears]


CACHES = CacheFigures()
REGISTRY.register(CACHES)


class WorkerProcesses(Collector):
    """The ``process_*`` metrics of each server process, labelled ``process`` ("main" for the one
    serving /metrics, "worker-1"... for the others): multiprocess mode merges only the service's
    own metrics, so without this a replica run with ``--workers`` shows no CPU or memory.

    Each process is read by prometheus-client's own :class:`ProcessCollector` (``/proc``); a
    process that has exited yields nothing."""

    def __init__(self, workers: Callable[[], Sequence[int | None]]) -> None:
        self.workers = workers

    def collect(self) -> Iterable[Metric]:
        named: list[tuple[str, int]] = [("main", os.getpid())]
        named += [(f"worker-{n}", pid) for n, pid in enumerate(self.workers(), start=1) if pid]
        families: dict[str, Metric] = {}
        for label, pid in named:
            for family in ProcessCollector(pid=lambda pid=pid: pid, registry=None).collect():  # type: ignore[misc]
                merged = families.get(family.name)
                if merged is None:
                    merged = families[family.name] = Metric(family.name, family.documentation, family.type)
                for sample in family.samples:
                    merged.add_sample(sample.name, {**sample.labels, "process": label}, sample.value)
        return list(families.values())


def start_metrics_server(
    host: str, port: int, workers: Callable[[], Sequence[int | None]] | None = None
) -> tuple[WSGIServer, threading.Thread]:
    """Serve /metrics on ``host:port``. In multiprocess mode, the merged files of every worker,
    plus ``workers()``' process metrics (the pids of the server processes)."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        registry.register(WorkerProcesses(workers or (lambda: ())))
        return start_http_server(port, addr=host, registry=registry)
    return start_http_server(port, addr=host)


def configure_logging(level: str = "info") -> None:
    """One JSON object a line on stdout. Each line is handed over in one write, newline included
    (``print`` writes the newline apart: with unbuffered output, as in the container image, the
    lines of several worker processes sharing stdout could interleave)."""
    numeric = getattr(logging, level.upper(), logging.INFO)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(sort_keys=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )


def logger() -> FilteringBoundLogger:
    """The service's logger (what :func:`configure_logging` made it: a filtering bound logger)."""
    log: FilteringBoundLogger = structlog.get_logger("bigtwo.service")
    return log
