"""The bars the bot levels must clear (docs/BOTS.md), measured with ``bigtwo tournament``'s machinery:

* ``great,good,beginner,random`` on ``--deals`` duplicate deals (4 levels, one each per seat);
* ``pro,great,random`` on ``--pro-deals`` duplicate deals (pro at its default budget unless
  ``--pro-steps``/``--pro-sims`` say otherwise);

under each preset of ``--presets``. It prints a Markdown table of mean points per deal with 95%
intervals, and the paired differences the bars ask for (great - good, pro - great, every level -
random), each marked PASS when its 95% interval excludes zero in the winning direction. Run::

    python -m bigtwo.tools.bots_bench --deals 2000 --pro-deals 2000 --jobs 2
    make bench-bots
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from bigtwo.engine import Ruleset
from bigtwo.engine.bots import Budget

from .tournament import TournamentResult, lower_is_better, run_tournament

BARS = (
    ("great", "good"),
    ("pro", "great"),
    ("great", "random"),
    ("good", "random"),
    ("beginner", "random"),
    ("pro", "random"),
)


def _fmt(mean: float, low: float, high: float) -> str:
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    budget = None
    if args.pro_steps is not None or args.pro_sims is not None:
        base = Budget()
        budget = Budget(
            simulations=args.pro_sims if args.pro_sims is not None else base.simulations,
            steps=args.pro_steps if args.pro_steps is not None else base.steps,
        )
    for name in args.presets.split(","):
        ruleset = Ruleset.from_mapping({"preset": name})
        results: list[TournamentResult] = []
        timings: dict[str, float] = {}
        for levels, deals in (
            (["great", "good", "beginner", "random"], args.deals),
            (["pro", "great", "random"], args.pro_deals),
        ):
            if deals <= 0:
                continue
            started = time.perf_counter()
            results.append(run_tournament(ruleset, levels, deals, args.seed, args.jobs, budget))
            timings[",".join(levels)] = round(time.perf_counter() - started, 1)
            print(f"{name} {','.join(levels)}: {deals} deals in {timings[','.join(levels)]}s", file=sys.stderr)
        lower = lower_is_better(ruleset)
        entry: dict[str, Any] = {"lower_is_better": lower, "tournaments": [], "bars": {}, "seconds": timings}
        for result in results:
            entry["tournaments"].append(result.to_json(pairs=True))
        for a, b in BARS:
            for result in results:
                if a in result.levels and b in result.levels:
                    mean, low, high = result.paired(a, b)
                    wins = high < 0 if lower else low > 0
                    entry["bars"][f"{a}-{b}"] = {
                        "deals": result.deals,
                        "mean": round(mean, 4),
                        "ci95": [round(low, 4), round(high, 4)],
                        "pass": wins,
                    }
                    break
        out[name] = entry
        print(markdown({name: entry}), file=sys.stderr)  # each preset as soon as it is done
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(out, handle, indent=2)
    return out


def markdown(report: dict[str, Any]) -> str:
    lines = []
    for name, entry in report.items():
        better = "lower" if entry["lower_is_better"] else "higher"
        lines.append(f"### {name} (points per deal, {better} is better)")
        lines.append("")
        lines.append("| tournament | level | deals | mean | 95% CI | decide p95 ms |")
        lines.append("|---|---|---:|---:|---|---:|")
        for tour in entry["tournaments"]:
            label = ",".join(tour["levels"])
            for level, s in tour["levels"].items():
                lines.append(
                    f"| {label} | {level} | {tour['deals']} | {s['mean']:.3f} | "
                    f"[{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}] | {s['decide_ms_p95']:.1f} |"
                )
        lines.append("")
        lines.append("| bar (paired by deal) | deals | difference | 95% CI | verdict |")
        lines.append("|---|---:|---:|---|---|")
        for pair, bar in entry["bars"].items():
            verdict = "PASS" if bar["pass"] else "not shown"
            interval = f"[{bar['ci95'][0]:+.3f}, {bar['ci95'][1]:+.3f}]"
            lines.append(f"| {pair} | {bar['deals']} | {bar['mean']:+.3f} | {interval} | {verdict} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bots_bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--presets", default="classic,hong-kong")
    parser.add_argument("--deals", type=int, default=2000, help="deals for great,good,beginner,random")
    parser.add_argument("--pro-deals", type=int, default=2000, help="deals for pro,great,random (0 to skip)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pro-steps", type=int, default=None)
    parser.add_argument("--pro-sims", type=int, default=None)
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the full report as JSON")
    args = parser.parse_args(argv)
    report = run(args)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
