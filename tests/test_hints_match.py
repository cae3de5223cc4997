"""Helps for players (HK's Find, the clock, the plays sort, the readout), seat views and matches."""

from __future__ import annotations

import random

import pytest
from bigtwo.engine import (
    PRESET_NAMES,
    Deal,
    DealCode,
    DealContext,
    DealRecord,
    DealStarted,
    Kind,
    Match,
    Move,
    Ruleset,
    classify,
    deal_from_code,
    explicit_deal,
    fewest_plays,
    hint_cycle,
    name_cards,
    next_hint,
    observe,
    parse_mask,
    preset,
    readout,
    timeout_move,
)
from bigtwo.engine.generate import CARD_MASK

FOUR_HANDS = [
    "3D 4D 5D 6D 7C 9C 9H JD QS KS AH 2C 2D",
    "3C 4C 5C 6C 7D 8D 9D TD JC QD KD AD 2S",
    "3H 4H 5H 6H 7H 8H 9S TH JH QH KH AS 2H",
    "3S 4S 5S 6S 7S 8C 8S TC TS JS QC KC AC",
]


def _deal(rules: Ruleset, hands: list[str] = FOUR_HANDS, context: DealContext | None = None) -> Deal:
    return Deal.start(rules, explicit_deal(hands, rules), context)


def test_timeout_leading_plays_the_opening_card() -> None:
    """HK clock: "the 3 of diamonds when it has to be led"."""
    deal = _deal(preset("classic"))
    assert str(timeout_move(deal)) == "3D"


def test_timeout_following_passes() -> None:
    """HK clock: "If your time runs out you pass"."""
    deal = _deal(preset("classic"))
    deal.do(Move.play(0, "3D"))
    assert timeout_move(deal).is_pass


def test_timeout_leading_plays_lowest_card_when_free() -> None:
    deal = _deal(preset("hong-kong"), context=DealContext(deal_number=2, previous_winner=2))
    assert deal.to_act == 2 and deal.opening_card < 0
    assert str(timeout_move(deal)) == "3H"


def test_timeout_leading_plays_highest_when_next_seat_has_one_card() -> None:
    """HK clock: "your highest when the next player has one card left"."""
    hands = ["3D 5D 9C", "7C", "3C 4C 5C", "3S 4S"]
    rules = preset("hong-kong")
    deal = _deal(rules, hands, DealContext(deal_number=2, previous_winner=0))
    assert str(timeout_move(deal)) == "9C"


def test_find_cycles_five_card_hands_then_triples_then_pairs_when_leading() -> None:
    """HK: Find picks "when you lead, your five-card hands, threes and pairs"."""
    deal = _deal(preset("classic"), context=DealContext(deal_number=1))
    deal.do(Move.play(0, "3D"))
    for seat in (1, 2, 3):
        deal.do(Move.pass_(seat))
    assert deal.leading and deal.to_act == 0
    sizes = [play.size for play in hint_cycle(deal)]
    assert sizes == sorted(sizes, key=lambda size: {5: 0, 3: 1, 2: 2, 1: 3}[size])
    assert sizes[0] == 5
    first = next_hint(deal)
    assert first is not None
    second = next_hint(deal, first.mask)
    assert second is not None and second.mask != first.mask
    last = hint_cycle(deal)[-1]
    assert next_hint(deal, last.mask) == hint_cycle(deal)[0]


def test_find_following_lists_only_beating_plays() -> None:
    deal = _deal(preset("classic"))
    deal.do(Move.play(0, "3D"))
    plays = hint_cycle(deal)
    assert plays and all(play.kind is Kind.SINGLE for play in plays)
    assert [play.key for play in plays] == sorted(play.key for play in plays)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_fewest_plays_covers_the_hand_exactly_with_legal_plays(name: str) -> None:
    rules = preset(name)
    rng = random.Random(7)
    for _ in range(20):
        hand = sum(1 << i for i in rng.sample(range(52), 13))
        split = fewest_plays(hand, rules)
        covered = 0
        for play in split:
            assert covered & play.mask == 0
            covered |= play.mask
            assert classify(play.mask, rules).kind is play.kind
        assert covered == hand


def test_fewest_plays_finds_the_two_straights() -> None:
    """HK: "plays (your hand split into the fewest plays it makes)"."""
    hand = parse_mask("3D 4C 5H 6S 7D 8D 9H TS JD QH 8C JC 2S")
    split = fewest_plays(hand, preset("classic"))
    assert len(split) == 5
    assert [play.size for play in split][:2] == [5, 5]


def test_readout_names_the_selection_and_the_refusal() -> None:
    """WEB: "Pair 9 does not beat Pair K"."""
    hands = ["3D KD KC 4D", "9S 9H 5C", "3C 4C 6C", "3S 4S 6S"]
    deal = _deal(preset("web"), hands)
    deal.do(Move.play(0, "3D"))
    for seat in (1, 2, 3):
        deal.do(Move.pass_(seat))
    deal.do(Move.play(0, "KD KC"))
    line = readout(deal, 1, parse_mask("9S 9H"))
    assert line.name == "Pair 9"
    assert not line.playable
    assert line.reason == "does-not-beat"
    assert line.message == "Pair 9 does not beat Pair K"


def test_ending_now_readout_under_zero_sum() -> None:
    """WEB: the readout shows "13 left · ending now −39"."""
    deal = Deal.start(preset("web"), deal_from_code(DealCode(3), preset("web")))
    seat = (deal.to_act + 1) % 4
    assert readout(deal, seat, 0).ending_now == "13 left · ending now −39"


def test_name_cards_readout_names() -> None:
    rules = preset("classic")
    assert name_cards(parse_mask("9S 9D"), rules) == "Pair 9"
    assert name_cards(parse_mask("5S 6D 7C 8H 9S"), rules) == "Straight to 9♠"
    assert name_cards(parse_mask("KD KC KS 4D 4S"), rules) == "Full house K"
    assert name_cards(parse_mask("3H 6H 9H QH AH"), rules) == "Flush ♥ A-high"
    assert name_cards(parse_mask("7D 7C 7H 7S"), rules).startswith("Four of a kind needs a fifth card")


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_observations_never_hold_another_seats_cards(name: str) -> None:
    rules = preset(name)
    rng = random.Random(name)
    for seed in range(5):
        deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
        while True:
            for seat in range(rules.players):
                view = observe(deal, seat)
                others = 0
                for other in range(rules.players):
                    if other != seat:
                        others |= deal.hands[other]
                assert view.hand & others == 0
                assert view.unseen & view.hand == 0
                for event in view.history:
                    if isinstance(event, DealStarted):
                        assert all(h == 0 for i, h in enumerate(event.hands) if i != seat)
            if deal.over:
                break
            legal = deal.legal_encoded()
            choice = rng.randrange(len(legal) + (0 if deal.leading else 1))
            move = (
                Move.pass_(deal.to_act)
                if choice == len(legal)
                else Move.from_mask(deal.to_act, legal[choice] & CARD_MASK)
            )
            deal.do(move)


def test_match_of_n_deals_with_shared_win() -> None:
    """BETA: "After 4 deals (Short) ... players tied for the lowest total share the win"."""
    rules = Ruleset.from_mapping({"match": "deals:2"})
    match = Match(rules)
    match = match.record(DealRecord(1, 0, (0, 5, 9, 2)))
    assert not match.over
    match = match.record(DealRecord(2, 3, (2, 0, 1, 0)))
    assert match.over
    assert match.totals == (2, 5, 10, 2)
    assert match.winners == (0, 3)
    with pytest.raises(ValueError, match="over"):
        match.record(DealRecord(3, 0, (0, 1, 1, 1)))


def test_zero_sum_match_highest_total_wins_and_target() -> None:
    rules = Ruleset.from_mapping({"preset": "web", "match": "target:30"})
    match = Match(rules).record(DealRecord(1, 1, (-10, 49, -39, 0)))
    assert match.over  # seat 2 has lost 39 >= 30
    assert match.winners == (1,)


def test_target_match_under_penalty() -> None:
    """FULL: "until someone has reached a set total such as 50 penalty points"."""
    rules = Ruleset.from_mapping({"match": "target:50"})
    match = Match(rules).record(DealRecord(1, 0, (0, 39, 20, 1)))
    assert not match.over
    match = match.record(DealRecord(2, 0, (0, 13, 0, 1)))
    assert match.over and match.winners == (0,)


def test_no_scoring_match_counts_deals_won() -> None:
    rules = Ruleset.from_mapping({"preset": "taiwan"})
    match = Match(rules).record(DealRecord(1, 2, (0, 0, 0, 0)))
    assert match.over and match.winners == (2,)


def test_winner_leads_next_deal_and_falls_back_when_seat_is_empty() -> None:
    """HK rule 5: the winner leads the next deal; if the winner has left, the 3 of diamonds leads."""
    rules = preset("hong-kong")
    match = Match(rules).record(DealRecord(1, 2, (3, 5, 0, 1)))
    context = match.next_context()
    assert (context.deal_number, context.previous_winner) == (2, 2)
    deal = _deal(rules, context=context)
    assert deal.to_act == 2 and deal.opening_card < 0
    empty = match.leave(2).next_context()
    deal = _deal(rules, context=empty)
    assert deal.to_act == 0 and deal.opening_card == 0
    assert match.leave(2).take(2).empty_seats == frozenset()
    assert match.leave(2).totals == match.totals  # the seat keeps its points
