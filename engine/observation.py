"""What one seat may know (RULES.md's per-seat view): its own hand, every seat's card count, the
table, whose turn it is, and the public history. Another seat's cards never appear here, except
those the rules show to everyone (a face-up 3-player extra card, a revealed dragon, played cards).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .combos import Play
from .deal import Deal
from .events import DealStarted, Event


@dataclass(frozen=True, slots=True)
class Observation:
    seat: int
    hand: int
    """This seat's cards (52-bit mask)."""
    cards_left: tuple[int, ...]
    to_act: int
    leader: int
    table: Play | None
    last_player: int
    played: int
    """Every card played so far (public)."""
    passed: int
    """Seats (bit per seat) that passed since the table's last play (public)."""
    opening_card: int
    face_up_card: int
    face_up_seat: int
    winner: int
    scores: tuple[int, ...]
    history: tuple[Event, ...]
    """The deal's events with every hidden hand blanked (0)."""

    @property
    def over(self) -> bool:
        return self.winner >= 0

    @property
    def unseen(self) -> int:
        """Cards this seat cannot see: not in its hand and not yet played (others' and undealt)."""
        return ((1 << 52) - 1) & ~self.hand & ~self.played


def redact(event: Event, seat: int) -> Event:
    """The event as ``seat`` may see it: hands other than its own are blanked."""
    if isinstance(event, DealStarted):
        hands = tuple(hand if index == seat else 0 for index, hand in enumerate(event.hands))
        return event._replace(hands=hands)
    return event


def observe(deal: Deal, seat: int, *, with_history: bool = True, events: Sequence[Event] | None = None) -> Observation:
    """Seat ``seat``'s view of ``deal``. Its history is ``events``, every event of the deal since
    its start, redacted for ``seat``: by default ``deal.events``, which hold them all for a deal
    started or replayed here, but for a deal resumed from a state only those since (a service
    rebuilds the earlier ones from a token's public history and passes them all)."""
    if not 0 <= seat < deal.players:
        raise ValueError(f"seat {seat} does not exist at a {deal.players}-player table")
    if events is None:
        events = deal.events
    elif not isinstance(events[0] if events else None, DealStarted):
        raise ValueError("a deal's events open with its DealStarted")
    history: tuple[Event, ...] = ()
    if with_history:
        history = tuple(redact(event, seat) for event in events)
    return Observation(
        seat=seat,
        hand=deal.hands[seat],
        cards_left=deal.cards_left(),
        to_act=deal.to_act,
        leader=deal.leader,
        table=deal.table,
        last_player=deal.last_player,
        played=deal.played,
        passed=deal.passed,
        opening_card=deal.opening_card,
        face_up_card=deal.face_up_card,
        face_up_seat=deal.face_up_seat,
        winner=deal.winner,
        scores=deal.scores,
        history=history,
    )
