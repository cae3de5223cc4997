"""Scoring a deal (RULES.md options ``penalty``, ``twos_double``, ``settlement``).

The winner pays nothing. Each other seat's penalty is cards left × the schedule's rate for that
many cards, doubled once per 2 still held when ``twos_double`` is on. Under ``penalty`` settlement
a loser scores its penalty (lowest total wins); under ``zero-sum`` it scores minus its penalty and
the winner scores their sum (highest total wins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .cards import TWOS_MASK
from .rules import Penalty, Ruleset, Settlement, Switch


def twos_in(hand: int) -> int:
    """How many 2s a hand (a card mask) holds: what ``twos_double`` doubles a loser's penalty for.
    Every count of twos left is this one."""
    return (hand & TWOS_MASK).bit_count()


def rate_for(cards_left: int, penalty: Penalty) -> int:
    """Points per card. RULES.md Decision: 13 or more cards count as "all 13"."""
    if penalty is Penalty.NONE or cards_left <= 0:
        return 0
    if penalty is Penalty.FLAT:
        return 1
    if penalty is Penalty.TIERED:
        return 1 if cards_left <= 9 else 2 if cards_left <= 12 else 3
    # harsh: ×1 below 8, ×2 for 8-9, ×3 for 10-12, ×4 for 13 or more
    return 1 if cards_left < 8 else 2 if cards_left <= 9 else 3 if cards_left <= 12 else 4


@dataclass(frozen=True, slots=True)
class SeatSettlement:
    """One line of the settlement card."""

    seat: int
    cards_left: int
    twos_left: int
    rate: int
    multiplier: int
    penalty: int
    score: int


@dataclass(frozen=True, slots=True)
class DealSettlement:
    winner: int
    seats: tuple[SeatSettlement, ...]
    scores: tuple[int, ...] = field(init=False, compare=False)
    """Each seat's score, in seat order: made once, since every deal's end folds it in."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "scores", tuple([line.score for line in self.seats]))

    @property
    def winner_total(self) -> int:
        """What the winner collects: the sum of the losers' penalties (0 under ``penalty``)."""
        return self.seats[self.winner].score


def penalty_for(cards_left: int, twos_left: int, ruleset: Ruleset) -> tuple[int, int, int]:
    """(rate, multiplier, penalty) for one losing seat."""
    rate = rate_for(cards_left, ruleset.penalty)
    multiplier = 2**twos_left if ruleset.twos_double is Switch.ON else 1
    return rate, multiplier, cards_left * rate * multiplier


def settle(ruleset: Ruleset, cards_left: Sequence[int], twos_left: Sequence[int] | None = None) -> DealSettlement:
    """Settle a finished deal. The winner is the seat with no cards left (exactly one)."""
    twos = list(twos_left) if twos_left is not None else [0] * len(cards_left)
    if len(twos) != len(cards_left):
        raise ValueError("cards_left and twos_left must have one entry per seat")
    winners = [seat for seat, left in enumerate(cards_left) if left == 0]
    if len(winners) != 1:
        raise ValueError(f"a finished deal has exactly one seat with no cards left, not {len(winners)}")
    return settle_with_winner(ruleset, winners[0], cards_left, twos)


def settle_with_winner(
    ruleset: Ruleset, winner: int, cards_left: Sequence[int], twos_left: Sequence[int]
) -> DealSettlement:
    """Settle with an explicit winner (a dragon wins with all its cards still in hand)."""
    zero_sum = ruleset.settlement is Settlement.ZERO_SUM
    lines: list[SeatSettlement] = []
    collected = 0
    for seat, (left, twos) in enumerate(zip(cards_left, twos_left, strict=True)):
        if seat == winner:
            lines.append(SeatSettlement(seat, left, twos, 0, 1, 0, 0))
            continue
        rate, multiplier, penalty = penalty_for(left, twos, ruleset)
        collected += penalty
        lines.append(SeatSettlement(seat, left, twos, rate, multiplier, penalty, -penalty if zero_sum else penalty))
    if zero_sum:
        lines[winner] = SeatSettlement(winner, cards_left[winner], twos_left[winner], 0, 1, 0, collected)
    return DealSettlement(winner, tuple(lines))


def settle_hands(ruleset: Ruleset, winner: int, hands: Sequence[int]) -> DealSettlement:
    """Settle a finished deal from the hands left (card masks): what its ``DealEnded`` holds."""
    return settle_with_winner(ruleset, winner, [hand.bit_count() for hand in hands], [twos_in(hand) for hand in hands])


def ending_now_of(hand: int, ruleset: Ruleset) -> tuple[int, str]:
    """:func:`ending_now` for a hand given as a card mask (a seat's readout)."""
    return ending_now(hand.bit_count(), twos_in(hand), ruleset)


def ending_now(cards_left: int, twos_left: int, ruleset: Ruleset) -> tuple[int, str]:
    """WEB's readout: what this seat would score if the deal ended now ("13 left · ending now −39")."""
    _, _, penalty = penalty_for(cards_left, twos_left, ruleset)
    score = -penalty if ruleset.settlement is Settlement.ZERO_SUM else penalty
    shown = f"−{penalty}" if ruleset.settlement is Settlement.ZERO_SUM and penalty else f"{score}"
    return score, f"{cards_left} left · ending now {shown}"
