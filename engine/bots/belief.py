"""What a seat may believe about the hands it cannot see, from the public history, and guesses of
those hands drawn from that belief (``pro``'s worlds).

Known for certain (card counting): the unseen cards (neither in the seat's hand nor played), every
seat's card count, the 3-player face-up card (its holder keeps it) and, with 2 players, that every
card below the opening card stayed undealt.

Read from the history (a *clue* holds for the hand the other seat had then, that is its present hand
plus what it has played since):

* A pass on a single: passing is always allowed, but a seat that passes while it could beat gives up
  the trick for nothing, so the clue says it held no stronger single. Exceptions the rules make: a
  lone 2 may not go out on a trick under ``single_two_last = forbidden`` (the pass was forced), and
  when only going out first counts (``penalty = none``, 3-4 players) cards left cost nothing, so
  passing to keep high cards for the lead is sound play and a pass on a single is no clue. A clue
  the seat's later plays contradict (it played a stronger single since) was a voluntary pass and
  is dropped.
* A single played while ``next_has_one_card = highest-single`` bound the seat: it was its highest.
* A pass on a pair, triple or five-card hand: it held no play of that size that beats it (weighed
  by drawing a few guesses and keeping the one that contradicts the fewest such clues).

Single clues become a cap on the cards each seat may hold, and the guess is drawn exactly from the
deals that respect every cap: cards are dealt most constrained first (the fewest seats may hold
them, then strongest first), each to a seat that may hold it with probability proportional to the
cards that seat still needs. With caps only (sets of allowed cards nested by strength) that is
uniform over the consistent deals, since every choice leaves the later, less constrained cards the
same room. When the caps cannot all hold (a seat passed voluntarily earlier and the counts leave no
way), the constrained card goes to any seat that still needs cards.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ..deal import Deal, DealState
from ..events import CardsPlayed, DealStarted, Passed, TrickEnded
from ..generate import can_beat
from ..observation import Observation
from ..rules import Penalty, Ruleset
from ..singles import forced_single, single_two_out
from ..tables import RuleTables, tables_for
from .base import View, view_in_deal

Model = Callable[[View], int]
"""A model of the other players: the move (a mask, 0 for a pass) it makes from a view."""

ALL_CARDS = (1 << 52) - 1
CARDS_PER_CHECK_STEP = 3
"""Replaying one decision costs one rollout move plus one for every 3 cards in that seat's hand
then: the hand is new to the split cache, and splitting it grows with its size (profiled in pro's
search: 108 µs a replay on average against 56 µs a rollout move, far more early in the deal)."""
DRAW_STEPS = 1
"""Drawing one more guess (and checking its passes) costs about one rollout move."""


@dataclass(frozen=True, slots=True)
class PassClue:
    """Seat ``seat`` passed on a play of ``size`` cards with ``key`` while holding its present hand
    plus ``since`` (the cards it has played since). Evidence that it could not beat it."""

    seat: int
    size: int
    key: int
    since: int
    count: int
    """The seat's card count when it passed."""


@dataclass(frozen=True, slots=True)
class TopClue:
    """Seat ``seat``'s hand then (its present hand plus ``since``) held no single above ``key``."""

    seat: int
    key: int
    since: int


def _counts_before(observation: Observation) -> list[tuple[int, ...]]:
    """Every seat's card count before each history event (from the present counts and the plays)."""
    players = len(observation.cards_left)
    counts = list(observation.cards_left)
    before: list[tuple[int, ...]] = []
    for event in reversed(observation.history):
        if isinstance(event, CardsPlayed):
            counts[event.seat] += event.mask.bit_count()
        before.append(tuple(counts[:players]))
    before.reverse()
    return before


def read_clues(observation: Observation, ruleset: Ruleset) -> tuple[list[PassClue], list[TopClue]]:
    """The passes of the other seats (not automatic ones) and, under the highest-single rule, their
    forced singles, each with what that seat has played since."""
    tables = tables_for(ruleset)
    me = observation.seat
    counts = _counts_before(observation)
    raw: list[tuple[int, int, int, int, int]] = []  # (kind 0 pass / 1 top, seat, size, key, count)
    since: list[int] = []
    table_size = table_key = -1
    for index, event in enumerate(observation.history):
        if isinstance(event, CardsPlayed):
            for number, entry in enumerate(raw):
                if entry[1] == event.seat:
                    since[number] |= event.mask
            size = event.mask.bit_count()
            if size == 1 and event.seat != me and _bound_to_highest(tables, counts[index], event.seat):
                raw.append((1, event.seat, 1, event.key, 0))
                since.append(0)
            table_size, table_key = size, event.key
        elif isinstance(event, TrickEnded):
            table_size = table_key = -1
        elif isinstance(event, Passed) and not event.automatic and event.seat != me and table_size > 0:
            raw.append((0, event.seat, table_size, table_key, counts[index][event.seat]))
            since.append(0)
    passes = [PassClue(s, size, key, since[i], n) for i, (kind, s, size, key, n) in enumerate(raw) if kind == 0]
    tops = [TopClue(s, key, since[i]) for i, (kind, s, _, key, _) in enumerate(raw) if kind == 1]
    return passes, tops


def _bound_to_highest(tables: RuleTables, counts: tuple[int, ...], seat: int) -> bool:
    """Whether the highest-single rule bound ``seat`` (hands of the right counts: only the counts
    matter to the rule's home function)."""
    hands = [(1 << count) - 1 if count else 0 for count in counts]
    return hands[seat] != 0 and forced_single(tables, hands, seat) != 0


def _exempt_from_single_pass(ruleset: Ruleset, tables: RuleTables, count: int) -> int:
    """Cards a pass on a single says nothing about (see the module docstring)."""
    if ruleset.penalty is Penalty.NONE and ruleset.players > 2:
        return ALL_CARDS  # passing to keep control cards is sound play there: no clue
    exempt = 0
    if count == 1:
        for index in range(52):
            if single_two_out(tables, 1 << index, True):
                exempt |= 1 << index  # a lone card that may not go out on a single: the pass was forced
    return exempt


@dataclass(frozen=True, slots=True)
class MoveCheck:
    """One recent decision of another seat, to ask the model whether a guess explains it: the
    position before it (hands left out) and what that seat and every other has played since."""

    state: DealState
    seat: int
    move: int
    since: tuple[int, ...]
    steps: int
    """What replaying it costs, in rollout moves (see ``CARDS_PER_CHECK_STEP``)."""


def recent_moves(observation: Observation, ruleset: Ruleset, count: int) -> tuple[MoveCheck, ...]:
    """The last ``count`` decisions of the other seats (plays and passes the engine did not make),
    each with the public position it was made in, rebuilt by folding the public history."""
    history = observation.history
    if count <= 0 or not history or not isinstance(history[0], DealStarted):
        return ()
    me = observation.seat
    decisions = [
        index
        for index, event in enumerate(history)
        if (isinstance(event, CardsPlayed) or (isinstance(event, Passed) and not event.automatic)) and event.seat != me
    ][-count:]
    if not decisions:
        return ()
    wanted = set(decisions)
    players = ruleset.players
    deal = Deal(ruleset)
    found: list[tuple[DealState, int, int, int]] = []
    for index, event in enumerate(history):
        if index in wanted:
            assert isinstance(event, (CardsPlayed, Passed))
            found.append((deal.state(), event.seat, event.mask if isinstance(event, CardsPlayed) else 0, index))
        deal.apply(event)
    checks = []
    for state, seat, move, start in found:
        since = [0] * players
        for event in history[start:]:
            if isinstance(event, CardsPlayed):
                since[event.seat] |= event.mask
        held = observation.cards_left[seat] + since[seat].bit_count()
        checks.append(MoveCheck(state, seat, move, tuple(since), 1 + held // CARDS_PER_CHECK_STEP))
    return tuple(checks)


@dataclass(frozen=True, slots=True)
class Belief:
    """One seat's belief about the hidden hands at one decision; :meth:`sample` draws a guess."""

    seat: int
    hand: int
    fixed: tuple[int, ...]
    """Cards known to be in each seat's hand (the face-up card)."""
    need: tuple[int, ...]
    """Cards each seat still needs; one more entry for the undealt cards (any seat's own: 0)."""
    order: tuple[int, ...]
    """The cards to deal, most constrained first."""
    allowed: tuple[int, ...]
    """Per seat (and the undealt pile), the cards it may hold."""
    clues: tuple[PassClue, ...]
    """Passes on plays of more than one card, weighed by rejection."""
    tables: RuleTables
    tries: int
    ruleset: Ruleset
    checks: tuple[MoveCheck, ...] = ()
    model: Model | None = None

    @classmethod
    def of(
        cls, observation: Observation, ruleset: Ruleset, tries: int = 4, model: Model | None = None, moves: int = 0
    ) -> Belief:
        """The belief of ``observation.seat``. ``tries``: guesses drawn per sample to satisfy the
        passes on multi-card plays and the model (1: ignore them; passes on singles are always
        used). ``model`` and ``moves``: a guess should also explain the other seats' last ``moves``
        decisions as ``model`` would make them."""
        tables = tables_for(ruleset)
        players = ruleset.players
        me = observation.seat
        pool = observation.unseen
        fixed = [0] * players
        face_up = observation.face_up_card
        if face_up >= 0 and observation.face_up_seat not in (-1, me) and pool >> face_up & 1:
            fixed[observation.face_up_seat] |= 1 << face_up
            pool &= ~(1 << face_up)
        if players == 2 and observation.history and isinstance(observation.history[0], DealStarted):
            opening = observation.history[0].opening_card
            if opening >= 0:  # the opening card was the lowest dealt: every lower card stayed undealt
                pool &= tables.stronger_than[tables.strength[opening]] | 1 << opening
        need = [0 if seat == me else observation.cards_left[seat] - fixed[seat].bit_count() for seat in range(players)]
        need.append(max(0, pool.bit_count() - sum(need)))
        allowed = [ALL_CARDS] * (players + 1)
        passes, tops = read_clues(observation, ruleset)
        multi: list[PassClue] = []
        for clue in passes:
            if clue.size != 1:
                multi.append(clue)
                continue
            above = tables.stronger_than[clue.key + 1] & ~_exempt_from_single_pass(ruleset, tables, clue.count)
            if not clue.since & above:  # else it passed voluntarily: no clue
                allowed[clue.seat] &= ~above
        for top in tops:
            above = tables.stronger_than[top.key + 1]
            if not top.since & above:
                allowed[top.seat] &= ~above
        cards = [index for index in range(52) if pool >> index & 1]
        strength = tables.strength
        cards.sort(key=lambda i: (sum(1 for mask in allowed if mask >> i & 1), -strength[i]))
        checks = recent_moves(observation, ruleset, moves) if model is not None else ()
        return cls(
            me,
            observation.hand,
            tuple(fixed),
            tuple(need),
            tuple(cards),
            tuple(allowed),
            tuple(multi),
            tables,
            tries,
            ruleset,
            checks,
            model,
        )

    def sample(self, rng: random.Random) -> tuple[int, ...]:
        """A guess of every seat's hand (own hand kept), drawn from the belief."""
        return self.sample_counted(rng)[0]

    def sample_counted(self, rng: random.Random) -> tuple[tuple[int, ...], int]:
        """A guess, and what it cost in rollout steps (each decision the model replayed, and
        ``DRAW_STEPS`` a guess drawn after the first), which the search charges to its budget.

        Of ``tries`` guesses the one that contradicts the fewest passes and recent decisions wins.
        A later guess stops being checked as soon as it is no better than the best so far, so a
        poor guess costs a replay or two rather than all of them: more guesses for the same cost."""
        hands = self._draw(rng)
        if not self.clues and not self.checks:
            return hands, 0
        wrong, asked = self._wrong(hands, None)
        for _ in range(self.tries - 1):
            if not wrong:
                break
            other = self._draw(rng)
            other_wrong, cost = self._wrong(other, wrong)
            asked += cost + DRAW_STEPS
            if other_wrong < wrong:
                hands, wrong = other, other_wrong
        return hands, asked

    def _wrong(self, hands: tuple[int, ...], bound: int | None) -> tuple[int, int]:
        """The guess's contradictions (passes, then recent decisions), counted until they reach
        ``bound``, and the steps the replays cost."""
        wrong = self.violations(hands)
        model = self.model
        if model is None:
            return wrong, 0
        cost = 0
        ruleset = self.ruleset
        for check in reversed(self.checks):  # the latest first: the hands then are nearest the guess
            if bound is not None and wrong >= bound:
                break
            then = tuple(hand | since for hand, since in zip(hands, check.since, strict=True))
            view = view_in_deal(Deal.from_state(ruleset, check.state._replace(hands=then)))
            wrong += model(view) != check.move
            cost += check.steps
        return wrong, cost

    def surprises(self, hands: tuple[int, ...]) -> int:
        """How many of the checked recent decisions the model would not have made with the guessed
        hands (each seat's hand then: its guessed hand plus what it has played since)."""
        return self._wrong(hands, None)[0] - self.violations(hands)

    def violations(self, hands: tuple[int, ...]) -> int:
        """How many passes on multi-card plays the guess contradicts (that seat could have beaten)."""
        tables = self.tables
        return sum(1 for clue in self.clues if can_beat(hands[clue.seat] | clue.since, clue.size, clue.key, tables))

    def _draw(self, rng: random.Random) -> tuple[int, ...]:
        need = list(self.need)
        hands = list(self.fixed)
        hands.append(0)
        allowed = self.allowed
        seats = range(len(need))
        for card in self.order:
            bit = 1 << card
            total = 0
            for seat in seats:
                if need[seat] and allowed[seat] & bit:
                    total += need[seat]
            if not total:  # the caps cannot all hold: any seat that still needs a card
                for seat in seats:
                    total += need[seat]
                if not total:
                    break
                pick = rng.randrange(total)
                for seat in seats:
                    pick -= need[seat]
                    if pick < 0:
                        break
            else:
                pick = rng.randrange(total)
                for seat in seats:
                    if need[seat] and allowed[seat] & bit:
                        pick -= need[seat]
                        if pick < 0:
                            break
            hands[seat] |= bit
            need[seat] -= 1
        hands[self.seat] = self.hand
        hands.pop()  # the undealt cards
        return tuple(hands)
