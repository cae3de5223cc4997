"""bigtwo.codec: every engine value through its message and back (rulesets of every preset and of
mixed options, every play kind, every refusal reason, every event kind for every viewer), and the
field errors the codec raises, answered by the service as the same field violations."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest
from bigtwo.codec.cards import card_index, card_name, card_set, mask_from_text
from bigtwo.codec.contexts import context_from_pb, context_to_pb, seat_from
from bigtwo.codec.errors import CodecFieldError
from bigtwo.codec.events import event_from_pb, events_from_pb, events_to_pb
from bigtwo.codec.plays import (
    KIND_FROM_PB,
    KIND_TO_PB,
    play_from_pb,
    play_to_pb,
    reason_from_pb,
    refusal_to_pb,
)
from bigtwo.codec.rulesets import OptionBounds, ruleset_from_pb, ruleset_to_pb
from bigtwo.engine import (
    PRESET_NAMES,
    REFUSAL_CLASSES,
    CardsPlayed,
    Deal,
    DealCode,
    DealContext,
    DealEnded,
    DealStarted,
    DragonRevealed,
    Event,
    Kind,
    LastCard,
    Passed,
    Reason,
    Ruleset,
    TrickEnded,
    classify_mask,
    deal_from_code,
    explicit_deal,
    parse_mask,
    preset,
    redact,
    tables_for,
)
from bigtwo.v1 import types_pb2 as pb
from hypothesis import given, settings
from test_properties import option_mixes


def _through_bytes(message: Any) -> Any:
    """The message as its receiver reads it."""
    return type(message).FromString(message.SerializeToString())


# -- rulesets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_round_trips(name: str) -> None:
    rules = preset(name)
    message = ruleset_to_pb(rules)
    assert message.preset == name and dict(message.options) == {}, "a preset alone overrides nothing"
    assert ruleset_from_pb(_through_bytes(message)) == rules
    full = ruleset_to_pb(rules, every_option=True)
    assert len(full.options) == len(rules.to_mapping()) - 1
    assert ruleset_from_pb(_through_bytes(full)) == rules


@settings(max_examples=60, deadline=None)
@given(option_mixes)
def test_mixed_rulesets_round_trip(rules: Ruleset) -> None:
    message = ruleset_to_pb(rules)
    base = preset(rules.preset).to_mapping()
    changed = {key for key, value in rules.to_mapping().items() if key != "preset" and base[key] != value}
    assert set(message.options) == changed, "only the overrides are written"
    back = ruleset_from_pb(_through_bytes(message))
    assert back == rules and back.fingerprint == rules.fingerprint and back.preset == rules.preset
    assert ruleset_from_pb(ruleset_to_pb(rules, every_option=True)) == rules


def test_an_empty_preset_is_classic() -> None:
    assert ruleset_from_pb(pb.Ruleset()) == preset("classic")


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (pb.Ruleset(preset="nope"), "game.ruleset.preset"),
        (pb.Ruleset(options={"flush": "purple"}), 'game.ruleset.options["flush"]'),
        (pb.Ruleset(options={"colour": "blue"}), 'game.ruleset.options["colour"]'),
        (pb.Ruleset(options={"preset": "web"}), "game.ruleset.options"),
        (pb.Ruleset(options={"players": "4", "cards_each": "17"}), 'game.ruleset.options["cards_each"]'),
    ],
)
def test_a_bad_ruleset_names_its_field(message: pb.Ruleset, field: str) -> None:
    with pytest.raises(CodecFieldError) as caught:
        ruleset_from_pb(message, "game.ruleset")
    assert caught.value.path == field and caught.value.reason
    assert str(caught.value) == f"{field}: {caught.value.reason}"


def test_a_field_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(CodecFieldError("log.ruleset.preset", "unknown preset 'x'")))
    assert isinstance(error, CodecFieldError)
    assert (error.path, error.reason) == ("log.ruleset.preset", "unknown preset 'x'")


def test_bounds_are_checked_before_parsing() -> None:
    bounds = OptionBounds(options=2, name=8, value=8)
    too_many = pb.Ruleset(options={"flush": "none", "dragon": "on", "penalty": "flat"})
    with pytest.raises(CodecFieldError, match="at most 2 options"):
        ruleset_from_pb(too_many, "ruleset", bounds)
    with pytest.raises(CodecFieldError, match="names have at most 8"):
        ruleset_from_pb(pb.Ruleset(options={"flush": "x" * 9}), "ruleset", bounds)
    assert ruleset_from_pb(too_many) == Ruleset.from_mapping({"flush": "none", "dragon": "on", "penalty": "flat"})


def test_a_long_preset_name_is_quoted_short() -> None:
    with pytest.raises(CodecFieldError) as caught:
        ruleset_from_pb(pb.Ruleset(preset="x" * 5000))
    assert len(caught.value.reason) < 200 and "5000 characters" in caught.value.reason


# -- cards, plays, refusals ----------------------------------------------------------------------

EXAMPLES = {
    Kind.SINGLE: "3D",
    Kind.PAIR: "3D 3C",
    Kind.TRIPLE: "3D 3C 3H",
    Kind.STRAIGHT: "3D 4C 5H 6S 7D",
    Kind.FLUSH: "3D 5D 7D 9D JD",
    Kind.FULL_HOUSE: "3D 3C 3H 4D 4C",
    Kind.FOUR_OF_A_KIND: "3D 3C 3H 3S 4D",
    Kind.STRAIGHT_FLUSH: "3D 4D 5D 6D 7D",
}


def test_the_examples_name_every_kind() -> None:
    assert set(EXAMPLES) == set(Kind)
    assert {KIND_FROM_PB[KIND_TO_PB[kind]] for kind in Kind} == set(Kind)


@pytest.mark.parametrize("name", PRESET_NAMES)
@pytest.mark.parametrize("kind", list(Kind))
def test_every_play_kind_round_trips(name: str, kind: Kind) -> None:
    rules = preset(name)
    if kind is Kind.FLUSH and rules.flush.value == "none":
        pytest.skip("this preset plays no plain flush")
    play = classify_mask(parse_mask(EXAMPLES[kind]), tables_for(rules))
    assert play.kind is kind
    message = _through_bytes(play_to_pb(play, rules))
    assert message.kind == KIND_TO_PB[kind] and message.name and message.cards.mask == play.mask
    assert play_from_pb(message, rules) == play
    assert play_to_pb(play, rules) is play_to_pb(play, rules), "a play's message is built once per ruleset"


@pytest.mark.parametrize("reason", list(Reason))
def test_every_refusal_reason_round_trips(reason: Reason) -> None:
    make = REFUSAL_CLASSES[reason]
    refusal = make("3X", "why") if reason is Reason.BAD_CARD else make("why")  # type: ignore[call-arg]
    message = _through_bytes(refusal_to_pb(refusal))
    assert message.reason_id == reason.value and message.message == "why"
    assert reason_from_pb(message) is reason
    assert reason_from_pb(pb.Refusal(reason_id=reason.value)) is reason, "the id alone is enough"
    assert reason_from_pb(pb.Refusal()) is None


def test_cards() -> None:
    mask = parse_mask("3D 2S TH")
    assert card_set(mask).text == "3D TH 2S" and card_set(mask).mask == mask
    assert [card_index(card_name(index)) for index in range(52)] == list(range(52))
    assert card_name(-1) == "" and card_index("") == -1
    assert mask_from_text("3D 2S TH", "hand") == mask
    for text in ("3D 3D", "1X"):
        with pytest.raises(CodecFieldError) as caught:
            mask_from_text(text, "position.hand")
        assert caught.value.path == "position.hand"


# -- contexts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "context",
    [DealContext(), DealContext(3, 2), DealContext(7, 0, frozenset({1, 3})), DealContext(2, None, frozenset({0}))],
)
def test_contexts_round_trip(context: DealContext) -> None:
    message = _through_bytes(context_to_pb(context))
    assert context_from_pb(message) == context
    assert context_from_pb(message, 4, "log.context") == context


def test_a_context_names_a_seat_that_does_not_exist() -> None:
    assert context_from_pb(pb.DealContext()) == DealContext(1)
    with pytest.raises(CodecFieldError) as caught:
        context_from_pb(context_to_pb(DealContext(2, 3)), 3, "log.context")
    assert caught.value.path == "log.context.previous_winner"
    with pytest.raises(CodecFieldError) as caught:
        context_from_pb(context_to_pb(DealContext(2, None, frozenset({5}))), 4, "log.context")
    assert caught.value.path == "log.context.empty_seats"
    assert seat_from(1, 2, "seat") == 1
    with pytest.raises(CodecFieldError, match="seats 0-1"):
        seat_from(2, 2, "seat")


# -- events --------------------------------------------------------------------------------------


def _played_out(rules: Ruleset, deal: Deal, rng: random.Random) -> tuple[Event, ...]:
    while not deal.over:
        deal.do(rng.choice(deal.legal_moves()))
    return deal.events


def _deals() -> list[tuple[Ruleset, tuple[Event, ...]]]:
    """A few deals played to their end: every preset, two players, auto-passes, a dragon."""
    rng = random.Random(5)
    out = []
    for index, name in enumerate(PRESET_NAMES):
        rules = preset(name)
        dealt = deal_from_code(DealCode(index + 1), rules)
        out.append((rules, _played_out(rules, Deal.start(rules, dealt, DealContext(2, 1)), rng)))
    two = Ruleset.from_mapping({"preset": "hong-kong", "players": 2, "cards_each": 17})
    out.append((two, _played_out(two, Deal.start(two, deal_from_code(DealCode(9), two)), rng)))
    dragon = preset("hong-kong")
    suits = [" ".join(rank + suit for rank in "3456789TJQKA2") for suit in "DCHS"]
    out.append((dragon, _played_out(dragon, Deal.start(dragon, explicit_deal(suits, dragon)), rng)))
    return out


DEALS = _deals()


def test_the_deals_hold_every_event_kind() -> None:
    seen = {type(event) for _, events in DEALS for event in events}
    assert seen == {DealStarted, CardsPlayed, Passed, TrickEnded, LastCard, DragonRevealed, DealEnded}
    assert any(isinstance(e, Passed) and e.automatic for _, events in DEALS for e in events)


@pytest.mark.parametrize(
    ("rules", "events"), DEALS, ids=[f"{r.preset}-{r.players}p-{i}" for i, (r, _) in enumerate(DEALS)]
)
def test_every_event_round_trips_for_every_viewer(rules: Ruleset, events: tuple[Event, ...]) -> None:
    for view_seat in (None, *range(rules.players)):
        messages = [_through_bytes(message) for message in events_to_pb(events, rules, view_seat)]
        shown = tuple(redact(event, -1 if view_seat is None else view_seat) for event in events)
        assert events_from_pb(messages, rules) == shown
        assert all(message.description for message in messages)
    started = events_to_pb(events[:1], rules, 0)[0].deal_started
    assert list(started.hand_sizes) == [hand.bit_count() for hand in events[0].hands]  # type: ignore[union-attr]


def test_an_unknown_event_kind_is_skipped() -> None:
    rules = preset("classic")
    assert event_from_pb(pb.Event(description="from a newer service"), rules) is None
    known = events_to_pb([TrickEnded(2)], rules, None)
    assert events_from_pb([pb.Event(), *known], rules) == (TrickEnded(2),)


# -- the service's answer to a codec field error --------------------------------------------------


def test_the_service_answers_a_codec_field_error_as_a_bad_field() -> None:
    from bigtwo.service.errors import bad_field, to_rpc_status

    codec_status, codec_code = to_rpc_status(CodecFieldError('ruleset.options["flush"]', "no such flush"))
    field_status, field_code = to_rpc_status(bad_field('ruleset.options["flush"]', "no such flush"))
    assert codec_code == field_code and codec_code.name == "INVALID_ARGUMENT"
    assert codec_status.details == field_status.details
    assert dict(codec_status.trailing_metadata) == dict(field_status.trailing_metadata)
