"""The spent-token ledger against a real ``redis-server`` (issue 33, item 3): two handles on one
Redis stand for two replicas. The fork is refused on the second replica, a retry of the same move
is accepted, two different moves sent at once are accepted once, Redis killed mid-game is refused
(fail-closed) or counted (fail-open) and recovered from once it is back, and entries expire."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code
from bigtwo.service.errors import FailedPrecondition, Unavailable
from bigtwo.service.ledger import (
    LedgerConfig,
    LedgerConfigError,
    LedgerMode,
    TokenLedger,
    Verdict,
    move_record,
    token_key,
)
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis_support import REDIS_SERVER, RedisServer
from service_support import ServerProcess, details

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed: make redis")

TOKEN = b"\x03a state token's bytes, as the service made them"
OPENING = move_record(seat=0, index=0, is_pass=False, mask=0b1)
OTHER = move_record(seat=0, index=0, is_pass=False, mask=0b10)


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def replicas(server: RedisServer, mode: LedgerMode = LedgerMode.FAIL_CLOSED, ttl_s: int = 60) -> list[TokenLedger]:
    config = LedgerConfig(server.url, ttl_s=ttl_s, mode=mode)
    return [TokenLedger(config), TokenLedger(config)]


async def closed(*ledgers: TokenLedger) -> None:
    for ledger in ledgers:
        await ledger.close()


def test_a_fork_is_refused_on_the_other_replica_and_a_retry_is_accepted(redis: RedisServer) -> None:
    async def main() -> None:
        first, second = replicas(redis)
        try:
            assert await first.spend(TOKEN, OPENING) is Verdict.FIRST
            # The answer was lost; the device sends the same move from the same token to another replica.
            assert await second.spend(TOKEN, OPENING) is Verdict.RETRY
            with pytest.raises(FailedPrecondition) as refused:
                await second.spend(TOKEN, OTHER)
            assert refused.value.code is grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.reason == "TOKEN_SPENT" and "newest token" in refused.value.message
            with pytest.raises(FailedPrecondition):
                await first.spend(TOKEN, OTHER)
            # Another token (the next state's) is unspent.
            assert await second.spend(TOKEN + b"next", OTHER) is Verdict.FIRST
            assert (first.recorded + second.recorded, second.retries, first.refused + second.refused) == (2, 1, 2)
        finally:
            await closed(first, second)

    asyncio.run(main())


def test_two_moves_sent_at_once_to_two_replicas_are_accepted_once(redis: RedisServer) -> None:
    async def main() -> None:
        first, second = replicas(redis)
        try:
            for round_ in range(20):
                token = TOKEN + bytes([round_])
                results = await asyncio.gather(
                    first.spend(token, OPENING), second.spend(token, OTHER), return_exceptions=True
                )
                assert sorted(type(r).__name__ for r in results) == ["FailedPrecondition", "Verdict"], results
        finally:
            await closed(first, second)

    asyncio.run(main())


def test_redis_holds_a_digest_of_the_token_never_the_token(redis: RedisServer) -> None:
    async def main() -> None:
        (ledger, _) = replicas(redis)
        try:
            await ledger.spend(TOKEN, OPENING)
            client = ledger._client
            keys = await client.keys("*")
            assert keys == [token_key(TOKEN)] and TOKEN not in keys[0]
            assert await client.get(token_key(TOKEN)) == OPENING
            assert 0 < await client.ttl(token_key(TOKEN)) <= 60
        finally:
            await closed(ledger, _)

    asyncio.run(main())


def test_entries_expire(redis: RedisServer) -> None:
    async def main() -> None:
        first, second = replicas(redis, ttl_s=1)
        try:
            assert await first.spend(TOKEN, OPENING) is Verdict.FIRST
            with pytest.raises(FailedPrecondition):
                await second.spend(TOKEN, OTHER)
            deadline = time.monotonic() + 5
            while await first._client.exists(token_key(TOKEN)):
                assert time.monotonic() < deadline, "the entry outlived its TTL"
                await asyncio.sleep(0.1)
            # Once expired, the old token is as the stateless service treats it: usable again.
            assert await second.spend(TOKEN, OTHER) is Verdict.FIRST
        finally:
            await closed(first, second)

    asyncio.run(main())


def test_a_spend_cut_off_before_its_reply_never_hands_that_reply_to_another(redis: RedisServer) -> None:
    """Each spend has a connection of its own; one cancelled while Redis holds its command
    (``CLIENT PAUSE``) would leave a reply unread on it. redis-py closes a connection whose read was
    cut, and the ledger's lanes never put one back: the spends after it read their own replies."""

    async def main() -> None:
        ledger, admin = replicas(redis)
        try:
            assert await ledger.spend(TOKEN, OPENING) is Verdict.FIRST  # a connection now idle
            await admin._client.execute_command("CLIENT", "PAUSE", 300, "WRITE")
            cut = asyncio.create_task(ledger.spend(TOKEN + b"cut", OPENING))
            await asyncio.sleep(0.1)
            cut.cancel()
            with pytest.raises(asyncio.CancelledError):
                await cut
            await asyncio.sleep(0.3)  # the pause ends; Redis now runs the cut spend's SET and replies
            assert await ledger.spend(TOKEN + b"fresh", OTHER) is Verdict.FIRST
            assert await ledger.spend(TOKEN + b"fresh", OTHER) is Verdict.RETRY
            with pytest.raises(FailedPrecondition):
                await ledger.spend(TOKEN, OTHER)
            assert ledger.reachable
        finally:
            await closed(ledger, admin)

    asyncio.run(main())


def test_a_streams_tokens_are_spent_in_one_round_trip_each_with_its_verdict(redis: RedisServer) -> None:
    async def main() -> None:
        first, second = replicas(redis)
        try:
            assert await first.spend(TOKEN + b"seat", OPENING) is Verdict.FIRST
            verdicts = await second.spend_all((TOKEN + b"seat", TOKEN + b"game"), OPENING)
            assert verdicts == [Verdict.RETRY, Verdict.FIRST]
            with pytest.raises(FailedPrecondition):
                await second.spend_all((TOKEN + b"other", TOKEN + b"game"), OTHER)
        finally:
            await closed(first, second)

    asyncio.run(main())


@pytest.mark.parametrize("mode", list(LedgerMode), ids=lambda mode: mode.value)
def test_redis_killed_mid_game(redis: RedisServer, mode: LedgerMode) -> None:
    async def main() -> None:
        first, second = replicas(redis, mode)
        try:
            assert await first.spend(TOKEN, OPENING) is Verdict.FIRST
            redis.stop()
            started = time.monotonic()
            if mode is LedgerMode.FAIL_CLOSED:
                with pytest.raises(Unavailable) as refused:
                    await second.spend(TOKEN + b"2", OPENING)
                assert refused.value.code is grpc.StatusCode.UNAVAILABLE
                assert refused.value.reason == "TOKEN_LEDGER_UNAVAILABLE" and "fail-closed" in refused.value.message
                assert second.unchecked == 0
            else:
                assert await second.spend(TOKEN + b"2", OPENING) is Verdict.UNCHECKED
                assert second.unchecked == 1
            assert time.monotonic() - started < 5  # refused or let through at once, not after a long hang
            assert not second.reachable and not await second.ping()
            redis.start()  # the same port, empty (nothing was saved): the ledger is back
            assert await second.ping() and second.reachable
            assert await second.spend(TOKEN + b"3", OPENING) is Verdict.FIRST
        finally:
            await closed(first, second)

    asyncio.run(main())


@pytest.mark.parametrize(
    ("url", "ttl_s", "words"),
    [
        ("http://127.0.0.1:6379/0", 60, "expected redis://"),
        ("redis://127.0.0.1/0", 60, "name the port"),
        ("redis://127.0.0.1:x/0", 60, "not a number"),
        ("redis://127.0.0.1:6379/zero", 60, "database is a number"),
        ("redis://127.0.0.1:6379/0", 0, "between 1 second and 30 days"),
    ],
)
def test_an_unusable_ledger_setting_is_refused_with_a_sentence(url: str, ttl_s: int, words: str) -> None:
    with pytest.raises(LedgerConfigError, match=words):
        LedgerConfig(url, ttl_s=ttl_s)


# -- from outside: replicas of `bigtwo serve --token-ledger`, a client with only the proto ----------


def _stub(target: str) -> tuple[grpc.Channel, Any]:
    channel = grpc.insecure_channel(target)
    return channel, {
        name: channel.unary_unary(
            f"/bigtwo.v1.BigTwoService/{name}",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=answer.FromString,
        )
        for name, answer in (("Deal", api.DealResponse), ("ApplyMove", api.ApplyMoveResponse))
    }


def _ledger_health(target: str) -> int:
    with grpc.insecure_channel(target) as channel:
        check = health_pb2_grpc.HealthStub(channel).Check
        return int(check(health_pb2.HealthCheckRequest(service="bigtwo.v1.TokenLedger"), timeout=10).status)


def _metric(server: ServerProcess, line_start: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).read().decode()
    values = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start)]
    return sum(values)


def _wait(predicate: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "not within 10 s"
        time.sleep(0.1)


def test_replicas_share_the_ledger_from_outside(redis: RedisServer, tmp_path: Path) -> None:
    """Two fail-closed replicas and one fail-open replica on one Redis: a fork refused on the second
    replica, a retry after a lost answer accepted with the same answer, then Redis killed mid-game."""
    rules = Ruleset.from_mapping({"preset": "classic"})
    code = DealCode(32)  # an opening with nine legal plays: two to fork between
    truth = Deal.start(rules, deal_from_code(code, rules))
    first_move, other_move = truth.legal_moves()[:2]
    flags = ("--no-call-log", "--token-ledger", redis.url)
    servers = [
        ServerProcess(tmp_path, *flags),
        ServerProcess(tmp_path, *flags),
        ServerProcess(tmp_path, *flags, "--token-ledger-mode", "fail-open"),
    ]
    channels: list[grpc.Channel] = []
    try:
        calls = []
        for server in servers:
            channel, stub = _stub(server.target)
            channels.append(channel)
            calls.append(stub)
        a, b, c = calls
        dealt = a["Deal"](api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code=str(code)), timeout=30)
        token = dealt.state_token

        def move_on(stub: Any, state: bytes, move: Any, index: int = 0) -> api.ApplyMoveResponse:
            request = api.ApplyMoveRequest(
                game=pb.Game(state_token=state), move=pb.Move(index=index, seat=move.seat, text=str(move))
            )
            answer = stub["ApplyMove"](request, timeout=30)
            assert isinstance(answer, api.ApplyMoveResponse)
            return answer

        played = move_on(a, token, first_move)
        assert played.outcome.accepted
        # The answer was lost: the device sends the same move from the same token to another replica.
        again = move_on(b, token, first_move)
        assert again.SerializeToString() == played.SerializeToString()
        # A fork: another move from the spent token, on the other replica.
        with pytest.raises(grpc.RpcError) as forked:
            move_on(b, token, other_move)
        assert forked.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert details(forked.value)["reason"] == "TOKEN_SPENT" and "newest token" in str(forked.value.details())
        # Before the ledger, the same fork was accepted (the stateless service): the fail-open replica
        # agrees with the others while Redis answers.
        with pytest.raises(grpc.RpcError):
            move_on(c, token, other_move)
        assert all(_ledger_health(server.target) == health_pb2.HealthCheckResponse.SERVING for server in servers)

        redis.stop()  # mid-game
        deal = truth.clone()
        deal.do(first_move)
        next_move = deal.legal_moves()[0]
        with pytest.raises(grpc.RpcError) as closed_refusal:
            move_on(b, played.state_token, next_move, index=1)
        assert closed_refusal.value.code() is grpc.StatusCode.UNAVAILABLE
        assert details(closed_refusal.value)["reason"] == "TOKEN_LEDGER_UNAVAILABLE"
        assert "fail-closed" in str(closed_refusal.value.details())
        opened = move_on(c, played.state_token, next_move, index=1)
        assert opened.outcome.accepted  # fail-open: applied, counted
        assert _metric(servers[2], 'bigtwo_token_ledger_moves_total{verdict="unchecked"}') == 1
        assert _metric(servers[1], 'bigtwo_token_ledger_moves_total{verdict="unavailable"}') == 1
        assert _metric(servers[1], 'bigtwo_token_ledger_reachable{mode="fail-closed"}') == 0
        _wait(lambda: _ledger_health(servers[0].target) == health_pb2.HealthCheckResponse.NOT_SERVING)

        redis.start()  # back (empty: nothing was saved)
        _wait(lambda: _ledger_health(servers[1].target) == health_pb2.HealthCheckResponse.SERVING)
        assert move_on(b, played.state_token, next_move, index=1).outcome.accepted
        assert _metric(servers[1], 'bigtwo_token_ledger_reachable{mode="fail-closed"}') == 1
    finally:
        for channel in channels:
            channel.close()
        for server in servers:
            server.stop()


def test_without_the_flag_nothing_of_the_ledger_is_imported() -> None:
    code = (
        "import sys, bigtwo.service.server, bigtwo.service.servicer, bigtwo.cli.serve_cmd;"
        "assert 'redis' not in sys.modules, 'redis imported without --token-ledger'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
