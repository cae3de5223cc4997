"""The browser port's HTTP server: Granian (Rust: hyper's HTTP/1.1 and HTTP/2) serving the ASGI
application of :mod:`bigtwo.service.web` on the server process's own event loop, and the port's
bounds on connections, time and requests (:class:`~bigtwo.service.limits.WebLimits`).

Granian runs *embedded*: its Rust threads accept connections and parse HTTP, and each call is a task
on the event loop the gRPC port's aio handlers run on, so both ports share the handlers, the
limits, the metrics and the drain of one process (nothing is kept between calls: the service stays
stateless). Granian and Hypercorn were measured side by side under the same attacks and load
before this choice (docs/PERFORMANCE.md "Browser port under attack", docs/SERVICE.md).

What hyper bounds itself: HTTP/2 streams reset before the application took them (rapid reset,
CVE-2023-44487: past 20 pending, the connection is closed with GOAWAY ENHANCE_YOUR_CALM), the
CONTINUATION flood, the header read time and size. What :mod:`bigtwo.service.web_idle` bounds: an
idle connection (hyper has no idle timeout for HTTP/2). What :class:`EdgeGuard` bounds, before the
Connect runtime sees a call: the ``Host`` header (DNS rebinding; a call from a foreign host is
refused in its protocol's error model, a file ``421``), a declared ``Content-Length``
over the message limit (refused before the body is read), the time a unary body may take, and the
longest deadline (a silent stream ends at it)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ipaddress
import logging
import os
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

import grpc
from bigtwo.codec.rpcs import SERVICE_NAME
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from .limits import WEB_LIMITS, WebLimits, quote
from .servicer import Hosting
from .web import WebConfig, WebGate, api_application, application
from .web_idle import ConnectionActivity, IdleReaper, peer_of
from .web_refusals import ProtocolRefusal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
Refuse = Callable[[Scope, Send, ProtocolRefusal], Awaitable[None]]
"""Answers a refusal in the request's protocol, counted and logged as a call
(:meth:`~bigtwo.service.web_refusals.ErrorModelApplication.refuse`)."""

ENVELOPE_BYTES = 5
"""The prefix of an enveloped message (gRPC-Web, Connect streams): a flag byte and a length."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
STREAM_SUFFIX = "/PlayStream"
"""The one streaming method: its requests may come over time (bounded by the call's deadline, not
``body_seconds``), each message checked at its envelope, and its answers go out as they come."""
GRPC_TIMEOUT_UNITS = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}
ACCEPT_ENCODINGS = frozenset((b"accept-encoding", b"connect-accept-encoding", b"grpc-accept-encoding"))
"""The headers by which a client offers to take compressed answers (Connect unary, Connect streams,
gRPC-Web). Dropped from every API call, so the runtime answers uncompressed, as the gRPC port does:
an answer is a few hundred bytes, mostly a state token that is ciphertext and does not compress, and
gzip cost the server 60-90 µs of CPU a call (a gRPC-Web answer's message and its trailers frame each
compressed, in Python) and the client its gunzip (docs/PERFORMANCE.md "Browser protocols"). A
request may still come compressed (``content-encoding``, ``grpc-encoding``): the runtime reads it."""


# -- the Host allowlist ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostAllowlist:
    """The ``Host`` (HTTP/2 ``:authority``) values the port answers: a name with its port, or a bare
    name for any port; None, any host (behind an ingress that checks it)."""

    names: frozenset[str] | None

    @classmethod
    def of(cls, given: tuple[str, ...], bound_host: str, port: int) -> HostAllowlist:
        """``--web-host`` values (``*``: any), else the loopback names with the port when the port
        is bound to loopback, else any host."""
        if given:
            if "*" in given:
                return cls(None)
            return cls(frozenset(name.strip().lower() for name in given if name.strip()))
        if _is_loopback(bound_host):
            return cls(frozenset(f"{name}:{port}" for name in LOOPBACK_NAMES))
        return cls(None)

    def allows(self, host: str) -> bool:
        if self.names is None:
            return True
        host = host.strip().lower()
        if host in self.names:
            return True
        name, _, port = host.rpartition(":")
        return bool(port.isdigit() and name in self.names)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# -- the guard in front of the application ---------------------------------------------------------


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _grpc_timeout_seconds(value: str) -> float | None:
    unit = GRPC_TIMEOUT_UNITS.get(value[-1:])
    digits = value[:-1]
    return int(digits) * unit if unit is not None and digits.isdigit() and len(digits) <= 8 else None


class EdgeGuard:
    """ASGI middleware before everything the port serves: the Host allowlist, then, for an API call,
    the declared body size, the body's time and the deadline's cap. Refusals of API calls are
    ConnectErrors raised where the Connect runtime reads the body, so each is answered in the call's
    own protocol (Connect error JSON, gRPC-Web trailers) by the runtime itself."""

    def __init__(
        self,
        app: App,
        hosts: HostAllowlist,
        limits: WebLimits,
        max_message_bytes: int,
        activity: ConnectionActivity | None = None,
        refuse: Refuse | None = None,
    ) -> None:
        self.app = app
        self.refuse = refuse
        self.hosts = hosts
        self.limits = limits
        self.max_message_bytes = max_message_bytes
        self.api_prefix = f"/{SERVICE_NAME}/"
        self.activity = activity if activity is not None else ConnectionActivity()
        """Each connection's calls in flight, which the idle bound reads (``service/web_idle.py``)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        peer = peer_of(scope.get("client"))
        if peer is None:
            await self._guarded(scope, receive, send)
            return
        self.activity.begin(peer)
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.activity.end(peer)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = _header(scope, b"host") or ""
        if not self.hosts.allows(host):
            await self._refuse_host(scope, send, host)
            return
        if not scope["path"].startswith(self.api_prefix) or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        content_type = _header(scope, b"content-type") or ""
        streaming = scope["path"].endswith(STREAM_SUFFIX)  # whatever protocol it comes by
        _answer_uncompressed(scope)
        self._cap_deadline(scope, content_type)
        refusal = self._size_refusal(scope, streaming)
        if refusal is not None:
            receive = _refusing(refusal)
        elif not streaming:
            receive = _within(receive, self.limits.body_seconds)
        if content_type.startswith("application/grpc-web") and not streaming:
            send = _coalescing(send)
        await self.app(scope, receive, send)

    async def _refuse_host(self, scope: Scope, send: Send, host: str) -> None:
        """A ``Host`` not answered (DNS rebinding): a call (anything but a GET or HEAD of the
        table's files) is refused ``PERMISSION_DENIED`` ``HOST_NOT_ALLOWED`` in its protocol,
        logged and counted; a file, ``421 Misdirected Request`` as plain text."""
        message = f"this server does not answer for host {quote(host)} (see --web-host)"
        is_call = scope["path"].startswith(self.api_prefix) or scope.get("method") not in ("GET", "HEAD")
        if is_call and self.refuse is not None:
            await self.refuse(
                scope, send, ProtocolRefusal(grpc.StatusCode.PERMISSION_DENIED, message, "HOST_NOT_ALLOWED")
            )
        else:
            await _plain(send, 421, message + "\n")

    def _size_refusal(self, scope: Scope, streaming: bool) -> ConnectError | None:
        declared = _header(scope, b"content-length")
        if declared is None or not declared.isdigit() or streaming:
            return None  # a stream's messages are checked one by one, at their envelope
        limit = self.max_message_bytes + ENVELOPE_BYTES
        if int(declared) <= limit:
            return None
        return ConnectError(
            Code.RESOURCE_EXHAUSTED,
            f"the request declares {int(declared)} bytes, over the limit of {self.max_message_bytes} a message; "
            "refused before it was read",
        )

    def _cap_deadline(self, scope: Scope, content_type: str) -> None:
        """Every call gets a deadline of at most ``call_seconds``: one asking for none or a longer
        one is given that one (as the header its protocol reads it from)."""
        cap = self.limits.call_seconds
        if content_type.startswith("application/grpc"):  # gRPC-Web, and gRPC
            name = b"grpc-timeout"
            given = _header(scope, name)
            seconds = _grpc_timeout_seconds(given) if given else None
            capped = f"{int(cap * 1000)}m"
        else:
            name = b"connect-timeout-ms"
            given = _header(scope, name)
            seconds = int(given) / 1000 if given and given.isdigit() and len(given) <= 10 else None
            capped = str(int(cap * 1000))
        if given is not None and seconds is None:
            return  # malformed: the runtime refuses it in the protocol's own words
        if seconds is None or seconds > cap:
            headers = [(key, value) for key, value in scope["headers"] if key != name]
            headers.append((name, capped.encode()))
            scope["headers"] = headers


def _answer_uncompressed(scope: Scope) -> None:
    """Drop the call's offers to take a compressed answer (:data:`ACCEPT_ENCODINGS`)."""
    headers = scope["headers"]
    if any(key in ACCEPT_ENCODINGS for key, _ in headers):
        scope["headers"] = [(key, value) for key, value in headers if key not in ACCEPT_ENCODINGS]


def _coalescing(send: Send) -> Send:
    """``send`` for a unary gRPC-Web call: the runtime writes its answer as a stream (the message,
    then the trailers frame); they leave in one write, one DATA frame on HTTP/2."""
    parts: list[bytes] = []

    async def coalesced(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                parts.append(message.get("body", b""))
                return
            if parts:
                parts.append(message.get("body", b""))
                message = {**message, "body": b"".join(parts)}
                parts.clear()
        await send(message)

    return coalesced


def _refusing(error: ConnectError) -> Receive:
    async def receive() -> Message:
        raise error

    return receive


def _within(receive: Receive, seconds: float) -> Receive:
    """``receive`` for a unary call: the whole body within ``seconds`` of the call's start, else the
    call ends DEADLINE_EXCEEDED (what comes after the body, the disconnect, is not timed)."""
    deadline = asyncio.get_running_loop().time() + seconds
    body_done = False

    async def timed() -> Message:
        nonlocal body_done
        if body_done:
            return await receive()
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise ConnectError(
                Code.DEADLINE_EXCEEDED, f"the request body did not arrive within {seconds:g} s"
            ) from None
        body_done = message["type"] != "http.request" or not message.get("more_body", False)
        return message

    return timed


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# -- the server ------------------------------------------------------------------------------------


def bind_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """The browser port's listening socket, bound before the server announces itself (``--web-port 0``:
    one the system chose); shared by ``--workers`` processes as their gRPC port is (SO_REUSEPORT)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    # Accepted connections inherit it (Linux), as Granian's own listeners set it: without it a
    # gRPC-Web answer (its message, then its trailers, two writes) waited 40 ms on the client's
    # delayed ACK (Nagle), every call.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(LISTEN_BACKLOG)
    sock.setblocking(False)
    return sock


LISTEN_BACKLOG = 1024
"""Connections the kernel holds for the port beyond those served (``WebLimits.connections``)."""


class GranianServer:
    """One Granian worker on the running event loop, serving ``app`` on a duplicate of ``sock``.

    Granian's embedded server (``granian.server.embed``) binds its own socket; this port binds first
    (``--web-port 0``, SO_REUSEPORT across ``--workers``), so the worker is built here the way that
    module builds it, from a socket holder of the port's descriptor. ``granian`` is pinned in
    pyproject.toml for that reason; ``tests/test_web_edge.py`` exercises every setting used."""

    def __init__(self, app: App, sock: socket.socket, limits: WebLimits, activity: ConnectionActivity) -> None:
        self.app = app
        self.sock = sock
        self.limits = limits
        self.reaper = IdleReaper(activity, int(sock.getsockname()[1]), limits.idle_seconds)
        self._signal: Any = None
        self._finished: asyncio.Future[None] | None = None

    def start(self) -> None:
        from granian.http import HTTP1Settings, HTTP2Settings

        # Granian's worker API, typed Any: its stub (_granian.pyi) lags the module it describes.
        native: Any = importlib.import_module("granian._granian")
        futures: Any = importlib.import_module("granian._futures")
        asgi: Any = importlib.import_module("granian.asgi")

        logging.getLogger("_granian").setLevel(logging.WARNING)
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        self._finished = finished

        def resolve() -> None:
            if not finished.done():
                finished.set_result(None)

        def released() -> None:  # from Granian's thread once every connection has ended
            loop.call_soon_threadsafe(resolve)

        self._signal = native.WorkerSignal()
        self._signal.add_cb(released)
        limits = self.limits
        http1 = HTTP1Settings(
            header_read_timeout=int(limits.header_seconds * 1000),
            keep_alive=True,
            max_buffer_size=max(8192, limits.header_bytes),
        )
        http2 = HTTP2Settings(
            keep_alive_interval=int(limits.ping_seconds * 1000),
            keep_alive_timeout=20,
            max_concurrent_streams=limits.streams_per_connection,
            max_headers_size=limits.header_bytes,
        )
        holder = native.SocketHolder(os.dup(self.sock.fileno()), False, LISTEN_BACKLOG)
        no_tls: tuple[Any, ...] = (False, None, None, None, "tls1.3", None, [], False)
        worker = native.ASGIWorker(
            1,
            (None, holder),
            None,
            1,  # Rust I/O threads: the HTTP work is a small share of a call
            512,
            1,
            30,
            limits.connections,  # Granian's backpressure: a permit per accepted connection
            "auto",
            http1,
            http2,
            False,  # no websockets
            None,  # no static files: the application serves the table
            *no_tls,
            (None, None),
        )
        callback = futures._future_watcher_wrapper(
            asgi._callback_wrapper(self.app, {"url_path_prefix": None}, {}, None)
        )
        worker.serve_async(futures._new_cbscheduler(loop, callback, impl_asyncio=True), loop, self._signal)
        self.reaper.start()

    async def stop(self, seconds: float) -> None:
        """Stop accepting, let each connection finish its calls (HTTP/2 GOAWAY), and wait at most
        ``seconds`` for the last to end (the handlers end theirs at the drain's grace)."""
        if self._signal is None or self._finished is None:
            return
        await self.reaper.stop()
        self._signal.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._finished), seconds)


STOP_SECONDS = 5.0
"""After the drain's grace, how long the port waits for its last connections to close."""


class WebPort:
    """The browser port of one server process, beside its gRPC port: bound at once, served on the
    server's event loop (:meth:`start`), drained and stopped with it."""

    def __init__(self, hosting: Hosting, config: WebConfig, *, draining_message: str, reuse_port: bool) -> None:
        self.config = config
        self.limits = config.limits
        self.gate = WebGate(draining_message, config.max_calls)
        self.sock = bind_socket(config.host, config.port, reuse_port=reuse_port)
        self.port = int(self.sock.getsockname()[1])
        self.hosts = HostAllowlist.of(config.hosts, config.host, self.port)
        self.activity = ConnectionActivity()
        api = api_application(hosting, self.gate, config)
        self.app = EdgeGuard(
            application(hosting, self.gate, config, api),
            self.hosts,
            self.limits,
            config.max_message_bytes,
            self.activity,
            refuse=api.refuse,
        )
        self._server: GranianServer | None = None

    async def start(self) -> None:
        self._server = GranianServer(self.app, self.sock, self.limits, self.activity)
        self._server.start()

    def drain(self) -> None:
        """New calls are refused UNAVAILABLE from now on; the table's files are still served."""
        self.gate.draining = True

    async def stop(self, seconds: float = STOP_SECONDS) -> None:
        if self._server is not None:
            await self._server.stop(seconds)
            self._server = None
        self.sock.close()


def web_limits(overrides: tuple[tuple[str, float], ...]) -> WebLimits:
    """:data:`~bigtwo.service.limits.WEB_LIMITS` with ``--web-limit`` overrides (each name a field,
    each value positive; an integer field takes an integer)."""
    if not overrides:
        return WEB_LIMITS
    fields = {name: type(getattr(WEB_LIMITS, name)) for name in WebLimits.__dataclass_fields__}
    values: dict[str, Any] = {}
    for name, value in overrides:
        kind = fields.get(name)
        if kind is None:
            raise ValueError(f"--web-limit: no limit named {name!r}; the limits are {', '.join(fields)}")
        if value <= 0 or (kind is int and value != int(value)):
            raise ValueError(f"--web-limit {name}: {value:g} is not a positive {kind.__name__}")
        values[name] = kind(value)
    return replace(WEB_LIMITS, **values)


__all__ = ["EdgeGuard", "GranianServer", "HostAllowlist", "WebPort", "bind_socket", "web_limits"]
