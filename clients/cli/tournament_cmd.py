"""``bigtwo tournament``: the command around :mod:`bigtwo.tools.tournament` (bot levels against each
other on duplicate deals; its docstring says how seats, points and intervals are computed): the flags,
the progress bar, the table and the PNG chart."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bigtwo.engine import Ruleset
from bigtwo.engine.bots import LEVELS, Budget
from bigtwo.engine.rules import Penalty
from bigtwo.tools.cluster import DaskTarget
from bigtwo.tools.tournament import (
    Seating,
    TournamentInterrupted,
    TournamentResult,
    add_seating_argument,
    lower_is_better,
    run_tournament,
)


def plot(result: TournamentResult, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = list(result.levels)
    means = [result.summary(level)["mean"] for level in levels]
    errors = [result.summary(level)["mean"] - result.summary(level)["ci95"][0] for level in levels]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(levels, means, yerr=errors, capsize=6, color="#4c72b0")
    better = "lower" if lower_is_better(result.ruleset) else "higher"
    unit = "win rate" if result.ruleset.penalty is Penalty.NONE else "points per deal"
    ax.set_ylabel(f"{unit} ({better} is better)")
    ax.set_title(f"{result.ruleset.preset}: {result.deals} duplicate deals, 95% CI")
    ax.axhline(0, color="black", linewidth=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _table(result: TournamentResult) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    better = "lower" if lower_is_better(result.ruleset) else "higher"
    unit = "win rate" if result.ruleset.penalty is Penalty.NONE else "points/deal"
    table = Table(title=f"{result.ruleset.preset}: {result.deals} duplicate deals ({unit}, {better} is better)")
    for column in ("level", "mean", "95% CI", "decide p95 ms"):
        table.add_column(column, justify="right" if column != "level" else "left")
    for level in result.levels:
        s = result.summary(level)
        interval = f"[{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"
        table.add_row(level, f"{s['mean']:.3f}", interval, f"{s['decide_ms_p95']:.2f}")
    console.print(table)
    pairs = Table(title="paired differences by deal (row - column)")
    pairs.add_column("pair")
    pairs.add_column("mean", justify="right")
    pairs.add_column("95% CI", justify="right")
    for i, a in enumerate(result.levels):
        for b in result.levels[i + 1 :]:
            mean, low, high = result.paired(a, b)
            pairs.add_row(f"{a} - {b}", f"{mean:+.3f}", f"[{low:+.3f}, {high:+.3f}]")
    console.print(pairs)


DESCRIPTION = (
    "Play bot levels against each other on duplicate deals: every deal is played once per rotation, so "
    "each level meets the same cards in every seat and luck cancels out. Prints each level's average "
    "points per deal with a 95% interval and the paired differences between levels, and draws a bar "
    "chart (--plot). Example: bigtwo tournament --levels great,good,random --deals 200 --preset classic"
)
"""What ``bigtwo tournament --help`` tells a person (the module docstring is for developers)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from .arguments import add_ruleset_arguments, png_file, positive_float, positive_int

    parser: argparse.ArgumentParser = sub.add_parser(
        "tournament",
        help="bot levels against each other on duplicate deals",
        description=DESCRIPTION,
    )
    add_ruleset_arguments(parser)
    parser.add_argument(
        "--levels", default="great,good,random", help=f"comma-separated levels from {', '.join(LEVELS)}"
    )
    parser.add_argument(
        "--deals", type=positive_int, default=100, help="duplicate deals (each played once per rotation)"
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of the deal codes and the bots")
    add_seating_argument(
        parser,
        "--seating",
        "rotate: the levels take turns in every seat; field: each level alone in each seat against "
        "the last level (how an outside opponent is met)",
    )
    parser.add_argument("--jobs", type=positive_int, default=1, help="worker processes")
    parser.add_argument(
        "--dask",
        type=dask_target,
        default=None,
        metavar="local:N|tcp://HOST:PORT",
        help="play the deals on a Dask cluster instead: N local worker processes, or a running scheduler "
        "(same results as --jobs 1; needs the 'distributed' extra)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--pairs", action="store_true", help="with --json, add paired differences under 'pairs'")
    parser.add_argument(
        "--plot",
        type=png_file,
        default=None,
        metavar="PNG",
        help="write the bar chart to PNG (default ./tournament-<preset>.png; its path is printed; "
        "needs matplotlib, the 'plot' extra)",
    )
    parser.add_argument("--no-plot", action="store_true", help="write no plot")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--pro-sims", type=positive_int, default=None, help="pro: rollouts per decision")
    parser.add_argument("--pro-steps", type=positive_int, default=None, help="pro: rollout moves per decision")
    parser.add_argument(
        "--pro-ms", type=positive_float, default=None, help="pro: time cap per decision in ms (not reproducible)"
    )
    parser.set_defaults(func=run_command)
    return parser


def dask_target(text: str) -> DaskTarget:
    try:
        return DaskTarget.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--dask ")) from None


def budget_from(args: argparse.Namespace) -> Budget | None:
    if args.pro_sims is None and args.pro_steps is None and args.pro_ms is None:
        return None
    base = Budget()
    return Budget(
        simulations=args.pro_sims if args.pro_sims is not None else base.simulations,
        steps=args.pro_steps if args.pro_steps is not None else base.steps,
        max_ms=args.pro_ms,
    )


def run_command(args: argparse.Namespace) -> int:
    from .arguments import plotting_missing, ruleset_from_args
    from .errors import UsageError

    if args.dask is not None and args.jobs > 1:
        raise UsageError(
            f"--dask and --jobs {args.jobs} both say where to play the deals: give one "
            "(with --dask the cluster's workers are the processes)."
        )
    levels = _levels(args.levels)
    if args.seating == Seating.FIELD.value and len(levels) < 2:
        raise UsageError(f"--seating field --levels {args.levels!r}: give a level to measure, then the field.")
    ruleset = ruleset_from_args(args)
    chart = None if args.no_plot else Path(args.plot or f"tournament-{ruleset.preset}.png")
    # The default chart is left out, said once at the end, when matplotlib is missing (an explicit
    # --plot was refused when parsed): the tables are the result, the chart an extra.
    no_chart = plotting_missing() if chart is not None and args.plot is None else ""
    if no_chart:
        chart = None
    try:
        result = _play(args, ruleset, levels)
        stopped = False
    except TournamentInterrupted as interrupted:  # Ctrl-C: the figures over the deals played so far
        result, stopped, chart = interrupted.result, True, None
    if chart is not None:
        plot(result, str(chart))
    if args.json:
        print(json.dumps(result.to_json(pairs=args.pairs)))
    else:
        _table(result)
    notes = sys.stderr if args.json else sys.stdout
    if chart is not None:  # every file written is named; on stderr with --json (stdout is one JSON object)
        print(f"Chart written to {chart.resolve()}", file=notes)
    if no_chart:
        print(f"No chart: {no_chart}, or give --no-plot.", file=notes)
    if stopped:
        print(
            f"Interrupted (Ctrl-C) after {result.deals} of {args.deals} deals: the figures above are over those "
            "deals; no chart was written.",
            file=sys.stderr,
        )
        return 130
    return 0


def _levels(text: str) -> list[str]:
    """``--levels``: distinct bot level names."""
    from .errors import UsageError

    levels = [level.strip().lower() for level in text.split(",") if level.strip()]
    unknown = [level for level in levels if level not in LEVELS]
    if not levels or unknown or len(set(levels)) != len(levels):
        raise UsageError(f"--levels {text!r}: give distinct names from {', '.join(LEVELS)}.")
    return levels


def _play(args: argparse.Namespace, ruleset: Ruleset, levels: list[str]) -> TournamentResult:
    """The tournament, with a progress bar on stderr unless ``--no-progress`` (on a Dask cluster it
    moves as each batch of deals finishes there)."""
    budget = budget_from(args)
    if args.no_progress:
        return run_tournament(
            ruleset, levels, args.deals, args.seed, args.jobs, budget, dask=args.dask, seating=Seating(args.seating)
        )
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("[bold]tournament"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=args.json,
    ) as bar:
        task = bar.add_task("deals", total=args.deals)
        return run_tournament(
            ruleset,
            levels,
            args.deals,
            args.seed,
            args.jobs,
            budget,
            progress=lambda n: bar.advance(task, n),
            dask=args.dask,
            seating=Seating(args.seating),
        )
