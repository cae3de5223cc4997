"""Cards: a set of cards (a mask) <-> ``bigtwo.v1.CardSet`` or card text, one card <-> its name."""

from __future__ import annotations

from bigtwo.engine import Card, Refusal, mask_text, parse_mask
from bigtwo.v1 import types_pb2 as pb

from .errors import CodecFieldError

cards_text = mask_text
"""The canonical text of a set of cards (fast enough to write every move's played cards)."""


def card_set(mask: int) -> pb.CardSet:
    return pb.CardSet(text=cards_text(mask), mask=mask)


def card_name(index: int) -> str:
    """A card's name (``3D``), or the empty text for no card (index -1)."""
    return str(Card.from_index(index)) if index >= 0 else ""


def card_index(text: str) -> int:
    """The index of the card named ``text``, or -1 for the empty text (no card)."""
    return Card.parse(text).index if text else -1


def mask_from_text(text: str, path: str) -> int:
    """Card text given as an input field, not as a move (a hand, a table, a selection to start
    from): text that is no card or repeats a card raises :class:`CodecFieldError` on ``path``. (In a
    move both are refusals, answered as such.)"""
    try:
        return parse_mask(text)
    except Refusal as refusal:  # BadCardError, or NotInHandError for a repeated card
        raise CodecFieldError(path, refusal.message) from None


__all__ = ["card_index", "card_name", "card_set", "cards_text", "mask_from_text"]
