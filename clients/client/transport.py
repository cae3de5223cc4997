"""What both clients share below their methods: targets and channels, TLS and the bearer token,
deadlines, and the one retry mechanism (:class:`RetryPolicy` driven by :func:`retrying` or
:func:`retrying_async`) used by unary calls and by streams alike.

Every call has a deadline (``timeout``, default :data:`DEFAULT_TIMEOUT` seconds). A unary call that
fails with ``UNAVAILABLE``, or with ``CANCELLED`` (what gRPC answers a call that reached a server at
the instant it began to shut down, grpc/grpc#41785), is retried with exponential backoff and jitter
on the next target of the list, each attempt with a whole deadline of its own. A call the server
refused for load (a shed: ``RESOURCE_EXHAUSTED`` with a ``google.rpc.RetryInfo``) is retried the
same way, never sooner than the RetryInfo's delay, and only while the call's own deadline leaves
room: the retry gets what is left of it. A ``RESOURCE_EXHAUSTED`` without one (a request over a
limit) is not retried. gRPC's own retries are switched off so that there is one policy.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import grpc
import grpc.aio

from .calls import Rpc
from .client_errors import BigTwoError
from .targets import TargetRing

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 5.0
"""Seconds: the deadline of every unary call unless the client or the call says otherwise."""
DEFAULT_STREAM_TIMEOUT = 3600.0
"""Seconds: the deadline of a whole PlayStream (a stream holds one deal)."""

# -- retries -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, for :data:`RETRIED_CODES` (unary calls) and for reopening a
    broken stream. ``attempts`` counts the first try.

    The n-th wait is ``min(max_backoff, initial_backoff * multiplier**n)`` scaled by a random
    factor in ``[1 - jitter, 1]`` (so replicas restarted together are not hit in lockstep)."""

    attempts: int = 8
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.5

    def delay(self, retry: int, rng: random.Random) -> float:
        base = min(self.max_backoff, self.initial_backoff * self.multiplier**retry)
        return base * (1.0 - self.jitter * rng.random())

    def wait(self, retry: int, rng: random.Random, retry_delay: float | None) -> float:
        """The wait before retry ``retry``: :meth:`delay`, or for a shed at least the server's
        ``retry_delay``, spread above it by the jitter (clients shed together come back apart)."""
        backoff = self.delay(retry, rng)
        if retry_delay is None:
            return backoff
        return max(backoff, retry_delay * (1.0 + self.jitter * rng.random()))


NO_RETRY = RetryPolicy(attempts=1)
UNANSWERED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED})
"""Statuses that do not show a target answered (a dead or unreachable host gives them too)."""
RETRIED_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})
"""Statuses a unary call is sent again for, besides sheds (``RESOURCE_EXHAUSTED`` with a RetryInfo,
:attr:`~bigtwo.client.client_errors.BigTwoError.shed`). CANCELLED: gRPC answers it (not UNAVAILABLE)
to a call that reached a server at the instant it began to shut down, before a handler took it
(grpc/grpc#41785); the calls are pure functions of their requests and a move carries its index, so
resending is safe (a shed was refused before its handler ran: nothing of it was applied)."""

Retried = Callable[[BigTwoError], bool]
"""Whether a failed attempt is tried again (called only while attempts are left and, for a shed,
while the call's deadline leaves room; may count it)."""


class CallDeadline:
    """A unary call's deadline across its attempts. The first attempt has ``timeout`` seconds; a
    retry after a shed keeps the call's deadline (it is made only if its wait ends before it, and
    gets what is left); a retry after ``UNAVAILABLE`` or ``CANCELLED`` goes to another target with
    a whole ``timeout`` of its own, as it always did."""

    __slots__ = ("timeout", "until")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.until = time.monotonic() + timeout

    def left(self) -> float:
        """Seconds left for the attempt being made."""
        return max(0.0, self.until - time.monotonic())


def _next_wait(
    policy: RetryPolicy,
    rng: random.Random,
    retried: Retried,
    deadline: CallDeadline | None,
    number: int,
    error: BigTwoError,
) -> float | None:
    """The wait before attempt ``number + 1`` after ``error``, or None when none is made."""
    if number + 1 >= policy.attempts:
        return None
    wait = policy.wait(number, rng, error.retry_delay)
    if deadline is not None:
        if error.retry_delay is not None and wait >= deadline.left():
            return None  # a shed's retry fits in the call's deadline, or is not made
        if error.retry_delay is None:
            deadline.until = time.monotonic() + wait + deadline.timeout
    return wait if retried(error) else None


def retrying(
    policy: RetryPolicy,
    rng: random.Random,
    retried: Retried,
    attempt: Callable[Concatenate[int, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """``attempt(0, *args, **kwargs)``, then ``attempt(1, ...)``... after a backoff, while it raises
    an error ``retried`` accepts and ``policy`` has attempts left; the last error is raised."""
    return retrying_within(policy, rng, retried, None, attempt, *args, **kwargs)


def retrying_within(
    policy: RetryPolicy,
    rng: random.Random,
    retried: Retried,
    deadline: CallDeadline | None,
    attempt: Callable[Concatenate[int, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """:func:`retrying` for a unary call with its :class:`CallDeadline`: a shed is retried only
    within it."""
    number = 0
    while True:
        try:
            return attempt(number, *args, **kwargs)
        except BigTwoError as error:
            wait = _next_wait(policy, rng, retried, deadline, number, error)
            if wait is None:
                raise
        time.sleep(wait)
        number += 1


async def retrying_async(
    policy: RetryPolicy,
    rng: random.Random,
    retried: Retried,
    attempt: Callable[Concatenate[int, P], Awaitable[T]],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """:func:`retrying` for coroutines: the same policy, the waits on the event loop."""
    return await retrying_async_within(policy, rng, retried, None, attempt, *args, **kwargs)


async def retrying_async_within(
    policy: RetryPolicy,
    rng: random.Random,
    retried: Retried,
    deadline: CallDeadline | None,
    attempt: Callable[Concatenate[int, P], Awaitable[T]],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """:func:`retrying_within` for coroutines."""
    number = 0
    while True:
        try:
            return await attempt(number, *args, **kwargs)
        except BigTwoError as error:
            wait = _next_wait(policy, rng, retried, deadline, number, error)
            if wait is None:
                raise
        await asyncio.sleep(wait)
        number += 1


# -- connection settings -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Security:
    """TLS (``tls=True``; ``ca_file`` to trust a private CA), mutual TLS (``cert_file`` and
    ``key_file``), and a bearer token sent as ``authorization: Bearer TOKEN`` on every call."""

    tls: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    server_name: str = ""
    """Override the name checked against the server's certificate (tests, IP targets)."""
    token: str = ""

    def channel_credentials(self) -> grpc.ChannelCredentials | None:
        if not (self.tls or self.ca_file or self.cert_file):
            return None
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("mutual TLS needs both cert_file and key_file")

        def read(path: str) -> bytes | None:
            return Path(path).read_bytes() if path else None

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca_file),
            private_key=read(self.key_file),
            certificate_chain=read(self.cert_file),
        )

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()


def parse_targets(targets: str | Sequence[str]) -> tuple[str, ...]:
    """``"host:port,host:port"`` or a list of them."""
    items = targets.split(",") if isinstance(targets, str) else list(targets)
    out = tuple(item.strip() for item in items if item.strip())
    if not out:
        raise ValueError("no target given (host:port)")
    return out


def channel_options(security: Security) -> list[tuple[str, Any]]:
    options: list[tuple[str, Any]] = [
        # Reconnect quickly after a replica restarts (gRPC's default first wait is 1 s, growing to 120 s).
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
        ("grpc.enable_retries", 0),  # retries are ours: only RETRIED_CODES, with backoff, across targets
    ]
    if security.server_name:
        options.append(("grpc.ssl_target_name_override", security.server_name))
    return options


def sync_channel(target: str, security: Security) -> grpc.Channel:
    credentials = security.channel_credentials()
    options = channel_options(security)
    if credentials is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, credentials, options=options)


def aio_channel(target: str, security: Security) -> grpc.aio.Channel:
    credentials = security.channel_credentials()
    options = channel_options(security)
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, credentials, options=options)


def method_of(factory: Any, rpc: Rpc[Any]) -> Any:
    """``channel.unary_unary`` or ``channel.stream_stream`` for ``rpc``, registered with the channel
    as generated stubs do it (``_registered_method``: gRPC then skips the per-call method lookup;
    the typing stubs of grpcio do not know the flag, hence ``factory: Any``)."""
    return factory(
        rpc.path,
        request_serializer=rpc.request.SerializeToString,
        response_deserializer=rpc.response.FromString,
        _registered_method=True,
    )


# -- the settings and counters of a client -------------------------------------------------------


class Transport:
    """Targets, security, deadlines and retries common to both clients: calls rotate over the
    targets (round-robin), and a call sent again goes to the next one."""

    def __init__(
        self,
        targets: str | Sequence[str] = DEFAULT_TARGET,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        security: Security | None = None,
        tls: bool = False,
        ca_file: str = "",
        cert_file: str = "",
        key_file: str = "",
        server_name: str = "",
        token: str = "",
        stream_timeout: float = DEFAULT_STREAM_TIMEOUT,
        seed: int | None = None,
    ) -> None:
        self.targets = parse_targets(targets)
        self.timeout = timeout
        self.stream_timeout = stream_timeout
        self.retry = retry or RetryPolicy()
        self.security = security or Security(tls, ca_file, cert_file, key_file, server_name, token)
        self._metadata = self.security.metadata()
        self._rng = random.Random(seed)
        self.ring = TargetRing(len(self.targets), self._rng)
        """The targets' round-robin and down marks (:mod:`bigtwo.client.targets`)."""
        self.calls_made = 0
        self.retries_made = 0
        self.cancelled_retries = 0
        """Retries of unary calls answered CANCELLED (a server caught shutting down)."""
        self.shed_retries = 0
        """Retries of unary calls a server refused for load (RESOURCE_EXHAUSTED with a RetryInfo)."""
        self._open()

    def _open(self) -> None:
        """Open one channel per target (each client its own kind of channel)."""
        raise NotImplementedError

    def _next_index(self) -> int:
        """The target of the next call (round-robin over those not down; safe across threads)."""
        return self.ring.pick(self.ring.next_start())

    def _noted(self, index: int, error: BigTwoError) -> BigTwoError:
        """``error``, from a call to target ``index``, noted in the ring: UNAVAILABLE marks it down;
        an answer of the server's own (not a deadline or a cancel, which a dead host also gives)
        marks it up."""
        if error.code is grpc.StatusCode.UNAVAILABLE:
            self.ring.failed(index)
        elif error.code not in UNANSWERED:
            self.ring.answered(index)
        return error

    def _deadline(self, timeout: float | None) -> float:
        return self.timeout if timeout is None else timeout

    def _policy(self, rpc: Rpc[Any]) -> RetryPolicy:
        return self.retry if rpc.idempotent else NO_RETRY

    def _retried(self, error: BigTwoError) -> bool:
        """Whether a unary call that failed with ``error`` is sent again (and counts it)."""
        shed = error.code is grpc.StatusCode.RESOURCE_EXHAUSTED and error.shed
        if error.code not in RETRIED_CODES and not shed:
            return False
        self.retries_made += 1
        if error.code is grpc.StatusCode.CANCELLED:
            self.cancelled_retries += 1
        if shed:
            self.shed_retries += 1
        return True


__all__ = [
    "DEFAULT_STREAM_TIMEOUT",
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "RETRIED_CODES",
    "CallDeadline",
    "RetryPolicy",
    "Security",
    "Transport",
    "aio_channel",
    "channel_options",
    "method_of",
    "parse_targets",
    "retrying",
    "retrying_async",
    "retrying_async_within",
    "retrying_within",
    "sync_channel",
]
