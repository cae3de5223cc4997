"""Every combination a hand can form, fast: the move generator under legal moves, hints, bots and
auto-pass. Plays come out as ``key << 52 | mask`` integers, so that, within one size, one integer sort
orders them by strength and then cards, and no objects are built on the hot path.

Only combination rules live here (what the cards form and what beats what). Rules that need a game
are applied by :meth:`bigtwo.engine.deal.Deal.legal_encoded`: the opening card, and the two rules
about singles of :mod:`bigtwo.engine.singles`.
"""

from __future__ import annotations

from itertools import combinations

from .cards import SUIT_MASKS
from .combos import flush_key
from .rules import Flush
from .tables import (
    CLASS_SHIFT,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    SUBSETS,
    RuleTables,
)

MASK_BITS = 52
CARD_MASK = (1 << MASK_BITS) - 1
_NIBBLE_COUNT = tuple(pattern.bit_count() for pattern in range(16))


def encoded(key: int, mask: int) -> int:
    return key << MASK_BITS | mask


def plays_of_size(hand: int, size: int, tables: RuleTables, above: int = -1) -> list[int]:
    """Every play of ``size`` cards from ``hand`` whose key is greater than ``above``, encoded."""
    if size == 1:
        return _singles(hand, tables, above)
    if size == 2:
        return _sets(hand, 2, tables, above)
    if size == 3:
        return _sets(hand, 3, tables, above) if tables.triples_allowed else []
    if size == 5:
        return _fives(hand, tables, above)
    return []


def all_plays(hand: int, tables: RuleTables) -> list[int]:
    """Every play a leader could make from ``hand`` (no game rules), sorted."""
    out = _singles(hand, tables, -1)
    out.sort()
    pairs = _sets(hand, 2, tables, -1)
    pairs.sort()
    out += pairs
    if tables.triples_allowed:
        triples = _sets(hand, 3, tables, -1)
        triples.sort()
        out += triples
    fives = _fives(hand, tables, -1)
    fives.sort()
    out += fives
    return out


def _singles(hand: int, tables: RuleTables, above: int) -> list[int]:
    strength = tables.strength
    out = []
    if above >= 0:
        hand &= tables.stronger_than[min(above, 51) + 1]
    while hand:
        low = hand & -hand
        out.append(strength[low.bit_length() - 1] << MASK_BITS | low)
        hand ^= low
    return out


def _sets(hand: int, size: int, tables: RuleTables, above: int) -> list[int]:
    """Pairs (size 2) or triples (size 3), by rank."""
    out = []
    nibble_top = tables.nibble_top
    subsets = SUBSETS[size]
    first_rank = max(above, 0) // 4 if size == 2 else max(above, 0)
    for rank in range(first_rank, 13):
        shift = 4 * rank
        nibble = hand >> shift & 15
        if nibble.bit_count() < size:
            continue
        for sub in subsets[nibble]:
            key = rank * 4 + nibble_top[sub] if size == 2 else rank
            if key > above:
                out.append(key << MASK_BITS | sub << shift)
    return out


def _fives(hand: int, tables: RuleTables, above: int) -> list[int]:
    if hand.bit_count() < 5:
        return []
    out: list[int] = []
    min_class = above >> CLASS_SHIFT if above >= 0 else 0
    nibbles = [hand >> shift & 15 for shift in range(0, 52, 4)]
    present = 0
    most = 0
    for rank, nibble in enumerate(nibbles):
        if nibble:
            present |= 1 << rank
            count = _NIBBLE_COUNT[nibble]
            if count > most:
                most = count
    if min_class <= STRAIGHT_FLUSH:
        _straights(nibbles, present, tables, above, out)
    if min_class <= FLUSH and tables.flush_rule is not Flush.NONE:
        _flushes(hand, tables, above, out)
    if most >= 3 and min_class <= FULL_HOUSE:
        _full_houses(nibbles, above, out)
    if most == 4 and min_class <= FOUR_OF_A_KIND:
        _fours(hand, nibbles, above, out)
    return out


def _fours(hand: int, nibbles: list[int], above: int, out: list[int]) -> None:
    """Each four of a kind with each other card of the hand as its fifth."""
    for rank in range(13):
        if nibbles[rank] != 15:
            continue
        key = FOUR_OF_A_KIND << CLASS_SHIFT | rank
        if key <= above:
            continue
        four = 15 << (4 * rank)
        rest = hand & ~four
        while rest:
            low = rest & -rest
            out.append(key << MASK_BITS | four | low)
            rest ^= low


def _flushes(hand: int, tables: RuleTables, above: int, out: list[int]) -> None:
    rule = tables.flush_rule
    on_ladder = tables.rung_by_rank_mask
    for suit in range(4):
        suited = hand & SUIT_MASKS[suit]
        if suited.bit_count() < 5:
            continue
        ranks = [rank for rank in range(13) if suited >> (4 * rank + suit) & 1]
        strength_of_suit = tables.suit_strength[suit]
        for combo in combinations(ranks, 5):
            rank_mask = (1 << combo[0]) | (1 << combo[1]) | (1 << combo[2]) | (1 << combo[3]) | (1 << combo[4])
            if rank_mask in on_ladder:
                continue  # in sequence and on the ladder: a straight flush, counted with straights
            key = FLUSH << CLASS_SHIFT | flush_key(rank_mask, strength_of_suit, rule)
            if key > above:
                mask = 0
                for rank in combo:
                    mask |= 1 << (4 * rank + suit)
                out.append(key << MASK_BITS | mask)


def _full_houses(nibbles: list[int], above: int, out: list[int]) -> None:
    pair_ranks = [rank for rank in range(13) if _NIBBLE_COUNT[nibbles[rank]] >= 2]
    for triple_rank in pair_ranks:
        nibble = nibbles[triple_rank]
        if _NIBBLE_COUNT[nibble] < 3:
            continue
        key = FULL_HOUSE << CLASS_SHIFT | triple_rank
        if key <= above:
            continue
        for triple in SUBSETS[3][nibble]:
            triple_mask = key << MASK_BITS | triple << (4 * triple_rank)
            for pair_rank in pair_ranks:
                if pair_rank == triple_rank:
                    continue
                shift = 4 * pair_rank
                for pair in SUBSETS[2][nibbles[pair_rank]]:
                    out.append(triple_mask | pair << shift)


def _straights(nibbles: list[int], present: int, tables: RuleTables, above: int, out: list[int]) -> None:
    nibble_top = tables.nibble_top
    one = SUBSETS[1]
    straight_base = STRAIGHT << CLASS_SHIFT
    flush_base = STRAIGHT_FLUSH << CLASS_SHIFT
    for rung in tables.rungs:
        if rung.rank_mask & present != rung.rank_mask:
            continue
        base = rung.position * 4
        if above >= 0 and (flush_base | base + 3) <= above:
            continue
        # The tie-break rank is the outer loop, so each key is computed once per tie-break card.
        r0, r1, r2, r3, r4 = rung.tie_first
        s0, s1, s2, s3, s4 = 4 * r0, 4 * r1, 4 * r2, 4 * r3, 4 * r4
        n1, n2, n3, n4 = nibbles[r1], nibbles[r2], nibbles[r3], nibbles[r4]
        for c0 in one[nibbles[r0]]:
            within = base + nibble_top[c0]
            straight_key = (straight_base | within) << MASK_BITS
            flush_key_ = (flush_base | within) << MASK_BITS
            if (straight_base | within) <= above:
                if (flush_base | within) <= above or not (n1 & n2 & n3 & n4 & c0):
                    continue
                # only the straight flush of this tie card can beat the table
                out.append(flush_key_ | c0 << s0 | c0 << s1 | c0 << s2 | c0 << s3 | c0 << s4)
                continue
            m0 = c0 << s0
            for c1 in one[n1]:
                m1 = m0 | c1 << s1
                for c2 in one[n2]:
                    m2 = m1 | c2 << s2
                    for c3 in one[n3]:
                        m3 = m2 | c3 << s3
                        for c4 in one[n4]:
                            if c0 == c1 == c2 == c3 == c4:
                                out.append(flush_key_ | m3 | c4 << s4)
                            else:
                                out.append(straight_key | m3 | c4 << s4)


def can_beat(pool: int, size: int, key: int, tables: RuleTables) -> bool:
    """Whether any play of ``size`` cards from ``pool`` beats a play with ``key`` (auto-pass)."""
    if size == 1:
        return pool != 0 and tables.strength[tables.highest_card_in(pool)] > key
    if size == 2 or size == 3:
        return _set_beats(pool, size, key, tables)
    if size != 5 or pool.bit_count() < 5:
        return False
    return _five_beats(pool, key, tables)


def _five_beats(pool: int, key: int, tables: RuleTables) -> bool:
    # Existence only: look class by class, strongest first, and stop at the first play that beats.
    nibbles = [pool >> shift & 15 for shift in range(0, 52, 4)]
    if _straight_flush_beats(nibbles, key, tables):
        return True
    table_class = key >> CLASS_SHIFT
    return (
        (table_class <= FOUR_OF_A_KIND and _four_beats(nibbles, key))
        or (table_class <= FULL_HOUSE and _full_house_beats(nibbles, key))
        or (table_class <= FLUSH and tables.flush_rule is not Flush.NONE and _flush_beats(pool, key, tables))
        or (table_class <= STRAIGHT and _straight_beats(nibbles, key, tables))
    )


def _set_beats(pool: int, size: int, key: int, tables: RuleTables) -> bool:
    """Pairs or triples: only the highest rank holding ``size`` cards matters."""
    for rank in range(12, -1, -1):
        nibble = pool >> (4 * rank) & 15
        if _NIBBLE_COUNT[nibble] < size:
            continue
        if size == 3:
            return tables.triples_allowed and rank > key
        return rank * 4 + tables.nibble_top[nibble] > key
    return False


def _straight_flush_beats(nibbles: list[int], key: int, tables: RuleTables) -> bool:
    nibble_top = tables.nibble_top
    base = STRAIGHT_FLUSH << CLASS_SHIFT
    for rung in tables.rungs:
        r0, r1, r2, r3, r4 = rung.ranks
        # The suits held in all five ranks; the strongest of them makes the best straight flush.
        common = nibbles[r0] & nibbles[r1] & nibbles[r2] & nibbles[r3] & nibbles[r4]
        if common and base | rung.position * 4 + nibble_top[common] > key:
            return True
    return False


def _four_beats(nibbles: list[int], key: int) -> bool:
    base = FOUR_OF_A_KIND << CLASS_SHIFT
    return any(nibbles[rank] == 15 and base | rank > key for rank in range(13))


def _full_house_beats(nibbles: list[int], key: int) -> bool:
    base = FULL_HOUSE << CLASS_SHIFT
    for rank in range(13):
        if (
            _NIBBLE_COUNT[nibbles[rank]] >= 3
            and base | rank > key
            and any(_NIBBLE_COUNT[nibbles[other]] >= 2 for other in range(13) if other != rank)
        ):
            return True
    return False


def _flush_beats(pool: int, key: int, tables: RuleTables) -> bool:
    suit_strength = tables.suit_strength
    for suit in range(4):
        suited = pool & SUIT_MASKS[suit]
        if suited.bit_count() < 5:
            continue
        ranks = [rank for rank in range(12, -1, -1) if suited >> (4 * rank + suit) & 1]
        for combo in combinations(ranks, 5):  # strongest rank sets first; stop at a non-straight
            rank_mask = sum(1 << r for r in combo)
            if rank_mask in tables.rung_by_rank_mask:
                continue
            # the first non-straight five, strongest ranks first, is this suit's best flush
            if (FLUSH << CLASS_SHIFT | flush_key(rank_mask, suit_strength[suit], tables.flush_rule)) > key:
                return True
            break
    return False


def _straight_beats(nibbles: list[int], key: int, tables: RuleTables) -> bool:
    nibble_top = tables.nibble_top
    base = STRAIGHT << CLASS_SHIFT
    for rung in tables.rungs:
        if all(nibbles[r] for r in rung.ranks) and base | rung.position * 4 + nibble_top[nibbles[rung.tie_break]] > key:
            return True
    return False
