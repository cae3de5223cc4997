"""The gRPC port's own cap on calls in flight (``--max-concurrent-rpcs``): past it a call is refused
for load, as the browser port refuses past the same cap (:class:`bigtwo.service.web.WebGate`), with
``RESOURCE_EXHAUSTED``, ``ErrorInfo`` ``CALLS_BUSY``, a ``google.rpc.RetryInfo`` and gRPC's retry
pushback (:class:`~bigtwo.service.errors.Shed`), counted in ``bigtwo_shed_total`` and
``bigtwo_rpc_calls_total``. Nothing of a refused call runs: its handler is never entered.

Why not gRPC's own ``maximum_concurrent_rpcs``: grpc.aio's limiter does not refuse, it stops taking
calls from the core, which then holds them, cuts them or refuses them with no detail. Measured with
3,900 streams against a cap of 2,000, clients saw 1,488 ``RESOURCE_EXHAUSTED``, 731 ``INTERNAL``
and 86 ``CANCELLED``, none with a RetryInfo. So that limit stays only as a backstop above this cap
(:func:`backstop`): the health and reflection services, which this cap leaves alone, and calls
being refused here count toward it, and ordinary overload meets this cap first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, TypeAlias, cast

import grpc
import grpc.aio

from .errors import Shed, to_rpc_status
from .telemetry import CALLS, GRPC

# The handlers wrapped here are the service's, whatever their messages: requests and answers pass
# through untouched, so they are typed as objects (grpc's stubs type a handler's behaviour as a
# plain function; grpc.aio's is a coroutine function or an async generator function).
# Aliases for the type checker only: grpc's classes are not subscriptable at run time.
if TYPE_CHECKING:
    Handler: TypeAlias = grpc.RpcMethodHandler[object, object]
    Context: TypeAlias = grpc.aio.ServicerContext[object, object]
    UnaryBehaviour: TypeAlias = Callable[[object, Context], Awaitable[object]]
    StreamBehaviour: TypeAlias = Callable[[AsyncIterator[object], Context], AsyncIterator[object]]

CALLS_BUSY_RETRY_SECONDS = 0.1
"""The RetryInfo delay of a call refused at the cap (the browser port's too): calls are short."""
BACKSTOP_FACTOR = 4
BACKSTOP_MARGIN = 1000
"""gRPC's own limit sits ``BACKSTOP_FACTOR`` caps plus ``BACKSTOP_MARGIN`` calls above the cap. It
must not bind under ordinary overload: a call it refuses gets no RetryInfo, and a stream client
still sending its first request when that refusal comes reads ``INTERNAL``. The calls it counts
beyond the cap are the probes, reflection, and calls being refused here, each held until its first
request is read (:data:`REFUSED_STREAM_READ_SECONDS`), so a burst of refused streams fills it.
Measured with a cap of 200 and 3,900 streams at once: a backstop of 220 let 759 of the 3,700
refused streams read INTERNAL, one of 400 1,679, one of 2,000 351; with a cap of 2,000 and 3,900
streams (the issue's load) this backstop, 11,000, let none through."""
REFUSED_STREAM_READ_SECONDS = 5.0
"""How long a stream refused at the cap waits for its first request before its status is sent:
a client slow to send it (one process opening thousands of streams on a loaded machine) must
still have sent it. Measured with a cap of 2,000 and 3,900 streams from one process on a loaded
two-core machine: 1 s let 1,040 of 1,900 refused streams read INTERNAL, 5 s none."""


def backstop(max_calls: int | None) -> int | None:
    """gRPC's own ``maximum_concurrent_rpcs`` for a port whose cap is ``max_calls`` (None: none)."""
    if not max_calls:
        return None
    return max_calls * (1 + BACKSTOP_FACTOR) + BACKSTOP_MARGIN


def pending_options(max_calls: int | None) -> list[tuple[str, int]]:
    """The core's queue of calls not yet taken by the server, sized to the backstop: its defaults
    (1,000, hard limit 3,000) refuse a burst the server would answer, and those refusals carry no
    RetryInfo either (measured: with the cap and no backstop, 690 of 3,700 refused streams read
    INTERNAL at the defaults, none at this size)."""
    limit = backstop(max_calls)
    if limit is None:
        return []
    return [("grpc.server.max_pending_requests", limit), ("grpc.server.max_pending_requests_hard_limit", limit)]


async def _first_request(requests: AsyncIterator[object]) -> None:
    """Read a refused stream's first request (or wait :data:`REFUSED_STREAM_READ_SECONDS` for it)
    before answering. A grpc client still sending that request when the status comes loses the
    status and reads ``INTERNAL`` "Internal error from Core" (its write fails): measured, 1,163 of
    3,700 refused streams without this read, none with it. A client opens a stream with its first
    request and then waits for the answer, so once that request is in, the status reaches it."""
    with contextlib.suppress(Exception, asyncio.TimeoutError):
        await asyncio.wait_for(anext(aiter(requests), None), REFUSED_STREAM_READ_SECONDS)


def calls_busy(max_calls: int) -> Shed:
    """The refusal of a call past the cap of ``max_calls`` calls in flight."""
    return Shed(
        f"this server is answering its limit of {max_calls} calls at once; try again shortly or on another replica",
        reason="CALLS_BUSY",
        retry_after=CALLS_BUSY_RETRY_SECONDS,
        metadata={"max_calls": str(max_calls)},
    )


class CappedHandlers(grpc.GenericRpcHandler):
    """The service's handlers (``inner``) behind a cap of ``max_calls`` calls in flight in this
    process: a call that finds the cap reached is answered :func:`calls_busy` before its handler
    runs; an admitted one counts until it ends, however it ends (answered, failed, cancelled)."""

    def __init__(self, inner: grpc.GenericRpcHandler, max_calls: int) -> None:
        if max_calls < 1:
            raise ValueError("a cap of calls in flight is 1 or more")
        self.inner = inner
        self.max_calls = max_calls
        self.in_flight = 0
        self._wrapped: dict[str, Handler] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Handler | None:
        method: str = handler_call_details.method
        wrapped = self._wrapped.get(method)
        if wrapped is None:
            found = self.inner.service(handler_call_details)
            if found is None:
                return None  # not the service's: another handler's, or UNIMPLEMENTED
            wrapped = self._wrapped[method] = self._wrap(method.rsplit("/", 1)[-1], found)
        return wrapped

    async def _refuse(self, name: str, context: Context) -> None:
        CALLS.labels(name, grpc.StatusCode.RESOURCE_EXHAUSTED.name, GRPC).inc()
        status, code = to_rpc_status(calls_busy(self.max_calls))  # counts the shed
        await context.abort(code, status.details, status.trailing_metadata)

    def _wrap(self, name: str, found: Handler) -> Handler:
        if found.unary_unary is not None:
            unary = cast("UnaryBehaviour", found.unary_unary)  # grpc.aio's: a coroutine function

            async def unary_call(request: object, context: Context) -> object:
                if self.in_flight >= self.max_calls:
                    await self._refuse(name, context)
                self.in_flight += 1
                try:
                    return await unary(request, context)
                finally:
                    self.in_flight -= 1

            return grpc.unary_unary_rpc_method_handler(
                unary_call,
                request_deserializer=found.request_deserializer,
                response_serializer=found.response_serializer,
            )
        if found.stream_stream is not None:
            stream = cast("StreamBehaviour", found.stream_stream)  # grpc.aio's: an async generator function

            async def stream_call(requests: AsyncIterator[object], context: Context) -> AsyncIterator[object]:
                if self.in_flight >= self.max_calls:
                    await _first_request(requests)
                    await self._refuse(name, context)
                self.in_flight += 1
                try:
                    async for answer in stream(requests, context):
                        yield answer
                finally:
                    self.in_flight -= 1

            return grpc.stream_stream_rpc_method_handler(
                stream_call,
                request_deserializer=found.request_deserializer,
                response_serializer=found.response_serializer,
            )
        raise TypeError(f"{name}: the service has only unary and bidirectional streaming methods")


__all__ = [
    "BACKSTOP_FACTOR",
    "BACKSTOP_MARGIN",
    "CALLS_BUSY_RETRY_SECONDS",
    "REFUSED_STREAM_READ_SECONDS",
    "CappedHandlers",
    "backstop",
    "calls_busy",
    "pending_options",
]
