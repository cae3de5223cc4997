"""A PlayStream's state between messages, whichever client carries it (:mod:`.sync_client`'s
``PlayStream``, :mod:`.aio_client`'s ``AsyncPlayStream``): the game so far, whose token reopens a
broken stream, and the deal as it was opened. The requests it writes and the answers it reads are
the unary calls' own (:func:`~bigtwo.client.calls.dealt_from`, :func:`~bigtwo.client.calls.moved`),
so a move answers the same by stream or by call.

The stream is not sent again after ``UNAVAILABLE`` as a unary call is (it holds a deal): it
resumes from its last token instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .calls import dealt_from, moved
from .codec import game_to_pb, outcome_from_pb, table_from_pb
from .results import Dealt, GameRef, MoveResult


@dataclass(slots=True)
class StreamState:
    """What a PlayStream knows between messages, whichever transport carries it: the game so far
    (whose token reopens a broken stream) and the deal as it was opened."""

    game: GameRef
    view_seat: int | None
    resume: bool
    opened: Dealt | None = None

    def open_request(self) -> api.PlayStreamRequest:
        opening = api.StreamOpen(game=game_to_pb(self.game), state_tokens=self.resume)
        if self.view_seat is not None:
            opening.view_seat = self.view_seat
        return api.PlayStreamRequest(open=opening)

    def on_opened(self, response: api.PlayStreamResponse) -> Dealt:
        opened = response.opened
        self.game = replace(self.game, token=opened.state_token or self.game.token)
        self.opened = dealt_from(opened, self.game)
        return self.opened

    def move_request(self, message: pb.Move, validate_only: bool) -> api.PlayStreamRequest:
        return api.PlayStreamRequest(move=api.StreamMove(move=message, validate_only=validate_only))

    def on_moved(self, response: api.PlayStreamResponse, message: pb.Move, validate_only: bool) -> MoveResult:
        reply = response.move_result
        if validate_only:
            outcome = outcome_from_pb(reply.outcome)
            return MoveResult(message.index, outcome, (), self.game, table_from_pb(reply.table), None)
        result = moved(reply, self.game, message.index, message.text)
        self.game = result.game
        return result


class StreamView:
    """What both PlayStream classes show of their :class:`StreamState`, written once."""

    _state: StreamState

    @property
    def game(self) -> GameRef:
        """The game after the last move answered (its token reopens the stream)."""
        return self._state.game

    @property
    def opened(self) -> Dealt | None:
        """The deal as the stream first showed it."""
        return self._state.opened

    @property
    def view_seat(self) -> int | None:
        return self._state.view_seat

    @property
    def resume(self) -> bool:
        return self._state.resume


__all__ = ["StreamState", "StreamView"]
