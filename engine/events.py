"""Event records: everything that happens in a deal, as frozen values.

Each event's :meth:`describe` is its sentence for people (the service's ``Event.description``, the
browser table's move log, the replay page): seats ``p1``..``pN``, cards as ``10♦``.

A deal's state is the fold of its events (:meth:`bigtwo.engine.deal.Deal.apply`); replaying the
same events rebuilds the same state. Events that reveal hands (``DealStarted``, ``DragonRevealed``)
are filtered per seat by :mod:`bigtwo.engine.observation`.

Each event is a named tuple: immutable like a frozen dataclass and cheaper to build, which counts
because every move makes one or more. Unlike plain tuples, two events are equal only when they are
of the same type as well: ``TrickEnded(1) != LastCard(1)`` (see :func:`_compare_by_type`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .cards import mask_pretty, seat_ref
from .combos import Kind
from .scoring import DealSettlement


class DealStarted(NamedTuple):
    hands: tuple[int, ...]
    leader: int
    opening_card: int
    """Card index the first play must include, or -1 (winner leads with anything)."""
    deal_number: int = 1
    face_up_card: int = -1
    face_up_seat: int = -1

    def describe(self) -> str:
        return f"deal {self.deal_number} starts; {seat_ref(self.leader)} leads"


class CardsPlayed(NamedTuple):
    seat: int
    mask: int
    kind: Kind
    key: int
    move_index: int

    def describe(self) -> str:
        return f"{seat_ref(self.seat)} plays {mask_pretty(self.mask)}"


class Passed(NamedTuple):
    seat: int
    move_index: int
    automatic: bool = False
    """True for auto-pass: the engine passed because nothing unplayed can beat the table."""

    def describe(self) -> str:
        return f"{seat_ref(self.seat)} passes" + (" (automatic)" if self.automatic else "")


class TrickEnded(NamedTuple):
    winner: int
    """The seat that played last; it leads the next trick."""

    def describe(self) -> str:
        return f"trick to {seat_ref(self.winner)}"


class LastCard(NamedTuple):
    """FULL's "last card" call and WEB's marker: a seat is down to one card."""

    seat: int

    def describe(self) -> str:
        return f"{seat_ref(self.seat)}: last card"


class DragonRevealed(NamedTuple):
    """HK rule 3: a hand holding all 13 ranks wins the deal before any play."""

    seat: int
    hand: int

    def describe(self) -> str:
        return f"{seat_ref(self.seat)} shows a dragon ({mask_pretty(self.hand)})"


class DealEnded(NamedTuple):
    """A seat went out (or showed a dragon): the deal is over. The record holds its result, the
    settlement card, so whoever reads a log (the replay writer, the audit, ``ScoreDeal``) reads
    its lines instead of settling the deal again. The counts and scores below are read from it."""

    settlement: DealSettlement
    by_dragon: bool = False

    @property
    def winner(self) -> int:
        return self.settlement.winner

    @property
    def cards_left(self) -> tuple[int, ...]:
        return tuple(line.cards_left for line in self.settlement.seats)

    @property
    def twos_left(self) -> tuple[int, ...]:
        return tuple(line.twos_left for line in self.settlement.seats)

    @property
    def scores(self) -> tuple[int, ...]:
        return self.settlement.scores

    def describe(self) -> str:
        scores = ", ".join(f"{seat_ref(seat)} {score}" for seat, score in enumerate(self.scores))
        how = " with a dragon" if self.by_dragon else ""
        return f"{seat_ref(self.winner)} wins the deal{how}; scores {scores}"


Event = DealStarted | CardsPlayed | Passed | TrickEnded | LastCard | DragonRevealed | DealEnded


def _equal(self: tuple[Any, ...], other: object) -> bool:
    return self.__class__ is other.__class__ and tuple.__eq__(self, other)


def _not_equal(self: tuple[Any, ...], other: object) -> bool:
    return not (self.__class__ is other.__class__ and tuple.__eq__(self, other))


def _compare_by_type() -> None:
    """Make events of different types unequal, as dataclasses would be: named tuples compare as
    plain tuples, so ``TrickEnded(1) == LastCard(1)`` would hold. Their hashes stay the tuple's: equal
    hashes of unequal events only share a bucket."""
    for event_type in (DealStarted, CardsPlayed, Passed, TrickEnded, LastCard, DragonRevealed, DealEnded):
        event_type.__eq__ = _equal  # type: ignore[method-assign]
        event_type.__ne__ = _not_equal  # type: ignore[method-assign, assignment]
        event_type.__hash__ = tuple.__hash__  # type: ignore[method-assign]


_compare_by_type()
