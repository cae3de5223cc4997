"""Waiting for a target to accept connections, and saying why it does not.

gRPC reports a channel's state (connecting, ready, failing) but not why it fails; one call with a
short deadline does (its ``details()``), and :func:`~bigtwo.client.client_errors.connection_failure`
reads that text. Commands use this to stop before their first call with one sentence instead of
failing every call.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field

import grpc
import grpc.aio

from .client_errors import FAIL_AT_ONCE, BigTwoUnavailable, connection_failure, unavailable
from .transport import DEFAULT_TIMEOUT, Security, sync_channel

_PROBE = "/grpc.health.v1.Health/Check"
_READY = grpc.ChannelConnectivity.READY
_FAILING = grpc.ChannelConnectivity.TRANSIENT_FAILURE


def _probe_answer(error: grpc.RpcError) -> str | None:
    """gRPC's account of why a probe failed to connect: its details for UNAVAILABLE, "" when the
    probe ran out of time, None when it got through to a server (whatever that answered)."""
    code = getattr(error, "code", None)
    status = code() if callable(code) else None
    if status is grpc.StatusCode.UNAVAILABLE:
        details = getattr(error, "details", None)
        return str((details() if callable(details) else "") or "")
    if status is grpc.StatusCode.DEADLINE_EXCEEDED:
        return ""
    return None


@dataclass(slots=True)
class _Watch:
    """What a wait has seen: every state, and gRPC's account of the latest failed attempt."""

    target: str
    timeout: float
    patient: bool
    states: list[grpc.ChannelConnectivity] = field(default_factory=list)
    last: str = ""

    def failed_attempt(self, details: str | None) -> bool:
        """After a probe of a failing channel: True when it got through (the wait is over); raises
        when an impatient wait sees a failure that waiting does not mend."""
        if details is None:
            return True
        self.last = details or self.last
        reason, meaning = connection_failure(self.last)
        if not self.patient and self.last and reason in FAIL_AT_ONCE:
            raise unavailable(meaning, reason, self.target)
        return False

    def verdict(self) -> BigTwoUnavailable:
        """The error once the time is up without a connection."""
        if self.last:
            reason, meaning = connection_failure(self.last)
            return unavailable(meaning, reason, self.target)
        return unavailable(f"no answer within {self.timeout:g} s", "NO_ANSWER", self.target)


def await_connection(channel: grpc.Channel, target: str, timeout: float, *, patient: bool = True) -> None:
    """Wait until the sync ``channel`` to ``target`` is connected, at most ``timeout`` seconds.

    ``patient``: wait through every failed attempt (a server that is still starting); otherwise
    give up at the first attempt that fails for good (nothing listening, a TLS mismatch, not a
    gRPC server...), which for a dead address takes milliseconds instead of the whole ``timeout``.
    Raises :class:`BigTwoUnavailable` whose ``reason`` and message say what was seen (see
    :func:`connection_failure`; ``NO_ANSWER`` when nothing happened in time)."""
    watch = _Watch(target, timeout, patient)
    changed = threading.Event()
    deadline = time.monotonic() + max(0.0, timeout)

    def seen(state: grpc.ChannelConnectivity) -> None:
        watch.states.append(state)
        changed.set()

    def probe() -> str | None:
        check: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(_PROBE)
        try:
            check(b"", timeout=max(0.1, min(2.0, deadline - time.monotonic())))
        except grpc.RpcError as error:
            return _probe_answer(error)
        return None

    channel.subscribe(seen, try_to_connect=True)
    try:
        while changed.wait(max(0.0, deadline - time.monotonic())):
            changed.clear()
            state = watch.states[-1]
            if state is _READY or (state is _FAILING and not patient and watch.failed_attempt(probe())):
                return
            if time.monotonic() >= deadline:
                break
    finally:
        channel.unsubscribe(seen)
    if watch.states and watch.states[-1] is _READY:
        return
    if _FAILING in watch.states and watch.failed_attempt(probe()):
        return
    raise watch.verdict()


async def await_connection_async(
    channel: grpc.aio.Channel, target: str, timeout: float, *, patient: bool = True
) -> None:
    """:func:`await_connection` for a ``grpc.aio`` channel (which has no callbacks: it is watched
    with ``wait_for_state_change``)."""
    watch = _Watch(target, timeout, patient)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0.0, timeout)

    async def probe() -> str | None:
        check: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(_PROBE)
        try:
            await check(b"", timeout=max(0.1, min(2.0, deadline - loop.time())))
        except grpc.aio.AioRpcError as error:
            return _probe_answer(error)
        return None

    state = channel.get_state(try_to_connect=True)
    watch.states.append(state)
    while state is not _READY:
        if state is _FAILING and not patient and watch.failed_attempt(await probe()):
            return
        try:
            await asyncio.wait_for(channel.wait_for_state_change(state), max(0.0, deadline - loop.time()))
        except TimeoutError:
            break
        state = channel.get_state(try_to_connect=True)
        watch.states.append(state)
    if state is _READY:
        return
    if _FAILING in watch.states and watch.failed_attempt(await probe()):
        return
    raise watch.verdict()


def check_reachable(
    target: str, *, timeout: float = DEFAULT_TIMEOUT, security: Security | None = None, patient: bool = False
) -> None:
    """Connect to ``target`` once and let go: raises :class:`BigTwoUnavailable` (see
    :func:`await_connection`) when it cannot be reached. For commands that use the generated stubs
    or grpc.aio and want to stop before their first call rather than fail every one."""
    with sync_channel(target, security or Security()) as channel:
        await_connection(channel, target, timeout, patient=patient)


__all__ = ["await_connection", "await_connection_async", "check_reachable"]
