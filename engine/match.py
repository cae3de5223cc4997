"""A match of several deals (RULES.md option ``match``, ``opening`` = ``winner-leads``, seats that
are left and taken over).

Totals add each deal's scores. The match is over after N deals (``deals:N``), after one
(``single``), when a total reaches the target (``target:T``: a penalty total of T or more, or under
``zero-sum`` a loss of T or more), or never by itself (``open``: the table stops when it likes).
Lowest total wins (highest under ``zero-sum``), ties share the win. Under ``penalty = none`` every
total is 0, so the seat that won the most deals wins (**project decision**, TW: win or lose only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .deal import DealContext
from .rules import MatchKind, Penalty, Ruleset, Settlement


@dataclass(frozen=True, slots=True)
class DealRecord:
    deal_number: int
    winner: int
    scores: tuple[int, ...]
    cards_left: tuple[int, ...] = ()
    deal_code: str = ""
    by_dragon: bool = False


@dataclass(frozen=True, slots=True)
class Match:
    """An immutable match: every method returns a new one."""

    ruleset: Ruleset
    deals: tuple[DealRecord, ...] = ()
    empty_seats: frozenset[int] = field(default_factory=frozenset)
    stopped: bool = False
    """An ``open`` match ends when the table stops it."""

    @property
    def players(self) -> int:
        return self.ruleset.players

    @property
    def totals(self) -> tuple[int, ...]:
        totals = [0] * self.players
        for record in self.deals:
            for seat, score in enumerate(record.scores):
                totals[seat] += score
        return tuple(totals)

    @property
    def deals_won(self) -> tuple[int, ...]:
        won = [0] * self.players
        for record in self.deals:
            won[record.winner] += 1
        return tuple(won)

    @property
    def over(self) -> bool:
        length = self.ruleset.match
        if self.stopped:
            return True
        if length.kind is MatchKind.SINGLE:
            return len(self.deals) >= 1
        if length.kind is MatchKind.DEALS:
            return len(self.deals) >= length.amount
        if length.kind is MatchKind.TARGET:
            if self.ruleset.settlement is Settlement.ZERO_SUM:
                return any(total <= -length.amount for total in self.totals)
            return any(total >= length.amount for total in self.totals)
        return False

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats sharing the win (meaningful once the match is over; the leaders before)."""
        if not self.deals:
            return ()
        if self.ruleset.penalty is Penalty.NONE:
            scores = self.deals_won
            best = max(scores)
        elif self.ruleset.settlement is Settlement.ZERO_SUM:
            scores = self.totals
            best = max(scores)
        else:
            scores = self.totals
            best = min(scores)
        return tuple(seat for seat, score in enumerate(scores) if score == best)

    def next_context(self) -> DealContext:
        """The context of the next deal: its number, the last winner (for ``winner-leads``)."""
        previous = self.deals[-1].winner if self.deals else None
        return DealContext(len(self.deals) + 1, previous, self.empty_seats)

    def record(self, record: DealRecord) -> Match:
        if self.over:
            raise ValueError("the match is over; start a new one")
        if len(record.scores) != self.players:
            raise ValueError(f"a deal record needs {self.players} scores")
        return replace(self, deals=(*self.deals, record))

    def leave(self, seat: int) -> Match:
        """A seat is left empty; it keeps its points (HK: "The seat keeps its points")."""
        self._check_seat(seat)
        return replace(self, empty_seats=self.empty_seats | {seat})

    def take(self, seat: int) -> Match:
        """Someone (a person or a bot) takes an empty seat, with its points."""
        self._check_seat(seat)
        return replace(self, empty_seats=self.empty_seats - {seat})

    def stop(self) -> Match:
        return replace(self, stopped=True)

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.players:
            raise ValueError(f"seat {seat} does not exist at a {self.players}-player table")
