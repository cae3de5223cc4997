"""Replay texts of matches played by a seeded random policy, with a refused attempt now and then:
the shape of every file the project writes, for the benches that read replays."""

from __future__ import annotations

import contextlib
import random

from bigtwo.engine import DealCode, Move, Refusal, Ruleset
from bigtwo.engine.replay import ReplayWriter, dumps


def random_match_text(deals: int, seed: int, comment: str, key: bytes) -> str:
    """The canonical text of a classic match of ``deals`` deals, signed with ``key``; the same
    arguments give the same text."""
    rules = Ruleset.from_mapping({"preset": "classic", "match": f"deals:{deals}"})
    rng = random.Random(seed)
    writer = ReplayWriter(rules, comment=comment)
    for _ in range(deals):
        deal = writer.start_deal(DealCode(rng.getrandbits(60)))
        while not deal.over:
            if rng.random() < 0.03:
                with contextlib.suppress(Refusal):
                    writer.play(Move.pass_(deal.to_act) if deal.leading else Move.play(deal.to_act, "2S"))
                continue
            writer.play(rng.choice(deal.legal_moves()))
    return dumps(writer.log(key))
