"""Helps for a player and a front end: HK's Find (hint cycling), the move a timed-out turn makes
(RULES.md "Clock and empty seats"), the fewest-plays split of a hand (HK's "plays" sort) and the
readout line naming a selection.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import Card
from .combos import Play, check_beats, classify_mask, play_name
from .deal import Deal, Move
from .errors import Reason, Refusal
from .generate import CARD_MASK, all_plays
from .rules import Ruleset
from .scoring import ending_now_of
from .singles import forced_single
from .tables import RuleTables, tables_for


def hint_cycle(deal: Deal) -> list[Play]:
    """HK's Find order. Following: every legal play that beats the table, weakest first. Leading:
    five-card hands, then triples, then pairs (HK), then singles so that Find always finds one."""
    plays = deal.legal_plays()
    if deal.table is not None:
        return plays
    by_size = {5: 0, 3: 1, 2: 2, 1: 3}
    return sorted(plays, key=lambda play: (by_size[play.size], play.key, play.mask))


def next_hint(deal: Deal, after: int = 0) -> Play | None:
    """The play Find selects after the selection ``after`` (a mask; 0 for the first tap)."""
    cycle = hint_cycle(deal)
    if not cycle:
        return None
    masks = [play.mask for play in cycle]
    if after in masks:
        return cycle[(masks.index(after) + 1) % len(cycle)]
    return cycle[0]


def timeout_move(deal: Deal) -> Move:
    """What a timed-out turn does (HK's clock): following, pass; leading, one card: the required
    opening card, or the single ``highest-single`` forces (:func:`~bigtwo.engine.singles.forced_single`),
    else the lowest card. It never follows, so ``single_two_last`` cannot refuse it."""
    seat = deal.to_act
    if deal.table is not None:
        return Move.pass_(seat)
    if deal.opening_card >= 0:
        return Move.from_mask(seat, 1 << deal.opening_card)
    forced = forced_single(deal.tables, deal.hands, seat)
    if forced:
        return Move.from_mask(seat, forced)
    return Move.from_mask(seat, 1 << deal.tables.lowest_card_in(deal.hands[seat]))


def fewest_plays(hand: int, ruleset: Ruleset) -> tuple[Play, ...]:
    """Split ``hand`` into the fewest plays it makes (HK's "plays" sort), five-card hands first.

    Among splits of equal length the first found wins, searching the strongest plays first, so
    the answer is deterministic."""
    tables = tables_for(ruleset)
    masks = _split(hand, tables)
    plays = [classify_mask(mask, tables) for mask in masks]
    return tuple(sorted(plays, key=lambda play: (-play.size, play.key)))


def _split(hand: int, tables: RuleTables) -> tuple[int, ...]:
    if not hand:
        return ()
    # Every play inside a subset of the hand is a play of the hand: generate once, then search.
    # The lowest card left must belong to exactly one play of the split, so branch on those.
    containing: dict[int, list[int]] = {}
    for encoded in all_plays(hand, tables):
        mask = encoded & CARD_MASK
        low = mask & -mask
        containing.setdefault(low, []).append(mask)
    for options in containing.values():
        options.sort(key=lambda m: -m.bit_count())

    # The fewest plays of every rest reached, for this hand only; emptied on return because
    # ``best`` refers to itself (a cycle).
    memo: dict[int, tuple[int, ...]] = {0: ()}

    def best(rest: int) -> tuple[int, ...]:
        lowest = rest & -rest
        found: tuple[int, ...] | None = None
        for mask in containing.get(lowest, ()):
            if mask & rest != mask:
                continue
            left = rest & ~mask
            sub = memo.get(left)
            if sub is None:
                sub = best(left)
            if found is None or len(sub) + 1 < len(found):
                found = (mask, *sub)
        assert found is not None  # the lowest card alone is always a single
        memo[rest] = found
        return found

    answer = best(hand)
    memo.clear()
    return answer


@dataclass(frozen=True, slots=True)
class Readout:
    """The line under a hand (HK, WEB): what the selection forms and whether it can go."""

    name: str
    playable: bool
    reason: Reason | None
    """RULES.md reason when not playable, else None."""
    message: str
    ending_now: str
    """WEB's "13 left · ending now −39" for the seat to act."""


def readout(deal: Deal, seat: int, selection: int) -> Readout:
    """Name the selected cards and say whether ``seat`` could play them now."""
    tables = deal.tables
    try:
        name = play_name(classify_mask(selection, tables), tables) if selection else ""
    except Refusal:
        name = ""
    _, ending = ending_now_of(deal.hands[seat], deal.ruleset)
    try:
        deal.verify(Move.from_mask(seat, selection) if selection else Move(seat, (), False))
    except Refusal as refusal:
        return Readout(name, False, refusal.reason, refusal.message, ending)
    return Readout(name, True, None, "", ending)


def name_cards(cards: tuple[Card, ...] | int, ruleset: Ruleset) -> str:
    """The readout name of some cards, or the refusal's sentence when they form nothing."""
    tables = tables_for(ruleset)
    mask = cards if isinstance(cards, int) else sum(card.bit for card in set(cards))
    try:
        return play_name(check_beats(mask, None, tables), tables)
    except Refusal as refusal:
        return refusal.message
