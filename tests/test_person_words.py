"""What a person reads says seats and cards one way everywhere (issue 35): seats ``p1``..``pN`` (the
API stays 0-based), cards as their faces show them (``10♦``, never ``TD``), no raw lists, no names
of the sources the rules were written from."""

from __future__ import annotations

import re

import pytest
from bigtwo.codec.events import event_to_pb
from bigtwo.engine import (
    PRESET_SUMMARIES,
    CardsPlayed,
    Deal,
    DealCode,
    GameOverError,
    NotYourTurnError,
    Passed,
    TrickEnded,
    classify_mask,
    deal_from_code,
    mask_pretty,
    parse_mask,
    play_name,
    preset,
    tables_for,
)
from bigtwo.engine.events import DealEnded, DealStarted, LastCard

CODE = "0000003NQK8N1"
SEAT_FROM_ZERO = re.compile(r"\b[Ss]eat \d")
MACHINE_CARD = re.compile(r"\b(?:[2-9TJQKA][DCHS])\b")


def play_out(deal: Deal) -> None:
    """Plays the deal to its end, each seat its first legal move."""
    while deal.winner < 0:
        deal.do(deal.legal_moves()[0])


def test_refusals_name_seats_p1_to_pn() -> None:
    rules = preset("classic")
    deal = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    other = (deal.to_act + 1) % rules.players
    with pytest.raises(NotYourTurnError) as turn:
        deal.do_text(other, "pass")
    assert str(turn.value.message) == f"It is p{deal.to_act + 1}'s turn, not p{other + 1}'s"


def test_a_finished_deal_says_who_went_out_and_the_scores_by_seat() -> None:
    rules = preset("classic")
    deal = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    play_out(deal)
    with pytest.raises(GameOverError) as over:
        deal.do_text(deal.to_act, "pass")
    assert str(over.value.message) == f"The deal is over: p{deal.winner + 1} went out"
    ended = next(event for event in deal.events if isinstance(event, DealEnded))
    said = ended.describe()
    assert said.startswith(f"p{deal.winner + 1} wins the deal; scores p1 ")
    assert "[" not in said and not SEAT_FROM_ZERO.search(said), said


def test_events_say_seats_and_cards_as_the_table_shows_them() -> None:
    tens = parse_mask("TD TC")
    assert mask_pretty(tens) == "10♦ 10♣"
    said = [
        CardsPlayed(1, tens, classify_mask(tens, tables_for(preset("classic"))).kind, 0, 4).describe(),  # type: ignore[union-attr]
        Passed(2, 5, automatic=True).describe(),
        TrickEnded(3).describe(),
        LastCard(0).describe(),
        DealStarted((0, 0, 0, 0), 2, 0).describe(),
    ]
    assert said == [
        "p2 plays 10♦ 10♣",
        "p3 passes (automatic)",
        "trick to p4",
        "p1: last card",
        "deal 1 starts; p3 leads",
    ]
    for sentence in said:
        assert not SEAT_FROM_ZERO.search(sentence) and not MACHINE_CARD.search(sentence), sentence


def test_the_service_describes_an_event_in_the_same_words() -> None:
    rules = preset("classic")
    tens = parse_mask("TD TC")
    event = CardsPlayed(1, tens, classify_mask(tens, tables_for(rules)).kind, 0, 4)  # type: ignore[union-attr]
    assert event_to_pb(event, rules, None).description == "p2 plays 10♦ 10♣"


def test_play_names_show_tens_as_10() -> None:
    rules = preset("classic")
    for text, name in (("TD TC", "Pair 10"), ("TD", "Single 10♦"), ("TD TC TS", "Triple 10")):
        play = classify_mask(parse_mask(text), tables_for(rules))
        assert play is not None and play_name(play, tables_for(rules)) == name


def test_preset_summaries_use_the_games_words_not_the_sources() -> None:
    for name, summary in PRESET_SUMMARIES.items():
        assert not re.search(r"\b(FULL|BETA|WEB|HK|TW|DCHS|CDHS|CSHD)\b", summary), f"{name}: {summary}"
