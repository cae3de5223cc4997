"""The ``learned`` level: a network trained by self-play (``python -m bigtwo.tools.learn``, issue 36)
rates every move the seat may make and the seat plays the highest rated.

The network is a Deep Monte Carlo value function (as in DouZero): ``Q(state, move)`` estimates the
seat's points at the end of the deal (scaled: points / :data:`SCALE`) after making ``move``. It reads
only :mod:`.learned_features`' numbers of the seat's observation and the ruleset. Its forward pass
is numpy's (the ``learned`` extra); the engine itself still installs with the standard library
alone, and asking for this level without numpy is refused in a sentence naming the extra.

The weights ship inside the package (``learned_weights.npz``), with ``learned_weights.json`` beside
them recording the command, seed, training steps and the figures measured when they were taken.
Reading them is this level's one file read, done once per process on first use.
"""

from __future__ import annotations

import random
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..cache import BoundedCache
from ..deal import Move
from ..observation import Observation
from ..rules import Ruleset
from .base import view_of

if TYPE_CHECKING:
    import numpy.typing as npt

LEVEL = "learned"
WEIGHTS = "learned_weights.npz"
SCALE = 13.0
"""Targets are the seat's points divided by this (a whole hand left, 13 cards, is 1)."""
LAYERS = ("w1", "b1", "w2", "b2", "w3s", "w3a", "b3", "w4", "b4", "w5", "b5")
MARGIN = "margin"
"""The optional array (a scalar) in the weights: how much higher (in points / SCALE) another move
must be rated than great's first choice to be played instead (see :func:`pick`)."""
MISSING_NUMPY = (
    "the 'learned' bot level needs numpy, which is not installed: "
    "pip install 'bigtwo[learned]' (in a checkout: pip install -e '.[learned]')"
)

Weights = dict[str, "npt.NDArray[Any]"]


class LearnedUnavailable(RuntimeError):
    """The level cannot play here (numpy missing); the message says what to install."""


def _numpy() -> Any:
    try:
        import numpy
    except ModuleNotFoundError:
        raise LearnedUnavailable(MISSING_NUMPY) from None
    return numpy


def load_weights(path: str | None = None) -> Weights:
    """The network's arrays from ``path`` (an .npz), or the ones shipped with the package."""
    np = _numpy()
    if path is None:
        with resources.files(__package__).joinpath(WEIGHTS).open("rb") as handle:
            return _arrays(np, np.load(handle))
    with np.load(path) as data:
        return _arrays(np, data)


def _arrays(np: Any, data: Any) -> Weights:
    names = [*LAYERS, MARGIN] if MARGIN in data.files else LAYERS
    return {name: np.asarray(data[name], dtype=np.float32) for name in names}


_SHIPPED: BoundedCache[str, Weights] = BoundedCache("engine.bots.learned.weights", 1)
"""The shipped network, read once per process (1.1 MB of arrays; one entry: there is one file)."""


def shipped_weights() -> Weights:
    return _SHIPPED.get_or_compute("shipped", lambda _: load_weights())


def q_values(weights: Weights, state: npt.NDArray[Any], actions: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The network's rating of each row of ``actions`` in ``state`` (the trainer's model, in numpy)."""
    np = _numpy()
    hidden = np.maximum(state @ weights["w1"] + weights["b1"], 0.0)
    hidden = np.maximum(hidden @ weights["w2"] + weights["b2"], 0.0)
    joint = np.maximum(actions @ weights["w3a"] + (hidden @ weights["w3s"] + weights["b3"]), 0.0)
    joint = np.maximum(joint @ weights["w4"] + weights["b4"], 0.0)
    out: npt.NDArray[Any] = joint @ weights["w5"] + weights["b5"]
    return out


def pick(weights: Weights, state: npt.NDArray[Any], actions: npt.NDArray[Any], margin: float | None = None) -> int:
    """The row of ``actions`` to play: the highest rated, where great's first choice (its action
    feature) is credited ``margin`` (default: the weights' own, else 0). The network's ratings are
    Monte Carlo estimates from a short training: a move it rates only slightly above great's
    choice is as likely noise as a find, so it replaces great's choice only by a clear margin."""
    from .learned_features import GREAT_FIRST

    rated = q_values(weights, state, actions)
    if margin is None:
        margin = float(weights[MARGIN]) if MARGIN in weights else 0.0
    if margin:
        rated = rated + margin * actions[:, GREAT_FIRST]
    return int(rated.argmax())


class LearnedBot:
    """Plays the move the network rates highest, great's first choice credited the weights'
    margin (ties: the first in the engine's order)."""

    level = LEVEL

    def __init__(self, weights: Weights | None = None) -> None:
        _numpy()
        self.weights = weights

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        del rng  # deterministic: the same observation always gets the same move
        from . import learned_features as features

        view = view_of(observation, ruleset)
        moves = features.candidates(view)
        if len(moves) == 1:
            mask = moves[0]
        else:
            weights = self.weights if self.weights is not None else shipped_weights()
            state = features.state_features(observation, ruleset, view.tables)
            mask = moves[pick(weights, state, features.action_features(view, moves))]
        return Move.pass_(view.seat) if mask == 0 else Move.from_mask(view.seat, mask)
