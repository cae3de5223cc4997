"""The ``pro`` level: determinized Monte-Carlo search over the cards the seat cannot see.

For one decision:

1. The ``great`` policy ranks the moves; the top ``candidates`` (pass included when allowed) are
   searched, the rest pruned.
2. Guesses of the hidden hands (worlds) are drawn from the seat's belief (:mod:`.belief`): every
   seat's card count, the played cards, the 3-player face-up card (it stays with its holder), with
   2 players the cards below the opening card (never dealt), what the other seats' passes say, and
   a preference for guesses under which the rollout policy would have made the other seats' last
   ``judged_moves`` decisions.
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
from ..generate import CARD_MASK
from ..observation import Observation
from ..rules import Penalty, Ruleset, Settlement
from .base import View, move_of, state_with_hands, view_in_deal, view_of
from .belief import Belief
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
    judged_moves: int = 6
    """A guess should explain the other seats' last this many decisions as the rollout policy would
    make them (:mod:`.belief`); the replays are charged to ``steps`` (0: off)."""
    endgame_cards: int = DEFAULT_ENDGAME_CARDS
    """Solve each world exactly (:mod:`.endgame`) instead of rolling it out when the hands hold at
    most this many cards in all (0: never)."""
    endgame_nodes: int = DEFAULT_NODE_BUDGET
    """New positions one world's exact solve may visit; past it that world is rolled out, and so
    is every later world of the decision. ``NODES_PER_STEP`` positions count as one rollout step."""


def sample_hands(observation: Observation, ruleset: Ruleset, rng: random.Random) -> tuple[int, ...]:
    """One guess of every seat's hand, drawn from the seat's belief (:mod:`.belief`; own hand kept)."""
    return Belief.of(observation, ruleset).sample(rng)


def utility(ruleset: Ruleset, deal: Deal, seat: int) -> float:
    """What the seat wants to maximise: minus its penalty, its zero-sum score, or a win."""
    if ruleset.penalty is Penalty.NONE:
        return 1.0 if deal.winner == seat else 0.0
    score = deal.scores[seat]
    return float(score) if ruleset.settlement is Settlement.ZERO_SUM else -float(score)


def legal_candidates(view: View, policy: OrderFn, count: int) -> list[int]:
    """The policy's first ``count`` distinct moves the seat may make (0, a pass, when it may pass)."""
    legal = {e & CARD_MASK for e in view.legal}
    out: list[int] = []
    for mask in policy(view):
        if ((mask == 0 and view.can_pass) or mask in legal) and mask not in out:
            out.append(mask)
        if len(out) >= count:
            break
    return out


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
        self.last_means: tuple[float, ...] = ()
        """Each candidate's mean value in the last decision's search (empty when it did not search)."""

    def candidates(self, view: View) -> list[int]:
        return legal_candidates(view, self.policy, self.budget.candidates) or [finalize(view, [])]

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        view = view_of(observation, ruleset)
        return move_of(view, self.search(observation, ruleset, view, rng))

    def search(self, observation: Observation, ruleset: Ruleset, view: View, rng: random.Random) -> int:
        self.last_rollouts = 0
        self.last_steps = 0
        self.last_solved = 0
        self.last_means = ()
        cands = self.candidates(view)
        if len(cands) == 1 or cands[0] == view.hand:
            return cands[0]
        budget = self.budget
        started = time.perf_counter()
        belief = Belief.of(observation, ruleset, budget.pass_tries, self._model, budget.judged_moves)
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
            hands, asked = belief.sample_counted(rng)
            self.last_steps += asked
            world = Deal.from_state(ruleset, state_with_hands(observation, hands))
            values = self._solved(solver, world, cands) if solver else None
            if values is None:
                solver = None  # too big for the node budget: this decision's worlds are rolled out
                values = self._rollouts(world, view.seat, cands)
            for index, value in enumerate(values):
                totals[index] += value
                diff_sq[index] += (value - values[0]) ** 2
            done += 1
        self.last_means = tuple(total / done for total in totals)
        return cands[self._pick(totals, diff_sq, done)]

    def _model(self, view: View) -> int:
        return finalize(view, self.policy(view))

    def _out_of_budget(self, started: float) -> bool:
        budget = self.budget
        if budget.max_ms is not None and (time.perf_counter() - started) * 1000 > budget.max_ms:
            return True
        return budget.steps is not None and self.last_steps >= budget.steps

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
