"""The spent-token ledger (issue 33, item 3): forks refused where the operator asks for it.

The service is stateless: a token stays valid after newer ones exist, so a device that keeps an old
token can try a move, see what follows, and go back. With ``--token-ledger redis://HOST:PORT/DB`` every
replica records, in one shared Redis, each token a move was applied from, with that move:

- the first move from a token is recorded (``SET key move NX GET EX ttl``: one round trip, atomic,
  so of two replicas given two moves at the same time exactly one wins);
- the same move again from the same token is a retry after a lost answer and is answered again (the
  answer follows from the token and the move alone: tokens are deterministic, so the retry's answer
  is byte for byte the first one, and only the move needs keeping);
- any other move from a spent token is ``FAILED_PRECONDITION`` with reason ``TOKEN_SPENT``.

The key is a 16-byte BLAKE2b digest of the token (never the token, which would let whoever reads
Redis resume the game), the value the move's few bytes, and each entry expires after ``ttl``
seconds. When Redis cannot be reached the operator's mode decides: ``fail-closed`` refuses the move
(``UNAVAILABLE``), ``fail-open`` applies it unrecorded and counts it. Needs Redis 7.0 or later (SET
with both NX and GET). The ``redis`` package is imported only when a ledger is configured.

A spend is on the move's path, so it goes the shortest way redis-py offers (:class:`Lanes`): a
connection of its own from an idle list, the command written and its reply read, the whole bounded
by one ``asyncio.timeout``; a stream's two tokens go in one write and one wait (pipelined).
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

from .convert import mask_from
from .errors import FailedPrecondition, Unavailable
from .game import CallInfo
from .telemetry import LEDGER_MOVES, LEDGER_REACHABLE

if TYPE_CHECKING:  # redis is imported only when a ledger is configured
    from redis.asyncio import Redis
    from redis.asyncio.connection import AbstractConnection

    from .streams import StreamSession


class HealthStatuses(Protocol):
    """What :func:`watch` sets on the health service (grpc_health's ``aio.HealthServicer``)."""

    async def set(self, service: str, status: int) -> None: ...


KEY_PREFIX = b"bigtwo:spent:"
DEFAULT_TTL_S = 86_400
"""A day: longer than any deal is played, so a spent token stays spent while it could matter."""
TIMEOUT_S = 0.5
"""How long one ledger call may take before Redis counts as unreachable (a loopback or in-zone
round trip is well under a millisecond)."""
MAX_IDLE = 64
"""Idle spend connections kept open; more are made while more spends are in flight at once, and
closed when they finish beyond this many."""


class LedgerConfigError(ValueError):
    """A ledger URL, TTL or mode the server cannot use: it refuses to start."""


class LedgerMode(enum.Enum):
    FAIL_CLOSED = "fail-closed"
    """Redis unreachable: moves from tokens are refused (UNAVAILABLE); no fork can slip through."""
    FAIL_OPEN = "fail-open"
    """Redis unreachable: moves are applied unrecorded and counted; play goes on, forks are possible."""


class Verdict(enum.Enum):
    FIRST = "first"
    """The token was unspent: now it is spent with this move."""
    RETRY = "retry"
    """The token was spent with this same move: answer it again."""
    UNCHECKED = "unchecked"
    """Redis unreachable in fail-open mode: applied without a record."""


@dataclass(frozen=True, slots=True)
class LedgerConfig:
    url: str
    ttl_s: int = DEFAULT_TTL_S
    mode: LedgerMode = LedgerMode.FAIL_CLOSED

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme != "redis" or not parts.hostname:
            raise LedgerConfigError(f"--token-ledger {self.url!r}: expected redis://HOST:PORT/DB")
        try:
            port = parts.port
        except ValueError:
            raise LedgerConfigError(f"--token-ledger {self.url!r}: the port is not a number") from None
        if port is None:
            raise LedgerConfigError(f"--token-ledger {self.url!r}: name the port (redis://HOST:6379/0)")
        database = parts.path.strip("/") or "0"
        if not database.isdigit():
            raise LedgerConfigError(f"--token-ledger {self.url!r}: the database is a number (/0)")
        if not 1 <= self.ttl_s <= 30 * 86_400:
            raise LedgerConfigError(f"--token-ledger-ttl {self.ttl_s}: between 1 second and 30 days")


def token_key(token: bytes) -> bytes:
    """The ledger's key for a token: a digest, so Redis never holds a usable token."""
    return KEY_PREFIX + hashlib.blake2b(token, digest_size=16).digest()


def spend_command(token: bytes, move: bytes, ttl_s: int) -> tuple[bytes | int, ...]:
    """The one command that spends ``token`` with ``move``: set unless set, answering what was held."""
    return (b"SET", token_key(token), move, b"NX", b"GET", b"EX", ttl_s)


class Lanes:
    """The spends' connections to Redis, each carrying one spend (its commands and their replies) at a
    time, so no reply can be read by another spend.

    redis-py's ``Redis.set`` takes a connection from its pool under a lock, checks it for unread data
    with a read of the socket, and bounds the write and the read each with its own timer (a task
    each on Python 3.11): 30–60 µs a spend on this path, a third of the round trip
    (docs/PERFORMANCE.md). Here a connection is taken from a plain list: it can hold no unread reply,
    because one whose spend did not read every reply (an error, a timeout, a cancelled call) is
    closed, never put back. The connections are the client's own kind with its settings, but with
    no per-read timeout: each spend is bounded as a whole by ``timeout_s``.
    """

    def __init__(self, client: Redis, timeout_s: float) -> None:
        pool = client.connection_pool
        self._kind = pool.connection_class
        self._settings = {**pool.connection_kwargs, "socket_timeout": None}
        self._timeout_s = timeout_s
        self._idle: list[AbstractConnection] = []

    async def run(self, *commands: tuple[bytes | int, ...]) -> list[object]:
        """Each command's reply, in order: one write, one wait. Raises what redis-py raises, or
        TimeoutError past ``timeout_s``."""
        connection = self._idle.pop() if self._idle else self._kind(**self._settings)
        try:
            async with asyncio.timeout(self._timeout_s):
                await connection.send_packed_command(connection.pack_commands(commands), check_health=False)
                replies = [await connection.read_response() for _ in commands]
        except BaseException:
            await connection.disconnect(nowait=True)
            raise
        if len(self._idle) < MAX_IDLE:
            self._idle.append(connection)
        else:
            await connection.disconnect(nowait=True)
        return replies

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.disconnect(nowait=True)


def move_record(seat: int, index: int, is_pass: bool, mask: int) -> bytes:
    """What the ledger keeps of a move: enough to tell a retry from another move."""
    return b"%d:%d:%s" % (seat, index, b"pass" if is_pass else b"%x" % mask)


class TokenLedger:
    """One server's handle on the shared ledger. Its counters feed the metrics and the health check."""

    def __init__(self, config: LedgerConfig, client: Redis | None = None) -> None:
        self.config = config
        if client is None:
            from redis import asyncio as aioredis  # only when a ledger is configured

            client = aioredis.Redis.from_url(
                config.url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S, retry_on_timeout=False
            )
        self._client = client
        self._lanes = Lanes(client, TIMEOUT_S)
        self.reachable = True
        """False from a failed call until the next call that succeeds (the health check's word)."""
        self.recorded = 0
        self.retries = 0
        self.refused = 0
        self.unchecked = 0
        """Moves applied without a record because Redis was unreachable (fail-open)."""
        self._moves = LEDGER_MOVES
        self._reachable = LEDGER_REACHABLE.labels(config.mode.value)
        self._reachable.set(1)

    def _seen(self, up: bool, verdict: str = "") -> None:
        self.reachable = up
        self._reachable.set(1 if up else 0)
        if verdict:
            self._moves.labels(verdict).inc()

    async def spend(self, token: bytes, move: bytes) -> Verdict:
        """Record ``token`` as spent with ``move``; raises FailedPrecondition (TOKEN_SPENT) when it was
        spent with another move, Unavailable when Redis is unreachable in fail-closed mode."""
        return (await self.spend_all((token,), move))[0]

    async def spend_all(self, tokens: tuple[bytes, ...], move: bytes) -> list[Verdict]:
        """:meth:`spend` for each of ``tokens`` with one ``move``, in one round trip; raises as
        :meth:`spend` does if any of them was spent with another move."""
        from redis.exceptions import RedisError

        ttl_s = self.config.ttl_s
        try:
            held = await self._lanes.run(*(spend_command(token, move, ttl_s) for token in tokens))
        except (RedisError, OSError, TimeoutError) as exc:
            if self.config.mode is LedgerMode.FAIL_OPEN:
                for _ in tokens:
                    self._seen(False, "unchecked")
                self.unchecked += len(tokens)
                return [Verdict.UNCHECKED] * len(tokens)
            self._seen(False, "unavailable")
            raise Unavailable(
                "the spent-token ledger cannot be reached, so no move is applied from a token until it is "
                "back (the server runs with --token-ledger-mode fail-closed); try again shortly",
                reason="TOKEN_LEDGER_UNAVAILABLE",
                metadata={"error": type(exc).__name__},
            ) from None
        return [self._verdict(reply, move) for reply in held]

    def _verdict(self, held: object, move: bytes) -> Verdict:
        if held is None:
            self._seen(True, "first")
            self.recorded += 1
            return Verdict.FIRST
        if held == move:
            self._seen(True, "retry")
            self.retries += 1
            return Verdict.RETRY
        self._seen(True, "spent")
        self.refused += 1
        raise FailedPrecondition(
            "this state token is spent: another move was already applied from it, so it cannot be played "
            "again (only the same move may be resent); continue from the newest token",
            reason="TOKEN_SPENT",
        )

    async def ping(self) -> bool:
        """Whether Redis answers now (the health check); updates :attr:`reachable`."""
        from redis.exceptions import RedisError

        try:
            up = bool(await self._client.ping())
        except (RedisError, OSError, TimeoutError):
            up = False
        self._seen(up)
        return up

    async def close(self) -> None:
        await self._lanes.close()
        await self._client.aclose()


def record_of(move: pb.Move) -> bytes:
    """The ledger's record of an applied ``ApplyMove`` move, its cards read as the judge read them
    (``3S 3D`` and ``3D 3S`` are one move)."""
    text = move.text.strip()
    if text.lower() == "pass":
        return move_record(move.seat, move.index, True, 0)
    return move_record(move.seat, move.index, False, mask_from(text, "move.text"))


async def spend_applied(ledger: TokenLedger, request: api.ApplyMoveRequest, info: CallInfo) -> None:
    """After ``ApplyMove`` judged its move: a move applied from a state token spends that token. A
    refused move changed nothing and a resend of a move already in the token (``duplicate``) is
    answered from it, so neither is recorded."""
    token = request.game.state_token
    if token and info.moves and info.moves[-1][0] == "accepted":
        await ledger.spend(token, record_of(request.move))


SPENDING = frozenset({"ApplyMove", "PlayBots", "TimeoutMove"})
"""The unary calls that spend the token they are sent: ApplyMove applies a move; PlayBots applies the
bots' (a host choosing other levels from the same token would fork the deal); TimeoutMove settles
what the timed-out turn plays, so that the seat cannot then play something else from that token."""


async def spend_answered(
    ledger: TokenLedger, method: str, request: Message, answer: Message | bytes, info: CallInfo
) -> None:
    """After a call of :data:`SPENDING` answered from a state token: the token is recorded as spent
    with the move it made (PlayBots: its first; none when a person is to act). The same move again
    (a retry, or ApplyMove of the move TimeoutMove or PlayBots gave) is answered; another is
    ``TOKEN_SPENT``. The answer is sent only once this returns."""
    if method == "ApplyMove":
        await spend_applied(ledger, cast(api.ApplyMoveRequest, request), info)
        return
    token = cast(api.PlayBotsRequest | api.TimeoutMoveRequest, request).game.state_token
    if not token:
        return
    if method == "PlayBots":
        played = _answer(answer, api.PlayBotsResponse)
        if not played.moves:
            return
        move = played.moves[0].move
    else:
        move = _answer(answer, api.TimeoutMoveResponse).move
    await ledger.spend(token, record_of(move))


_Answer = TypeVar("_Answer", bound=Message)


def _answer(answer: Message | bytes, kind: type[_Answer]) -> _Answer:
    """A call's answer as its message (a call run in the pool answers serialized)."""
    if isinstance(answer, kind):
        return answer
    if isinstance(answer, bytes):
        return kind.FromString(answer)
    raise TypeError(f"not a {kind.__name__}: {type(answer).__name__}")


async def spend_streamed(ledger: TokenLedger, session: StreamSession) -> None:
    """After a stream message: a move applied on the stream spends the tokens of the state it was
    applied to (:attr:`StreamSession.to_spend`), as ApplyMove from them would, so that no token the
    stream gave out, or that a retry could give, forks what the stream plays on."""
    spent = session.to_spend
    if spent is None:
        return
    session.to_spend = None
    tokens, move = spent
    # Pipelined: the seat's token and the game's cost one round trip, not two.
    await ledger.spend_all(tuple(tokens), record_of(move))


def ledger_from(url: str, ttl_s: int, mode: str) -> TokenLedger | None:
    """The server's ledger for ``--token-ledger`` (None without one: nothing is imported)."""
    if not url:
        return None
    try:
        chosen = LedgerMode(mode)
    except ValueError:
        raise LedgerConfigError(f"--token-ledger-mode {mode!r}: fail-closed or fail-open") from None
    return TokenLedger(LedgerConfig(url, ttl_s, chosen))


HEALTH_NAME = "bigtwo.v1.TokenLedger"
"""The health service name that says whether the ledger answers (SERVING) or not (NOT_SERVING); the
service's own name stays SERVING either way, so a load balancer does not drop every replica at once
when Redis goes: fail-closed refuses the moves, fail-open counts them."""
WATCH_S = 1.0


async def watch(ledger: TokenLedger, health_servicer: HealthStatuses) -> None:
    """Keeps :data:`HEALTH_NAME` and the reachability gauge up to date (a ping a second)."""
    from grpc_health.v1 import health_pb2

    while True:
        up = await ledger.ping()
        status = health_pb2.HealthCheckResponse.SERVING if up else health_pb2.HealthCheckResponse.NOT_SERVING
        await health_servicer.set(HEALTH_NAME, status)
        await asyncio.sleep(WATCH_S)


__all__ = [
    "DEFAULT_TTL_S",
    "HEALTH_NAME",
    "SPENDING",
    "Lanes",
    "LedgerConfig",
    "LedgerConfigError",
    "LedgerMode",
    "TokenLedger",
    "Verdict",
    "ledger_from",
    "move_record",
    "record_of",
    "spend_answered",
    "spend_applied",
    "spend_command",
    "spend_streamed",
    "token_key",
    "watch",
]
