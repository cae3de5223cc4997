"""Play a deal, write its replay file, read it back, audit it, and replay its log on the service.

python examples/replay_file.py --target 127.0.0.1:50051 --out game.toml
"""

import argparse
import tempfile
from pathlib import Path

from bigtwo.client import BigTwoClient, BigTwoDeadlineExceeded, BigTwoUnavailable
from bigtwo.client.client import GameRef
from bigtwo.client.replay_files import read_replay
from bigtwo.client.table import Table, bot_seat
from bigtwo.engine import Ruleset, seat_ref
from bigtwo.engine.replay import audit_log


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "bigtwo-example-replay.toml"))
    args = parser.parse_args()

    rules = Ruleset.from_mapping({"preset": "hong-kong", "match": "single"})
    with BigTwoClient(args.target) as client:
        table = Table(client, rules, [bot_seat("good", seed=s) for s in range(rules.players)])
        table.play_match(["0000003NQK8N1"])
        path = table.write_replay(args.out)
        print("wrote", path)

        log = read_replay(path)  # the file, read back
        print("audit:", audit_log(log).kind.value)
        deal = log.deals[0]
        moves = tuple(a.move_text for a in deal.actions if a.is_move and not a.auto and not a.refused)
        replayed = client.replay_log(GameRef(rules, deal_code=deal.code, moves=moves))
        print(
            f"the service replays {replayed.moves_applied} moves: {seat_ref(replayed.table.winner)} wins; "
            f"scores {by_seat(replayed.table.scores)}"
        )
        assert replayed.table.scores == deal.result.scores


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
