"""A tournament on a Dask cluster against the same tournament in one process (issue 18).

It plays ``--levels`` under ``--preset`` on ``--deals`` duplicate deals (seed ``--seed``) twice: in
this process (``jobs`` 1), then on ``--dask`` (default ``local:2``, two worker processes on this
machine). It prints one JSON line per run (seconds, CPU seconds and deals per second; for the cluster also the
seconds it took to start or join it and to import ``bigtwo`` on every worker, which the run's own
figure leaves out, as the one-process figure leaves out this process's imports), then a line with the
ratio (cluster deals/s over one-process deals/s, without and with the start-up) and whether the
two reports are identical (points per deal, means, intervals; the decision times are measured, so
they are left out of the comparison). A third run, ``--control-jobs`` (default 2) local processes
of ``bigtwo tournament --jobs``, is the control: what this machine gives two processes without
Dask (two virtual cores need not make two cores' worth of work), its ratio printed beside Dask's.
Exit status 1 when any report differs from the one-process one. Run::

    python -m bigtwo.tools.tournament_dask_bench --deals 2000

On the 2-core reference machine two workers can at best double the rate, less whatever else runs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from bigtwo.engine import PRESET_NAMES, Ruleset

from .cluster import DaskTarget, dask_client
from .tournament import TournamentResult, run_tournament

LEVELS = "great,good,beginner,random"


def comparable(result: TournamentResult) -> dict[str, Any]:
    """The tournament's JSON report without the one measured field, the decision times."""
    report = result.to_json(pairs=True)
    for summary in report["levels"].values():
        summary.pop("decide_ms_p95")
    return report


def line(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.tournament_dask_bench", description=__doc__)
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals (default 2000)")
    parser.add_argument("--levels", default=LEVELS, help=f"comma-separated levels (default {LEVELS})")
    parser.add_argument("--preset", default="classic", choices=PRESET_NAMES, help="rules (default classic)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--dask", default="local:2", help="local:N or tcp://HOST:PORT (default local:2)")
    parser.add_argument("--control-jobs", type=int, default=2, help="processes of the control run (0: none)")
    args = parser.parse_args(argv)
    target = DaskTarget.parse(args.dask)
    ruleset = Ruleset.from_mapping({"preset": args.preset})
    levels = [level.strip() for level in args.levels.split(",") if level.strip()]

    started, cpu = time.perf_counter(), time.process_time()
    alone = run_tournament(ruleset, levels, args.deals, args.seed)
    alone_s, alone_cpu = time.perf_counter() - started, time.process_time() - cpu
    line(
        run="one process",
        deals=args.deals,
        seconds=round(alone_s, 3),
        cpu_s=round(alone_cpu, 3),
        deals_per_s=round(args.deals / alone_s, 1),
    )

    started = time.perf_counter()
    with dask_client(target) as client:
        client.run(importlib.import_module, "bigtwo.tools.tournament")
        startup_s = time.perf_counter() - started
        cpu_before: dict[str, float] = client.run(time.process_time)
        started = time.perf_counter()
        spread = run_tournament(ruleset, levels, args.deals, args.seed, client=client)
        spread_s = time.perf_counter() - started
        cpu_after: dict[str, float] = client.run(time.process_time)
        workers = len(cpu_after)
    line(
        run=f"dask {args.dask}",
        workers=workers,
        deals=args.deals,
        seconds=round(spread_s, 3),
        startup_s=round(startup_s, 3),
        # The workers' CPU seconds: beside the wall-clock seconds, how much of the machine they got.
        cpu_s=round(sum(cpu_after[w] - cpu_before.get(w, 0.0) for w in cpu_after), 3),
        deals_per_s=round(args.deals / spread_s, 1),
    )
    identical = same(spread, alone)
    control: dict[str, Any] = {}
    if args.control_jobs > 1:
        forked, forked_s = control_run(args.control_jobs, ruleset, levels, args.deals, args.seed)
        identical = identical and same(forked, alone)
        control = {f"jobs_{args.control_jobs}_ratio": round(alone_s / forked_s, 3)}
    line(
        ratio=round(alone_s / spread_s, 3),
        ratio_with_startup=round(alone_s / (spread_s + startup_s), 3),
        **control,
        identical=identical,
    )
    return 0 if identical else 1


def same(got: TournamentResult, want: TournamentResult) -> bool:
    return got.points == want.points and json.dumps(comparable(got)) == json.dumps(comparable(want))


def control_run(
    jobs: int, ruleset: Ruleset, levels: list[str], deals: int, seed: int
) -> tuple[TournamentResult, float]:
    """The tournament in ``jobs`` forked processes (``--jobs``): prints its line, returns its result and seconds."""
    started, children = time.perf_counter(), os.times()
    result = run_tournament(ruleset, levels, deals, seed, jobs=jobs)
    seconds, after = time.perf_counter() - started, os.times()
    cpu = after.children_user + after.children_system - children.children_user - children.children_system
    line(
        run=f"jobs {jobs} (no Dask)",
        deals=deals,
        seconds=round(seconds, 3),
        cpu_s=round(cpu, 3),
        deals_per_s=round(deals / seconds, 1),
    )
    return result, seconds


if __name__ == "__main__":
    sys.exit(main())
