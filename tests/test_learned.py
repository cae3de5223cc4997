"""The learned bot level (issue 36): numpy's forward pass is torch's, the level decides from its
seat's observation alone, and training runs, checkpoints and resumes to the very same state.
Needs the train extra (torch), which the dev install holds."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, observe
from bigtwo.engine.bots import bot_for
from bigtwo.engine.bots.learned import LearnedBot, q_values
from bigtwo.engine.bots.learned_features import ACTION_SIZE, STATE_SIZE
from bigtwo.tools.learn.model import QNet, to_numpy
from bigtwo.tools.learn.train import RULESETS, Config, Trainer
from test_bots import _reshuffled

PPO_RULES = Ruleset.from_mapping(RULESETS["ppo"])


def test_the_numpy_forward_pass_is_torchs() -> None:
    net = QNet(torch.Generator().manual_seed(5))
    rng = np.random.default_rng(5)
    state = rng.integers(0, 2, STATE_SIZE).astype(np.float32)
    actions = rng.integers(0, 2, (9, ACTION_SIZE)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(np.broadcast_to(state, (9, STATE_SIZE)).copy()), torch.from_numpy(actions))
    got = q_values(to_numpy(net), state, actions)
    assert got.shape == (9,)
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-5, atol=1e-5)
    assert len(set(np.round(got, 6))) > 1  # the moves are told apart


@pytest.mark.parametrize("weights", ["shipped", "random"])
def test_the_learned_level_decides_from_the_observation_alone(weights: str) -> None:
    bot = bot_for("learned") if weights == "shipped" else LearnedBot(to_numpy(QNet(torch.Generator().manual_seed(9))))
    rng = random.Random(36)
    checked = changed = 0
    for _ in range(3):
        deal = Deal.start(PPO_RULES, deal_from_code(DealCode(rng.getrandbits(60)), PPO_RULES))
        while not deal.over:
            seat = deal.to_act
            move = bot.choose(observe(deal, seat), PPO_RULES, random.Random(0))
            other = _reshuffled(PPO_RULES, deal, seat, rng) if deal.moves_made % 2 == 0 else None
            if other is not None:
                changed += other.hands != deal.hands
                assert bot.choose(observe(other, seat), PPO_RULES, random.Random(1)) == move
                checked += 1
            deal.do(move)
    assert checked >= 10 and changed >= 5


def _tiny(seed: int = 3) -> Config:
    return Config(
        seed=seed,
        batch=16,
        buffer=400,
        warm_deals=2,
        snapshot_every=3,
        snapshots=1,
        checkpoint_every=2,
        eval_every=10**9,
    )


def test_training_checkpoints_and_resumes_to_the_same_state(tmp_path: Path) -> None:
    straight = Trainer(_tiny(), tmp_path / "straight")
    straight.run(max_deals=6, log=None)
    halves = Trainer(_tiny(), tmp_path / "halves")
    halves.run(max_deals=3, log=None)
    assert (tmp_path / "halves" / "checkpoint.pt").is_file()
    resumed = Trainer.resume(tmp_path / "halves", "cpu")
    assert resumed.deals == 3 and resumed.steps == halves.steps > 0
    resumed.run(max_deals=3, log=None)
    assert resumed.deals == straight.deals == 6 and resumed.steps == straight.steps
    for name, tensor in straight.net.state_dict().items():
        assert torch.equal(tensor, resumed.net.state_dict()[name]), name
    assert resumed.rng.bit_generator.state == straight.rng.bit_generator.state
    np.testing.assert_array_equal(resumed.buffer.targets, straight.buffer.targets)
    assert len(resumed.snapshots) == 1
    # Another seed trains another network.
    other = Trainer(_tiny(seed=4), tmp_path / "other")
    other.run(max_deals=6, log=None)
    assert not torch.equal(other.net.state1.weight, straight.net.state1.weight)


def test_without_numpy_the_level_is_refused_in_a_sentence_naming_the_extra() -> None:
    script = (
        "import sys; sys.modules['numpy'] = None\n"
        "from bigtwo.engine.bots import bot_for\n"
        "from bigtwo.engine.bots.learned import LearnedUnavailable\n"
        "try:\n    bot_for('learned')\nexcept LearnedUnavailable as error:\n    print(error)\n"
        "print(bot_for('great').level)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert "pip install 'bigtwo[learned]'" in run.stdout and "needs numpy" in run.stdout, run.stdout
    assert run.stdout.rstrip().endswith("great")  # the other levels play on


def test_a_server_without_numpy_refuses_the_learned_level_unimplemented_naming_the_extra() -> None:
    from bigtwo.engine.bots.learned import MISSING_NUMPY, LearnedUnavailable
    from bigtwo.service.errors import to_rpc_status
    from google.rpc import error_details_pb2, status_pb2

    status, code = to_rpc_status(LearnedUnavailable(MISSING_NUMPY))
    assert code.name == "UNIMPLEMENTED"
    proto = status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert proto.details[0].Unpack(info) and info.reason == "BOT_LEVEL_NOT_INSTALLED"
    assert "bigtwo[learned]" in proto.message
