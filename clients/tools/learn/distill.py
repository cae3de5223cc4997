"""Search distillation for the ``learned`` level (issue 36): expert iteration with paired targets.

Deep Monte Carlo self-play (:mod:`.train`) regresses every move on the whole deal's outcome, whose
spread (mostly the cards dealt) dwarfs the difference between two moves; its runs drifted below
``great`` (docs/BOTS.md). Here the targets come from ``pro``'s search instead: at a sampled decision
:class:`~bigtwo.engine.bots.pro.ProBot` plays each of its candidates (great's first few moves) in
the same guessed worlds of the hidden cards and plays the deal out with ``great``;
``ProBot.last_means`` is each candidate's mean value over those worlds. The network is fitted to
those means (points / SCALE): their differences are paired (common worlds), so far less noisy than
a deal's outcome, and they are what makes ``pro`` beat ``great``. Still, one search's worlds are
few: each candidate's difference with great's choice is cut by ``shrink`` standard errors of that
paired difference (pro's own test), so what the network learns is where pro would deviate, not
each search's luck. A decision's row holds:

* its searched candidates, target = great's choice's mean plus the candidate's shrunk difference;
* up to ``anchors`` other legal moves (not searched), target = the starting network's own rating
  (frozen), capped at the lowest searched candidate's mean: a move outside great's first few is
  taken to be no better than the worst of them (pro's own assumption: it never plays one), so the
  network learns to rank them below the searched ones instead of keeping the starting network's
  overrated guesses (a first run that kept them uncapped played worse at margin 0 as it trained:
  docs/BOTS.md).

The loss is the squared error on every cell, plus ``pair_weight`` times the squared error of the
searched candidates' ratings centred on their decision's mean (the differences between moves,
which is what choosing needs).

Who plays: the deal's recorded seat (the deal's number modulo the players) plays the learner (the
current network with the run's margin, as the level plays), the other seats ``great``; about
``search_odds`` of the recorded seat's decisions with a choice are searched. The states are the
ones the level meets in its evaluation (alone against great), the targets those of the search.

Reproducible from ``seed`` (deals from the seed and their number; which decisions are searched and
the anchors from one numpy Generator; each search's worlds from the seed, the deal and the move),
with checkpoints (:func:`.train.save_checkpoint`, atomic) at deal boundaries that resume exactly,
and an evaluation curve as :mod:`.train` records it (:func:`.train.evaluate`).
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, observe
from bigtwo.engine.bots.base import view_in_deal, view_of
from bigtwo.engine.bots.heuristic import finalize, great_order
from bigtwo.engine.bots.learned import LAYERS, MARGIN, SCALE, Weights, pick, q_values
from bigtwo.engine.bots.learned_features import ACTION_SIZE, STATE_SIZE, action_features, candidates, state_features
from bigtwo.engine.bots.pro import Budget, ProBot
from bigtwo.engine.tables import tables_for

from .model import QNet, from_numpy, to_numpy
from .train import CHECKPOINT, RULESETS, evaluate, save_checkpoint, write_curve

KIND = "distill"
"""The checkpoint's ``kind``: tells ``export`` which trainer wrote it."""


@dataclass(frozen=True)
class DistillConfig:
    seed: int = 1
    rulesets: tuple[str, ...] = ("ppo",)
    lr: float = 1e-4
    batch: int = 16
    """Decisions per Adam step (every cell of each)."""
    buffer: int = 20_000
    """Decisions kept (the most recent)."""
    steps_per_search: int = 1
    search_odds: float = 0.5
    simulations: int = 400
    steps: int = 2000
    candidates: int = 4
    """pro's budget for each search (its defaults: ``pro`` as it plays, without a clock)."""
    shrink: float = 1.0
    """Standard errors taken off each candidate's paired difference with great's choice (a soft
    threshold; 0: the raw means). 1 is pro's own margin: a difference the search cannot tell from
    noise becomes no difference, so the network learns pro's deviations, not each search's luck."""
    anchors: int = 6
    pair_weight: float = 4.0
    margin: float = 0.02
    """The margin the learner plays with while collecting and in the curve (see learned.pick): the
    search's targets are paired, so the network's own preferences should need less of a margin
    than the Monte Carlo runs' 0.1-0.3."""
    eval_margins: tuple[float, ...] = (0.0, 0.05, 0.1, 0.3)
    """Other margins each evaluation point also measures, against great only (cheap)."""
    checkpoint_every: int = 500
    eval_every: int = 5_000
    """Searches between evaluation points (checked at the end of each deal)."""
    eval_at_start: bool = True
    """Measure the starting network first (the curve's point at 0 searches)."""
    eval_deals: int = 200
    eval_seed: int = 4242
    eval_against: tuple[str, ...] = ("great", "ppo")
    init: str = "shipped"
    """Where the first network came from (recorded; its arrays are in the checkpoint)."""

    @property
    def columns(self) -> int:
        return self.candidates + self.anchors


@dataclass
class DecisionBuffer:
    """Recent searched decisions, bit-packed, one row per decision with ``columns`` move cells."""

    size: int
    columns: int
    states: np.ndarray[Any, Any] = field(init=False)
    actions: np.ndarray[Any, Any] = field(init=False)
    targets: np.ndarray[Any, Any] = field(init=False)
    searched: np.ndarray[Any, Any] = field(init=False)
    """Per cell: 1 a searched candidate, 2 an anchor, 0 empty."""
    filled: int = 0
    at: int = 0

    def __post_init__(self) -> None:
        self.states = np.zeros((self.size, (STATE_SIZE + 7) // 8), dtype=np.uint8)
        self.actions = np.zeros((self.size, self.columns, (ACTION_SIZE + 7) // 8), dtype=np.uint8)
        self.targets = np.zeros((self.size, self.columns), dtype=np.float32)
        self.searched = np.zeros((self.size, self.columns), dtype=np.uint8)

    def add(
        self,
        state: np.ndarray[Any, Any],
        actions: np.ndarray[Any, Any],
        targets: np.ndarray[Any, Any],
        kinds: list[int],
    ) -> None:
        row = self.at
        self.states[row] = np.packbits(state.astype(np.uint8))
        self.actions[row] = 0
        self.actions[row, : len(actions)] = np.packbits(actions.astype(np.uint8), axis=1)
        self.targets[row] = 0.0
        self.targets[row, : len(targets)] = targets
        self.searched[row] = 0
        self.searched[row, : len(kinds)] = kinds
        self.at = (self.at + 1) % self.size
        self.filled = min(self.filled + 1, self.size)

    def batch(self, rows: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], ...]:
        states = np.unpackbits(self.states[rows], axis=1, count=STATE_SIZE).astype(np.float32)
        actions = np.unpackbits(self.actions[rows], axis=2, count=ACTION_SIZE).astype(np.float32)
        return states, actions, self.targets[rows], self.searched[rows]

    def arrays(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("states", "actions", "targets", "searched", "filled", "at")}


class Distiller:
    def __init__(self, config: DistillConfig, out: Path, init: Weights, device: str | None = None) -> None:
        self.config = config
        self.out = out
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.torch_rng = torch.Generator().manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.init = {name: np.asarray(init[name], dtype=np.float32) for name in LAYERS}
        self.net = from_numpy(QNet(self.torch_rng), self.init).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=config.lr)
        self.buffer = DecisionBuffer(config.buffer, config.columns)
        self.pro = RecordingPro(
            Budget(simulations=config.simulations, steps=config.steps, candidates=config.candidates)
        )
        self.deals = self.searches = self.steps = 0
        self.seconds = 0.0
        self.loss = float("nan")
        self.curve: list[dict[str, Any]] = []
        self.rulesets = [Ruleset.from_mapping(RULESETS[name]) for name in config.rulesets]
        self.acting = to_numpy(self.net)

    # -- checkpoints -------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "config": asdict(self.config),
            "init": self.init,
            "net": self.net.state_dict(),
            "opt": self.opt.state_dict(),
            "rng": self.rng.bit_generator.state,
            "torch_rng": self.torch_rng.get_state(),
            "buffer": self.buffer.arrays(),
            "counts": {"deals": self.deals, "searches": self.searches, "steps": self.steps},
            "seconds": self.seconds,
            "loss": self.loss,
            "curve": self.curve,
        }

    def save(self) -> Path:
        return save_checkpoint(self.out, self.state())

    @classmethod
    def resume(cls, out: Path, device: str | None = None) -> Distiller:
        saved = torch.load(out / CHECKPOINT, weights_only=False, map_location="cpu")
        raw = saved["config"]
        config = DistillConfig(
            **{
                **raw,
                "rulesets": tuple(raw["rulesets"]),
                "eval_against": tuple(raw["eval_against"]),
                "eval_margins": tuple(raw["eval_margins"]),
            }
        )
        distiller = cls(config, out, saved["init"], device)
        distiller.net.load_state_dict(saved["net"])
        distiller.opt.load_state_dict(saved["opt"])
        distiller.rng.bit_generator.state = saved["rng"]
        distiller.torch_rng.set_state(saved["torch_rng"])
        for key, value in saved["buffer"].items():
            setattr(distiller.buffer, key, value)
        counts = saved["counts"]
        distiller.deals, distiller.searches, distiller.steps = counts["deals"], counts["searches"], counts["steps"]
        distiller.seconds, distiller.loss, distiller.curve = saved["seconds"], saved["loss"], saved["curve"]
        distiller.acting = to_numpy(distiller.net)
        return distiller

    # -- self-play with searches -------------------------------------------------------------
    def play_deal(self) -> int:
        """One deal; returns the searches it recorded (each followed by its training steps)."""
        config = self.config
        ruleset = self.rulesets[self.deals % len(self.rulesets)]
        tables = tables_for(ruleset)
        code = DealCode(random.Random(f"bigtwo-distill/{config.seed}/{self.deals}").getrandbits(60))
        deal = Deal.start(ruleset, deal_from_code(code, ruleset))
        recorded = self.deals % ruleset.players
        made = 0
        while not deal.over:
            seat = deal.to_act
            view = view_in_deal(deal)
            if seat == recorded:
                moves = candidates(view)
                mask = moves[0]
                if len(moves) > 1:
                    observation = observe(deal, seat)
                    state = state_features(observation, ruleset, tables)
                    mask = moves[pick(self.acting, state, action_features(view, moves), config.margin)]
                    if self.rng.random() < config.search_odds and self.record(observation, ruleset, state, moves, deal):
                        made += 1
            else:
                mask = finalize(view, great_order(view))
            if mask:
                deal.play_mask(seat, mask)
            else:
                deal.pass_turn(seat)
        self.deals += 1
        return made

    def record(self, observation: Any, ruleset: Ruleset, state: Any, moves: list[int], deal: Deal) -> bool:
        """Search this decision, add its row, train; False when pro had nothing to search."""
        config = self.config
        view = view_of(observation, ruleset)
        worlds = random.Random(f"bigtwo-distill/{config.seed}/{self.deals}/{deal.moves_made}")
        self.pro.search(observation, ruleset, view, worlds)
        means = self.pro.last_means
        if len(means) < 2:
            return False
        searched = self.pro.candidates(view)
        others = [mask for mask in moves if mask not in searched]
        if others and config.anchors:
            chosen = self.rng.choice(len(others), size=min(config.anchors, len(others)), replace=False)
            others = [others[int(i)] for i in sorted(chosen)]
        else:
            others = []
        acts = action_features(view, [*searched, *others])
        searched_targets = self.pro.shrunk(config.shrink) / SCALE
        anchor_targets = np.minimum(q_values(self.init, state, acts[len(searched) :]), searched_targets.min())
        targets = np.concatenate([searched_targets, anchor_targets]).astype(np.float32)
        self.buffer.add(state, acts, targets, [1] * len(searched) + [2] * len(others))
        self.searches += 1
        if self.buffer.filled >= config.batch:
            for _ in range(config.steps_per_search):
                self.train_step()
        return True

    def train_step(self) -> None:
        config = self.config
        rows = self.rng.integers(0, self.buffer.filled, size=config.batch)
        states, actions, targets, kinds = self.buffer.batch(rows)
        batch, columns = targets.shape
        state_t = torch.from_numpy(np.repeat(states, columns, axis=0)).to(self.device)
        action_t = torch.from_numpy(actions.reshape(batch * columns, ACTION_SIZE)).to(self.device)
        rated = self.net(state_t, action_t).reshape(batch, columns)
        target_t = torch.from_numpy(targets).to(self.device)
        filled = torch.from_numpy((kinds > 0).astype(np.float32)).to(self.device)
        searched = torch.from_numpy((kinds == 1).astype(np.float32)).to(self.device)
        loss = ((rated - target_t) ** 2 * filled).sum() / filled.sum()
        if config.pair_weight:
            count = searched.sum(dim=1, keepdim=True)
            centred_rated = rated - (rated * searched).sum(dim=1, keepdim=True) / count
            centred_target = target_t - (target_t * searched).sum(dim=1, keepdim=True) / count
            loss = loss + config.pair_weight * ((centred_rated - centred_target) ** 2 * searched).sum() / searched.sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.steps += 1
        self.loss = float(loss.item()) if self.loss != self.loss else 0.98 * self.loss + 0.02 * float(loss.item())
        self.acting = to_numpy(self.net)

    # -- the loop -----------------------------------------------------------------------------
    def run(self, max_deals: int | None = None, max_seconds: float | None = None, log: Any = sys.stderr) -> None:
        config = self.config
        stop_at = None if max_deals is None else self.deals + max_deals
        started = time.monotonic()
        last_print, window_searches, window_start = started, 0, started
        saved_at, evaluated_at = self.searches, self.searches
        if config.eval_at_start and not self.curve:
            self.evaluate(log)
        while stop_at is None or self.deals < stop_at:
            if max_seconds is not None and time.monotonic() - started >= max_seconds:
                break
            tick = time.monotonic()
            window_searches += self.play_deal()
            self.seconds += time.monotonic() - tick
            if self.searches // config.eval_every > evaluated_at // config.eval_every:
                self.evaluate(log)
                evaluated_at = self.searches
            if self.searches // config.checkpoint_every > saved_at // config.checkpoint_every:
                self.save()
                saved_at = self.searches
            now = time.monotonic()
            if log is not None and now - last_print >= 30:
                rate = window_searches / (now - window_start)
                print(
                    f"deals {self.deals} searches {self.searches} ({rate:.1f}/s) steps {self.steps} "
                    f"loss {self.loss:.5f} buffer {self.buffer.filled} train-time {self.seconds / 60:.1f} min",
                    file=log,
                    flush=True,
                )
                last_print, window_searches, window_start = now, 0, now
        self.save()

    def playing(self) -> Weights:
        """The arrays the learned level plays: the network's, and the run's margin."""
        return {**to_numpy(self.net), MARGIN: np.float32(self.config.margin)}

    def evaluate(self, log: Any = sys.stderr) -> dict[str, Any]:
        point: dict[str, Any] = {
            "deals": self.deals,
            "searches": self.searches,
            "steps": self.steps,
            "train_minutes": round(self.seconds / 60, 1),
        }
        config = self.config
        point.update(evaluate(self.playing(), config.eval_deals, config.eval_seed, config.eval_against))
        if "great" in config.eval_against:
            point["great_at_margin"] = {
                str(margin): evaluate(
                    {**self.playing(), MARGIN: np.asarray(margin, dtype=np.float32)},
                    config.eval_deals,
                    config.eval_seed,
                    ("great",),
                )["great"]
                for margin in config.eval_margins
                if margin != config.margin
            }
        self.curve.append(point)
        write_curve(self.out, self.curve)
        if log is not None:
            print(f"eval {point}", file=log, flush=True)
        return point

    def command(self) -> str:
        """The command that starts this run again from its seed."""
        config = self.config
        return (
            f"python -m bigtwo.tools.learn distill --out {self.out} --seed {config.seed} --init {config.init} "
            f"--rulesets {','.join(config.rulesets)} --simulations {config.simulations} --steps {config.steps} "
            f"--search-odds {config.search_odds} --margin {config.margin} --shrink {config.shrink} "
            f"--eval-every {config.eval_every} --eval-deals {config.eval_deals} "
            f"--checkpoint-every {config.checkpoint_every}"
        )


class RecordingPro(ProBot):
    """pro, keeping what its last search knew of each candidate's paired difference with the
    first (great's choice): the sums of squares behind its margin test."""

    last_diff_sq: tuple[float, ...] = ()
    last_worlds = 0

    def _pick(self, totals: list[float], diff_sq: list[float], done: int) -> int:
        self.last_diff_sq, self.last_worlds = tuple(diff_sq), done
        return super()._pick(totals, diff_sq, done)

    def shrunk(self, errors: float) -> np.ndarray[Any, Any]:
        """Each candidate's mean with its difference to the first's soft-thresholded by ``errors``
        standard errors of that paired difference (one world: no evidence, every candidate the
        first's mean)."""
        means = np.asarray(self.last_means, dtype=np.float64)
        done = self.last_worlds
        diff = means - means[0]
        if done < 2:
            return np.full(len(means), means[0], dtype=np.float32)
        var = np.maximum(np.asarray(self.last_diff_sq) / done - diff**2, 0.0)
        cut = errors * np.sqrt(var / done)
        out: np.ndarray[Any, Any] = (means[0] + np.sign(diff) * np.maximum(np.abs(diff) - cut, 0.0)).astype(np.float32)
        return out


def initial_weights(init: str) -> Weights:
    """The starting network: ``shipped`` (the package's weights), an .npz file, or a checkpoint of
    :mod:`.train` or of this module (its network)."""
    from bigtwo.engine.bots.learned import load_weights

    if init == "shipped":
        return load_weights()
    if init.endswith(".npz"):
        return load_weights(init)
    saved = torch.load(init, weights_only=False, map_location="cpu")
    net = QNet(torch.Generator().manual_seed(0))
    net.load_state_dict(saved["net"])
    return to_numpy(net)
