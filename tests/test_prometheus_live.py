"""Debian's Prometheus (``make prometheus``; the tests install nothing) scraping two local replicas
every second under a short load: every query of the dashboard returns data, the error share reads
0 rather than nothing, and with the shipped alert rules (their ``for:`` cut to a second) a killed
replica raises BigTwoReplicaDown, then stopping the last one raises BigTwoNoReplicas.

One replica is a server in one process, the other a server with two worker processes, so the
event loop's lag of each and the per-worker process metrics are all read. On
127.0.0.1 only; each wait is bounded, and every process started is stopped. Under CI=true a
missing prometheus fails; elsewhere it skips."""

from __future__ import annotations

import math
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_support import Load, Prometheus, dashboard_queries, quick_rules
from service_support import ServerProcess

pytestmark = pytest.mark.slow

RATE_INTERVAL = "15s"
"""``$__rate_interval`` for the dashboard's queries: Grafana's is at least four scrape intervals."""


def eventually(what: str, check: Callable[[], Any], seconds: float = 30) -> Any:
    """``check()``'s first truthy result, asked every 0.2 s for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.2)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Prometheus, ServerProcess, ServerProcess]]:
    if shutil.which("prometheus") is None:
        message = "prometheus is missing: run `make prometheus` (Debian's prometheus package)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    started: list[Any] = []
    try:
        aio = ServerProcess(tmp_path)
        started.append(aio)
        workers = ServerProcess(tmp_path, "--workers", "2")
        started.append(workers)
        targets = [f"127.0.0.1:{aio.metrics_port}", f"127.0.0.1:{workers.metrics_port}"]
        prometheus = Prometheus(tmp_path, targets, quick_rules(tmp_path / "alerts.yml"))
        started.append(prometheus)
        prometheus.wait_ready()
        yield prometheus, aio, workers
    finally:
        for process in reversed(started):
            process.stop()


def test_dashboard_reads_data_and_a_lost_replica_pages(stack: tuple[Prometheus, ServerProcess, ServerProcess]) -> None:
    prometheus, aio, workers = stack
    aio_instance = f"127.0.0.1:{aio.metrics_port}"
    eventually("both replicas scraped", lambda: len(prometheus.query('up{job="bigtwo"} == 1')) == 2)
    load = Load([aio.target, workers.target, aio.target], seconds=60)
    try:
        eventually(
            "moves counted on both replicas",
            lambda: (
                len(prometheus.query('sum by (instance) (rate(bigtwo_moves_total{result="refused"}[15s])) > 0')) == 2
            ),
        )
        eventually(
            "malformed streams seen",
            lambda: prometheus.query('sum(increase(bigtwo_moves_total{result="malformed"}[15s])) > 0'),
        )
        empty = {}
        values: dict[str, list[float]] = {}
        for name, expr in dashboard_queries(RATE_INTERVAL).items():
            samples = prometheus.query(expr)
            values[name] = [float(sample["value"][1]) for sample in samples]
            if not samples:
                empty[name] = expr
        assert not empty, f"dashboard queries without data: {empty}"
    finally:
        load.stop()
    assert load.games > 0 and not load.errors, load.errors[:5]
    assert values["Server error share/A"] == [0.0], "no errors reads 0"
    assert all(math.isfinite(v) and v > 0 for v in values["p99 per request/A"])
    assert values["Server processes serving/A"] == [3.0], "one process and two workers"
    assert all(v > 0 for v in values["Requests /s/A"])
    # Each replica's event loop lag (panel B; panel A, the sync mode's wait for a thread, is gone).
    queueing = values["Queueing (p99)/B"]
    assert len(queueing) == 2 and all(math.isfinite(v) for v in queueing)
    assert len(values["Replica CPU (cores) and memory/A"]) == 2
    assert not prometheus.firing("BigTwoReplicaDown") and not prometheus.firing("BigTwoNoReplicas")

    aio.process.send_signal(signal.SIGKILL)
    down = eventually("BigTwoReplicaDown firing", lambda: prometheus.firing("BigTwoReplicaDown"))
    assert [alert["instance"] for alert in down] == [aio_instance]
    assert not prometheus.firing("BigTwoNoReplicas"), "one replica is left"
    workers.terminate()
    eventually("BigTwoNoReplicas firing", lambda: prometheus.firing("BigTwoNoReplicas"))
