"""The client's down marks (issue 31): a target whose call failed UNAVAILABLE is skipped for a short,
growing, jittered time, the one down longest is tried when all are down, and a target is up again
as soon as a call to it is answered. Against real servers: one of three SIGKILLed, the calls sent to
it afterwards are few, and once it is back on its port it gets calls again."""

from __future__ import annotations

import asyncio
import random
import signal
import time
import urllib.request
from pathlib import Path

from bigtwo.client import AsyncBigTwoClient
from bigtwo.client.targets import FIRST_DOWN_SECONDS, MAX_DOWN_SECONDS, TargetRing
from bigtwo.engine import preset
from service_support import ServerProcess

RULES = preset("classic")
CALLS_AFTER_KILL = 300


def test_a_target_marked_down_is_skipped_and_comes_back_when_answered() -> None:
    ring = TargetRing(3, random.Random(1))
    assert [ring.pick(position) for position in range(6)] == [0, 1, 2, 0, 1, 2]
    ring.failed(1)
    assert ring.down() == [1]
    assert [ring.pick(position) for position in range(6)] == [0, 2, 2, 0, 2, 2]
    ring.failed(1)  # a failure seen while it is down (a call sent before the mark) changes nothing
    assert ring.marked_down == 1
    ring.answered(1)
    assert ring.down() == [] and [ring.pick(position) for position in range(3)] == [0, 1, 2]


def test_the_time_down_grows_is_jittered_and_bounded() -> None:
    ring = TargetRing(2, random.Random(7))
    spans = []
    for _ in range(8):
        if 0 in ring._down:
            ring._down[0].until = time.monotonic()  # its time down ran out
        before = time.monotonic()
        ring.failed(0)
        spans.append(ring._down[0].until - before)
    for number, span in enumerate(spans):
        bound = min(MAX_DOWN_SECONDS, FIRST_DOWN_SECONDS * 2**number)
        assert bound * 0.5 - 0.01 <= span <= bound + 0.01, (number, span)
    assert spans[3] > spans[0] and len({round(span, 6) for span in spans[5:]}) > 1  # grows, then jittered


def test_when_every_target_is_down_the_one_down_longest_is_tried() -> None:
    ring = TargetRing(3, random.Random(3))
    ring.failed(2)
    time.sleep(0.01)
    ring.failed(0)
    ring.failed(1)
    assert ring.down() == [0, 1, 2]
    assert {ring.pick(position) for position in range(6)} == {2}


def calls_answered(server: ServerProcess) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    prefix = 'bigtwo_rpc_calls_total{code="OK",method="DescribeRuleset"'
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def test_a_killed_replica_gets_few_calls_and_is_used_again_once_back(tmp_path: Path) -> None:
    servers = [ServerProcess(tmp_path, "--no-call-log") for _ in range(3)]
    back: ServerProcess | None = None
    try:
        targets = [server.target for server in servers]

        async def scenario() -> None:
            nonlocal back
            async with AsyncBigTwoClient(targets, timeout=10, seed=5) as client:
                await asyncio.gather(*(client.describe_ruleset(RULES) for _ in range(30)))
                assert client.retries_made == 0
                servers[1].process.send_signal(signal.SIGKILL)
                servers[1].process.wait(timeout=30)
                # Ten calls at a time, as a busy front end sends them.
                for _ in range(CALLS_AFTER_KILL // 10):
                    await asyncio.gather(*(client.describe_ruleset(RULES) for _ in range(10)))
                # Each attempt sent to the dead replica failed UNAVAILABLE and was retried: without
                # down marks a third of the first attempts (about 100) went there.
                sent_to_dead = client.retries_made
                assert 1 <= sent_to_dead <= 20, sent_to_dead
                assert client.ring.skipped >= CALLS_AFTER_KILL // 4
                # The replica comes back on its port: it is tried when its time down runs out and,
                # answered, used again.
                port = servers[1].port
                back = ServerProcess(tmp_path, "--no-call-log", "--port", str(port), wait=False)
                back.port, back.target = port, f"127.0.0.1:{port}"  # the last --port given wins
                await asyncio.to_thread(back.wait_ready)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    await asyncio.gather(*(client.describe_ruleset(RULES) for _ in range(10)))
                    if calls_answered(back) >= 5 and not client.ring.down():
                        break
                    await asyncio.sleep(0.1)
                assert calls_answered(back) >= 5 and client.ring.down() == []

        asyncio.run(scenario())
    finally:
        for server in [*servers, *([back] if back is not None else [])]:
            server.stop()
