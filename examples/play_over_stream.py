"""The same deal over one PlayStream: open the deal, then send moves and read their results.

The stream keeps the deal for its life; with resume (the default) every result carries a state
token, so a broken stream is reopened on the next target and the pending move sent again.

    python examples/play_over_stream.py --target 127.0.0.1:50051
"""

import argparse

from bigtwo.client import BigTwoClient, BigTwoDeadlineExceeded, BigTwoUnavailable
from bigtwo.client.client import GameRef
from bigtwo.engine import preset, seat_ref


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--deal-code", default="0000003NQK8N1")
    args = parser.parse_args()

    rules = preset("classic")
    with BigTwoClient(args.target) as client:
        game = GameRef(rules, deal_code=args.deal_code)  # a log with no moves yet
        with client.play_stream(game) as stream:
            assert stream.opened is not None
            table = stream.opened.table
            print(f"deal {stream.opened.deal_code} open on the stream: {seat_ref(table.to_act)} leads")
            while not table.over:
                hint = client.next_hint(stream.game)  # unary calls work on the stream's token too
                move = hint.play.text if hint.play is not None else "pass"
                result = stream.move(move, seat=table.to_act)
                for event in result.events:
                    print(" ", event.describe())
                table = result.table
            print(f"{seat_ref(table.winner)} wins; scores {by_seat(table.scores)}; {stream.game.moves_made} moves")


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
