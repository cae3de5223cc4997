"""The numpy port of the published PPO agent (bigtwo.tools.ppo_agent, issue 36) against the
original code's own answers.

tests/data/ppo_recorded.json holds what the original's ``big2Game`` gave the player to act at
every decision of six games (its 412-number state and its available actions), recorded by
``python -m bigtwo.tools.ppo_agent.record --theirs 3 --ours 3 --seed 36`` from a fetched copy of the
agent: numbers only, none of its code. Those checks run anywhere. Where the agent is fetched
(``.tools/ppo/big2_PPOalgorithm``, or $BIGTWO_PPO_SOURCE), the original runs again in a subprocess:
the fixture must come out the same, and fresh games on another seed must match too; its trained
weights then also go through the reader and the forward pass.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bigtwo.engine import Deal, DealCode, Move, Ruleset, deal_from_code, observe
from bigtwo.engine.dealing import DealtCards
from bigtwo.engine.events import CardsPlayed, DealStarted, Passed
from bigtwo.tools.ppo_agent import actions
from bigtwo.tools.ppo_agent.network import LAYOUT, Weights, WeightsError, forward, load_weights
from bigtwo.tools.ppo_agent.player import PpoBot, candidates
from bigtwo.tools.ppo_agent.source import RULESET, WEIGHTS_FILE
from bigtwo.tools.ppo_agent.state import Played, encode

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "data" / "ppo_recorded.json"
SOURCE = Path(os.environ.get("BIGTWO_PPO_SOURCE") or ROOT / ".tools" / "ppo" / "big2_PPOalgorithm")
NO_SOURCE = (
    f"the published agent is not fetched at {SOURCE} (git clone "
    "https://github.com/henrycharlesworth/big2_PPOalgorithm .tools/ppo/big2_PPOalgorithm): the original "
    "cannot be run again; the recorded fixture is still checked"
)
RULES = Ruleset.from_mapping(RULESET)


def _recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED.read_text())
    return data


def _ones(state: str) -> list[int]:
    bits = int(state, 16)
    return [i for i in range(412) if bits >> i & 1]


def _table_and_hand(game: dict[str, Any], seat: int, moves: list[Played]) -> tuple[list[int] | None, list[int]]:
    hand = sorted(game["dealt"][seat])
    table: list[int] | None = None
    passes = 0
    for move in moves:
        if move.seat == seat:
            hand = [card for card in hand if card not in move.cards]
        if move.cards:
            table, passes = list(move.cards), 0
        else:
            passes += 1
            if passes == 3:
                table, passes = None, 0
    return table, hand


def check_against_original(data: dict[str, Any]) -> int:
    """Every recorded decision: the port's state and available actions equal the original's."""
    checked = 0
    for number, game in enumerate(data["games"]):
        moves = [Played(seat, tuple(cards)) for seat, cards in game["moves"]]
        for decision in game["decisions"]:
            seat, made = decision["seat"], decision["move"]
            where = f"game {number} ({game['kind']}), decision after {made} moves, seat {seat}"
            mine = [int(i) for i in encode(seat, game["dealt"][seat], moves[:made]).nonzero()[0]]
            assert mine == _ones(decision["state"]), where
            table, hand = _table_and_hand(game, seat, moves[:made])
            offered = {actions.index_of(p) for p in actions.options(hand, table)}
            if table is not None:
                offered.add(actions.PASS)
            assert sorted(i for i in offered if i is not None) == decision["available"], where
            checked += 1
    return checked


def check_player_along_engine(data: dict[str, Any]) -> int:
    """The ``ours`` games replayed in this engine: the player's state, rebuilt from each seat's
    observation, and its moves legal in both games equal what the original gave."""
    checked = 0
    for game in data["games"]:
        if game["kind"] != "ours":
            continue
        deal = Deal.start(RULES, DealtCards(tuple(sum(1 << c for c in hand) for hand in game["dealt"])))
        decisions = {decision["move"]: decision for decision in game["decisions"]}
        for made, (seat, cards) in enumerate(game["moves"]):
            if made in decisions:
                encoder, both = candidates(observe(deal, seat, with_history=True), RULES)
                assert [int(i) for i in encoder.vector.nonzero()[0]] == _ones(decisions[made]["state"]), made
                assert sorted(both) == decisions[made]["both"], made
                checked += 1
            deal.do(Move.pass_(seat) if not cards else Move.from_mask(seat, sum(1 << c for c in cards)))
        assert deal.over
    return checked


def test_action_layout_is_the_originals() -> None:
    data = _recorded()
    assert actions.tables_digest(actions.layout()[1:]) == data["action_tables_sha256"]
    sizes = [len(block) for block in actions.layout()]
    assert sizes == [13, 33, 31, 330, 1287] and sum(sizes) + 1 == actions.ACTIONS
    for index in (0, 12, 13, 45, 46, 76, 77, 406, 407, 1693):
        assert actions.index_of(actions.positions_of(index)) == index
    assert actions.positions_of(actions.PASS) == ()


def test_states_and_available_actions_match_the_original_on_recorded_games() -> None:
    assert check_against_original(_recorded()) > 400


def test_the_player_sees_what_the_original_gives_along_this_engines_deals() -> None:
    assert check_player_along_engine(_recorded()) > 150


def test_kept_quirks_of_the_original() -> None:
    # Of four 7s at positions 0-3 the triple (0, 1, 3) is never offered.
    sevens = [16, 17, 18, 19, 40]
    assert actions.triples(sevens) == [(0, 1, 2), (0, 2, 3), (1, 2, 3)]
    # A plain straight on the table reads as straight and full house, ranked by its middle card.
    straight = (0, 5, 10, 13, 16)  # 3♦ 4♣ 5♥ 6♣ 7♦
    vector = encode(0, [1, 2, 3, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [Played(1, straight)])
    table = [int(i) - 383 for i in vector[383:].nonzero()[0] + 383]
    assert table == [2, 23, 25, 26]  # rank 5, straight, full house, no pass; no suit
    # Nothing beats a straight flush in its game.
    assert actions.options([44, 45, 46, 47, 48], [0, 4, 8, 12, 16]) == set()


def _random_weights(seed: int) -> Weights:
    rng = np.random.default_rng(seed)
    arrays = tuple((rng.standard_normal(shape) * 0.1).astype(np.float32) for _, shape in LAYOUT)
    return Weights(arrays, "random")


def _plain_forward(weights: Weights, state: list[int]) -> tuple[list[float], float]:
    """The network written out as loops over Python floats (nothing shared with the port)."""

    def layer(x: list[float], w: Any, b: Any, relu: bool) -> list[float]:
        rows = w.tolist()
        out = []
        for j, bias in enumerate(b.tolist()):
            total = bias + math.fsum(x[i] * rows[i][j] for i in range(len(x)) if x[i])
            out.append(max(total, 0.0) if relu else total)
        return out

    named = weights.named
    x = [float(v) for v in state]
    h1 = layer(x, named("fc1/w"), named("fc1/b"), True)
    h2 = layer(h1, named("fc2/w"), named("fc2/b"), True)
    h3 = layer(h1, named("fc3/w"), named("fc3/b"), True)
    return layer(h2, named("pi/w"), named("pi/b"), False), layer(h3, named("vf/w"), named("vf/b"), False)[0]


def _check_forward(weights: Weights, state: list[int]) -> None:
    got = forward(weights, np.array(state))
    logits, value = _plain_forward(weights, state)
    assert np.allclose(got.logits, logits, rtol=1e-4, atol=1e-4)
    assert math.isclose(got.value, value, rel_tol=1e-4, abs_tol=1e-4)


def test_forward_pass_matches_a_plain_computation() -> None:
    state = [0] * 412
    for i in _ones(_recorded()["games"][0]["decisions"][5]["state"]):
        state[i] = 1
    _check_forward(_random_weights(1), state)


def write_joblib_format(path: Path, arrays: list[Any]) -> None:
    """A list of arrays as joblib.dump writes it: for each, a NumpyArrayWrapper built from its
    shape, order and dtype, then the array's raw bytes right after (protocol 3, no framing)."""

    class Writer(pickle._Pickler):
        def save(self, obj: Any, save_persistent_id: bool = True) -> None:
            if not isinstance(obj, np.ndarray):
                super().save(obj, save_persistent_id)  # type: ignore[misc]
                return
            self.write(pickle.GLOBAL + b"joblib.numpy_pickle\nNumpyArrayWrapper\n" + pickle.EMPTY_TUPLE + pickle.NEWOBJ)  # type: ignore[attr-defined]
            state = {"subclass": np.ndarray, "shape": obj.shape, "order": "C", "dtype": obj.dtype}
            super().save(state, save_persistent_id)  # type: ignore[misc]
            self.write(pickle.BUILD + obj.tobytes())  # type: ignore[attr-defined]

    buffer = io.BytesIO()
    Writer(buffer, protocol=3).dump(list(arrays))
    path.write_bytes(buffer.getvalue())


def test_weights_reader_reads_joblib_format_and_refuses_anything_else(tmp_path: Path) -> None:
    weights = _random_weights(2)
    path = tmp_path / WEIGHTS_FILE
    write_joblib_format(path, list(weights.arrays))
    loaded = load_weights(path)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.arrays, weights.arrays, strict=True))
    hostile = tmp_path / "hostile"
    hostile.write_bytes(pickle.dumps([os.system], protocol=3))
    with pytest.raises(WeightsError, match=r"(posix|nt|os)\.system"):
        load_weights(hostile)
    short = tmp_path / "short"
    short.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(WeightsError, match="ends inside"):
        load_weights(short)
    with pytest.raises(WeightsError, match="cannot read"):
        load_weights(tmp_path / "absent")


def test_the_agent_plays_legal_moves_from_its_observation_alone() -> None:
    bot = PpoBot(_random_weights(3))
    for number in range(3):
        deal = Deal.start(RULES, deal_from_code(DealCode(900 + number), RULES))
        while not deal.over:
            seat = deal.to_act
            seen = observe(deal, seat, with_history=True)
            move = bot.choose(seen, RULES, random.Random(0))
            # Another deal with the same public history and this seat's hand, other hidden cards.
            other = _swap_hidden(deal, seat)
            assert bot.choose(observe(other, seat, with_history=True), RULES, random.Random(1)) == move
            deal.do(move)


def _swap_hidden(deal: Deal, seat: int) -> Deal:
    """The deal replayed with two other seats' lowest unplayed cards exchanged."""
    hands = list(deal.hands)
    a, b = [s for s in range(4) if s != seat and hands[s]][:2]
    low_a, low_b = hands[a] & -hands[a], hands[b] & -hands[b]
    opening = deal.events[0]
    assert isinstance(opening, DealStarted)
    started = list(opening.hands)
    started[a] = started[a] ^ low_a | low_b
    started[b] = started[b] ^ low_b | low_a
    other = Deal.start(RULES, DealtCards(tuple(started)))
    for event in deal.events[1:]:
        if isinstance(event, CardsPlayed):
            other.do(Move.from_mask(event.seat, event.mask))
        elif isinstance(event, Passed):
            other.do(Move.pass_(event.seat))
    return other


def test_bench_says_how_to_fetch_missing_weights(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "bigtwo.tools.bots_bench", "--against", "ppo", "--ppo-weights", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "git clone https://github.com/henrycharlesworth/big2_PPOalgorithm" in run.stderr
    assert "--ppo-weights" in run.stderr


def test_bench_against_the_agent_short_run(tmp_path: Path) -> None:
    path = tmp_path / WEIGHTS_FILE
    write_joblib_format(path, list(_random_weights(4).arrays))
    out = tmp_path / "against.json"
    argv = ["--against", "ppo", "--against-levels", "great", "--deals", "3", "--jobs", "1"]
    argv += ["--ppo-weights", str(path), "--json", str(out), "--no-progress"]
    run = subprocess.run(
        [sys.executable, "-m", "bigtwo.tools.bots_bench", *argv], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    (entry,) = report["levels"]
    assert entry["level"] == "great" and entry["deals"] == 3
    assert entry["tournament"]["seating"] == "field"
    low, high = entry["ci95"]
    assert low <= entry["mean"] <= high


@pytest.mark.skipif(not (SOURCE / "big2Game.py").is_file(), reason=NO_SOURCE)
def test_the_original_reproduces_the_fixture_and_agrees_on_fresh_games(tmp_path: Path) -> None:
    def record(*argv: str) -> dict[str, Any]:
        out = tmp_path / "recorded.json"
        command = [sys.executable, "-m", "bigtwo.tools.ppo_agent.record", "--source", str(SOURCE), *argv]
        subprocess.run([*command, "--out", str(out)], check=True, timeout=300, cwd=tmp_path)
        data: dict[str, Any] = json.loads(out.read_text())
        return data

    assert record("--theirs", "3", "--ours", "3", "--seed", "36") == _recorded()
    fresh = record("--theirs", "30", "--ours", "15", "--seed", "37")
    assert check_against_original(fresh) > 2000
    assert check_player_along_engine(fresh) > 600


@pytest.mark.skipif(not (SOURCE / WEIGHTS_FILE).is_file(), reason=NO_SOURCE)
def test_the_trained_weights_load_and_the_forward_pass_matches() -> None:
    weights = load_weights(SOURCE / WEIGHTS_FILE)
    state = [0] * 412
    for i in _ones(_recorded()["games"][4]["decisions"][10]["state"]):
        state[i] = 1
    _check_forward(weights, state)
