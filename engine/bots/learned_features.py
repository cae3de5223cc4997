"""What the ``learned`` level's network reads (issue 36): numbers made from one seat's
:class:`~bigtwo.engine.observation.Observation` and the ruleset only, and the same numbers the
trainer (``python -m bigtwo.tools.learn``) made while it learned.

Every feature is 0 or 1 (so a trainer's replay buffer packs to bits). Cards are laid out in
*strength order* under the ruleset (column ``j`` is the card of strength ``j``: the 3 of the lowest
suit first, the highest 2 last), so one network reads every suit order and ladder alike.

State (:data:`STATE_SIZE` numbers): own hand, every card played, the cards each other seat played
(relative seats: next, the one after, the one after that), the table's cards, each seat's card count
(one-hot 0..17), who owns the table, its size and five-card class, who passed, whether the seat
leads, the player count, and the ruleset's options hashed into :data:`RULE_BINS` bins.

Action (:data:`ACTION_SIZE` numbers per candidate move): its cards, pass, its size, its five-card
class, and its place in ``great``'s order of preference (first, second, third, later, not listed):
the network starts from a strong heuristic's opinion and learns where to differ from it.

Needs numpy (the ``learned`` extra); importing this module imports it.
"""

from __future__ import annotations

import zlib

import numpy as np
import numpy.typing as npt

from ..events import CardsPlayed
from ..generate import CARD_MASK
from ..observation import Observation
from ..rules import Ruleset
from ..tables import CLASS_SHIFT, RuleTables
from .base import View
from .heuristic import great_order
from .pro import legal_candidates

CARDS = 52
SEATS = 4
COUNTS = 18
"""Card counts one-hot 0..17 (3 players hold 17)."""
RULE_BINS = 64
CLASSES = 5
"""Five-card classes: straight, flush, full house, four of a kind, straight flush."""
GREAT_RANKS = 5
"""Place in great's order: first, second, third, later, not listed."""

STATE_SIZE = CARDS * (3 + SEATS - 1) + COUNTS * SEATS + SEATS + 5 + CLASSES + SEATS + 1 + 3 + RULE_BINS
ACTION_SIZE = CARDS + 1 + 5 + CLASSES + GREAT_RANKS
GREAT_FIRST = CARDS + 1 + 5 + CLASSES
"""The action column that says: this is great's first choice."""

# Ruleset options that are not rules of play (the match's length) are left out of the hash.
_NOT_PLAY = frozenset({"preset", "match"})
_SHIFTS = np.arange(CARDS, dtype=np.uint64)

FloatArray = npt.NDArray[np.float32]


def bits(masks: list[int], tables: RuleTables) -> FloatArray:
    """Each mask as 52 numbers in strength order: ``out[i, j]`` = 1 when card of strength ``j`` is in ``masks[i]``."""
    raw = (np.array(masks, dtype=np.uint64)[:, None] >> _SHIFTS) & np.uint64(1)
    return raw[:, np.array(tables.card_by_strength)].astype(np.float32)


def rule_features(ruleset: Ruleset) -> FloatArray:
    out = np.zeros(RULE_BINS, dtype=np.float32)
    for name, value in ruleset.to_mapping().items():
        if name not in _NOT_PLAY:
            out[zlib.crc32(f"{name}={value}".encode()) % RULE_BINS] = 1.0
    return out


def _five_class(key: int, size: int) -> int:
    """0..4 for a five-card play's class (its key's high part), -1 otherwise."""
    return key >> CLASS_SHIFT if size == 5 else -1


def state_features(observation: Observation, ruleset: Ruleset, tables: RuleTables) -> FloatArray:
    """The seat's state numbers (see the module docstring); reads the observation and rules only."""
    seat, players = observation.seat, ruleset.players
    by_seat = [0] * SEATS
    for event in observation.history:
        if isinstance(event, CardsPlayed):
            by_seat[(event.seat - seat) % players] |= event.mask
    table = observation.table
    masks = [observation.hand, observation.played, *by_seat[1:], table.mask if table else 0]
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    at = CARDS * len(masks)
    out[:at] = bits(masks, tables).reshape(-1)
    for rel in range(players):
        left = observation.cards_left[(seat + rel) % players]
        out[at + rel * COUNTS + min(left, COUNTS - 1)] = 1.0
    at += COUNTS * SEATS
    if table is not None:
        out[at + (observation.last_player - seat) % players] = 1.0
        out[at + SEATS + min(table.size, 5) - 1] = 1.0
        five = _five_class(table.key, table.size)
        if five >= 0:
            out[at + SEATS + 5 + five] = 1.0
    at += SEATS + 5 + CLASSES
    for rel in range(players):
        if observation.passed >> ((seat + rel) % players) & 1:
            out[at + rel] = 1.0
    at += SEATS
    out[at] = 1.0 if table is None else 0.0
    out[at + players - 1] = 1.0  # players 2..4 -> bins 1..3 after the leading flag
    at += 1 + 3
    out[at:] = rule_features(ruleset)
    return out


def candidates(view: View) -> list[int]:
    """Every move the seat may make, as card masks (0: pass, when passing is allowed), in a
    fixed order: the legal plays as the engine lists them, then pass."""
    moves = [encoded & CARD_MASK for encoded in view.legal]
    if view.can_pass:
        moves.append(0)
    return moves


def action_features(view: View, moves: list[int]) -> FloatArray:
    """The numbers of each move of ``moves`` (see the module docstring), one row per move."""
    keys = {encoded & CARD_MASK: encoded >> 52 for encoded in view.legal}
    order = legal_candidates(view, great_order, len(moves))
    out = np.zeros((len(moves), ACTION_SIZE), dtype=np.float32)
    out[:, :CARDS] = bits(moves, view.tables)
    for row, mask in enumerate(moves):
        size = mask.bit_count()
        if mask == 0:
            out[row, CARDS] = 1.0
        else:
            out[row, CARDS + min(size, 5)] = 1.0
            five = _five_class(keys.get(mask, 0), size)
            if five >= 0:
                out[row, CARDS + 6 + five] = 1.0
        place = min(order.index(mask), 3) if mask in order else 4
        out[row, GREAT_FIRST + place] = 1.0
    return out
