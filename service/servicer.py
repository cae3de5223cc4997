"""Hosting the handlers of :mod:`bigtwo.service.core` on a grpc.aio server (the one server mode).

Every RPC, whatever its shape (unary or stream), runs in one
:class:`~bigtwo.service.callscope.CallScope`: it checks the bearer token, takes the request id,
maps whatever the handler raised with :func:`~bigtwo.service.errors.to_rpc_status` (the one
place), writes one JSON log line and counts the call. The handlers below add only what their shape
needs: the loop over a stream's messages, the wait for a heavy call's worker, the shape's way to
abort. Bytes that are no message reach them as :class:`~bigtwo.service.callscope.Undecodable` and
are refused INVALID_ARGUMENT (instead of gRPC's INTERNAL).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent import futures
from typing import Protocol, cast

import grpc
from bigtwo.codec.rpcs import BY_NAME, SERVICE_NAME, STREAM_RPCS, UNARY_RPCS, RpcTableError, check_covers, check_known
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

from .callscope import (
    MOVE_METHODS,
    STREAM,
    CallContext,
    CallScope,
    OpenStreams,
    Request,
    Response,
    StreamTally,
    Undecodable,
    deadline_of,
    safe_deserializer,
    serializer,
    undecodable,
)
from .core import CallInfo, Core
from .costs import BOUNDED, Where, place
from .ledger import SPENDING, TokenLedger, spend_answered, spend_streamed
from .offload import (
    DEFAULT_WAITING,
    Done,
    Offload,
    default_workers,
    worker_lost,
)
from .streams import StreamSession, TurnBatch
from .telemetry import initialise, logger

HANDLED_BY: dict[str, str] = {"ApplyMove": "apply_move_answer"}
"""The core's handler of an RPC where it is not the RPC's snake_case name: ``ApplyMove`` is answered
with the bytes :mod:`.wire` lays out (``Core.apply_move`` is the same answer as a message)."""
check_known(HANDLED_BY, "service/servicer.py's HANDLED_BY")

UNARY: dict[str, tuple[type[Message], type[Message], str]] = {
    rpc.name: (rpc.request, rpc.response, HANDLED_BY.get(rpc.name, rpc.method)) for rpc in UNARY_RPCS
}
"""RPC name -> (request class, response class, the core's handler), for each unary RPC of the proto."""


def _check_handlers() -> None:
    """Fail at import when the proto has an RPC the server cannot host: a unary one without its
    handler in :class:`~bigtwo.service.core.Core`, a stream other than PlayStream."""
    check_covers([STREAM], "service/servicer.py's stream handler (PlayStream's)", STREAM_RPCS)
    missing = [
        f"{name} (Core.{attr})" for name, (_, _, attr) in UNARY.items() if not callable(getattr(Core, attr, None))
    ]
    if missing:
        raise RpcTableError(f"service/core.py's Core: no handler for {', '.join(missing)}")


_check_handlers()

SLOW = frozenset(BOUNDED)
"""Calls that may take many milliseconds (a bot's search, a whole match re-run, every play of a
large hand): each is placed by its cost bound (:func:`.costs.place`), and one whose bound is over
the loop's budget runs off the event loop, on :class:`~bigtwo.service.offload.Offload`'s workers,
so the loop keeps answering the other calls and streams meanwhile."""

AUTH_TOKEN_RULE = (
    "a bearer token is at least 16 visible ASCII characters without spaces "
    "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
)


def valid_auth_token(token: str) -> bool:
    """Whether ``token`` can be a bearer credential: an empty or blank one would turn checking off
    by mistake, and one with spaces or control characters cannot travel in a header unchanged."""
    return len(token) >= 16 and token.isascii() and token.isprintable() and " " not in token


class StreamHandling(Protocol):
    """One PlayStream's session (:class:`~bigtwo.service.streams.StreamSession`, or the bench's)."""

    def handle(self, request: api.PlayStreamRequest) -> api.PlayStreamResponse | bytes: ...


class HostedCore(Protocol):
    """What the hosting needs of a core beyond the methods :data:`UNARY` names (looked up by name):
    a session for each stream. :class:`ServiceCore`, or the bench's no-op stand-in."""

    def session(self, info: CallInfo) -> StreamHandling: ...


class _GameRequest(Protocol):
    """A request naming a game (``ApplyMove``, ``BotMove``...): what a placed call was loaded from."""

    game: pb.Game


UnaryHandler = Callable[[Request, CallContext], Awaitable[Response | None]]
"""An RPC's handler: the request (or bytes that did not parse) and the call's context, to its answer."""
StreamHandler = Callable[[AsyncIterator[Request], CallContext], AsyncIterator[Response]]
"""PlayStream's handler: the requests as they come and the call's context, to the answers."""


class Hosting:
    """Builds the generic handler for a server; ``core`` may be a no-op stand-in (bench)."""

    def __init__(
        self, core: HostedCore, *, auth_token: str | None = None, log_calls: bool = True, heavy: Offload | None = None
    ) -> None:
        self.core = core
        self.heavy = heavy if heavy is not None else Offload.threads(core, default_workers(), DEFAULT_WAITING)
        """Where the heavy calls run (threads calling ``core`` unless the server gives processes)."""
        if auth_token is not None and not valid_auth_token(auth_token):
            raise ValueError(f"--auth-token: {AUTH_TOKEN_RULE}")
        self.expected_auth = f"Bearer {auth_token}".encode() if auth_token else b""
        self.log = logger()
        self.log_calls = log_calls
        self.ledger: TokenLedger | None = None
        """The spent-token ledger (``--token-ledger``, :mod:`bigtwo.service.ledger`): None, stateless."""
        self.batch = TurnBatch()
        self.streams = OpenStreams()
        self.cutting = False
        """Set by the server as it stops with streams still open: their requests then end as if
        the client had finished (aio gives the handler no sign of the cut), yet the calls are cut."""
        from bigtwo.engine import PRESET_NAMES, Reason
        from bigtwo.engine.bots import LEVELS

        initialise([*UNARY, STREAM], MOVE_METHODS, [reason.value for reason in Reason], PRESET_NAMES, LEVELS)

    @property
    def open_streams(self) -> int:
        """PlayStream calls open in this process (the drain waits for them)."""
        return self.streams.count

    def _placed_in_pool(self, scope: CallScope, request: Message) -> bool:
        """Whether the call goes to the pool (its cost bound over the loop's budget); a call kept on
        the loop is handed the game loaded to place it."""
        placement = place(scope.method, request, self.core, scope.info)
        if placement.where is Where.POOL:
            return True
        if placement.game is not None:
            scope.info.loaded = (cast(_GameRequest, request).game, placement.game)
        return False

    def _offload(self, method: str, request: Message, request_id: str, deadline: float | None) -> futures.Future[Done]:
        """Start a heavy call on :attr:`heavy` (RESOURCE_EXHAUSTED when too many are in flight)."""
        return self.heavy.submit(UNARY[method][2], request, request_id, deadline)

    # -- aio -------------------------------------------------------------------------------------

    def _aio_unary(self, method: str, fn: Callable[[Message, CallInfo], Response], message_name: str) -> UnaryHandler:
        bounded = method in BOUNDED

        async def handler(request: Request, context: CallContext) -> Response | None:
            scope = CallScope(self, method, context)
            try:
                scope.begin()
                if isinstance(request, Undecodable):
                    raise undecodable(request, message_name)
                if bounded and self._placed_in_pool(scope, request):
                    # Cancelled (the client gave up, or its deadline passed): the wrapped future is
                    # cancelled too, so a call still waiting for a worker never starts.
                    future = self._offload(method, request, scope.request_id, deadline_of(context))
                    try:
                        done = await asyncio.wrap_future(future)
                    except futures.BrokenExecutor:
                        raise worker_lost() from None
                    answer: Response = done.unpack(scope.info)
                else:
                    answer = fn(request, scope.info)
                if self.ledger is not None and method in SPENDING:  # a move from a token spends it
                    await spend_answered(self.ledger, method, request, answer, scope.info)
                return answer
            except asyncio.CancelledError:
                scope.cancelled()
                raise
            except Exception as exc:
                status = scope.failed(exc)
                if status is not None:
                    await context.abort(status.code, status.details, status.trailing_metadata)
                return None
            finally:
                scope.end()

        return handler

    def _aio_stream(self, method: str) -> StreamHandler:
        async def handler(requests: AsyncIterator[Request], context: CallContext) -> AsyncIterator[Response]:
            tally = StreamTally()
            scope = CallScope(self, method, context, tally)
            request: Request | None = None
            received = scope.started
            try:
                scope.begin()
                info = scope.info
                session = self.core.session(info)
                ledger = self.ledger
                spender = session if ledger is not None and isinstance(session, StreamSession) else None
                if spender is not None:
                    spender.spending = True
                batch = self.batch
                async for request in requests:
                    received = time.perf_counter()
                    if isinstance(request, Undecodable):
                        raise undecodable(request, "PlayStreamRequest")
                    answer = await batch.call(session.handle, request)
                    if spender is not None and ledger is not None:  # a move applied spends its state's tokens
                        await spend_streamed(ledger, spender)
                    tally.answered(info, received)
                    request = None
                    yield answer
                if context.cancelled() or self.cutting:  # the requests ended because the call was cut
                    scope.cancelled()
            except (GeneratorExit, StopAsyncIteration, asyncio.CancelledError):
                scope.cancelled()
                raise
            except Exception as exc:
                status = scope.failed(exc, request, received)
                if status is not None:
                    # The stream ends with its status set, not by raising abort's exception out of
                    # this handler: that exception, chained to this one and its frames (the deal,
                    # the session), would outlive the stream.
                    context.set_code(status.code)
                    context.set_details(status.details)
                    context.set_trailing_metadata(status.trailing_metadata)
            finally:
                scope.end()
                request = None

        return handler

    # -- the handler -----------------------------------------------------------------------------

    def unary_handlers(self) -> dict[str, UnaryHandler]:
        """RPC name -> its handler, for each unary RPC: what the gRPC port and the browser port call."""
        return {
            name: self._aio_unary(name, getattr(self.core, attr), request_cls.DESCRIPTOR.name)
            for name, (request_cls, _, attr) in UNARY.items()
        }

    def stream_handler(self) -> StreamHandler:
        """PlayStream's handler, for both ports."""
        return self._aio_stream(STREAM)

    def generic_handler(self) -> grpc.GenericRpcHandler:
        """The service's handlers for the grpc.aio server, each with its messages' (de)serializers."""
        unary = self.unary_handlers()
        handlers: dict[str, grpc.RpcMethodHandler[Request, Response]] = {
            name: grpc.unary_unary_rpc_method_handler(
                unary[name],
                request_deserializer=safe_deserializer(request_cls),
                response_serializer=serializer(response_cls),
            )
            for name, (request_cls, response_cls, _) in UNARY.items()
        }
        handlers[STREAM] = grpc.stream_stream_rpc_method_handler(
            self.stream_handler(),
            request_deserializer=safe_deserializer(BY_NAME[STREAM].request),
            response_serializer=serializer(BY_NAME[STREAM].response),
        )
        return grpc.method_handlers_generic_handler(SERVICE_NAME, dict(handlers))


ServiceCore = Core
"""The core the server hosts (the name the server and the benches build it by): its parts and its
stream sessions are its own (:meth:`Core.session`)."""


__all__ = [
    "AUTH_TOKEN_RULE",
    "HANDLED_BY",
    "SLOW",
    "UNARY",
    "HostedCore",
    "Hosting",
    "ServiceCore",
    "StreamHandler",
    "StreamHandling",
    "UnaryHandler",
    "valid_auth_token",
]
