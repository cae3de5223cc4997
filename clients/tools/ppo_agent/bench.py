"""``bots_bench --against ppo``: this project's bots against the published PPO agent (issue 36).

Each level named by ``--against-levels`` (default ``great,pro``) is measured the way issue 17 and
issue 36 met the agent: ``tournament --seating field`` with the agent as the field, so every deal
is played once by four copies of the agent and then, for each seat, once with the level alone in
that seat against three copies of it (playing greedily, offered only moves legal in both games),
under :data:`~bigtwo.tools.ppo_agent.player.RULESET`. The figure is the level's points minus the
agent's own points in the same seat with the same cards, paired by deal, with its 95% interval
(zero-sum scores: a card left costs 1, the winner collects; higher is better). ``pro`` plays
``--pro-deals`` deals, every other level ``--deals``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any

from bigtwo.engine import Ruleset
from bigtwo.engine.bots import Budget

from .source import LEVEL, RULESET, fetch_instructions, weights_path

AGAINST_LEVELS = "great,pro"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--against",
        choices=["ppo"],
        default=None,
        help="measure --against-levels against an outside agent instead of the ladder: ppo is "
        "the published PPO agent (henrycharlesworth/big2_PPOalgorithm), under issue 36's ruleset",
    )
    parser.add_argument("--against-levels", default=AGAINST_LEVELS, help="levels measured against the agent")
    parser.add_argument(
        "--ppo-weights",
        default=None,
        metavar="FILE",
        help="the agent's modelParameters136500 (default: $BIGTWO_PPO_WEIGHTS, else "
        ".tools/ppo/big2_PPOalgorithm/modelParameters136500)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    from bigtwo.tools.tournament import Seating, run_tournament

    # numpy is imported only now: the rest of bots_bench runs without it.
    from .network import WeightsError
    from .player import bot_or_agent, cached_weights

    path = weights_path(args.ppo_weights)
    if not path.is_file():
        raise SystemExit(fetch_instructions(path))
    try:
        weights = cached_weights(str(path))
    except WeightsError as error:
        raise SystemExit(f"the PPO agent's weights do not load: {error}") from None
    ruleset = Ruleset.from_mapping(RULESET)
    factory = functools.partial(bot_or_agent, str(path))
    report: dict[str, Any] = {
        "against": LEVEL,
        "ruleset": RULESET,
        "weights": str(path),
        "weights_sha256": weights.sha256,
        "seed": args.seed,
        "seating": "field: one level alone in each seat against three copies of the agent",
        "orientation": "level - agent in zero-sum points per deal, paired by deal; higher is better",
        "levels": [],
    }
    for level in [name.strip() for name in args.against_levels.split(",") if name.strip()]:
        deals = args.pro_deals if level == "pro" else args.deals
        if deals <= 0:
            continue
        print(f"{level} against the PPO agent: {deals} deals, 5 tables each", file=sys.stderr)
        started = time.perf_counter()
        result = run_tournament(
            ruleset,
            (level, LEVEL),
            deals,
            args.seed,
            args.jobs,
            _budget(args),
            seating=Seating.FIELD,
            bot_factory=factory,
        )
        mean, low, high = result.paired(level, LEVEL)
        report["levels"].append(
            {
                "level": level,
                "deals": deals,
                "mean": round(mean, 4),
                "ci95": [round(low, 4), round(high, 4)],
                "seconds": round(time.perf_counter() - started, 1),
                "tournament": result.to_json(pairs=True),
            }
        )
    return report


def _budget(args: argparse.Namespace) -> Budget | None:
    """pro's budget from --pro-steps / --pro-sims, as the ladder's bench reads them."""
    if args.pro_steps is None and args.pro_sims is None:
        return None
    base = Budget()
    return Budget(
        simulations=args.pro_sims if args.pro_sims is not None else base.simulations,
        steps=args.pro_steps if args.pro_steps is not None else base.steps,
    )


def table(report: dict[str, Any]) -> Any:
    from rich.table import Table

    out = Table(
        title=f"Against the PPO agent (greedy), seating field, seed {report['seed']}: "
        "level − agent in the same seat, zero-sum points per deal, 95% interval by deal"
    )
    for column in ("level", "deals", "level − agent", "95% interval", "decide ms p95 (level / agent)"):
        out.add_column(column, justify="right" if column != "level" else "left")
    for entry in report["levels"]:
        levels = entry["tournament"]["levels"]
        low, high = entry["ci95"]
        times = f"{levels[entry['level']]['decide_ms_p95']:.3g} / {levels[LEVEL]['decide_ms_p95']:.3g}"
        out.add_row(entry["level"], str(entry["deals"]), f"{entry['mean']:+.2f}", f"[{low:+.2f}, {high:+.2f}]", times)
    return out
