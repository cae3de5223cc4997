"""The service's handlers on a real grpc.aio server in this process, called over a real channel.

The in-process tests once drove the sync handlers through ``grpc_testing``; the server has one mode
now (asyncio), which ``grpc_testing`` cannot host. :func:`serve` starts a ``grpc.aio`` server with
:meth:`Hosting.generic_handler` on an event loop in a thread of its own, bound to a port of
127.0.0.1 the system chooses, and answers the calls the tests make in ``grpc_testing``'s shape
(``invoke_unary_unary(...).termination()``), so the assertions stay as they were. Every server is
stopped by :func:`stop_all` (an autouse fixture of each test file that serves).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
from bigtwo.codec.rpcs import SERVICE_NAME
from bigtwo.service.servicer import Hosting
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

Metadata = Sequence[tuple[str, str | bytes]]
_END = object()


class _Loop:
    """One event loop in a daemon thread, shared by every server of the test session."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="aio-harness", daemon=True).start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)


_LOOP: _Loop | None = None
_SERVERS: list[InProcessServer] = []


def _loop() -> _Loop:
    global _LOOP
    if _LOOP is None:
        _LOOP = _Loop()
    return _LOOP


class UnaryCall:
    def __init__(self, response: Any, trailing: Metadata, code: grpc.StatusCode, details: str) -> None:
        self._termination = (response, trailing, code, details)

    def termination(self) -> tuple[Any, Metadata, grpc.StatusCode, str]:
        return self._termination


class StreamCall:
    """A PlayStream call: requests sent one at a time, responses taken one at a time."""

    def __init__(self, call: Any, requests: queue.Queue[object]) -> None:
        self._call = call
        self._requests = requests
        self._responses: Iterator[Any] = iter(call)

    def send_request(self, request: Message) -> None:
        self._requests.put(request)

    def take_response(self) -> Any:
        return next(self._responses)

    def requests_closed(self) -> None:
        self._requests.put(_END)

    def termination(self) -> tuple[Metadata, grpc.StatusCode, str]:
        try:
            for _ in self._responses:
                pass
        except grpc.RpcError:
            pass  # the call's status is read below
        return tuple(self._call.trailing_metadata() or ()), self._call.code(), self._call.details() or ""


class InProcessServer:
    def __init__(self, hosting: Hosting) -> None:
        self.hosting = hosting

        async def start() -> tuple[grpc.aio.Server, int]:
            server = grpc.aio.server()
            server.add_generic_rpc_handlers((hosting.generic_handler(),))
            port = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            return server, port

        self._server, self.port = _loop().run(start())
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")

    def _path(self, method: MethodDescriptor) -> str:
        return f"/{SERVICE_NAME}/{method.name}"

    def invoke_unary_unary(
        self, method: MethodDescriptor, metadata: Metadata, request: Message | bytes, timeout: float | None
    ) -> UnaryCall:
        serialize = (lambda raw: raw) if isinstance(request, bytes) else type(request).SerializeToString
        stub = self.channel.unary_unary(
            self._path(method),
            request_serializer=serialize,
            response_deserializer=method.output_type._concrete_class.FromString,
        )
        try:
            response, call = stub.with_call(request, metadata=tuple(metadata) or None, timeout=timeout)
        except grpc.RpcError as error:
            return UnaryCall(None, tuple(error.trailing_metadata() or ()), error.code(), error.details() or "")
        return UnaryCall(response, tuple(call.trailing_metadata() or ()), call.code(), call.details() or "")

    def invoke_stream_stream(self, method: MethodDescriptor, metadata: Metadata, timeout: float | None) -> StreamCall:
        stub = self.channel.stream_stream(
            self._path(method),
            request_serializer=method.input_type._concrete_class.SerializeToString,
            response_deserializer=method.output_type._concrete_class.FromString,
        )
        requests: queue.Queue[object] = queue.Queue()

        def pending() -> Iterator[Any]:
            while (request := requests.get()) is not _END:
                yield request

        return StreamCall(stub(pending(), metadata=tuple(metadata) or None, timeout=timeout), requests)

    def stop(self) -> None:
        self.channel.close()
        _loop().run(self._server.stop(None))


def serve(hosting: Hosting) -> InProcessServer:
    server = InProcessServer(hosting)
    _SERVERS.append(server)
    return server


def stop_all() -> None:
    while _SERVERS:
        _SERVERS.pop().stop()


__all__ = ["InProcessServer", "StreamCall", "UnaryCall", "serve", "stop_all"]
