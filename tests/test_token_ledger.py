"""The spent-token ledger against a real ``redis-server`` (issue 33, item 3): two handles on one
Redis stand for two replicas. The fork is refused on the second replica, a retry of the same move
is accepted, two different moves sent at once are accepted once, Redis killed mid-game is refused
(fail-closed) or counted (fail-open) and recovered from once it is back, and entries expire."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
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
from redis_support import REDIS_SERVER, RedisServer

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
