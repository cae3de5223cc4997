"""The single-card rules (``single_two_last``, ``next_has_one_card``) and the settlement a deal ends
with, each written once in the engine: verification, move generation, the timed-out move and the
bots agree with one another and with RULES.md's wording, restated here independently.

Positions are random but seeded: hands of every size for the seat to act, the next seat on one card
or not, leading or following a single, under every mix of the two options.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from bigtwo.engine import (
    Deal,
    DealCode,
    DealEnded,
    DealState,
    Kind,
    Move,
    Reason,
    Refusal,
    Ruleset,
    SeatSettlement,
    deal_from_code,
    forced_single,
    observe,
    preset,
    settle,
    tables_for,
    timeout_move,
)
from bigtwo.engine.bots import bot_for
from bigtwo.engine.generate import CARD_MASK

ROOT = Path(__file__).resolve().parents[1]
TWOS = 0b1111 << 48
MIXES = [
    {"single_two_last": two, "next_has_one_card": nxt, "suit_order": order}
    for two in ("allowed", "forbidden")
    for nxt in ("free", "highest-single")
    for order in ("DCHS", "CSHD")
]


def ruleset(mix: dict[str, str]) -> Ruleset:
    return Ruleset.from_mapping({"preset": "classic", **mix})


def random_position(rules: Ruleset, rng: random.Random) -> Deal:
    """Four seats: seat 0 to act with 1-6 cards (often a lone 2), seat 1 (next) on one card half
    the time, the table empty or a single played by seat 3."""
    deck = list(range(52))
    rng.shuffle(deck)
    sizes = [rng.choice((1, 1, 2, 3, 5, 6)), rng.choice((1, 1, 2, 5)), 4, 4]
    if sizes[0] == 1 and rng.random() < 0.5:  # a lone 2 often: single_two_last's case
        two = rng.randrange(48, 52)
        deck.remove(two)
        deck.insert(0, two)
    hands, start = [], 0
    for size in sizes:
        hands.append(sum(1 << card for card in deck[start : start + size]))
        start += size
    table = deck[start] if rng.random() < 0.6 else -1
    tables = tables_for(rules)
    state = DealState(
        hands=tuple(hands),
        to_act=0,
        leader=3 if table >= 0 else 0,
        table_mask=1 << table if table >= 0 else 0,
        table_kind=Kind.SINGLE if table >= 0 else None,
        table_key=tables.strength[table] if table >= 0 else -1,
        last_player=3 if table >= 0 else -1,
        passes=0,
        passed=0,
        played=1 << table if table >= 0 else 0,
        opening_card=-1,
        winner=-1,
        moves_made=5,
        deal_number=1,
        start_sizes=(13, 13, 13, 13),
    )
    return Deal.from_state(rules, state)


def allowed_singles(deal: Deal) -> set[int]:
    """RULES.md, restated: a single beats the table's single (or leads); under ``highest-single``
    with the next seat on one card it is the strongest card held; under ``single_two_last =
    forbidden`` no seat following goes out on a lone 2."""
    rules, seat, hand = deal.ruleset, deal.to_act, deal.hands[deal.to_act]
    strength = tables_for(rules).strength
    cards = [card for card in range(52) if hand >> card & 1]
    table = deal.table
    out = {1 << card for card in cards if table is None or strength[card] > table.key}
    if rules.next_has_one_card.value == "highest-single" and deal.hands[(seat + 1) % 4].bit_count() == 1:
        top = max(cards, key=lambda card: strength[card])
        out &= {1 << top}
    if rules.single_two_last.value == "forbidden" and table is not None and len(cards) == 1:
        out = {mask for mask in out if not mask & TWOS}
    return out


@pytest.mark.parametrize("mix", MIXES, ids=lambda mix: "-".join(mix.values()))
def test_verify_generation_timeout_and_bots_agree_on_singles(mix: dict[str, str]) -> None:
    rules = ruleset(mix)
    rng = random.Random(f"singles {sorted(mix.items())}")
    bots = [bot_for(level) for level in ("beginner", "good", "great")]
    for _ in range(300):
        deal = random_position(rules, rng)
        hand = deal.hands[0]
        expected = allowed_singles(deal)
        accepted = {1 << card for card in range(52) if hand >> card & 1 and deal.can(Move.from_mask(0, 1 << card))}
        generated = {code & CARD_MASK for code in deal.legal_encoded() if (code & CARD_MASK).bit_count() == 1}
        assert accepted == expected and generated == expected, deal.state()
        if deal.table is None:
            move = timeout_move(deal)
            assert deal.can(move)
            forced = forced_single(deal.tables, deal.hands, 0)
            assert move.mask == (forced or 1 << deal.tables.lowest_card_in(hand))
            assert forced == 0 or {forced} == expected
        seen = observe(deal, 0)
        for bot in bots:
            assert deal.can(bot.choose(seen, rules, rng)), bot.level


@pytest.mark.parametrize("rules", [preset("hong-kong-strict"), preset("hong-kong")], ids=lambda r: r.preset)
def test_the_refusals_name_the_single_rules_in_order(rules: Ruleset) -> None:
    """A lone 2 following, next seat on one card: single-two-last is named first (RULES.md order)."""
    hands = (1 << 51, 1 << 3, 0b1111 << 8, 0b1111 << 16)  # seat 0 holds 2S only; seat 1 one card
    key = tables_for(rules).strength[20]
    state = DealState(hands, 0, 3, 1 << 20, Kind.SINGLE, key, 3, 0, 0, 1 << 20, -1, -1, 5, 1, (13,) * 4)
    deal = Deal.from_state(rules, state)
    try:
        deal.verify(Move.from_mask(0, 1 << 51))
    except Refusal as refusal:
        assert rules.single_two_last.value == "forbidden" and refusal.reason is Reason.SINGLE_TWO_LAST
    else:
        assert rules.single_two_last.value == "allowed"


@pytest.mark.parametrize("name", ["classic", "hong-kong", "web", "pusoy-dos"])
def test_deal_ended_holds_its_settlement(name: str) -> None:
    """The settlement a deal ends with is in its DealEnded; a deal resumed from its final state
    (no events) settles the same, and so do the counts alone."""
    rules = preset(name)
    rng = random.Random(name)
    for seed in range(12):
        deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
        while not deal.over:
            deal.do(rng.choice(deal.legal_moves()))
        ended = deal.events[-1]
        assert isinstance(ended, DealEnded) and ended.winner == deal.winner
        twos = [(hand & TWOS).bit_count() for hand in deal.hands]
        assert ended.twos_left == tuple(twos) and ended.cards_left == deal.cards_left()
        assert all(isinstance(line, SeatSettlement) for line in ended.settlement.seats)
        if not ended.by_dragon:
            assert ended.settlement == settle(rules, deal.cards_left(), twos)
        assert ended.scores == deal.scores == ended.settlement.scores
        assert deal.settlement() == Deal.from_state(rules, deal.state()).settlement() == ended.settlement
        again = Deal.replay(rules, deal.events)
        assert again.events == deal.events and hash(again.events[-1]) == hash(ended)


def test_each_rule_is_written_once() -> None:
    """The options are read where their rule lives, and twos left are counted in one place
    (``scoring.twos_in``): other code asks these, never restates them."""
    homes = {
        r"NextHasOneCard\.HIGHEST_SINGLE": {"engine/tables.py", "engine/rules.py", "engine/describe.py"},
        r"SingleTwoLast\.FORBIDDEN": {"engine/tables.py", "engine/rules.py", "engine/describe.py"},
        r"\.highest_single\b": {"engine/singles.py", "engine/deal.py"},
        r"\.single_two_out_refused\b": {"engine/singles.py", "engine/deal.py"},
        r"&\s*(?:TWOS_MASK|TWOS|\(0b1111 << 48\))\)\.bit_count": {"engine/scoring.py"},
        r"settle_with_winner\(": {"engine/scoring.py", "proto/bigtwo/codec/events.py"},
    }
    sources = {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for folder in ("engine", "service", "clients", "proto/bigtwo/codec")
        for path in (ROOT / folder).rglob("*.py")
    }
    for pattern, allowed in homes.items():
        found = {name for name, text in sources.items() if re.search(pattern, text)}
        assert found <= allowed, f"{pattern} restated in {sorted(found - allowed)}"
