"""Search distillation for the learned level (bigtwo.tools.learn distill): its targets are pro's
paired candidate means, and a run checkpoints and resumes to the very same network as a run
straight through. A tiny run: two or three deals, a pro budget of a few rollouts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the train extra (torch) is not installed: pip install -e '.[train]'")

from bigtwo.engine.bots.learned import LAYERS, MARGIN, load_weights  # noqa: E402
from bigtwo.tools.learn.__main__ import main  # noqa: E402
from bigtwo.tools.learn.distill import DistillConfig, Distiller, RecordingPro  # noqa: E402
from bigtwo.tools.learn.model import QNet, to_numpy  # noqa: E402


def _tiny(seed: int = 3) -> DistillConfig:
    return DistillConfig(
        seed=seed,
        batch=2,
        buffer=60,
        search_odds=0.6,
        simulations=6,
        steps=80,
        candidates=3,
        anchors=2,
        checkpoint_every=1,
        eval_every=10**9,
        eval_at_start=False,
        init="random",
    )


def _start(config: DistillConfig, out: Path) -> Distiller:
    return Distiller(config, out, to_numpy(QNet(torch.Generator().manual_seed(11))))


def test_distillation_checkpoints_and_resumes_to_the_same_network(tmp_path: Path) -> None:
    straight = _start(_tiny(), tmp_path / "straight")
    straight.run(max_deals=3, log=None)
    assert straight.searches >= 2 and straight.steps > 0
    halves = _start(_tiny(), tmp_path / "halves")
    halves.run(max_deals=2, log=None)
    resumed = Distiller.resume(tmp_path / "halves", "cpu")
    assert (resumed.deals, resumed.searches, resumed.steps) == (2, halves.searches, halves.steps)
    resumed.run(max_deals=1, log=None)
    assert (resumed.deals, resumed.searches, resumed.steps) == (straight.deals, straight.searches, straight.steps)
    for name, tensor in straight.net.state_dict().items():
        assert torch.equal(tensor, resumed.net.state_dict()[name]), name
    assert resumed.rng.bit_generator.state == straight.rng.bit_generator.state
    np.testing.assert_array_equal(resumed.buffer.targets, straight.buffer.targets)
    # Another seed plays other deals and trains another network.
    other = _start(_tiny(seed=4), tmp_path / "other")
    other.run(max_deals=3, log=None)
    assert not torch.equal(other.net.state1.weight, straight.net.state1.weight)


def test_a_decisions_row_holds_pros_means_and_anchors(tmp_path: Path) -> None:
    run = _start(_tiny(), tmp_path / "run")
    run.run(max_deals=2, log=None)
    buffer = run.buffer
    assert buffer.filled == run.searches >= 1
    kinds = buffer.searched[: buffer.filled]
    assert ((kinds == 1).sum(axis=1) >= 2).all()  # every row: at least two searched candidates
    # Under the agent's ruleset (zero-sum, at most 3 x 13 points won) a mean / 13 stays within 3.
    searched = buffer.targets[: buffer.filled][kinds == 1]
    assert np.abs(searched).max() <= 3.0 and len(set(searched.tolist())) > 1
    # An unsearched move (anchor) is held no higher than the worst searched candidate of its row.
    targets = buffer.targets[: buffer.filled]
    lowest = np.where(kinds == 1, targets, np.inf).min(axis=1, keepdims=True)
    assert (kinds == 2).any() and (targets[kinds == 2] <= np.broadcast_to(lowest, targets.shape)[kinds == 2]).all()


def test_export_writes_a_distilled_network_the_level_reads(tmp_path: Path) -> None:
    run = _start(_tiny(), tmp_path / "run")
    run.run(max_deals=1, log=None)
    target = tmp_path / "weights.npz"
    assert main(["export", "--out", str(tmp_path / "run"), "--to", str(target), "--margin", "0.2"]) == 0
    weights = load_weights(str(target))
    assert float(weights[MARGIN]) == pytest.approx(0.2)
    for name in LAYERS:
        np.testing.assert_array_equal(weights[name], run.playing()[name])
    assert "distill" in target.with_suffix(".json").read_text()


def test_a_searched_difference_is_cut_by_its_standard_errors() -> None:
    pro = RecordingPro()
    # Four worlds; candidate 1 beats the first by 2 in every world (no spread: kept whole),
    # candidate 2 by +4, -4, +4, -4 (mean 0: no evidence), candidate 3 by 3, 1, 3, 1 (mean 2,
    # spread 1 a world: standard error 0.5).
    pro.last_means, pro.last_worlds = (1.0, 3.0, 1.0, 3.0), 4
    pro.last_diff_sq = (0.0, 16.0, 64.0, 20.0)
    np.testing.assert_allclose(pro.shrunk(1.0), [1.0, 3.0, 1.0, 2.5])
    np.testing.assert_allclose(pro.shrunk(0.0), [1.0, 3.0, 1.0, 3.0])
    pro.last_worlds = 1
    np.testing.assert_allclose(pro.shrunk(1.0), [1.0, 1.0, 1.0, 1.0])
