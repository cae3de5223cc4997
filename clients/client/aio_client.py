"""The asyncio client: :class:`AsyncBigTwoClient` and its :class:`AsyncPlayStream`, on ``grpc.aio``.

The same methods as :class:`~bigtwo.client.sync_client.BigTwoClient`, made from the same builders
(:mod:`bigtwo.client.calls`), each a coroutine; the same retry policy, its waits on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import grpc
import grpc.aio
from bigtwo.engine import Event, Move
from bigtwo.v1 import service_pb2 as api
from google.protobuf.message import Message

from . import calls
from .calls import PLAY_STREAM, Call, Rpc, as_method
from .client_errors import BigTwoError, BigTwoUnavailable, error_from_rpc, token_refused
from .codec import move_to_pb
from .connect import await_connection_async
from .results import Dealt, GameRef, MoveResult
from .stream_state import StreamState, StreamView
from .transport import (
    NO_RETRY,
    CallDeadline,
    Security,
    Transport,
    aio_channel,
    method_of,
    retrying_async,
    retrying_async_within,
)

P = ParamSpec("P")
T = TypeVar("T")

_BROKEN_CORE = "Internal error from Core"
"""grpc.aio's details for a stream whose connection broke under it (not a bug in the service)."""


class _StreamCall(Protocol):
    """The part of a ``grpc.aio`` bidirectional call the stream uses."""

    async def write(self, request: api.PlayStreamRequest) -> None: ...

    async def read(self) -> object: ...

    def cancel(self) -> bool: ...


@dataclass(slots=True)
class AioEndpoint:
    """One target: its ``grpc.aio`` channel and a callable per RPC of :data:`~bigtwo.client.calls.RPCS`."""

    target: str
    channel: grpc.aio.Channel
    methods: dict[str, Callable[..., Coroutine[Any, Any, Message]]]
    stream: Callable[..., _StreamCall]

    @classmethod
    def open(cls, target: str, security: Security) -> AioEndpoint:
        channel = aio_channel(target, security)
        methods = {rpc.name: method_of(channel.unary_unary, rpc) for rpc in calls.UNARY_RPCS}
        return cls(target, channel, methods, method_of(channel.stream_stream, PLAY_STREAM))


def unary(build: Callable[P, Call[Any, T]]) -> Callable[Concatenate[AsyncBigTwoClient, P], Coroutine[Any, Any, T]]:
    """A coroutine method of :class:`AsyncBigTwoClient` that sends ``build``'s call and converts
    its answer."""

    async def method(self: AsyncBigTwoClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(build(*args, **kwargs))

    return as_method(method, build, "AsyncBigTwoClient")


def _broken(error: BigTwoError) -> bool:
    """A stream is (re)opened again only when it broke (UNAVAILABLE) or its opening was shed (refused
    for load before it started, ``RESOURCE_EXHAUSTED`` with a RetryInfo: nothing of it ran); any
    other error is an answer."""
    return isinstance(error, BigTwoUnavailable) or error.shed


class AsyncBigTwoClient(Transport):
    """The same client on ``grpc.aio``: every method is a coroutine; ``async with`` closes it."""

    _endpoints: list[AioEndpoint]

    def _open(self) -> None:
        self._endpoints = [AioEndpoint.open(target, self.security) for target in self.targets]

    # -- lifecycle -------------------------------------------------------------------------------

    async def close(self) -> None:
        for endpoint in self._endpoints:
            await endpoint.channel.close()

    async def __aenter__(self) -> AsyncBigTwoClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_ready(self, timeout: float = 10.0, *, patient: bool = True) -> None:
        """See :meth:`BigTwoClient.wait_ready`."""
        for endpoint in self._endpoints:
            await await_connection_async(endpoint.channel, endpoint.target, timeout, patient=patient)

    # -- transport -------------------------------------------------------------------------------

    async def _send(self, rpc: Rpc[Any], request: Message, timeout: float | None) -> Message:
        start, deadline = self.ring.next_start(), CallDeadline(self._deadline(timeout))
        return await retrying_async_within(
            self._policy(rpc), self._rng, self._retried, deadline, self._attempt, rpc.name, request, start, deadline
        )

    async def _attempt(self, number: int, name: str, request: Message, start: int, deadline: CallDeadline) -> Message:
        """Attempt ``number`` of a unary call: on the ``number``-th target after ``start``, or the
        first after it that is not down."""
        index = self.ring.pick(start + number)
        endpoint = self._endpoints[index]
        self.calls_made += 1
        try:
            answer: Message = await endpoint.methods[name](request, timeout=deadline.left(), metadata=self._metadata)
        except grpc.aio.AioRpcError as error:
            raise self._noted(index, error_from_rpc(error, endpoint.target)) from None
        self.ring.answered(index)
        return answer

    async def _run(self, call: Call[Any, T]) -> T:
        try:
            response = await self._send(call.rpc, call.request, call.timeout)
        except BigTwoError as error:
            with_log = call.with_log() if token_refused(error) else None
            if with_log is None:
                raise
            response = await self._send(call.rpc, with_log, call.timeout)
        return call.convert(response)

    # -- the unary calls (calls.UNARY_METHODS) ---------------------------------------------------

    list_presets = unary(calls.list_presets)
    bot_levels = unary(calls.bot_levels)
    describe_ruleset = unary(calls.describe_ruleset)
    deal = unary(calls.deal)
    apply_move = unary(calls.apply_move)
    validate_move = unary(calls.validate_move)
    legal_moves = unary(calls.legal_moves)
    next_hint = unary(calls.next_hint)
    timeout_move = unary(calls.timeout_move)
    bot_move = unary(calls.bot_move)
    split_hand = unary(calls.split_hand)
    name_cards = unary(calls.name_cards)
    score_deal = unary(calls.score_deal)
    score_counts = unary(calls.score_counts)
    settle_match = unary(calls.settle_match)
    replay_log = unary(calls.replay_log)

    # -- the stream ------------------------------------------------------------------------------

    async def play_stream(
        self,
        game: GameRef,
        *,
        view_seat: int | None = None,
        resume: bool = True,
        timeout: float | None = None,
    ) -> AsyncPlayStream:
        """Open a PlayStream (``async with``); see :meth:`BigTwoClient.play_stream`."""
        stream = AsyncPlayStream(self, game, view_seat=view_seat, resume=resume, timeout=timeout)
        await stream.open()
        return stream


class AsyncPlayStream(StreamView):
    """One deal over ``PlayStream`` on grpc.aio (reopened from the last token when it breaks)."""

    def __init__(
        self,
        client: AsyncBigTwoClient,
        game: GameRef,
        view_seat: int | None = None,
        *,
        resume: bool = True,
        timeout: float | None = None,
    ) -> None:
        self.client = client
        self.timeout = client.stream_timeout if timeout is None else timeout
        self.reopened = 0
        """Times the stream was reopened after it broke."""
        self._state = StreamState(game, view_seat, resume)
        self._call: _StreamCall | None = None
        self._target = ""

    async def open(self) -> Dealt:
        """Open the stream; a target found UNAVAILABLE is retried on the next one after a backoff
        (the client's retry policy), like :meth:`PlayStream.open`."""
        return await retrying_async(self.client.retry, self.client._rng, _broken, lambda _: self._open_once())

    async def _open_once(self) -> Dealt:
        await self.close()
        index = self.client._next_index()
        endpoint = self.client._endpoints[index]
        self._target = endpoint.target
        self._call = endpoint.stream(timeout=self.timeout, metadata=self.client._metadata)
        try:
            opened = await self._exchange(self._state.open_request())
        except BigTwoError as error:
            raise self.client._noted(index, error) from None
        self.client.ring.answered(index)
        return self._state.on_opened(opened)

    async def _exchange(self, request: api.PlayStreamRequest) -> api.PlayStreamResponse:
        """One request, one response. A broken connection shows up as UNAVAILABLE, as a write to a
        call that already ended (``asyncio.InvalidStateError``), or as INTERNAL "Internal error
        from Core" from grpc.aio: all three are :class:`BigTwoUnavailable`, so :meth:`move` reopens."""
        assert self._call is not None, "the stream is closed"
        try:
            await self._call.write(request)
            response = await self._call.read()
        except asyncio.InvalidStateError as error:
            raise BigTwoUnavailable(
                grpc.StatusCode.UNAVAILABLE, f"the stream ended ({error})", target=self._target
            ) from None
        except grpc.aio.AioRpcError as error:
            if error.code() is grpc.StatusCode.INTERNAL and _BROKEN_CORE in (error.details() or ""):
                raise BigTwoUnavailable(
                    grpc.StatusCode.UNAVAILABLE, f"the stream broke ({error.details()})", target=self._target
                ) from None
            raise error_from_rpc(error, self._target) from None
        if not isinstance(response, api.PlayStreamResponse):  # grpc.aio.EOF
            raise BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, "the stream ended", target=self._target)
        return response

    async def move(self, move: Move | str, *, seat: int | None = None, validate_only: bool = False) -> MoveResult:
        """See :meth:`PlayStream.move`."""
        message = move_to_pb(move, seat, self.game.moves_made)
        request = self._state.move_request(message, validate_only)

        async def attempt(number: int) -> api.PlayStreamResponse:
            if number:
                self.reopened += 1
                await self._open_once()
            return await self._exchange(request)

        policy = self.client.retry if self.resume else NO_RETRY
        response = await retrying_async(policy, self.client._rng, _broken, attempt)
        return self._state.on_moved(response, message, validate_only)

    async def events(self) -> AsyncIterator[Event]:
        """The events the stream opened with."""
        if self.opened is not None:
            for event in self.opened.events:
                yield event

    async def close(self) -> None:
        if self._call is not None:
            self._call.cancel()
            self._call = None

    async def __aenter__(self) -> AsyncPlayStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = ["AioEndpoint", "AsyncBigTwoClient", "AsyncPlayStream", "unary"]
