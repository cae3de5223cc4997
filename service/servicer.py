"""Hosting the handlers of :mod:`bigtwo.service.core` on a gRPC server (sync or aio).

Every RPC goes through one wrapper that: checks the bearer token, refuses bytes that are no
message (INVALID_ARGUMENT instead of gRPC's INTERNAL), calls the handler, maps whatever it raised
with :func:`~bigtwo.service.errors.to_rpc_status` (the one place), writes one JSON log line and
counts the call. Requests are parsed by a deserializer that never raises, so garbage bytes reach the
wrapper as :class:`Undecodable`.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import os
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from bigtwo.engine import Move, Refusal
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from . import convert as cv
from . import wire
from .core import CallInfo, Core, MoveResult
from .errors import FailedPrecondition, InvalidArgument, Unauthenticated, bad_field
from .offload import (
    DEFAULT_WAITING,
    HEAVY_METHODS,
    DeadlinePassed,
    Done,
    Failed,
    Offload,
    default_workers,
    is_heavy,
    worker_lost,
)
from .telemetry import (
    BOT_MOVES,
    CALLS,
    DEALS_FINISHED,
    DEALS_STARTED,
    FAILED,
    LATENCY,
    MALFORMED,
    MOVE_LATENCY,
    MOVES,
    OPEN_STREAMS,
    initialise,
    logger,
)
from .tokens import LastMove

SERVICE_NAME = "bigtwo.v1.BigTwoService"

# RPC name -> (request class, response class, Core method name)
UNARY: dict[str, tuple[Any, Any, str]] = {
    "ListPresets": (api.ListPresetsRequest, api.ListPresetsResponse, "list_presets"),
    "DescribeRuleset": (api.DescribeRulesetRequest, api.DescribeRulesetResponse, "describe_ruleset"),
    "Deal": (api.DealRequest, api.DealResponse, "deal"),
    "ValidateMove": (api.ValidateMoveRequest, api.ValidateMoveResponse, "validate_move"),
    "ApplyMove": (api.ApplyMoveRequest, api.ApplyMoveResponse, "apply_move_answer"),
    "LegalMoves": (api.LegalMovesRequest, api.LegalMovesResponse, "legal_moves"),
    "NextHint": (api.NextHintRequest, api.NextHintResponse, "next_hint"),
    "TimeoutMove": (api.TimeoutMoveRequest, api.TimeoutMoveResponse, "timeout_move"),
    "SplitHand": (api.SplitHandRequest, api.SplitHandResponse, "split_hand"),
    "NameCards": (api.NameCardsRequest, api.NameCardsResponse, "name_cards"),
    "ScoreDeal": (api.ScoreDealRequest, api.ScoreDealResponse, "score_deal"),
    "SettleMatch": (api.SettleMatchRequest, api.SettleMatchResponse, "settle_match"),
    "ReplayLog": (api.ReplayLogRequest, api.ReplayLogResponse, "replay_log"),
    "BotMove": (api.BotMoveRequest, api.BotMoveResponse, "bot_move"),
    "AuditLog": (api.AuditLogRequest, api.AuditLogResponse, "audit_log"),
}
SLOW = HEAVY_METHODS
"""Calls that may take many milliseconds (a bot's search, a whole match re-run, every play of a
large hand): they run off the event loop, on :class:`~bigtwo.service.offload.Offload`'s workers,
so the loop keeps answering the other calls and streams meanwhile (:func:`.offload.is_heavy`)."""
NO_DEADLINE = 1e9
"""Seconds left above which a call has no deadline (the sync server reports "none" as centuries)."""
STREAM = "PlayStream"
MOVE_METHODS = ("ValidateMove", "ApplyMove", STREAM)
"""The RPCs whose messages are moves: each counted in ``bigtwo_moves_total`` and timed in
``bigtwo_move_duration_seconds`` as it is answered (a stream's, while the stream goes on)."""


AUTH_TOKEN_RULE = (
    "a bearer token is at least 16 visible ASCII characters without spaces "
    "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
)


def valid_auth_token(token: str) -> bool:
    """Whether ``token`` can be a bearer credential: an empty or blank one would turn checking off
    by mistake, and one with spaces or control characters cannot travel in a header unchanged."""
    return len(token) >= 16 and token.isascii() and token.isprintable() and " " not in token


class Undecodable:
    """Bytes that did not parse as the request message."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


def safe_deserializer(cls: Any) -> Callable[[bytes], Any]:
    parse = cls.FromString

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception as exc:
            return Undecodable(f"{type(exc).__name__}: {exc}"[:200])

    return deserialize


def undecodable(request: Undecodable, name: str) -> InvalidArgument:
    return bad_field("", f"the request is not a valid {name} message ({request.error})", reason="UNDECODABLE")


def serializer(_cls: Any) -> Callable[[Any], bytes]:
    """Responses are messages, or already serialized (a move's answer, :mod:`.wire`). Messages are
    serialized deterministically: map entries (a ruleset's options) in key order, so an answer is
    the same bytes on every replica and re-serializing it gives it back (tests/test_interop_decoders.py)."""

    def serialize(response: Any) -> bytes:
        return response if response.__class__ is bytes else response.SerializeToString(deterministic=True)

    return serialize


def _as_message(cls: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """For harnesses that hand responses over without serializing (grpc_testing)."""

    def call(*args: Any) -> Any:
        response = fn(*args)
        return cls.FromString(response) if response.__class__ is bytes else response

    return call


def _as_messages(cls: Any, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def call(*args: Any) -> Iterator[Any]:
        for response in fn(*args):
            yield cls.FromString(response) if response.__class__ is bytes else response

    return call


def _abort_sync(context: Any, status: Any) -> None:
    """End the call with a rich status. Harnesses without ``abort_with_status`` (grpc_testing) get
    the same code, message and details through set_code / set_trailing_metadata."""
    try:
        context.abort_with_status(status)
    except NotImplementedError:
        context.set_trailing_metadata(status.trailing_metadata)
        context.set_code(status.code)
        context.set_details(status.details)


def _cancel(future: Any) -> None:
    """Cancel a heavy call still waiting for a worker (one that has started runs to its end)."""
    future.cancel()


def _deadline(context: Any) -> float | None:
    """The call's deadline on ``time.monotonic()``'s clock, or None when it has none."""
    remaining = context.time_remaining()
    if remaining is None or remaining > NO_DEADLINE:
        return None
    return time.monotonic() + float(remaining)


def _resends(move: pb.Move, last: LastMove) -> bool:
    try:
        return last.same_as(Move.parse(move.seat, move.text))
    except Refusal:
        return False


_MOVE_SERIES: dict[tuple[str, str], Any] = {}
"""``bigtwo_moves_total``'s child of each (result, reason), looked up once a process."""


def _count_move(result: str, reason: str) -> None:
    child = _MOVE_SERIES.get((result, reason))
    if child is None:
        child = _MOVE_SERIES[(result, reason)] = MOVES.labels(result, reason)
    child.inc()


def _move_refused(code: grpc.StatusCode) -> None:
    """A move message answered with an error status instead of a judgement."""
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        _count_move(MALFORMED, "")
    else:
        _count_move(FAILED, code.name)


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
                _count_move(result, reason)
            self.moves = len(moves)
        if info.deals_started > self.started or info.deals_finished > self.finished:
            self.deals(info)

    def refused(self, request: Any, code: grpc.StatusCode, received: float) -> None:
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


class StreamSession:
    """One PlayStream: open a deal, then judge moves against the deal held for the stream's life."""

    __slots__ = ("core", "game", "info", "last_reply", "tokens", "view_seat")

    def __init__(self, core: Core, info: CallInfo) -> None:
        self.core = core
        self.info = info
        self.game: Any = None
        self.view_seat: int | None = None
        self.tokens = False
        self.last_reply: bytes | None = None

    def handle(self, request: api.PlayStreamRequest) -> api.PlayStreamResponse | bytes:
        """The answer to one message: a move's answer comes serialized (:mod:`.wire`)."""
        which = request.WhichOneof("message")
        core, info = self.core, self.info
        if which == "move":
            game = self.game
            if game is None:
                raise FailedPrecondition(
                    "open the deal first: the stream's first message is open", reason="STREAM_NOT_OPEN"
                )
            stream_move = request.move
            if not stream_move.HasField("move"):
                raise bad_field("move.move", "required")
            move = stream_move.move
            if stream_move.validate_only:
                return self._reply(core.judge(game, move, "move.move", info, apply=False, need_index=True))
            # The state before each move is kept only when tokens are sent: retries use last_reply.
            try:
                result = core.judge(
                    game, move, "move.move", info, apply=True, need_index=True, keep_previous=self.tokens
                )
            except FailedPrecondition:
                if self._retried(move):
                    info.moves.append(("duplicate", ""))
                    return self.last_reply  # type: ignore[return-value]  # the same answer, nothing applied twice
                raise
            self.game = result.game
            response = self._reply(result)
            if result.accepted:
                self.last_reply = response
            return response
        if which == "open":
            if self.game is not None:
                raise bad_field("open", "the stream already holds a deal; open a new stream for another")
            opening = request.open
            game = core.load(opening.game, "open.game", info)
            self.tokens = opening.state_tokens
            self.view_seat = core.view_seat_of(opening, game, "open.view_seat")
            if game.deal.moves_made == 0 and opening.game.WhichOneof("game") == "log":
                info.deals_started += 1
                if game.deal.over:
                    info.deals_finished += 1
            self.game = game
            view_seat = self.view_seat
            return wire.opened_response(
                core.code_for(game, view_seat),
                game.writer().table(game.deal),
                [wire.event_bytes(event, game.parts, view_seat) for event in game.events_so_far()],
                b"" if view_seat is None else cv.seat_view(game.deal, view_seat).SerializeToString(),
                token := core.token(game),
                token if game.viewer >= 0 else core.seat_token(game, view_seat),
            )
        raise bad_field("message", "set open or move")

    def _reply(self, result: MoveResult) -> bytes:
        """A judged move's answer on the stream, with a token when the stream asked for them."""
        token = self.core.token(result.game) if self.tokens else b""
        return self.core.answer(result, self.view_seat, wire.STREAM, token)

    def _retried(self, move: pb.Move) -> bool:
        """Whether ``move`` resends the move last applied, whose answer was lost in transit."""
        game = self.game
        return (
            self.last_reply is not None
            and move.HasField("index")
            and move.index == game.deal.moves_made - 1
            and game.last_move is not None
            and _resends(move, game.last_move)
        )


BATCH_TURNS = 6
"""Turns of the event loop that stream messages are gathered for before they are handled."""


class TurnBatch:
    """Stream messages that arrive within :data:`BATCH_TURNS` turns of the event loop, handled
    together, back to back.

    Handled back to back, the moves of many games find the engine's code and the rule tables still
    in the CPU caches, where interleaved with the transport's work each would find them evicted.
    Measured with 16 and 256 streamed games: about 15% and 40% more moves per second than handling
    each message as it comes, at less server CPU per move. Gathering for three to eight turns
    instead of two added about 5% more (0.80-0.84 of the no-op server against 0.76-0.78, in the
    same runs), with no cost at one game: a turn with nothing to do is a poll that returns at once
    (docs/SERVICE.md, "Speed").
    """

    def __init__(self) -> None:
        self.pending: list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    def call(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``fn(*args)``'s result, or what it raised, once the batch has run."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.loop is not loop:  # no turn scheduled on this loop yet
            self.loop = loop
            self.pending = []
            loop.call_soon(self._wait, BATCH_TURNS - 1)
        self.pending.append((fn, args, future))
        return future

    def _wait(self, turns: int) -> None:
        if turns > 0 and self.loop is not None:
            self.loop.call_soon(self._wait, turns - 1)
        else:
            self._run()

    def _run(self) -> None:
        pending, self.pending, self.loop = self.pending, [], None
        for position, (fn, args, future) in enumerate(pending):
            if future.cancelled():  # the call ended meanwhile
                continue
            try:
                future.set_result(fn(*args))
            except Exception as exc:
                future.set_exception(exc)
            except BaseException:  # the process is stopping: end the waiting calls, hang none
                for _fn, _args, waiting in pending[position:]:
                    waiting.cancel()
                raise


class Hosting:
    """Builds the generic handler for a server; ``core`` may be a no-op stand-in (bench)."""

    def __init__(
        self, core: Any, *, auth_token: str | None = None, log_calls: bool = True, heavy: Offload | None = None
    ) -> None:
        self.core = core
        self.heavy = heavy if heavy is not None else Offload.threads(core, default_workers(), DEFAULT_WAITING)
        """Where the heavy calls run (threads calling ``core`` unless the server gives processes)."""
        if auth_token is not None and not valid_auth_token(auth_token):
            raise ValueError(f"--auth-token: {AUTH_TOKEN_RULE}")
        self.expected_auth = f"Bearer {auth_token}".encode() if auth_token else b""
        self.log = logger()
        self.log_calls = log_calls
        self.batch = TurnBatch()
        self.open_streams = 0
        """PlayStream calls open in this process (the drain waits for them)."""
        self._streams_lock = threading.Lock()
        self.cutting = False
        """Set by the server as it stops with streams still open: their requests then end as if
        the client had finished (aio gives the handler no sign of the cut), yet the calls are cut."""
        from bigtwo.engine import PRESET_NAMES, Reason
        from bigtwo.engine.bots import LEVELS

        initialise([*UNARY, STREAM], MOVE_METHODS, [reason.value for reason in Reason], PRESET_NAMES, LEVELS)

    # -- the one wrapper's parts ---------------------------------------------------------------

    def _begin(self, context: Any) -> str:
        request_id = ""
        credentials: list[bytes] = []
        for key, value in context.invocation_metadata() or ():
            if key == "x-request-id":
                request_id = str(value)[:64]
            elif key == "authorization":
                credentials.append(value.encode() if isinstance(value, str) else bytes(value))
        if self.expected_auth:
            # One credential, exactly: with two, proxies and servers disagree on which one counts.
            if len(credentials) > 1:
                raise Unauthenticated("more than one 'authorization' header: send exactly one bearer token")
            given = credentials[0] if credentials else b""
            if not hmac.compare_digest(given, self.expected_auth):
                raise Unauthenticated("missing or wrong bearer token (metadata 'authorization: Bearer ...')")
        return request_id or os.urandom(8).hex()

    def _record(
        self,
        method: str,
        code: grpc.StatusCode,
        started: float,
        request_id: str,
        info: CallInfo,
        error: BaseException | None,
        tally: StreamTally | None = None,
    ) -> None:
        elapsed = time.perf_counter() - started
        CALLS.labels(method, code.name).inc()
        LATENCY.labels(method).observe(elapsed)
        if tally is not None:  # a stream counted its moves as it went
            tally.deals(info)
        else:
            if len(info.moves) == 1:
                _count_move(*info.moves[0])
            elif info.moves:
                for (result, reason), count in Counter(info.moves).items():
                    MOVES.labels(result, reason).inc(count)
            if method in MOVE_METHODS:
                MOVE_LATENCY.labels(method).observe(elapsed)
                if not info.moves and code is not grpc.StatusCode.OK:
                    _move_refused(code)
            if info.deals_started:
                DEALS_STARTED.labels(info.preset).inc(info.deals_started)
            if info.deals_finished:
                DEALS_FINISHED.labels(info.preset).inc(info.deals_finished)
        if info.bot_level:
            BOT_MOVES.labels(method, info.bot_level).inc()
        if code is grpc.StatusCode.INTERNAL and error is not None:
            self.log.error(
                "rpc",
                method=method,
                code=code.name,
                duration_ms=round(elapsed * 1000, 3),
                deal=info.deal_id,
                request_id=request_id,
                exc_info=error,
            )
        elif self.log_calls:
            fields: dict[str, Any] = {}
            if len(info.moves) > 1:
                fields["moves"] = len(info.moves)
            elif info.moves:
                fields["move"] = info.moves[0][0]
                if info.moves[0][1]:
                    fields["reason"] = info.moves[0][1]
            if info.bot_level:
                fields["bot"] = info.bot_level
            if error is not None and code is not grpc.StatusCode.CANCELLED:
                fields["error"] = str(error)[:300]
            self.log.info(
                "rpc",
                method=method,
                code=code.name,
                duration_ms=round(elapsed * 1000, 3),
                deal=info.deal_id,
                request_id=request_id,
                **fields,
            )

    def _status(self, exc: BaseException, request_id: str, context: Any) -> tuple[Any, grpc.StatusCode]:
        from .errors import to_rpc_status

        if isinstance(exc, Failed):  # mapped where it was raised, by the same function
            return exc.status, exc.code
        if isinstance(exc, grpc.RpcError) and not context.is_active():
            return None, grpc.StatusCode.CANCELLED
        return to_rpc_status(exc, request_id)

    def _offload(self, method: str, request: Any, request_id: str, deadline: float | None) -> futures.Future[Done]:
        """Start a heavy call on :attr:`heavy` (RESOURCE_EXHAUSTED when too many are in flight)."""
        return self.heavy.submit(UNARY[method][2], request, request_id, deadline)

    # -- sync ------------------------------------------------------------------------------------

    def _sync_unary(self, method: str, fn: Callable[[Any, CallInfo], Any], message_name: str) -> Callable[..., Any]:
        heavy = method in HEAVY_METHODS

        def handler(request: Any, context: grpc.ServicerContext) -> Any:
            started = time.perf_counter()
            info = CallInfo()
            code, error, request_id = grpc.StatusCode.OK, None, ""
            try:
                request_id = self._begin(context)
                if isinstance(request, Undecodable):
                    raise undecodable(request, message_name)
                if heavy and is_heavy(method, request):
                    deadline = _deadline(context)
                    future = self._offload(method, request, request_id, deadline)
                    # the call ended: a heavy call still waiting never starts
                    context.add_callback(functools.partial(_cancel, future))
                    try:
                        done = future.result(None if deadline is None else max(0.0, deadline - time.monotonic()))
                    except futures.TimeoutError:
                        future.cancel()
                        raise DeadlinePassed("the call's deadline passed", reason="DEADLINE_PASSED") from None
                    except futures.CancelledError:
                        code = grpc.StatusCode.CANCELLED
                        return None
                    except futures.BrokenExecutor:
                        raise worker_lost() from None
                    return done.unpack(info)
                return fn(request, info)
            except Exception as exc:
                status, code = self._status(exc, request_id, context)
                error = exc
                if status is not None:
                    _abort_sync(context, status)
                return None
            finally:
                self._record(method, code, started, request_id, info, error)

        return handler

    def _sync_stream(self, method: str) -> Callable[..., Any]:
        def handler(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
            started = time.perf_counter()
            info = CallInfo()
            tally = StreamTally()
            code, error, request_id = grpc.StatusCode.OK, None, ""
            request: Any = None
            received = started
            OPEN_STREAMS.inc()
            with self._streams_lock:
                self.open_streams += 1
            try:
                request_id = self._begin(context)
                session = self.core.session(info)
                for request in requests:
                    received = time.perf_counter()
                    if isinstance(request, Undecodable):
                        raise undecodable(request, "PlayStreamRequest")
                    answer = session.handle(request)
                    tally.answered(info, received)
                    request = None
                    yield answer
                if not context.is_active() or self.cutting:  # the requests ended because the call was cut
                    code = grpc.StatusCode.CANCELLED
            except GeneratorExit:
                code = grpc.StatusCode.CANCELLED
                raise
            except Exception as exc:
                status, code = self._status(exc, request_id, context)
                error = exc
                tally.refused(request, code, received)
                if status is not None:
                    _abort_sync(context, status)
            finally:
                OPEN_STREAMS.dec()
                with self._streams_lock:
                    self.open_streams -= 1
                self._record(method, code, started, request_id, info, error, tally)

        return handler

    # -- aio -------------------------------------------------------------------------------------

    def _aio_unary(self, method: str, fn: Callable[[Any, CallInfo], Any], message_name: str) -> Callable[..., Any]:
        heavy = method in HEAVY_METHODS

        async def handler(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            info = CallInfo()
            code, error, request_id = grpc.StatusCode.OK, None, ""
            try:
                request_id = self._begin(context)
                if isinstance(request, Undecodable):
                    raise undecodable(request, message_name)
                if heavy and is_heavy(method, request):
                    # Cancelled (the client gave up, or its deadline passed): the wrapped future is
                    # cancelled too, so a call still waiting for a worker never starts.
                    future = self._offload(method, request, request_id, _deadline(context))
                    try:
                        done = await asyncio.wrap_future(future)
                    except futures.BrokenExecutor:
                        raise worker_lost() from None
                    return done.unpack(info)
                return fn(request, info)
            except asyncio.CancelledError:
                code = grpc.StatusCode.CANCELLED
                raise
            except Exception as exc:
                status, code = self._status(exc, request_id, context)
                error = exc
                if status is not None:
                    await context.abort(status.code, status.details, status.trailing_metadata)
                return None
            finally:
                self._record(method, code, started, request_id, info, error)

        return handler

    def _aio_stream(self, method: str) -> Callable[..., Any]:
        async def handler(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            started = time.perf_counter()
            info = CallInfo()
            tally = StreamTally()
            code, error, request_id = grpc.StatusCode.OK, None, ""
            request: Any = None
            received = started
            OPEN_STREAMS.inc()
            self.open_streams += 1  # the event loop's thread only
            try:
                request_id = self._begin(context)
                session = self.core.session(info)
                batch = self.batch
                async for request in requests:
                    received = time.perf_counter()
                    if isinstance(request, Undecodable):
                        raise undecodable(request, "PlayStreamRequest")
                    answer = await batch.call(session.handle, request)
                    tally.answered(info, received)
                    request = None
                    yield answer
                if context.cancelled() or self.cutting:  # the requests ended because the call was cut
                    code = grpc.StatusCode.CANCELLED
            except (GeneratorExit, StopAsyncIteration):
                code = grpc.StatusCode.CANCELLED
                raise
            except Exception as exc:
                if isinstance(exc, asyncio.CancelledError):
                    code = grpc.StatusCode.CANCELLED
                    raise
                status, code = self._status(exc, request_id, context)
                error = exc
                tally.refused(request, code, received)
                if status is not None:
                    # The stream ends with its status set, not by raising abort's exception out of
                    # this handler: that exception, chained to this one and its frames (the deal,
                    # the session), outlived every stream that ended in an error.
                    context.set_code(status.code)
                    context.set_details(status.details)
                    context.set_trailing_metadata(status.trailing_metadata)
            finally:
                OPEN_STREAMS.dec()
                self.open_streams -= 1
                self._record(method, code, started, request_id, info, error, tally)
                error = request = None

        return handler

    # -- the handler -----------------------------------------------------------------------------

    def servicer(self) -> Any:
        """The sync handlers as a servicer object (RPC name -> callable), e.g. for grpc_testing."""
        methods: dict[str, Any] = {
            name: _as_message(
                response_cls, self._sync_unary(name, getattr(self.core, attr), request_cls.DESCRIPTOR.name)
            )
            for name, (request_cls, response_cls, attr) in UNARY.items()
        }
        methods[STREAM] = _as_messages(api.PlayStreamResponse, self._sync_stream(STREAM))
        return type("BigTwoServicer", (), {name: staticmethod(fn) for name, fn in methods.items()})()

    def generic_handler(self, *, aio: bool) -> grpc.GenericRpcHandler:
        handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for name, (request_cls, response_cls, attr) in UNARY.items():
            fn = getattr(self.core, attr)
            wrap = self._aio_unary if aio else self._sync_unary
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                wrap(name, fn, request_cls.DESCRIPTOR.name),
                request_deserializer=safe_deserializer(request_cls),
                response_serializer=serializer(response_cls),
            )
        stream = self._aio_stream(STREAM) if aio else self._sync_stream(STREAM)
        handlers[STREAM] = grpc.stream_stream_rpc_method_handler(
            stream,
            request_deserializer=safe_deserializer(api.PlayStreamRequest),
            response_serializer=serializer(api.PlayStreamResponse),
        )
        return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)


class ServiceCore(Core):
    """The real core plus the stream session factory the hosting needs."""

    def session(self, info: CallInfo) -> StreamSession:
        return StreamSession(self, info)
