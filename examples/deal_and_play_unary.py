"""Deal one deal and play it to the end over unary calls (Deal, NextHint, ApplyMove, ScoreDeal).

The game lives with you: every answer carries the next GameRef (the moves so far and a signed
state token); send it back with the next call. Run against `bigtwo run` (or --target):

    python examples/deal_and_play_unary.py --target 127.0.0.1:50051
"""

import argparse

from bigtwo.client import BigTwoClient, BigTwoDeadlineExceeded, BigTwoUnavailable
from bigtwo.engine import preset, seat_ref


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--deal-code", default="0000003NQK8N1")
    args = parser.parse_args()

    with BigTwoClient(args.target, timeout=5.0) as client:
        dealt = client.deal(preset("classic"), deal_code=args.deal_code)
        game, table = dealt.game, dealt.table
        print(f"deal {dealt.deal_code}: {seat_ref(table.to_act)} leads")
        while not table.over:
            # Every seat plays the service's first hint, or passes when nothing beats the table.
            hint = client.next_hint(game)
            move = hint.play.text if hint.play is not None else "pass"
            result = client.apply_move(game, move, seat=table.to_act)
            if not result.accepted:  # a refusal is an answer: nothing changed
                print("refused:", result.outcome.refusal)
                break
            for event in result.events:
                print(" ", event.describe())
            game, table = result.game, result.table
        settlement = client.score_deal(game)
        print(f"{seat_ref(settlement.winner)} wins; scores {by_seat(settlement.scores)}; {game.moves_made} moves")


def by_seat(numbers: tuple[int, ...]) -> str:
    """``p1 0, p2 7, p3 2, p4 13``: seats as people number them."""
    return ", ".join(f"{seat_ref(seat)} {number}" for seat, number in enumerate(numbers))


if __name__ == "__main__":
    try:
        main()
    except (BigTwoUnavailable, BigTwoDeadlineExceeded) as error:  # a dead or wrong --target: a sentence
        raise SystemExit(
            f"No Big Two service answers at {error.target or 'the target'} ({error.message}): start one with "
            "`make run` (or `bigtwo serve`), or give its address with --target HOST:PORT."
        ) from None
