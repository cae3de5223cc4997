"""Hand planning for the heuristic bots: split a hand into plays (fewest plays first, then keep
high cards single and low cards inside combinations), and count cards to know which plays no
unseen card can beat ("masters").

Splits are cached by hand: in a rollout a hand is asked about many times between two of its own
plays. The cache is bounded whatever the rulesets and hands asked about (a service's bots take any
ruleset): :data:`SPLITS_KEPT` splits in all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..cache import BoundedCache
from ..generate import CARD_MASK, MASK_BITS, all_plays, can_beat
from ..rules import Ruleset
from ..tables import RuleTables, tables_for

PLAY_COST = 40
"""Cost of one play in a split; the lowness terms below never add up to one play."""

SPLITS_KEPT = 1 << 15
"""Splits kept, all rulesets together: many times the distinct hands one pro decision or one
great-level deal asks about, so the bound costs few hits."""

_SPLITS = BoundedCache[int, tuple[RuleTables, tuple[tuple[int, ...], int]]]("engine.bots.plan.splits", SPLITS_KEPT)
"""hand -> (the rule tables it was split under, its split). Keyed by the hand alone so that a hit is
one probe: a hand split under other rules is a miss and is split again (a 52-bit hand seldom
recurs across the rulesets of one process)."""

FIVE_CHECK_POOL = 24
"""Above this many unseen cards no five-card hand counts as a master (cheap, nearly always true)."""


def rank_of(index: int) -> int:
    return index >> 2


def lowest_rank(mask: int) -> int:
    return ((mask & -mask).bit_length() - 1) >> 2


def highest_rank(mask: int) -> int:
    return (mask.bit_length() - 1) >> 2


def lowness(encoded: int) -> int:
    """How weak a play is as something to be stuck with (0 for five-card hands)."""
    mask = encoded & CARD_MASK
    size = mask.bit_count()
    if size >= 5:
        return 0
    rank = highest_rank(mask)
    if size == 1:
        return 12 - rank
    return (12 - rank) // 2


def split(hand: int, tables: RuleTables) -> tuple[tuple[int, ...], int]:
    """(plays, cost) for ``hand``: plays encoded ``key << 52 | mask``, strongest kinds first.

    Cost = PLAY_COST per play + the lowness of each play: fewest plays first, then high singles
    kept and low cards used inside combinations."""
    entry = _SPLITS.get(hand)
    if entry is not None and entry[0] is tables:
        return entry[1]
    result = _split(hand, tables)
    _SPLITS.put(hand, (tables, result))
    return result


def _split(hand: int, tables: RuleTables) -> tuple[tuple[int, ...], int]:
    if hand == 0:
        return (), 0
    best, memo = _search(hand, tables)
    try:
        return _ordered(best(hand))
    finally:
        memo.clear()


def rest_costs(hand: int, removed: Sequence[int], tables: RuleTables) -> list[int]:
    """``split(hand & ~mask, tables)[1]`` for every mask of ``removed`` (each inside ``hand``), from
    one search: a play of part of the hand is a play of the hand, so the rests share their
    sub-problems (the opening lead and a follow that must break a combination ask about many
    rests of one hand). Every split found is cached as :func:`split` caches it."""
    if not removed:
        return []
    best, memo = _search(hand, tables)
    costs: list[int] = []
    try:
        for mask in removed:
            rest = hand & ~mask
            entry = _SPLITS.get(rest)
            if entry is None or entry[0] is not tables:
                entry = (tables, _ordered(best(rest)) if rest else ((), 0))
                _SPLITS.put(rest, entry)
            costs.append(entry[1][1])
    finally:
        memo.clear()
    return costs


def _ordered(found: tuple[int, tuple[int, ...]]) -> tuple[tuple[int, ...], int]:
    cost, plays = found
    return tuple(sorted(plays, key=lambda e: (-(e & CARD_MASK).bit_count(), e >> MASK_BITS))), cost


def _search(
    hand: int, tables: RuleTables
) -> tuple[Callable[[int], tuple[int, tuple[int, ...]]], dict[int, tuple[int, tuple[int, ...]]]]:
    """The cheapest split of any part of ``hand`` (a function) and its memo, which the caller must
    empty when done (the function refers to itself through it: a cycle)."""
    containing: dict[int, list[tuple[int, int]]] = {}
    for encoded in all_plays(hand, tables):
        mask = encoded & CARD_MASK
        low = mask & -mask
        containing.setdefault(low, []).append((encoded, PLAY_COST + lowness(encoded)))

    memo: dict[int, tuple[int, tuple[int, ...]]] = {0: (0, ())}

    def best(rest: int) -> tuple[int, tuple[int, ...]]:
        lowest = rest & -rest
        found_cost = -1
        found: tuple[int, ...] = ()
        for encoded, cost in containing.get(lowest, ()):
            mask = encoded & CARD_MASK
            if mask & rest != mask:
                continue
            left = rest & ~mask
            sub = memo.get(left)
            if sub is None:
                sub = best(left)
            total = cost + sub[0]
            if found_cost < 0 or total < found_cost:
                found_cost, found = total, (encoded, *sub[1])
        memo[rest] = answer = (found_cost, found)
        return answer

    return best, memo


def split_of(hand: int, ruleset: Ruleset) -> tuple[tuple[int, ...], int]:
    return split(hand, tables_for(ruleset))


_NIBBLE_COUNT = tuple(n.bit_count() for n in range(16))


class Masters:
    """Card counting for one position: which plays no combination of ``pool`` (the unseen cards)
    can beat. Singles, pairs and triples compare with the pool's best; five-card hands ask
    :func:`~bigtwo.engine.generate.can_beat` once per key."""

    __slots__ = ("_fives", "pool", "tables", "top_pair", "top_single", "top_triple")

    def __init__(self, pool: int, tables: RuleTables) -> None:
        self.pool = pool
        self.tables = tables
        self.top_single = -1
        self.top_pair = -1
        self.top_triple = -1
        self._fives: dict[int, bool] = {}
        best_suit = tables.nibble_top  # per 4-bit suit pattern, its strongest suit's strength
        triples = tables.triples_allowed
        for rank in range(12, -1, -1):
            nibble = pool >> (4 * rank) & 15
            if not nibble:
                continue
            if self.top_single < 0:
                self.top_single = rank * 4 + best_suit[nibble]
            count = _NIBBLE_COUNT[nibble]
            if count >= 2 and self.top_pair < 0:
                self.top_pair = rank * 4 + best_suit[nibble]
                if not triples:
                    break
            if count >= 3 and triples:
                self.top_triple = rank
                break

    def master(self, encoded: int) -> bool:
        key = encoded >> MASK_BITS
        size = (encoded & CARD_MASK).bit_count()
        if size == 1:
            return key > self.top_single
        if size == 2:
            return key > self.top_pair
        if size == 3:
            return key > self.top_triple
        if self.pool.bit_count() > FIVE_CHECK_POOL:
            return False  # too many unseen cards: treat no five-card hand as safe (and skip the search)
        found = self._fives.get(key)
        if found is None:
            found = self._fives[key] = not can_beat(self.pool, size, key, self.tables)
        return found


def is_master(encoded: int, pool: int, tables: RuleTables) -> bool:
    """No play of the same size formed from ``pool`` (the unseen cards) beats this play."""
    mask = encoded & CARD_MASK
    return not can_beat(pool, mask.bit_count(), encoded >> MASK_BITS, tables)


def stronger_singles(encoded: int, pool: int, tables: RuleTables) -> int:
    """How many cards of ``pool`` beat this single."""
    key = encoded >> MASK_BITS
    strength = tables.strength
    count = 0
    while pool:
        low = pool & -pool
        if strength[low.bit_length() - 1] > key:
            count += 1
        pool ^= low
    return count
