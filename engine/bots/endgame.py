"""Exact endgame search for ``pro``: once few cards remain, one sampled world (every hand known) is
solved to the end instead of being rolled out.

Formulation: **max^n**. Every seat picks the move that maximises its own deal utility (the same
utility as ``pro``'s rollouts: minus its penalty, its zero-sum score, or 1 for a win under
``penalty = none``); a position's value is the vector of every seat's utility. Paranoid search
(every other seat minimising the searching seat's value) was rejected: at a 3- or 4-seat table the
opponents also compete with each other, and the rollouts it replaces assume each plays for itself
(``great``), so a paranoid value would be pessimistic in a way no opponent plays. With two seats
both formulations choose the same moves. Two conventions make the values well defined:

* a seat that can go out does (going out now is at least as good for it as anything later: the
  other hands only shrink, so their penalties, which it collects or avoids paying, only drop);
* ties go to the first move in the search order: plays of more cards first, within a size the
  lowest first, pass last. The same order makes the cut-off exact: a seat stops looking once a
  move reaches the best utility it could ever have (a win under ``penalty`` settlement or
  ``penalty = none``; under zero-sum, the others' present penalties, collected by a win).

Everything is integer masks: :func:`~bigtwo.engine.generate.all_plays` and
:func:`~bigtwo.engine.generate.plays_of_size` generate, the two rules of
:mod:`~bigtwo.engine.singles` filter, and the trick rules (passing, a trick won when every other seat
has passed, ``out-until-trick-ends``, auto-pass on a play no unplayed card can beat, going out ends
the deal) are replayed as :class:`~bigtwo.engine.deal.Deal` applies them; terminal values use
:func:`~bigtwo.engine.scoring.penalty_for`. ``tests/test_endgame.py`` replays solved lines in real
deals under every preset and table size. A position whose opening card is still to be played, or a
finished deal, is refused (``position_of`` returns None).

Cost: a transposition table (a plain dictionary owned by one solver, which ``pro`` makes per
decision and drops after it; emptied when it reaches ``memo_limit``) and a node budget per call: a
call that would visit more than ``node_budget`` new positions gives up (``candidate_values``
returns None) and ``pro`` rolls that world out instead.
"""

from __future__ import annotations

from typing import NamedTuple

from ..deal import Deal
from ..generate import CARD_MASK, MASK_BITS, all_plays, can_beat, plays_of_size
from ..rules import AfterPass, Penalty, Ruleset, Settlement, Switch
from ..scoring import penalty_for, twos_in
from ..singles import forced_single, single_two_out
from ..tables import tables_for

FULL_DECK = (1 << 52) - 1
DEFAULT_NODE_BUDGET = 1500
"""New positions one world's solve may visit before it gives up (then ``pro`` rolls out)."""
DEFAULT_MEMO_LIMIT = 1 << 17
"""Positions a solver remembers (its dictionary is emptied when full)."""

Values = tuple[float, ...]
"""Every seat's utility, in seat order."""


class Position(NamedTuple):
    """A fully known position, as masks. ``table_size`` 0 means the seat to act leads."""

    hands: tuple[int, ...]
    to_act: int
    table_size: int
    table_key: int
    last_player: int
    passed: int
    undealt: int
    """Cards in no hand and never played (two players): they still stop an auto-pass."""


def position_of(deal: Deal) -> Position | None:
    """The deal's position, or None when the solver does not handle it (the opening card is still
    to be played, or the deal is over)."""
    if deal.winner >= 0 or deal.opening_card >= 0:
        return None
    held = 0
    for hand in deal.hands:
        held |= hand
    table = deal.table
    return Position(
        hands=tuple(deal.hands),
        to_act=deal.to_act,
        table_size=table.size if table else 0,
        table_key=table.key if table else -1,
        last_player=deal.last_player if table else deal.to_act,
        passed=deal.passed,
        undealt=FULL_DECK & ~deal.played & ~held,
    )


class OutOfNodes(Exception):
    """The node budget of one call is spent."""


Entry = tuple[Values, int]
"""A solved position: its values and the move chosen there (a mask; 0 = pass)."""


class EndgameSolver:
    """max^n search of fully known positions under one ruleset (see the module docstring)."""

    def __init__(
        self, ruleset: Ruleset, node_budget: int = DEFAULT_NODE_BUDGET, memo_limit: int = DEFAULT_MEMO_LIMIT
    ) -> None:
        self.ruleset = ruleset
        self.tables = tables_for(ruleset)
        self.players = ruleset.players
        self.node_budget = node_budget
        self.memo_limit = memo_limit
        self.nodes = 0
        """New positions visited by the last call."""
        self.total_nodes = 0
        """New positions visited since the solver was made."""
        self._may_play_again = ruleset.after_pass is AfterPass.MAY_PLAY_AGAIN
        self._auto_pass = ruleset.auto_pass is Switch.ON
        self._win_only = ruleset.penalty is Penalty.NONE
        self._zero_sum = ruleset.settlement is Settlement.ZERO_SUM
        # The best utility a seat can ever reach, for the cut-off (exact: later moves could only
        # tie, and ties go to the first): a win, worth 1 under penalty = none and 0 under penalty
        # settlement; under zero-sum the others' present penalties (computed per position).
        self._ceiling = 1.0 if self._win_only else 0.0
        # penalty[cards left][2s left], from the engine's own schedule: looked up at every leaf.
        self._penalty = tuple(tuple(penalty_for(left, twos, ruleset)[2] for twos in range(5)) for left in range(53))
        self._memo: dict[tuple[int, ...], Entry] = {}
        self._undealt = 0

    def clear(self) -> None:
        self._memo.clear()

    # -- entry points ----------------------------------------------------------------------------

    def solve(self, position: Position) -> Values | None:
        """The position's value vector, or None when the node budget ran out."""
        self._start(position)
        try:
            return self._root(position)[0]
        except OutOfNodes:
            return None

    def candidate_values(self, position: Position, masks: list[int]) -> list[float] | None:
        """The value to the seat to act of each of its moves (masks, 0 = pass), each followed by
        best play from everyone; None when the node budget ran out. Every move must be legal."""
        self._start(position)
        seat = position.to_act
        try:
            return [self._after_move(position, seat, mask)[seat] for mask in masks]
        except OutOfNodes:
            return None

    def best_move(self, position: Position) -> int | None:
        """The move the search chooses for the seat to act (a mask, 0 = pass), None when the node
        budget ran out."""
        self._start(position)
        try:
            return self._root(position)[1]
        except OutOfNodes:
            return None

    def moves(self, position: Position) -> list[int]:
        """The moves the search considers for the seat to act, in its order (masks, 0 = pass)."""
        return [
            e & CARD_MASK for e in self._plays(position.hands, position.to_act, position.table_size, position.table_key)
        ] + ([0] if position.table_size else [])

    # -- search ----------------------------------------------------------------------------------

    def _start(self, position: Position) -> None:
        self.nodes = 0
        if self._undealt != position.undealt:
            self._memo.clear()  # auto-pass reads the undealt cards, which the memo's keys omit
            self._undealt = position.undealt

    def _root(self, position: Position) -> Entry:
        hands, seat, size, key, last, passed, _ = position
        return self._search(hands, seat, size, key, last, passed)

    def _after_move(self, position: Position, seat: int, mask: int) -> Values:
        hands, _, size, key, last, passed, _ = position
        if mask == 0:
            return self._after_pass(hands, seat, size, key, last, passed)
        encoded = self._encoded(mask, hands[seat], size, key)
        return self._after_play(hands, seat, encoded, passed)

    def _encoded(self, mask: int, hand: int, size: int, key: int) -> int:
        plays = all_plays(hand, self.tables) if size == 0 else plays_of_size(hand, size, self.tables, key)
        for encoded in plays:
            if encoded & CARD_MASK == mask:
                return encoded
        raise ValueError("not a play of this hand that beats the table")

    def _plays(self, hands: tuple[int, ...], seat: int, size: int, key: int) -> list[int]:
        """Legal plays (encoded) in search order: more cards first, lowest first within a size."""
        tables = self.tables
        hand = hands[seat]
        if size == 0:
            plays = plays_of_size(hand, 5, tables)
            plays.sort()
            for width in (3, 2, 1):
                more = plays_of_size(hand, width, tables)
                more.sort()
                plays += more
        else:
            if single_two_out(tables, hand, True):
                return []
            plays = plays_of_size(hand, size, tables, key)
            plays.sort()
        forced = forced_single(tables, hands, seat)
        if forced:
            plays = [e for e in plays if (e & CARD_MASK).bit_count() != 1 or e & CARD_MASK == forced]
        return plays

    def _search(self, hands: tuple[int, ...], seat: int, size: int, key: int, last: int, passed: int) -> Entry:
        state = (*hands, seat, size, key, last, passed)
        memo = self._memo
        entry = memo.get(state)
        if entry is not None:
            return entry
        if self.nodes >= self.node_budget:
            raise OutOfNodes
        self.nodes += 1
        self.total_nodes += 1
        hand = hands[seat]
        plays = self._plays(hands, seat, size, key)
        best: Values | None = None
        best_move = 0
        for encoded in plays:
            if encoded & CARD_MASK == hand:  # a seat that can go out does
                best, best_move = self._terminal(hands, seat), hand
                break
        else:
            ceiling = self._ceiling
            if self._zero_sum:  # a win collects the others' penalties, which only shrink from here
                penalty = self._penalty
                ceiling = float(sum(penalty[h.bit_count()][twos_in(h)] for s, h in enumerate(hands) if s != seat))
            for encoded in plays:
                values = self._after_play(hands, seat, encoded, passed)
                if best is None or values[seat] > best[seat]:
                    best, best_move = values, encoded & CARD_MASK
                    if values[seat] >= ceiling:
                        break
            else:
                if size:
                    values = self._after_pass(hands, seat, size, key, last, passed)
                    if best is None or values[seat] > best[seat]:
                        best, best_move = values, 0
        assert best is not None, "a leader always has a play"
        if len(memo) >= self.memo_limit:
            memo.clear()
        entry = memo[state] = (best, best_move)
        return entry

    def _after_play(self, hands: tuple[int, ...], seat: int, encoded: int, passed: int) -> Values:
        mask = encoded & CARD_MASK
        left = hands[seat] & ~mask
        after = (*hands[:seat], left, *hands[seat + 1 :])
        if not left:
            return self._terminal(after, seat)
        size = mask.bit_count()
        key = encoded >> MASK_BITS
        if self._may_play_again:
            passed = 0
        if self._auto_pass:
            unplayed = self._undealt
            for hand in after:
                unplayed |= hand
            if not can_beat(unplayed, size, key, self.tables):
                return self._search(after, seat, 0, -1, seat, 0)[0]  # everyone else passes at once
        return self._search(after, self._next_in_trick(seat, passed), size, key, seat, passed)[0]

    def _after_pass(self, hands: tuple[int, ...], seat: int, size: int, key: int, last: int, passed: int) -> Values:
        passed |= 1 << seat
        if passed.bit_count() < self.players - 1:
            return self._search(hands, self._next_in_trick(seat, passed), size, key, last, passed)[0]
        return self._search(hands, last, 0, -1, last, 0)[0]  # the trick's owner leads the next one

    def _next_in_trick(self, seat: int, passed: int) -> int:
        players = self.players
        if self._may_play_again:
            return (seat + 1) % players
        for offset in range(1, players):
            other = (seat + offset) % players
            if not passed >> other & 1:
                return other
        return seat

    def _terminal(self, hands: tuple[int, ...], winner: int) -> Values:
        """Every seat's utility once ``winner`` has gone out (the rest hold ``hands``)."""
        if self._win_only:
            return tuple(1.0 if seat == winner else 0.0 for seat in range(self.players))
        penalty = self._penalty
        penalties = [
            0 if seat == winner else penalty[hand.bit_count()][twos_in(hand)] for seat, hand in enumerate(hands)
        ]
        if self._zero_sum:
            collected = float(sum(penalties))
            return tuple(collected if seat == winner else -float(p) for seat, p in enumerate(penalties))
        return tuple(-float(p) for p in penalties)


def line_of(solver: EndgameSolver, deal: Deal, max_moves: int = 400) -> list[tuple[int, int]]:
    """The line the search expects from ``deal``'s position, as (seat, mask) pairs (mask 0 =
    pass), replayed in a clone of the deal; for tests and for reading a solved position."""
    line: list[tuple[int, int]] = []
    live = deal.clone()
    for _ in range(max_moves):
        position = position_of(live)
        if position is None:
            break
        move = solver.best_move(position)
        if move is None:
            raise OutOfNodes
        seat = live.to_act
        line.append((seat, move))
        if move:
            live.play_mask(seat, move)
        else:
            live.pass_turn(seat)
    return line
