"""Records the original agent's own answers, to check the port against (tests/test_ppo_agent.py).

Run from a fetched copy of the agent (``--source``, default ``.tools/ppo/big2_PPOalgorithm``): it
imports the original's ``big2Game`` (with ``gameLogic`` and ``enumerateOptions``: numpy and the
standard library only) and, at every decision of the games it plays, writes down what that code
gives the player to act: its 412-number state (the indices holding 1) and its available actions
(indices). Nothing of the original's code or weights is written, only those numbers and the moves.

Two kinds of games, both from a seed:

* ``theirs``: the original's own game, dealt by its own ``reset`` and played by a uniform random
  choice among its available actions (so every kind of hand its rules allow turns up, two pairs
  and 2-high straights included);
* ``ours``: a deal of this project's engine under the ruleset the agent is met under, each seat
  choosing uniformly among the moves legal in both games (the original's available actions, read
  back into cards with its own tables, that this engine also allows, and pass), the same deal
  and moves fed to the original's game so its states are recorded along this engine's history.

The JSON lists games, each with the dealt hands (this project's card indices), the moves (seat and
cards; an empty list is a pass) and the decisions (``move``: how many moves were made before it,
``seat``, ``state``: the 412 numbers as one hexadecimal integer, bit ``i`` for number ``i``,
``available``; in ``ours`` games also ``both``, the available actions this engine allows)::

    python -m bigtwo.tools.ppo_agent.record --theirs 4 --ours 4 --seed 36 --out tests/data/ppo_recorded.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

from .actions import tables_digest
from .source import RULESET, SOURCE_COMMIT, source_dir


def _load_original(source: Path) -> tuple[Any, Any]:
    """The original's modules (``enumerateOptions`` opens its tables from the working folder)."""
    if not (source / "big2Game.py").is_file():
        raise SystemExit(f"no big2Game.py in {source}: fetch the agent first (see bigtwo.tools.ppo_agent.source)")
    os.chdir(source)
    sys.path.insert(0, str(source))
    sys.dont_write_bytecode = True  # leave the fetched copy as it was (no __pycache__ in it)
    import big2Game  # type: ignore[import-not-found]
    import enumerateOptions  # type: ignore[import-not-found]

    return big2Game, enumerateOptions


def _cards_of(enum: Any, hand: Any, action: int) -> list[int]:
    """The cards (this project's indices) an available action plays from the original's hand."""
    option, size = enum.getOptionNC(action)
    if size == 0:
        return []
    if size == 1:
        positions = [int(option)]
    else:
        inverse = {
            2: enum.inverseTwoCardIndices,
            3: enum.inverseThreeCardIndices,
            4: enum.inverseFourCardIndices,
            5: enum.inverseFiveCardIndices,
        }
        positions = [int(p) for p in inverse[size][option]]
    return sorted(int(hand[p]) - 1 for p in positions)


def _action_of(enum: Any, hand: Any, cards: list[int]) -> int:
    """The original's action index for playing ``cards`` from its hand (its own tables)."""
    if not cards:
        return int(enum.passInd)
    numbers = [int(n) for n in hand]
    p = [numbers.index(card + 1) for card in sorted(cards)]
    tables = {
        2: enum.twoCardIndices,
        3: enum.threeCardIndices,
        4: enum.fourCardIndices,
        5: enum.fiveCardIndices,
    }
    option = p[0] if len(p) == 1 else tables[len(p)][tuple(p)]
    return int(enum.getIndex(int(option), len(p)))


def _decision(game: Any, move: int) -> dict[str, Any]:
    player, state, available = game.getCurrentState()
    return {
        "move": move,
        "seat": int(player) - 1,
        "state": format(sum(1 << int(i) for i in state[0].nonzero()[0]), "x"),
        "available": [int(i) for i in (available[0] == 0).nonzero()[0]],
    }


def _dealt(game: Any, opener: int) -> list[list[int]]:
    hands = [sorted(int(n) - 1 for n in game.currentHands[p]) for p in range(1, 5)]
    hands[opener].insert(0, 0)  # reset has already played 3♦ for its holder
    return hands


def theirs(big2: Any, enum: Any, rng: random.Random) -> dict[str, Any]:
    """One game of the original's own, random among its available actions."""
    import numpy as np

    np.random.seed(rng.getrandbits(31))
    game = big2.big2Game()
    opener = game.handsPlayed[1].player - 1
    record: dict[str, Any] = {"kind": "theirs", "dealt": _dealt(game, opener), "moves": [[opener, [0]]]}
    while True:
        decision = _decision(game, len(record["moves"]))
        record.setdefault("decisions", []).append(decision)
        action = rng.choice(decision["available"])
        seat = decision["seat"]
        record["moves"].append([seat, _cards_of(enum, game.currentHands[seat + 1], action)])
        _reward, done, _info = game.step(action)
        if done:
            return record


def ours(big2: Any, enum: Any, rng: random.Random) -> dict[str, Any]:
    """One deal of this engine, each seat random among the moves legal in both games."""
    import numpy as np
    from bigtwo.engine import Deal, DealCode, Move, Ruleset, deal_from_code

    ruleset = Ruleset.from_mapping(RULESET)
    deal = Deal.start(ruleset, deal_from_code(DealCode(rng.getrandbits(60)), ruleset))
    hands = [sorted(i for i in range(52) if hand >> i & 1) for hand in deal.hands]
    opener = deal.to_act
    deck = np.array([card + 1 for hand in hands for card in hand])
    real_permutation = np.random.permutation
    np.random.permutation = lambda n: deck - 1  # the original deals deck[0:13] to its player 1, …
    try:
        game = big2.big2Game()
    finally:
        np.random.permutation = real_permutation
    deal.do(Move.from_mask(opener, 1))  # the original has played 3♦ alone for its holder
    record: dict[str, Any] = {"kind": "ours", "dealt": hands, "moves": [[opener, [0]]], "decisions": []}
    while not deal.over:
        decision = _decision(game, len(record["moves"]))
        seat = decision["seat"]
        if seat != deal.to_act:
            raise SystemExit(f"the original has player {seat + 1} to act where this engine has seat {deal.to_act}")
        legal = {e & ((1 << 52) - 1) for e in deal.legal_encoded()}
        hand = game.currentHands[seat + 1]
        moves = [_cards_of(enum, hand, a) for a in decision["available"]]
        can_pass = deal.table is not None
        both = [cards for cards in moves if (can_pass if not cards else sum(1 << c for c in cards) in legal)]
        decision["both"] = sorted(_action_of(enum, hand, cards) for cards in both)
        record["decisions"].append(decision)
        cards = rng.choice(both)
        record["moves"].append([seat, cards])
        deal.do(Move.pass_(seat) if not cards else Move.from_mask(seat, sum(1 << c for c in cards)))
        game.step(_action_of(enum, hand, cards))
    return record


def record(source: Path, theirs_games: int, ours_games: int, seed: int) -> dict[str, Any]:
    big2, enum = _load_original(source)
    rng = random.Random(f"ppo-record/{seed}")
    games = [theirs(big2, enum, rng) for _ in range(theirs_games)]
    games += [ours(big2, enum, rng) for _ in range(ours_games)]
    return {
        "about": "the original agent's own state and available actions at every decision of these games, "
        "recorded by python -m bigtwo.tools.ppo_agent.record from henrycharlesworth/big2_PPOalgorithm",
        "source_commit": SOURCE_COMMIT,
        "seed": seed,
        "ruleset": RULESET,
        "action_tables_sha256": tables_digest(
            [
                enum.inverseTwoCardIndices.tolist(),
                enum.inverseThreeCardIndices.tolist(),
                enum.inverseFourCardIndices.tolist(),
                enum.inverseFiveCardIndices.tolist(),
            ]
        ),
        "games": games,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.ppo_agent.record", description=__doc__)
    parser.add_argument("--source", default=None, help="the fetched agent (default .tools/ppo/big2_PPOalgorithm)")
    parser.add_argument("--theirs", type=int, default=4, help="games of the original's own")
    parser.add_argument("--ours", type=int, default=4, help="deals of this engine")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--out", default="-", help="JSON file (- for stdout)")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve() if args.out != "-" else None
    result = record(Path(args.source or source_dir()).resolve(), args.theirs, args.ours, args.seed)
    text = json.dumps(result, separators=(",", ":")) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
