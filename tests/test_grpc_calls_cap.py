"""The gRPC port's own cap on calls in flight (``--max-concurrent-rpcs``, issue 31): from outside, a
server with a small cap, more streams held open than the cap: every call refused is
RESOURCE_EXHAUSTED ``CALLS_BUSY`` with a RetryInfo and gRPC's retry pushback (none INTERNAL or
CANCELLED, as gRPC's own limit answered), counted in ``bigtwo_shed_total``; calls are answered again
once the streams end, and the project's client retries the refusal until a stream ends."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from bigtwo.client import AsyncBigTwoClient
from bigtwo.client.client import GameRef
from bigtwo.engine import preset
from bigtwo.service.admission import backstop
from bigtwo.service.errors import RETRY_PUSHBACK_KEY
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from service_support import CODE, ServerProcess, details

CAP = 6
HELD = 20
"""Streams opened at once against a cap of :data:`CAP`: the cap admits exactly ``CAP`` of them."""
CLASSIC = pb.Ruleset(preset="classic")
DESCRIBE = api.DescribeRulesetRequest(ruleset=CLASSIC)


def metric(server: ServerProcess, line_start: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start))


def retry_info(trailing: Any) -> error_details_pb2.RetryInfo | None:
    for key, value in trailing or ():
        if key == rpc_status.GRPC_DETAILS_METADATA_KEY:
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info = error_details_pb2.RetryInfo()
                    detail.Unpack(info)
                    return info
    return None


def assert_calls_busy(error: grpc.aio.AioRpcError) -> None:
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED, (error.code(), error.details())
    assert details(error)["reason"] == "CALLS_BUSY" and details(error)["metadata"] == {"max_calls": str(CAP)}
    info = retry_info(error.trailing_metadata())
    assert info is not None and info.retry_delay.ToNanoseconds() > 0
    assert int(dict(error.trailing_metadata() or ()).get(RETRY_PUSHBACK_KEY, "-1")) > 0


def test_the_backstop_sits_above_the_cap() -> None:
    assert backstop(None) is None and backstop(0) is None
    assert backstop(6) == 6 * 5 + 1000 and backstop(2000) == 11_000


def test_calls_past_the_cap_are_shed_with_a_retry_info_and_answered_once_streams_end(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--max-concurrent-rpcs", str(CAP), "--no-call-log")

    async def scenario() -> None:
        release = asyncio.Event()
        async with grpc.aio.insecure_channel(server.target, options=[("grpc.enable_retries", 0)]) as channel:
            stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
            opened = api.PlayStreamRequest(
                open=api.StreamOpen(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE)), view_seat=0)
            )

            async def held_stream() -> str | grpc.aio.AioRpcError:
                async def requests() -> Any:
                    yield opened
                    await release.wait()

                call = stub.PlayStream(requests(), timeout=60)
                try:
                    first = await call.read()
                    if first is grpc.aio.EOF:
                        await call.wait_for_connection()
                        return await call.code()  # type: ignore[return-value]
                    while await call.read() is not grpc.aio.EOF:  # the rest, once released
                        pass
                    return str(first.WhichOneof("message"))
                except grpc.aio.AioRpcError as error:
                    return error

            streams = [asyncio.create_task(held_stream()) for _ in range(HELD)]
            # Until every stream has its answer or its refusal (the refusals end their calls).
            for _ in range(600):
                if sum(task.done() for task in streams) >= HELD - CAP:
                    break
                await asyncio.sleep(0.05)
            refused = [task.result() for task in streams if task.done()]
            assert len(refused) == HELD - CAP, [type(outcome) for outcome in refused]
            for error in refused:
                assert isinstance(error, grpc.aio.AioRpcError), error
                assert_calls_busy(error)
            # Unary calls meet the same cap while the streams are held.
            with_unary = await asyncio.gather(
                *(stub.DescribeRuleset(DESCRIBE, timeout=30) for _ in range(5)), return_exceptions=True
            )
            for error in with_unary:
                assert isinstance(error, grpc.aio.AioRpcError), error
                assert_calls_busy(error)
            assert metric(server, 'bigtwo_shed_total{reason="CALLS_BUSY"}') >= HELD - CAP + 5
            assert metric(server, 'bigtwo_rpc_calls_total{code="RESOURCE_EXHAUSTED",method="PlayStream"') == HELD - CAP

            # The project's client retries the refusal: a call made now is answered once a stream ends.
            async with AsyncBigTwoClient(server.target, timeout=20, seed=1) as client:
                waiting = asyncio.create_task(client.describe_ruleset(preset("classic")))
                opening = asyncio.create_task(client.play_stream(GameRef(preset("classic"), deal_code=CODE)))
                await asyncio.sleep(0.5)
                assert not waiting.done() and not opening.done()
                release.set()
                assert (await waiting).ruleset == preset("classic")
                assert client.shed_retries >= 1
                playing = await opening  # its opening was shed and opened again once a stream ended
                assert playing.game.moves_made == 0
                await playing.close()
            outcomes = await asyncio.gather(*streams)
            assert outcomes.count("opened") == CAP
            # Every stream ended: calls are answered again, as many as the cap at once.
            answered = await asyncio.gather(*(stub.DescribeRuleset(DESCRIBE, timeout=30) for _ in range(CAP)))
            assert all(answer.ruleset.preset == "classic" for answer in answered)

    try:
        asyncio.run(scenario())
    finally:
        assert server.stop() == 0
