"""Where the published PPO agent comes from, where its files are looked for, and the ruleset it
is measured under. Importing this needs nothing beyond the standard library (numpy only when the
agent plays), so ``bots_bench`` can say how to fetch the agent on any machine.

The agent's code and weights never ship with this project (they are not in the repository nor the
wheel): they are fetched into ``.tools/ppo/``, which git ignores.
"""

from __future__ import annotations

import os
from pathlib import Path

LEVEL = "ppo"
SOURCE_REPO = "https://github.com/henrycharlesworth/big2_PPOalgorithm"
SOURCE_COMMIT = "eea4b04f544fcbf3ca29f117858363b466873f0e"
DEFAULT_SOURCE = Path(".tools/ppo/big2_PPOalgorithm")
WEIGHTS_FILE = "modelParameters136500"
SOURCE_ENV = "BIGTWO_PPO_SOURCE"
WEIGHTS_ENV = "BIGTWO_PPO_WEIGHTS"
RULESET = {"preset": "web", "straights": "no-twos", "flush": "rank-first", "penalty": "flat", "match": "single"}
"""The ruleset closest to the agent's game (issue 36): 3♦ leads, a card left costs 1, zero-sum."""


def fetch_instructions(where: Path) -> str:
    """What to run when the agent's files are missing (they never ship with this project)."""
    return (
        f"the PPO agent's weights are not at {where}. Fetch the agent (its code and trained "
        f"parameters, about 17 MB with its history) into .tools/ppo/, which git ignores:\n"
        f"    git clone {SOURCE_REPO} {DEFAULT_SOURCE}\n"
        f"    git -C {DEFAULT_SOURCE} checkout {SOURCE_COMMIT}\n"
        f"or point --ppo-weights (or {WEIGHTS_ENV}) at a copy of {WEIGHTS_FILE}"
    )


def source_dir() -> Path:
    return Path(os.environ.get(SOURCE_ENV) or DEFAULT_SOURCE)


def weights_path(given: str | None = None) -> Path:
    """``given``, else $BIGTWO_PPO_WEIGHTS, else modelParameters136500 in the fetched source."""
    return Path(given or os.environ.get(WEIGHTS_ENV) or source_dir() / WEIGHTS_FILE)
