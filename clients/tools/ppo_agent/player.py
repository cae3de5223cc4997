"""The published agent as a seat at this project's table: a :class:`~bigtwo.engine.bots.Bot`.

From the seat's observation alone (its dealt hand from the history's first event, then every play
and pass), it builds the 412 numbers the agent's own game would give it (:mod:`.state`), lists the
moves legal in both games (this project's legal plays that the agent's game also offers in that
position, :mod:`.actions`, and pass where passing is allowed), and plays the one its policy rates
highest (greedy: the argmax of the logits over those moves). A position where only one move is
legal in both is played without the network (the agent's game plays 3♦ alone for its holder; the
holder of 3♦ here may lead any hand with it, so the one move in both is 3♦ alone).
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np
from bigtwo.engine import Ruleset
from bigtwo.engine.bots import Budget, bot_for
from bigtwo.engine.bots.base import Bot, masks_of, view_of
from bigtwo.engine.deal import Move
from bigtwo.engine.events import CardsPlayed, DealStarted, Passed
from bigtwo.engine.observation import Observation

from . import actions
from .network import Weights, forward, load_weights
from .source import LEVEL
from .state import Encoder, Played


@cache
def cached_weights(path: str) -> Weights:
    return load_weights(path)


class PpoBot:
    """The agent playing greedily (see the module docstring)."""

    level = LEVEL

    def __init__(self, weights: Weights) -> None:
        self.weights = weights

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        encoder, offered = candidates(observation, ruleset)
        if len(offered) == 1:
            return _move(observation.seat, next(iter(offered.values())))
        logits = forward(self.weights, encoder.vector).logits
        order = sorted(offered)
        best = order[int(np.argmax(logits[order]))]
        return _move(observation.seat, offered[best])


def candidates(observation: Observation, ruleset: Ruleset) -> tuple[Encoder, dict[int, int]]:
    """The seat's encoder, and the moves legal in both games: the agent's action index -> card
    mask (0 for pass)."""
    if ruleset.players != 4:
        raise ValueError("the PPO agent plays 4-player Big Two only")
    view = view_of(observation, ruleset)
    encoder = replay(observation)
    hand = encoder.hand
    offered = actions.options(hand, _cards(view.table.mask) if view.table else None)
    both: dict[int, int] = {}
    for mask in masks_of(view.legal):
        positions = tuple(hand.index(card) for card in _cards(mask))
        index = actions.index_of(positions)
        if index is not None and positions in offered:
            both[index] = mask
    if view.can_pass:
        both[actions.PASS] = 0
    if not both:
        raise ValueError("no move is legal in both games (the agent always has a single to lead)")
    return encoder, both


def replay(observation: Observation) -> Encoder:
    """The seat's encoder after every move of the observed history."""
    opening = observation.history[0] if observation.history else None
    if not isinstance(opening, DealStarted):
        raise ValueError("the PPO agent needs the deal's history from its start (observe with_history=True)")
    encoder = Encoder(observation.seat, _cards(opening.hands[observation.seat]), len(observation.cards_left))
    for event in observation.history[1:]:
        if isinstance(event, CardsPlayed):
            encoder.apply(Played(event.seat, tuple(_cards(event.mask))))
        elif isinstance(event, Passed):
            encoder.apply(Played(event.seat, ()))
    return encoder


def _cards(mask: int) -> list[int]:
    return [index for index in range(52) if mask >> index & 1]


def _move(seat: int, mask: int) -> Move:
    return Move.pass_(seat) if mask == 0 else Move.from_mask(seat, mask)


def bot_or_agent(weights: str, level: str, budget: Budget | None = None) -> Bot:
    """A tournament's bot factory: ``ppo`` is the agent with the weights at ``weights``."""
    if level == LEVEL:
        return PpoBot(cached_weights(weights))
    return bot_for(level, budget)
