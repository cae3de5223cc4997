"""Hand planning for the heuristic bots: split a hand into plays (fewest plays first, then keep
high cards single and low cards inside combinations), and count cards to know which plays no
unseen card can beat ("masters").

Splits are cached per ruleset and hand: in a rollout a hand is asked about many times between
two of its own plays. The cache is bounded in all, whatever the rulesets asked about (a service's
bots take any ruleset): :data:`SPLITS_KEPT` splits of at most :data:`RULESETS_KEPT` rulesets.
"""

from __future__ import annotations

from functools import cache

from ..generate import CARD_MASK, MASK_BITS, all_plays, can_beat
from ..rules import Ruleset
from ..tables import RuleTables, tables_for

PLAY_COST = 40
"""Cost of one play in a split; the lowness terms below never add up to one play."""

SPLITS_KEPT = 1 << 15
"""Splits kept, all rulesets together: many times the distinct hands one pro decision or one
great-level deal asks about, so the bound costs few hits. When full, every cache starts again."""
RULESETS_KEPT = 16
"""Rulesets whose splits are kept at once (each keeps its rule tables alive): a new one beyond
them starts every cache again."""

_SPLITS: dict[int, tuple[RuleTables, dict[int, tuple[tuple[int, ...], int]]]] = {}
"""Per rule tables (by id, the tables kept alive beside their cache): hand -> split."""
_kept = 0
"""Splits in all of :data:`_SPLITS` (threads may race on it: it only decides when to start again)."""
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
    entry = _SPLITS.get(id(tables))
    if entry is not None and entry[0] is tables:
        found = entry[1].get(hand)
        if found is not None:
            return found
    result = _split(hand, tables)
    _remember(hand, tables, result)
    return result


def _remember(hand: int, tables: RuleTables, result: tuple[tuple[int, ...], int]) -> None:
    global _kept
    entry = _SPLITS.get(id(tables))
    if entry is None or entry[0] is not tables or _kept >= SPLITS_KEPT:
        if _kept >= SPLITS_KEPT or len(_SPLITS) >= RULESETS_KEPT:
            _forget()
        entry = _SPLITS[id(tables)] = (tables, {})
    entry[1][hand] = result
    _kept += 1


def _forget() -> None:
    """Start every split cache again."""
    global _kept
    _SPLITS.clear()
    _kept = 0


def _split(hand: int, tables: RuleTables) -> tuple[tuple[int, ...], int]:
    if hand == 0:
        return (), 0
    containing: dict[int, list[tuple[int, int]]] = {}
    for encoded in all_plays(hand, tables):
        mask = encoded & CARD_MASK
        low = mask & -mask
        containing.setdefault(low, []).append((encoded, PLAY_COST + lowness(encoded)))

    @cache
    def best(rest: int) -> tuple[int, tuple[int, ...]]:
        if not rest:
            return 0, ()
        lowest = rest & -rest
        found_cost = -1
        found: tuple[int, ...] = ()
        for encoded, cost in containing.get(lowest, ()):
            mask = encoded & CARD_MASK
            if mask & rest != mask:
                continue
            sub_cost, sub = best(rest & ~mask)
            total = cost + sub_cost
            if found_cost < 0 or total < found_cost:
                found_cost, found = total, (encoded, *sub)
        return found_cost, found

    cost, plays = best(hand)
    best.cache_clear()  # free the memo now: it and ``best`` refer to each other (a cycle)
    ordered = tuple(sorted(plays, key=lambda e: (-(e & CARD_MASK).bit_count(), e >> MASK_BITS)))
    return ordered, cost


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
