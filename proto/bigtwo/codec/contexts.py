"""Seats and deal contexts: :class:`~bigtwo.engine.DealContext` <-> ``bigtwo.v1.DealContext``."""

from __future__ import annotations

from bigtwo.engine import DealContext
from bigtwo.v1 import types_pb2 as pb

from .errors import CodecFieldError


def seat_from(value: int, players: int, path: str) -> int:
    """``value`` if it is a seat of a ``players``-player table, else :class:`CodecFieldError` on ``path``."""
    if not 0 <= value < players:
        raise CodecFieldError(path, f"seat {value} does not exist at a {players}-player table (seats 0-{players - 1})")
    return value


def context_from_pb(message: pb.DealContext, players: int | None = None, path: str = "context") -> DealContext:
    """The context of ``message`` (deal number 0 reads as 1). With ``players``, every seat it names
    must exist at that table."""
    previous = message.previous_winner if message.HasField("previous_winner") else None
    if players is None:
        return DealContext(max(1, message.deal_number), previous, frozenset(message.empty_seats))
    if previous is not None:
        seat_from(previous, players, f"{path}.previous_winner")
    empty = frozenset(seat_from(seat, players, f"{path}.empty_seats") for seat in message.empty_seats)
    return DealContext(max(1, message.deal_number), previous, empty)


def context_to_pb(context: DealContext) -> pb.DealContext:
    out = pb.DealContext(deal_number=context.deal_number, empty_seats=sorted(context.empty_seats))
    if context.previous_winner is not None:
        out.previous_winner = context.previous_winner
    return out


__all__ = ["context_from_pb", "context_to_pb", "seat_from"]
