"""The capacity sweep (``python -m bigtwo.tools.capacity_bench``): two tiny steps of each way in
against the real and the no-op server, the server's histograms read around each step, the summary
and the plot. The figures themselves are make bench's (docs/PERFORMANCE.md); here they only need to
exist and hang together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bigtwo.tools.capacity_bench import TRANSPORTS, measure, plot, quantile

pytestmark = pytest.mark.timeout(180)


def test_quantiles_are_read_from_the_step_s_share_of_a_histogram() -> None:
    before = {0.001: 10.0, 0.01: 10.0, 0.1: 10.0, float("inf"): 10.0}
    # the step adds 100 observations: 50 under 1 ms, 40 between 1 and 10 ms, 10 between 10 and 100
    after = {0.001: 60.0, 0.01: 100.0, 0.1: 110.0, float("inf"): 110.0}
    assert quantile(before, after, 0.5) == pytest.approx(0.001)
    assert quantile(before, after, 0.7) == pytest.approx(0.001 + 0.009 * 20 / 40)
    assert quantile(before, after, 0.99) == pytest.approx(0.01 + 0.09 * 9 / 10)
    assert quantile(after, after, 0.5) == 0.0, "nothing observed in the step"


def test_a_tiny_sweep_of_each_way_on_both_servers(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = []
    measure(TRANSPORTS, (40, 80), 0.6, rows.append, deals=8)
    steps = [r for r in rows if r["figure"] == "capacity_step"]
    assert {(r["transport"], r["server"]) for r in steps} == {(t, s) for t in TRANSPORTS for s in ("real", "noop")}
    for row in steps:
        assert row["moves_per_s"] > 0 and 0 < row["client_p50_ms"] <= row["client_p99_ms"], row
        assert row["server_cores"] > 0, row
        if row["server"] == "real":  # the real server times every move in its histogram
            assert 0 < row["server_p50_ms"] <= row["server_p99_ms"], row
    summaries = {r["transport"]: r for r in rows if r["figure"] == "capacity"}
    assert set(summaries) == set(TRANSPORTS)
    for summary in summaries.values():
        assert summary["p99_bound_ms"] == 50.0 and summary["gap_p50_ms_low_load"] is not None, summary
    png = plot(rows, tmp_path / "capacity.png", TRANSPORTS)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
