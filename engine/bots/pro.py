"""The ``pro`` level: determinized Monte-Carlo search over the cards the seat cannot see.

For one decision:

1. The ``great`` policy ranks the moves; the top ``candidates`` (pass included when allowed) are
   searched, the rest pruned.
2. ``worlds`` guesses of the hidden hands are sampled consistently with what the seat knows: every
   seat's card count, the played cards, the 3-player face-up card (it stays with its holder), and
   with 2 players the cards below the opening card (never dealt).
3. In every world each candidate is played, then the deal is played out by the ``great`` policy
   for every seat (common random numbers: all candidates meet the same worlds). A rollout's value
   is the seat's score under the ruleset: minus its penalty under ``penalty`` settlement, its
   zero-sum score, or 1 for a win under ``penalty = none``.
4. The candidate with the best mean wins, but ``great``'s own choice is kept unless another
   candidate beats it by more than ``margin`` standard errors of the paired difference.

Budget: ``simulations`` rollouts per decision in total (deterministic given the seed); optionally
``max_ms`` stops sampling new worlds once that much time has passed (then the result depends on
the machine's speed).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from ..deal import Deal, Move
from ..events import CardsPlayed, DealStarted, Passed, TrickEnded
from ..generate import CARD_MASK, can_beat
from ..observation import Observation
from ..rules import Penalty, Ruleset, Settlement
from ..tables import tables_for
from .base import View, move_of, state_with_hands, view_in_deal, view_of
from .endgame import DEFAULT_NODE_BUDGET, EndgameSolver, position_of
from .heuristic import OrderFn, finalize, great_order

DEFAULT_SIMULATIONS = 400
DEFAULT_STEPS = 2000
DEFAULT_CANDIDATES = 4
DEFAULT_ENDGAME_CARDS = 14
NODES_PER_STEP = 4
"""Endgame positions searched per rollout step charged to the budget: one position costs about a
quarter of one ``great`` rollout move (measured on classic endgames of 12-15 cards)."""


@dataclass(frozen=True, slots=True)
class Budget:
    simulations: int = DEFAULT_SIMULATIONS
    """At most this many rollouts per decision, shared among the candidates."""
    steps: int | None = DEFAULT_STEPS
    """Stop sampling new worlds once the rollouts have made this many moves in total (short
    endgame rollouts get more worlds than long opening ones); deterministic, unlike ``max_ms``."""
    max_ms: float | None = None
    """Stop sampling new worlds after this many milliseconds (None: no clock, fully deterministic)."""
    candidates: int = DEFAULT_CANDIDATES
    margin: float = 1.0
    """Standard errors by which a candidate must beat the rollout policy's own choice."""
    pass_tries: int = 4
    """Guesses drawn per world to find hands consistent with the other seats' passes (1: ignore
    passes)."""
    endgame_cards: int = DEFAULT_ENDGAME_CARDS
    """Solve each world exactly (:mod:`.endgame`) instead of rolling it out when the hands hold at
    most this many cards in all (0: never)."""
    endgame_nodes: int = DEFAULT_NODE_BUDGET
    """New positions one world's exact solve may visit; past it that world is rolled out, and so
    is every later world of the decision. ``NODES_PER_STEP`` positions count as one rollout step."""


def sample_hands(observation: Observation, ruleset: Ruleset, rng: random.Random) -> tuple[int, ...]:
    """One guess of every seat's hand, consistent with the observation (own hand kept)."""
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
            strength = tables_for(ruleset).strength
            below = 0
            for index in range(52):
                if strength[index] < strength[opening]:
                    below |= 1 << index
            pool &= ~below
    cards = [index for index in range(52) if pool >> index & 1]
    rng.shuffle(cards)
    hands = []
    position = 0
    for seat in range(players):
        if seat == me:
            hands.append(observation.hand)
            continue
        hand = fixed[seat]
        need = observation.cards_left[seat] - hand.bit_count()
        for index in cards[position : position + need]:
            hand |= 1 << index
        position += need
        hands.append(hand)
    return tuple(hands)


@dataclass(frozen=True, slots=True)
class PassClue:
    """Seat ``seat`` passed on a play of ``size`` cards with ``key`` while holding its present hand
    plus ``since`` (the cards it has played since). Soft evidence that it could not beat it."""

    seat: int
    size: int
    key: int
    since: int


def pass_clues(observation: Observation) -> list[PassClue]:
    """Every pass by another seat in the public history, with what that seat has played since."""
    raw: list[tuple[int, int, int]] = []
    table_size = table_key = -1
    played_after: list[list[int]] = []
    for event in observation.history:
        if isinstance(event, CardsPlayed):
            table_size, table_key = event.mask.bit_count(), event.key
            for index, (seat, _, _) in enumerate(raw):
                if seat == event.seat:
                    played_after[index][0] |= event.mask
        elif isinstance(event, TrickEnded):
            table_size = table_key = -1
        elif isinstance(event, Passed) and not event.automatic and event.seat != observation.seat and table_size > 0:
            raw.append((event.seat, table_size, table_key))
            played_after.append([0])
    return [PassClue(seat, size, key, played_after[i][0]) for i, (seat, size, key) in enumerate(raw)]


def violations(hands: tuple[int, ...], clues: list[PassClue], ruleset: Ruleset) -> int:
    """How many passes the guessed hands contradict (the seat could have beaten the table)."""
    tables = tables_for(ruleset)
    return sum(1 for clue in clues if can_beat(hands[clue.seat] | clue.since, clue.size, clue.key, tables))


def utility(ruleset: Ruleset, deal: Deal, seat: int) -> float:
    """What the seat wants to maximise: minus its penalty, its zero-sum score, or a win."""
    if ruleset.penalty is Penalty.NONE:
        return 1.0 if deal.winner == seat else 0.0
    score = deal.scores[seat]
    return float(score) if ruleset.settlement is Settlement.ZERO_SUM else -float(score)


def play_out(deal: Deal, policy: OrderFn, max_moves: int = 400) -> int:
    """Play the deal to its end with ``policy`` at every seat (each sees its own hand only);
    returns the number of moves made."""
    for made in range(max_moves):
        if deal.over:
            return made
        view = view_in_deal(deal)
        mask = finalize(view, policy(view))
        if mask:
            deal.play_mask(view.seat, mask)
        else:
            deal.pass_turn(view.seat)
    return max_moves


class ProBot:
    level = "pro"

    def __init__(self, budget: Budget | None = None, policy: OrderFn = great_order) -> None:
        self.budget = budget or Budget()
        self.policy = policy
        self.last_rollouts = 0
        """Rollouts run by the last decision (for tests and measurements)."""
        self.last_steps = 0
        """Rollout moves made, plus endgame positions visited, by the last decision."""
        self.last_solved = 0
        """Worlds of the last decision valued by exact search rather than rollouts."""

    def candidates(self, view: View) -> list[int]:
        legal = {e & CARD_MASK for e in view.legal}
        out: list[int] = []
        for mask in self.policy(view):
            if ((mask == 0 and view.can_pass) or mask in legal) and mask not in out:
                out.append(mask)
            if len(out) >= self.budget.candidates:
                break
        if not out:
            out.append(finalize(view, []))
        return out

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        view = view_of(observation, ruleset)
        return move_of(view, self.search(observation, ruleset, view, rng))

    def search(self, observation: Observation, ruleset: Ruleset, view: View, rng: random.Random) -> int:
        self.last_rollouts = 0
        self.last_steps = 0
        self.last_solved = 0
        cands = self.candidates(view)
        if len(cands) == 1 or cands[0] == view.hand:
            return cands[0]
        budget = self.budget
        started = time.perf_counter()
        clues = pass_clues(observation) if budget.pass_tries > 1 else []
        totals = [0.0] * len(cands)
        diff_sq = [0.0] * len(cands)
        done = 0
        solver = None
        if sum(observation.cards_left) <= budget.endgame_cards and observation.opening_card < 0:
            # One solver (one transposition table) per decision: dropped when the decision ends.
            solver = EndgameSolver(ruleset, budget.endgame_nodes)
        for _ in range(max(1, budget.simulations // len(cands))):
            if done and self._out_of_budget(started):
                break
            hands = self._world(observation, ruleset, clues, rng)
            world = Deal.from_state(ruleset, state_with_hands(observation, hands))
            values = self._solved(solver, world, cands) if solver else None
            if values is None:
                solver = None  # too big for the node budget: this decision's worlds are rolled out
                values = self._rollouts(world, view.seat, cands)
            for index, value in enumerate(values):
                totals[index] += value
                diff_sq[index] += (value - values[0]) ** 2
            done += 1
        return cands[self._pick(totals, diff_sq, done)]

    def _out_of_budget(self, started: float) -> bool:
        budget = self.budget
        if budget.max_ms is not None and (time.perf_counter() - started) * 1000 > budget.max_ms:
            return True
        return budget.steps is not None and self.last_steps >= budget.steps

    def _world(
        self, observation: Observation, ruleset: Ruleset, clues: list[PassClue], rng: random.Random
    ) -> tuple[int, ...]:
        """One guess of the hidden hands. Soft use of passes: of a few guesses keep the one that
        contradicts the fewest."""
        hands = sample_hands(observation, ruleset, rng)
        if not clues:
            return hands
        wrong = violations(hands, clues, ruleset)
        for _ in range(self.budget.pass_tries - 1):
            if not wrong:
                break
            other = sample_hands(observation, ruleset, rng)
            other_wrong = violations(other, clues, ruleset)
            if other_wrong < wrong:
                hands, wrong = other, other_wrong
        return hands

    def _solved(self, solver: EndgameSolver, world: Deal, cands: list[int]) -> list[float] | None:
        """Each candidate's exact value in this world (best play from every seat after it), or
        None when the world is too big for the node budget."""
        position = position_of(world)
        if position is None:
            return None
        values = solver.candidate_values(position, cands)
        self.last_steps += -(-solver.nodes // NODES_PER_STEP)
        if values is not None:
            self.last_solved += 1
        return values

    def _rollouts(self, base: Deal, seat: int, cands: list[int]) -> list[float]:
        """Each candidate played in the same world, then the deal played out by the policy."""
        values = []
        for mask in cands:
            deal = base.clone()
            if mask:
                deal.play_mask(seat, mask)
            else:
                deal.pass_turn(seat)
            self.last_steps += play_out(deal, self.policy) + 1
            values.append(utility(base.ruleset, deal, seat))
            self.last_rollouts += 1
        return values

    def _pick(self, totals: list[float], diff_sq: list[float], done: int) -> int:
        """The candidate with the best mean, if it beats the first by ``margin`` standard errors
        of the paired difference; else the first (the policy's own choice)."""
        best = 0
        best_mean = totals[0] / done
        for index in range(1, len(totals)):
            mean = totals[index] / done
            mean_diff = mean - totals[0] / done
            var = max(diff_sq[index] / done - mean_diff * mean_diff, 0.0)
            se = math.sqrt(var / done) if done > 1 else math.inf
            if mean > best_mean and mean_diff > self.budget.margin * se:
                best, best_mean = index, mean
        return best
