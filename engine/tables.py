"""Lookup tables built once per ruleset, so that hot paths (legal moves, verification, search)
are integer arithmetic on 52-bit hands.

Nothing here is a rule of its own: every number is derived from a :class:`Ruleset` field, and
:mod:`bigtwo.engine.combos` says what the numbers mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from .cache import BoundedCache
from .cards import RANK_MASKS, SUIT_MASKS
from .rules import Flush, NextHasOneCard, Ruleset, SingleTwoLast, Triples
from .straights import SEQUENCE_BY_RANK_MASK, rank_mask_of

if TYPE_CHECKING:
    from .combos import Play

# Five-card classes, low to high (RULES.md: straight < flush < full house < four < straight flush).
STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH = range(5)
CLASS_SHIFT = 32


def _subsets_of_nibbles() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """SUBSETS[k][pattern]: every k-card subset of a 4-bit suit pattern, as 4-bit patterns."""
    table = []
    for k in range(5):
        row = []
        for pattern in range(16):
            bits = [1 << s for s in range(4) if pattern >> s & 1]
            row.append(tuple(sum(c) for c in combinations(bits, k)))
        table.append(tuple(row))
    return tuple(table)


SUBSETS = _subsets_of_nibbles()


@dataclass(frozen=True, slots=True)
class StraightRung:
    """A rung as the generator needs it: its position, its five ranks, where the tie-break card is."""

    position: int
    ranks: tuple[int, ...]
    rank_mask: int
    tie_break: int
    tie_first: tuple[int, ...]
    """The five ranks with the tie-break rank first (the generator's loop order)."""


KNOWN_PLAYS_LIMIT = 1 << 12
"""Plays one ruleset's memo holds. Every single, pair and triple and the common five-card hands fit
many times over, and the memo stays small whatever hands callers ask about (a service lists every
play of any hand it is sent), with hundreds of rulesets' tables alive."""


def _known_plays_cache() -> BoundedCache[int, Play]:
    return BoundedCache("engine.combos.plays", KNOWN_PLAYS_LIMIT)


@dataclass(frozen=True, slots=True)
class RuleTables:
    ruleset: Ruleset
    players: int
    strength: tuple[int, ...]
    """strength[card index] = rank * 4 + suit strength: one number orders every single."""
    suit_strength: tuple[int, ...]
    """suit_strength[suit identity] = 0 (lowest) .. 3 (highest) under the suit order."""
    card_by_strength: tuple[int, ...]
    rungs: tuple[StraightRung, ...]
    rung_by_rank_mask: dict[int, StraightRung]
    sequences_with_two_refused: frozenset[int]
    flush_rule: Flush
    triples_allowed: bool
    highest_single: bool
    """``next_has_one_card = highest-single`` (the rule itself: :mod:`bigtwo.engine.singles`)."""
    single_two_out_refused: bool
    """``single_two_last = forbidden`` (the rule itself: :mod:`bigtwo.engine.singles`)."""
    lowest_card: int
    """Card index of the lowest card of the deck under the suit order (3♦, or 3♣)."""
    stronger_than: tuple[int, ...]
    """stronger_than[s + 1]: mask of the cards whose strength is above s (s = -1 .. 51)."""
    nibble_top: tuple[int, ...]
    """nibble_top[pattern]: the highest suit strength among a 4-bit suit pattern's suits."""

    strongest_suit: tuple[int, ...]
    """strongest_suit[pattern]: the suit (0-3, D C H S) of a 4-bit suit pattern that ranks highest."""
    weakest_suit: tuple[int, ...]
    """weakest_suit[pattern]: the suit of a 4-bit suit pattern that ranks lowest."""
    known_plays: BoundedCache[int, Play] = field(default_factory=_known_plays_cache, compare=False, repr=False)
    """Masks already classified as plays under these rules (filled by
    :func:`bigtwo.engine.combos.classify_mask`): a deal classifies the same few hundred plays
    over and over. Refusals are not kept: a value here is always a play, never None."""

    # Strength is rank first, then suit: the strongest card lies in the highest rank held, the
    # weakest in the lowest, and each nibble's best suit is a table lookup.

    def highest_card_in(self, mask: int) -> int:
        """Card index of the strongest card of a non-empty mask."""
        base = (mask.bit_length() - 1) & ~3
        return base + self.strongest_suit[mask >> base & 15]

    def lowest_card_in(self, mask: int) -> int:
        """Card index of the weakest card of a non-empty mask."""
        base = ((mask & -mask).bit_length() - 1) & ~3
        return base + self.weakest_suit[mask >> base & 15]


_TABLES = BoundedCache[Ruleset, RuleTables]("engine.tables.rule_tables", 256)
"""Tables by ruleset (rulesets keep their hash, so a lookup is one dictionary probe)."""


def tables_for(ruleset: Ruleset) -> RuleTables:
    """The lookup tables of ``ruleset``, built on its first use."""
    tables = _TABLES.get(ruleset)
    if tables is None:
        tables = _TABLES.put(ruleset, _build(ruleset))
    return tables


def _suit_pattern_tables(suit_strength: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(nibble_top, strongest_suit, weakest_suit), each indexed by a 4-bit suit pattern."""
    suits_in = [[s for s in range(4) if pattern >> s & 1] for pattern in range(16)]
    nibble_top = tuple(max((suit_strength[s] for s in suits), default=-1) for suits in suits_in)
    strongest = tuple(max(suits, key=lambda s: suit_strength[s], default=-1) for suits in suits_in)
    weakest = tuple(min(suits, key=lambda s: suit_strength[s], default=-1) for suits in suits_in)
    return nibble_top, strongest, weakest


def _rungs(ruleset: Ruleset) -> tuple[StraightRung, ...]:
    out = []
    for position, rung in enumerate(ruleset.straights.rungs):
        ranks = sorted(int(r) for r in rung.sequence)
        tie = int(rung.tie_break)
        out.append(
            StraightRung(
                position=position,
                ranks=tuple(ranks),
                rank_mask=rank_mask_of(rung.sequence),
                tie_break=tie,
                tie_first=(tie, *(r for r in ranks if r != tie)),
            )
        )
    return tuple(out)


def _build(ruleset: Ruleset) -> RuleTables:
    suit_strength = tuple(ruleset.suit_order.value.index(letter) for letter in "DCHS")
    strength = tuple((index // 4) * 4 + suit_strength[index % 4] for index in range(52))
    card_by_strength = tuple(sorted(range(52), key=lambda i: strength[i]))
    rungs = _rungs(ruleset)
    allowed = {rung.rank_mask for rung in rungs}
    refused_two = frozenset(
        mask for mask, seq in SEQUENCE_BY_RANK_MASK.items() if mask not in allowed and 12 in {int(r) for r in seq}
    )
    nibble_top, strongest_suit, weakest_suit = _suit_pattern_tables(suit_strength)
    return RuleTables(
        ruleset=ruleset,
        players=ruleset.players,
        strength=strength,
        suit_strength=suit_strength,
        card_by_strength=card_by_strength,
        rungs=rungs,
        rung_by_rank_mask={rung.rank_mask: rung for rung in rungs},
        sequences_with_two_refused=refused_two,
        flush_rule=ruleset.flush,
        triples_allowed=ruleset.triples is Triples.ALLOWED,
        highest_single=ruleset.next_has_one_card is NextHasOneCard.HIGHEST_SINGLE,
        single_two_out_refused=ruleset.single_two_last is SingleTwoLast.FORBIDDEN,
        lowest_card=card_by_strength[0],
        stronger_than=tuple(sum(1 << i for i in range(52) if strength[i] > threshold) for threshold in range(-1, 52)),
        nibble_top=nibble_top,
        strongest_suit=strongest_suit,
        weakest_suit=weakest_suit,
    )


__all__ = [
    "CLASS_SHIFT",
    "FLUSH",
    "FOUR_OF_A_KIND",
    "FULL_HOUSE",
    "KNOWN_PLAYS_LIMIT",
    "RANK_MASKS",
    "STRAIGHT",
    "STRAIGHT_FLUSH",
    "SUBSETS",
    "SUIT_MASKS",
    "RuleTables",
    "StraightRung",
    "tables_for",
]
