"""Computer players for every ruleset: ``random``, ``beginner``, ``good``, ``great``, ``learned``
and ``pro``. Pure: no global random state, and no I/O but the ``learned`` level's one read of its
shipped weights (numpy, the ``learned`` extra). Every bot decides from one seat's
:class:`~bigtwo.engine.observation.Observation` only::

    from bigtwo.engine.bots import bot_for
    move = bot_for("great").choose(observe(deal, deal.to_act), deal.ruleset, random.Random(7))

:data:`REGISTRY` is the one list of levels (issue 34): their names, a line about each in a card
player's words, and their order from weakest to strongest. The service reports it to front ends
(``ListPresetsResponse.bot_levels``), the command line and the browser table read it from there,
and a token names a seat's level by its :attr:`BotLevel.code`. A new level is one more entry here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ..deal import Move
from ..observation import Observation
from ..rules import Ruleset
from .base import Bot, View, public_deal, view_in_deal, view_of
from .heuristic import PolicyBot, beginner_order, finalize, good_order, great_order
from .learned import LearnedBot
from .pro import Budget, ProBot, sample_hands
from .random_bot import RandomBot


@dataclass(frozen=True, slots=True)
class BotLevel:
    """One level of computer player."""

    name: str
    """What callers name it by (``BotMoveRequest.level``, ``bigtwo play --bots``)."""
    description: str
    """One line in a card player's words, for a front end's menu."""
    code: int
    """Its number inside state tokens (a seat's level sealed at deal time): never changed or reused
    once given, whatever the order of :data:`REGISTRY` becomes; 0 means "no level"."""
    make: Callable[[Budget | None], Bot]
    """The bot (``budget`` only matters for levels that search)."""


REGISTRY: tuple[BotLevel, ...] = (
    BotLevel(
        "random", "Plays any legal cards at random: a floor any sensible player beats.", 1, lambda _b: RandomBot()
    ),
    BotLevel(
        "beginner",
        "Sheds its lowest cards first and holds its 2s: someone who has just learnt the game.",
        2,
        lambda _b: PolicyBot("beginner", beginner_order),
    ),
    BotLevel(
        "good",
        "Plans its hand into as few plays as it can and rarely breaks a combination; does not count cards.",
        3,
        lambda _b: PolicyBot("good", good_order),
    ),
    BotLevel(
        "great",
        "A strong club player: counts cards, cashes sure winners and blocks a player about to go out.",
        4,
        lambda _b: PolicyBot("great", great_order),
    ),
    BotLevel(
        "learned",
        "Taught itself by playing many thousands of deals: plays like great, but trusts its own "
        "judgement when it is sure (needs numpy).",
        6,
        lambda _b: LearnedBot(),
    ),
    BotLevel(
        "pro",
        "Thinks ahead: plays out many layouts of the unseen cards before each move (slower).",
        5,
        ProBot,
    ),
)
"""Every level, weakest first."""
LEVELS: tuple[str, ...] = tuple(level.name for level in REGISTRY)
DEFAULT_LEVEL = "good"
"""The level a bot seat plays at when none is named."""
_BY_NAME = {level.name: level for level in REGISTRY}
_BY_CODE = {level.code: level for level in REGISTRY}
if len(_BY_NAME) != len(REGISTRY) or len(_BY_CODE) != len(REGISTRY) or 0 in _BY_CODE or DEFAULT_LEVEL not in _BY_NAME:
    raise ValueError("bot levels need distinct names and distinct nonzero codes, the default among them")


def level_named(name: str) -> BotLevel | None:
    """The level called ``name`` (case and surrounding spaces ignored), or None."""
    return _BY_NAME.get(name.strip().lower())


def level_by_code(code: int) -> BotLevel | None:
    """The level a token names by ``code``, or None (0, or a code this build does not know)."""
    return _BY_CODE.get(code)


def bot_for(level: str, budget: Budget | None = None) -> Bot:
    """The bot for a level name (``budget`` only matters for ``pro``)."""
    found = level_named(level)
    if found is None:
        raise ValueError(f"unknown bot level {level!r}; valid levels: {', '.join(LEVELS)}")
    return found.make(budget)


def timeout_bot_move(observation: Observation, ruleset: Ruleset) -> Move:
    """TW's clock: a bot plays the timed-out turn. The ``great`` policy, deterministic."""
    return bot_for("great").choose(observation, ruleset, random.Random(0))


__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "REGISTRY",
    "Bot",
    "BotLevel",
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
    "level_by_code",
    "level_named",
    "public_deal",
    "sample_hands",
    "timeout_bot_move",
    "view_in_deal",
    "view_of",
]
