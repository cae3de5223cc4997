"""The agent's 412-number input, built for one seat from the public history and its own hand.

The agent's game keeps one vector per player and updates it as moves are made; :class:`Encoder`
replays a deal's moves and keeps the vector of one seat the same way, so the result is what the
agent's own game would hand its network at that point. Layout (every number is 0 or 1):

* 0 … 285, the seat's hand: 13 slots of 22, one per card from lowest to highest (empty slots stay
  0): the rank (13, 3 … 2), the suit (4, ♦ ♣ ♥ ♠), and whether the card's rank is held twice or
  more, three times or more, four times, whether it lies in a run of five or more consecutive ranks
  (3 lowest, 2 highest, no wrap), and whether its suit is held five times or more;
* 286 … 366, the three other seats in playing order after this one, 27 each: its cards left (13,
  one-hot, 1 … 13), which of A♦ … 2♠ it has played (8), and whether it has ever played a pair, a
  triple, a four-card hand, a straight, a flush, a "full house" (6; see below);
* 367 … 382: which of K♦ … 2♠ anyone has played (16);
* 383 … 411, the hand to beat (29): its rank (13) and suit (4), whether this seat leads because
  everyone passed (1), its kind (single, pair, triple, two pair, four of a kind, straight, flush,
  full house: 8), and whether no one, one or two seats have passed on it since (3).

Kept as the agent's game writes them (it was trained on these):

* a hand's rank and suit are its top card's (a triple's and four-card hand's highest card too);
  a full house's rank is its middle card's, with no suit;
* its test for a full house is always true, so every five-card hand that is not a flush counts
  as a full house: a plain straight is marked both straight and full house, ranked by its middle
  card, with no suit (in the seat sections and in the hand to beat), and so would be any other
  five cards;
* the hand to beat is cleared from the seat that played it, and a pass is not written into the
  vector of the seat that passed; the third pass of a trick clears the hand to beat everywhere and
  marks "leads" for the seat that won it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .actions import is_flush, is_straight, is_two_pair, rank, rank_counts, suit

SIZE = 412
HAND = 0
SLOT = 22
SEATS = 286
SEAT = 27
HIGH_PLAYED = 367
TABLE = 383
FIRST_HIGH_SEAT_CARD = 44  # A♦: the seat sections mark A♦ … 2♠
FIRST_HIGH_CARD = 36  # K♦: the shared section marks K♦ … 2♠

# Offsets inside a seat's section and inside the hand to beat.
SEAT_PLAYED_HIGH = 13
SEAT_KIND = {2: 21, 3: 22, 4: 23}
SEAT_STRAIGHT, SEAT_FLUSH, SEAT_FULL_HOUSE = 24, 25, 26
TABLE_SUIT = 13
TABLE_LEADS = 17
TABLE_SINGLE, TABLE_PAIR, TABLE_TRIPLE, TABLE_TWO_PAIR, TABLE_FOUR = 18, 19, 20, 21, 22
TABLE_STRAIGHT, TABLE_FLUSH, TABLE_FULL_HOUSE = 23, 24, 25
TABLE_NO_PASS, TABLE_ONE_PASS, TABLE_TWO_PASSES = 26, 27, 28


@dataclass(frozen=True, slots=True)
class Played:
    seat: int
    cards: tuple[int, ...]
    """Sorted; empty for a pass."""

    @property
    def is_pass(self) -> bool:
        return not self.cards


def hand_features(hand: Sequence[int]) -> NDArray[np.int8]:
    """Positions 0 … 285 for a hand (sorted card indices)."""
    out = np.zeros(SEATS, dtype=np.int8)
    counts = rank_counts(hand)
    suits = [suit(card) for card in hand]
    in_run = _ranks_in_runs(set(counts))
    for slot, card in enumerate(sorted(hand)):
        base = HAND + slot * SLOT
        out[base + rank(card)] = 1
        out[base + 13 + suit(card)] = 1
        count = counts[rank(card)]
        out[base + 17] = count >= 2
        out[base + 18] = count >= 3
        out[base + 19] = count == 4
        out[base + 20] = rank(card) in in_run
        out[base + 21] = suits.count(suit(card)) >= 5
    return out


def _ranks_in_runs(ranks: set[int]) -> set[int]:
    """Ranks lying in a run of five or more consecutive ranks held."""
    out: set[int] = set()
    run: list[int] = []
    for value in range(13 + 1):
        if value in ranks:
            run.append(value)
            continue
        if len(run) >= 5:
            out.update(run)
        run = []
    return out


class Encoder:
    """One seat's vector, updated move by move as the agent's game updates it."""

    def __init__(self, seat: int, hand: Iterable[int], players: int = 4) -> None:
        if players != 4:
            raise ValueError("the agent plays 4-player Big Two only")
        self.seat = seat
        self.players = players
        self.hand = sorted(hand)
        self.left = [13] * players
        self.passes = 0
        self.vector = np.zeros(SIZE, dtype=np.int8)
        self.vector[HAND:SEATS] = hand_features(self.hand)
        for offset in range(1, players):
            self.vector[self._seat_base(offset) + 12] = 1

    def _seat_base(self, offset: int) -> int:
        return SEATS + SEAT * (offset - 1)

    def apply(self, move: Played) -> None:
        if move.is_pass:
            self._passed(move.seat)
        else:
            self._played(move.seat, move.cards)

    def _played(self, seat: int, cards: tuple[int, ...]) -> None:
        self.passes = 0
        self.left[seat] -= len(cards)
        v = self.vector
        for card in cards:
            if card >= FIRST_HIGH_CARD:
                v[HIGH_PLAYED + card - FIRST_HIGH_CARD] = 1
        if seat == self.seat:
            self.hand = [card for card in self.hand if card not in cards]
            v[HAND:SEATS] = hand_features(self.hand)
            v[TABLE:] = 0
            return
        if self.left[seat] == 0:
            return  # the deal is over: the agent's game writes nothing more
        base = self._seat_base((seat - self.seat) % self.players)
        v[base : base + 13] = 0
        v[base + self.left[seat] - 1] = 1
        for card in cards:
            if card >= FIRST_HIGH_SEAT_CARD:
                v[base + SEAT_PLAYED_HIGH + card - FIRST_HIGH_SEAT_CARD] = 1
        v[TABLE:] = 0
        self._write_table(base, sorted(cards))
        v[TABLE + TABLE_NO_PASS] = 1

    def _write_table(self, base: int, cards: list[int]) -> None:
        v = self.vector
        size = len(cards)
        shown: int | None = cards[-1]
        if size in SEAT_KIND:
            v[base + SEAT_KIND[size]] = 1
        if size == 1:
            v[TABLE + TABLE_SINGLE] = 1
        elif size == 2:
            v[TABLE + TABLE_PAIR] = 1
        elif size == 3:
            v[TABLE + TABLE_TRIPLE] = 1
        elif size == 4:
            v[TABLE + (TABLE_TWO_PAIR if is_two_pair(cards) else TABLE_FOUR)] = 1
        else:
            if is_straight(cards):
                v[base + SEAT_STRAIGHT] = 1
                v[TABLE + TABLE_STRAIGHT] = 1
            if is_flush(cards):
                v[base + SEAT_FLUSH] = 1
                v[TABLE + TABLE_FLUSH] = 1
            else:  # the agent's full-house test is always true: see the module docstring
                v[base + SEAT_FULL_HOUSE] = 1
                v[TABLE + TABLE_FULL_HOUSE] = 1
                shown = None
        v[TABLE + rank(cards[2] if shown is None else shown)] = 1
        if shown is not None:
            v[TABLE + TABLE_SUIT + suit(shown)] = 1

    def _passed(self, seat: int) -> None:
        passes_before = self.passes
        self.passes = (self.passes + 1) % (self.players - 1)
        if seat == self.seat:
            return
        v = self.vector
        if passes_before < self.players - 2:
            v[TABLE + TABLE_NO_PASS :] = 0
            v[TABLE + (TABLE_ONE_PASS if passes_before == 0 else TABLE_TWO_PASSES)] = 1
            return
        v[TABLE:] = 0
        if (seat + 1) % self.players == self.seat:
            v[TABLE + TABLE_LEADS] = 1


def encode(seat: int, dealt: Iterable[int], moves: Iterable[Played]) -> NDArray[np.int8]:
    """Seat ``seat``'s vector after ``moves``, from the hand it was dealt."""
    encoder = Encoder(seat, dealt)
    for move in moves:
        encoder.apply(move)
    return encoder.vector
