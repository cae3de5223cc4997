"""Event records: everything that happens in a deal, as frozen values.

A deal's state is the fold of its events (:meth:`bigtwo.engine.deal.Deal.apply`); replaying the
same events rebuilds the same state. Events that reveal hands (``DealStarted``, ``DragonRevealed``)
are filtered per seat by :mod:`bigtwo.engine.observation`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import mask_text
from .combos import Kind


@dataclass(frozen=True, slots=True)
class DealStarted:
    hands: tuple[int, ...]
    leader: int
    opening_card: int
    """Card index the first play must include, or -1 (winner leads with anything)."""
    deal_number: int = 1
    face_up_card: int = -1
    face_up_seat: int = -1

    def describe(self) -> str:
        return f"deal {self.deal_number} starts; seat {self.leader} leads"


@dataclass(frozen=True, slots=True)
class CardsPlayed:
    seat: int
    mask: int
    kind: Kind
    key: int
    move_index: int

    def describe(self) -> str:
        return f"seat {self.seat} plays {mask_text(self.mask)}"


@dataclass(frozen=True, slots=True)
class Passed:
    seat: int
    move_index: int
    automatic: bool = False
    """True for auto-pass: the engine passed because nothing unplayed can beat the table."""

    def describe(self) -> str:
        return f"seat {self.seat} passes" + (" (automatic)" if self.automatic else "")


@dataclass(frozen=True, slots=True)
class TrickEnded:
    winner: int
    """The seat that played last; it leads the next trick."""

    def describe(self) -> str:
        return f"trick to seat {self.winner}"


@dataclass(frozen=True, slots=True)
class LastCard:
    """FULL's "last card" call and WEB's marker: a seat is down to one card."""

    seat: int

    def describe(self) -> str:
        return f"seat {self.seat}: last card"


@dataclass(frozen=True, slots=True)
class DragonRevealed:
    """HK rule 3: a hand holding all 13 ranks wins the deal before any play."""

    seat: int
    hand: int

    def describe(self) -> str:
        return f"seat {self.seat} shows a dragon"


@dataclass(frozen=True, slots=True)
class DealEnded:
    winner: int
    cards_left: tuple[int, ...]
    twos_left: tuple[int, ...]
    scores: tuple[int, ...]
    by_dragon: bool = False

    def describe(self) -> str:
        return f"seat {self.winner} wins the deal; scores {list(self.scores)}"


Event = DealStarted | CardsPlayed | Passed | TrickEnded | LastCard | DragonRevealed | DealEnded
