"""The latency plot: p50/p99 and moves/s over time, and the latency distribution (matplotlib Agg)."""

from __future__ import annotations

from pathlib import Path

from .generator import LoadResult
from .report import percentile


def latency_plot(result: LoadResult, path: Path, title: str = "", killed_at: float | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    start = result.started_at
    bucket = 0.5
    buckets: dict[int, list[float]] = {}
    for t, lat in zip(result.times, result.latencies, strict=True):
        buckets.setdefault(int((t - start) / bucket), []).append(lat * 1000)
    xs = sorted(buckets)
    mids = [(x + 0.5) * bucket for x in xs]
    p50 = [percentile(sorted(buckets[x]), 0.5) for x in xs]
    p99 = [percentile(sorted(buckets[x]), 0.99) for x in xs]
    rate = [len(buckets[x]) / bucket for x in xs]

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    left.plot(mids, p50, label="p50", color="tab:blue")
    left.plot(mids, p99, label="p99", color="tab:red")
    left.set_xlabel("seconds")
    left.set_ylabel("latency per move (ms)")
    left.set_yscale("log")
    twin = left.twinx()
    twin.plot(mids, rate, label="moves/s", color="tab:gray", alpha=0.6)
    twin.set_ylabel("moves/s")
    if killed_at is not None:
        left.axvline(killed_at - start, color="black", linestyle="--", label="replica killed")
    lines = left.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    left.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", fontsize="small")
    left.set_title(title or "latency over time")

    ordered = sorted(lat * 1000 for lat in result.latencies)
    if ordered:
        right.hist(ordered, bins=60, color="tab:blue", alpha=0.8)
        for q, style in ((0.5, "-"), (0.95, "--"), (0.99, ":")):
            right.axvline(percentile(ordered, q), color="tab:red", linestyle=style, label=f"p{round(q * 100)}")
        right.legend(fontsize="small")
    right.set_xlabel("latency per move (ms)")
    right.set_ylabel("moves")
    right.set_title("distribution")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
