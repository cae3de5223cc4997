"""The API for browsers: Connect and gRPC-Web (HTTP/1.1 and HTTP/2, binary and JSON) on a second port,
answered by the very handlers of the gRPC port.

Browsers cannot speak gRPC (they cannot read HTTP/2 trailers), so ``bigtwo serve --web-port PORT``
also serves the API through `connectrpc <https://github.com/connectrpc/connect-py>`_, the Connect
project's own Python server (conformance-tested), as an ASGI application run by Granian
(:mod:`bigtwo.service.web_server`, which also holds the port's bounds). The runtime speaks gRPC too,
but gRPC's status travels in HTTP/2 trailers, which Granian does not hand to ASGI applications, so
on this port gRPC (``application/grpc``) is refused ``UNIMPLEMENTED`` ``GRPC_NOT_SERVED``
(:mod:`bigtwo.service.web_refusals`): gRPC clients use the gRPC port.
Each call goes to :class:`~bigtwo.service.servicer.Hosting`'s aio handler for its method, the same
function the gRPC port calls, through :class:`WebCallContext`, which gives it the headers, the
deadline and the way to end the call with a status. So the bearer token, the request id, the
limits, the metrics, the log line and the error mapping (:func:`~bigtwo.service.errors.to_rpc_status`)
are those of a gRPC call; only the framing differs.
The status's code, message and google.rpc details become a Connect error with the same details.

Beside the API, the port serves the browser table's files (:mod:`bigtwo.service.table`) at ``/``,
and CORS answers only the origins given with ``--web-origin``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import grpc
from bigtwo.codec.rpcs import SERVICE_NAME
from bigtwo.v1 import service_pb2 as api
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import Endpoint
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import status_pb2
from protobuf.wkt import Any as WireAny
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .callscope import STREAM, Metadata, Undecodable, safe_deserializer, serializer
from .callscope import Request as CallRequest
from .errors import Shed, Unimplemented, bad_field, to_rpc_status
from .limits import LIMITS, WEB_LIMITS, WebLimits
from .replay_page import replay_page
from .servicer import UNARY, Hosting, ServiceCore, StreamHandler, UnaryHandler
from .telemetry import CALLS
from .web_refusals import VIA, ErrorModelApplication, TableOrRefusal, handler_started, protocol_of, refusal_of

STATUS_DETAILS_KEY = "grpc-status-details-bin"
CONNECT_CODES: Mapping[grpc.StatusCode, Code] = {
    grpc.StatusCode.CANCELLED: Code.CANCELED,
    **{status: Code[status.name] for status in grpc.StatusCode if status.name in Code.__members__},
}
"""gRPC's codes and Connect's are the same sixteen (Connect spells CANCELED with one L)."""

ALLOWED_HEADERS = (
    "authorization",
    "x-request-id",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-accept-encoding",
    "connect-content-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
)
"""Request headers a browser page may send from an allowed origin: the API's own and the protocols'."""
EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin", "x-request-id")
"""Response headers a page may read: gRPC-Web's status travels in them when an error comes early."""


# -- messages --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SerializedAnswer:
    """An answer the handler serialized once (:mod:`bigtwo.service.wire`): binary sends its bytes
    as they are; JSON parses them with their class."""

    data: bytes
    message_class: type[Message]


Answer = Message | SerializedAnswer
"""What an endpoint answers: a message, or one its handler serialized already."""
Call = RequestContext[CallRequest, Answer | None]
"""A call's context as the Connect runtime hands it to an endpoint."""
WebEndpoint = Endpoint[CallRequest, Answer | None]
"""One method's endpoint: its request may be :class:`~bigtwo.service.callscope.Undecodable`."""


class BinaryCodec:
    """Protobuf binary, encoded as on the gRPC port: deterministically, or passed through when a
    handler answers with bytes already serialized (:mod:`bigtwo.service.wire`); bytes that are no
    message reach the handler as :class:`~bigtwo.service.callscope.Undecodable`."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Answer) -> bytes:
        if isinstance(message, SerializedAnswer):
            return message.data
        return serializer(None)(message)

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> CallRequest:
        return safe_deserializer(message_class)(bytes(data))


class JsonCodec:
    """Protobuf's canonical JSON mapping (bytes fields in base64, so a state token travels as text).
    Keys are sorted, so an answer is the same text on every replica; unknown fields are ignored,
    as the binary format keeps them without reading them."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Answer) -> bytes:
        if isinstance(message, SerializedAnswer):
            message = message.message_class.FromString(message.data)
        return json_format.MessageToJson(message, indent=None, sort_keys=True).encode()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> CallRequest:
        parse = _json_parser(message_class)
        return parse(bytes(data))


def _json_parser(message_class: type[Message]) -> Callable[[bytes], CallRequest]:
    def parse(data: bytes) -> Message:
        message = message_class()
        json_format.Parse(data, message, ignore_unknown_fields=True)
        return message

    def never_raises(data: bytes) -> CallRequest:
        return _decode_or_undecodable(parse, data)

    return never_raises


def _decode_or_undecodable(parse: Callable[[bytes], Message], data: bytes) -> CallRequest:
    try:
        return parse(data)
    except Exception as exc:  # a hostile body of any shape is a refusal, never a crash
        return Undecodable(f"{type(exc).__name__}: {exc}"[:200])


# -- one call --------------------------------------------------------------------------------------


class WebCallContext:
    """What the handlers read of a gRPC call's context, for a Connect or gRPC-Web call.

    Only the methods :class:`~bigtwo.service.callscope.CallScope` and the aio handlers use:
    metadata, deadline, liveness, and the two ways a call ends with a status (``abort`` for a
    unary call, ``set_code``/``set_details``/``set_trailing_metadata`` for a stream)."""

    __slots__ = ("_context", "code", "details", "gone", "protocol", "trailing_metadata", "via")

    def __init__(self, context: Call) -> None:
        handler_started()  # this call's scope counts it, not the runtime's refusals (web_refusals.py)
        self._context = context
        self.protocol = protocol_of(context.request_headers.get("content-type", ""))
        """The protocol the call came by: its metrics' ``protocol`` label (``connect`` or
        ``grpc_web``; gRPC is refused before a handler runs on this port)."""
        self.via = VIA[self.protocol]
        """The same, for its log line (``via``)."""
        self.code = grpc.StatusCode.OK
        self.details = ""
        self.trailing_metadata: Sequence[tuple[str, str | bytes]] = ()
        self.gone = False
        """The client went before its requests ended (a cancelled call, as gRPC has it)."""

    def invocation_metadata(self) -> list[tuple[str, str]]:
        headers = self._context.request_headers
        return [(key, value) for key in ("authorization", "x-request-id") for value in headers.getall(key)]

    def time_remaining(self) -> float | None:
        remaining = self._context.timeout_ms
        return None if remaining is None else max(0.0, remaining / 1000)

    def is_active(self) -> bool:
        return True

    def cancelled(self) -> bool:
        return self.gone

    async def requests_until_gone(self, requests: AsyncIterator[CallRequest]) -> AsyncIterator[CallRequest]:
        """The stream's requests; a client that disconnects ends them as a cancelled gRPC call's
        end (the handler counts the call cancelled, not failed)."""
        try:
            async for request in requests:
                yield request
        except ConnectError as error:
            if error.code is not Code.CANCELED:
                # The runtime's refusal of a message (over --max-message-bytes, a bad envelope, a
                # compressed flag it cannot read) is the error model's, not a bug's INTERNAL.
                raise refusal_of(error) from None
            self.gone = True

    async def abort(self, code: grpc.StatusCode, details: str, trailing_metadata: Metadata = ()) -> None:
        raise connect_error(code, details, trailing_metadata, self._context)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, details: str) -> None:
        self.details = details

    def set_trailing_metadata(self, trailing_metadata: Metadata) -> None:
        self.trailing_metadata = trailing_metadata

    def raise_status(self) -> None:
        """After a stream's last answer: the status it was ended with, if not OK."""
        if self.code is not grpc.StatusCode.OK:
            raise connect_error(self.code, self.details, self.trailing_metadata, self._context)


def connect_error(
    code: grpc.StatusCode,
    details: str,
    trailing_metadata: Metadata | None,
    context: Call | None = None,
) -> ConnectError:
    """A status as :func:`~bigtwo.service.errors.to_rpc_status` made it, as a Connect error: the
    same code, message and google.rpc details (ErrorInfo, BadRequest, RetryInfo); its other
    trailing metadata (gRPC's retry pushback) goes into the call's ``context`` trailers (a Connect
    unary error sends them as ``trailer-`` headers, gRPC-Web and streams as trailers)."""
    wire_details: list[ErrorDetail] = []
    for key, value in trailing_metadata or ():
        if key == STATUS_DETAILS_KEY:
            status = status_pb2.Status.FromString(value)
            wire_details = [ErrorDetail(WireAny(type_url=item.type_url, value=item.value)) for item in status.details]
        elif context is not None and isinstance(value, str):
            context.response_trailers.add(key, value)
    return ConnectError(CONNECT_CODES.get(code, Code.UNKNOWN), details, wire_details)


# -- the endpoints ---------------------------------------------------------------------------------


def _method(
    name: str, request_cls: type[Message], response_cls: type[Message], stream: StreamType
) -> MethodInfo[CallRequest, Answer | None]:
    return MethodInfo(
        name=name,
        service_name=SERVICE_NAME,
        input=request_cls,
        output=response_cls,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=stream,
    )


CALLS_BUSY_RETRY_SECONDS = 0.1
"""The RetryInfo delay of a call refused at the port's cap of calls in flight: calls are short."""


class WebGate:
    """What may start on this port: the drain, as the gRPC port's
    :class:`~bigtwo.service.server.DrainGate` has it (once set, new calls are refused UNAVAILABLE,
    never started, so safe to retry on another replica), and the cap on calls in flight that the
    gRPC port gets from ``maximum_concurrent_rpcs`` (past it, RESOURCE_EXHAUSTED)."""

    def __init__(self, message: str, max_calls: int | None = None) -> None:
        self.draining = False
        self.message = message
        self.max_calls = max_calls
        self.in_flight = 0

    def check(self, method: str, protocol: str, context: Call | None = None) -> None:
        if self.draining:
            CALLS.labels(method, "UNAVAILABLE", protocol).inc()
            raise ConnectError(Code.UNAVAILABLE, self.message)
        if self.max_calls is not None and self.in_flight >= self.max_calls:
            CALLS.labels(method, "RESOURCE_EXHAUSTED", protocol).inc()
            status, code = to_rpc_status(
                Shed(
                    f"this server is answering its limit of {self.max_calls} calls at once; try again "
                    "shortly or on another replica",
                    reason="CALLS_BUSY",
                    retry_after=CALLS_BUSY_RETRY_SECONDS,
                    metadata={"max_calls": str(self.max_calls)},
                )
            )
            raise connect_error(code, status.details, status.trailing_metadata, context)

    @contextlib.contextmanager
    def admitted(self, method: str, protocol: str, context: Call | None = None) -> Iterator[None]:
        """Run one call if :meth:`check` lets it start, counted in flight until it ends."""
        self.check(method, protocol, context)
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1


def endpoints(hosting: Hosting, gate: WebGate) -> dict[str, WebEndpoint]:
    """``/bigtwo.v1.BigTwoService/<Method>`` -> the endpoint calling that method's aio handler."""
    handlers = hosting.unary_handlers()
    table: dict[str, WebEndpoint] = {}
    for name, (request_cls, response_cls, _) in UNARY.items():
        info = _method(name, request_cls, response_cls, StreamType.UNARY)
        table[f"/{SERVICE_NAME}/{name}"] = Endpoint.unary(info, _unary(name, handlers[name], response_cls, gate))
    stream_info = _method(STREAM, api.PlayStreamRequest, api.PlayStreamResponse, StreamType.BIDI_STREAM)
    table[f"/{SERVICE_NAME}/{STREAM}"] = Endpoint.bidi_stream(stream_info, _stream(hosting.stream_handler(), gate))
    return table


def _unary(
    name: str, handler: UnaryHandler, response_cls: type[Message], gate: WebGate
) -> Callable[[CallRequest, Call], Awaitable[Answer | None]]:
    async def call(request: CallRequest, context: Call) -> Answer | None:
        web_context = WebCallContext(context)
        with gate.admitted(name, web_context.protocol, context):
            answer = await handler(request, web_context)
        return SerializedAnswer(answer, response_cls) if isinstance(answer, bytes) else answer

    return call


def _stream(
    handler: StreamHandler, gate: WebGate
) -> Callable[[AsyncIterator[CallRequest], Call], AsyncIterator[Answer]]:
    async def call(requests: AsyncIterator[CallRequest], context: Call) -> AsyncIterator[Answer]:
        web_context = WebCallContext(context)
        with gate.admitted(STREAM, web_context.protocol, context):
            async for answer in handler(web_context.requests_until_gone(requests), web_context):
                yield SerializedAnswer(answer, api.PlayStreamResponse) if isinstance(answer, bytes) else answer
            web_context.raise_status()

    return call


class _ApiApplication(ErrorModelApplication):
    @property
    def path(self) -> str:
        return f"/{SERVICE_NAME}"


# -- the application and its server ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WebConfig:
    """The browser port of one server process."""

    host: str
    port: int
    origins: tuple[str, ...] = ()
    """Origins whose pages may call the API (CORS); the table served on this port needs none."""
    max_message_bytes: int = 1 << 20
    max_calls: int | None = None
    """Calls in flight at once on this port (None: no cap); the gRPC port's
    ``max_concurrent_rpcs``."""
    hosts: tuple[str, ...] = ()
    """``--web-host``: the Host values answered (none given: the loopback names when bound to
    loopback, else any; ``*``: any)."""
    limits: WebLimits = WEB_LIMITS
    """The port's bounds on connections and time (``--web-limit``)."""


def api_application(hosting: Hosting, gate: WebGate, config: WebConfig) -> ErrorModelApplication:
    """The API's ASGI application (the Connect runtime, every refusal in the error model)."""
    return _ApiApplication(
        service=hosting,
        endpoints=lambda host: endpoints(host, gate),
        read_max_bytes=config.max_message_bytes,
        codecs=[BinaryCodec(), JsonCodec()],
    )


def application(
    hosting: Hosting, gate: WebGate, config: WebConfig, api_app: ErrorModelApplication | None = None
) -> Starlette:
    """The ASGI application: the API under ``/bigtwo.v1.BigTwoService/`` (``api_app``, else a new
    one) and the table at ``/``."""
    if api_app is None:
        api_app = api_application(hosting, gate, config)
    table = StaticFiles(directory=str(resources.files("bigtwo.service") / "table"), html=True)
    middleware = []
    if config.origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(config.origins),
                allow_methods=["POST", "GET"],
                allow_headers=list(ALLOWED_HEADERS),
                expose_headers=list(EXPOSED_HEADERS),
                max_age=600,
            )
        )
    routes = [
        Mount(f"/{SERVICE_NAME}", app=api_app),
        Route("/replay", _replay_route(hosting), methods=["GET"]),
        Mount("/", app=TableOrRefusal(table, api_app)),
    ]
    return Starlette(routes=routes, middleware=middleware)


HTTP_STATUS: Mapping[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.PERMISSION_DENIED: 403,
}
"""The replay page's HTTP statuses, by the status :func:`~bigtwo.service.errors.to_rpc_status` maps
its error to (anything else is a 500 carrying only the request id)."""


def _replay_route(hosting: Hosting) -> Callable[[Request], Awaitable[Response]]:
    """``GET /replay?token=…``: the finished deal's HTML replay, from a token of it in URL-safe
    base64 (a seat token will do). The page is built off the event loop: a replay re-runs a deal."""

    async def replay(request: Request) -> Response:
        text = request.query_params.get("token", "")
        try:
            token = _token_of(text)
            core = hosting.core
            if not isinstance(core, ServiceCore):  # a bench's stand-in core keeps no games to replay
                raise Unimplemented("this server replays no deals", reason="NO_REPLAYS")
            page = await asyncio.to_thread(replay_page, core, token)
        except Exception as exc:  # mapped as every call's errors are, then shown as text
            status, code = to_rpc_status(exc)
            return PlainTextResponse(status.details + "\n", status_code=HTTP_STATUS.get(code, 500))
        return HTMLResponse(page, headers={"cache-control": "no-store"})

    return replay


def _token_of(text: str) -> bytes:
    if not text or len(text) > LIMITS.token_bytes * 2:
        raise bad_field("token", "the replay link carries the deal's token (URL-safe base64)")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise bad_field("token", "the token is not URL-safe base64") from None


__all__ = [
    "ALLOWED_HEADERS",
    "CONNECT_CODES",
    "EXPOSED_HEADERS",
    "Answer",
    "BinaryCodec",
    "Call",
    "JsonCodec",
    "SerializedAnswer",
    "WebCallContext",
    "WebConfig",
    "WebEndpoint",
    "WebGate",
    "api_application",
    "application",
    "connect_error",
    "endpoints",
]
