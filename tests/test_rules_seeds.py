"""Unit tests of RULES.md, each naming the seed it comes from.

Seed short names (RULES.md): BETA = 000_822985076b1caea3.txt (an app's rules page), FULL =
001_31e00dc183a1faa4.txt (full traditional rules and variants), WEB = 002_d65b15f8f60e72f9.txt
(browser game, house-rule switches, deal codes, zero-sum), HK = 003_ad9faff9602780de.txt (Hong
Kong rules 1-8), TW = 004_bf46197c2b699150.txt (Taiwanese rules, 2 players, no plain flush).
Every test carries the seed and section in its name and a ``SEED = ...`` line in its docstring.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from bigtwo.engine import (
    ALL_CARDS,
    PRESET_NAMES,
    Deal,
    DealCode,
    DealCodeError,
    DealContext,
    DealEnded,
    DragonRevealed,
    LastCard,
    Move,
    Passed,
    Reason,
    Refusal,
    Ruleset,
    RulesetError,
    TrickEnded,
    check_beats,
    classify,
    deal_from_code,
    ending_now,
    explicit_deal,
    parse_cards,
    parse_mask,
    preset,
    settle,
    tables_for,
)

# -- helpers -----------------------------------------------------------------------------------------


def rules(**options: Any) -> Ruleset:
    return Ruleset.from_mapping(options)


CLASSIC = preset("classic")


def kind(cards: str, ruleset: Ruleset = CLASSIC) -> str:
    return classify(cards, ruleset).kind.value


def refusal(fn: Any, *args: Any) -> str:
    """The reason id ``fn(*args)`` is refused with (the test fails if it is accepted)."""
    with pytest.raises(Refusal) as info:
        fn(*args)
    return info.value.reason.value


def kind_refusal(cards: str, ruleset: Ruleset = CLASSIC) -> str:
    return refusal(classify, cards, ruleset)


def beats(table: str, play: str, ruleset: Ruleset = CLASSIC) -> bool:
    """True when ``play`` beats ``table``; False when refused with does-not-beat; other refusals raise."""
    tables = tables_for(ruleset)
    try:
        check_beats(parse_mask(play), classify(table, ruleset), tables)
    except Refusal as exc:
        if exc.reason is Reason.DOES_NOT_BEAT:
            return False
        raise
    return True


def beats_refusal(table: str, play: str, ruleset: Ruleset = CLASSIC) -> str:
    tables = tables_for(ruleset)
    return refusal(check_beats, parse_mask(play), classify(table, ruleset), tables)


def full_hands(*partial: str, size: int = 13) -> list[str]:
    """Complete each partial hand to ``size`` cards with unused cards, highest first (2S, 2H, ...),
    so the filler never holds the deck's lowest cards."""
    used = 0
    for hand in partial:
        used |= parse_mask(hand)
    spare = [card for card in reversed(ALL_CARDS) if not used & card.bit]
    out = []
    for hand in partial:
        cards = hand.split()
        while len(cards) < size:
            cards.append(str(spare.pop(0)))
        out.append(" ".join(cards))
    return out


def start(ruleset: Ruleset, hands: list[str], context: DealContext | None = None) -> Deal:
    return Deal.start(ruleset, explicit_deal(hands, ruleset), context)


def play(deal: Deal, *moves: str) -> Deal:
    """Make each move (``pass`` or cards) for the seat to act; any refusal fails the test."""
    for text in moves:
        deal.do_text(deal.to_act, text)
    return deal


def move_refusal(deal: Deal, text: str, seat: int | None = None) -> str:
    seat = deal.to_act if seat is None else seat
    before = deal.state()
    reason = refusal(deal.do_text, seat, text)
    assert deal.state() == before, "a refused move changes nothing"
    return reason


def position(ruleset: Ruleset, hands: list[str], to_act: int, table: str | None = None, *, passed: int = 0) -> Deal:
    """A mid-deal position (no opening card) built through the state-token API."""
    deal = start(ruleset, hands)
    state = deal.state()
    table_play = classify(table, ruleset) if table else None
    last = (to_act - 1) % ruleset.players
    state = state._replace(
        to_act=to_act,
        leader=last if table_play else to_act,
        opening_card=-1,
        table_mask=table_play.mask if table_play else 0,
        table_kind=table_play.kind if table_play else None,
        table_key=table_play.key if table_play else -1,
        last_player=last if table_play else -1,
        passes=passed.bit_count(),
        passed=passed,
    )
    return Deal.from_state(ruleset, state)


# -- cards and notation -----------------------------------------------------------------------------


def test_beta_ranking_card_order_ranks_then_suits() -> None:
    """SEED = "BETA: Ranking" — 2 highest down to 3; suits ♠ > ♥ > ♣ > ♦; 3♦ lowest, 2♠ highest."""
    order = [f"{rank}{suit}" for rank in "3456789TJQKA2" for suit in "DCHS"]
    keys = [classify(card, CLASSIC).key for card in order]
    assert keys == sorted(keys) and len(set(keys)) == 52
    assert beats("AS", "2D") and not beats("2D", "AS")
    assert beats("7C", "7H") and not beats("7H", "7C")  # FULL: "A 7♥ beats a 7♣"
    assert beats("7S", "8D")  # FULL: "any 8 beats any 7"
    assert tables_for(CLASSIC).lowest_card == parse_cards("3D")[0].index


@pytest.mark.parametrize(
    ("suit_order", "low", "high"), [("DCHS", "3D", "2S"), ("CDHS", "3C", "2S"), ("CSHD", "3C", "2D")]
)
def test_full_variants_suit_orders(suit_order: str, low: str, high: str) -> None:
    """SEED = "FULL: Variants - other suit orders" (bridge order in Taiwan and Hong Kong, Pusoy Dos CSHD)."""
    ruleset = rules(suit_order=suit_order)
    keys = {card: classify(card, ruleset).key for card in (f"{r}{s}" for r in "3456789TJQKA2" for s in "DCHS")}
    assert min(keys, key=keys.__getitem__) == low
    assert max(keys, key=keys.__getitem__) == high


def test_tw_card_order_bridge_suits() -> None:
    """SEED = "TW: Step 2" — ♠ > ♥ > ♦ > ♣, so 3♣ is the weakest card."""
    taiwan = preset("taiwan")
    assert beats("3C", "3D", taiwan) and beats("3D", "3H", taiwan) and beats("3H", "3S", taiwan)


def test_pusoy_dos_diamonds_highest() -> None:
    """SEED = "FULL: Variants - Pusoy Dos (♦ ♥ ♠ ♣, diamonds highest)"."""
    pusoy = preset("pusoy-dos")
    assert beats("2S", "2D", pusoy) and not beats("2D", "2S", pusoy)
    assert beats("3C", "3S", pusoy)


def test_rules_card_notation_ten_and_suit_symbols() -> None:
    """SEED = "RULES.md: Cards and notation" (10 for T, ♦ ♣ ♥ ♠ either side of the rank)."""
    assert parse_mask("10S") == parse_mask("TS") == parse_mask("T♠") == parse_mask("♠T") == parse_mask("ts")
    assert parse_mask("3♦ 3♠") == parse_mask("3D 3S")


# -- singles, pairs, triples ------------------------------------------------------------------------


def test_full_card_order_pair_by_higher_suit() -> None:
    """SEED = "FULL: What you can play" — for pairs compare the higher-suited card: 9♠ 9♦ beats 9♥ 9♣."""
    assert beats("9H 9C", "9S 9D")
    assert not beats("9S 9D", "9H 9C")
    assert beats("9S 9D", "TD TC")  # rank first


def test_beta_hand_rankings_triple_by_rank() -> None:
    """SEED = "BETA: Hand rankings" — Triple: 3 cards of one rank, compared by rank."""
    assert kind("8D 8C 8S") == "triple"
    assert beats("8D 8C 8S", "9D 9C 9H") and not beats("9D 9C 9H", "8D 8C 8S")


def test_beta_hand_rankings_four_cards_alone_are_no_play() -> None:
    """SEED = "BETA: Hand rankings" — four cards on their own aren't a combination."""
    assert kind_refusal("7D 7C 7H 7S") == "not-a-combination"
    assert kind_refusal("7D 7C 8H 8S") == "not-a-combination"
    assert kind_refusal("3D 4C 5H 6S 7D 8D") == "not-a-combination"


def test_tw_step5_no_lone_triple_refusal() -> None:
    """SEED = "TW: Step 10 table - some tables require a triple to be part of a five-card hand"."""
    strict = rules(triples="only-in-full-house")
    assert kind_refusal("8D 8C 8S", strict) == "no-lone-triple"
    assert kind("8D 8C 8S 4D 4C", strict) == "full-house"
    assert kind("8D 8C", strict) == "pair"


# -- five-card hands --------------------------------------------------------------------------------


def test_full_four_of_a_kind_needs_a_kicker_and_compares_by_the_four() -> None:
    """SEED = "FULL: Five-card hands 4" and "TW: Step 8" — any fifth card; the kicker takes no part."""
    assert kind("7D 7C 7H 7S QD") == "four-of-a-kind"
    assert kind("7D 7C 7H 7S 2S") == "four-of-a-kind"
    assert beats("7D 7C 7H 7S 2S", "8D 8C 8H 8S 3D")
    assert not beats("8D 8C 8H 8S 3D", "7D 7C 7H 7S 2S")


def test_full_full_house_by_the_triple() -> None:
    """SEED = "FULL: Five-card hands 3" — J J J 4 4; the higher triple wins, the pair is ignored."""
    assert kind("JD JC JS 4D 4C") == "full-house"
    assert beats("JD JC JS 2D 2C", "QD QC QH 3D 3C")


def test_hk_five_card_classes_any_higher_class_beats_any_lower() -> None:
    """SEED = "HK: Five-card hands - the lowest flush beats the highest straight" (and BETA's list)."""
    ladder = [
        "TD JC QH KS AS",  # highest straight (classic)
        "3D 4D 5D 6D 8D",  # lowest flush
        "3D 3C 3H 4D 4C",  # lowest full house
        "3D 3C 3H 3S 4D",  # lowest four of a kind
        "3D 4D 5D 6D 7D",  # a low straight flush (34567, not the lowest rung)
    ]
    kinds = ["straight", "flush", "full-house", "four-of-a-kind", "straight-flush"]
    for hand, expected in zip(ladder, kinds, strict=True):
        assert kind(hand) == expected
    for low, high in itertools.combinations(ladder, 2):
        if parse_mask(low) & parse_mask(high):
            continue
        assert beats(low, high), (low, high)


def test_web_no_bombs_sizes_never_beat_each_other() -> None:
    """SEED = "WEB: Big Two hands - no bombs" and "TW: Step 4 - same size"."""
    assert beats_refusal("3D", "9D 9C") == "wrong-size"
    assert beats_refusal("3D", "4D 5D 6D 7D 8D") == "wrong-size"
    assert beats_refusal("5D 5C", "6D 6C 6H") == "wrong-size"
    assert beats_refusal("3C 4C 5H 6S 7D", "3D") == "wrong-size"


# -- straights per ladder ---------------------------------------------------------------------------


def test_beta_straights_ace_two_low_ladder() -> None:
    """SEED = "BETA: Hand rankings - A,2,3,4,5 lowest, 10-J-Q-K-A highest" (FULL straights the same)."""
    ladder = ["AD 2C 3H 4S 5D", "2C 3H 4S 5D 6C", "3H 4S 5D 6C 7H", "9D TC JH QS KD", "TC JH QS KD AH"]
    for hand in ladder:
        assert kind(hand) == "straight"
    for low, high in itertools.pairwise(ladder):
        assert beats(low, high) and not beats(high, low)


def test_beta_straight_tie_break_top_card_of_a2345_is_the_five() -> None:
    """SEED = "BETA: In a straight ... A,2,3,4,5 is the lowest, with the 5 as its highest card"."""
    # Same rung; the 5 decides (5S > 5H), whatever the 2s and Aces are.
    assert beats("AS 2S 3H 4S 5H", "AD 2D 3C 4D 5S")
    assert not beats("AD 2D 3C 4D 5S", "AS 2S 3H 4S 5H")


def test_full_example_straights_tie_on_top_suit() -> None:
    """SEED = "FULL: Example (straights)" — Ben 5♥6♣7♦8♠9♥, Carla 5♠6♦7♣8♥9♠ beats it, Dan's 6-10 beats both."""
    ben, carla, dan = "5H 6C 7D 8S 9H", "5S 6D 7C 8H 9S", "6C 7D 8C 9H TD"
    assert beats(ben, carla)
    assert beats(carla, dan)
    assert beats("5H 6S 7D 8S 9H", dan)


@pytest.mark.parametrize("wrap", ["JD QC KH AS 2D", "QD KC AH 2S 3D", "KD AC 2H 3S 4D"])
@pytest.mark.parametrize("ladder", ["ace-two-low", "twos-high", "taiwan", "no-twos"])
def test_beta_full_wrap_around_is_never_a_straight(wrap: str, ladder: str) -> None:
    """SEED = "BETA: K,A,2,3,4 isn't a straight", "FULL: J-Q-K-A-2 is not a straight", "WEB", "TW Step 7"."""
    assert kind_refusal(wrap, rules(straights=ladder)) == "not-a-combination"


def test_web_hk_twos_high_ladder() -> None:
    """SEED = "WEB: Can a straight contain a 2?" and "HK rule 1" — A2345 highest, 23456 next, tie on the 2."""
    web = preset("web")
    order = ["3H 4S 5D 6C 7H", "TC JH QS KD AH", "2C 3H 4S 5D 6C", "AD 2C 3H 4S 5D"]
    for low, high in itertools.pairwise(order):
        assert beats(low, high, web) and not beats(high, low, web)
    # Decision: the tie-break card of A2345 and 23456 is the 2.
    assert beats("AS 2H 3S 4S 5S", "AD 2S 3D 4D 5D", web)
    assert beats("2H 3S 4S 5S 6S", "2S 3D 4D 5D 6D", preset("hong-kong"))


def test_tw_taiwan_ladder() -> None:
    """SEED = "TW: Step 7" — A2345 lowest (tie on the 5), 23456 highest (tie on the 2)."""
    taiwan = preset("taiwan")
    order = ["AD 2C 3H 4S 5D", "3H 4S 5D 6C 7H", "TC JH QS KD AH", "2C 3H 4S 5D 6C"]
    for low, high in itertools.pairwise(order):
        assert beats(low, high, taiwan) and not beats(high, low, taiwan)
    assert beats("AS 2S 3S 4S 5D", "AD 2D 3D 4D 5H", taiwan)  # the 5 decides (TW: ♥ > ♦)
    assert not beats("AD 2D 3D 4D 5H", "AS 2S 3S 4S 5D", taiwan)
    assert beats("2D 3S 4S 5S 6S", "2H 3D 4D 5D 6D", taiwan)  # the 2 decides
    assert not beats("2H 3D 4D 5D 6D", "2D 3S 4S 5S 6S", taiwan)


@pytest.mark.parametrize("hand", ["AD 2C 3H 4S 5D", "2C 3H 4S 5D 6C"])
def test_web_no_twos_in_straights_refusal(hand: str) -> None:
    """SEED = "WEB: Set 2s in straights to Banned ... 'House rule: no 2 in straights'"."""
    no_twos = rules(preset="web", straights="no-twos")
    assert kind_refusal(hand, no_twos) == "no-two-in-straights"
    assert kind("3H 4S 5D 6C 7H", no_twos) == "straight"
    assert kind("TC JH QS KD AH", no_twos) == "straight"


def test_web_no_twos_five_of_a_suit_stays_a_flush() -> None:
    """SEED = "WEB: 2s in straights banned" + RULES.md Straights — five of one suit remain a flush."""
    no_twos = rules(straights="no-twos")
    assert kind("AD 2D 3D 4D 5D", no_twos) == "flush"
    assert kind("AD 2D 3D 4D 5D") == "straight-flush"


def test_full_straight_flush_by_ladder_then_suit() -> None:
    """SEED = "FULL: Five-card hands 5 - the best hand of all is 10-J-Q-K-A in ♠"."""
    best = "TS JS QS KS AS"
    assert kind(best) == "straight-flush"
    assert beats("TH JH QH KH AH", best)  # same rung: the suit decides
    assert beats("9S TS JS QS KS", "TD JD QD KD AD")  # a higher rung beats any suit
    assert not beats(best, "TH JH QH KH AH")
    assert beats("AS 2S 3S 4S 5S", "2D 3D 4D 5D 6D")  # ace-two-low: 23456 above A2345 even in a lower suit


def test_rules_explicit_ladder() -> None:
    """SEED = "RULES.md Straights - an explicit ladder (sequences low to high, each with its tie-break rank)"."""
    ladder = rules(straights=["34567/7", "A2345/A"])
    assert beats("3H 4S 5D 6C 7H", "AD 2C 3D 4D 5D", ladder)
    assert beats("AD 2C 3H 4S 5S", "AH 2D 3D 4D 5D", ladder)  # the Ace decides (AH > AD)
    assert kind_refusal("4H 5S 6D 7C 8H", ladder) == "not-a-combination"


# -- flushes ----------------------------------------------------------------------------------------


def test_full_example_flushes_suit_first() -> None:
    """SEED = "FULL: Example (flushes)" — hearts beat a K-high club flush; low spades beat hearts."""
    hearts = "3H 6H 9H QH AH"
    assert not beats(hearts, "5C 7C 9C JC KC")
    assert beats(hearts, "2S 4S 5S 7S 8S")


def test_beta_flush_same_suit_by_highest_card_then_next() -> None:
    """SEED = "BETA: Flush - compared by the suit, then by the highest card, then the next"."""
    assert beats("3H 6H 9H QH AH", "4H 6H 9H KH AH")  # A = A, then K > Q
    assert beats("3D 5D 8D QD AD", "4D 6D 8D QD AD")  # A, Q, 8 equal, then 6 > 5
    assert not beats("4D 6D 8D QD AD", "3D 5D 8D QD AD")


def test_hk_rule2_flush_rank_first() -> None:
    """SEED = "HK rule 2" — the highest card decides, then the next; the suit only on all five ranks equal."""
    hk = preset("hong-kong")
    assert beats("3S 6S 9S QS KS", "3C 6C 9C QC AC", hk)  # A-high clubs beat K-high spades
    assert not beats("3C 6C 9C QC AC", "3S 6S 9S QS KS", hk)
    assert beats("3C 6C 9C QC AC", "4D 6D 9D QD AD", hk)  # next-highest cards... down to the lowest
    assert beats("3D 6D 9D QD AD", "3S 6S 9S QS AS", hk)  # all five ranks match: the suit of the top card
    assert not beats("3S 6S 9S QS AS", "3D 6D 9D QD AD", hk)
    # Ranks count with the 2 highest.
    assert beats("3D 6D 9D QD AD", "4H 5H 6H 7H 2H", hk)


def test_tw_no_plain_flush() -> None:
    """SEED = "TW: Step 6 - there is no plain flush here"."""
    taiwan = preset("taiwan")
    assert kind_refusal("3S 6S 9S QS KS", taiwan) == "no-flush"
    assert kind("3S 4S 5S 6S 7S", taiwan) == "straight-flush"
    assert beats_refusal("3D 4C 5H 6S 7D", "3S 6S 9S QS KS", taiwan) == "no-flush"


# -- refusals and their order -----------------------------------------------------------------------


def test_rules_refusal_reason_ids_in_their_order() -> None:
    """SEED = "RULES.md Refusals" — the order in which reasons are named."""
    assert [reason.value for reason in Reason] == [
        "game-over",
        "not-your-turn",
        "cannot-pass-leading",
        "bad-card",
        "not-in-hand",
        "must-include-opening-card",
        "wrong-size",
        "not-a-combination",
        "no-two-in-straights",
        "no-flush",
        "no-lone-triple",
        "does-not-beat",
        "single-two-last",
        "must-play-highest-single",
    ]


def test_web_how_to_play_2_wrong_size_before_the_cards() -> None:
    """SEED = "WEB: How to play 2 - 'Play 5 cards — you picked 4' comes before any judgement of the cards"."""
    assert beats_refusal("3D 4C 5H 6S 7D", "9D 9C 9H 9S") == "wrong-size"  # four alone: wrong size first
    assert beats_refusal("3D 4C 5H 6S 7D", "9D JC KH") == "wrong-size"
    assert beats_refusal("9D 9C", "TD JC KH") == "wrong-size"
    assert beats_refusal("3D 4C 5H 6S 7D", "8D 9C JH QS AD") == "not-a-combination"
    assert beats_refusal("KD KC", "9S 9H") == "does-not-beat"  # WEB: "Pair 9 does not beat Pair K"


def test_web_empty_play_is_not_a_combination() -> None:
    """SEED = "RULES.md Refusals - an empty play is not-a-combination" (WEB: no cards picked)."""
    assert kind_refusal("") == "not-a-combination"
    assert beats_refusal("3D 4C 5H 6S 7D", "") == "not-a-combination"
    deal = position(CLASSIC, full_hands("3D", "4D", "5D", "6D"), 1, "3D")
    assert refusal(deal.verify, Move(1, (), False)) == "not-a-combination"


def test_web_refusal_order_in_a_game() -> None:
    """SEED = "WEB: How to play 2" — each refusal named in RULES.md's order, the state unchanged."""
    deal = start(CLASSIC, full_hands("3D 3S 4C", "5D 5C 6H", "7D 8C 9H", "TD TC JH"))
    assert move_refusal(deal, "pass", seat=1) == "not-your-turn"  # not-your-turn before cannot-pass-leading
    assert move_refusal(deal, "ZZ", seat=1) == "not-your-turn"  # ... and before bad-card
    assert move_refusal(deal, "pass") == "cannot-pass-leading"
    assert move_refusal(deal, "3D ZZ") == "bad-card"  # bad-card before not-in-hand
    assert move_refusal(deal, "3D 5D") == "not-in-hand"
    assert move_refusal(deal, "5D") == "not-in-hand"  # before must-include-opening-card
    assert move_refusal(deal, "3D 3D") == "not-in-hand"  # a repeated card
    assert move_refusal(deal, "3S 4C") == "must-include-opening-card"  # before not-a-combination
    assert move_refusal(deal, "3D 4C") == "not-a-combination"
    play(deal, "3D 3S")
    assert move_refusal(deal, "5D 5C 6H") == "wrong-size"
    assert move_refusal(deal, "5D 6H") == "not-a-combination"
    play(deal, "5D 5C")
    assert move_refusal(deal, "pass", seat=1) == "not-your-turn"


def test_beta_deal_ends_game_over_before_every_other_reason() -> None:
    """SEED = "BETA: Play 5 - the deal ends the moment a player plays their last card; nobody beats it"."""
    deal = start(CLASSIC, ["3D 4D", "5D 6D", "7D 8D", "9D 2S"])
    play(deal, "3D", "5D", "7D", "9D", "pass", "pass", "pass", "2S")
    assert deal.over and deal.winner == 3
    assert move_refusal(deal, "4D", seat=0) == "game-over"
    assert move_refusal(deal, "pass", seat=2) == "game-over"
    assert move_refusal(deal, "ZZ", seat=1) == "game-over"
    assert isinstance(deal.events[-1], DealEnded)
    assert deal.legal_moves() == []


# -- opening, passing, tricks -----------------------------------------------------------------------


def test_beta_play_1_three_of_diamonds_leads_and_must_be_played() -> None:
    """SEED = "BETA: Play 1 - the 3♦ leads; that first play must include it, alone or in a combination"."""
    hands = full_hands("4C", "5H", "3D 3S 6D", "7C")
    deal = start(CLASSIC, hands)
    assert deal.to_act == deal.leader == 2
    assert move_refusal(deal, "6D") == "must-include-opening-card"
    assert move_refusal(deal, "3S") == "must-include-opening-card"
    assert all(parse_mask("3D") & move.mask for move in deal.legal_moves())
    play(deal, "3D 3S")
    assert deal.to_act == 3


def test_tw_step3_three_of_clubs_opens() -> None:
    """SEED = "TW: Step 3 - the player holding the 3♣ opens, and must play it"."""
    deal = start(preset("taiwan"), full_hands("3D", "3C 4C", "5C", "6C"))
    assert deal.to_act == 1
    assert move_refusal(deal, "4C") == "must-include-opening-card"
    play(deal, "3C")


def test_web_cannot_pass_while_leading() -> None:
    """SEED = "WEB: How to play 2 - you cannot pass while leading" (BETA Play 4, TW Step 4)."""
    deal = start(CLASSIC, full_hands("3D", "4D", "5D", "6D"))
    assert move_refusal(deal, "pass") == "cannot-pass-leading"
    assert all(not move.is_pass for move in deal.legal_moves())
    play(deal, "3D", "pass", "pass", "pass")
    assert deal.table is None and deal.to_act == 0
    assert move_refusal(deal, "pass") == "cannot-pass-leading"


FULL_ROUND_HANDS = full_hands(
    "3D 3S KC KS 5D",  # Anna, seat 0
    "6C 6H 7S",  # Ben, seat 1
    "2D 2H 4C 9D",  # Carla, seat 2
    "TD TC 8H",  # Dan, seat 3
)
FULL_ROUND = ["3D 3S", "6C 6H", "pass", "TD TC", "KC KS", "pass", "2D 2H", "pass", "pass", "pass"]


def test_full_example_round_of_play_trick_ends_after_three_passes() -> None:
    """SEED = "FULL: Example (a round of play)" — Carla passes, plays 2♦ 2♥ after all, three passes, she leads."""
    deal = start(CLASSIC, FULL_ROUND_HANDS)
    play(deal, *FULL_ROUND[:-1])
    assert deal.table is not None and deal.to_act == 1  # two passes: the trick goes on
    events = play(deal, FULL_ROUND[-1]).events
    assert isinstance(events[-1], TrickEnded) and events[-1].winner == 2
    assert deal.table is None and deal.leader == deal.to_act == 2
    play(deal, "4C")  # "she chooses a single 4♣"
    assert deal.to_act == 3


@pytest.mark.parametrize(("players", "passes"), [(4, 3), (3, 2), (2, 1)])
def test_rules_trick_ends_after_every_other_seat_passes(players: int, passes: int) -> None:
    """SEED = "RULES.md Decision: a trick ends after n-1 passes" (BETA Play 4, TW Step 9: one pass with 2)."""
    ruleset = rules(players=players)
    hands = ["3D 9S", "4D 9H", "5D 9C", "6D 9D"][:players]
    deal = start(ruleset, hands)
    play(deal, "3D", *["pass"] * (passes - 1))
    assert deal.table is not None
    play(deal, "pass")
    assert deal.table is None and deal.to_act == deal.leader == 0


def test_beta_play_3_passing_does_not_stop_you() -> None:
    """SEED = "BETA: Play 3 - a player who passed can still play later in the same trick" (HK rule 6)."""
    deal = start(CLASSIC, FULL_ROUND_HANDS)
    play(deal, *FULL_ROUND[:6])
    assert deal.to_act == 2
    play(deal, "2D 2H")  # Carla passed earlier in this trick


def test_full_indonesia_passed_is_out_until_the_trick_ends() -> None:
    """SEED = "FULL: Variants - Passed is out (common in Indonesia)"."""
    indonesia = rules(after_pass="out-until-trick-ends")
    deal = start(indonesia, FULL_ROUND_HANDS)
    play(deal, *FULL_ROUND[:5])  # ... Carla passed; Anna plays K♣ K♠
    play(deal, "pass")  # Ben passes
    assert deal.to_act == 3, "Carla passed earlier, so she is skipped"
    assert move_refusal(deal, "2D 2H", seat=2) == "not-your-turn"
    play(deal, "pass")  # Dan: every seat but Anna is out
    assert deal.table is None and deal.leader == deal.to_act == 0
    play(deal, "5D")
    assert deal.to_act == 1, "a new trick: everyone is back in"


def test_beta_play_5_deal_ends_the_instant_a_seat_goes_out() -> None:
    """SEED = "BETA: Play 5" and "FULL: End of a hand" — mid-trick, nobody answers the last play."""
    deal = start(CLASSIC, ["3D 2S", "4D 9S", "5D 9H", "6D 9C"])
    play(deal, "3D", "4D", "5D", "6D")
    events = play(deal, "2S").events
    assert deal.over and deal.winner == 0
    assert isinstance(events[-1], DealEnded)
    assert deal.cards_left() == (0, 1, 1, 1)
    assert deal.scores == (0, 1, 1, 1)


def test_full_last_card_event() -> None:
    """SEED = "FULL: Variants - Last card" and WEB's last-card marker: an event when a seat is down to one card."""
    deal = start(CLASSIC, ["3D 4D", "5D 6D 7D", "8D 9D TD", "JD QD KD"])
    events = play(deal, "3D").events
    assert any(isinstance(event, LastCard) and event.seat == 0 for event in events)


# -- winner leads (HK rule 5) -----------------------------------------------------------------------


def test_hk_rule5_first_deal_led_by_the_three_of_diamonds() -> None:
    """SEED = "HK rule 5 - the first deal is led by whoever holds the 3♦, and it must be played"."""
    deal = start(preset("hong-kong"), full_hands("4D", "5D", "3D", "6D"), DealContext(deal_number=1))
    assert deal.to_act == 2
    assert move_refusal(deal, str(deal.hand(2)[-1])) == "must-include-opening-card"


def test_hk_rule5_winner_leads_with_anything() -> None:
    """SEED = "HK rule 5 - after that, the winner of each deal leads the next, with anything" (FULL, WEB)."""
    hands = full_hands("3D", "4D 9C", "5D", "6D")
    deal = start(preset("hong-kong"), hands, DealContext(deal_number=2, previous_winner=1))
    assert deal.to_act == deal.leader == 1
    play(deal, "9C")  # no 3♦ required
    classic_deal = start(CLASSIC, hands, DealContext(deal_number=2, previous_winner=1))
    assert classic_deal.to_act == 0, "lowest-card-every-deal ignores the last winner"


def test_hk_rule5_empty_winner_seat_falls_back_to_the_lowest_card() -> None:
    """SEED = "HK rule 5 - if the winner has left the table, whoever holds the 3♦ leads, and must play it"."""
    hands = full_hands("4D", "5D 9C", "3D", "6D")
    context = DealContext(deal_number=2, previous_winner=1, empty_seats=frozenset({1}))
    deal = start(preset("hong-kong"), hands, context)
    assert deal.to_act == deal.leader == 2
    assert move_refusal(deal, str(deal.hand(2)[-1])) == "must-include-opening-card"
    play(deal, "3D")


# -- HK rule 4: no going out on a single 2 ------------------------------------------------------------


SINGLE_TWO_HANDS = ["3D 9C", "4D 2S", "6D 7D 8D", "TD JD QD"]
SINGLE_TWO_MOVES = ["3D", "4D", "8D", "QD", "pass"]  # seat 1 is left with 2♠ and may beat Q♦ with it


def test_hk_rule4_cannot_go_out_on_a_single_two() -> None:
    """SEED = "HK rule 4 - you can't go out on a single 2" (hong-kong-strict)."""
    deal = start(preset("hong-kong-strict"), SINGLE_TWO_HANDS)
    play(deal, *SINGLE_TWO_MOVES)
    assert deal.to_act == 1 and deal.hands[1] == parse_mask("2S")
    assert move_refusal(deal, "2S") == "single-two-last"
    assert [str(move) for move in deal.legal_moves()] == ["pass"]


def test_hk_rule4_house_rule_lets_a_single_two_go_out() -> None:
    """SEED = "HK: a new table plays ... you may go out on any card, a single 2 included (rule 4)"."""
    deal = start(preset("hong-kong"), SINGLE_TWO_HANDS)
    play(deal, *SINGLE_TWO_MOVES, "2S")
    assert deal.over and deal.winner == 1


def test_hk_rule4_leading_a_lone_two_is_fine() -> None:
    """SEED = "HK rule 4 - if it is your lead and a single 2 is all you hold, you may play it"."""
    deal = start(preset("hong-kong-strict"), ["3D 9C", "KS 2S", "6D 7D 8D", "TD JD QD"])
    play(deal, "3D", "KS", "pass", "pass", "pass")
    assert deal.table is None and deal.to_act == 1
    play(deal, "2S")
    assert deal.over and deal.winner == 1


def test_hk_rule4_pair_of_twos_or_two_in_a_five_is_fine() -> None:
    """SEED = "HK rule 4 - a pair of 2s, or a 2 inside a five-card hand, is fine"."""
    deal = start(preset("hong-kong-strict"), ["3D 3C 9C", "2S 2H", "6D 7D 8D", "TD JD QD"])
    play(deal, "3D 3C", "2S 2H")
    assert deal.over and deal.winner == 1
    deal = start(preset("hong-kong-strict"), ["3D 4D 5D 6D 7C 9S", "2S 3S 4S 5S 6H", "8D 9D TD JD QD", "KD AD"])
    play(deal, "3D 4D 5D 6D 7C", "2S 3S 4S 5S 6H")  # twos-high: 23456 beats 34567
    assert deal.over and deal.winner == 1


# -- HK rule 7: highest single when the next seat holds one card -------------------------------------


def test_hk_rule7_single_must_be_your_highest() -> None:
    """SEED = "HK rule 7 - when the player after you has one card left and you play a single, it must be your
    highest"."""
    hk = preset("hong-kong")
    hands = ["3D 4D", "3C 5S KD", "6D 9D", "QS"]
    deal = position(hk, hands, 2, "5C")
    assert move_refusal(deal, "6D") == "must-play-highest-single"
    assert deal.can(Move.play(2, "9D")) and deal.can(Move.pass_(2))
    assert {str(move) for move in deal.legal_moves()} == {"9D", "pass"}
    free = position(CLASSIC, hands, 2, "5C")
    assert free.can(Move.play(2, "6D"))
    # RULES.md order: does-not-beat is named before must-play-highest-single.
    assert move_refusal(position(hk, hands, 2, "7C"), "6D") == "does-not-beat"


def test_hk_rule7_pair_or_more_is_still_free() -> None:
    """SEED = "HK rule 7 - you can still pass, or play a pair or more"."""
    deal = position(preset("hong-kong"), ["3D 4D", "3C 5S KD", "6D 6C 9D", "QS"], 2)
    assert deal.can(Move.play(2, "6D 6C"))
    assert not deal.can(Move.play(2, "6D"))
    assert deal.can(Move.play(2, "9D"))


def test_hk_rule7_next_seat_counts_even_after_passing() -> None:
    """SEED = "HK rule 7" + RULES.md Decision — 'the player after you' is the next seat, passed or not."""
    indonesia_hk = rules(preset="hong-kong", after_pass="out-until-trick-ends")
    deal = position(indonesia_hk, ["3D 4D", "3C 5S KD", "6D 9D", "QS"], 2, "5C", passed=0b1000)
    assert move_refusal(deal, "6D") == "must-play-highest-single"


# -- HK rule 3: dragon --------------------------------------------------------------------------------


def _suit(suit: str) -> str:
    return " ".join(f"{rank}{suit}" for rank in "3456789TJQKA2")


def test_hk_rule3_dragon_wins_before_any_play() -> None:
    """SEED = "HK rule 3 - a dragon ... wins the deal at once; the other three score 39 each"."""
    dragon = "3C 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2D"
    rest = [card for card in (str(c) for c in ALL_CARDS) if card not in dragon.split()]
    hands = [" ".join(rest[0:13]), " ".join(rest[13:26]), dragon, " ".join(rest[26:39])]
    deal = start(preset("hong-kong"), hands)
    assert deal.over and deal.winner == 2
    assert deal.scores == (39, 39, 0, 39)
    assert any(isinstance(event, DragonRevealed) and event.seat == 2 for event in deal.events)
    assert deal.legal_moves() == []
    assert not start(CLASSIC, hands).over, "dragon is off under classic"


def test_hk_rule3_two_dragons_the_two_of_spades_wins() -> None:
    """SEED = "HK rule 3 - if more than one player is dealt a dragon, the one holding the 2 of spades wins"."""
    deal = start(preset("hong-kong"), [_suit("D"), _suit("H"), _suit("C"), _suit("S")])
    assert deal.over and deal.winner == 3


@pytest.mark.parametrize(("suit_order", "winner"), [("DCHS", 1), ("CSHD", 0)])
def test_hk_rule3_decision_no_dragon_holds_the_two_of_spades(suit_order: str, winner: int) -> None:
    """SEED = "HK rule 3" + RULES.md Decision — else the dragon holding the highest 2 under the suit order."""
    clubs, spades = _suit("C").split(), _suit("S").split()
    seat2 = " ".join(clubs[:6] + spades[:7])
    seat3 = " ".join(clubs[6:] + spades[7:])
    deal = start(rules(preset="hong-kong", suit_order=suit_order), [_suit("D"), _suit("H"), seat2, seat3])
    assert deal.over and deal.winner == winner


# -- HK: auto-pass ------------------------------------------------------------------------------------


def test_hk_auto_pass_when_no_unplayed_card_can_beat() -> None:
    """SEED = "HK: 3. Everyone passes - when the cards already played show nobody can beat a play, everyone passes"."""
    hands = ["3D 4D 9S", "2S 5D 6D", "7D 8D 9D", "TD JD QD"]
    deal = start(preset("hong-kong"), hands)
    events = play(deal, "3D", "2S").events
    automatic = [event for event in events if isinstance(event, Passed) and event.automatic]
    assert {event.seat for event in automatic} == {2, 3, 0}
    assert deal.table is None and deal.to_act == deal.leader == 1
    assert deal.moves_made == 2, "automatic passes are not moves"
    classic_deal = play(start(CLASSIC, hands), "3D", "2S")
    assert classic_deal.table is not None and classic_deal.to_act == 2


def test_hk_auto_pass_decision_counts_unseen_cards() -> None:
    """SEED = "HK: auto-pass" + RULES.md Decision — unseen and undealt cards count: 2♥ is beatable while 2♠ is
    unplayed."""
    deal = start(preset("hong-kong"), ["3D 4D 9S", "2H 5D 6D", "7D 8D 9D", "TD JD QD"])
    play(deal, "3D", "2H")
    assert deal.table is not None and deal.to_act == 2


# -- scoring ------------------------------------------------------------------------------------------


def test_full_scoring_example_tiered() -> None:
    """SEED = "FULL: Scoring example - Ben 3 cards (3), Carla 10 (20), Dan 13 (39)" (BETA, WEB, HK)."""
    assert settle(CLASSIC, [0, 3, 10, 13]).scores == (0, 3, 20, 39)
    assert settle(CLASSIC, [9, 0, 12, 1]).scores == (9, 0, 24, 1)


def test_full_variants_harsh_penalties() -> None:
    """SEED = "FULL: Variants - double for 8-9 cards left, triple for 10-12, quadruple for 13"."""
    harsh = rules(penalty="harsh")
    assert settle(harsh, [0, 7, 8, 9]).scores == (0, 7, 16, 18)
    assert settle(harsh, [10, 12, 13, 0]).scores == (30, 36, 52, 0)


def test_hk_flat_and_tw_none() -> None:
    """SEED = "HK: The aim - every card left is a penalty point" (flat) and "TW: no scoring" (none)."""
    assert settle(rules(penalty="flat"), [0, 3, 10, 13]).scores == (0, 3, 10, 13)
    assert settle(preset("taiwan"), [0, 3, 10, 13]).scores == (0, 0, 0, 0)


def test_rules_thirteen_or_more_count_as_all_thirteen() -> None:
    """SEED = "RULES.md Decision: 13 or more cards count as 'all 13'" (17-card hands)."""
    three = rules(players=3)
    assert settle(three, [0, 17, 14]).scores == (0, 51, 42)
    assert settle(rules(players=3, penalty="harsh"), [0, 17, 13]).scores == (0, 68, 52)


def test_full_variants_twos_double() -> None:
    """SEED = "FULL: Variants - double the penalty for every 2 left in hand" (Decision: ×2^k)."""
    doubled = rules(twos_double="on")
    assert settle(doubled, [0, 5, 5, 10], [0, 1, 2, 3]).scores == (0, 10, 20, 160)
    assert settle(CLASSIC, [0, 5, 5, 10], [0, 1, 2, 3]).scores == (0, 5, 5, 20)


def test_web_zero_sum_scores_sum_to_zero() -> None:
    """SEED = "WEB: How Big Two is scored - the winner collects everything, the four scores sum to zero"."""
    web = preset("web")
    scores = settle(web, [0, 3, 10, 13]).scores
    assert scores == (62, -3, -20, -39) and sum(scores) == 0
    assert ending_now(13, 0, web) == (-39, "13 left · ending now −39")


# -- dealing: 3 and 2 players, deal codes ---------------------------------------------------------------


def test_full_variants_three_players_17_cards_and_the_face_up_card() -> None:
    """SEED = "FULL: Variants - three players: 17 each, the last card face up to whoever holds the 3♦"."""
    three = rules(players=3)
    lowest = parse_mask("3D")
    for seed in range(150):
        dealt = deal_from_code(DealCode(seed), three)
        assert sorted(hand.bit_count() for hand in dealt.hands) == [17, 17, 18]
        assert dealt.dealt == (1 << 52) - 1
        holder = dealt.face_up_seat
        assert dealt.hands[holder] & lowest and dealt.hands[holder] >> dealt.face_up_card & 1
        assert dealt.hands[holder].bit_count() == 18
        assert dealt.face_up_card != lowest.bit_length() - 1  # Decision: never the 3♦ itself
        deal = Deal.start(three, dealt)
        assert deal.to_act == holder and deal.opening_card == lowest.bit_length() - 1


def test_full_three_players_ruleset_says_17_cards() -> None:
    """SEED = "FULL: Variants - three players: deal 17 cards each" + RULES.md Decision (3 players always get 17)."""
    three = Ruleset.from_mapping({"preset": "classic", "players": 3})
    assert three.hand_size == 17
    assert three.to_mapping()["cards_each"] == 17
    assert three.fingerprint == Ruleset.from_mapping({"preset": "classic", "players": 3, "cards_each": 17}).fingerprint


def test_tw_two_players_reshuffle_until_three_of_clubs_is_dealt() -> None:
    """SEED = "TW: Step 11 - the engine reshuffles until the 3♣ is among the cards actually dealt"."""
    taiwan2 = rules(preset="taiwan", players=2)
    three_clubs = parse_mask("3C")
    rounds = []
    for seed in range(200):
        dealt = deal_from_code(DealCode(seed), taiwan2)
        assert [hand.bit_count() for hand in dealt.hands] == [13, 13]
        assert dealt.dealt & three_clubs
        rounds.append(dealt.shuffle_rounds)
        deal = Deal.start(taiwan2, dealt)
        assert deal.hands[deal.to_act] & three_clubs
    assert max(rounds) > 1, "some deals needed a reshuffle"


def test_full_variants_two_players_lowest_dealt_card_starts() -> None:
    """SEED = "FULL: Variants - two players: 13 or 17 each, rest aside; whoever holds the lowest card starts"."""
    for cards_each in (13, 17):
        two = rules(players=2, cards_each=cards_each)
        missing_three = 0
        for seed in range(100):
            dealt = deal_from_code(DealCode(seed), two)
            assert [hand.bit_count() for hand in dealt.hands] == [cards_each, cards_each]
            deal = Deal.start(two, dealt)
            tables = tables_for(two)
            lowest = tables.lowest_card_in(dealt.dealt)
            assert deal.opening_card == lowest and deal.hands[deal.to_act] >> lowest & 1
            missing_three += not dealt.dealt & parse_mask("3D")
        assert missing_three > 0, "without reshuffling the 3♦ is sometimes not dealt"


def test_web_deal_code_round_trip_and_case_insensitive() -> None:
    """SEED = "WEB: Every deal has a code ... lets a friend play the exact same cards"."""
    code = DealCode(0x0123_4567_89AB_CDE)
    text = str(code)
    assert len(text) == 13
    assert DealCode.parse(text) == code
    assert DealCode.parse(text.lower()) == code
    assert DealCode.parse(f"{text[:4]}-{text[4:8]}-{text[8:]}") == code
    assert deal_from_code(DealCode.parse(text.lower()), CLASSIC) == deal_from_code(code, CLASSIC)


def test_web_deal_code_check_symbol_refuses_every_single_mistyped_symbol() -> None:
    """SEED = "WEB: deal codes" — a mistyped code is refused (DealCodeError), never dealt."""
    from bigtwo.engine.dealing import ALPHABET

    text = str(DealCode(987654321987))
    for position_ in range(len(text)):
        for symbol in ALPHABET:
            if symbol == text[position_]:
                continue
            typo = text[:position_] + symbol + text[position_ + 1 :]
            with pytest.raises(DealCodeError):
                DealCode.parse(typo)
    for bad in ("", text[:-1], text + "0", text[:5] + "U" + text[6:]):
        with pytest.raises(DealCodeError):
            DealCode.parse(bad)


def test_web_deal_code_check_symbol_catches_every_neighbour_swap() -> None:
    """SEED = "WEB: deal codes" — the engine's own promise (dealing._check_symbol): every swap of two neighbours."""
    for seed in (0, 1, 0x0123_4567_89AB_CDE, (1 << 60) - 1, 31 << 50):
        text = str(DealCode(seed))
        for i in range(len(text) - 1):
            if text[i] == text[i + 1]:
                continue
            swapped = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
            with pytest.raises(DealCodeError):
                DealCode.parse(swapped)


# -- rulesets -----------------------------------------------------------------------------------------


def test_rules_unknown_option_is_refused_listing_the_valid_ones() -> None:
    """SEED = "RULES.md Rule options - every option has a stable name"."""
    with pytest.raises(RulesetError) as info:
        Ruleset.from_mapping({"preset": "classic", "bombs": "on"})
    assert "bombs" in str(info.value)
    for name in ("suit_order", "straights", "flush", "single_two_last", "auto_pass"):
        assert name in str(info.value) and name in info.value.valid


@pytest.mark.parametrize(
    ("option", "value", "valid"),
    [
        ("flush", "sideways", ("suit-first", "rank-first", "none")),
        ("suit_order", "SHCD", ("DCHS", "CDHS", "CSHD")),
        ("penalty", "brutal", ("tiered", "harsh", "flat", "none")),
        ("players", 5, ("2", "3", "4")),
        ("preset", "vegas", PRESET_NAMES),
    ],
)
def test_rules_unknown_value_is_refused_listing_the_valid_ones(
    option: str, value: object, valid: tuple[str, ...]
) -> None:
    """SEED = "RULES.md Rule options - values" (WEB's switches, FULL's variants)."""
    with pytest.raises(RulesetError) as info:
        Ruleset.from_mapping({option: value})
    for name in valid:
        assert name in str(info.value)
    assert set(valid) <= set(info.value.valid)


def test_rules_ruleset_from_json_and_toml() -> None:
    """SEED = "RULES.md Rule options - rulesets written as JSON/TOML"."""
    from_json = Ruleset.from_json('{"preset": "web", "suit_order": "CDHS", "opening": "winner-leads"}')
    from_toml = Ruleset.from_toml('preset = "web"\nsuit_order = "CDHS"\nopening = "winner-leads"\n')
    assert from_json == from_toml
    assert from_json.suit_order.value == "CDHS" and from_json.straights.name == "twos-high"
    assert Ruleset.from_toml(from_json.to_toml()) == from_json
    assert Ruleset.from_mapping(json.loads(json.dumps(from_json.to_mapping()))) == from_json
    with pytest.raises(RulesetError):
        Ruleset.from_json("{not json")
    with pytest.raises(RulesetError):
        Ruleset.from_toml("preset = ")


def test_rules_fingerprint_independent_of_preset_name() -> None:
    """SEED = "RULES.md Presets - hong-kong-strict is hong-kong with rule 4 on; pusoy-dos is classic with CSHD"."""
    strict = Ruleset.from_mapping({"preset": "hong-kong", "single_two_last": "forbidden"})
    assert strict.fingerprint == preset("hong-kong-strict").fingerprint
    assert Ruleset.from_mapping({"suit_order": "CSHD"}).fingerprint == preset("pusoy-dos").fingerprint
    fingerprints = {preset(name).fingerprint for name in PRESET_NAMES}
    assert len(fingerprints) == len(PRESET_NAMES)
    assert rules(flush="rank-first").fingerprint != CLASSIC.fingerprint


def test_rules_fingerprint_is_stable_across_processes() -> None:
    """SEED = "RULES.md Rule options - stable names": the same options give the same fingerprint in any process."""
    code = (
        "from bigtwo.engine import PRESET_NAMES, preset; print(' '.join(preset(n).fingerprint for n in PRESET_NAMES))"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        outputs.add(proc.stdout.strip())
    assert outputs == {" ".join(preset(name).fingerprint for name in PRESET_NAMES)}


def test_rules_presets_as_described() -> None:
    """SEED = "RULES.md Presets" (classic = FULL/BETA, web = WEB, hong-kong = HK, taiwan = TW, pusoy-dos = FULL)."""
    mapping = {name: preset(name).to_mapping() for name in PRESET_NAMES}
    assert mapping["classic"]["straights"] == "ace-two-low" and mapping["classic"]["match"] == "deals:8"
    assert mapping["web"]["settlement"] == "zero-sum" and mapping["web"]["straights"] == "twos-high"
    assert mapping["hong-kong"]["flush"] == "rank-first" and mapping["hong-kong"]["dragon"] == "on"
    assert mapping["hong-kong"]["single_two_last"] == "allowed"
    assert mapping["hong-kong-strict"]["single_two_last"] == "forbidden"
    assert mapping["taiwan"]["flush"] == "none" and mapping["taiwan"]["penalty"] == "none"
    assert mapping["taiwan"]["two_player_start"] == "reshuffle-until-lowest"
    assert mapping["pusoy-dos"]["suit_order"] == "CSHD"


# -- HK: the clock ------------------------------------------------------------------------------------


def test_hk_clock_timed_out_turn() -> None:
    """SEED = "HK: The clock - if your time runs out you pass; leading, your lowest card (or the required one)"."""
    from bigtwo.engine import timeout_move

    hk = preset("hong-kong")
    deal = start(hk, full_hands("4D", "3D 9C", "5D", "6D"))
    assert str(timeout_move(deal)) == "3D"
    play(deal, "3D")
    assert timeout_move(deal).is_pass
    lead = position(hk, ["3D 4D", "5C 8S KD", "6D 9D", "QS"], 1)
    assert str(timeout_move(lead)) == "5C"
    next_on_one = position(hk, ["3D 4D", "5C 8S KD", "6D 9D", "QS"], 2)
    assert str(timeout_move(next_on_one)) == "9D", "the highest card when the next seat holds one card"
