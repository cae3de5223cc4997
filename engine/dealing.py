"""Deal codes and the shuffle (RULES.md "Rule options": players, cards_each, two_player_start).

A deal code is 12 Crockford base-32 symbols (a 60-bit seed) and one check symbol. The shuffle uses
no language's random generator, so any front end can deal the same cards (docs/DEALING.md):

1. Byte stream for shuffle round ``r`` (0, 1, ...): the concatenation of
   ``SHA-256("bigtwo-deal-v1" || seed as 8 bytes big-endian || r as 4 bytes BE || block as 4 bytes BE)``
   for block = 0, 1, 2, ...; read it as big-endian unsigned 32-bit words.
2. Fisher-Yates over the deck ``3D 3C 3H 3S 4D ... 2S`` (card index = rank * 4 + suit, suits D C H S):
   for ``i`` from 51 down to 1, draw words until one is below ``2**32 - 2**32 % (i + 1)`` and swap
   position ``i`` with position ``word % (i + 1)``.
3. Deal one card at a time: position ``p`` goes to seat ``p % players`` while ``p < players * hand_size``.
4. Three players: position 51 is the face-up extra card and goes to the holder of the lowest card;
   if it is itself the lowest card, shuffle again with round ``r + 1``. Two players under
   ``reshuffle-until-lowest``: if the lowest card of the deck is not dealt, shuffle again.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card, cards_of, mask_text, parse_mask, seat_ref
from .errors import DealCodeError, DealError, Refusal
from .rules import Ruleset, TwoPlayerStart
from .tables import tables_for

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base 32: no I, L, O, U
_DECODE = {ch: i for i, ch in enumerate(ALPHABET)} | {"I": 1, "L": 1, "O": 0}
SEED_SYMBOLS = 12
SEED_BITS = 5 * SEED_SYMBOLS
_DOMAIN = b"bigtwo-deal-v1"
_MAX_ROUNDS = 10_000


_GF32_MODULUS = 0b100101  # x^5 + x^2 + 1, irreducible: the symbols are the field GF(32)


def _times_x(value: int) -> int:
    value <<= 1
    return value ^ _GF32_MODULUS if value & 0b100000 else value


def _check_symbol(symbols: str) -> str:
    """Damm's check over GF(32), with x∘y = x·X + y: running value ``acc = acc·X xor symbol``,
    check symbol ``acc·X``. Catches every single mistyped symbol and every swap of two different
    neighbouring symbols (Luhn mod 32 would miss ``0Z`` ↔ ``Z0``)."""
    acc = 0
    for ch in symbols:
        acc = _times_x(acc) ^ _DECODE[ch]
    return ALPHABET[_times_x(acc)]


@dataclass(frozen=True, slots=True)
class DealCode:
    """A shareable deal code such as ``7K3M9QX2AB4H8``; text is case-insensitive, dashes ignored."""

    seed: int

    def __post_init__(self) -> None:
        if not 0 <= self.seed < 1 << SEED_BITS:
            raise DealCodeError(str(self.seed), f"a deal seed is a {SEED_BITS}-bit number")

    def __str__(self) -> str:
        symbols = "".join(ALPHABET[self.seed >> (5 * (SEED_SYMBOLS - 1 - i)) & 31] for i in range(SEED_SYMBOLS))
        return symbols + _check_symbol(symbols)

    @classmethod
    def from_entropy(cls, entropy: bytes) -> DealCode:
        """A fresh code from caller-supplied random bytes (the engine does no I/O of its own)."""
        if len(entropy) < 8:
            raise DealCodeError("", "a fresh deal needs at least 8 bytes of entropy")
        return cls(int.from_bytes(hashlib.sha256(entropy).digest()[:8], "big") >> (64 - SEED_BITS))

    @classmethod
    def parse(cls, text: str) -> DealCode:
        cleaned = text.strip().upper().replace("-", "").replace(" ", "")
        expected = SEED_SYMBOLS + 1
        if len(cleaned) != expected:
            raise DealCodeError(
                text, f"deal code {text!r} has {len(cleaned)} symbols; a deal code has {expected} (e.g. 7K3M9QX2AB4H8)"
            )
        bad = [ch for ch in cleaned if ch not in _DECODE]
        if bad:
            raise DealCodeError(
                text, f"deal code {text!r} holds {bad[0]!r}, which is not a deal-code symbol (0-9 and A-Z but U)"
            )
        normal = "".join(ALPHABET[_DECODE[ch]] for ch in cleaned)
        body, check = normal[:SEED_SYMBOLS], normal[SEED_SYMBOLS]
        if _check_symbol(body) != check:
            raise DealCodeError(text, f"deal code {text!r} fails its check symbol: it was probably mistyped")
        seed = 0
        for ch in body:
            seed = seed << 5 | _DECODE[ch]
        return cls(seed)


def _words(seed: int, round_number: int, block: int, blocks: int) -> tuple[int, ...]:
    """Big-endian 32-bit words of the SHA-256 counter stream of one shuffle round: eight per
    block, from block ``block`` on."""
    prefix = _DOMAIN + struct.pack(">QI", seed, round_number)
    digests = b"".join(
        hashlib.sha256(prefix + struct.pack(">I", number)).digest() for number in range(block, block + blocks)
    )
    return struct.unpack(f">{8 * blocks}I", digests)


_FIRST_BLOCKS = 7
"""A shuffle takes 51 words when no word is rejected: seven blocks hold 56."""
_LIMITS = tuple((1 << 32) - (1 << 32) % bound if bound else 0 for bound in range(53))
"""_LIMITS[bound]: words at or above it are rejected, so that ``word % bound`` is unbiased."""


def shuffled_deck(seed: int, round_number: int = 0) -> tuple[int, ...]:
    """The deck (card indices) after shuffle round ``round_number`` of ``seed``."""
    deck = list(range(52))
    words = _words(seed, round_number, 0, _FIRST_BLOCKS)
    position = 0
    for i in range(51, 0, -1):
        bound = i + 1
        if position == len(words):
            words += _words(seed, round_number, len(words) // 8, 1)
        word = words[position]
        position += 1
        while word >= _LIMITS[bound]:
            if position == len(words):
                words += _words(seed, round_number, len(words) // 8, 1)
            word = words[position]
            position += 1
        j = word % bound
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


@dataclass(frozen=True, slots=True)
class DealtCards:
    """Who holds what at the start of a deal, before any play."""

    hands: tuple[int, ...]
    """One 52-bit mask per seat."""
    face_up_card: int = -1
    """Three players: the 52nd card, dealt face up to the holder of the lowest card (else -1)."""
    face_up_seat: int = -1
    shuffle_rounds: int = 1

    @property
    def dealt(self) -> int:
        out = 0
        for hand in self.hands:
            out |= hand
        return out

    @property
    def undealt(self) -> int:
        return ((1 << 52) - 1) & ~self.dealt

    def hand_texts(self) -> tuple[str, ...]:
        return tuple(mask_text(hand) for hand in self.hands)


def deal_from_code(code: DealCode, ruleset: Ruleset) -> DealtCards:
    """Deal ``code`` under ``ruleset`` (players, hand size, suit order, two-player start)."""
    tables = tables_for(ruleset)
    players = ruleset.players
    hand_size = ruleset.hand_size
    lowest = tables.lowest_card
    for round_number in range(_MAX_ROUNDS):
        deck = shuffled_deck(code.seed, round_number)
        hands = [0] * players
        for position in range(players * hand_size):
            hands[position % players] |= 1 << deck[position]
        if players == 3:
            extra = deck[51]
            if extra == lowest:
                continue
            holder = next(seat for seat in range(3) if hands[seat] >> lowest & 1)
            hands[holder] |= 1 << extra
            return DealtCards(tuple(hands), extra, holder, round_number + 1)
        lowest_undealt = not (hands[0] | hands[1]) >> lowest & 1
        if players == 2 and ruleset.two_player_start is TwoPlayerStart.RESHUFFLE_UNTIL_LOWEST and lowest_undealt:
            continue
        return DealtCards(tuple(hands), shuffle_rounds=round_number + 1)
    raise DealError(f"deal code {code} found no valid shuffle in {_MAX_ROUNDS} rounds")  # pragma: no cover


def explicit_deal(hands: Sequence[str | int], ruleset: Ruleset) -> DealtCards:
    """Hands dealt elsewhere. Hands may differ in size (a 3-player extra card), never share a card."""
    if len(hands) != ruleset.players:
        raise DealError(f"this ruleset seats {ruleset.players} players but {len(hands)} hands were given")
    masks: list[int] = []
    seen = 0
    for seat, hand in enumerate(hands):
        try:
            mask = parse_mask(hand) if isinstance(hand, str) else hand
        except Refusal as exc:
            raise DealError(f"{seat_ref(seat)}'s hand: {exc}") from None
        if mask & seen:
            shared = mask_text(mask & seen)
            raise DealError(f"{seat_ref(seat)}'s hand repeats cards already dealt to another seat: {shared}")
        if mask == 0:
            raise DealError(f"{seat_ref(seat)}'s hand is empty")
        if mask.bit_count() > 18:
            raise DealError(f"{seat_ref(seat)}'s hand has {mask.bit_count()} cards; at most 18 can be dealt")
        seen |= mask
        masks.append(mask)
    return DealtCards(tuple(masks))


def hand_cards(mask: int) -> tuple[Card, ...]:
    return cards_of(mask)
