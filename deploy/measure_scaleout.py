"""Measure the README's scale-out figures in one run, all with ``bigtwo loadtest`` on 127.0.0.1.

    .venv/bin/python deploy/measure_scaleout.py [--seconds 8] [--mode stream] [--out scaleout.jsonl]

For 1, 2 and 3 local replicas (separate ``bigtwo serve`` processes spawned by the load test):

1. peak: as many games at once as it takes (``--concurrency``), two connections per replica; the
   same load against as many no-op servers (same messages, real answers taken from the bench's
   deals, no engine) gives the ratio;
2. p99 at a steady 70% of that peak (``--rate``);

then, with 3 replicas at 70% of their peak, one replica is SIGKILLed after 5 s: the time until the
answered-moves rate is back to 90% of what it was (and stays there for 1 s), and the last retried
UNAVAILABLE. Prints a Markdown table and writes every run's JSON report to ``--out``.

Read the figures with the machine in mind: on a 2-core machine, 3 replicas and the load generator
(itself Python, one process) share two cores, so the replicas cannot scale linearly here; the
figures show the overhead of spreading, the cost per move against the transport's ceiling, and the
failover, not the capacity of a cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def loadtest(*args: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "bigtwo.cli.main", "loadtest", "--json", "--no-progress", *args]
    print("$ bigtwo loadtest --json " + " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"loadtest failed ({done.returncode}): {done.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(done.stdout)
    data["command"] = "bigtwo loadtest --json " + " ".join(args)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds per run (default 8)")
    parser.add_argument("--mode", choices=("stream", "unary"), default="stream")
    parser.add_argument("--concurrency", type=int, default=64, help="games at once for the peak (default 64)")
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--out", default="scaleout.jsonl")
    args = parser.parse_args(argv)
    seconds = str(args.seconds)
    common = ["--mode", args.mode, "--channels", "2", "--refused-share", "0.05"]
    rows = []
    runs: list[dict[str, Any]] = []
    peaks: dict[int, float] = {}
    for count in [int(n) for n in args.replicas.split(",")]:
        peak = loadtest(
            "--spawn",
            str(count),
            "--duration",
            seconds,
            "--concurrency",
            str(args.concurrency),
            "--ramp-seconds",
            "0.5",
            "--compare-noop",
            *common,
        )
        peaks[count] = peak["moves_per_s"]
        rate = round(0.7 * peak["moves_per_s"])
        steady = loadtest(
            "--spawn",
            str(count),
            "--duration",
            seconds,
            "--concurrency",
            str(args.concurrency),
            "--rate",
            str(rate),
            *common,
        )
        runs += [peak, steady]
        rows.append(
            {
                "replicas": count,
                "peak_moves_per_s": peak["moves_per_s"],
                "noop_moves_per_s": peak["noop"]["moves_per_s"],
                "ratio_to_noop": peak["ratio_to_noop"],
                "peak_p99_ms": peak["latency_ms"]["p99"],
                "rate_70": rate,
                "achieved_at_70": steady["moves_per_s"],
                "p50_ms_at_70": steady["latency_ms"]["p50"],
                "p99_ms_at_70": steady["latency_ms"]["p99"],
                "errors": {**peak["errors"], **steady["errors"]},
            }
        )
    recovery_rows = []
    if 3 in peaks:
        rate = round(0.7 * peaks[3])
        killed = loadtest(
            "--spawn",
            "3",
            "--duration",
            str(max(12.0, args.seconds)),
            "--concurrency",
            str(args.concurrency),
            "--rate",
            str(rate),
            "--kill-after",
            "5",
            *common,
        )
        runs.append(killed)
        recovery_rows.append(
            {"rate": rate, **killed["recovery"], "errors": killed["errors"], "retried": killed["retried"]}
        )

    Path(args.out).write_text("".join(json.dumps(run) + "\n" for run in runs))
    cores = os.cpu_count()
    print(f"\n{time.strftime('%Y-%m-%d')}, {cores} cores, mode {args.mode}, {args.seconds:g} s per run\n")
    print(
        "| replicas | peak moves/s | no-op moves/s | real / no-op | p99 at peak (ms) | 70% rate "
        "| p50 / p99 at 70% (ms) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['replicas']} | {row['peak_moves_per_s']:,.0f} | {row['noop_moves_per_s']:,.0f} | "
            f"{row['ratio_to_noop']:.2f} | {row['peak_p99_ms']:.1f} | {row['rate_70']:,} "
            f"({row['achieved_at_70']:,.0f} achieved) | {row['p50_ms_at_70']:.1f} / {row['p99_ms_at_70']:.1f} |"
        )
    for rec in recovery_rows:
        print(
            f"\nSIGKILL of 1 of 3 replicas at {rec['rate']:,} moves/s: rate back to 90% after "
            f"{rec['recovered_after_s']} s (lowest 100 ms window in the 2 s after: "
            f"{rec['lowest_rate_in_2s_after_kill']:.0%} of before); {rec['retries_after_kill']} retried UNAVAILABLEs "
            f"(the dead replica's channels probed until {rec['last_retry_after_s']} s); "
            f"worst latency in the 5 s after: "
            f"{rec['max_latency_ms_after_kill']} ms; "
            f"errors: {rec['errors'] or 'none'}"
        )
    print(f"\nevery run's JSON report: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
