"""Deep Monte Carlo self-play for the ``learned`` level (issue 36), as DouZero and big2-rl train.

Each deal is played to its end; every decision with a choice records the seat's state numbers and
the chosen move's numbers (:mod:`bigtwo.engine.bots.learned_features`, the seat's observation and
the ruleset only), and its target is the seat's final points / SCALE. The network
(:class:`~.model.QNet`) is regressed on those targets (mean squared error, Adam) from a replay
buffer of recent decisions. Who sits where:

* the first ``warm_deals`` deals are ``great`` at every seat, each move replaced by a random legal
  one with probability ``warm_epsilon``: the network first learns the value of great's moves and of
  the moves great would not make (a warm start by Monte Carlo evaluation of ``great``, not by
  copying its choices);
* after that, each seat is, by chance, the learner (epsilon-greedy over its ratings), ``great``,
  ``good``, or one of the last ``snapshots`` frozen copies of the learner (the league).

Reproducible: every random choice comes from one numpy Generator and one torch Generator seeded
from ``seed``, the deals from ``seed`` and their number; a checkpoint holds the network, the
optimiser, both generators, the buffer, the league and the curve, written atomically every
``checkpoint_every`` deals, and a run started on an existing checkpoint resumes it exactly.
Evaluation points (``eval_every`` deals) play the current network against ``great`` and against
the PPO agent under the agent's ruleset on fixed held-out deals (``bigtwo tournament`` deal codes
of ``eval_seed``; training deals come from another generator), seating field, 95% intervals.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, observe
from bigtwo.engine.bots import bot_for
from bigtwo.engine.bots.base import view_in_deal
from bigtwo.engine.bots.heuristic import finalize, good_order, great_order
from bigtwo.engine.bots.learned import MARGIN, SCALE, LearnedBot, Weights, pick
from bigtwo.engine.bots.learned_features import (
    ACTION_SIZE,
    STATE_SIZE,
    action_features,
    candidates,
    state_features,
)
from bigtwo.engine.bots.pro import utility
from bigtwo.engine.tables import tables_for

from .model import QNet, to_numpy

RULESETS: dict[str, dict[str, Any]] = {
    "ppo": {"preset": "web", "straights": "no-twos", "flush": "rank-first", "penalty": "flat", "match": "single"},
    "classic": {"preset": "classic"},
}
"""Rulesets by name: ``ppo`` is the PPO agent's (bigtwo.tools.ppo_agent.source.RULESET)."""

CHECKPOINT = "checkpoint.pt"
CURVE = "curve.json"


@dataclass(frozen=True)
class Config:
    seed: int = 1
    rulesets: tuple[str, ...] = ("ppo", "classic")
    lr: float = 3e-4
    batch: int = 256
    buffer: int = 20_000
    steps_per_deal: int = 1
    epsilon: float = 0.05
    margin: float = 0.1
    """The learner (and the exported level) plays another move than great's first choice only
    when the network rates it this much higher (points / SCALE): see learned.pick."""
    warm_deals: int = 2_000
    warm_epsilon: float = 0.15
    league: tuple[tuple[str, float], ...] = (("learner", 0.6), ("great", 0.25), ("good", 0.05), ("snapshot", 0.1))
    snapshot_every: int = 2_000
    snapshots: int = 2
    sync_every: int = 10
    checkpoint_every: int = 200
    eval_every: int = 2_000
    eval_deals: int = 100
    eval_seed: int = 4242
    eval_against: tuple[str, ...] = ("great", "ppo")


@dataclass
class Buffer:
    """Recent decisions, bit-packed (every feature is 0 or 1), in a ring."""

    size: int
    states: np.ndarray[Any, Any] = field(init=False)
    actions: np.ndarray[Any, Any] = field(init=False)
    targets: np.ndarray[Any, Any] = field(init=False)
    filled: int = 0
    at: int = 0

    def __post_init__(self) -> None:
        self.states = np.zeros((self.size, (STATE_SIZE + 7) // 8), dtype=np.uint8)
        self.actions = np.zeros((self.size, (ACTION_SIZE + 7) // 8), dtype=np.uint8)
        self.targets = np.zeros(self.size, dtype=np.float32)

    def add(self, states: np.ndarray[Any, Any], actions: np.ndarray[Any, Any], targets: np.ndarray[Any, Any]) -> None:
        packed_s = np.packbits(states.astype(np.uint8), axis=1)
        packed_a = np.packbits(actions.astype(np.uint8), axis=1)
        for row in range(len(targets)):
            self.states[self.at] = packed_s[row]
            self.actions[self.at] = packed_a[row]
            self.targets[self.at] = targets[row]
            self.at = (self.at + 1) % self.size
            self.filled = min(self.filled + 1, self.size)

    def batch(
        self, rows: np.ndarray[Any, Any]
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        states = np.unpackbits(self.states[rows], axis=1, count=STATE_SIZE).astype(np.float32)
        actions = np.unpackbits(self.actions[rows], axis=1, count=ACTION_SIZE).astype(np.float32)
        return states, actions, self.targets[rows]


class Trainer:
    def __init__(self, config: Config, out: Path, device: str | None = None) -> None:
        self.config = config
        self.out = out
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.torch_rng = torch.Generator().manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.net = QNet(self.torch_rng).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=config.lr)
        self.buffer = Buffer(config.buffer)
        self.deals = 0
        self.steps = 0
        self.seconds = 0.0
        self.loss = float("nan")
        self.snapshots: list[Weights] = []
        self.curve: list[dict[str, Any]] = []
        self.rulesets = [Ruleset.from_mapping(RULESETS[name]) for name in config.rulesets]
        self.acting = to_numpy(self.net)

    # -- checkpoints -------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "config": asdict(self.config),
            "net": self.net.state_dict(),
            "opt": self.opt.state_dict(),
            "rng": self.rng.bit_generator.state,
            "torch_rng": self.torch_rng.get_state(),
            "buffer": {k: getattr(self.buffer, k) for k in ("states", "actions", "targets", "filled", "at")},
            "deals": self.deals,
            "steps": self.steps,
            "seconds": self.seconds,
            "snapshots": [
                {k: v.astype(np.float16) for k, v in snap.items()} for snap in self.snapshots
            ],  # exact: see _half
            "curve": self.curve,
            "acting": self.acting,
        }

    def save(self) -> Path:
        """The checkpoint, written whole or not at all (a temporary file renamed over the old)."""
        return save_checkpoint(self.out, self.state())

    @classmethod
    def resume(cls, out: Path, device: str | None = None) -> Trainer:
        saved = torch.load(out / CHECKPOINT, weights_only=False, map_location="cpu")
        raw = saved["config"]
        config = Config(
            **{
                **raw,
                "rulesets": tuple(raw["rulesets"]),
                "eval_against": tuple(raw["eval_against"]),
                "league": tuple(tuple(pair) for pair in raw["league"]),
            }
        )
        trainer = cls(config, out, device)
        trainer.net.load_state_dict(saved["net"])
        trainer.opt.load_state_dict(saved["opt"])
        trainer.rng.bit_generator.state = saved["rng"]
        trainer.torch_rng.set_state(saved["torch_rng"])
        for key, value in saved["buffer"].items():
            setattr(trainer.buffer, key, value)
        trainer.deals, trainer.steps, trainer.seconds = saved["deals"], saved["steps"], saved["seconds"]
        trainer.snapshots = [{k: v.astype(np.float32) for k, v in snap.items()} for snap in saved["snapshots"]]
        trainer.curve = saved["curve"]
        trainer.acting = saved.get("acting") or to_numpy(trainer.net)  # checkpoints before acting was kept
        return trainer

    # -- self-play ----------------------------------------------------------------------------
    def roles(self, players: int) -> list[str]:
        if self.deals < self.config.warm_deals:
            return ["warm"] * players
        names = [name for name, _ in self.config.league]
        odds = np.array([p for _, p in self.config.league], dtype=np.float64)
        odds /= odds.sum()
        picked = [names[int(i)] for i in self.rng.choice(len(names), size=players, p=odds)]
        out = []
        for role in picked:
            if role == "snapshot":
                role = f"snapshot{int(self.rng.integers(len(self.snapshots)))}" if self.snapshots else "learner"
            out.append(role)
        return out

    def play_deal(self) -> int:
        """One self-play deal into the buffer; returns the decisions recorded."""
        config = self.config
        ruleset = self.rulesets[self.deals % len(self.rulesets)]
        tables = tables_for(ruleset)
        code = DealCode(random.Random(f"bigtwo-learn/{config.seed}/{self.deals}").getrandbits(60))
        deal = Deal.start(ruleset, deal_from_code(code, ruleset))
        roles = self.roles(ruleset.players)
        states: list[list[np.ndarray[Any, Any]]] = [[] for _ in roles]
        chosen: list[list[np.ndarray[Any, Any]]] = [[] for _ in roles]
        while not deal.over:
            seat = deal.to_act
            view = view_in_deal(deal)
            moves = candidates(view)
            pick = 0
            if len(moves) > 1:
                state = state_features(observe(deal, seat), ruleset, tables)
                acts = action_features(view, moves)
                pick = self.pick(roles[seat], view, moves, state, acts)
                states[seat].append(state)
                chosen[seat].append(acts[pick])
            mask = moves[pick]
            if mask:
                deal.play_mask(seat, mask)
            else:
                deal.pass_turn(seat)
        made = 0
        for seat in range(len(roles)):
            if states[seat]:
                target = np.full(len(states[seat]), utility(ruleset, deal, seat) / SCALE, dtype=np.float32)
                self.buffer.add(np.stack(states[seat]), np.stack(chosen[seat]), target)
                made += len(states[seat])
        self.deals += 1
        return made

    def pick(self, role: str, view: Any, moves: list[int], state: Any, acts: Any) -> int:
        if role in ("warm", "great", "good"):
            explore = self.config.warm_epsilon if role == "warm" else 0.0
            if explore and self.rng.random() < explore:
                return int(self.rng.integers(len(moves)))
            order = good_order(view) if role == "good" else great_order(view)
            return moves.index(finalize(view, order))
        if role == "learner":
            if self.rng.random() < self.config.epsilon:
                return int(self.rng.integers(len(moves)))
            return pick(self.acting, state, acts, self.config.margin)
        return pick(self.snapshots[int(role.removeprefix("snapshot"))], state, acts, self.config.margin)

    def train_step(self) -> None:
        rows = self.rng.integers(0, self.buffer.filled, size=self.config.batch)
        states, actions, targets = self.buffer.batch(rows)
        predicted = self.net(torch.from_numpy(states).to(self.device), torch.from_numpy(actions).to(self.device))
        loss = torch.nn.functional.mse_loss(predicted, torch.from_numpy(targets).to(self.device))
        self.opt.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]  # torch's stub leaves it untyped
        self.opt.step()
        self.steps += 1
        self.loss = float(loss.item()) if self.loss != self.loss else 0.98 * self.loss + 0.02 * float(loss.item())
        if self.steps % self.config.sync_every == 0:
            self.acting = to_numpy(self.net)

    # -- the loop -----------------------------------------------------------------------------
    def run(self, max_deals: int | None = None, max_seconds: float | None = None, log: Any = sys.stderr) -> None:
        config = self.config
        stop_at = None if max_deals is None else self.deals + max_deals
        started = time.monotonic()
        last_print, window_deals, window_start = started, 0, started
        while stop_at is None or self.deals < stop_at:
            if max_seconds is not None and time.monotonic() - started >= max_seconds:
                break
            tick = time.monotonic()
            self.play_deal()
            if self.buffer.filled >= config.batch:
                for _ in range(config.steps_per_deal):
                    self.train_step()
            window_deals += 1
            if self.deals % config.snapshot_every == 0 and self.deals > config.warm_deals:
                self.snapshots = [*self.snapshots, _half(to_numpy(self.net))][-config.snapshots :]
            self.seconds += time.monotonic() - tick
            if self.deals % config.eval_every == 0:
                self.evaluate(log)
            if self.deals % config.checkpoint_every == 0:
                self.save()
            now = time.monotonic()
            if now - last_print >= 30:
                rate = window_deals / (now - window_start)
                print(
                    f"deals {self.deals} ({rate:.1f}/s) steps {self.steps} loss {self.loss:.4f} "
                    f"buffer {self.buffer.filled} train-time {self.seconds / 60:.1f} min",
                    file=log,
                    flush=True,
                )
                last_print, window_deals, window_start = now, 0, now
        self.save()

    def playing(self) -> Weights:
        """The arrays the learned level plays: the network's, and the margin."""
        return {**to_numpy(self.net), MARGIN: np.float32(self.config.margin)}

    def evaluate(self, log: Any = sys.stderr) -> dict[str, Any]:
        point: dict[str, Any] = {"deals": self.deals, "steps": self.steps, "train_minutes": round(self.seconds / 60, 1)}
        point.update(evaluate(self.playing(), self.config.eval_deals, self.config.eval_seed, self.config.eval_against))
        self.curve.append(point)
        write_curve(self.out, self.curve)
        print(f"eval {json.dumps(point)}", file=log, flush=True)
        return point


def save_checkpoint(out: Path, state: dict[str, Any]) -> Path:
    """``state`` into ``out``/checkpoint.pt, written whole or not at all (a temporary file renamed
    over the old): a run killed while saving resumes from the previous checkpoint."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / CHECKPOINT
    temporary = path.with_suffix(".tmp")
    torch.save(state, temporary)
    os.replace(temporary, path)
    return path


def write_curve(out: Path, curve: list[dict[str, Any]]) -> None:
    """The evaluation points into ``out``/curve.json, atomically."""
    out.mkdir(parents=True, exist_ok=True)
    temporary = out / (CURVE + ".tmp")
    temporary.write_text(json.dumps(curve, indent=1) + "\n")
    os.replace(temporary, out / CURVE)


def _half(weights: Weights) -> Weights:
    """A league snapshot is kept at float16 precision from the start, so the checkpoint (which
    stores it at float16) resumes the very same opponent."""
    return {name: array.astype(np.float16).astype(np.float32) for name, array in weights.items()}


def evaluate(weights: Weights, deals: int, seed: int, against: tuple[str, ...]) -> dict[str, Any]:
    """learned − opponent in the same seat (seating field: learned alone against three copies of
    the opponent, every seat), under the PPO agent's ruleset, points per deal with 95% intervals."""
    from bigtwo.tools.ppo_agent.source import weights_path
    from bigtwo.tools.tournament import Seating, run_tournament

    ruleset = Ruleset.from_mapping(RULESETS["ppo"])
    out: dict[str, Any] = {}
    for opponent in against:
        if opponent == "ppo" and not weights_path().is_file():
            out["ppo"] = "skipped: the PPO agent's weights are not fetched (docs/BOTS.md)"
            continue

        def factory(level: str, budget: Any, opponent: str = opponent) -> Any:
            if level == "learned":
                return LearnedBot(weights)
            if level == "ppo":
                from bigtwo.tools.ppo_agent.player import bot_or_agent

                return bot_or_agent(str(weights_path()), level)
            return bot_for(level, budget)

        started = time.monotonic()
        result = run_tournament(
            ruleset, ("learned", opponent), deals, seed, 1, seating=Seating.FIELD, bot_factory=factory
        )
        mean, low, high = result.paired("learned", opponent)
        out[opponent] = {
            "mean": round(mean, 3),
            "ci95": [round(low, 3), round(high, 3)],
            "deals": deals,
            "seconds": round(time.monotonic() - started, 1),
        }
    return out
