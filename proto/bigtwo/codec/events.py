"""Events: the engine's :data:`~bigtwo.engine.Event` values <-> ``bigtwo.v1.Event``.

Writing is on every move's path: :func:`fill_event` writes an event into a message in place, where
the answer is built, so no nested message is built and then copied. A ``DealStarted`` is written
for one receiver: only ``view_seat``'s hand is shown (none when it is None), by the engine's own
redaction. Reading gives the engine's values back (hidden hands read as 0, as the redaction gives
them) through a table keyed by the event's oneof name, and skips an event kind it does not know
(a newer peer), as protobuf skips unknown fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from bigtwo.engine import (
    CardsPlayed,
    DealEnded,
    DealStarted,
    DragonRevealed,
    Event,
    LastCard,
    Passed,
    Ruleset,
    TrickEnded,
    classify_mask,
    redact,
    settle_with_winner,
    tables_for,
)
from bigtwo.v1 import types_pb2 as pb

from .cards import card_index, card_name, card_set
from .plays import RulesetMessages, messages_for

if TYPE_CHECKING:
    from google.protobuf.internal.containers import RepeatedCompositeFieldContainer


# -- writing -------------------------------------------------------------------------------------


def event_to_pb(event: Event, ruleset: Ruleset, view_seat: int | None) -> pb.Event:
    """An event for a receiver: a DealStarted shows only ``view_seat``'s hand (none when None)."""
    out = pb.Event()
    fill_event(out, event, messages_for(ruleset), view_seat)
    return out


def fill_event(out: pb.Event, event: Event, messages: RulesetMessages, view_seat: int | None) -> None:
    """Write ``event`` into ``out`` in place (a nested message built and then copied costs twice)."""
    if isinstance(event, CardsPlayed):
        out.description = event.describe()
        played = out.cards_played
        played.seat = event.seat
        played.move_index = event.move_index
        played.play.CopyFrom(messages.play(event.mask, event.kind, event.key))
        return
    out.description = event.describe()
    if isinstance(event, Passed):
        passed = out.passed
        passed.seat = event.seat
        passed.move_index = event.move_index
        passed.automatic = event.automatic
    elif isinstance(event, TrickEnded):
        out.trick_ended.winner = event.winner
    elif isinstance(event, LastCard):
        out.last_card.seat = event.seat
    elif isinstance(event, DealEnded):
        out.deal_ended.CopyFrom(
            pb.DealEndedEvent(
                winner=event.winner,
                cards_left=event.cards_left,
                twos_left=event.twos_left,
                scores=event.scores,
                by_dragon=event.by_dragon,
            )
        )
    elif isinstance(event, DragonRevealed):
        revealed = out.dragon_revealed
        revealed.seat = event.seat
        revealed.hand.CopyFrom(card_set(event.hand))
    elif isinstance(event, DealStarted):
        _fill_deal_started(out.deal_started, event, view_seat)
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"unknown event {event!r}")


def _fill_deal_started(started: pb.DealStartedEvent, event: DealStarted, view_seat: int | None) -> None:
    # The engine's redaction: only the viewing seat's hand stays (seat -1: every hand hidden).
    shown = redact(event, -1 if view_seat is None else view_seat)
    assert isinstance(shown, DealStarted)
    started.CopyFrom(
        pb.DealStartedEvent(
            hands=[card_set(hand) for hand in shown.hands],
            hand_sizes=[hand.bit_count() for hand in event.hands],
            leader=event.leader,
            opening_card=card_name(event.opening_card),
            deal_number=event.deal_number,
            face_up_card=card_name(event.face_up_card),
        )
    )
    if event.face_up_seat >= 0:
        started.face_up_seat = event.face_up_seat


def events_to_pb(events: Iterable[Event], ruleset: Ruleset, view_seat: int | None) -> list[pb.Event]:
    messages = messages_for(ruleset)
    out = []
    for event in events:
        message = pb.Event()
        fill_event(message, event, messages, view_seat)
        out.append(message)
    return out


def add_events(
    out: RepeatedCompositeFieldContainer[pb.Event], events: Iterable[Event], ruleset: Ruleset, view_seat: int | None
) -> None:
    """Append ``events`` to the repeated field ``out``, each written in place."""
    messages = messages_for(ruleset)
    for event in events:
        fill_event(out.add(), event, messages, view_seat)


# -- reading -------------------------------------------------------------------------------------


def _cards_played(message: pb.Event, ruleset: Ruleset) -> Event:
    e = message.cards_played
    play = classify_mask(e.play.cards.mask, tables_for(ruleset))
    return CardsPlayed(e.seat, play.mask, play.kind, play.key, e.move_index)


def _passed(message: pb.Event, ruleset: Ruleset) -> Event:
    return Passed(message.passed.seat, message.passed.move_index, message.passed.automatic)


def _trick_ended(message: pb.Event, ruleset: Ruleset) -> Event:
    return TrickEnded(message.trick_ended.winner)


def _last_card(message: pb.Event, ruleset: Ruleset) -> Event:
    return LastCard(message.last_card.seat)


def _dragon_revealed(message: pb.Event, ruleset: Ruleset) -> Event:
    return DragonRevealed(message.dragon_revealed.seat, message.dragon_revealed.hand.mask)


def _deal_ended(message: pb.Event, ruleset: Ruleset) -> Event:
    e = message.deal_ended
    # The message carries the counts; the engine's settlement of them is the record's result.
    return DealEnded(settle_with_winner(ruleset, e.winner, e.cards_left, e.twos_left), e.by_dragon)


def _deal_started(message: pb.Event, ruleset: Ruleset) -> Event:
    e = message.deal_started
    return DealStarted(
        tuple(hand.mask for hand in e.hands),
        e.leader,
        card_index(e.opening_card),
        e.deal_number or 1,
        card_index(e.face_up_card),
        e.face_up_seat if e.HasField("face_up_seat") else -1,
    )


_EVENT_READERS: dict[str, Callable[[pb.Event, Ruleset], Event]] = {
    "cards_played": _cards_played,
    "passed": _passed,
    "trick_ended": _trick_ended,
    "last_card": _last_card,
    "dragon_revealed": _dragon_revealed,
    "deal_ended": _deal_ended,
    "deal_started": _deal_started,
}


def event_from_pb(message: pb.Event, ruleset: Ruleset) -> Event | None:
    """The engine's event of ``message``, None for an event kind this codec does not know."""
    read = _EVENT_READERS.get(message.WhichOneof("event") or "")
    return None if read is None else read(message, ruleset)


def events_from_pb(messages: Sequence[pb.Event], ruleset: Ruleset) -> tuple[Event, ...]:
    """The engine's events of ``messages``, in order, unknown kinds skipped."""
    out: list[Event] = []
    readers = _EVENT_READERS
    for message in messages:
        read = readers.get(message.WhichOneof("event") or "")
        if read is not None:
            out.append(read(message, ruleset))
    return tuple(out)


__all__ = ["add_events", "event_from_pb", "event_to_pb", "events_from_pb", "events_to_pb", "fill_event"]
