"""``bigtwo bench engine [--json] [--runs N]``: speed figures of the pure rules engine.

Figures (each the median over ``--runs`` runs of CPU time, ``time.process_time``):

* ``selfplay_deals_per_s``, one per preset: random self-play deals from deal codes. Each seat
  picks uniformly among its legal plays, passing included whenever there is a table to beat.
* ``legal_moves_calls_per_s``: the move generator (``generate.all_plays``) on the hand
  ``3D 4C 5H 6S 7D 8D 8C 9H TS JD JC QH 2S`` leading an empty table under ``classic`` (31 plays).
* ``legal_moves_api_calls_per_s``: the same position through ``Deal.legal_moves()``.
* ``verify_deals_per_s``: re-verifying logged deals move by move from scratch (``Deal.start`` then
  ``do_text`` for every logged move), as a service replaying a client's log would.

With ``--json`` every figure is one JSON object per line, e.g.
``{"figure": "selfplay_deals_per_s", "preset": "classic", "value": 1234.5, "unit": "deals/s"}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bigtwo.engine import (
    PRESET_NAMES,
    Deal,
    DealCode,
    DealtCards,
    Move,
    Ruleset,
    deal_from_code,
    explicit_deal,
    parse_mask,
    preset,
    tables_for,
)
from bigtwo.engine.generate import CARD_MASK, all_plays

BENCH_HAND = "3D 4C 5H 6S 7D 8D 8C 9H TS JD JC QH 2S"
BENCH_HAND_PLAYS = 31
DEFAULT_RUNS = 5

# Work per run, sized so that the default bench takes a few seconds of CPU in all.
SELFPLAY_DEALS_PER_RUN = 60
LEGAL_CALLS_PER_RUN = 4000
LEGAL_API_CALLS_PER_RUN = 1500
VERIFY_DEALS_PER_RUN = 60

BASE_SEED = 0x5EED_B16_7A0  # deal codes are DealCode(BASE_SEED + i): the same deals on every run


@dataclass(frozen=True, slots=True)
class Figure:
    figure: str
    preset: str
    value: float
    unit: str

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))


@dataclass(frozen=True, slots=True)
class LoggedDeal:
    """A finished deal as a log: the cards dealt and every move made, as text (``pass`` or cards)."""

    dealt: DealtCards
    moves: tuple[str, ...]


# -- random self-play ------------------------------------------------------------------------------


def random_move(deal: Deal, rng: random.Random) -> Move:
    """A uniformly random legal move for the seat to act: any legal play, or pass when following."""
    options = deal.legal_encoded()
    if deal.table is not None:
        options.append(0)  # mask 0: pass
    if not options:
        raise RuntimeError(f"seat {deal.to_act} has no legal move (state {deal.state()})")
    return Move.from_mask(deal.to_act, rng.choice(options) & CARD_MASK)


def random_deal(ruleset: Ruleset, seed: int, rng: random.Random) -> LoggedDeal:
    """Play the deal of ``DealCode(seed)`` to its end with random moves; return its log."""
    dealt = deal_from_code(DealCode(seed), ruleset)
    deal = Deal.start(ruleset, dealt)
    moves: list[str] = []
    while not deal.over:
        move = random_move(deal, rng)
        deal.do(move)
        moves.append(str(move))
    return LoggedDeal(dealt, tuple(moves))


def self_play(ruleset: Ruleset, seed: int, rng: random.Random) -> int:
    """Play the deal of ``DealCode(seed)`` to its end, each seat choosing uniformly among its legal
    moves (pass included when following), every move verified and applied; returns the moves made.
    The mask-level calls skip building ``Card`` objects and move text, nothing else."""
    deal = Deal.start(ruleset, deal_from_code(DealCode(seed), ruleset))
    made = 0
    while not deal.over:
        options = deal.legal_encoded()
        if deal.table is not None:
            options.append(0)  # pass
        choice = rng.choice(options) & CARD_MASK
        if choice:
            deal.play_mask(deal.to_act, choice)
        else:
            deal.pass_turn(deal.to_act)
        made += 1
    return made


def replay_logged(ruleset: Ruleset, logged: LoggedDeal) -> Deal:
    """Re-verify and apply a logged deal from scratch, move by move."""
    deal = Deal.start(ruleset, logged.dealt)
    for text in logged.moves:
        deal.do_text(deal.to_act, text)
    if not deal.over:
        raise RuntimeError("a logged deal replayed without ending")
    return deal


# -- measuring -------------------------------------------------------------------------------------


def median_rate(work: Callable[[], int], runs: int) -> float:
    """Run ``work`` (which returns how many units it did) ``runs`` times after one warm-up run;
    the median of units per CPU second."""
    work()
    rates: list[float] = []
    for _ in range(max(1, runs)):
        start = time.process_time()
        units = work()
        elapsed = time.process_time() - start
        rates.append(units / max(elapsed, 1e-9))
    return statistics.median(rates)


def bench_selfplay(ruleset: Ruleset, runs: int, deals: int = SELFPLAY_DEALS_PER_RUN) -> float:
    def work() -> int:
        rng = random.Random(BASE_SEED)
        for i in range(deals):
            self_play(ruleset, BASE_SEED + i, rng)
        return deals

    return median_rate(work, runs)


def bench_position() -> tuple[Ruleset, int, Deal]:
    """The benchmark position: BENCH_HAND at seat 0, leading an empty table under classic."""
    ruleset = preset("classic")
    hand = parse_mask(BENCH_HAND)
    rest = [index for index in range(52) if not hand >> index & 1]
    others = [sum(1 << index for index in rest[seat::3]) for seat in range(3)]
    started = Deal.start(ruleset, explicit_deal((hand, *others), ruleset))
    # A free lead: the same position without the first deal's opening-card requirement.
    state = started.state()._replace(to_act=0, leader=0, opening_card=-1)
    deal = Deal.from_state(ruleset, state)
    return ruleset, hand, deal


def bench_legal_moves(runs: int, calls: int = LEGAL_CALLS_PER_RUN) -> float:
    ruleset, hand, _ = bench_position()
    tables = tables_for(ruleset)
    count = len(all_plays(hand, tables))
    if count != BENCH_HAND_PLAYS:
        raise RuntimeError(f"the bench hand has {count} plays, expected {BENCH_HAND_PLAYS}")

    def work() -> int:
        for _ in range(calls):
            all_plays(hand, tables)
        return calls

    return median_rate(work, runs)


def bench_legal_moves_api(runs: int, calls: int = LEGAL_API_CALLS_PER_RUN) -> float:
    _, _, deal = bench_position()
    count = len(deal.legal_moves())
    if count != BENCH_HAND_PLAYS:
        raise RuntimeError(f"Deal.legal_moves() lists {count} moves for the bench hand, expected {BENCH_HAND_PLAYS}")

    def work() -> int:
        for _ in range(calls):
            deal.legal_moves()
        return calls

    return median_rate(work, runs)


def bench_verify(runs: int, deals: int = VERIFY_DEALS_PER_RUN) -> float:
    ruleset = preset("classic")
    rng = random.Random(BASE_SEED)
    logs = [random_deal(ruleset, BASE_SEED + i, rng) for i in range(deals)]

    def work() -> int:
        for logged in logs:
            replay_logged(ruleset, logged)
        return len(logs)

    return median_rate(work, runs)


def engine_figures(runs: int = DEFAULT_RUNS, emit: Callable[[Figure], None] | None = None) -> list[Figure]:
    """Every engine figure, in order; ``emit`` sees each one as soon as it is measured."""
    out: list[Figure] = []

    def add(figure: Figure) -> None:
        out.append(figure)
        if emit is not None:
            emit(figure)

    for name in PRESET_NAMES:
        add(Figure("selfplay_deals_per_s", name, round(bench_selfplay(preset(name), runs), 1), "deals/s"))
    add(Figure("legal_moves_calls_per_s", "classic", round(bench_legal_moves(runs), 1), "calls/s"))
    add(Figure("legal_moves_api_calls_per_s", "classic", round(bench_legal_moves_api(runs), 1), "calls/s"))
    add(Figure("verify_deals_per_s", "classic", round(bench_verify(runs), 1), "deals/s"))
    return out


# -- command ---------------------------------------------------------------------------------------


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from .arguments import positive_int

    parser: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="measure speed figures (bench engine)",
        description=(
            "Measure speed figures. 'engine': random self-play deals per second for every preset, "
            "legal-move generator and Deal.legal_moves() calls per second, and logged deals "
            "re-verified per second; each the median over several runs of CPU time."
        ),
    )
    parser.add_argument("subject", choices=["engine"], help="what to measure (engine: the pure rules engine)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per figure, one per line")
    parser.add_argument(
        "--runs",
        type=positive_int,
        default=DEFAULT_RUNS,
        metavar="N",
        help=f"runs per figure (default {DEFAULT_RUNS})",
    )
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    if args.json:
        engine_figures(args.runs, emit=lambda figure: print(figure.to_json(), flush=True))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    with console.status("measuring…"):
        figures = engine_figures(args.runs)
    table = Table(title=f"bigtwo engine (median of {args.runs} runs, CPU time)")
    table.add_column("figure")
    table.add_column("preset")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for figure in figures:
        table.add_row(figure.figure, figure.preset, f"{figure.value:,.1f}", figure.unit)
    console.print(table)
    return 0


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - convenience entry
    parser = argparse.ArgumentParser(prog="bigtwo-bench")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(["bench", *sys.argv[1:]]))
