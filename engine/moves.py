"""A move and its text (RULES.md "Refusals": ``bad-card``): the :class:`Move` value a seat sends,
and the reading of a move typed as text (``pass`` in any case, or cards such as ``3D 4D``, ``10♦``,
``♦3``) into the pass flag and the card mask that :class:`~bigtwo.engine.deal.Deal` verifies.

Reading text is kept apart from the deal's state machine: it knows cards, not turns or tables, and a
deal asks it only through :func:`read_move_text`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .cache import BoundedCache
from .cards import Card, cards_of, parse_cards


@dataclass(frozen=True, slots=True)
class Move:
    """A seat's action: play some cards, or pass. Text form: ``pass`` or the cards, ``3D 3S``.

    ``cards`` keeps exactly what was asked for (a repeated card stays repeated) so that verification
    can name it; nothing about the cards is checked until :meth:`Deal.verify`.
    """

    seat: int
    cards: tuple[Card, ...] = ()
    is_pass: bool = False

    @classmethod
    def pass_(cls, seat: int) -> Move:
        return cls(seat, (), True)

    @classmethod
    def play(cls, seat: int, cards: Iterable[Card] | str) -> Move:
        return cls(seat, parse_cards(cards) if isinstance(cards, str) else tuple(cards), False)

    @classmethod
    def from_mask(cls, seat: int, mask: int) -> Move:
        return cls(seat, cards_of(mask), mask == 0)

    @classmethod
    def parse(cls, seat: int, text: str) -> Move:
        """``pass`` (any case) or card text; raises :class:`BadCardError` for text that is no card."""
        if text.strip().lower() == "pass":
            return cls.pass_(seat)
        return cls.play(seat, text)

    @property
    def mask(self) -> int:
        out = 0
        for card in self.cards:
            out |= card.bit
        return out

    def __str__(self) -> str:
        return "pass" if self.is_pass else " ".join(str(card) for card in self.cards)


_MOVE_TEXTS = BoundedCache[str, tuple[bool, int, int]]("engine.deal.move_texts", 1 << 16)
"""Move texts already read: moves repeat across deals and logs. A caller chooses the texts, so the
memo is bounded; its values are tuples, never None. Its name (a metric label, docs/OBSERVABILITY.md)
is the one it had when the deal module read its own texts."""


def read_move_text(text: str) -> tuple[bool, int, int]:
    """(is_pass, mask, first repeated card index or -1) of a move's text; raises
    :class:`~bigtwo.engine.errors.BadCardError` for text that is no card (not memoized)."""
    known = _MOVE_TEXTS.get(text)
    if known is not None:
        return known
    if text.strip().lower() == "pass":
        return _MOVE_TEXTS.put(text, (True, 0, -1))
    mask = 0
    repeated = -1
    for card in parse_cards(text):
        if mask & card.bit and repeated < 0:
            repeated = card.index
        mask |= card.bit
    return _MOVE_TEXTS.put(text, (False, mask, repeated))
