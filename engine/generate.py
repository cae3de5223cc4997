"""Every combination a hand can form, fast: the move generator under legal moves, hints, bots and
auto-pass. Plays come out as ``key << 52 | mask`` integers, so that one integer sort orders them
by size class, strength and then cards, and no objects are built on the hot path.

Only combination rules live here (what the cards form and what beats what). Rules that need a game
(opening card, going out on a single 2, highest single) are applied by :mod:`bigtwo.engine.deal`.
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
_NIBBLE_TOP = (-1, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)  # highest set bit of a 4-bit pattern


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
    while hand:
        low = hand & -hand
        index = low.bit_length() - 1
        key = strength[index]
        if key > above:
            out.append(key << MASK_BITS | low)
        hand ^= low
    return out


def _sets(hand: int, size: int, tables: RuleTables, above: int) -> list[int]:
    """Pairs (size 2) or triples (size 3), by rank."""
    out = []
    suit_strength = tables.suit_strength
    subsets = SUBSETS[size]
    for rank in range(13):
        nibble = hand >> (4 * rank) & 15
        if nibble.bit_count() < size:
            continue
        shift = 4 * rank
        for sub in subsets[nibble]:
            if size == 2:
                top = max(suit_strength[_NIBBLE_TOP[sub & 3]] if sub & 3 else -1, suit_strength[_NIBBLE_TOP[sub]])
                key = rank * 4 + max(suit_strength[s] for s in range(4) if sub >> s & 1)
                del top
            else:
                key = rank
            if key > above:
                out.append(key << MASK_BITS | sub << shift)
    return out


def _fives(hand: int, tables: RuleTables, above: int) -> list[int]:
    if hand.bit_count() < 5:
        return []
    out: list[int] = []
    min_class = above >> CLASS_SHIFT if above >= 0 else 0
    nibbles = [hand >> (4 * rank) & 15 for rank in range(13)]
    suit_strength = tables.suit_strength
    if min_class <= STRAIGHT_FLUSH:
        _straights(nibbles, tables, above, out)
    if min_class <= FLUSH and tables.flush_rule is not Flush.NONE:
        rule = tables.flush_rule
        sf_masks = tables.rung_by_rank_mask
        for suit in range(4):
            suited = hand & SUIT_MASKS[suit]
            if suited.bit_count() < 5:
                continue
            ranks = [rank for rank in range(13) if suited >> (4 * rank + suit) & 1]
            strength_of_suit = suit_strength[suit]
            for combo in combinations(ranks, 5):
                rank_mask = (1 << combo[0]) | (1 << combo[1]) | (1 << combo[2]) | (1 << combo[3]) | (1 << combo[4])
                if rank_mask in sf_masks:
                    continue  # in sequence and on the ladder: a straight flush, counted above
                key = FLUSH << CLASS_SHIFT | flush_key(rank_mask, strength_of_suit, rule)
                if key > above:
                    mask = 0
                    for rank in combo:
                        mask |= 1 << (4 * rank + suit)
                    out.append(key << MASK_BITS | mask)
    if min_class <= FULL_HOUSE:
        for triple_rank in range(13):
            nibble = nibbles[triple_rank]
            if nibble.bit_count() < 3:
                continue
            key = FULL_HOUSE << CLASS_SHIFT | triple_rank
            if key <= above:
                continue
            for triple in SUBSETS[3][nibble]:
                triple_mask = triple << (4 * triple_rank)
                for pair_rank in range(13):
                    pair_nibble = nibbles[pair_rank]
                    if pair_rank == triple_rank or pair_nibble.bit_count() < 2:
                        continue
                    for pair in SUBSETS[2][pair_nibble]:
                        out.append(key << MASK_BITS | triple_mask | pair << (4 * pair_rank))
    if min_class <= FOUR_OF_A_KIND:
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
    return out


def _straights(nibbles: list[int], tables: RuleTables, above: int, out: list[int]) -> None:
    suit_strength = tables.suit_strength
    for rung in tables.rungs:
        r0, r1, r2, r3, r4 = rung.ranks
        n0, n1, n2, n3, n4 = nibbles[r0], nibbles[r1], nibbles[r2], nibbles[r3], nibbles[r4]
        if not (n0 and n1 and n2 and n3 and n4):
            continue
        if above >= 0 and (STRAIGHT_FLUSH << CLASS_SHIFT | rung.position * 4 + 3) <= above:
            continue
        tie = rung.tie_break
        base = rung.position * 4
        for c0 in SUBSETS[1][n0]:
            for c1 in SUBSETS[1][n1]:
                for c2 in SUBSETS[1][n2]:
                    for c3 in SUBSETS[1][n3]:
                        for c4 in SUBSETS[1][n4]:
                            suit_bits = (c0, c1, c2, c3, c4)
                            tie_bit = suit_bits[rung.ranks.index(tie)]
                            within = base + suit_strength[_NIBBLE_TOP[tie_bit]]
                            if c0 == c1 == c2 == c3 == c4:
                                key = STRAIGHT_FLUSH << CLASS_SHIFT | within
                            else:
                                key = STRAIGHT << CLASS_SHIFT | within
                            if key > above:
                                mask = c0 << (4 * r0) | c1 << (4 * r1) | c2 << (4 * r2) | c3 << (4 * r3) | c4 << (4 * r4)
                                out.append(key << MASK_BITS | mask)


def can_beat(pool: int, size: int, key: int, tables: RuleTables) -> bool:
    """Whether any play of ``size`` cards from ``pool`` beats a play with ``key`` (auto-pass)."""
    if size == 1:
        return pool != 0 and tables.strength[tables.highest_card_in(pool)] > key
    if size in (2, 3):
        for rank in range(12, -1, -1):
            nibble = pool >> (4 * rank) & 15
            if nibble.bit_count() < size:
                continue
            if size == 3:
                return tables.triples_allowed and rank > key
            best = rank * 4 + max(tables.suit_strength[s] for s in range(4) if nibble >> s & 1)
            return best > key if rank * 4 + 3 >= key else best > key
        return False
    if size != 5:
        return False
    # The generator stops at nothing; these checks look class by class, strongest first.
    nibbles = [pool >> (4 * rank) & 15 for rank in range(13)]
    suit_strength = tables.suit_strength
    table_class = key >> CLASS_SHIFT
    for rung in tables.rungs:  # straight flushes
        for suit in range(4):
            if all(nibbles[r] >> suit & 1 for r in rung.ranks):
                if (STRAIGHT_FLUSH << CLASS_SHIFT | rung.position * 4 + suit_strength[suit]) > key:
                    return True
    if pool.bit_count() < 5:
        return False
    if table_class <= FOUR_OF_A_KIND:
        for rank in range(13):
            if nibbles[rank] == 15 and (FOUR_OF_A_KIND << CLASS_SHIFT | rank) > key and pool.bit_count() >= 5:
                return True
    if table_class <= FULL_HOUSE:
        for rank in range(13):
            if nibbles[rank].bit_count() >= 3 and (FULL_HOUSE << CLASS_SHIFT | rank) > key:
                if any(nibbles[other].bit_count() >= 2 for other in range(13) if other != rank):
                    return True
    if table_class <= FLUSH and tables.flush_rule is not Flush.NONE:
        for suit in range(4):
            suited = pool & SUIT_MASKS[suit]
            if suited.bit_count() < 5:
                continue
            ranks = [rank for rank in range(12, -1, -1) if suited >> (4 * rank + suit) & 1]
            for combo in combinations(ranks, 5):  # strongest rank sets first; stop at a non-straight
                rank_mask = sum(1 << r for r in combo)
                if rank_mask in tables.rung_by_rank_mask:
                    continue
                if (FLUSH << CLASS_SHIFT | flush_key(rank_mask, suit_strength[suit], tables.flush_rule)) > key:
                    return True
                if tables.flush_rule is Flush.SUIT_FIRST or table_class < FLUSH:
                    break
                break
    if table_class <= STRAIGHT:
        for rung in tables.rungs:
            present = [nibbles[r] for r in rung.ranks]
            if not all(present):
                continue
            tie_nibble = nibbles[rung.tie_break]
            best_suit = max(suit_strength[s] for s in range(4) if tie_nibble >> s & 1)
            if (STRAIGHT << CLASS_SHIFT | rung.position * 4 + best_suit) > key:
                return True
    return False
