"""A deal's public history as a state token carries it (:class:`History`): how the deal opened and
every move made, packed a byte a move and a byte a card played, so that a move adds to it by one
concatenation and the rules bound its length (:data:`MAX_HISTORY_BYTES`). :mod:`bigtwo.service.tokens`
seals it with the rest of a token; :mod:`bigtwo.service.game` keeps it move by move."""

from __future__ import annotations

import struct
from typing import NamedTuple

from bigtwo.engine.cache import BoundedCache
from bigtwo.engine.combos import VALID_SIZES

from .bounds import MAX_SEATS, BoundError

MAX_PLAYS = 52
"""Plays in one deal at most: every play plays at least one of the 52 cards."""
MAX_PASSES = (MAX_SEATS - 1) * MAX_PLAYS
"""Passes (made, not automatic) in one deal at most: the leader of a trick never passes, and after
each play at most ``players - 1`` passes follow before the next play or the trick's end (under
every ``after_pass`` rule: a play resets the count, and the trick ends when it reaches
``players - 1``)."""
MAX_HISTORY_BYTES = 2 + MAX_PLAYS + MAX_PASSES + 52
"""The longest :class:`History` in a token: the opening (2 bytes), a byte per move, a byte per card
played. ``LIMITS.token_bytes`` leaves room for it (:data:`MAX_OVERRIDES_BYTES`, checked at import)."""
OPENING = struct.Struct("<Bb")


class History(NamedTuple):
    """A deal's public history, read from its packed form (what a token and a game hold: bytes, so
    that a move adds to it by one concatenation): how it opened (the leader and the opening card of
    its ``DealStarted``, :func:`opening`) and every move made, in order. With the state it comes with,
    it rebuilds every event of the deal (``bigtwo.service.core.Game.events_so_far``): the hands at
    the start are the hands now plus what each seat played, and the events after the start are the
    moves replayed.

    ``moves`` holds one entry per move (:func:`move_bytes`): a byte ``seat << 4 | n``, then the n
    cards played, one byte each (the card's index); n is 0 for a pass. Automatic passes are the
    engine's and not listed."""

    leader: int
    opening_card: int
    moves: bytes = b""

    @classmethod
    def unpack(cls, data: bytes) -> History:
        """A packed history (the moves are read by :meth:`moves_made`)."""
        leader, opening_card = OPENING.unpack_from(data, 0)
        return cls(leader, opening_card, bytes(data[OPENING.size :]))

    def moves_made(self) -> list[tuple[int, int]]:
        """Every move: (seat, the cards played as a mask; 0 for a pass)."""
        return read_moves(self.moves)


def opening(leader: int, opening_card: int) -> bytes:
    """A packed history with no move yet: how the deal opened."""
    return OPENING.pack(leader, opening_card)


def without_last(history: bytes, mask: int) -> bytes:
    """A packed history without its last move, which played ``mask`` (0: a pass)."""
    return history[: -1 - mask.bit_count()]


def read_moves(moves: bytes) -> list[tuple[int, int]]:
    """The moves of a history: (seat, cards played as a mask; 0 for a pass)."""
    out = []
    at = 0
    while at < len(moves):
        head = moves[at]
        count = head & 0xF
        cards = moves[at + 1 : at + 1 + count]
        if len(cards) != count or any(card >= 52 for card in cards):
            raise ValueError("a move of the history does not parse")
        mask = 0
        for card in cards:
            mask |= 1 << card
        out.append((head >> 4, mask))
        at += 1 + count
    return out


_CARD_BYTES: BoundedCache[int, bytes] = BoundedCache("service.tokens.card_bytes", 8192)
"""A play's cards as a history holds them, by mask."""


def move_bytes(seat: int, mask: int) -> bytes:
    """One move as a history holds it (``mask`` 0: a pass)."""
    if not mask:
        return _PASSES[seat]
    known = _CARD_BYTES.get(mask)
    if known is None:
        known = _CARD_BYTES.put(mask, bytes(index for index in range(52) if mask >> index & 1))
    return bytes((seat << 4 | len(known),)) + known


_PASSES = tuple(bytes((seat << 4,)) for seat in range(MAX_SEATS))


def _check_history_format() -> None:
    """A history's move is one byte ``seat << 4 | cards``: every seat and every play's number of
    cards (the engine's play sizes) must fit four bits."""
    if MAX_SEATS > 0xF or max(VALID_SIZES) > 0xF:
        raise BoundError("a seat or a play's number of cards no longer fits a history's four bits")


_check_history_format()

__all__ = [
    "MAX_HISTORY_BYTES",
    "MAX_PASSES",
    "MAX_PLAYS",
    "OPENING",
    "History",
    "move_bytes",
    "opening",
    "read_moves",
    "without_last",
]
