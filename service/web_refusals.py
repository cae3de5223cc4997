"""The browser port's answers to the requests the Connect runtime refuses itself, in the error model.

connectrpc refuses some requests before a handler of ours runs: a path that names no method (HTTP
404), an HTTP method other than POST (405), a content type or codec it does not speak (415), gRPC
where the HTTP server sends no trailers (a ``RuntimeError``: HTTP/1.1, or a server without ASGI's
trailers extension), a bad ``grpc-timeout``, ``connect-timeout-ms`` or
``connect-protocol-version``; and, as it reads the body, a bad envelope (flags, a truncated frame,
a unary call with no message or two), an unknown compression, a message over the limit, or a frame
whose compressed flag is set while the request names no compression (INTERNAL, as grpc-go and
connect-go answer it; the runtime has no setting for it). Left alone, those answers were bare HTTP
statuses (nothing a gRPC-Web client can read a status from), ``UNKNOWN`` or ``INTERNAL``, and none
was logged or counted.

Here each becomes a status of docs/SERVICE.md's error model (:func:`refusal_of`): a malformed
request in a protocol the port speaks is ``INVALID_ARGUMENT`` (``PROTOCOL_ERROR``), a request the
port does not serve (method, HTTP method, content type, compression, gRPC without trailers) is
``UNIMPLEMENTED``. It is answered in the request's own protocol by the runtime's own error writer
(Connect error JSON with Connect's HTTP status for the code; gRPC and gRPC-Web trailers-only,
``grpc-status`` in the headers), and counted and logged as a call by a
:class:`~bigtwo.service.callscope.CallScope`, with the method ``(unknown)`` for a path that names
none (so a client cannot grow the metrics' label sets):

* what the runtime raises once a call has started (its headers read, its codec known) reaches
  :class:`RuntimeRefusals`, a leading metadata interceptor, whose ``on_end`` replaces the error;
* what it refuses before that goes through :meth:`ErrorModelApplication._handle_error`, the
  runtime's one writer of early errors, which maps it first.

A call the handler took is its own CallScope's to count: :class:`WebCall`, one per request in a
context variable, remembers whether the handler started (:func:`handler_started`).

The runtime has no public hook for its early refusals, so this module, and no other, leans on its
privates: it overrides ``ConnectASGIApplication._handle_request`` and ``_handle_error``, and builds
``_ResponseSender``, ``GRPCServerProtocol``/``GRPCWebServerProtocol`` and reads ``HTTPError``.
``tests/test_web_refusals.py`` fails when a connectrpc release reshapes any of them.
"""

from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from http import HTTPStatus
from typing import Any

import grpc
from bigtwo.codec.rpcs import SERVICE_NAME
from connectrpc._protocol import HTTPError
from connectrpc._protocol_grpc import GRPCServerProtocol, GRPCWebServerProtocol
from connectrpc._server_async import _ResponseSender
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.server import ConnectASGIApplication

from .callscope import STREAM, CallScope, Host
from .errors import ServiceError
from .servicer import UNARY, Hosting
from .telemetry import CONNECT, GRPC, GRPC_WEB, initialise_protocols

UNKNOWN_METHOD = "(unknown)"
"""The ``method`` label and log field of a request whose path names no method of the API."""
METHODS = frozenset((*UNARY, STREAM))
VIA = {GRPC: "grpc", GRPC_WEB: "grpc-web", CONNECT: "connect"}
"""A call's ``via`` log field, by its ``protocol`` label."""
QUOTED_CHARS = 40
"""Longest piece of the request quoted back in a refusal (docs/SERVICE.md: 40 characters)."""
CONTENT_TYPES = (
    "application/json, application/proto (Connect unary), application/connect+json, application/connect+proto "
    "(Connect streams), application/grpc-web+proto, application/grpc-web+json (gRPC: the gRPC port)"
)


def protocol_of(content_type: str) -> str:
    """The ``protocol`` label of a request of this content type: as the runtime chooses, except that
    any ``application/grpc-web…`` (``-text`` included, which the runtime does not speak) is gRPC-Web,
    so its refusal comes in a form a gRPC-Web client reads."""
    if content_type.startswith("application/grpc-web"):
        return GRPC_WEB
    if content_type == "application/grpc" or content_type.startswith("application/grpc+"):
        return GRPC
    return CONNECT


class ProtocolRefusal(ServiceError):
    """A request the Connect runtime refused, with the error model's code for it."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str) -> None:
        super().__init__(message, reason=reason)
        self.code = code


_BY_CONNECT_CODE: dict[Code, tuple[grpc.StatusCode, str]] = {
    Code.INVALID_ARGUMENT: (grpc.StatusCode.INVALID_ARGUMENT, "PROTOCOL_ERROR"),
    # The runtime's one INTERNAL on a request: a frame flagged compressed with no compression named
    # (gRPC: "if the Message-Encoding header is omitted then the Compressed-Flag must be 0").
    Code.INTERNAL: (grpc.StatusCode.INVALID_ARGUMENT, "PROTOCOL_ERROR"),
    Code.UNIMPLEMENTED: (grpc.StatusCode.UNIMPLEMENTED, "NOT_SERVED"),
    Code.RESOURCE_EXHAUSTED: (grpc.StatusCode.RESOURCE_EXHAUSTED, "MESSAGE_TOO_LARGE"),
    Code.DEADLINE_EXCEEDED: (grpc.StatusCode.DEADLINE_EXCEEDED, "DEADLINE_PASSED"),
    Code.UNAVAILABLE: (grpc.StatusCode.UNAVAILABLE, ""),
    Code.PERMISSION_DENIED: (grpc.StatusCode.PERMISSION_DENIED, ""),
    Code.UNAUTHENTICATED: (grpc.StatusCode.UNAUTHENTICATED, ""),
    Code.FAILED_PRECONDITION: (grpc.StatusCode.FAILED_PRECONDITION, ""),
}
"""What a runtime refusal becomes. A code not here (UNKNOWN, say) is left as it is: it reaches
:func:`~bigtwo.service.errors.to_rpc_status` as a bug, ``INTERNAL`` with its traceback in the log."""


def _quoted(text: str) -> str:
    return repr(text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…")


class WebCall:
    """One request to the API's application: what its refusal needs is read from its ASGI scope
    only when it is refused (every call pays for this record, few are refused)."""

    __slots__ = ("answered", "counted", "handled", "scope", "started")

    def __init__(self, scope: Any) -> None:
        self.scope = scope
        self.started = time.perf_counter()
        self.handled = False
        """The handler started: its call scope counts and logs the call."""
        self.counted = False
        """Counted and logged here already (an error may pass two of the runtime's hooks)."""
        self.answered: BaseException | None = None

    @property
    def path(self) -> str:
        return str(self.scope.get("path", ""))

    @property
    def method(self) -> str:
        """The API method the path names, or :data:`UNKNOWN_METHOD`."""
        path = self.path
        name = path.rsplit("/", 1)[-1]
        return name if name in METHODS and path.endswith(f"{SERVICE_NAME}/{name}") else UNKNOWN_METHOD

    @property
    def http_method(self) -> str:
        return str(self.scope.get("method", ""))

    @property
    def http_version(self) -> str:
        return str(self.scope.get("http_version", "1.1"))

    @property
    def trailers(self) -> bool:
        """The HTTP server sends trailers (the ASGI extension gRPC needs)."""
        return "http.response.trailers" in (self.scope.get("extensions") or {})

    @property
    def content_type(self) -> str:
        for key, value in self.scope.get("headers", ()):
            if key == b"content-type":
                return str(value.decode("latin-1"))
        return ""

    @property
    def protocol(self) -> str:
        return protocol_of(self.content_type)

    @property
    def metadata(self) -> list[tuple[str, str]]:
        """The request id and bearer token headers (what a call scope reads)."""
        wanted = (b"authorization", b"x-request-id")
        return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in self.scope.get("headers", ()) if k in wanted]


_CALL: ContextVar[WebCall | None] = ContextVar("bigtwo_web_call", default=None)


def handler_started() -> None:
    """The request being answered reached its handler, whose call scope counts it."""
    call = _CALL.get()
    if call is not None:
        call.handled = True


def refusal_of(error: BaseException, call: WebCall | None = None) -> BaseException:
    """The error model's exception for what the runtime raised or refused (anything else, a bug,
    as it is)."""
    if isinstance(error, ConnectError):
        mapped = _BY_CONNECT_CODE.get(error.code)
        return error if mapped is None else ProtocolRefusal(mapped[0], error.message, mapped[1])
    if call is None:
        return error
    if isinstance(error, HTTPError):
        return _http_refusal(error.status, call)
    if isinstance(error, RuntimeError) and call.protocol == GRPC and not call.trailers:
        if call.http_version.startswith("2"):
            message = "gRPC's status travels in HTTP/2 trailers, which this port's HTTP server does not send"
        else:
            message = "gRPC needs HTTP/2 (its status travels in trailers)"
        message += ": use gRPC-Web or Connect on this port, or gRPC on the gRPC port"
        return ProtocolRefusal(grpc.StatusCode.UNIMPLEMENTED, message, "GRPC_NOT_SERVED")
    return error


def _http_refusal(status: HTTPStatus, call: WebCall) -> ProtocolRefusal:
    unimplemented = grpc.StatusCode.UNIMPLEMENTED
    if status is HTTPStatus.NOT_FOUND:
        message = f"no method {_quoted(call.path)} on this port: the API is /{SERVICE_NAME}/<Method>"
        return ProtocolRefusal(unimplemented, message, "UNKNOWN_METHOD")
    if status is HTTPStatus.METHOD_NOT_ALLOWED:
        message = f"HTTP {_quoted(call.http_method)} is not served: the API takes POST"
        return ProtocolRefusal(unimplemented, message, "HTTP_METHOD_NOT_SERVED")
    if status is HTTPStatus.UNSUPPORTED_MEDIA_TYPE:
        message = f"content-type {_quoted(call.content_type)} is not served here; the port speaks {CONTENT_TYPES}"
        return ProtocolRefusal(unimplemented, message, "CONTENT_TYPE_NOT_SERVED")
    return ProtocolRefusal(unimplemented, f"HTTP {status.value} {status.phrase}", "NOT_SERVED")


class RefusedContext:
    """What a call scope reads of a request the runtime refused."""

    __slots__ = ("_metadata", "protocol", "via")

    def __init__(self, call: WebCall) -> None:
        self._metadata = call.metadata
        self.protocol = call.protocol
        self.via = VIA[call.protocol]

    def invocation_metadata(self) -> list[tuple[str, str]]:
        return self._metadata

    def is_active(self) -> bool:
        return True

    def cancelled(self) -> bool:
        return False

    def time_remaining(self) -> float | None:
        return None


def count_refusal(host: Host, call: WebCall, error: Exception) -> Exception:
    """Count and log ``error`` as ``call``'s end, as any call is (one log line, its metrics); the
    error to answer with."""
    from .web import connect_error  # web.py builds on this module

    call.counted = True
    scope = CallScope(host, call.method, RefusedContext(call))
    scope.started = call.started
    with contextlib.suppress(ServiceError):  # the request id; a bearer refusal changes no protocol answer
        scope.begin()
    if isinstance(error, ConnectError) and error.code is Code.CANCELED:
        scope.cancelled()  # the client went: nothing to answer
        scope.end()
        return error
    status = scope.failed(refusal_of(error, call))
    scope.end()
    if status is None:  # only a call its client cancelled has no status to send
        return error
    return connect_error(scope.code, status.details, status.trailing_metadata)


class RuntimeRefusals:
    """A leading metadata interceptor: it sees every call the runtime started (before its body is
    read) end, and counts, logs and maps an error the handler never saw (``on_end`` raising
    replaces the error the runtime answers with)."""

    def __init__(self, host: Host) -> None:
        self.host = host

    async def on_start(self, ctx: Any) -> WebCall | None:
        return _CALL.get()

    async def on_end(self, call: WebCall | None, ctx: Any, error: Exception | None) -> None:
        if error is None or call is None or call.handled or call.counted:
            return
        raise count_refusal(self.host, call, error)


_GRPC_ANSWER = GRPCServerProtocol()
_GRPC_WEB_ANSWER = GRPCWebServerProtocol()


class ErrorModelApplication(ConnectASGIApplication[Hosting]):
    """The Connect runtime's ASGI application, with every refusal of its own in the error model
    (see the module's docstring)."""

    def __init__(self, *, service: Hosting, **kwargs: Any) -> None:
        super().__init__(service=service, interceptors=[RuntimeRefusals(service)], **kwargs)
        self._host = service
        initialise_protocols(sorted(METHODS), (GRPC_WEB, CONNECT))

    async def _handle_request(self, scope: Any, receive: Any, send: Any, endpoints: Any) -> None:
        call = WebCall(scope)
        token = _CALL.set(call)
        try:
            await super()._handle_request(scope, receive, send, endpoints)
        except RuntimeError as error:
            if call.answered is not error:  # answered as UNIMPLEMENTED below: gRPC over HTTP/1.1
                raise
        finally:
            _CALL.reset(token)

    async def _handle_error(self, exc: Exception, ctx: Any, protocol: Any, send: Any) -> bool:
        call = _CALL.get()
        if call is not None and not call.handled and not call.counted:
            call.answered = exc
            exc = count_refusal(self._host, call, exc)
            if call.protocol == GRPC:
                protocol = _GRPC_ANSWER
            elif call.protocol == GRPC_WEB:
                protocol = _GRPC_WEB_ANSWER
        answered: bool = await super()._handle_error(exc, ctx, protocol, send)
        return answered

    async def refuse(self, scope: Any, send: Any, refusal: ProtocolRefusal) -> None:
        """Answer ``refusal`` to a request the port turns away before the runtime reads it (a
        ``Host`` it does not answer), as the runtime's own early refusals are: counted and logged
        as a call, in the request's protocol (by its content type)."""
        call = WebCall(scope)
        token = _CALL.set(call)
        try:
            await self._handle_error(refusal, None, None, _ResponseSender(send))
        finally:
            _CALL.reset(token)


class TableOrRefusal:
    """The table's files at ``/`` (GET and HEAD); any other request outside the API's path is a call
    of no method: the API application refuses it ``UNIMPLEMENTED`` in its own protocol, where the
    files would have said a bare HTTP 405."""

    def __init__(self, table: Any, api: Any) -> None:
        self.table = table
        self.api = api

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") not in ("GET", "HEAD"):
            await self.api(scope, receive, send)
        else:
            await self.table(scope, receive, send)


__all__ = [
    "UNKNOWN_METHOD",
    "ErrorModelApplication",
    "ProtocolRefusal",
    "RuntimeRefusals",
    "TableOrRefusal",
    "WebCall",
    "count_refusal",
    "handler_started",
    "protocol_of",
    "refusal_of",
]
