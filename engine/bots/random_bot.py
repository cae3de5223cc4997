"""The ``random`` level: a baseline for tests and tournaments."""

from __future__ import annotations

import random

from ..deal import Move
from ..generate import CARD_MASK
from ..observation import Observation
from ..rules import Ruleset
from .base import move_of, view_of


class RandomBot:
    """Uniform over the legal moves (each play, and pass when allowed, counts once)."""

    level = "random"

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        view = view_of(observation, ruleset)
        options = [e & CARD_MASK for e in view.legal]
        if view.can_pass:
            options.append(0)
        return move_of(view, rng.choice(options) if options else 0)
