"""Rule-based levels: ``beginner``, ``good`` and ``great``.

Each policy maps a :class:`~bigtwo.engine.bots.base.View` to an ordered list of candidate moves
(card masks, 0 for pass), best first. The bot plays the first legal one; ``pro`` uses the list to
choose which moves to search.

* ``beginner``: lowest cards first, never plans; keeps 2s back until the hand is small.
* ``good`` (HK's Good): splits the hand into the fewest plays and plays them lowest first, never
  breaks a combination, keeps 2s back early, blocks only a seat about to go out.
* ``great`` (HK's Great): the same plan with a better split, plus card counting (which plays no
  unseen card can beat), a winning line when every play but one is a master, blocking when a seat
  is close to going out (high singles, no pairs against two cards), shedding under pressure, and
  no control card wasted early.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..deal import Move
from ..generate import CARD_MASK, MASK_BITS
from ..observation import Observation
from ..rules import Penalty, Ruleset
from .base import View, move_of, view_of
from .plan import Masters, highest_rank, lowest_rank, rest_costs, split

TWO = 12
_SIZE_BONUS = {1: 0, 2: 1, 3: 2, 5: 3}

OrderFn = Callable[[View], list[int]]


def finalize(view: View, order: list[int]) -> int:
    """The first legal mask of ``order`` (0 = pass); a legal fallback when none is."""
    legal = {e & CARD_MASK for e in view.legal}
    for mask in order:
        if mask == 0:
            if view.can_pass:
                return 0
        elif mask in legal:
            return mask
    if view.legal:
        return view.legal[0] & CARD_MASK
    return 0


def _dedupe(order: list[int]) -> list[int]:
    seen: set[int] = set()
    out = []
    for mask in order:
        if mask not in seen:
            seen.add(mask)
            out.append(mask)
    return out


def _goes_out(view: View) -> int:
    for encoded in view.legal:
        if encoded & CARD_MASK == view.hand:
            return view.hand
    return 0


def _has_two(mask: int) -> bool:
    return highest_rank(mask) == TWO


# -- beginner ---------------------------------------------------------------------------------------


def beginner_order(view: View) -> list[int]:
    out = _goes_out(view)
    if out:
        return [out]
    masks = [e & CARD_MASK for e in view.legal]
    if view.leading:
        low_rank = lowest_rank(view.hand)
        small = [m for m in masks if m.bit_count() <= 3 and lowest_rank(m) == low_rank and highest_rank(m) == low_rank]
        small.sort(key=lambda m: -m.bit_count())
        return _dedupe(small + masks)
    keep_twos = view.hand.bit_count() > 4
    plays = [m for m in masks if not (keep_twos and _has_two(m))]
    return [*plays[:1], 0, *masks]


# -- good -------------------------------------------------------------------------------------------


def good_order(view: View) -> list[int]:
    out = _goes_out(view)
    if out:
        return [out]
    plays, _ = split(view.hand, view.tables)
    masks = [e & CARD_MASK for e in view.legal]
    if view.leading:
        ordered = sorted(plays, key=_heads_up_lead_key(view) if view.players == 2 else _good_lead_key)
        return _dedupe([e & CARD_MASK for e in ordered] + masks)
    return _good_follow(view, plays, masks)


def _good_lead_key(encoded: int) -> tuple[bool, int, int]:
    mask = encoded & CARD_MASK
    return _has_two(mask), lowest_rank(mask), -mask.bit_count()


def _heads_up_lead_key(view: View) -> Callable[[int], tuple[bool, bool, int, int]]:
    """Lead order against a single opponent. Its hand is a third of the unseen cards or more, so
    it beats a low single far more often than a low pair or five-card hand: multi-card plays go
    first (a rank of lowness per extra size), and when it holds one card, singles go last, highest
    first (the seat about to go out is blocked)."""
    one_left = view.cards_left[1 - view.seat] == 1

    def key(encoded: int) -> tuple[bool, bool, int, int]:
        mask = encoded & CARD_MASK
        size = mask.bit_count()
        blocked_single = one_left and size == 1
        order = TWO - highest_rank(mask) if blocked_single else lowest_rank(mask) - 2 * _SIZE_BONUS[size]
        return blocked_single, _has_two(mask), order, -size

    return key


def _good_follow(view: View, plays: tuple[int, ...], masks: list[int]) -> list[int]:
    assert view.table is not None
    legal = set(masks)
    fits = [e & CARD_MASK for e in sorted(plays) if e & CARD_MASK in legal]
    owner_left = view.cards_left[view.last_player] if view.last_player >= 0 else 99
    if owner_left == 1 and masks:
        return [masks[-1], 0]
    early = view.hand.bit_count() > 8 and min(view.cards_left[s] for s in view.opponents()) > 3
    fits = [m for m in fits if not (early and _has_two(m))]
    if not fits:
        fits = _good_shed(plays, masks, early)
    return [*fits[:1], 0]


def _good_shed(plays: tuple[int, ...], masks: list[int], early: bool) -> list[int]:
    """Nothing in the plan fits: the lowest play that breaks no five-card hand, else the lowest
    play at all (2s kept back early either way)."""
    in_fives = 0
    for encoded in plays:
        if (encoded & CARD_MASK).bit_count() == 5:
            in_fives |= encoded & CARD_MASK
    kept = [m for m in masks if not (early and _has_two(m))]
    return [m for m in kept if not m & in_fives] + kept


# -- great ------------------------------------------------------------------------------------------


def great_order(view: View) -> list[int]:
    """Best-first candidate moves for the great policy."""
    out = _goes_out(view)
    if out:
        return [out]
    if view.leading:
        return _dedupe(_great_lead(view))
    return _dedupe(_great_follow(view))


def _great_lead(view: View) -> list[int]:
    tables = view.tables
    masks = [e & CARD_MASK for e in view.legal]
    if view.opening_card >= 0:
        # Every legal play holds the opening card: keep the rest of the hand in the best shape.
        after = rest_costs(view.hand, masks, tables)
        return [masks[i] for i in sorted(range(len(masks)), key=lambda i: (after[i], -masks[i].bit_count()))]
    plays, _ = split(view.hand, tables)
    counter = Masters(view.unseen, tables)
    masters = [e for e in plays if counter.master(e)]
    weak = [e for e in plays if not counter.master(e)]
    others = [view.cards_left[s] for s in view.opponents()]
    one_left = 1 in others
    two_left = 2 in others
    if len(weak) <= 1:
        # Winning line: cash the masters (each wins its trick and the lead), then the last play.
        line = sorted(masters, key=lambda e: (-(e & CARD_MASK).bit_count(), e >> MASK_BITS)) + weak
        return [e & CARD_MASK for e in line] + masks

    def lead_key(encoded: int) -> tuple[int, int]:
        mask = encoded & CARD_MASK
        size = mask.bit_count()
        key = lowest_rank(mask) * 2 - _SIZE_BONUS[size] * 2
        if size == 1 and one_left:
            key = 100 + (TWO - highest_rank(mask))  # highest single first
        elif size == 2 and two_left:
            key += 40
        elif size == 1 and two_left:
            key += 20 + (TWO - highest_rank(mask))
        if size < 5 and _has_two(mask):
            key += 30  # keep 2s back
        return key, encoded >> MASK_BITS

    ordered = sorted(weak, key=lead_key) + sorted(masters, key=lead_key)
    return [e & CARD_MASK for e in ordered] + masks


def _great_follow(view: View) -> list[int]:
    tables = view.tables
    table = view.table
    assert table is not None
    beats = list(view.legal)  # every legal play beats the table, ascending
    if not beats:
        return [0]
    hand = view.hand
    is_master = Masters(view.unseen, tables).master
    winning = _winning_master(beats, hand, view, is_master)
    if winning:
        return [winning, 0]
    if _in_danger(view, table.size):
        masters = [e for e in beats if is_master(e)]
        pick = masters[0] if masters else beats[-1]
        return [pick & CARD_MASK, beats[-1] & CARD_MASK, 0]
    return _great_plan_follow(view, beats)


def _winning_master(beats: list[int], hand: int, view: View, is_master: Callable[[int], bool]) -> int:
    """A master that leaves at most one weak play wins the deal from here: its mask, or 0."""
    for encoded in beats:
        if is_master(encoded):
            rest, _ = split(hand & ~(encoded & CARD_MASK), view.tables)
            if sum(1 for e in rest if not is_master(e)) <= 1:
                return encoded & CARD_MASK
    return 0


def _win_only(view: View) -> bool:
    """Only going out first counts (``penalty = none``): cards left cost nothing."""
    return view.ruleset.penalty is Penalty.NONE


CONTROL_KEPT_PLAYS = 4
"""Under ``penalty = none`` great passes rather than spend an ace or a 2 on a trick while its plan
has more plays than this (and no opponent is near going out): tuned over 2,000 duplicate deals."""


def _saves_control(view: View, mask: int, plan_plays: int) -> bool:
    """Pass instead of following with ``mask``: only going out first counts, so cards shed are worth
    nothing while an ace or a 2 is worth a trick later, when it wins the lead for the last plays.
    With three or four seats a pass still leaves the trick to the others; with two it hands the
    lead straight to the only opponent, so great always follows there."""
    return (
        _win_only(view)
        and view.players > 2
        and plan_plays > CONTROL_KEPT_PLAYS
        and mask.bit_count() < 5
        and highest_rank(mask) >= TWO - 1
        and min(view.cards_left[s] for s in view.opponents()) > 3
    )


def _in_danger(view: View, size: int) -> bool:
    """The table's owner (another seat) is close to going out, or a later seat holds exactly
    ``size`` cards, one or two, and could go out on this trick."""
    owner = view.last_player
    owner_left = view.cards_left[owner] if owner >= 0 else 99
    if owner != view.seat and owner_left <= 2:
        return True
    return any(view.cards_left[s] == size and size <= 2 for s in view.opponents() if s != owner)


def _great_plan_follow(view: View, beats: list[int]) -> list[int]:
    # Follow with the lowest play of the plan that beats the table. Passing to save control cards
    # loses points against the other levels: great always plays when it can, and when nothing in
    # the plan fits it breaks the combination that hurts the plan least.
    # (Pass stays second in the list, for pro to weigh.)
    hand = view.hand
    plays, _ = split(hand, view.tables)
    plan = set(plays)
    fits = [encoded & CARD_MASK for encoded in beats if encoded in plan]
    breakable = [encoded & CARD_MASK for encoded in beats[: 0 if fits else 10]]
    breaks = sorted(zip(rest_costs(hand, breakable, view.tables), breakable, strict=True))
    ranked = fits + [mask for _, mask in breaks]
    if _saves_control(view, ranked[0], len(plays)):
        return [0, *ranked]
    # Alternatives for pro: pass, the runner-up, the highest play.
    return [ranked[0], 0, *ranked[1:2], beats[-1] & CARD_MASK, *ranked[2:]]


# -- bots -------------------------------------------------------------------------------------------


class PolicyBot:
    """A bot that plays the first legal move of a policy's candidate list."""

    def __init__(self, level: str, policy: OrderFn) -> None:
        self.level = level
        self._policy = policy

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        view = view_of(observation, ruleset)
        return move_of(view, finalize(view, self._policy(view)))

    def choose_in_view(self, view: View) -> int:
        return finalize(view, self._policy(view))
