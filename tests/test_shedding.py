"""Shedding the way gRPC clients understand it (issue 31): a call refused for load answers
RESOURCE_EXHAUSTED with a google.rpc.RetryInfo and gRPC's retry pushback (``grpc-retry-pushback-ms``),
a request over a limit answers RESOURCE_EXHAUSTED with a pushback of -1 (do not retry), and the
published service config makes a stock gRPC client retry the first and not the second.

Against a real server forced to shed (one heavy-call worker, no waiting room, pro searches at once)."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.engine import DealCode
from bigtwo.service.errors import RETRY_PUSHBACK_KEY, SHED_JITTER, ResourceExhausted, Shed, to_rpc_status
from bigtwo.service.game import CallInfo
from bigtwo.service.offload import Done
from bigtwo.service.service_config import retry_policy, service_config_text
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from service_support import ServerProcess, details, free_port

CLASSIC = pb.Ruleset(preset="classic")
GAME = pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=str(DealCode(5))))
TOO_LONG = api.LegalMovesRequest(
    game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=str(DealCode(5)), moves=["pass"] * 1100))
)
"""A log over the limit of 1024 moves: RESOURCE_EXHAUSTED LOG_TOO_LONG, the same answer every time."""
SEARCHES = 3
SEARCH_MS = 100
LONG_SEARCH_MS = 400
"""Searches sent at once that must meet in the pool (so some are shed) whatever the machine's load:
long enough that the last one sent arrives while the first still computes."""


def search(seed: int, ms: int = SEARCH_MS) -> api.BotMoveRequest:
    return api.BotMoveRequest(game=GAME, level="pro", seed=seed, max_ms=ms)


def retry_info(trailing: Any) -> error_details_pb2.RetryInfo | None:
    for key, value in trailing:
        if key == rpc_status.GRPC_DETAILS_METADATA_KEY:
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return info
    return None


def pushback(trailing: Any) -> str | None:
    return dict(trailing).get(RETRY_PUSHBACK_KEY)


# -- the one mapping ---------------------------------------------------------------------------------


def test_a_shed_carries_a_retry_delay_and_the_same_pushback() -> None:
    for _ in range(20):
        status, code = to_rpc_status(Shed("busy", reason="HEAVY_CALLS_BUSY", retry_after=0.2))
        info = retry_info(status.trailing_metadata)
        assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and info is not None
        delay_ms = info.retry_delay.ToMilliseconds()
        # The delay the answer advertises (retry_after plus its jitter), read from the status: no clock.
        assert 200 <= delay_ms <= 200 * (1 + SHED_JITTER)
        assert pushback(status.trailing_metadata) == str(delay_ms)


@pytest.mark.parametrize(
    "error",
    [
        ResourceExhausted("log.moves: 1100 moves; at most 1024", reason="LOG_TOO_LONG"),
        ResourceExhausted("too large", reason="AUDIT_TOO_LARGE"),
        RecursionError("too deep"),
    ],
)
def test_a_request_over_a_limit_tells_clients_not_to_retry(error: BaseException) -> None:
    status, code = to_rpc_status(error)
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert retry_info(status.trailing_metadata) is None
    assert pushback(status.trailing_metadata) == "-1"


def test_other_errors_carry_no_pushback() -> None:
    status, code = to_rpc_status(ValueError("bad"))
    assert code is grpc.StatusCode.INVALID_ARGUMENT and pushback(status.trailing_metadata) is None


def test_a_limit_error_from_a_worker_process_carries_the_same_pushback() -> None:
    status, _ = to_rpc_status(ResourceExhausted("over", reason="LOG_TOO_LONG"))
    detail_bytes = dict(status.trailing_metadata)[rpc_status.GRPC_DETAILS_METADATA_KEY]
    with pytest.raises(Exception) as caught:
        Done(b"", CallInfo(), detail_bytes, "over").unpack(CallInfo())
    assert pushback(caught.value.status.trailing_metadata) == "-1"  # type: ignore[attr-defined]


def test_the_service_config_is_shipped_with_a_retry_policy() -> None:
    config = json.loads(service_config_text())
    assert config["methodConfig"][0]["name"] == [{"service": "bigtwo.v1.BigTwoService"}]
    policy = retry_policy()
    assert set(policy["retryableStatusCodes"]) == {"UNAVAILABLE", "RESOURCE_EXHAUSTED"}
    assert 2 <= policy["maxAttempts"] <= 5  # gRPC caps attempts at 5


# -- a stock gRPC client against a real server that sheds ------------------------------------------------


def metric(server: ServerProcess, line_start: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start))


@pytest.mark.slow
def test_a_stock_client_with_the_service_config_retries_sheds_and_not_limits(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--heavy-workers", "1", "--heavy-waiting", "0", "--no-call-log")
    try:

        async def searches(options: list[tuple[str, Any]], ms: int) -> list[Any]:
            async with grpc.aio.insecure_channel(server.target, options=options) as channel:
                stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
                calls = [stub.BotMove(search(seed, ms), timeout=60) for seed in range(SEARCHES)]
                return list(await asyncio.gather(*calls, return_exceptions=True))

        # Without retries: one worker, no waiting room, three searches at once: some are shed.
        plain = asyncio.run(searches([("grpc.enable_retries", 0)], LONG_SEARCH_MS))
        shed = [answer for answer in plain if isinstance(answer, grpc.RpcError)]
        assert shed and len(shed) < SEARCHES
        for error in shed:
            assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert details(error)["reason"] == "HEAVY_CALLS_BUSY"
            assert retry_info(error.trailing_metadata()) is not None
            assert int(pushback(error.trailing_metadata()) or "-1") >= 200
        sheds_before = metric(server, 'bigtwo_shed_total{reason="HEAVY_CALLS_BUSY"}')
        assert sheds_before >= len(shed)

        # The same with the published service config: every search answered, by gRPC's own retries.
        config = [("grpc.service_config", service_config_text())]
        retried = asyncio.run(searches(config, SEARCH_MS))
        assert all(isinstance(answer, api.BotMoveResponse) for answer in retried), retried
        assert metric(server, 'bigtwo_shed_total{reason="HEAVY_CALLS_BUSY"}') > sheds_before, "sheds were retried"

        # A request over a limit is answered once: the pushback of -1 stops the retry policy.
        counted = 'bigtwo_rpc_calls_total{code="RESOURCE_EXHAUSTED",method="LegalMoves"'
        before = metric(server, counted)
        with grpc.insecure_channel(server.target, options=config) as channel:
            stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
            with pytest.raises(grpc.RpcError) as caught:
                stub.LegalMoves(TOO_LONG, timeout=30)
        assert details(caught.value)["reason"] == "LOG_TOO_LONG"
        assert pushback(caught.value.trailing_metadata()) == "-1"
        # grpc.aio sends an aborted call's status before its handler's scope counts it: wait for
        # the count (bounded), then no other attempt may have come (the client has its answer).
        for _ in range(100):
            if metric(server, counted) >= before + 1:
                break
            time.sleep(0.05)
        time.sleep(0.2)
        assert metric(server, counted) == before + 1, "not retried"
    finally:
        server.stop()


# -- the browser port says the same ---------------------------------------------------------------------


def connect_call(port: int, method: str, request: Any) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A Connect unary call in JSON (what a browser sends): the HTTP status, headers and body."""
    from google.protobuf import json_format

    body = json_format.MessageToJson(request).encode()
    url = f"http://127.0.0.1:{port}/bigtwo.v1.BigTwoService/{method}"
    headers = {"content-type": "application/json", "connect-protocol-version": "1"}
    call = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(call, timeout=60) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, json.loads(error.read())


@pytest.mark.slow
def test_the_browser_port_sheds_with_the_same_details_and_pushback(tmp_path: Path) -> None:
    web_port = free_port()
    server = ServerProcess(
        tmp_path, "--heavy-workers", "1", "--heavy-waiting", "0", "--no-call-log", "--web-port", str(web_port)
    )
    try:
        answers: list[tuple[int, dict[str, str], dict[str, Any]]] = []

        def one(seed: int) -> None:
            answers.append(connect_call(web_port, "BotMove", search(seed, LONG_SEARCH_MS)))

        threads = [threading.Thread(target=one, args=(seed,)) for seed in range(SEARCHES)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        shed = [(headers, body) for status, headers, body in answers if status != 200]
        assert shed and len(shed) < SEARCHES
        for headers, body in shed:
            assert body["code"] == "resource_exhausted"
            types = {detail["type"]: detail["value"] for detail in body["details"]}
            assert "google.rpc.RetryInfo" in types
            padded = types["google.rpc.RetryInfo"] + "=" * (-len(types["google.rpc.RetryInfo"]) % 4)
            delay = error_details_pb2.RetryInfo.FromString(base64.b64decode(padded)).retry_delay.ToMilliseconds()
            assert headers[f"trailer-{RETRY_PUSHBACK_KEY}"] == str(delay)
        status, headers, body = connect_call(web_port, "LegalMoves", TOO_LONG)
        assert status == 429 and body["code"] == "resource_exhausted"
        assert headers[f"trailer-{RETRY_PUSHBACK_KEY}"] == "-1"
        assert all(detail["type"] != "google.rpc.RetryInfo" for detail in body["details"])
    finally:
        server.stop()


# -- the project's client retries sheds, within the call's deadline, never a move twice ---------------------


@pytest.mark.slow
def test_the_client_retries_sheds_within_the_deadline_and_applies_each_move_once(tmp_path: Path) -> None:
    from bigtwo.client import BigTwoClient
    from bigtwo.client.client_errors import BigTwoResourceExhausted
    from bigtwo.client.results import GameRef
    from bigtwo.engine import preset

    server = ServerProcess(tmp_path, "--heavy-workers", "1", "--heavy-waiting", "0", "--no-call-log")
    rules = preset("classic")
    try:
        with BigTwoClient(server.target, timeout=30, seed=7) as client:
            games = [client.deal(rules, deal_code=str(DealCode(seed))) for seed in (11, 12, 13)]
            played: dict[int, list[int]] = {}
            failures: list[BaseException] = []

            def play(number: int) -> None:
                # Each turn: a pro search (three tables at once on one worker: some are shed and
                # retried), then its move applied; every move carries its index.
                try:
                    game, table = games[number].game, games[number].table
                    indices = played.setdefault(number, [])
                    for _ in range(6):
                        choice = client.bot_move(game, "pro", seed=number, max_ms=SEARCH_MS)
                        result = client.apply_move(game, choice.move, seat=table.to_act)
                        assert result.accepted
                        indices.append(result.index)
                        game, table = result.game, result.table
                    assert game.moves_made == 6 and len(game.moves) == 6
                except BaseException as error:  # reported below, with the thread's failure
                    failures.append(error)

            threads = [threading.Thread(target=play, args=(number,)) for number in range(len(games))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=300)
            assert not failures, failures
            assert all(indices == list(range(6)) for indices in played.values()), played
            assert client.shed_retries > 0, "three searches at once on one worker: some were shed and retried"

            # A request over a limit is never retried.
            before = client.retries_made
            with pytest.raises(BigTwoResourceExhausted) as caught:
                client.legal_moves(GameRef(rules, deal_code=str(DealCode(5)), moves=("pass",) * 1100))
            assert caught.value.reason == "LOG_TOO_LONG" and not caught.value.shed
            assert client.retries_made == before
    finally:
        server.stop()


def test_a_shed_is_retried_only_within_the_calls_deadline() -> None:
    import random

    from bigtwo.client.client_errors import BigTwoResourceExhausted, BigTwoUnavailable
    from bigtwo.client.transport import CallDeadline, RetryPolicy, _next_wait

    policy, rng = RetryPolicy(), random.Random(3)
    shed = BigTwoResourceExhausted(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy", retry_delay=0.2)
    limit = BigTwoResourceExhausted(grpc.StatusCode.RESOURCE_EXHAUSTED, "too long", reason="LOG_TOO_LONG")
    asked: list[Any] = []

    def retried(error: Any) -> bool:
        asked.append(error)
        return error.shed or error.code is grpc.StatusCode.UNAVAILABLE

    for number in range(3):
        wait = _next_wait(policy, rng, retried, CallDeadline(5.0), number, shed)
        assert wait is not None and 0.2 <= wait <= max(0.2 * (1 + policy.jitter), policy.max_backoff)
    assert _next_wait(policy, rng, retried, CallDeadline(0.1), 0, shed) is None, "the wait would pass the deadline"
    assert _next_wait(policy, rng, retried, CallDeadline(5.0), 0, limit) is None, "a limit is not retried"
    assert _next_wait(policy, rng, retried, CallDeadline(5.0), policy.attempts - 1, shed) is None
    # After UNAVAILABLE the retry goes to another target with a whole deadline of its own.
    deadline = CallDeadline(0.1)
    gone = BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, "gone")
    wait = _next_wait(policy, rng, retried, deadline, 0, gone)
    assert wait is not None and deadline.left() > 0.1
