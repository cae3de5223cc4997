"""Regenerate the golden replay files: ``python tests/golden/make_golden.py [OUT_DIR]``.

Deterministic: fixed deal codes and a seeded policy (one ``random.Random(seed)`` per file), so the
bytes never change unless the format or the engine does. ``tests/test_replay_golden.py`` re-runs
this (in-process and in two separate processes) and diffs the output against the committed files.
The signed files use ``test-signing-key`` beside this script (a test key, not a secret).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

from bigtwo.engine import Card, Deal, DealCode, Move, Refusal, Ruleset, timeout_move
from bigtwo.engine.replay import ReplayWriter, SeatInfo, dumps

HERE = Path(__file__).resolve().parent
KEY_FILE = HERE / "test-signing-key"


def test_key() -> bytes:
    return KEY_FILE.read_bytes().rstrip()


def _attempt_refusal(writer: ReplayWriter, deal: Deal, rng: random.Random) -> None:
    """Try one move the rules refuse (recorded in the log with its reason)."""
    seat = deal.to_act
    kind = rng.randrange(5)
    try:
        if kind == 0:
            writer.play(Move.play((seat + 1) % deal.players, deal.hand((seat + 1) % deal.players)[:1]))
        elif kind == 1 and deal.leading:
            writer.play(Move.pass_(seat))
        elif kind == 2:
            other = [c for c in range(52) if not deal.hands[seat] >> c & 1]
            writer.play(Move.play(seat, [Card.from_index(rng.choice(other))]))
        elif kind == 3:
            writer.play_text(seat, "1X")
        else:
            hand = deal.hand(seat)
            writer.play(Move.play(seat, rng.sample(hand, min(len(hand), rng.choice((1, 2, 4))))))
    except Refusal:
        return


def play_deal(writer: ReplayWriter, deal: Deal, rng: random.Random, *, refusals: float, timeouts: float) -> None:
    while not deal.over:
        if refusals and rng.random() < refusals:
            _attempt_refusal(writer, deal, rng)
            continue
        if timeouts and rng.random() < timeouts:
            writer.play(timeout_move(deal), timeout=True)
            continue
        moves = deal.legal_moves()
        plays = [m for m in moves if not m.is_pass]
        if plays and (deal.leading or rng.random() < 0.7):
            # prefer small plays: a person's habit, and it makes longer, livelier deals
            plays.sort(key=lambda m: (len(m.cards), m.mask))
            move = plays[min(len(plays) - 1, int(rng.random() ** 2 * len(plays)))]
        else:
            move = moves[-1]
        writer.play(move)


def _match(
    rules: Ruleset,
    seats: list[SeatInfo],
    codes: list[str],
    seed: int,
    *,
    refusals: float = 0.04,
    timeouts: float = 0.0,
    comment: str = "",
    between: Callable[[ReplayWriter, int], None] | None = None,
) -> ReplayWriter:
    writer = ReplayWriter(rules, seats, comment=comment)
    rng = random.Random(seed)
    for index, code in enumerate(codes):
        if writer.match.over:
            break
        deal = writer.start_deal(code)
        play_deal(writer, deal, rng, refusals=refusals, timeouts=timeouts)
        if between:
            between(writer, index)
    return writer


def _seats(*names: str) -> list[SeatInfo]:
    out = []
    for name in names:
        if name.startswith("bot:"):
            _, level, bot_name = name.split(":", 2)
            out.append(SeatInfo(bot_name, "bot", int(level)))
        else:
            out.append(SeatInfo(name))
    return out


CODES = [str(DealCode((seed + 1) * 0x9E3779B97F4A7C15 % (1 << 60))) for seed in range(12)]


def _dragon_hands() -> list[str]:
    dragon = "3C 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2S"
    taken = set(dragon.split())
    rest = [str(Card.from_index(i)) for i in range(52) if str(Card.from_index(i)) not in taken]
    hands = [" ".join(rest[13 * seat : 13 * seat + 13]) for seat in range(3)]
    return [hands[0], hands[1], dragon, hands[2]]


def build_all() -> dict[str, str]:
    key = test_key()
    files: dict[str, str] = {}

    rules = Ruleset.from_mapping({"preset": "classic", "match": "deals:2"})
    w = _match(rules, _seats("Ann", "bot:2:Bea", "Cho", "bot:3:Dev"), CODES[0:2], 1, comment="classic, 4 players")
    files["classic-4p.toml"] = dumps(w.log())

    rules = Ruleset.from_mapping({"preset": "web"})
    w = _match(
        rules,
        _seats("You", "bot:1:West", "bot:1:North", "bot:1:East"),
        CODES[2:4],
        2,
        comment="web: zero-sum scores, open match",
    )
    files["web.toml"] = dumps(w.log())

    def seat_changes(writer: ReplayWriter, index: int) -> None:
        if index == 0:
            writer.leave(2, comment="Cho's phone went to sleep")
        elif index == 1:
            writer.take(2, SeatInfo("Kim", "bot", 2))

    rules = Ruleset.from_mapping({"preset": "hong-kong", "match": "deals:3"})
    w = _match(
        rules,
        _seats("Ann", "Bea", "Cho", "Dev"),
        CODES[4:7],
        3,
        timeouts=0.03,
        between=seat_changes,
        comment="hong-kong: auto-passes, winner leads, a seat left and taken over, timed-out turns",
    )
    files["hong-kong.toml"] = dumps(w.log(key))

    rules = Ruleset.from_mapping({"preset": "hong-kong-strict", "match": "single"})
    w = _match(rules, _seats("Ann", "Bea", "Cho", "Dev"), CODES[7:8], 4)
    files["hong-kong-strict.toml"] = dumps(w.log())

    rules = Ruleset.from_mapping({"preset": "taiwan", "players": 2})
    w = _match(rules, _seats("Lin", "bot:3:Wu"), CODES[8:9], 5, comment="taiwan, 2 players")
    files["taiwan-2p.toml"] = dumps(w.log())

    rules = Ruleset.from_mapping({"preset": "pusoy-dos", "match": "single"})
    w = _match(rules, _seats("Ana", "Ben", "Cora", "Dado"), CODES[9:10], 6)
    files["pusoy-dos.toml"] = dumps(w.log())

    rules = Ruleset.from_mapping({"preset": "classic", "players": 3, "match": "deals:2"})
    w = _match(rules, _seats("Ann", "Bea", "Cho"), CODES[10:12], 7, comment="classic, 3 players: 17 cards each")
    files["classic-3p.toml"] = dumps(w.log())

    rules = Ruleset.from_mapping({"preset": "hong-kong", "match": "deals:2"})
    writer = ReplayWriter(rules, _seats("Ann", "Bea", "Cho", "Dev"), comment="a dragon, then a normal deal")
    writer.start_deal(hands=_dragon_hands(), comment="Cho holds all thirteen ranks")
    deal = writer.start_deal(CODES[3])
    play_deal(writer, deal, random.Random(8), refusals=0.0, timeouts=0.0)
    files["dragon.toml"] = dumps(writer.log(key))

    rules = Ruleset.from_mapping({"preset": "classic", "match": "deals:4"})
    w = _match(
        rules,
        _seats("Ann", "bot:1:Bea", "bot:2:Cho", "bot:3:Dev"),
        CODES[0:4],
        9,
        refusals=0.0,
        comment="a refusal-free match of four deals, signed",
    )
    files["match-4-deals.toml"] = dumps(w.log(key))
    return files


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    out.mkdir(parents=True, exist_ok=True)
    for name, text in sorted(build_all().items()):
        (out / name).write_bytes(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
