"""Heavy calls run off the event loop (service/offload.py): the streams keep moving while one
computes, at most a bounded number wait, a call given up before it starts never starts, the answer
is the same byte for byte whichever way a call runs, and a worker that dies is replaced.

Progress is asserted in counts (moves made while a heavy call is in flight), never in seconds."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.engine import Deal, DealCode, Move, deal_from_code, preset
from bigtwo.service.core import CallInfo, Core
from bigtwo.service.costs import Where, place
from bigtwo.service.errors import ResourceExhausted, to_rpc_status
from bigtwo.service.limits import LIMITS
from bigtwo.service.offload import DEADLINE_MARGIN, DEFAULT_WAITING, Done, Offload, cap_search, run
from bigtwo.service.servicer import Hosting, ServiceCore
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from service_support import KEY_A, ServerProcess, alive, children_of, details

CLASSIC = pb.Ruleset(preset="classic")
HARD_SPLIT_HAND = "3D 3S 4D 4S 5D 5H 5S 6D 6S 7D 7S 8D 8S 9D 9S TD JD AS"
"""An 18-card hand whose fewest-plays split is a long search (pairs along a run)."""


def deal_moves(seed: int) -> tuple[str, list[str]]:
    """A classic deal's code and a whole deal of legal moves (weakest play, or pass when following)."""
    rules = preset("classic")
    code = DealCode(seed)
    deal = Deal.start(rules, deal_from_code(code, rules))
    rng = random.Random(seed)
    moves = []
    while not deal.over:
        legal = deal.legal_moves()
        move: Move = legal[-1] if legal[-1].is_pass and rng.random() < 0.6 else legal[0]
        moves.append(str(move))
        deal.do(move)
    return str(code), moves


def log_game(code: str, moves: list[str]) -> pb.Game:
    return pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=code, moves=moves))


def heavy_request(name: str) -> Any:
    code, moves = deal_moves(7)
    if name == "SplitHand":
        return api.SplitHandRequest(ruleset=CLASSIC, hand=HARD_SPLIT_HAND)
    if name == "TimeoutMove":
        return api.TimeoutMoveRequest(game=log_game(code, moves[:5]), bot_level="pro")
    if name == "BotMove":
        return api.BotMoveRequest(game=log_game(code, moves[:5]), level="pro", seed=3, simulations=10_000)
    if name == "LegalMoves":
        hand = "3D 3C 3H 3S 4D 4C 4H 4S 5D 5C 5H 5S 6D 6C 6H 6S 7D 7S"
        return api.LegalMovesRequest(position=api.HandPosition(ruleset=CLASSIC, hand=hand))
    raise AssertionError(name)


def make_core() -> Core:
    return Core(TokenCodec(KeyRing([KEY_A.encode()])))


# -- which calls ---------------------------------------------------------------------------------


def test_the_heavy_requests_of_these_tests_run_in_the_pool() -> None:
    """Placed by their cost bound (tests/test_costs.py has the rules): these requests are the
    large bounds the tests below rely on; a plain TimeoutMove is a table lookup."""
    core = make_core()
    for name in ("SplitHand", "TimeoutMove", "BotMove", "LegalMoves"):
        assert place(name, heavy_request(name), core, CallInfo()).where is Where.POOL, name
    code, moves = deal_moves(7)
    plain = api.TimeoutMoveRequest(game=log_game(code, moves[:5]))
    assert place("TimeoutMove", plain, core, CallInfo()).where is Where.LOOP


# -- the same answer whichever way -----------------------------------------------------------------


def requests_and_errors() -> list[tuple[str, Any]]:
    code, moves = deal_moves(11)
    return [
        ("bot_move", api.BotMoveRequest(game=log_game(code, moves[:9]), level="great", seed=5)),
        ("bot_move", api.BotMoveRequest(game=log_game(code, moves[:9]), level="pro", seed=5, simulations=200)),
        ("bot_move", api.BotMoveRequest(game=log_game(code, moves), level="good")),  # the deal is over
        ("bot_move", api.BotMoveRequest(game=log_game(code, moves[:3]), level="grandmaster")),
        ("bot_move", api.BotMoveRequest(game=log_game(code, ["9H 9H"]), level="pro")),  # a refused log move
        ("split_hand", api.SplitHandRequest(ruleset=CLASSIC, hand="3D 4D 5D 6D 7D 8S 8H 9C 9D")),
        ("split_hand", api.SplitHandRequest(ruleset=CLASSIC, hand=" ".join(["3D"] * 80))),
        ("legal_moves", api.LegalMovesRequest(game=log_game(code, moves[:4]))),
        ("next_hint", api.NextHintRequest(game=log_game(code, moves[:4]))),
        ("timeout_move", api.TimeoutMoveRequest(game=log_game(code, moves[:4]), bot_level="great")),
        ("settle_match", api.SettleMatchRequest(ruleset=CLASSIC, deals=[pb.DealResult(winner=9)])),
        ("audit_log", api.AuditLogRequest(replay_toml="not a replay")),
        ("audit_log", api.AuditLogRequest(game_log=log_game(code, moves).log)),
    ]


def inline(core: Core, attr: str, request: Any) -> tuple[bytes, bytes, CallInfo]:
    """The answer or the error status as the call on the event loop gives them."""
    info = CallInfo()
    try:
        response = getattr(core, attr)(request, info)
    except Exception as exc:
        status, _ = to_rpc_status(exc, "request-1")
        return b"", dict(status.trailing_metadata)["grpc-status-details-bin"], info
    return response if isinstance(response, bytes) else response.SerializeToString(), b"", info


def test_the_same_answer_byte_for_byte_in_a_process_a_thread_or_inline() -> None:
    core = make_core()
    processes = Offload.processes([KEY_A.encode()], workers=1, waiting=DEFAULT_WAITING)
    threads = Offload.threads(make_core(), workers=1, waiting=DEFAULT_WAITING)
    try:
        for attr, request in requests_and_errors():
            expected = inline(core, attr, request)
            for offload in (processes, threads):
                done = offload.submit(attr, request, "request-1", None).result(timeout=120)
                assert (done.response, done.status, done.info) == expected, (attr, offload.kind)
    finally:
        processes.shutdown()
        threads.shutdown()


# -- deadlines -----------------------------------------------------------------------------------


class CountingCore(ServiceCore):
    """A core whose BotMove waits for a gate and counts its calls (the other RPCs are the real ones)."""

    def __init__(self) -> None:
        super().__init__(TokenCodec(KeyRing([KEY_A.encode()])))
        self.calls = 0
        self.started = threading.Event()
        self.gate = threading.Event()

    def bot_move(self, request: api.BotMoveRequest, info: CallInfo) -> api.BotMoveResponse:
        self.calls += 1
        self.started.set()
        assert self.gate.wait(60)
        return api.BotMoveResponse(level="gated")


def test_a_call_whose_deadline_passed_never_starts() -> None:
    core = CountingCore()
    core.gate.set()
    done = run(core, "bot_move", api.BotMoveRequest(level="pro"), "", time.monotonic() - 0.001)
    assert core.calls == 0
    assert done.response == b"" and done.status
    with pytest.raises(Exception) as raised:
        done.unpack(CallInfo())
    assert raised.value.code is grpc.StatusCode.DEADLINE_EXCEEDED  # type: ignore[attr-defined]


def test_the_pro_search_is_capped_by_the_time_left() -> None:
    request = api.BotMoveRequest(level=" Pro ")
    cap_search(request, 2.0)
    # 2 s left: the cap is that time less the margin (a computation on the given seconds, no clock).
    assert request.max_ms == min(LIMITS.bot_ms, int(2.0 * DEADLINE_MARGIN * 1000))
    assert 0 < request.max_ms < 2000
    request = api.BotMoveRequest(level="pro", max_ms=50)
    cap_search(request, 2.0)
    assert request.max_ms == 50  # already within the time left
    request = api.BotMoveRequest(level="pro", max_ms=99_999)
    cap_search(request, 2.0)
    assert request.max_ms == 99_999  # over the limit: left for the handler to refuse by name
    request = api.BotMoveRequest(level="great")
    cap_search(request, 2.0)
    assert request.max_ms == 0  # only the pro bot searches on a clock


# -- bounded ----------------------------------------------------------------------------------------


def test_beyond_the_waiting_calls_a_heavy_call_is_refused_at_once() -> None:
    core = CountingCore()
    offload = Offload.threads(core, workers=1, waiting=1)
    try:
        first = offload.submit("bot_move", api.BotMoveRequest(), "", None)
        second = offload.submit("bot_move", api.BotMoveRequest(), "", None)
        with pytest.raises(ResourceExhausted) as refused:
            offload.submit("bot_move", api.BotMoveRequest(), "", None)
        assert refused.value.reason == "HEAVY_CALLS_BUSY"
        core.gate.set()
        first.result(timeout=60)
        second.result(timeout=60)
        assert offload.in_flight == 0
        offload.submit("bot_move", api.BotMoveRequest(), "", None).result(timeout=60)  # room again
    finally:
        core.gate.set()
        offload.shutdown()


def test_a_dead_worker_fails_its_call_and_is_replaced() -> None:
    offload = Offload.processes([KEY_A.encode()], workers=1, waiting=4)
    try:
        offload.warm()
        from bigtwo.service import offload as module

        pid = offload.executor.submit(module._ready).result(timeout=60)
        future = offload.submit("bot_move", heavy_request("BotMove"), "", None)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(futures.BrokenExecutor):
            future.result(timeout=60)
        request = api.SplitHandRequest(ruleset=CLASSIC, hand="3D 3S 4H")
        done = offload.submit("split_hand", request, "", None).result(timeout=120)
        assert done.status == b"" and api.SplitHandResponse.FromString(done.response).plays
        assert offload.in_flight == 0
    finally:
        offload.shutdown()


# -- through a server ----------------------------------------------------------------------------


async def moves_while(stub: Any, heavy_name: str, request: Any) -> tuple[int, str]:
    """Stream moves made while one heavy call is in flight (deal after deal), and its status."""
    decks = [deal_moves(seed) for seed in range(1, 6)]
    heavy: asyncio.Future[Any] | None = None
    made = 0
    for code, moves in decks * 10:
        call = stub.PlayStream()
        await call.write(api.PlayStreamRequest(open=api.StreamOpen(game=log_game(code, []))))
        await call.read()
        rules = preset("classic")
        deal = Deal.start(rules, deal_from_code(DealCode.parse(code), rules))
        for index, text in enumerate(moves):
            if heavy is None:
                heavy = asyncio.ensure_future(getattr(stub, heavy_name)(request, timeout=120))
            move = pb.Move(index=index, seat=deal.to_act, text=text)
            deal.do_text(deal.to_act, text)
            await call.write(api.PlayStreamRequest(move=api.StreamMove(move=move)))
            await call.read()
            if heavy.done():
                break
            made += 1
        call.cancel()
        if heavy is not None and heavy.done():
            break
    assert heavy is not None
    try:
        await heavy
    except grpc.aio.AioRpcError as error:
        return made, error.code().name
    return made, "OK"


@pytest.mark.slow
def test_a_stream_keeps_moving_while_heavy_calls_compute(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--no-call-log", metrics=False)
    try:

        async def main() -> list[tuple[str, int, str]]:
            out = []
            async with grpc.aio.insecure_channel(server.target) as channel:
                stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
                for name in ("SplitHand", "TimeoutMove", "LegalMoves"):
                    made, code = await moves_while(stub, name, heavy_request(name))
                    out.append((name, made, code))
            return out

        for name, made, code in asyncio.run(main()):
            assert code == "OK", name
            # On the event loop, no move could be answered while the heavy call computed.
            assert made >= 5, (name, made)
    finally:
        server.stop()


@pytest.mark.slow
def test_a_busy_server_refuses_heavy_calls_with_a_reason_and_answers_the_rest(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--heavy-workers", "1", "--heavy-waiting", "0", "--no-call-log", metrics=False)
    try:

        async def main() -> list[Any]:
            async with grpc.aio.insecure_channel(server.target) as channel:
                stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
                calls = [stub.TimeoutMove(heavy_request("TimeoutMove"), timeout=120) for _ in range(4)]
                answers = await asyncio.gather(*calls, return_exceptions=True)
                cheap = await stub.ListPresets(api.ListPresetsRequest(), timeout=60)
                assert cheap.presets
                return answers

        answers = asyncio.run(main())
        refused = [a for a in answers if isinstance(a, grpc.RpcError)]
        assert len(refused) < len(answers)
        assert refused, "four heavy calls at once with one worker and no waiting room"
        for error in refused:
            assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert details(error)["reason"] == "HEAVY_CALLS_BUSY"
    finally:
        server.stop()


@pytest.mark.slow
def test_heavy_calls_work_with_several_server_processes(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--workers", "2", "--no-call-log", metrics=False)
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
            request = heavy_request("SplitHand")  # a large bound: the pool
            expected = inline(make_core(), "split_hand", request)[0]
            for _ in range(4):
                assert stub.SplitHand(request, timeout=120).SerializeToString() == expected
    finally:
        server.stop()


# -- a call given up before it starts never starts ---------------------------------------------------


@pytest.mark.parametrize("how", ["cancel", "deadline"])
def test_a_waiting_call_given_up_never_starts(how: str) -> None:
    core = CountingCore()
    offload = Offload.threads(core, workers=1, waiting=4)

    async def wait_until(condition: Any) -> None:
        for _ in range(600):
            if condition():
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the condition never held")

    async def main() -> None:
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((Hosting(core, log_calls=False, heavy=offload).generic_handler(),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
                first = asyncio.ensure_future(stub.BotMove(api.BotMoveRequest(level="pro"), timeout=120))
                await wait_until(core.started.is_set)
                if how == "cancel":
                    second = stub.BotMove(api.BotMoveRequest(level="pro"), timeout=120)
                    await wait_until(lambda: offload.in_flight == 2)
                    second.cancel()
                else:
                    with pytest.raises(grpc.aio.AioRpcError) as expired:
                        await stub.BotMove(api.BotMoveRequest(level="pro"), timeout=0.5)
                    assert expired.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
                await wait_until(lambda: offload.in_flight == 1)  # the second call's work was dropped
                core.gate.set()
                assert (await first).level == "gated"
            await wait_until(lambda: offload.in_flight == 0)
        finally:
            core.gate.set()
            await server.stop(0)

    try:
        asyncio.run(main())
        assert core.calls == 1
    finally:
        core.gate.set()
        offload.shutdown()


def until(condition: Any, rounds: int = 600) -> None:
    """Poll ``condition`` (the server reacts to a cancellation on its own threads)."""
    for _ in range(rounds):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("the condition never held")


def test_done_carries_only_plain_data() -> None:
    done = run(make_core(), "split_hand", api.SplitHandRequest(ruleset=CLASSIC, hand="3D"), "", None)
    assert isinstance(done, Done) and isinstance(done.response, bytes)
    import pickle

    assert pickle.loads(pickle.dumps(done)) == done


# -- a server killed outright leaves no worker behind -------------------------------------------------


@pytest.mark.slow
def test_a_server_killed_outright_leaves_no_worker_running(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--heavy-workers", "2", "--no-call-log", metrics=False)
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
            assert stub.SplitHand(heavy_request("SplitHand"), timeout=120).plays  # a large bound: the pool
        workers = children_of(server.process.pid)
        assert workers, "the heavy call ran in a worker process of the server"
        server.process.kill()
        server.process.wait()
        # Bounded wait for liveness, not a timing figure: the watch looks once a second.
        for _ in range(600):
            if not any(alive(pid) for pid in workers):
                break
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers), "workers outlived their killed server"
    finally:
        server.stop()
