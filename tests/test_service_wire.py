"""service/wire.py: answers joined from cached serialized parts parse into exactly the messages that
building them field by field gives (seeded random games under every preset and table size)."""

from __future__ import annotations

import random
from typing import NamedTuple

import pytest
from bigtwo.engine import PRESET_NAMES, Deal, DealCode, Event, Ruleset, deal_from_code, preset
from bigtwo.service import convert as cv
from bigtwo.service import wire
from bigtwo.service.core import CallInfo
from bigtwo.service.servicer import ServiceCore
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message
from service_support import reference_table

RULESETS = [preset(name) for name in PRESET_NAMES] + [
    Ruleset.from_mapping({"preset": "classic", "players": "3"}),
    Ruleset.from_mapping({"preset": "hong-kong", "players": "2"}),
    Ruleset.from_mapping({"preset": "classic", "auto-pass": "on", "dragon": "on"}),
]


def random_games(ruleset: Ruleset, count: int, seed: int) -> list[tuple[Deal, list[tuple[Deal, tuple]]]]:
    """``count`` deals played by random legal moves: (start, [(deal after move, events)])."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        code = DealCode(rng.getrandbits(60))
        deal = Deal.start(ruleset, deal_from_code(code, ruleset))
        start = deal.clone()
        steps = []
        while not deal.over:
            events = deal.do(rng.choice(deal.legal_moves()))
            steps.append((deal.clone(), events))
        games.append((start, steps))
    return games


@pytest.mark.parametrize("ruleset", RULESETS, ids=lambda r: f"{r.preset}-{r.players}p")
def test_table_and_events_match_the_messages_built_field_by_field(ruleset: Ruleset) -> None:
    parts = wire.parts_for(ruleset)
    for start, steps in random_games(ruleset, 6, seed=hash(ruleset.fingerprint) & 0xFFFF):
        # One writer follows the deal move by move (as a stream's does); table_bytes starts afresh.
        writer = wire.DealWriter(start, "7K3M9QX2AB4H8", parts)
        for deal in [start, *(after for after, _ in steps)]:
            expected = reference_table(deal, "7K3M9QX2AB4H8")
            written = writer.table(deal)
            assert pb.TableState.FromString(written) == expected
            assert written == expected.SerializeToString(deterministic=True), "protobuf's own encoding"
            assert pb.TableState.FromString(wire.table_bytes(deal, "7K3M9QX2AB4H8")) == expected
        for view_seat in (None, 0):
            for event in start.events:
                assert pb.Event.FromString(wire.event_bytes(event, parts, view_seat)) == cv.event_to_pb(
                    event, ruleset, view_seat
                )
        for _, events in steps:
            for event in events:
                written = wire.event_bytes(event, parts, None)
                assert written == cv.event_to_pb(event, ruleset, None).SerializeToString(deterministic=True)


class Judged(NamedTuple):
    move_index: int
    outcome: bytes
    events: tuple[Event, ...]


def test_answers_parse_into_the_response_messages() -> None:
    ruleset = preset("classic")
    deal = Deal.start(ruleset, deal_from_code(DealCode(7), ruleset))
    writer = wire.DealWriter(deal, "id")
    move = deal.legal_moves()[0]
    events = deal.do(move)
    view = cv.seat_view(deal, 0)
    judged = Judged(200, wire.parts_for(ruleset).outcome(deal.table.mask, deal.table.kind, deal.table.key), events)
    expected_events = [cv.event_to_pb(event, ruleset, 0) for event in events]
    outcome = pb.MoveOutcome(accepted=True, play=cv.play_to_pb(deal.table, ruleset))
    table = reference_table(deal, "id")
    for layout in (wire.STREAM, wire.APPLY):
        answer = writer.answer(layout, judged, deal, 0, view=view.SerializeToString(), state_token=b"\x01" * 300)
        if layout is wire.STREAM:
            expected: Message = api.PlayStreamResponse(
                move_result=api.StreamMoveResult(
                    index=200,
                    outcome=outcome,
                    events=expected_events,
                    table=table,
                    view=view,
                    state_token=b"\x01" * 300,
                )
            )
            assert api.PlayStreamResponse.FromString(answer) == expected
        else:
            expected = api.ApplyMoveResponse(
                outcome=outcome, events=expected_events, state_token=b"\x01" * 300, table=table, view=view
            )
            assert api.ApplyMoveResponse.FromString(answer) == expected
        assert answer == expected.SerializeToString(deterministic=True), "protobuf's own encoding"
    first = writer.answer(wire.STREAM, Judged(0, wire.PASS_OUTCOME, ()), deal, None)
    stream = api.PlayStreamResponse.FromString(first)
    assert stream.WhichOneof("message") == "move_result"
    assert stream.move_result == api.StreamMoveResult(outcome=pb.MoveOutcome(accepted=True, is_pass=True), table=table)


@pytest.mark.parametrize("view_seat", [None, 1])
def test_the_opened_answer_parses_into_its_message(view_seat: int | None) -> None:
    ruleset = preset("hong-kong")
    deal = Deal.start(ruleset, deal_from_code(DealCode(11), ruleset))
    parts = wire.parts_for(ruleset)
    table = wire.table_bytes(deal, "7K3M9QX2AB4H8")
    view = b"" if view_seat is None else cv.seat_view(deal, view_seat).SerializeToString()
    events = [wire.event_bytes(event, parts, view_seat) for event in deal.events]
    expected = api.StreamOpened(
        deal_code="7K3M9QX2AB4H8",
        table=pb.TableState.FromString(table),
        events=cv.events_to_pb(deal.events, ruleset, view_seat),
        state_token=b"\x02" * 200,
    )
    if view_seat is not None:
        expected.view.CopyFrom(cv.seat_view(deal, view_seat))
    opened = wire.opened_response("7K3M9QX2AB4H8", table, events, view, b"\x02" * 200)
    assert api.PlayStreamResponse.FromString(opened) == api.PlayStreamResponse(opened=expected)
    explicit = api.PlayStreamResponse.FromString(wire.opened_response("", table, events, view, b"t"))
    assert explicit.opened.deal_code == "" and explicit.opened.state_token == b"t"


def test_a_refused_move_answers_the_unchanged_table_and_the_seat_view() -> None:
    core = ServiceCore(TokenCodec(KeyRing([b"k" * 32])))
    dealt = core.deal(api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code="7K3M9QX2AB4H8"), CallInfo())
    seat = dealt.table.to_act
    request = api.ApplyMoveRequest(
        game=pb.Game(state_token=dealt.state_token), move=pb.Move(index=0, seat=seat, text="pass"), view_seat=seat
    )
    refused = api.ApplyMoveResponse.FromString(core.apply_move_answer(request, CallInfo()))
    assert not refused.outcome.accepted
    assert refused.outcome.refusal.reason_id == "cannot-pass-leading"
    assert refused.table == dealt.table
    assert refused.view.seat == seat and refused.view.hand.mask


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, (1 << 52) - 1, (1 << 63) + 5])
def test_varints_are_protobufs(value: int) -> None:
    encoded = pb.CardSet(mask=value).SerializeToString()
    assert encoded == (wire._CARDS_MASK + wire.varint(value) if value else b"")
    text = "x" * (value % 1000 + 1)
    assert wire.delimited(wire._CARDS_TEXT, text.encode()) == pb.CardSet(text=text).SerializeToString()


def test_check_fields_refuses_a_message_in_pieces_and_fields_out_of_order() -> None:
    """The writer's rule as code: what protobufjs would misread (a sub-message written twice, as a
    play's event once was) or a field out of order is refused; protobuf's own encodings pass."""
    event = pb.Event(cards_played=pb.CardsPlayedEvent(seat=1, move_index=3), description="seat 1 plays 3D")
    wire.check_fields(pb.Event.DESCRIPTOR, event.SerializeToString())
    pieces = (
        pb.Event(cards_played=pb.CardsPlayedEvent(seat=1)).SerializeToString()
        + pb.Event(cards_played=pb.CardsPlayedEvent(move_index=3)).SerializeToString()
    )
    assert pb.Event.FromString(pieces).cards_played.seat == 1, "Python merges the pieces"
    with pytest.raises(wire.WireError, match="cards_played written twice"):
        wire.check_fields(pb.Event.DESCRIPTOR, pieces)
    with pytest.raises(wire.WireError, match="out of order"):
        wire.check_fields(
            pb.TableState.DESCRIPTOR,
            pb.TableState(moves_made=2).SerializeToString() + pb.TableState(players=4).SerializeToString(),
        )
    nested = pb.TableState(played=pb.CardSet(mask=1)).SerializeToString()
    nested += pb.TableState(played=pb.CardSet(text="3D")).SerializeToString()
    with pytest.raises(wire.WireError, match="played written twice"):
        wire.check_fields(pb.TableState.DESCRIPTOR, nested)
    events = [pb.Event(trick_ended=pb.TrickEndedEvent(winner=seat)) for seat in range(3)]
    wire.check_fields(api.ApplyMoveResponse.DESCRIPTOR, api.ApplyMoveResponse(events=events).SerializeToString())
    split = api.ApplyMoveResponse(events=events[:1]).SerializeToString()
    split += api.ApplyMoveResponse(state_token=b"t").SerializeToString()
    split += api.ApplyMoveResponse(events=events[1:]).SerializeToString()
    with pytest.raises(wire.WireError):
        wire.check_fields(api.ApplyMoveResponse.DESCRIPTOR, split)
    with pytest.raises(wire.WireError, match="field-number order"):
        wire._in_field_order(pb.TableState, ("to_act", "players"))


def test_the_rest_of_an_answer_stays_within_its_bound() -> None:
    # wire._check_bounds counts on every answer's parts besides its tokens (outcome, events, table,
    # view) taking at most ANSWER_REST_BYTES; whole deals under every ruleset, with a view, stay below.
    longest = 0
    for ruleset in RULESETS:
        parts = wire.parts_for(ruleset)
        for start, steps in random_games(ruleset, 2, seed=5):
            writer = wire.DealWriter(start, "7K3M9QX2AB4H8", parts, deal_code="7K3M9QX2AB4H8")
            for index, (deal, events) in enumerate(steps):
                table = deal.table
                outcome = parts.outcome(table.mask, table.kind, table.key) if table else wire.PASS_OUTCOME
                judged = Judged(index, outcome, events)
                view = cv.seat_view(deal, 0).SerializeToString()
                longest = max(longest, len(writer.answer(wire.APPLY, judged, deal, 0, view=view)))
    assert 0 < longest < wire.ANSWER_REST_BYTES // 4


def test_the_bounds_the_tables_are_built_for_are_checked() -> None:
    from bigtwo.engine import LastCard, TrickEnded
    from bigtwo.service import bounds, tokens

    assert max(bounds.seat_counts()) == bounds.MAX_SEATS
    bounds.check_seats(bounds.MAX_SEATS)
    with pytest.raises(bounds.BoundError, match="tables by seat hold 3"):
        bounds.check_seats(3)
    bounds.check_length("a part", bounds.SMALL_LENGTH - 1)
    with pytest.raises(bounds.BoundError, match="a part may take 16384 bytes"):
        bounds.check_length("a part", bounds.SMALL_LENGTH)
    assert len(wire._SMALL_VARINTS[bounds.SMALL_LENGTH - 1]) == 2
    bounds.check_events_compare_by_type()
    assert TrickEnded(1) != LastCard(1)
    assert tokens.MAX_OVERRIDES_BYTES > 0
    assert 2 * tokens.MAX_TOKEN_BYTES + wire.ANSWER_REST_BYTES < bounds.SMALL_LENGTH


def test_a_ruleset_too_long_for_a_token_gets_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from bigtwo.service import errors, tokens

    monkeypatch.setattr(tokens, "MAX_OVERRIDES_BYTES", 10)
    with pytest.raises(errors.ResourceExhausted, match="room for 10"):
        tokens._ruleset_bytes_of(Ruleset.from_mapping({"preset": "classic", "match": "deals:12345"}))
    assert tokens._ruleset_bytes_of(preset("classic"))  # no overrides: always room
