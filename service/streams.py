"""PlayStream's two halves that are not the call's bookkeeping: :class:`StreamSession`, the deal a
stream holds and how each message is answered, and :class:`TurnBatch`, how the aio server gathers
the messages of many streams to handle them back to back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from . import convert as cv
from . import wire
from .bounds import MAX_SEATS
from .errors import FailedPrecondition, bad_field
from .game import CallInfo, Game, MoveResult
from .loading import view_seat_of
from .tokens import SEAL_SECRET_BYTES, TableSeal

if TYPE_CHECKING:  # the core makes the sessions (Core.session)
    from .core import Core


class StreamSession:
    """One PlayStream: open a deal, then judge moves against the deal held for the stream's life."""

    __slots__ = ("core", "game", "info", "last_reply", "spending", "to_spend", "tokens", "view_seat")

    def __init__(self, core: Core, info: CallInfo, *, spending: bool = False) -> None:
        self.core = core
        self.info = info
        self.game: Game | None = None
        self.view_seat: int | None = None
        self.tokens = False
        self.last_reply: bytes | None = None
        self.spending = spending
        """The server keeps a spent-token ledger (``--token-ledger``): each move applied on the stream
        spends the tokens of the state it was applied to (:attr:`to_spend`), as ApplyMove would."""
        self.to_spend: tuple[tuple[bytes, ...], pb.Move] | None = None
        """After a move applied with :attr:`spending`: the tokens of the state before it (the game's
        own, and the seat's the stream views) and the move, for the server to record before it
        answers; None otherwise."""

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
                return self._reply(core.judge.validate(game, move, "move.move", info, need_index=True))
            # The state before each move is kept only when tokens are sent (or spent, so that each state's
            # token is the one ApplyMove gives): retries use last_reply.
            before = self._tokens_of(game) if self.spending else ()
            try:
                result = core.judge.apply(
                    game, move, "move.move", info, need_index=True, keep_previous=self.tokens or self.spending
                )
            except FailedPrecondition:
                if self._retried(game, move):
                    info.moves.append(("duplicate", ""))
                    return self.last_reply  # type: ignore[return-value]  # the same answer, nothing applied twice
                raise
            self.game = result.game
            response = self._reply(result)
            if result.accepted:
                self.last_reply = response
                if before and info.moves[-1][0] == "accepted":
                    self.to_spend = (before, move)
            return response
        if which == "open":
            return self._open(request.open)
        raise bad_field("message", "set open or move")

    def _open(self, opening: api.StreamOpen) -> api.PlayStreamResponse | bytes:
        """The answer to the stream's open message: the deal it holds from now on."""
        core, info = self.core, self.info
        if self.game is not None:
            raise bad_field("open", "the stream already holds a deal; open a new stream for another")
        if opening.game.WhichOneof("game") == "log":
            # A new table: its tokens are its own, never another stream's of the same log (issue 33).
            seal = TableSeal(core.games.entropy(SEAL_SECRET_BYTES), bytes(MAX_SEATS))
            game = core.games.load_log(opening.game.log, "open.game.log", info, seal)
        else:
            game = core.games.load(opening.game, "open.game", info)
        self.tokens = opening.state_tokens
        self.view_seat = view_seat_of(opening, game, "open.view_seat")
        if game.deal.moves_made == 0 and opening.game.WhichOneof("game") == "log":
            info.deals_started += 1
            if game.deal.over:
                info.deals_finished += 1
        self.game = game
        view_seat = self.view_seat
        return wire.opened_response(
            game.code_for(view_seat),
            game.writer().table(game.deal),
            [wire.event_bytes(event, game.parts, view_seat) for event in game.events_so_far()],
            b"" if view_seat is None else cv.seat_view(game.deal, view_seat).SerializeToString(),
            token := core.tokens.token(game),
            token if game.viewer >= 0 else core.tokens.seat_token(game, view_seat),
        )

    def _tokens_of(self, game: Game) -> tuple[bytes, ...]:
        """The tokens a holder of this stream's game can have for its state now: the game's own, and
        with a view the seat's (as ApplyMove would answer them)."""
        tokens = self.core.tokens
        own = tokens.token(game)
        if game.viewer >= 0 or self.view_seat is None:
            return (own,)
        return own, tokens.seat_token(game, self.view_seat)

    def _reply(self, result: MoveResult) -> bytes:
        """A judged move's answer on the stream, with tokens when the stream asked for them (the
        seat-bound one too when it views a seat)."""
        judge = self.core.judge
        if not self.tokens:
            return judge.answer(result, self.view_seat, wire.STREAM, b"")
        tokens, game = self.core.tokens, result.game
        token = tokens.token(game)
        seat_token = token if game.viewer >= 0 else tokens.seat_token(game, self.view_seat)
        return judge.answer(result, self.view_seat, wire.STREAM, token, seat_token)

    def _retried(self, game: Game, move: pb.Move) -> bool:
        """Whether ``move`` resends the move last applied, whose answer was lost in transit (a
        stream that sends no tokens keeps no state before it, so :meth:`Game.resend` cannot answer
        it: the stream answers it with the answer it sent)."""
        return (
            self.last_reply is not None
            and move.HasField("index")
            and move.index == game.deal.moves_made - 1
            and game.repeats_last(move.seat, move.text)
        )


BATCH_TURNS = 6
"""Turns of the event loop that stream messages are gathered for before they are handled."""


_Result = TypeVar("_Result")


class TurnBatch:
    """Stream messages that arrive within :data:`BATCH_TURNS` turns of the event loop, handled
    together, back to back.

    Handled back to back, the moves of many games find the engine's code and the rule tables still
    in the CPU caches, where interleaved with the transport's work each would find them evicted.
    Gathering for several turns rather than one gathers more streams' messages at no cost to a
    single game: a turn with nothing to do is a poll that returns at once. The figures behind
    :data:`BATCH_TURNS` are in docs/PERFORMANCE.md (docs/SERVICE.md, "Speed").
    """

    def __init__(self) -> None:
        self.pending: list[tuple[Callable[..., object], tuple[object, ...], asyncio.Future[object]]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    def call(self, fn: Callable[..., _Result], *args: object) -> asyncio.Future[_Result]:
        """``fn(*args)``'s result, or what it raised, once the batch has run. (The arguments are not
        checked against ``fn``: the servicer hands over a stream's request as the message type it
        decoded, which it does not narrow to ``PlayStreamRequest``.)"""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Result] = loop.create_future()
        if self.loop is not loop:  # no turn scheduled on this loop yet
            self.loop = loop
            self.pending = []
            loop.call_soon(self._wait, BATCH_TURNS - 1)
        # Queued as a future of objects: the result set into it is fn's own, so it holds a _Result.
        # (A cast, not a closure per call: a stream move's hot path.)
        self.pending.append((fn, args, cast("asyncio.Future[object]", future)))
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


__all__ = ["BATCH_TURNS", "StreamSession", "TurnBatch"]
