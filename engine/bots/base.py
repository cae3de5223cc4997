"""What every bot shares: the :class:`Bot` protocol, the :class:`View` a policy decides from, and
the way a seat's :class:`~bigtwo.engine.observation.Observation` becomes a playable position.

A bot sees only its seat's observation. To ask the engine which plays are legal, the observation
is turned into a *public deal*: the seat's own hand, and for every other seat a filler hand of the
right size taken from the cards the seat cannot see (in a fixed order). Legality of the seat's own
move depends only on its own hand, the table, the opening card and the other seats' card counts,
so the filler never changes the answer, and it depends on nothing hidden.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..combos import Play
from ..deal import Deal, DealState, Move
from ..events import DealStarted
from ..generate import CARD_MASK
from ..observation import Observation
from ..rules import Ruleset
from ..tables import RuleTables, tables_for

FULL_DECK = (1 << 52) - 1


@runtime_checkable
class Bot(Protocol):
    """A computer player. ``choose`` sees only ``observation`` (its seat's view) and the rules."""

    level: str

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        """The move for ``observation.seat``, which must be the seat to act."""
        ...


@dataclass(slots=True)
class View:
    """Everything a policy may use, from one seat's point of view (hidden hands never appear)."""

    seat: int
    players: int
    hand: int
    cards_left: tuple[int, ...]
    table: Play | None
    last_player: int
    played: int
    passed: int
    opening_card: int
    legal: tuple[int, ...]
    """Legal plays, encoded ``key << 52 | mask``, sorted (pass is not listed)."""
    tables: RuleTables
    ruleset: Ruleset

    @property
    def leading(self) -> bool:
        return self.table is None

    @property
    def can_pass(self) -> bool:
        return self.table is not None

    @property
    def unseen(self) -> int:
        """Cards neither in this hand nor played: the other seats' cards and any undealt cards."""
        return FULL_DECK & ~self.hand & ~self.played

    def opponents(self) -> list[int]:
        return [s for s in range(self.players) if s != self.seat]


def _check_turn(observation: Observation) -> None:
    if observation.over:
        raise ValueError("the deal is over: no move to choose")
    if observation.to_act != observation.seat:
        raise ValueError(f"seat {observation.seat} is not the seat to act (seat {observation.to_act} is)")


def deal_number(observation: Observation) -> int:
    for event in observation.history[:1]:
        if isinstance(event, DealStarted):
            return event.deal_number
    return 1


def state_with_hands(observation: Observation, hands: tuple[int, ...]) -> DealState:
    """A resumable snapshot of the observed position with the given hands (own hand included)."""
    table = observation.table
    return DealState(
        hands=hands,
        to_act=observation.to_act,
        leader=observation.leader,
        table_mask=table.mask if table else 0,
        table_kind=table.kind if table else None,
        table_key=table.key if table else -1,
        last_player=observation.last_player,
        passes=observation.passed.bit_count(),
        passed=observation.passed,
        played=observation.played,
        opening_card=observation.opening_card,
        winner=observation.winner,
        moves_made=len(observation.history),
        deal_number=deal_number(observation),
        start_sizes=(),
        scores=observation.scores,
        face_up_card=observation.face_up_card,
        face_up_seat=observation.face_up_seat,
    )


def filler_hands(observation: Observation) -> tuple[int, ...]:
    """Own hand plus, for each other seat, the lowest-indexed unseen cards of the right count.

    Depends only on the observation (public counts, played cards, own hand)."""
    pool = observation.unseen
    hands: list[int] = []
    for seat, left in enumerate(observation.cards_left):
        if seat == observation.seat:
            hands.append(observation.hand)
            continue
        hand = 0
        for _ in range(left):
            low = pool & -pool
            hand |= low
            pool ^= low
        hands.append(hand)
    return tuple(hands)


def public_deal(observation: Observation, ruleset: Ruleset) -> Deal:
    """The observed position as a :class:`Deal` with filler hands (see the module docstring)."""
    return Deal.from_state(ruleset, state_with_hands(observation, filler_hands(observation)))


def view_of(observation: Observation, ruleset: Ruleset) -> View:
    """The :class:`View` of the seat to act, built from its observation only."""
    _check_turn(observation)
    deal = public_deal(observation, ruleset)
    return View(
        seat=observation.seat,
        players=ruleset.players,
        hand=observation.hand,
        cards_left=observation.cards_left,
        table=observation.table,
        last_player=observation.last_player,
        played=observation.played,
        passed=observation.passed,
        opening_card=observation.opening_card,
        legal=tuple(deal.legal_encoded()),
        tables=tables_for(ruleset),
        ruleset=ruleset,
    )


def view_in_deal(deal: Deal) -> View:
    """The seat-to-act's :class:`View` of a live deal (used in rollouts; reads only that seat's hand
    and public facts)."""
    seat = deal.to_act
    return View(
        seat=seat,
        players=deal.players,
        hand=deal.hands[seat],
        cards_left=tuple(hand.bit_count() for hand in deal.hands),
        table=deal.table,
        last_player=deal.last_player,
        played=deal.played,
        passed=deal.passed,
        opening_card=deal.opening_card,
        legal=tuple(deal.legal_encoded()),
        tables=deal.tables,
        ruleset=deal.ruleset,
    )


def move_of(view: View, mask: int) -> Move:
    """The move for a chosen mask (0 means pass)."""
    if mask == 0:
        return Move.pass_(view.seat)
    return Move.from_mask(view.seat, mask)


def masks_of(encoded: tuple[int, ...] | list[int]) -> list[int]:
    return [e & CARD_MASK for e in encoded]
