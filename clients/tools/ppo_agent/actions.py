"""The agent's 1695 actions and which of them its own game allows.

Cards are this project's indices (``rank * 4 + suit``, ranks 3 … 2 as 0 … 12, suits ♦ ♣ ♥ ♠ as 0 … 3);
the agent numbers the same cards 1 … 52 in the same order, so comparing two cards' indices is
comparing them in its game (rank first, then suit).

An action names cards by their *positions* in the seat's hand sorted low to high (13 cards at most),
never by the cards themselves, so the same index means different cards in different hands:

* 0 … 12: a single, the card at position ``i``;
* 13 … 45: two cards at positions ``i < j`` with ``j − i ≤ 3`` (a pair's cards are at most three
  places apart), in lexicographic order;
* 46 … 76: three cards within four consecutive positions (``k − i ≤ 3``), lexicographic;
* 77 … 406: four cards ``a < b < c < d`` with ``b − a ≤ 3`` and ``d − c ≤ 3`` (two pairs, or four
  of a kind), lexicographic;
* 407 … 1693: any five positions, lexicographic (the 1287 ways to choose 5 of 13);
* 1694: pass.

Which actions its game allows (its ``enumerateOptions``), in words, with the quirks kept because
the agent was trained with them:

* leading: every single, pair, triple, two pair, four of a kind, and five-card hand; following:
  the same size only, and higher;
* triples are the three cards at positions ``(i, i+1, i+2)`` or ``(i, i+2, i+3)`` of one rank, so of
  a four of a kind at ``i … i+3`` the triple ``(i, i+1, i+3)`` is never offered;
* straights are five cards of consecutive ranks with 3 the lowest and 2 the highest (J-Q-K-A-2 is
  one, nothing wraps) and beat a straight by the top card; flushes beat straights, and a flush by
  the top card; full houses (any of its pairs with any of its offered triples) beat flushes, and a
  full house by the triple's rank (read from the middle card of the hand on the table); a straight
  flush beats the rest and nothing beats it (not even a higher straight flush); any other five cards
  on the table are met as a full house;
* two pairs beat two pairs by the top card; four of a kind beats two pairs, and four of a kind by
  rank.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import combinations, pairwise

MAX_HAND = 13
PASS = 1694
ACTIONS = 1695

Positions = tuple[int, ...]


def rank(card: int) -> int:
    return card // 4


def suit(card: int) -> int:
    return card % 4


def _positions(size: int) -> list[Positions]:
    every = list(combinations(range(MAX_HAND), size))
    if size in (2, 3):
        return [p for p in every if p[-1] - p[0] <= 3]
    if size == 4:
        return [p for p in every if p[1] - p[0] <= 3 and p[3] - p[2] <= 3]
    return every


@cache
def layout() -> tuple[tuple[Positions, ...], ...]:
    """Per size 1 … 5, the positions each of its actions names, in index order."""
    return tuple(tuple(_positions(size)) for size in range(1, 6))


@cache
def _offsets() -> tuple[int, ...]:
    starts, total = [], 0
    for block in layout():
        starts.append(total)
        total += len(block)
    assert total == PASS, total
    return tuple(starts)


@cache
def _index_of() -> dict[Positions, int]:
    blocks = zip(_offsets(), layout(), strict=True)
    return {positions: offset + k for offset, block in blocks for k, positions in enumerate(block)}


def tables_digest(tables: Sequence[Sequence[Sequence[int]]]) -> str:
    """SHA-256 of the positions of the 2- to 5-card actions, in index order, as compact JSON: the
    original's ``inverse…CardIndices`` tables and :func:`layout` give the same digest."""
    text = json.dumps([[list(p) for p in table] for table in tables], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def index_of(positions: Positions) -> int | None:
    """The action naming these sorted positions, or None where the agent has no such action."""
    return _index_of().get(positions)


def positions_of(action: int) -> Positions:
    """The sorted hand positions an action names (empty for pass)."""
    if action == PASS:
        return ()
    if not 0 <= action < PASS:
        raise ValueError(f"action {action} is outside 0 … {PASS}")
    for offset, block in zip(reversed(_offsets()), reversed(layout()), strict=True):
        if action >= offset:
            return block[action - offset]
    raise AssertionError("unreachable")


def is_straight(cards: Sequence[int]) -> bool:
    """Five cards of consecutive ranks (the agent's straight: 2 may top it, nothing wraps)."""
    ranks = sorted(rank(c) for c in cards)
    return len(cards) == 5 and all(b == a + 1 for a, b in pairwise(ranks))


def is_flush(cards: Sequence[int]) -> bool:
    return len(cards) == 5 and len({suit(c) for c in cards}) == 1


def is_four_of_a_kind(cards: Sequence[int]) -> bool:
    return len(cards) == 4 and len({rank(c) for c in cards}) == 1


def is_two_pair(cards: Sequence[int]) -> bool:
    ordered = sorted(cards)
    return (
        len(cards) == 4
        and not is_four_of_a_kind(cards)
        and rank(ordered[0]) == rank(ordered[1])
        and rank(ordered[2]) == rank(ordered[3])
    )


def pairs(hand: Sequence[int]) -> list[Positions]:
    """Every two positions holding one rank."""
    return [(i, j) for i, j in combinations(range(len(hand)), 2) if rank(hand[i]) == rank(hand[j])]


def triples(hand: Sequence[int]) -> list[Positions]:
    """The triples the agent's game offers: ``(i, i+1, i+2)`` and ``(i, i+2, i+3)`` of one rank."""
    out: list[Positions] = []
    for i in range(len(hand) - 2):
        for j in (i + 1, i + 2):
            if j + 1 < len(hand) and rank(hand[i]) == rank(hand[j]) == rank(hand[j + 1]):
                out.append((i, j, j + 1))
    return out


def quads(hand: Sequence[int]) -> list[Positions]:
    return [tuple(range(i, i + 4)) for i in range(len(hand) - 3) if rank(hand[i]) == rank(hand[i + 3])]


def two_pairs(hand: Sequence[int]) -> list[Positions]:
    found = pairs(hand)
    return [a + b for a, b in combinations(found, 2) if rank(hand[a[0]]) != rank(hand[b[0]])]


def straights(hand: Sequence[int]) -> list[Positions]:
    by_rank: dict[int, list[int]] = {}
    for position, card in enumerate(hand):
        by_rank.setdefault(rank(card), []).append(position)
    out: list[Positions] = []
    for low in range(0, 9):
        columns = [by_rank.get(low + step, []) for step in range(5)]
        if all(columns):
            out.extend(_product(columns))
    return out


def _product(columns: list[list[int]]) -> list[Positions]:
    combos: list[Positions] = [()]
    for column in columns:
        combos = [(*combo, position) for combo in combos for position in column]
    return combos


def flushes(hand: Sequence[int]) -> list[Positions]:
    out: list[Positions] = []
    for wanted in range(4):
        same = [position for position, card in enumerate(hand) if suit(card) == wanted]
        out.extend(combinations(same, 5))
    return out


def full_houses(hand: Sequence[int]) -> list[tuple[Positions, int]]:
    """(positions, the triple's rank) for any pair with any offered triple of another rank."""
    out = []
    for pair in pairs(hand):
        for triple in triples(hand):
            if rank(hand[pair[0]]) != rank(hand[triple[0]]):
                out.append((tuple(sorted(pair + triple)), rank(hand[triple[0]])))
    return out


class FiveKind:
    """How the agent's game reads five cards on the table (see the module docstring)."""

    STRAIGHT = 1
    FLUSH = 2
    FULL_HOUSE = 3
    STRAIGHT_FLUSH = 4


def five_kind(cards: Sequence[int]) -> int:
    if is_straight(cards):
        return FiveKind.STRAIGHT_FLUSH if is_flush(cards) else FiveKind.STRAIGHT
    return FiveKind.FLUSH if is_flush(cards) else FiveKind.FULL_HOUSE


def options(hand: Sequence[int], table: Sequence[int] | None) -> set[Positions]:
    """The plays the agent's game allows (positions in ``hand``, which is sorted), leading when
    ``table`` is None, else following ``table`` (its cards, sorted). Pass is not listed."""
    hand = list(hand)
    if table is None:
        leads: list[Positions] = [(i,) for i in range(len(hand))]
        leads += pairs(hand) + triples(hand) + quads(hand) + two_pairs(hand)
        leads += straights(hand) + flushes(hand) + [positions for positions, _ in full_houses(hand)]
        return set(leads)
    table = sorted(table)
    top = table[-1]
    size = len(table)
    if size == 1:
        return {(i,) for i in range(len(hand)) if hand[i] > top}
    if size == 2:
        return {p for p in pairs(hand) if hand[p[1]] > top}
    if size == 3:
        return {p for p in triples(hand) if hand[p[2]] > top}
    if size == 4:
        if is_four_of_a_kind(table):
            return {p for p in quads(hand) if hand[p[0]] > top}
        return set(quads(hand)) | {p for p in two_pairs(hand) if hand[p[3]] > top}
    return _five_options(hand, table)


def _five_options(hand: list[int], table: list[int]) -> set[Positions]:
    kind = five_kind(table)
    top = table[-1]
    out: set[Positions] = set()
    if kind == FiveKind.STRAIGHT_FLUSH:
        return out
    if kind == FiveKind.STRAIGHT:
        out |= {p for p in straights(hand) if hand[p[4]] > top}
    for p in flushes(hand):
        cards = [hand[i] for i in p]
        if kind == FiveKind.FLUSH and hand[p[4]] < top and not is_straight(cards):
            continue
        if kind == FiveKind.FULL_HOUSE and not is_straight(cards):
            continue
        out.add(p)
    table_triple = rank(table[2])
    for p, triple_rank in full_houses(hand):
        if kind == FiveKind.FULL_HOUSE and triple_rank < table_triple:
            continue
        out.add(p)
    return out


def rank_counts(hand: Sequence[int]) -> Counter[int]:
    return Counter(rank(card) for card in hand)
