"""Two mends to Hypercorn 0.18's HTTP/2 stream handling, both found by ``make fuzz`` on the browser
port and each replayed by a test in ``tests/test_web_port.py``: late request data on a stream
already answered, and a call answered before its request ended. Drop them once Hypercorn ships
its fixes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any


class ReadsOnAfterAnswer:
    """Keeps reading a call's request once its answer is complete, until the stream closes.

    Hypercorn hands each request message to a queue of the call (10 deep) and, when the answer's
    end closes the stream, puts ``http.disconnect`` in that same queue from inside the call's last
    send. A stream the service ended early while the client was still sending has that queue
    full, so the last send waited on it forever: the call, its connection's objects and about
    50 kB stayed behind for every such stream. Reading on (and dropping what comes) leaves room
    for the disconnect."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._readers: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Any, receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_over = False

        async def receiving() -> Any:
            nonlocal request_over
            message = await receive()
            request_over = message["type"] == "http.disconnect" or not message.get("more_body", False)
            return message

        async def sending(message: Any) -> None:
            nonlocal request_over
            if not request_over and message["type"] == "http.response.body" and not message.get("more_body"):
                # Answered before the request ended (a call refused early): read the rest.
                request_over = True
                reader = asyncio.get_running_loop().create_task(self._read_until_closed(receive))
                self._readers.add(reader)
                reader.add_done_callback(self._readers.discard)
            await send(message)

        await self.app(scope, receiving, sending)

    @staticmethod
    async def _read_until_closed(receive: Callable[[], Any]) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LATE_READ_SECONDS):
                while (await receive())["type"] != "http.disconnect":
                    pass


LATE_READ_SECONDS = 60.0
"""At most this long a finished call's request is read on (a stream that stays open longer is
Hypercorn's to time out: its read timeout)."""


class _EndedStream:
    """What an HTTP/2 stream the application has already answered takes its late request data to:
    nothing, the answer is sent."""

    async def handle(self, event: object) -> None:
        return None


class _StreamsAnswered(dict[int, Any]):
    """Hypercorn's table of a connection's HTTP/2 streams, with late request data for a stream it
    has already closed ignored.

    Hypercorn 0.18 drops a stream from its table once the application has answered it, and a DATA
    frame the client was still sending on that stream then raises KeyError in the connection's
    reader: the connection stops serving every other stream on it without closing. A stream the
    service ends early (a refused stream message) triggers it, so one refused stream would hang a
    browser's every later call on that connection. Upstream: pgjones/hypercorn#329 (open PRs #312
    and #334, the same guard)."""

    def __missing__(self, stream_id: int) -> _EndedStream:
        return _EndedStream()


def ignore_data_for_answered_streams() -> None:
    """Install :class:`_StreamsAnswered` as every new HTTP/2 connection's stream table (once)."""
    from hypercorn.protocol.h2 import H2Protocol

    if getattr(H2Protocol, "_bigtwo_answered_streams", False):
        return
    original = H2Protocol.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.streams = _StreamsAnswered(self.streams)

    H2Protocol.__init__ = init  # type: ignore[method-assign]
    H2Protocol._bigtwo_answered_streams = True  # type: ignore[attr-defined]


__all__ = ["LATE_READ_SECONDS", "ReadsOnAfterAnswer", "ignore_data_for_answered_streams"]
