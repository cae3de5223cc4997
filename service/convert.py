"""The service's side of the codec: the request limits on what it reads, and the messages only the
service writes (a seat's view, a table's header).

Every conversion between a message and an engine value is :mod:`bigtwo.codec`'s; the names the
service's modules use are re-exported here. Input errors are the codec's
:class:`~bigtwo.codec.errors.CodecFieldError` or this module's :func:`~bigtwo.service.errors.bad_field`,
each naming its field path; :mod:`bigtwo.service.errors` answers both as INVALID_ARGUMENT.
"""

from __future__ import annotations

from bigtwo.codec.audits import audit_to_pb, verdict_kind_to_pb
from bigtwo.codec.cards import card_name, card_set, cards_text, mask_from_text
from bigtwo.codec.contexts import context_from_pb, context_to_pb, seat_from
from bigtwo.codec.events import add_events, event_to_pb, events_to_pb, fill_event
from bigtwo.codec.plays import (
    KIND_TO_PB,
    REASON_FROM_PB,
    REASON_TO_PB,
    RulesetMessages,
    messages_for,
    play_to_pb,
    refusal_to_pb,
)
from bigtwo.codec.rulesets import OptionBounds, option_text, ruleset_from_pb
from bigtwo.codec.rulesets import ruleset_to_pb as _ruleset_to_pb
from bigtwo.engine import Deal, DealContext, Ruleset, ending_now_of, observe
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .errors import bad_field
from .limits import LIMITS

PB_TO_REASON = REASON_FROM_PB

_OPTION_BOUNDS = OptionBounds(LIMITS.options, LIMITS.option_name, LIMITS.option_value)


def ruleset_from(message: pb.Ruleset, path: str) -> Ruleset:
    """The ruleset of a request field, its sizes within the request limits."""
    return ruleset_from_pb(message, path, _OPTION_BOUNDS)


def ruleset_to_pb(ruleset: Ruleset) -> pb.Ruleset:
    """A ruleset in an answer that promises it in full (DescribeRuleset, ListPresets): every option."""
    return _ruleset_to_pb(ruleset, every_option=True)


def mask_from(text: str, path: str) -> int:
    """Card text given as an input field (a hand, a table, a selection to start from) to a mask,
    within the request limit on its length."""
    if len(text) > LIMITS.card_text:
        raise bad_field(path, f"at most {LIMITS.card_text} characters")
    return mask_from_text(text, path)


def context_from(message: pb.DealContext, players: int, path: str) -> DealContext:
    return context_from_pb(message, players, path)


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


__all__ = [
    "KIND_TO_PB",
    "PB_TO_REASON",
    "REASON_TO_PB",
    "SEATS_IN",
    "RulesetMessages",
    "add_events",
    "api",
    "audit_to_pb",
    "card_name",
    "card_set",
    "cards_text",
    "context_from",
    "context_to_pb",
    "event_to_pb",
    "events_to_pb",
    "fill_event",
    "mask_from",
    "messages_for",
    "option_text",
    "pb",
    "play_to_pb",
    "refusal_to_pb",
    "ruleset_from",
    "ruleset_to_pb",
    "seat_from",
    "seat_view",
    "table_header",
    "verdict_kind_to_pb",
]
