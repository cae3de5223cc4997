"""``bigtwo bench service``: the no-op server sends the real server's bytes, and a short run reports
both transports against it."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from bigtwo.service.core import CallInfo
from bigtwo.service.servicer import ServiceCore
from bigtwo.service.streams import StreamSession
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.tools import service_bench as bench
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from ts_support import BIN, require_toolchain

CODEC = TokenCodec(KeyRing([bench.BENCH_KEY.encode()]))
# The short runs only need each figure to exist: a few deals and token timings, not the bench's 256 and 3,000.
GAMES = 8
TOKEN_REPEATS = 30


def _untokened(answer: api.PlayStreamResponse | bytes) -> api.PlayStreamResponse:
    """A stream's opening answer less its tokens: a stream opened from a log is a new table, whose
    tokens seal random bytes drawn then (issue 33); the rest is the same bytes."""
    opened = answer if isinstance(answer, api.PlayStreamResponse) else api.PlayStreamResponse.FromString(answer)
    opened.opened.ClearField("state_token")
    opened.opened.ClearField("seat_token")
    return opened


def test_the_noop_server_answers_with_the_real_servers_bytes() -> None:
    noop = bench.NoopCore(CODEC, games=3)
    real = ServiceCore(CODEC)
    for game in bench.prepare_games(3, CODEC):
        log = pb.GameLog(ruleset=pb.Ruleset(preset=bench.PRESET), deal_code=game.code)
        opening = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log)))
        sessions = [StreamSession(real, CallInfo()), noop.session(CallInfo())]
        real_opened, noop_opened = (_untokened(s.handle(opening)) for s in sessions)
        assert real_opened == noop_opened
        token = game.start_token
        for move in game.moves:
            request = api.PlayStreamRequest(move=api.StreamMove(move=move))
            real_answer, noop_answer = (s.handle(request) for s in sessions)
            assert real_answer == noop_answer and isinstance(real_answer, bytes)
            apply = api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move)
            answer = real.apply_move_answer(apply, CallInfo())
            assert noop.apply_move_answer(apply, CallInfo()) == answer
            token = api.ApplyMoveResponse.FromString(answer).state_token


def test_a_short_run_reports_every_transport_and_load() -> None:
    rows: list[dict[str, Any]] = []
    bench.measure("aio", 0.3, (1, 4), rows.append, repeats=2, games=GAMES, token_repeats=TOKEN_REPEATS)
    moves = [row for row in rows if row["figure"].startswith("service_")]
    assert [(row["figure"], row["games"]) for row in moves] == [
        ("service_stream_moves", 1),
        ("service_stream_moves", 4),
        ("service_unary_moves", 1),
        ("service_unary_moves", 4),
    ]
    for row in moves:
        assert row["repeats"] == 2 and row["real_moves_per_s"] > 0 and row["noop_moves_per_s"] > 0
        assert row["ratio"] > 0 and row["ratio_range"][0] <= row["ratio"] <= row["ratio_range"][1]
        percentiles = [row["real_p50_ms"], row["real_p99_ms"]]
        assert percentiles == sorted(percentiles) and row["real_p50_ms"] > 0
        assert row["real_server_cpu_us_per_move"] > 0 and row["real_client_cpu_us_per_move"] > 0
    token = rows[-1]
    assert token["figure"] == "apply_by_token_us" and token["at_move_5"] > 0 and token["at_move_80"] > 0


def test_a_turn_batch_handles_what_arrives_together_and_passes_errors_on() -> None:
    import asyncio

    import pytest
    from bigtwo.service.streams import BATCH_TURNS, TurnBatch

    async def scenario() -> None:
        batch = TurnBatch()
        seen: list[int] = []

        def work(value: int) -> int:
            seen.append(value)
            if value < 0:
                raise ValueError(f"refused {value}")
            return value * 10

        first = [batch.call(work, n) for n in (1, 2)]
        await asyncio.sleep(0)  # one turn later: still gathered
        late = batch.call(work, 3)
        cancelled = batch.call(work, 99)
        cancelled.cancel()
        failing = batch.call(work, -1)
        assert not first[0].done() and not seen  # nothing ran during the first turns
        assert await asyncio.gather(*first, late) == [10, 20, 30]
        with pytest.raises(ValueError, match="refused -1"):
            await failing
        assert seen == [1, 2, 3, -1]  # one batch, in arrival order, without the cancelled call
        again = await batch.call(work, 4)  # a new batch after the first ran
        assert again == 40

    assert BATCH_TURNS >= 2
    asyncio.run(scenario())


def test_a_turn_batch_stopped_midway_leaves_no_call_waiting() -> None:
    import asyncio

    import pytest
    from bigtwo.service.streams import TurnBatch

    class Stopping(BaseException):
        pass

    def stop() -> None:
        raise Stopping

    async def scenario() -> None:
        batch = TurnBatch()
        stopped, after = batch.call(stop), batch.call(abs, -3)
        with pytest.raises(asyncio.CancelledError):
            await after
        assert stopped.cancelled()

    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda loop, context: None)  # the Stopping escaping the callback
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()


def test_a_spinning_no_op_stands_in_for_a_handler_of_known_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    noop = bench.NoopCore(CODEC, spin_us=2000, games=1)
    game = bench.prepare_games(1, CODEC)[0]
    apply = api.ApplyMoveRequest(game=pb.Game(state_token=game.start_token), move=game.moves[0])
    readings: list[float] = []

    def clock() -> float:  # a clock that moves 0.1 ms a reading: the spin's logic, not the machine's speed
        readings.append(len(readings) * 1e-4)
        return readings[-1]

    monkeypatch.setattr(bench.time, "perf_counter", clock)
    noop.apply_move_answer(apply, CallInfo())
    monkeypatch.undo()
    assert readings[-1] - readings[0] >= 0.002 > readings[-2] - readings[0]  # spun until 2 ms had passed
    rows: list[dict[str, Any]] = []
    bench.measure("aio", 0.3, (1,), rows.append, spin_us=1000, games=GAMES, token_repeats=TOKEN_REPEATS)
    for row in (row for row in rows if row["figure"].startswith("service_")):
        assert row["real_is_noop_spinning_us"] == 1000
        assert row["ratio"] > 0  # how far the spin shows is a speed figure, for make bench


@pytest.fixture(scope="module")
def web_rows() -> list[dict[str, Any]]:
    """One short web_bench round at 2 games: every Python way, and the stock TypeScript client's ways
    where node and clients/ts/node_modules are there (``make ts-deps``; nothing is installed here)."""
    from bigtwo.tools import web_bench

    rows: list[dict[str, Any]] = []
    node = shutil.which("node") is not None and (BIN / "esbuild").exists()
    web_bench.measure(0.2, (2,), 1, rows.append, deals=GAMES, node=node)
    return rows


def test_the_web_protocol_bench_plays_every_way(web_rows: list[dict[str, Any]]) -> None:
    """``python -m bigtwo.tools.web_bench``: a short round plays moves over every protocol, version
    and codec of the browser port and native gRPC, each accepted (a refused move fails the bench)."""
    from bigtwo.tools import web_bench

    ways = [row for row in web_rows if row["figure"] == "web_protocols" and not row["way"].endswith("-node")]
    assert [row["way"] for row in ways] == [way.name for way in web_bench.WAYS]
    assert all(row["moves_per_s"] > 0 and row["server_cpu_us_per_move"] > 0 for row in ways)
    assert ways[0]["ratio_to_grpc"] == 1.0 and ways[0]["client"] == "grpcio (Python)"
    versus = [row for row in web_rows if row["figure"] == "web_port_vs_grpc"]
    assert [row["http"] for row in versus] == ["h1", "h2"]
    for row in versus:
        connect = next(way for way in ways if way["way"] == f"connect-proto-{row['http']}")
        assert row["ratio_to_grpc"] == connect["ratio_to_grpc"] and row["lowest_ratio"] <= connect["ratio_to_grpc"]
        assert row["met"] == (row["ratio_to_grpc"] >= web_bench.RATIO_FLOOR)
        assert row["client"] == connect["client"] == "connectrpc (Python)"
        for way in row["ways"]:  # the floor judged way by way, each naming its client
            assert way["met"] == (way["ratio_to_grpc"] >= web_bench.RATIO_FLOOR)


def test_the_web_protocol_bench_drives_the_stock_typescript_client(web_rows: list[dict[str, Any]]) -> None:
    """The same loop through @connectrpc/connect-node (clients/ts/bench/web_moves.ts): Connect binary and
    gRPC-Web over both HTTP versions, every move accepted, the node process's own CPU reported."""
    from bigtwo.tools import web_bench

    require_toolchain()
    ways = {row["way"]: row for row in web_rows if row["figure"] == "web_protocols"}
    for way in web_bench.NODE_WAYS:
        row = ways[way.name]
        assert row["client"] == "connect-node (TypeScript)" and row["load"] == 2
        assert row["moves_per_s"] > 0 and row["server_cpu_us_per_move"] > 0 and row["client_cpu_us_per_move"] > 0
        assert row["p99_ms"] >= row["p50_ms"] > 0
    for row in (row for row in web_rows if row["figure"] == "web_port_vs_grpc"):
        node_ways = [way for way in row["ways"] if way["client"] == "connect-node (TypeScript)"]
        assert {way["way"] for way in node_ways} == {
            f"connect-proto-{row['http']}-node",
            f"grpc-web-proto-{row['http']}-node",
        }
        assert row["node_lowest_ratio"] == min(way["ratio_to_grpc"] for way in node_ways)
        assert row["node_every_way_met"] == all(way["met"] for way in node_ways)
