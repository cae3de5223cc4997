"""Combinations (RULES.md "Combinations" and "Straights"): what a set of cards is, how strong it
is under a ruleset, whether it beats the table, and its name on a readout line.

A :class:`Play` is cards plus what they form. Its ``key`` orders plays of the same size: a play
beats another of the same size exactly when its key is larger. For five-card hands the class sits
above bit 32, so any higher class beats any lower one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .cards import RANK_FACES, SUIT_MASKS, Card, Rank, Suit, cards_of, iter_indices
from .errors import (
    DoesNotBeatError,
    NoFlushError,
    NoLoneTripleError,
    NotACombinationError,
    NoTwoInStraightsError,
    WrongSizeError,
)
from .rules import Flush, Ruleset
from .straights import SEQUENCE_BY_RANK_MASK
from .tables import (
    CLASS_SHIFT,
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    RuleTables,
    tables_for,
)


class Kind(StrEnum):
    """What a play is. Values are the ids used in vectors."""

    SINGLE = "single"
    PAIR = "pair"
    TRIPLE = "triple"
    STRAIGHT = "straight"
    FLUSH = "flush"
    FULL_HOUSE = "full-house"
    FOUR_OF_A_KIND = "four-of-a-kind"
    STRAIGHT_FLUSH = "straight-flush"

    @property
    def size(self) -> int:
        return _KIND_SIZE[self]

    @property
    def label(self) -> str:
        return self.value.replace("-", " ").capitalize()


_KIND_SIZE = {
    Kind.SINGLE: 1,
    Kind.PAIR: 2,
    Kind.TRIPLE: 3,
    Kind.STRAIGHT: 5,
    Kind.FLUSH: 5,
    Kind.FULL_HOUSE: 5,
    Kind.FOUR_OF_A_KIND: 5,
    Kind.STRAIGHT_FLUSH: 5,
}
FIVE_CARD_KINDS = (Kind.STRAIGHT, Kind.FLUSH, Kind.FULL_HOUSE, Kind.FOUR_OF_A_KIND, Kind.STRAIGHT_FLUSH)
VALID_SIZES = (1, 2, 3, 5)

_POW13 = (28561, 2197, 169, 13, 1)
_FLUSH_SUIT_WEIGHT = 13**5


@dataclass(frozen=True, slots=True)
class Play:
    """A legal combination: its cards (as a 52-bit mask), its kind and its comparison key."""

    mask: int
    kind: Kind
    key: int

    @property
    def size(self) -> int:
        return self.mask.bit_count()

    @property
    def cards(self) -> tuple[Card, ...]:
        return cards_of(self.mask)

    def beats(self, other: Play) -> bool:
        return self.size == other.size and self.key > other.key

    def text(self) -> str:
        """Canonical card text, e.g. ``3D 3S``."""
        return " ".join(str(card) for card in self.cards)

    def __str__(self) -> str:
        return self.text()


def kind_of_five_class(five_class: int) -> Kind:
    return FIVE_CARD_KINDS[five_class]


def flush_key(rank_mask: int, suit_strength: int, rule: Flush) -> int:
    """Within-class key of a flush: suit first, or ranks first and the suit only on a full tie."""
    digits = 0
    position = 0
    for rank in range(12, -1, -1):
        if rank_mask >> rank & 1:
            digits += rank * _POW13[position]
            position += 1
    if rule is Flush.RANK_FIRST:
        return digits * 4 + suit_strength
    return suit_strength * _FLUSH_SUIT_WEIGHT + digits


def classify_mask(mask: int, tables: RuleTables) -> Play:
    """What ``mask`` forms under the ruleset, or the refusal that says why it forms nothing."""
    known = tables.known_plays
    play = known.get(mask)
    if play is None:
        play = known.put(mask, _classify(mask, tables))
    return play


def _classify(mask: int, tables: RuleTables) -> Play:
    size = mask.bit_count()
    if size == 0:
        raise NotACombinationError("Pick the cards to play (or pass)")
    strength = tables.strength
    if size == 1:
        return Play(mask, Kind.SINGLE, strength[mask.bit_length() - 1])
    rank_mask = 0
    rank_counts = [0] * 13
    top_suit_by_rank = [-1] * 13
    for index in iter_indices(mask):
        rank = index >> 2
        rank_mask |= 1 << rank
        rank_counts[rank] += 1
        suit_s = tables.suit_strength[index & 3]
        if suit_s > top_suit_by_rank[rank]:
            top_suit_by_rank[rank] = suit_s
    distinct = rank_mask.bit_count()
    if size == 2:
        if distinct == 1:
            rank = rank_mask.bit_length() - 1
            return Play(mask, Kind.PAIR, rank * 4 + top_suit_by_rank[rank])
        raise NotACombinationError("These cards do not form a hand: a pair is two cards of one rank")
    if size == 3:
        if distinct == 1:
            if not tables.triples_allowed:
                raise NoLoneTripleError("House rule: a triple may only be played inside a full house")
            return Play(mask, Kind.TRIPLE, rank_mask.bit_length() - 1)
        raise NotACombinationError("These cards do not form a hand: a triple is three cards of one rank")
    if size == 4:
        if distinct == 1:
            raise NotACombinationError("Four of a kind needs a fifth card: four cards alone are not a hand")
        raise NotACombinationError("These cards do not form a hand: play 1, 2, 3 or 5 cards")
    if size != 5:
        raise NotACombinationError(f"These cards do not form a hand: play 1, 2, 3 or 5 cards, not {size}")
    return _classify_five(mask, rank_mask, distinct, rank_counts, tables)


def _classify_five(mask: int, rank_mask: int, distinct: int, rank_counts: list[int], tables: RuleTables) -> Play:
    if distinct == 5:
        return _classify_five_ranks(mask, rank_mask, tables)
    if distinct == 2:
        counts = sorted(c for c in rank_counts if c)
        top = max(range(13), key=lambda r: rank_counts[r])
        if counts == [2, 3]:
            return Play(mask, Kind.FULL_HOUSE, FULL_HOUSE << CLASS_SHIFT | top)
        if counts == [1, 4]:
            return Play(mask, Kind.FOUR_OF_A_KIND, FOUR_OF_A_KIND << CLASS_SHIFT | top)
    raise NotACombinationError("These cards do not form a hand")


def _classify_five_ranks(mask: int, rank_mask: int, tables: RuleTables) -> Play:
    """Five cards of five ranks: a straight (flush) on the ladder, a flush, or the refusal why not."""
    one_suit = -1
    for suit in range(4):
        if mask & SUIT_MASKS[suit] == mask:
            one_suit = suit
    rung = tables.rung_by_rank_mask.get(rank_mask)
    if rung is not None:
        tie_card = mask & (0b1111 << (4 * rung.tie_break))
        tie_suit = tables.suit_strength[(tie_card.bit_length() - 1) & 3]
        within = rung.position * 4 + tie_suit
        if one_suit >= 0:
            return Play(mask, Kind.STRAIGHT_FLUSH, STRAIGHT_FLUSH << CLASS_SHIFT | within)
        return Play(mask, Kind.STRAIGHT, STRAIGHT << CLASS_SHIFT | within)
    if one_suit >= 0 and tables.flush_rule is not Flush.NONE:
        within = flush_key(rank_mask, tables.suit_strength[one_suit], tables.flush_rule)
        return Play(mask, Kind.FLUSH, FLUSH << CLASS_SHIFT | within)
    if rank_mask in SEQUENCE_BY_RANK_MASK:
        if rank_mask in tables.sequences_with_two_refused:
            raise NoTwoInStraightsError("House rule: no 2 in straights")
        raise NotACombinationError("These cards do not form a hand: this table's straights do not include it")
    if one_suit >= 0:
        raise NoFlushError("House rule: five cards of one suit are no hand unless they run in sequence")
    raise NotACombinationError("These cards do not form a hand")


def classify(cards: int | str | tuple[Card, ...], ruleset: Ruleset) -> Play:
    """Public form of :func:`classify_mask` for cards as a mask, text or tuple of cards."""
    return classify_mask(_to_mask(cards), tables_for(ruleset))


def _to_mask(cards: int | str | tuple[Card, ...]) -> int:
    from .cards import mask_of, parse_mask

    if isinstance(cards, int):
        return cards
    if isinstance(cards, str):
        return parse_mask(cards)
    return mask_of(cards)


def check_beats(play_mask: int, table: Play | None, tables: RuleTables) -> Play:
    """The play as it stands against the table: size first, then the play's own reason, then the
    comparison (RULES.md's refusal order). Returns the classified play when it may be played."""
    if table is not None and play_mask and play_mask.bit_count() != table.mask.bit_count():
        raise WrongSizeError(
            f"Play {table.size} card{'s' if table.size > 1 else ''} — you picked {play_mask.bit_count()}"
        )
    play = classify_mask(play_mask, tables)
    if table is not None and play.key <= table.key:
        raise DoesNotBeatError(f"{play_name(play, tables)} does not beat {play_name(table, tables)}")
    return play


def play_name(play: Play, tables: RuleTables) -> str:
    """The readout line's name: "Single 3♦", "Pair 9", "Straight to 9♠", "Flush ♥ A-high"."""
    kind = play.kind
    strength = tables.strength
    if kind is Kind.SINGLE:
        return f"Single {Card.from_index(play.mask.bit_length() - 1).pretty}"
    top_index = max(iter_indices(play.mask), key=lambda i: strength[i])
    top_rank = RANK_FACES[top_index >> 2]
    if kind is Kind.PAIR:
        return f"Pair {top_rank}"
    if kind is Kind.TRIPLE:
        return f"Triple {top_rank}"
    within = play.key & ((1 << CLASS_SHIFT) - 1)
    if kind in (Kind.STRAIGHT, Kind.STRAIGHT_FLUSH):
        rung = tables.rungs[within // 4]
        tie_card = Card.from_index((play.mask & (0b1111 << (4 * rung.tie_break))).bit_length() - 1)
        return f"{kind.label} to {tie_card.pretty}"
    if kind is Kind.FLUSH:
        suit = Suit((play.mask.bit_length() - 1) & 3)
        high = max(iter_indices(play.mask), key=lambda i: i >> 2) >> 2
        return f"Flush {suit.symbol} {RANK_FACES[high]}-high"
    main_rank = RANK_FACES[within]
    if kind is Kind.FULL_HOUSE:
        return f"Full house {main_rank}"
    return f"Four of a kind {main_rank}"


def rank_of(index: int) -> Rank:
    return Rank(index >> 2)
