"""One call's bookkeeping, the same for both shapes a call comes in (unary or stream): its request
id and bearer token check, its timing, its metrics, its log line, the mapping of what it raised to
a status (:func:`~bigtwo.service.errors.to_rpc_status`, the one place) and, for a stream, the
count of open streams the drain waits for.

:class:`CallScope` is made when a call's handler starts and ended in its ``finally``; between the
two, the shape's own code (a loop over a stream's messages, the wait for a heavy call's worker)
only hands it what happened. Requests are parsed by a deserializer that never raises, so garbage
bytes reach the handler as :class:`Undecodable`.
"""

from __future__ import annotations

import hmac
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol

import grpc
from bigtwo.engine.cache import BoundedCache
from bigtwo.v1 import service_pb2 as api
from google.protobuf.message import Message
from prometheus_client import Counter as CounterMetric
from prometheus_client import Histogram

from .errors import InvalidArgument, Unauthenticated, bad_field, to_rpc_status
from .game import CallInfo
from .offload import Failed
from .telemetry import (
    BOT_MOVES,
    CALLS,
    DEALS_FINISHED,
    DEALS_STARTED,
    FAILED,
    GRPC,
    LATENCY,
    MALFORMED,
    MOVE_LATENCY,
    MOVES,
    OPEN_STREAMS,
)

STREAM = "PlayStream"
MOVE_METHODS = ("ValidateMove", "ApplyMove", STREAM)
"""The RPCs whose messages are moves: each counted in ``bigtwo_moves_total`` and timed in
``bigtwo_move_duration_seconds`` as it is answered (a stream's, while the stream goes on)."""
NO_DEADLINE = 1e9
"""Seconds left above which a call has no deadline (a deadline that far out is gRPC's "none")."""
_OK = grpc.StatusCode.OK
_CANCELLED = grpc.StatusCode.CANCELLED


# -- requests and responses ------------------------------------------------------------------------


class Undecodable:
    """Bytes that did not parse as the request message."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


Metadata = Sequence[tuple[str, str | bytes]]
"""The trailing metadata a call ends with."""


class ScopeContext(Protocol):
    """What a :class:`CallScope` reads of a call's context: its metadata, and whether the client
    went. A browser port's context also names its ``protocol`` and ``via`` (read with ``getattr``)."""

    def invocation_metadata(self) -> Iterable[tuple[str, str | bytes]] | None: ...

    def cancelled(self) -> bool: ...


class CallContext(ScopeContext, Protocol):
    """What a handler uses of a call's context besides: its deadline and the ways to end it. The
    gRPC port's is ``grpc.aio.ServicerContext``; the browser port's is
    :class:`~bigtwo.service.web.WebCallContext`, the same methods over an HTTP request."""

    def time_remaining(self) -> float | None: ...

    async def abort(self, code: grpc.StatusCode, details: str, trailing_metadata: Metadata = ()) -> None: ...

    def set_code(self, code: grpc.StatusCode) -> None: ...

    def set_details(self, details: str) -> None: ...

    def set_trailing_metadata(self, trailing_metadata: Metadata) -> None: ...


Request = Message | Undecodable
"""What a handler is handed: the request message, or the bytes that did not parse as one."""
Response = Message | bytes
"""What a handler answers: a message, or one already serialized (a move's answer, :mod:`.wire`)."""


def safe_deserializer(cls: type[Message]) -> Callable[[bytes], Request]:
    parse = cls.FromString

    def deserialize(data: bytes) -> Request:
        try:
            return parse(data)
        except Exception as exc:
            return Undecodable(f"{type(exc).__name__}: {exc}"[:200])

    return deserialize


def undecodable(request: Undecodable, name: str) -> InvalidArgument:
    return bad_field("", f"the request is not a valid {name} message ({request.error})", reason="UNDECODABLE")


def serializer(_cls: type[Message] | None = None) -> Callable[[Response], bytes]:
    """Responses are messages, or already serialized (a move's answer, :mod:`.wire`). Messages are
    serialized deterministically: map entries (a ruleset's options) in key order, so an answer is
    the same bytes on every replica and re-serializing it gives it back (tests/test_interop_decoders.py)."""

    def serialize(response: Response) -> bytes:
        return response if isinstance(response, bytes) else response.SerializeToString(deterministic=True)

    return serialize


def deadline_of(context: CallContext) -> float | None:
    """The call's deadline on ``time.monotonic()``'s clock, or None when it has none."""
    remaining = context.time_remaining()
    if remaining is None or remaining > NO_DEADLINE:
        return None
    return time.monotonic() + float(remaining)


# -- move metrics ----------------------------------------------------------------------------------

_MOVE_SERIES: BoundedCache[tuple[str, str], CounterMetric] = BoundedCache("service.callscope.move_series", 1024)
"""``bigtwo_moves_total``'s child of each (result, reason): results and reasons are the rules'
and the status codes, a few dozen pairs."""


class CallSeries(NamedTuple):
    """The metric series one (method, status, protocol) call is counted in."""

    calls: CounterMetric
    latency: Histogram
    move_latency: Histogram | None
    """``bigtwo_move_duration_seconds``' series of a unary move method, else None."""


_CALL_SERIES: BoundedCache[tuple[str, grpc.StatusCode, str], CallSeries] = BoundedCache(
    "service.callscope.call_series", 2048
)
"""The series of each (method, status, protocol): sixteen methods (and the browser port's
unknown one), the status codes and three protocols, a few hundred in practice."""


def _call_series(method: str, code: grpc.StatusCode, protocol: str) -> CallSeries:
    moves = method in MOVE_METHODS and method != STREAM  # a stream times its moves as they come
    return _CALL_SERIES.put(
        (method, code, protocol),
        CallSeries(
            CALLS.labels(method, code.name, protocol),
            LATENCY.labels(method, protocol),
            MOVE_LATENCY.labels(method) if moves else None,
        ),
    )


def count_move(result: str, reason: str) -> None:
    child = _MOVE_SERIES.get((result, reason))
    if child is None:
        child = _MOVE_SERIES.put((result, reason), MOVES.labels(result, reason))
    child.inc()


def _move_refused(code: grpc.StatusCode) -> None:
    """A move message answered with an error status instead of a judgement."""
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        count_move(MALFORMED, "")
    else:
        count_move(FAILED, code.name)


class StreamTally:
    """What a stream has counted so far: each judged move and each deal started or finished goes
    to the metrics as its message is answered, not when the stream ends (a stream may live for a
    whole deal, or be cut at shutdown before it ends)."""

    __slots__ = ("finished", "latency", "moves", "started")

    def __init__(self) -> None:
        self.moves = 0
        self.started = 0
        self.finished = 0
        self.latency = MOVE_LATENCY.labels(STREAM)

    def answered(self, info: CallInfo, received: float) -> None:
        """Count what ``info`` gained since the last message; a judged move's time is
        ``received`` (when the handler took the message) to now."""
        moves = info.moves
        if len(moves) > self.moves:
            self.latency.observe(time.perf_counter() - received)
            for result, reason in moves[self.moves :]:
                count_move(result, reason)
            self.moves = len(moves)
        if info.deals_started > self.started or info.deals_finished > self.finished:
            self.deals(info)

    def refused(self, request: Request | None, code: grpc.StatusCode, received: float) -> None:
        """The message that ended the stream with ``code``: a move message (or bytes that were no
        message at all) counts as a move answered with an error."""
        if isinstance(request, Undecodable) or (
            isinstance(request, api.PlayStreamRequest) and request.WhichOneof("message") == "move"
        ):
            self.latency.observe(time.perf_counter() - received)
            _move_refused(code)

    def deals(self, info: CallInfo) -> None:
        if info.deals_started > self.started:
            DEALS_STARTED.labels(info.preset).inc(info.deals_started - self.started)
            self.started = info.deals_started
        if info.deals_finished > self.finished:
            DEALS_FINISHED.labels(info.preset).inc(info.deals_finished - self.finished)
            self.finished = info.deals_finished


# -- the scope -------------------------------------------------------------------------------------


class OpenStreams:
    """The PlayStream calls open in this process (the drain waits for them). Every call runs on the
    server's one event loop, so a plain count suffices."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def opened(self) -> None:
        OPEN_STREAMS.inc()
        self.count += 1

    def closed(self) -> None:
        OPEN_STREAMS.dec()
        self.count -= 1


class CallLog(Protocol):
    """The structured logger a call's line goes to (structlog's, :func:`.telemetry.logger`)."""

    def info(self, event: str, **fields: object) -> object: ...

    def error(self, event: str, **fields: object) -> object: ...


class Host(Protocol):
    """What a call scope reads of the server hosting it (:class:`bigtwo.service.servicer.Hosting`)."""

    expected_auth: bytes
    """``Bearer <token>`` as bytes, or empty: no bearer token is asked for."""
    log_calls: bool
    streams: OpenStreams

    @property
    def log(self) -> CallLog:
        """Read only (a property, so a host may hold a logger of a wider type, structlog's)."""


class CallScope:
    """One call, from its handler's start to its end (see the module's docstring)::

        scope = CallScope(host, method, context)
        try:
            scope.begin()
            return handle(request, scope.info)
        except Exception as exc:
            status = scope.failed(exc)  # then abort with it, the shape's way
        finally:
            scope.end()

    A stream's scope is given its :class:`StreamTally` and counts itself among the open streams
    from its start to its end."""

    __slots__ = ("code", "context", "error", "host", "info", "method", "protocol", "request_id", "started", "tally")

    def __init__(self, host: Host, method: str, context: ScopeContext, tally: StreamTally | None = None) -> None:
        self.started = time.perf_counter()
        self.host = host
        self.method = method
        self.context = context
        self.protocol: str = getattr(context, "protocol", GRPC)
        """The call's ``protocol`` label: a browser port's context names its own
        (:class:`~bigtwo.service.web.WebCallContext`); a gRPC context has none."""
        self.info = CallInfo()
        self.code = _OK
        self.error: BaseException | None = None
        self.request_id = ""
        self.tally = tally
        if tally is not None:
            host.streams.opened()

    def begin(self) -> None:
        """Take the request id from the metadata (or make one) and check the bearer token:
        UNAUTHENTICATED unless there is exactly one and it is the expected one."""
        request_id = ""
        credentials: list[bytes] = []
        for key, value in self.context.invocation_metadata() or ():
            if key == "x-request-id":
                request_id = str(value)[:64]
            elif key == "authorization":
                credentials.append(value.encode() if isinstance(value, str) else bytes(value))
        self.request_id = request_id or os.urandom(8).hex()  # first: a refused call's log line names it too
        expected = self.host.expected_auth
        if expected:
            # One credential, exactly: with two, proxies and servers disagree on which one counts.
            if len(credentials) > 1:
                raise Unauthenticated("more than one 'authorization' header: send exactly one bearer token")
            given = credentials[0] if credentials else b""
            if not hmac.compare_digest(given, expected):
                raise Unauthenticated("missing or wrong bearer token (metadata 'authorization: Bearer ...')")

    def failed(self, exc: BaseException, request: Request | None = None, received: float = 0.0) -> grpc.Status | None:
        """The status the call ends with for ``exc`` (None: it was cancelled, there is nothing to
        send); a stream's ``request`` was the message being handled, taken at ``received``."""
        if isinstance(exc, Failed):  # mapped where it was raised, by the same function
            status, code = exc.status, exc.code
        elif isinstance(exc, grpc.RpcError) and self.context.cancelled():
            status, code = None, _CANCELLED
        else:
            status, code = to_rpc_status(exc, self.request_id)
        self.code, self.error = code, exc
        if self.tally is not None:
            self.tally.refused(request, code, received)
        return status

    def cancelled(self) -> None:
        """The client cancelled the call, or the server cut it."""
        self.code = _CANCELLED

    def end(self) -> None:
        """Count the call and write its log line."""
        elapsed = time.perf_counter() - self.started
        if self.tally is not None:
            self.host.streams.closed()
        method, code, info, protocol = self.method, self.code, self.info, self.protocol
        series = _CALL_SERIES.get((method, code, protocol)) or _call_series(method, code, protocol)
        series.calls.inc()
        series.latency.observe(elapsed)
        if self.tally is not None:  # a stream counted its moves as it went
            self.tally.deals(info)
        else:
            _count_unary(series, code, info, elapsed)
        if info.bot_level:
            BOT_MOVES.labels(method, info.bot_level).inc()
        for level, count in Counter(info.bot_levels).items():
            BOT_MOVES.labels(method, level).inc(count)
        self._log(elapsed)
        self.error = None  # nothing of the call outlives it through its scope

    def _log(self, elapsed: float) -> None:
        host, info, code, error = self.host, self.info, self.code, self.error
        if code is grpc.StatusCode.INTERNAL and error is not None:
            host.log.error(
                "rpc",
                method=self.method,
                code=code.name,
                duration_ms=round(elapsed * 1000, 3),
                deal=info.deal_id,
                request_id=self.request_id,
                exc_info=error,
                **_via(self.context),
            )
        elif host.log_calls:
            fields: dict[str, object] = {}
            if len(info.moves) > 1:
                fields["moves"] = len(info.moves)
            elif info.moves:
                fields["move"] = info.moves[0][0]
                if info.moves[0][1]:
                    fields["reason"] = info.moves[0][1]
            if info.bot_level:
                fields["bot"] = info.bot_level
            fields.update(_via(self.context))
            if info.bot_levels:
                fields["bot_moves"] = len(info.bot_levels)
            if error is not None and code is not _CANCELLED:
                fields["error"] = str(error)[:300]
            host.log.info(
                "rpc",
                method=self.method,
                code=code.name,
                duration_ms=round(elapsed * 1000, 3),
                deal=info.deal_id,
                request_id=self.request_id,
                **fields,
            )


def _via(context: ScopeContext) -> dict[str, str]:
    """A browser port's call names the protocol it came by in its log line (service/web.py)."""
    via = getattr(context, "via", None)
    return {} if via is None else {"via": via}


def _count_unary(series: CallSeries, code: grpc.StatusCode, info: CallInfo, elapsed: float) -> None:
    """A unary call's moves and deals, counted as it ends."""
    if len(info.moves) == 1:
        count_move(*info.moves[0])
    elif info.moves:
        for (result, reason), count in Counter(info.moves).items():
            MOVES.labels(result, reason).inc(count)
    if series.move_latency is not None:
        series.move_latency.observe(elapsed)
        if not info.moves and code is not _OK:
            _move_refused(code)
    if info.deals_started:
        DEALS_STARTED.labels(info.preset).inc(info.deals_started)
    if info.deals_finished:
        DEALS_FINISHED.labels(info.preset).inc(info.deals_finished)


__all__ = [
    "MOVE_METHODS",
    "STREAM",
    "CallContext",
    "CallLog",
    "CallScope",
    "Host",
    "Metadata",
    "OpenStreams",
    "Request",
    "Response",
    "ScopeContext",
    "StreamTally",
    "Undecodable",
    "count_move",
    "deadline_of",
    "safe_deserializer",
    "serializer",
    "undecodable",
]
