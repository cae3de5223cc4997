"""A whole match between bots with the Table helper: deals, settlement cards, match totals.

The service judges every move; bots decide locally from their own seat's view.

    python examples/bot_match.py --target 127.0.0.1:50051 --bots good,great,beginner,random
"""

import argparse

from bigtwo.client import BigTwoClient
from bigtwo.client.table import Table, bot_seat
from bigtwo.engine import Ruleset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--bots", default="good,great,beginner,random")
    parser.add_argument("--deals", type=int, default=2)
    args = parser.parse_args()

    rules = Ruleset.from_mapping({"preset": "classic", "match": f"deals:{args.deals}"})
    levels = args.bots.split(",")
    seats = [bot_seat(level, seed=seat) for seat, level in enumerate(levels)]
    with BigTwoClient(args.target) as client:
        table = Table(client, rules, seats)
        standing = table.play_match()
        for outcome in table.deals:
            print(
                f"deal {outcome.number} ({outcome.deal_code}): seat {outcome.settlement.winner} wins, "
                f"scores {list(outcome.settlement.scores)}"
            )
        print("totals", list(standing.totals), "winners", [levels[s] for s in standing.winners])


if __name__ == "__main__":
    main()
