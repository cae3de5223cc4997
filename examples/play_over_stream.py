"""The same deal over one PlayStream: open the deal, then send moves and read their results.

The stream keeps the deal for its life; with resume (the default) every result carries a state
token, so a broken stream is reopened on the next target and the pending move sent again.

    python examples/play_over_stream.py --target 127.0.0.1:50051
"""

import argparse

from bigtwo.client import BigTwoClient
from bigtwo.client.client import GameRef
from bigtwo.engine import preset


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
            print(f"deal {stream.opened.deal_code} open on the stream: seat {table.to_act} leads")
            while not table.over:
                hint = client.next_hint(stream.game)  # unary calls work on the stream's token too
                move = hint.play.text if hint.play is not None else "pass"
                result = stream.move(move, seat=table.to_act)
                for event in result.events:
                    print(" ", event.describe())
                table = result.table
            print(f"seat {table.winner} wins; scores {list(table.scores)}; {stream.game.moves_made} moves")


if __name__ == "__main__":
    main()
