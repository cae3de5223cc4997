"""The TypeScript client over native gRPC (issue 16): clients/ts's table host (src/host) on Node's
HTTP/2 gRPC transport (src/node/grpc.ts) plays whole games against the service's bots with unary
calls and over PlayStream, gets a refusal, retries a move and resumes a game from a saved token on a
fresh client, against a real server. The script (clients/ts/test/node_games.ts) checks each step
and prints one JSON summary, which is asserted on here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from service_support import ServerProcess
from ts_support import bundle, require_toolchain, run_node, typecheck

pytestmark = pytest.mark.timeout(120)
GAMES = 3


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    require_toolchain()
    tmp = tmp_path_factory.mktemp("ts-node")
    script = bundle("test/node_games.ts", tmp)
    server = ServerProcess(tmp, metrics=False)
    try:
        proc = run_node(script, str(server.port), str(GAMES), timeout=90)
    finally:
        server.stop()
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no summary (exit {proc.returncode}): {proc.stderr}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result["failures"] == [], result["failures"]
    assert proc.returncode == 0 and result["ok"], proc.stderr
    yield result


def test_whole_games_against_bots_are_played_to_the_end_and_settled(summary: dict[str, Any]) -> None:
    games = summary["games"]
    assert games["played"] == games["finished"] == GAMES
    for deal in games["deals"]:
        assert deal["moves"] > 0
        assert deal["scores"][deal["winner"]] == 0
    # The match totals are the deals' scores added up by the service (SettleMatch); a new match
    # starts only if the first one ended, which three classic deals do not.
    assert games["totals"] == [sum(column) for column in zip(*(d["scores"] for d in games["deals"]), strict=True)]


def test_a_game_over_play_stream_ends_and_refuses_on_the_stream(summary: dict[str, Any]) -> None:
    stream = summary["stream"]
    assert stream["finished"] and stream["moves"] > 0
    assert stream["refusal"] == "bad-card"


def test_an_illegal_move_is_refused_with_its_reason_and_sentence(summary: dict[str, Any]) -> None:
    refusal = summary["refusal"]
    assert refusal["accepted"] is False and refusal["movesMadeUnchanged"]
    assert refusal["reasonId"] == "not-in-hand"
    assert refusal["sentence"].startswith("You do not hold ")
    assert refusal["card"][0] in refusal["sentence"]
    # The readout line (NameCards for the person's seat) says the same before anything is sent.
    assert refusal["readout"]["playable"] is False and refusal["readout"]["reasonId"] == "not-in-hand"
    assert refusal["readout"]["hinted"]


def test_a_retried_move_is_answered_again_and_not_applied_twice(summary: dict[str, Any]) -> None:
    retry = summary["retry"]
    assert retry["sameAnswer"] and retry["sameFromOldToken"]
    assert retry["movesMadeAfterRetry"] == retry["movesMadeBefore"] == retry["move"]["index"] + 1
    assert retry["differentMove"] == "MOVE_ALREADY_MADE"
    assert retry["dealFinished"]


def test_a_game_resumed_from_a_saved_token_on_a_fresh_client_ends_as_the_original(summary: dict[str, Any]) -> None:
    resume = summary["resume"]
    assert resume["ok"] and resume["savedAt"] >= 8
    for transport in ("unary", "stream"):
        assert resume[transport]["resumedAt"] == resume["savedAt"]
        assert resume[transport]["scores"] == resume["expected"]


def test_errors_are_typed_with_the_services_details(summary: dict[str, Any]) -> None:
    tampered = summary["tampered"]
    assert tampered["typed"] and tampered["code"] == "InvalidArgument"
    assert tampered["reason"] == "TOKEN_BAD_SIGNATURE"
    assert tampered["fields"] == ["game.state_token"]


def test_the_typescript_sources_typecheck() -> None:
    proc = typecheck()
    assert proc.returncode == 0, proc.stdout + proc.stderr
