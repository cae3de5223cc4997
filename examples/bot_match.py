"""A whole match between bots with the Table helper: deals, settlement cards, match totals.

The service judges every move; bots decide locally from their own seat's view.

    python examples/bot_match.py --target 127.0.0.1:50051 --bots good,great,beginner,random
"""

import argparse

from bigtwo.client import BigTwoClient, BigTwoDeadlineExceeded, BigTwoUnavailable
from bigtwo.client.table import Table, bot_seat
from bigtwo.engine import Ruleset, seat_ref


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--bots", default="good,great,beginner,random")
    parser.add_argument("--deals", type=int, default=2)
    args = parser.parse_args()

    rules = Ruleset.from_mapping({"preset": "classic", "match": f"deals:{args.deals}"})
    levels = args.bots.split(",")
    if len(levels) != rules.players:
        parser.error(f"--bots: give {rules.players} levels, one per seat (got {len(levels)})")
    seats = [bot_seat(level, seed=seat) for seat, level in enumerate(levels)]
    with BigTwoClient(args.target) as client:
        table = Table(client, rules, seats)
        standing = table.play_match()
    for outcome in table.deals:
        print(
            f"deal {outcome.number} ({outcome.deal_code}): {seat_ref(outcome.settlement.winner)} wins; "
            f"scores {by_seat(outcome.settlement.scores)}"
        )
    winners = " and ".join(f"{seat_ref(s)} ({levels[s]})" for s in standing.winners)
    print(f"match totals {by_seat(standing.totals)}; winner {winners}")


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
