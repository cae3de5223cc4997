"""The TypeScript deal codes (clients/ts/src/dealing.ts, docs/DEALING.md "In TypeScript") deal the same
cards as the engine: the published vectors, refusals of mistyped codes, and random seeds under every
preset dealt by both and compared here."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from bigtwo.engine import PRESET_NAMES, DealCode, Ruleset, deal_from_code, dealing, mask_text, shuffled_deck
from ts_support import bundle, run_node, typecheck

VECTORS_PATH = Path(__file__).parent / "data" / "deal-code-vectors.json"
RANKS = "3456789TJQKA2"
SUITS = "DCHS"
RANDOM_SEEDS = 300


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundle("test/dealing_vectors.ts", tmp_path_factory.mktemp("ts-dealing"))


def summary_of(stdout: str) -> dict[str, Any]:
    lines = stdout.strip().splitlines()
    assert lines, "the script printed no summary"
    summary: dict[str, Any] = json.loads(lines[-1])
    return summary


def run_json(script: Path, mode: str, payload: object, tmp_path: Path) -> Any:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(payload), encoding="utf-8")
    proc = run_node(script, mode, str(request))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def card_text(index: int) -> str:
    return RANKS[index // 4] + SUITS[index % 4]


def test_typescript_sources_typecheck() -> None:
    proc = typecheck()
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_published_vector_and_refusal(script: Path) -> None:
    proc = run_node(script, str(VECTORS_PATH))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = summary_of(proc.stdout)
    vectors = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    assert summary["ok"] is True
    assert summary["mismatches"] == 0
    assert summary["cases"] == len(vectors["cases"])
    assert summary["deck"] == 1
    assert summary["sha256"] >= 5
    codes = {case["code"] for case in vectors["cases"]}
    # Per code: 13 positions x 31 other symbols, plus bad characters and neighbour swaps.
    assert summary["refusals"] > len(codes) * 13 * 31
    assert summary["lenient"] >= len(codes)


def _change_a_card(vectors: dict[str, Any]) -> str:
    case = vectors["cases"][4]
    hands = case["hands"]
    first, second = hands[0].split(), hands[1].split()
    first[0], second[0] = second[0], first[0]
    hands[0], hands[1] = " ".join(first), " ".join(second)
    return str(case["code"])


def _change_the_face_up_card(vectors: dict[str, Any]) -> str:
    case = next(case for case in vectors["cases"] if "face_up_card" in case)
    case["face_up_card"] = "3H" if case["face_up_card"] != "3H" else "3S"
    return str(case["code"])


def _change_the_deck(vectors: dict[str, Any]) -> str:
    cards = vectors["shuffled_deck_seed0_round0"].split()
    cards[10], cards[11] = cards[11], cards[10]
    vectors["shuffled_deck_seed0_round0"] = " ".join(cards)
    return "seed 0 round 0 deck"


@pytest.mark.parametrize("change", [_change_a_card, _change_the_face_up_card, _change_the_deck])
def test_a_changed_vector_fails(script: Path, tmp_path: Path, change: Any) -> None:
    vectors = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    where = change(vectors)
    changed = tmp_path / "vectors.json"
    changed.write_text(json.dumps(vectors), encoding="utf-8")
    proc = run_node(script, str(changed))
    assert proc.returncode != 0
    assert summary_of(proc.stdout)["ok"] is False
    assert "MISMATCH" in proc.stderr and where in proc.stderr


def _rulesets() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in PRESET_NAMES:
        out += [
            {"preset": name},
            {"preset": name, "players": 3},
            {"preset": name, "players": 2},
            {"preset": name, "players": 2, "cards_each": 17},
        ]
    out += [
        {"players": 2, "suit_order": "CSHD", "two_player_start": "reshuffle-until-lowest"},
        {"preset": "taiwan", "players": 2, "cards_each": 17, "two_player_start": "lowest-dealt-card"},
        {"players": 3, "suit_order": "CDHS"},
        {"preset": "pusoy-dos", "players": 3, "cards_each": 13},
    ]
    return out


def test_random_seeds_deal_as_the_engine_does(script: Path, tmp_path: Path) -> None:
    generator = random.Random(16_05)
    seeds = [0, 1, (1 << 60) - 1] + [generator.getrandbits(60) for _ in range(RANDOM_SEEDS)]
    rulesets = _rulesets()
    requests = [(DealCode(seed), ruleset) for seed in seeds for ruleset in rulesets]
    payload = [{"code": str(code), "ruleset": ruleset} for code, ruleset in requests]
    deals = run_json(script, "--deal", payload, tmp_path)
    assert len(deals) == len(requests)
    reshuffled_players: set[int] = set()
    for (code, mapping), deal in zip(requests, deals, strict=True):
        rules = Ruleset.from_mapping(mapping)
        dealt = deal_from_code(code, rules)
        context = (str(code), mapping)
        assert deal["seed"] == str(code.seed), context
        assert deal["code"] == str(code), context
        assert deal["options"] == {
            "players": rules.players,
            "cardsEach": rules.hand_size,
            "suitOrder": rules.suit_order.value,
            "twoPlayerStart": rules.two_player_start.value,
        }, context
        assert deal["hands"] == [mask_text(hand) for hand in dealt.hands], context
        assert deal["shuffle_rounds"] == dealt.shuffle_rounds, context
        if rules.players == 3:
            assert deal["face_up_card"] == card_text(dealt.face_up_card), context
            assert deal["face_up_seat"] == dealt.face_up_seat, context
        else:
            assert deal["face_up_card"] is None and deal["face_up_seat"] is None, context
        if dealt.shuffle_rounds > 1:
            reshuffled_players.add(rules.players)
    # Both reshuffle rules (3-player face-up lowest card, 2-player reshuffle-until-lowest) were met.
    assert reshuffled_players == {2, 3}


@pytest.mark.parametrize("divisor", [1, 5])
def test_rejected_words_draw_more_words_as_the_engine_does(
    script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, divisor: int
) -> None:
    # The page's limits reject a word about once in 7 million shuffles; a fifth of them rejects most
    # words, so both shuffles must redraw and read past the seven blocks a shuffle usually takes.
    monkeypatch.setattr(
        dealing, "_LIMITS", tuple(((1 << 32) - (1 << 32) % n) // divisor if n else 0 for n in range(53))
    )
    cases = [(seed, round_number) for seed in (0, 1, 2**40 + 9, (1 << 60) - 1) for round_number in (0, 3)]
    payload = [{"seed": str(seed), "round": round_number, "divisor": divisor} for seed, round_number in cases]
    decks = run_json(script, "--deck", payload, tmp_path)
    expected = [" ".join(card_text(card) for card in shuffled_deck(seed, round_number)) for seed, round_number in cases]
    assert decks == expected


def test_sha256_matches_hashlib_across_padding_boundaries(script: Path, tmp_path: Path) -> None:
    generator = random.Random(256)
    messages = [generator.randbytes(length) for length in [*range(0, 200), 1000, 4096, 65_537]]
    digests = run_json(script, "--sha256", [message.hex() for message in messages], tmp_path)
    assert digests == [hashlib.sha256(message).hexdigest() for message in messages]
