"""Computer players for every ruleset: ``random``, ``beginner``, ``good``, ``great`` and
``pro``. Pure: no I/O, no global random state. Every bot decides from one seat's
:class:`~bigtwo.engine.observation.Observation` only::

    from bigtwo.engine.bots import bot_for
    move = bot_for("great").choose(observe(deal, deal.to_act), deal.ruleset, random.Random(7))
"""

from __future__ import annotations

import random

from ..deal import Move
from ..observation import Observation
from ..rules import Ruleset
from .base import Bot, View, public_deal, view_in_deal, view_of
from .heuristic import PolicyBot, beginner_order, finalize, good_order, great_order
from .pro import Budget, ProBot, sample_hands
from .random_bot import RandomBot

LEVELS: tuple[str, ...] = ("random", "beginner", "good", "great", "pro")


def bot_for(level: str, budget: Budget | None = None) -> Bot:
    """The bot for a level name (``budget`` only matters for ``pro``)."""
    name = level.strip().lower()
    if name == "random":
        return RandomBot()
    if name == "beginner":
        return PolicyBot("beginner", beginner_order)
    if name == "good":
        return PolicyBot("good", good_order)
    if name == "great":
        return PolicyBot("great", great_order)
    if name == "pro":
        return ProBot(budget)
    raise ValueError(f"unknown bot level {level!r}; valid levels: {', '.join(LEVELS)}")


def timeout_bot_move(observation: Observation, ruleset: Ruleset) -> Move:
    """TW's clock: a bot plays the timed-out turn. The ``great`` policy, deterministic."""
    return bot_for("great").choose(observation, ruleset, random.Random(0))


__all__ = [
    "LEVELS",
    "Bot",
    "Budget",
    "PolicyBot",
    "ProBot",
    "RandomBot",
    "View",
    "beginner_order",
    "bot_for",
    "finalize",
    "good_order",
    "great_order",
    "public_deal",
    "sample_hands",
    "timeout_bot_move",
    "view_in_deal",
    "view_of",
]
