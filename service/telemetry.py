"""Prometheus metrics and structlog JSON logs.

Metrics work with several worker processes through prometheus-client's multiprocess mode: the
parent sets ``PROMETHEUS_MULTIPROC_DIR`` before the workers start (each worker's metrics live in
files there) and serves the merged view on the metrics port. One process serves its own registry.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)

CALLS = Counter("bigtwo_rpc_calls_total", "RPCs handled, by method and status code", ["method", "code"])
LATENCY = Histogram(
    "bigtwo_rpc_duration_seconds",
    "Time handling an RPC (a stream: its whole life)",
    ["method"],
    buckets=LATENCY_BUCKETS,
)
MOVES = Counter(
    "bigtwo_moves_total",
    "Moves judged, by result (accepted/refused/duplicate/validated) and refusal reason",
    ["result", "reason"],
)
BOT_MOVES = Counter(
    "bigtwo_bot_moves_total",
    "Moves chosen by a bot, by method (BotMove, or TimeoutMove with bot_level) and level",
    ["method", "level"],
)
DEALS_STARTED = Counter("bigtwo_deals_started_total", "Deals dealt, by preset", ["preset"])
DEALS_FINISHED = Counter("bigtwo_deals_finished_total", "Deals that ended, by preset", ["preset"])
OPEN_STREAMS = Gauge("bigtwo_open_streams", "PlayStream calls open now", multiprocess_mode="livesum")


def start_metrics_server(host: str, port: int) -> Any:
    """Serve /metrics on ``host:port``; merges every worker's files in multiprocess mode."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
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


def logger() -> Any:
    return structlog.get_logger("bigtwo.service")
