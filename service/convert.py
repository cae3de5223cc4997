"""Messages <-> engine values. Pure functions; every input error names its field path."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, cast

from bigtwo.engine import (
    PRESET_NAMES,
    Card,
    CardsPlayed,
    Deal,
    DealContext,
    DealEnded,
    DealStarted,
    DragonRevealed,
    Event,
    Kind,
    LastCard,
    Passed,
    Play,
    Reason,
    Refusal,
    Ruleset,
    TrickEnded,
    ending_now_of,
    mask_text,
    observe,
    parse_mask,
    play_name,
    redact,
    tables_for,
)
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .errors import bad_field
from .limits import LIMITS, quote

KIND_TO_PB: dict[Kind, pb.Kind] = {kind: cast(pb.Kind, pb.Kind.Value("KIND_" + kind.name)) for kind in Kind}
REASON_TO_PB: dict[Reason, pb.Reason] = {
    reason: cast(pb.Reason, pb.Reason.Value("REASON_" + reason.name)) for reason in Reason
}
PB_TO_REASON = {value: reason for reason, value in REASON_TO_PB.items()}


# -- rulesets ------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _ruleset_cached(preset_name: str, options: tuple[tuple[str, str], ...]) -> Ruleset:
    return Ruleset.from_mapping({**dict(options), "preset": preset_name})


def ruleset_from(message: pb.Ruleset, path: str) -> Ruleset:
    if len(message.options) > LIMITS.options:
        raise bad_field(f"{path}.options", f"at most {LIMITS.options} options")
    preset_name = message.preset or "classic"
    if preset_name not in PRESET_NAMES:
        raise bad_field(
            f"{path}.preset", f"unknown preset {quote(preset_name)}; valid presets: {', '.join(PRESET_NAMES)}"
        )
    for key, value in message.options.items():
        if len(key) > LIMITS.option_name or len(value) > LIMITS.option_value:
            raise bad_field(
                f"{path}.options",
                f"option {quote(key)}: names have at most {LIMITS.option_name} characters, "
                f"values at most {LIMITS.option_value}",
            )
        if key.replace("-", "_") == "preset":
            raise bad_field(f"{path}.options", "set the preset in the preset field, not as an option")
    options = tuple(sorted(message.options.items()))
    try:
        return _ruleset_cached(preset_name, options)
    except ValueError as exc:
        option = getattr(exc, "option", "")
        where = f'{path}.options["{option}"]' if option and option in message.options else f"{path}.options"
        raise bad_field(where, str(exc)) from None


def ruleset_to_pb(ruleset: Ruleset) -> pb.Ruleset:
    options = {}
    for key, value in ruleset.to_mapping().items():
        if key == "preset":
            continue
        options[key] = option_text(value)
    return pb.Ruleset(preset=ruleset.preset, options=options)


def option_text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return str(value)


# -- cards ---------------------------------------------------------------------------------------


cards_text = mask_text
"""The canonical text of a set of cards (fast enough to write every move's played cards)."""


def card_set(mask: int) -> pb.CardSet:
    return pb.CardSet(text=cards_text(mask), mask=mask)


class IdentityCache:
    """A small cache keyed by object identity (rulesets hash slowly: they hold ladders of frozensets).
    The object is kept alive with its value, so an id is never reused while cached."""

    def __init__(self, compute: Callable[[Any], Any], size: int = 256) -> None:
        self.compute = compute
        self.size = size
        self.entries: dict[int, tuple[Any, Any]] = {}

    def __call__(self, obj: Any) -> Any:
        entry = self.entries.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        value = self.compute(obj)
        if len(self.entries) >= self.size:
            self.entries.clear()
        self.entries[id(obj)] = (obj, value)
        return value


ruleset_tables = IdentityCache(tables_for, size=64)


def mask_from(text: str, path: str) -> int:
    """Card text given as an input field, not a move (a hand, a table, a selection to start from) to
    a mask: text that is no card or repeats a card is INVALID_ARGUMENT on ``path``. (In a move both
    are refusals, answered with status OK.)"""
    if len(text) > LIMITS.card_text:
        raise bad_field(path, f"at most {LIMITS.card_text} characters")
    try:
        return parse_mask(text)
    except Refusal as refusal:  # BadCardError, or NotInHandError for a repeated card
        raise bad_field(path, refusal.message) from None


def card_name(index: int) -> str:
    return str(Card.from_index(index)) if index >= 0 else ""


class RulesetMessages:
    """The messages of one ruleset that many answers share, each built once: plays by mask.
    Callers copy them (constructor arguments, CopyFrom), never change them."""

    LIMIT = 8192

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.fingerprint = ruleset.fingerprint
        self.plays: dict[int, pb.Play] = {}

    def play(self, mask: int, kind: Kind, key: int) -> pb.Play:
        message = self.plays.get(mask)
        if message is None:
            if len(self.plays) >= self.LIMIT:
                self.plays.clear()
            name = play_name(Play(mask, kind, key), ruleset_tables(self.ruleset))
            message = self.plays[mask] = pb.Play(cards=card_set(mask), kind=KIND_TO_PB[kind], name=name)
        return message


messages_for = IdentityCache(RulesetMessages, size=16)


def play_to_pb(play: Play, ruleset: Ruleset) -> pb.Play:
    """A play as a message (shared: copy it, never change it)."""
    return messages_for(ruleset).play(play.mask, play.kind, play.key)


def refusal_to_pb(refusal: Refusal) -> pb.Refusal:
    return pb.Refusal(reason=REASON_TO_PB[refusal.reason], reason_id=refusal.reason.value, message=refusal.message)


# -- seats and contexts --------------------------------------------------------------------------


def seat_from(value: int, players: int, path: str) -> int:
    if not 0 <= value < players:
        raise bad_field(path, f"seat {value} does not exist at a {players}-player table (seats 0-{players - 1})")
    return value


def context_from(message: pb.DealContext, players: int, path: str) -> DealContext:
    previous = None
    if message.HasField("previous_winner"):
        previous = seat_from(message.previous_winner, players, f"{path}.previous_winner")
    empty = frozenset(seat_from(s, players, f"{path}.empty_seats") for s in message.empty_seats)
    return DealContext(max(1, message.deal_number), previous, empty)


def context_to_pb(context: DealContext) -> pb.DealContext:
    out = pb.DealContext(deal_number=context.deal_number, empty_seats=sorted(context.empty_seats))
    if context.previous_winner is not None:
        out.previous_winner = context.previous_winner
    return out


# -- events and states ---------------------------------------------------------------------------


def event_to_pb(event: Event, ruleset: Ruleset, view_seat: int | None) -> pb.Event:
    """An event for a receiver: a DealStarted shows only ``view_seat``'s hand (none when None)."""
    out = pb.Event()
    fill_event(out, event, messages_for(ruleset), view_seat)
    return out


def fill_event(out: pb.Event, event: Event, messages: RulesetMessages, view_seat: int | None) -> None:
    """Write ``event`` into ``out`` in place: a move's answer is built where it is sent, so no
    message is built twice (constructing and then copying a nested message costs twice as much)."""
    if isinstance(event, CardsPlayed):
        out.description = f"seat {event.seat} plays {cards_text(event.mask)}"
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
        # The engine's redaction: only the viewing seat's hand stays (seat -1: every hand hidden).
        shown = redact(event, -1 if view_seat is None else view_seat)
        assert isinstance(shown, DealStarted)
        started = out.deal_started
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
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"unknown event {event!r}")


def events_to_pb(events: Iterable[Event], ruleset: Ruleset, view_seat: int | None) -> list[pb.Event]:
    return [event_to_pb(event, ruleset, view_seat) for event in events]


def add_events(out: Any, events: Iterable[Event], ruleset: Ruleset, view_seat: int | None) -> None:
    """Append ``events`` to the repeated field ``out``, each written in place."""
    messages = messages_for(ruleset)
    for event in events:
        fill_event(out.add(), event, messages, view_seat)


def table_header(deal: Deal, deal_id: str) -> pb.TableState:
    """The table's fields that stay the same for the whole deal (the rest: ``wire.DealWriter.table``)."""
    return pb.TableState(
        players=deal.players,
        deal_number=deal.deal_number,
        deal_id=deal_id,
        ruleset_fingerprint=messages_for(deal.ruleset).fingerprint,
    )


SEATS_IN: tuple[tuple[int, ...], ...] = tuple(tuple(s for s in range(4) if bits >> s & 1) for bits in range(16))
"""The seats of a 4-bit set of seats (who passed)."""


def seat_view(deal: Deal, seat: int) -> pb.SeatView:
    """Seat ``seat``'s own hand and readout, from the engine's per-seat observation: never another
    seat's cards."""
    seen = observe(deal, seat, with_history=False)
    hand = seen.hand
    _, ending = ending_now_of(hand, deal.ruleset)
    return pb.SeatView(seat=seat, hand=card_set(hand), ending_now=ending, to_act=seen.to_act == seat and not seen.over)


# -- audits -----------------------------------------------------------------------------------------


def verdict_kind_to_pb(kind: Any) -> api.VerdictKind:
    """A replay ``VerdictKind`` (``illegal-move``) as the API enum (``VERDICT_KIND_ILLEGAL_MOVE``)."""
    return cast(api.VerdictKind, api.VerdictKind.Value("VERDICT_KIND_" + kind.value.upper().replace("-", "_")))


def audit_to_pb(verdict: Any, log: Any, view_seat: int | None) -> api.AuditLogResponse:
    """An audit verdict (``bigtwo.engine.replay.AuditVerdict``) of ``log`` (None: the text did not
    parse). Events and steps carry no hand but ``view_seat``'s (none when it is None)."""
    from bigtwo.codec.replay import move_index

    out = api.AuditLogResponse(
        kind=verdict_kind_to_pb(verdict.kind),
        signature=verdict.signature.value,
        deals_checked=verdict.deals_checked,
        actions_checked=verdict.actions_checked,
        totals=verdict.totals,
    )
    records = {record.number: record for record in log.deals} if log is not None else {}
    for problem in verdict.problems:
        item = out.problems.add(
            kind=verdict_kind_to_pb(problem.kind),
            message=problem.message,
            deal_number=max(0, problem.deal_number),
            line=max(0, problem.line),
            reason_id=problem.reason,
        )
        if problem.index >= 0:
            item.action_index = problem.index
            record = records.get(problem.deal_number)
            if record is not None:
                item.move_index = move_index(record, problem.index)
    if log is None:
        return out
    out.events.extend(events_to_pb(verdict.events, log.ruleset, view_seat))
    for view in verdict.steps:
        step = out.steps.add(
            step=view.step,
            deal_number=view.deal_number,
            text=view.text,
            refused=view.refused,
            to_act=view.to_act,
            table=card_set(view.table),
            cards_left=[hand.bit_count() for hand in view.hands],
            deal_over=view.deal_over,
            deal_scores=view.deal_scores,
            totals=view.totals,
        )
        if view.action_index >= 0:
            step.action_index = view.action_index
        if view.actor >= 0:
            step.actor = view.actor
        if view.deal_over and view.winner >= 0:
            step.winner = view.winner
        if view_seat is not None and view_seat < len(view.hands):
            step.hand.CopyFrom(card_set(view.hands[view_seat]))
    return out


__all__ = ["api", "pb"]
