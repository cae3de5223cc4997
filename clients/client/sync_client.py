"""The sync client: :class:`BigTwoClient` and its :class:`PlayStream`.

Its unary methods are made from the builders of :mod:`bigtwo.client.calls` by :func:`unary`; this
module only carries their calls (one channel per target, round-robin, retried on the next target
after a backoff) and the stream's messages.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import grpc
from bigtwo.engine import Event, Move
from bigtwo.v1 import service_pb2 as api
from google.protobuf.message import Message

from . import calls
from .calls import PLAY_STREAM, Call, Rpc, as_method
from .client_errors import BigTwoError, BigTwoUnavailable, error_from_rpc, token_refused
from .codec import move_to_pb
from .connect import await_connection
from .results import Dealt, GameRef, MoveResult
from .stream_state import StreamState, StreamView
from .transport import (
    NO_RETRY,
    CallDeadline,
    Security,
    Transport,
    method_of,
    retrying,
    retrying_within,
    sync_channel,
)

P = ParamSpec("P")
T = TypeVar("T")


class _Responses(Protocol):
    """The answer side of a sync bidirectional call."""

    def __next__(self) -> api.PlayStreamResponse: ...

    def cancel(self) -> bool: ...


@dataclass(slots=True)
class Endpoint:
    """One target: its channel and a callable per RPC of :data:`~bigtwo.client.calls.RPCS`."""

    target: str
    channel: grpc.Channel
    methods: dict[str, Callable[..., Message]]
    stream: Callable[..., _Responses]

    @classmethod
    def open(cls, target: str, security: Security) -> Endpoint:
        channel = sync_channel(target, security)
        methods = {rpc.name: method_of(channel.unary_unary, rpc) for rpc in calls.UNARY_RPCS}
        return cls(target, channel, methods, method_of(channel.stream_stream, PLAY_STREAM))


def unary(build: Callable[P, Call[Any, T]]) -> Callable[Concatenate[BigTwoClient, P], T]:
    """A method of :class:`BigTwoClient` that sends ``build``'s call and converts its answer."""

    def method(self: BigTwoClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(build(*args, **kwargs))

    return as_method(method, build, "BigTwoClient")


def _broken(error: BigTwoError) -> bool:
    """A stream is (re)opened again only when it broke (UNAVAILABLE) or its opening was shed (refused
    for load before it started, ``RESOURCE_EXHAUSTED`` with a RetryInfo: nothing of it ran); any
    other error is an answer."""
    return isinstance(error, BigTwoUnavailable) or error.shed


class BigTwoClient(Transport):
    """The sync client. One channel per target; calls rotate over the targets (round-robin), and a
    call that finds a target UNAVAILABLE is retried, after a backoff, on the next one."""

    _endpoints: list[Endpoint]

    def _open(self) -> None:
        self._endpoints = [Endpoint.open(target, self.security) for target in self.targets]

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        for endpoint in self._endpoints:
            endpoint.channel.close()

    def __enter__(self) -> BigTwoClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self, timeout: float = 10.0, *, patient: bool = True) -> None:
        """Block until every target accepts connections, at most ``timeout`` seconds each; raises
        :class:`BigTwoUnavailable` saying why one does not (:func:`await_connection`). Not
        ``patient``: give up at a target's first failed attempt instead of waiting for it to start."""
        for endpoint in self._endpoints:
            await_connection(endpoint.channel, endpoint.target, timeout, patient=patient)

    # -- transport -------------------------------------------------------------------------------

    def _send(self, rpc: Rpc[Any], request: Message, timeout: float | None) -> Message:
        start, deadline = self.ring.next_start(), CallDeadline(self._deadline(timeout))
        policy, retried = self._policy(rpc), self._retried
        return retrying_within(policy, self._rng, retried, deadline, self._attempt, rpc.name, request, start, deadline)

    def _attempt(self, number: int, name: str, request: Message, start: int, deadline: CallDeadline) -> Message:
        """Attempt ``number`` of a unary call: on the ``number``-th target after ``start``, or the
        first after it that is not down."""
        index = self.ring.pick(start + number)
        endpoint = self._endpoints[index]
        self.calls_made += 1
        try:
            answer: Message = endpoint.methods[name](request, timeout=deadline.left(), metadata=self._metadata)
        except grpc.RpcError as error:
            raise self._noted(index, error_from_rpc(error, endpoint.target)) from None
        self.ring.answered(index)
        return answer

    def _run(self, call: Call[Any, T]) -> T:
        try:
            response = self._send(call.rpc, call.request, call.timeout)
        except BigTwoError as error:
            with_log = call.with_log() if token_refused(error) else None
            if with_log is None:
                raise
            response = self._send(call.rpc, with_log, call.timeout)
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

    def play_stream(
        self,
        game: GameRef,
        *,
        view_seat: int | None = None,
        resume: bool = True,
        timeout: float | None = None,
    ) -> PlayStream:
        """Open a PlayStream on ``game`` (use as a context manager). With ``resume`` (default) the
        stream asks for a state token with every result, and a stream broken by UNAVAILABLE is
        reopened from the last token on the next target, the pending move sent again."""
        stream = PlayStream(self, game, view_seat=view_seat, resume=resume, timeout=timeout)
        stream.open()
        return stream


class _Feed:
    """The request side of a sync bidirectional stream: a blocking queue as an iterator."""

    def __init__(self) -> None:
        self._queue: queue.Queue[api.PlayStreamRequest | None] = queue.Queue()

    def put(self, item: api.PlayStreamRequest) -> None:
        self._queue.put(item)

    def close(self) -> None:
        self._queue.put(None)

    def __iter__(self) -> Iterator[api.PlayStreamRequest]:
        while (item := self._queue.get()) is not None:
            yield item


class PlayStream(StreamView):
    """One deal over ``PlayStream``: :meth:`move` sends a move and waits for its result."""

    def __init__(
        self, client: BigTwoClient, game: GameRef, *, view_seat: int | None, resume: bool, timeout: float | None
    ) -> None:
        self.client = client
        self.timeout = client.stream_timeout if timeout is None else timeout
        self.reopened = 0
        """Times the stream was reopened after it broke."""
        self._state = StreamState(game, view_seat, resume)
        self._feed: _Feed | None = None
        self._responses: _Responses | None = None
        self._target = ""

    def open(self) -> Dealt:
        """Open the stream; a target found UNAVAILABLE is retried on the next one after a backoff
        (the client's retry policy)."""
        return retrying(self.client.retry, self.client._rng, _broken, lambda _: self._open_once())

    def _open_once(self) -> Dealt:
        self._close_call()
        index = self.client._next_index()
        endpoint = self.client._endpoints[index]
        self._target = endpoint.target
        self._feed = _Feed()
        self._feed.put(self._state.open_request())
        self._responses = endpoint.stream(iter(self._feed), timeout=self.timeout, metadata=self.client._metadata)
        try:
            opened = self._next()
        except BigTwoError as error:
            raise self.client._noted(index, error) from None
        self.client.ring.answered(index)
        return self._state.on_opened(opened)

    def _next(self) -> api.PlayStreamResponse:
        assert self._responses is not None, "the stream is closed"
        try:
            return next(self._responses)
        except grpc.RpcError as error:
            raise error_from_rpc(error, self._target) from None
        except StopIteration:
            raise BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, "the stream ended", target=self._target) from None

    def move(self, move: Move | str, *, seat: int | None = None, validate_only: bool = False) -> MoveResult:
        """Send ``move`` (its index is ``game.moves_made``) and wait for its result. When the stream
        breaks, the move may or may not have been applied on the dead stream: with ``resume`` it is
        reopened from the last token (the game before this move) and the move sent again, so
        nothing is lost and nothing applied twice. ``validate_only``: judge it, apply nothing."""
        message = move_to_pb(move, seat, self.game.moves_made)
        request = self._state.move_request(message, validate_only)

        def attempt(number: int) -> api.PlayStreamResponse:
            if number:
                self.reopened += 1
                self._open_once()
            assert self._feed is not None, "the stream is closed"
            self._feed.put(request)
            return self._next()

        policy = self.client.retry if self.resume else NO_RETRY
        return self._state.on_moved(retrying(policy, self.client._rng, _broken, attempt), message, validate_only)

    def events(self) -> Iterator[Event]:
        """The events the stream opened with."""
        if self.opened is not None:
            yield from self.opened.events

    def _close_call(self) -> None:
        if self._feed is not None:
            self._feed.close()
        if self._responses is not None:
            self._responses.cancel()
        self._feed = self._responses = None

    def close(self) -> None:
        self._close_call()

    def __enter__(self) -> PlayStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["BigTwoClient", "Endpoint", "PlayStream", "unary"]
