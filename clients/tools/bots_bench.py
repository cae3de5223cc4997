"""Issue 17's bot ladder, measured with ``bigtwo tournament``'s machinery (duplicate deals, paired
intervals: :mod:`bigtwo.tools.tournament`) over every preset × player count:

* the cheap ladder ``great,good,beginner,random`` on ``--deals`` duplicate deals (seed ``--seed``),
  strictly ordered when every adjacent pair (beginner − random, good − beginner, great − good) has a
  paired 95% interval above zero;
* ``pro,great`` on ``--pro-deals`` duplicate deals, only where ``--pro-presets`` × ``--pro-players``
  say (default classic and web at 4 players, where issue 17's target of pro − great ≥ +1.0 is;
  ``--pro-all`` for the whole matrix). Pro meets only ``great``: pro's decisions are the whole
  cost of a deal, and seat for seat ``pro,great,random`` plays as many of them per deal as
  ``pro,great`` (each level holds every seat once per deal) while random's blunders add noise to
  the pro − great difference, so the two-level field gives the narrower interval per CPU second
  (classic, 4 players, 24 deals: per-deal sd 1.71 at 2.2 CPU s a deal against 1.78 at 2.9 s with
  random, so sd² × CPU s, the cost of a given interval width, 6.4 against 9.1).

Every difference is in points per deal, better-is-positive: under penalty scoring (lower is
better) the sign is flipped, so a positive difference always means the first level wins; under
``taiwan`` (no penalty) the points are the win rate. It prints the estimated run time first, a
progress bar over the whole matrix on stderr, then one table (preset × players) on stdout with
each adjacent difference, the ladder's verdict, pro − great with its verdict and the decision-time
percentiles (p50/p95/p99 ms) per level. ``--json FILE`` writes everything (rewritten after each
cell, so a long run that stops keeps what it measured); ``--plot FILE`` draws the differences (needs
matplotlib, the ``plot`` extra). Results are identical for any ``--jobs``. Run::

    python -m bigtwo.tools.bots_bench --deals 2000 --pro-deals 400 --jobs 2 --json bench-bots.json
    make bench-bots

``--against ppo`` measures ``--against-levels`` (great and pro) against the published PPO agent
instead (issue 36; :mod:`bigtwo.tools.ppo_agent.bench`): ``--deals`` for great, ``--pro-deals``
for pro, its weights from ``--ppo-weights`` (the bench says how to fetch them when missing)::

    python -m bigtwo.tools.bots_bench --against ppo --deals 1000 --pro-deals 200 --jobs 2

Any level plays against the agent, the ``learned`` level (the trained network, issue 36) too::

    python -m bigtwo.tools.bots_bench --against ppo --against-levels learned,great --deals 400
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bigtwo.engine import PRESET_NAMES, Ruleset
from bigtwo.engine.bots import Budget
from bigtwo.engine.rules import Penalty

from .ppo_agent import bench as ppo_bench
from .tournament import (
    Seating,
    TournamentResult,
    add_seating_argument,
    lower_is_better,
    percentile,
    run_tournament,
)

# The seating order of the cheap tournament is the one every earlier measurement used
# (docs/PERFORMANCE.md), so classic at 4 players reproduces those figures.
LADDER = ("great", "good", "beginner", "random")
ADJACENT = (("beginner", "random"), ("good", "beginner"), ("great", "good"))
PRO_FIELD = ("pro", "great")
PRO_TARGET = 1.0
PRO_TARGET_PRESETS = ("classic", "web")
PLAYERS = (2, 3, 4)
PERCENTILES = ("p50", "p95", "p99")

# The run-time estimate: mean ms of one decision (the engine's part included) on this project's
# 2-core reference machine, and a level's decisions per duplicate deal at each player count (it
# holds every seat once per deal; 3 players deal 17 cards). Rough: it only sizes the run.
EST_MS_PER_DECISION = {"random": 0.12, "beginner": 0.14, "good": 0.16, "great": 0.2, "learned": 0.5, "pro": 25.0}
EST_DECISIONS_PER_DEAL = {2: 19, 3: 40, 4: 45}


@dataclass(frozen=True, slots=True)
class Cell:
    preset: str
    players: int
    ruleset: Ruleset
    with_pro: bool


def unit_of(ruleset: Ruleset) -> str:
    return "win rate" if ruleset.penalty is Penalty.NONE else "points per deal"


def better_positive(result: TournamentResult, better: str, worse: str) -> dict[str, Any]:
    """``better`` − ``worse`` paired by deal, its sign flipped where lower is better."""
    mean, low, high = result.paired(better, worse)
    if lower_is_better(result.ruleset):
        mean, low, high = -mean, -high, -low
    return {"pair": f"{better}-{worse}", "mean": round(mean, 4), "ci95": [round(low, 4), round(high, 4)]}


def ladder_verdict(result: TournamentResult) -> dict[str, Any]:
    """The adjacent differences and whether the ladder is strictly ordered: each interval above 0.
    A failing pair is ``reversed`` when its interval is wholly below zero, else ``unresolved``."""
    pairs = [better_positive(result, better, worse) for better, worse in ADJACENT]
    failing = []
    for pair in pairs:
        low, high = pair["ci95"]
        pair["ordered"] = low > 0
        if not pair["ordered"]:
            failing.append({"pair": pair["pair"], "why": "reversed" if high < 0 else "unresolved"})
    return {"pairs": pairs, "ordered": not failing, "failing": failing}


def pro_verdict(result: TournamentResult, preset: str) -> dict[str, Any]:
    """pro − great (better-is-positive) against issue 17's +1.0 under classic and web; elsewhere
    (no target: taiwan's points are a win rate) whether pro is shown ahead at all."""
    diff = better_positive(result, "pro", "great")
    low = diff["ci95"][0]
    target = PRO_TARGET if preset in PRO_TARGET_PRESETS else None
    if target is None:
        verdict, met = ("ahead" if low > 0 else "not shown ahead"), low > 0
    elif low >= target:
        verdict, met = f">= {target:+.1f} shown", True
    elif diff["mean"] >= target:
        verdict, met = f"mean >= {target:+.1f}, interval not", False
    else:
        verdict, met = f"below {target:+.1f}", False
    return {**diff, "target": target, "met": met, "verdict": verdict}


def decide_times(results: Sequence[TournamentResult]) -> dict[str, dict[str, float]]:
    """Percentiles per level over every decision it made in the cell (great's from both fields)."""
    merged: dict[str, list[float]] = {}
    for result in results:
        for level in result.levels:
            merged.setdefault(level, []).extend(result.decide_ms[level])
    return {
        level: {**{f"p{q}": round(percentile(times, q), 3) for q in (50, 95, 99)}, "decisions": len(times)}
        for level, times in merged.items()
    }


def cell_report(cell: Cell, ladder: TournamentResult | None, pro: TournamentResult | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "preset": cell.preset,
        "players": cell.players,
        "unit": unit_of(cell.ruleset),
        "lower_is_better": lower_is_better(cell.ruleset),
        "ladder": None,
        "pro": None,
    }
    if ladder is not None:
        entry["ladder"] = {"deals": ladder.deals, **ladder_verdict(ladder), "tournament": ladder.to_json(pairs=True)}
    if pro is not None:
        entry["pro"] = {"deals": pro.deals, **pro_verdict(pro, cell.preset), "tournament": pro.to_json(pairs=True)}
    entry["decide_ms"] = decide_times([r for r in (ladder, pro) if r is not None])
    return entry


def matrix(args: argparse.Namespace) -> tuple[list[Cell], list[dict[str, Any]]]:
    """The cells to play, and the combinations a preset refuses (with its reason)."""
    pro_presets = set(PRESET_NAMES if args.pro_all else _names(args.pro_presets))
    pro_players = set(PLAYERS if args.pro_all else _counts(args.pro_players))
    cells, skipped = [], []
    for preset in _names(args.presets):
        for players in _counts(args.players):
            try:
                ruleset = Ruleset.from_mapping({"preset": preset, "players": players})
            except ValueError as error:
                skipped.append({"preset": preset, "players": players, "reason": str(error)})
                continue
            with_pro = args.pro_deals > 0 and preset in pro_presets and players in pro_players
            cells.append(Cell(preset, players, ruleset, with_pro))
    return cells, skipped


def deal_cost(levels: Sequence[str], players: int) -> float:
    """Estimated CPU seconds of one duplicate deal of ``levels`` (see EST_MS_PER_DECISION)."""
    return sum(EST_MS_PER_DECISION[level] for level in levels) * EST_DECISIONS_PER_DEAL[players] / 1000


def estimate(cells: Sequence[Cell], deals: int, pro_deals: int, jobs: int) -> tuple[float, float]:
    """Estimated wall seconds of the cheap ladder and of pro with ``jobs`` workers."""
    cheap = sum(deals * deal_cost(LADDER, cell.players) for cell in cells)
    pro = sum(pro_deals * deal_cost(PRO_FIELD, cell.players) for cell in cells if cell.with_pro)
    return cheap / max(1, jobs), pro / max(1, jobs)


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{max(1, minutes)} min"


def run(args: argparse.Namespace) -> dict[str, Any]:
    cells, skipped = matrix(args)
    for skip in skipped:
        print(f"skipped {skip['preset']} at {skip['players']} players: {skip['reason']}", file=sys.stderr)
    cheap_s, pro_s = estimate(cells, args.deals, args.pro_deals, args.jobs)
    print(
        f"{len(cells)} cells, {sum(c.with_pro for c in cells)} with pro; estimated run time "
        f"{_duration(cheap_s + pro_s)} with {args.jobs} jobs (ladder {_duration(cheap_s)}, pro {_duration(pro_s)})",
        file=sys.stderr,
    )
    budget = None
    if args.pro_steps is not None or args.pro_sims is not None:
        base = Budget()
        budget = Budget(
            simulations=args.pro_sims if args.pro_sims is not None else base.simulations,
            steps=args.pro_steps if args.pro_steps is not None else base.steps,
        )
    report: dict[str, Any] = {
        "seed": args.seed,
        "deals": args.deals,
        "pro_deals": args.pro_deals,
        "pro_seating": args.pro_seating,
        "jobs": args.jobs,
        "orientation": "better-is-positive: a - b in points per deal (win rate under taiwan), "
        "sign flipped under penalty scoring",
        "pro_target": PRO_TARGET,
        "pro_target_presets": list(PRO_TARGET_PRESETS),
        "estimated_seconds": round(cheap_s + pro_s),
        "skipped": skipped,
        "cells": [],
    }
    with _progress(args.no_progress, cheap_s + pro_s) as advance:
        for cell in cells:
            seconds: dict[str, float] = {}
            ladder = _play(cell, LADDER, args.deals, args, None, advance, seconds)
            pro = (
                _play(cell, PRO_FIELD, args.pro_deals, args, budget, advance, seconds, Seating(args.pro_seating))
                if cell.with_pro
                else None
            )
            entry = cell_report(cell, ladder, pro)
            entry["seconds"] = seconds
            report["cells"].append(entry)
            if args.json:  # after every cell: hours of pro are not lost to a stop
                _write_json(args.json, report)
    return report


def _play(
    cell: Cell,
    levels: Sequence[str],
    deals: int,
    args: argparse.Namespace,
    budget: Budget | None,
    advance: Callable[[str, float], None],
    seconds: dict[str, float],
    seating: Seating = Seating.ROTATE,
) -> TournamentResult | None:
    """One tournament of the cell; its wall time goes into ``seconds``."""
    if deals <= 0:
        return None
    cost = deal_cost(levels, cell.players) / max(1, args.jobs)
    label = f"{cell.preset} {cell.players}p {','.join(levels)}"
    started = time.perf_counter()
    result = run_tournament(
        cell.ruleset,
        levels,
        deals,
        args.seed,
        args.jobs,
        budget,
        progress=lambda n: advance(label, n * cost),
        seating=seating,
    )
    seconds[",".join(levels)] = round(time.perf_counter() - started, 1)
    return result


class _progress:
    """One rich bar over the whole matrix on stderr, advanced in estimated seconds so its ETA
    weighs a pro deal as the hundreds of cheap ones it costs."""

    def __init__(self, off: bool, total: float) -> None:
        self.off, self.total = off, total
        self.bar: Any = None

    def __enter__(self) -> Callable[[str, float], None]:
        if self.off:
            return lambda label, amount: None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.bar.__enter__()
        task = self.bar.add_task("bench-bots", total=max(self.total, 1e-9))

        def advance(label: str, amount: float) -> None:
            self.bar.update(task, advance=amount, description=label)

        return advance

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _write_json(path: str, report: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)


def _interval(entry: dict[str, Any]) -> str:
    low, high = entry["ci95"]
    return f"{entry['mean']:+.3f}\n[{low:+.3f}, {high:+.3f}]"


def table(report: dict[str, Any]) -> Any:
    """The rich table: one row per preset × players."""
    from rich.table import Table

    title = (
        f"Bot ladder: paired differences, {report['deals']} duplicate deals (pro: {report['pro_deals']}, "
        f"seating {report.get('pro_seating', 'rotate')}), "
        f"95% intervals, seed {report['seed']}\n"
        "points per deal (win rate under taiwan), better-is-positive: sign flipped under penalty scoring"
    )
    out = Table(title=title, show_lines=True)
    out.add_column("preset")
    out.add_column("players", justify="right")
    for better, worse in ADJACENT:
        out.add_column(f"{better} − {worse}", justify="right")
    out.add_column("ladder")
    out.add_column("pro − great", justify="right")
    out.add_column("pro verdict")
    out.add_column("decide ms p50/p95/p99")
    for entry in report["cells"]:
        ladder = entry["ladder"]
        if ladder is None:
            diffs, verdict = ["—"] * len(ADJACENT), "not run"
        else:
            diffs = [_interval(pair) for pair in ladder["pairs"]]
            failing = ", ".join(f"{f['pair']} {f['why']}" for f in ladder["failing"])
            verdict = "[green]strictly ordered[/]" if ladder["ordered"] else f"[red]not ordered:[/] {failing}"
        pro = entry["pro"]
        pro_diff = _interval(pro) if pro else "not measured"
        pro_text = ("[green]" if pro["met"] else "[red]") + pro["verdict"] + "[/]" if pro else ""
        times = "\n".join(
            f"{level} " + "/".join(_ms(t[p]) for p in PERCENTILES)
            for level, t in sorted(entry["decide_ms"].items(), key=lambda kv: _level_rank(kv[0]))
        )
        out.add_row(entry["preset"], str(entry["players"]), *diffs, verdict, pro_diff, pro_text, times)
    return out


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.2g}" if value < 1 else f"{value:.1f}"


def _level_rank(level: str) -> int:
    order = ("pro", *LADDER)
    return order.index(level) if level in order else len(order)


def plot(report: dict[str, Any], path: str) -> None:
    """One panel per preset × players: the adjacent ladder differences and pro − great with their
    intervals (better-is-positive), zero and pro's +1.0 target drawn across."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    presets = list(dict.fromkeys(entry["preset"] for entry in report["cells"]))
    counts = sorted({entry["players"] for entry in report["cells"]})
    fig, axes = plt.subplots(
        len(presets), len(counts), figsize=(3.6 * len(counts), 2.6 * len(presets)), squeeze=False, sharey="row"
    )
    for ax in axes.flat:
        ax.set_visible(False)
    for entry in report["cells"]:
        ax = axes[presets.index(entry["preset"])][counts.index(entry["players"])]
        ax.set_visible(True)
        rows = list(entry["ladder"]["pairs"]) if entry["ladder"] else []
        colors = ["#4c72b0"] * len(rows)
        if entry["pro"]:
            rows.append(entry["pro"])
            colors.append("#dd8452")
        labels = [row["pair"].replace("-", "−\n", 1) for row in rows]
        means = [row["mean"] for row in rows]
        below = [row["mean"] - row["ci95"][0] for row in rows]
        above = [row["ci95"][1] - row["mean"] for row in rows]
        ax.bar(labels, means, yerr=[below, above], capsize=4, color=colors)
        ax.axhline(0, color="black", linewidth=0.8)
        if entry["pro"] and entry["pro"]["target"] is not None:
            ax.axhline(entry["pro"]["target"], color="#dd8452", linewidth=0.8, linestyle="--")
        ax.set_title(f"{entry['preset']}, {entry['players']} players", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_ylabel(entry["unit"], fontsize=7)
    fig.suptitle("Paired differences, 95% intervals (better-is-positive; dashed: pro − great target)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PRESET_NAMES]
    if unknown:
        raise SystemExit(f"unknown preset(s) {', '.join(unknown)}; choose from {', '.join(PRESET_NAMES)}")
    return names


def _counts(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SystemExit(f"player counts are comma-separated integers, not {text!r}") from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bots_bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--presets", default=",".join(PRESET_NAMES))
    parser.add_argument("--players", default="2,3,4", help="player counts (comma-separated)")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals of the cheap ladder (0 to skip)")
    parser.add_argument("--pro-deals", type=int, default=400, help="duplicate deals of pro,great (0 to skip)")
    parser.add_argument("--pro-presets", default="classic,web", help="presets pro is measured under")
    parser.add_argument("--pro-players", default="4", help="player counts pro is measured at")
    parser.add_argument("--pro-all", action="store_true", help="measure pro in every cell of the matrix")
    add_seating_argument(
        parser,
        "--pro-seating",
        "rotate: pro and great take turns in every seat; field: one pro against the rest great, "
        "in every seat, against great in that seat (issue 17's protocol against the outside agent)",
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pro-steps", type=int, default=None)
    parser.add_argument("--pro-sims", type=int, default=None)
    parser.add_argument("--json", default=None, metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--plot", default=None, metavar="FILE", help="write a PNG chart (needs matplotlib)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    ppo_bench.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:  # refused before hours of play, not after
            parser.error("--plot needs matplotlib: install the 'plot' extra (pip install -e '.[plot]')")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    against = args.against is not None
    report = ppo_bench.run(args) if against else run(args)
    from rich.console import Console

    console = Console()
    if not console.is_terminal:  # a file or pipe gets the whole row, not 80 columns' wrap
        console.width = max(console.width, 170)
    console.print(ppo_bench.table(report) if against else table(report))
    if args.json:
        _write_json(args.json, report)
        print(f"JSON written to {args.json}", file=sys.stderr)
    if args.plot and not against:
        plot(report, args.plot)
        print(f"Chart written to {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
