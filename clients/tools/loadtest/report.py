"""The load test's final report: a summary dict (the --json output), a table, recovery after a kill."""

from __future__ import annotations

import math
from typing import Any

from .generator import LoadResult


def percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (0 when empty)."""
    if not ordered:
        return 0.0
    rank = max(1, min(len(ordered), math.ceil(q * len(ordered) - 1e-9)))
    return ordered[rank - 1]


def throughput_series(times: list[float], start: float, bucket: float) -> list[int]:
    """Moves answered per ``bucket`` seconds from ``start``."""
    if not times:
        return []
    end = max(times)
    counts = [0] * (int((end - start) / bucket) + 1)
    for t in times:
        index = int((t - start) / bucket)
        if 0 <= index < len(counts):
            counts[index] += 1
    return counts


def recovery(result: LoadResult, killed_at: float, bucket: float = 0.1, hold: float = 1.0) -> dict[str, Any]:
    """How long after ``killed_at`` the answered-moves rate is back to 90% of the 3 s before, and
    stays there for ``hold`` seconds; with the last retried UNAVAILABLE and the worst latency."""
    start = result.started_at
    counts = throughput_series(result.times, start, bucket)
    kill_index = int((killed_at - start) / bucket)
    before = counts[max(0, kill_index - int(3 / bucket)) : kill_index]
    baseline = sum(before) / len(before) if before else 0.0
    need = int(hold / bucket)
    recovered_at = None
    for index in range(kill_index, len(counts) - need + 1):
        window = counts[index : index + need]
        if all(c >= 0.9 * baseline for c in window):
            recovered_at = index * bucket + start
            break
    after_kill = counts[kill_index : kill_index + int(2 / bucket)]
    lowest = min(after_kill) / baseline if after_kill and baseline else 0.0
    retries = [t for t in result.retry_times if t >= killed_at]
    after = [lat for t, lat in zip(result.times, result.latencies, strict=True) if killed_at <= t <= killed_at + 5]
    return {
        "killed_at_s": round(killed_at - start, 3),
        "baseline_moves_per_s": round(baseline / bucket, 1),
        "recovered_after_s": round(max(0.0, recovered_at - killed_at), 3) if recovered_at is not None else None,
        "lowest_rate_in_2s_after_kill": round(lowest, 3),
        "last_retry_after_s": round(max(retries) - killed_at, 3) if retries else 0.0,
        "retries_after_kill": len(retries),
        "max_latency_ms_after_kill": round(max(after) * 1000, 2) if after else 0.0,
    }


def summary(result: LoadResult, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    ordered = sorted(result.latencies)
    seconds = result.seconds or 1e-9
    cfg = result.config
    out: dict[str, Any] = {
        "mode": cfg.get("mode"),
        "targets": cfg.get("targets"),
        "concurrency": cfg.get("concurrency"),
        "channels_per_target": cfg.get("channels"),
        "rate_target": cfg.get("rate") or None,
        "seconds": round(result.seconds, 3),
        "moves": result.moves,
        "moves_per_s": round(result.moves / seconds, 1),
        "accepted": result.accepted,
        "refused": result.refused,
        "malformed_sent": result.malformed,
        "malformed_rejected": result.malformed_rejected,
        "games_started": result.games_started,
        "games_finished": result.games_finished,
        "games_abandoned": result.games_abandoned,
        "games_failed": result.games_failed,
        "errors": dict(sorted(result.errors.items())),
        "retried": dict(sorted(result.retried.items())),
        "error_samples": result.error_samples,
        "calls_by_target": dict(sorted(result.calls_by_target.items())),
        "latency_ms": {
            "p50": round(percentile(ordered, 0.50) * 1000, 3),
            "p95": round(percentile(ordered, 0.95) * 1000, 3),
            "p99": round(percentile(ordered, 0.99) * 1000, 3),
            "max": round(ordered[-1] * 1000, 3) if ordered else 0.0,
        },
    }
    if extra:
        out.update(extra)
    return out


def table(data: dict[str, Any]) -> Any:
    """A rich Table of the summary."""
    from rich.table import Table

    grid = Table(title="bigtwo loadtest", show_header=True, header_style="bold")
    grid.add_column("figure")
    grid.add_column("value", justify="right")
    lat = data["latency_ms"]
    rows: list[tuple[str, str]] = [
        ("mode", str(data["mode"])),
        ("targets", ", ".join(data["targets"] or [])),
        ("games at once × channels/target", f"{data['concurrency']} × {data['channels_per_target']}"),
        ("seconds", f"{data['seconds']:.2f}"),
        ("moves judged", str(data["moves"])),
        ("moves/s", f"{data['moves_per_s']:.1f}"),
        ("refused (expected)", str(data["refused"])),
        ("malformed sent / rejected", f"{data['malformed_sent']} / {data['malformed_rejected']}"),
        (
            "games started / finished / abandoned / failed",
            f"{data['games_started']} / {data['games_finished']} / {data['games_abandoned']} / {data['games_failed']}",
        ),
        (
            "latency p50 / p95 / p99 / max (ms)",
            f"{lat['p50']:.2f} / {lat['p95']:.2f} / {lat['p99']:.2f} / {lat['max']:.2f}",
        ),
        ("errors by status", ", ".join(f"{k}={v}" for k, v in data["errors"].items()) or "none"),
        ("retried", ", ".join(f"{k}={v}" for k, v in data["retried"].items()) or "none"),
    ]
    if data.get("rate_target"):
        rows.insert(6, ("target rate (moves/s)", f"{data['rate_target']:.0f}"))
    if "noop" in data:
        noop = data["noop"]
        rows.append(("no-op server moves/s", f"{noop['moves_per_s']:.1f}"))
        rows.append(("ratio real / no-op", f"{data['ratio_to_noop']:.3f}"))
    if "recovery" in data:
        rec = data["recovery"]
        rows.append(("replica killed at (s)", f"{rec['killed_at_s']:.2f}"))
        rows.append(("recovered after (s)", str(rec["recovered_after_s"])))
        rows.append(("last retry after kill (s)", f"{rec['last_retry_after_s']:.3f}"))
    if data.get("interrupted"):
        rows.insert(0, ("stopped", "by Ctrl-C: the figures measured until then"))
    if data.get("shortfall"):
        rows.append(("FAILED", str(data["shortfall"])))
    for name, value in rows:
        grid.add_row(name, value)
    return grid
