"""Cards: ranks, suits, the card value type, its one text form and its parser.

A card's identity never depends on the ruleset: its index is ``rank * 4 + suit`` with suits in the
fixed order D, C, H, S. How strong a card is *does* depend on the ruleset (the suit order), so
strength lives in :mod:`bigtwo.engine.rules`, not here. A set of cards is a 52-bit integer with bit
``card.index`` set (a *mask*); every hot path works on masks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from .errors import BadCardError, NotInHandError


class Rank(IntEnum):
    """Ranks from lowest to highest, as Big Two orders them (3 low, 2 high)."""

    THREE = 0
    FOUR = 1
    FIVE = 2
    SIX = 3
    SEVEN = 4
    EIGHT = 5
    NINE = 6
    TEN = 7
    JACK = 8
    QUEEN = 9
    KING = 10
    ACE = 11
    TWO = 12

    @property
    def symbol(self) -> str:
        return RANK_SYMBOLS[self]

    @classmethod
    def parse(cls, text: str) -> Rank:
        key = text.strip().upper()
        if key == "10":
            key = "T"
        if key == "1":
            key = "A"
        try:
            return cls(RANK_SYMBOLS.index(key))
        except ValueError:
            raise BadCardError(text, f"unknown rank {text!r}; ranks are {' '.join(RANK_SYMBOLS)}") from None


class Suit(IntEnum):
    """Suits in the fixed *identity* order D, C, H, S (not a strength order)."""

    DIAMONDS = 0
    CLUBS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        return "DCHS"[self]

    @property
    def symbol(self) -> str:
        return "♦♣♥♠"[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        for index, forms in enumerate(_SUIT_FORMS):
            if text in forms:
                return cls(index)
        raise BadCardError(text, f"unknown suit {text!r}; suits are D C H S (or ♦ ♣ ♥ ♠)")


RANK_SYMBOLS = ("3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2")
RANK_FACES = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
"""A rank as people read it, on the card's face: ``10``, where the canonical text says ``T``."""
_SUIT_FORMS = (("D", "d", "♦", "♢"), ("C", "c", "♣", "♧"), ("H", "h", "♥", "♡"), ("S", "s", "♠", "♤"))
_SUIT_CHARS = frozenset(ch for forms in _SUIT_FORMS for ch in forms)

FULL_DECK_MASK = (1 << 52) - 1
RANK_MASKS = tuple(0b1111 << (4 * rank) for rank in range(13))
TWOS_MASK = 0b1111 << 48
"""The four 2s (scoring counts them under ``twos_double``)."""
SUIT_MASKS = tuple(sum(1 << (4 * rank + suit) for rank in range(13)) for suit in range(4))


@dataclass(frozen=True, slots=True, order=False)
class Card:
    """One card. Text form: rank then suit letter, e.g. ``3D``, ``TS``, ``2S``."""

    rank: Rank
    suit: Suit

    @property
    def index(self) -> int:
        return self.rank * 4 + self.suit

    @property
    def bit(self) -> int:
        return 1 << (self.rank * 4 + self.suit)

    def __str__(self) -> str:
        return self.rank.symbol + self.suit.letter

    def __repr__(self) -> str:
        return f"Card({self})"

    @property
    def pretty(self) -> str:
        """The form for people, as the card's face shows it: ``3♦``, ``10♦``."""
        return RANK_FACES[self.rank] + self.suit.symbol

    @property
    def suit_first(self) -> str:
        """WEB's wording puts the suit first: ``♦3``, ``♦10``."""
        return self.suit.symbol + RANK_FACES[self.rank]

    @classmethod
    def from_index(cls, index: int) -> Card:
        return ALL_CARDS[index]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``3D``, ``3d``, ``10S``, ``T♠`` or ``♠T`` (suit on either side)."""
        known = _CARD_BY_TEXT.get(text)
        if known is not None:
            return known
        raw = text.strip()
        if len(raw) < 2:
            raise BadCardError(text, f"{text!r} is not a card (write rank then suit, e.g. 3D)")
        if raw[-1] in _SUIT_CHARS:
            rank_text, suit_text = raw[:-1], raw[-1]
        elif raw[0] in _SUIT_CHARS:
            rank_text, suit_text = raw[1:], raw[0]
        else:
            raise BadCardError(text, f"{text!r} is not a card: no suit (D C H S or ♦ ♣ ♥ ♠)")
        try:
            rank = Rank.parse(rank_text)
        except BadCardError:
            raise BadCardError(
                text, f"{text!r} is not a card: unknown rank {rank_text!r} (3-9, T or 10, J, Q, K, A, 2)"
            ) from None
        return ALL_CARDS[rank * 4 + Suit.parse(suit_text)]


ALL_CARDS: tuple[Card, ...] = tuple(Card(Rank(i // 4), Suit(i % 4)) for i in range(52))
_CARD_TEXT: tuple[str, ...] = tuple(str(card) for card in ALL_CARDS)


def _card_spellings() -> dict[str, Card]:
    # Every accepted spelling of every card, so that parsing a logged move is a dict lookup.
    out: dict[str, Card] = {}
    for card in ALL_CARDS:
        ranks = [card.rank.symbol] + (["10", "t"] if card.rank is Rank.TEN else [])
        ranks += [r.lower() for r in ranks if r.isalpha()]
        for rank in ranks:
            for suit in _SUIT_FORMS[card.suit]:
                out[rank + suit] = card
                out[suit + rank] = card
    return out


_CARD_BY_TEXT = _card_spellings()


def split_card_text(text: str) -> list[str]:
    """Split a play's text into card tokens: ``"3D 3S"``, ``"3D,3S"`` or ``"3♦3♠"`` all work."""
    tokens = text.replace(",", " ").split()
    out: list[str] = []
    for token in tokens:
        out.extend(_split_glued(token))
    return out


def _split_glued(token: str) -> list[str]:
    # "3♦3♠" or "3D3S" typed without spaces: cut after each suit character.
    if len(token) <= 3:
        return [token]
    pieces: list[str] = []
    start = 0
    for position, char in enumerate(token):
        if char in _SUIT_CHARS and position > start:
            pieces.append(token[start : position + 1])
            start = position + 1
    if start < len(token):
        pieces.append(token[start:])
    return pieces


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse a space-separated list of cards, keeping their order (duplicates are kept)."""
    return tuple(Card.parse(token) for token in split_card_text(text))


def mask_of(cards: Iterable[Card]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << (card.rank * 4 + card.suit)
    return mask


def parse_mask(text: str) -> int:
    """Parse card text into a mask. Text that is no card raises :class:`BadCardError`; a repeated
    card raises :class:`NotInHandError` (RULES.md: "a card is repeated" is ``not-in-hand``)."""
    mask = 0
    for card in parse_cards(text):
        if mask & card.bit:
            raise NotInHandError(f"{card.pretty} is listed twice")
        mask |= card.bit
    return mask


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask, lowest index first (rank, then D C H S)."""
    return tuple(ALL_CARDS[i] for i in iter_indices(mask))


def iter_indices(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_text(mask: int) -> str:
    """Canonical text of a set of cards: ascending by rank then D C H S, space-separated."""
    # A byte at a time (two ranks): the service writes the played cards' text on every move.
    parts = []
    chunk = 0
    while mask:
        byte = mask & 0xFF
        if byte:
            parts.append(_BYTE_TEXT[chunk][byte])
        mask >>= 8
        chunk += 1
    return " ".join(parts)


def mask_pretty(mask: int) -> str:
    """The cards for people, as every screen shows them: ``10♦ 10♣`` (:attr:`Card.pretty`), in
    :func:`mask_text`'s order."""
    parts = []
    chunk = 0
    while mask:
        byte = mask & 0xFF
        if byte:
            parts.append(_BYTE_PRETTY[chunk][byte])
        mask >>= 8
        chunk += 1
    return " ".join(parts)


def seat_ref(seat: int) -> str:
    """How people number seats, on every screen, page and sentence: ``p1`` for engine seat 0
    (the API and the engine stay 0-based)."""
    return f"p{seat + 1}"


def count(mask: int) -> int:
    return mask.bit_count()


_CARD_PRETTY: tuple[str, ...] = tuple(card.pretty for card in ALL_CARDS)
_BYTE_PRETTY: tuple[tuple[str, ...], ...] = tuple(
    tuple(
        " ".join(_CARD_PRETTY[8 * chunk + bit] for bit in range(8) if byte >> bit & 1 and 8 * chunk + bit < 52)
        for byte in range(256)
    )
    for chunk in range(7)
)
_BYTE_TEXT: tuple[tuple[str, ...], ...] = tuple(
    tuple(
        " ".join(_CARD_TEXT[8 * chunk + bit] for bit in range(8) if byte >> bit & 1 and 8 * chunk + bit < 52)
        for byte in range(256)
    )
    for chunk in range(7)
)
