"""Judging moves: a move message checked against a loaded game, then validated, or applied and
answered (the per-move path: every stream message and every ApplyMove goes through :meth:`MoveJudge.apply` or
:meth:`MoveJudge.validate`, and an applied move through :meth:`Game.play`).

Move indices (docs/SERVICE.md "Retries"): a move carries its index, the number of moves made before
it. ``index == moves_made``: the move is judged and, when accepted, applied. ``index == moves_made
- 1`` and the move equals the last move made: a retry whose answer was lost; the answer is
recomputed from the state before that move (the log's, or the one the token carries) and is
byte-for-byte the first answer; nothing is applied twice. Any other index is FAILED_PRECONDITION
(ErrorInfo ``MOVE_ALREADY_MADE`` or ``WRONG_MOVE_INDEX``, with ``moves_made``).
"""

from __future__ import annotations

from bigtwo.engine import CardsPlayed, Deal, Refusal, mask_pretty, seat_ref
from bigtwo.v1 import types_pb2 as pb

from . import convert as cv
from . import wire
from .errors import FailedPrecondition, bad_field
from .game import CallInfo, Game, MoveResult, Played
from .limits import Limits
from .tokens import LastMove


def _move_text(move: LastMove) -> str:
    """The last move in a person's words (a browser's Try again can meet this sentence)."""
    return f"{seat_ref(move.seat)} " + ("passed" if move.is_pass else f"played {mask_pretty(move.mask)}")


def _unset_index(made: int, path: str, need_index: bool) -> int:
    """The index of a move sent without one: the next move's, where the call allows leaving it out."""
    if need_index:
        raise bad_field(f"{path}.index", f"required: the move's index in the deal (moves made: {made})")
    return made


def _result(played: Played) -> MoveResult:
    """An accepted move's judgement: its outcome, from the game's answer parts."""
    first = played.events[0]
    if isinstance(first, CardsPlayed):
        parts = played.game.parts
        outcome = parts.outcomes.get(first.mask) or parts.outcome(first.mask, first.kind, first.key)
    else:
        outcome = wire.PASS_OUTCOME
    return MoveResult(outcome, True, played.events, played.game, played.move_index)


class MoveJudge:
    """Judges moves against a loaded game (checked against ``limits``), and writes a judged move's
    answer. Holds only the limits: built alone, it judges any :class:`~bigtwo.service.game.Game`."""

    __slots__ = ("limits",)

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def _index(self, game: Game, deal: Deal, move: pb.Move, path: str, need_index: bool, bot_seat: bool) -> int:
        """The move's index, once its seat and text pass the checks every judgement makes.
        ``bot_seat``: the service moves for one of a seat token's bot seats (PlayBots, which checked
        the seat against the token's bot seats), so the token's own seat is not required."""
        seat = move.seat
        if seat >= deal.players:
            cv.seat_from(seat, deal.players, f"{path}.seat")  # raises, naming the field
        if not bot_seat and game.viewer >= 0:
            game.check_seat(seat, f"{path}.seat")
        most = self.limits.card_text
        if len(move.text) > most:
            raise bad_field(f"{path}.text", f"at most {most} characters")
        index = move.index
        if not index and not move.HasField("index"):  # a zero may be unset: only then ask protobuf
            index = _unset_index(deal.moves_made, path, need_index)
        return index

    def apply(
        self,
        game: Game,
        move: pb.Move,
        path: str,
        info: CallInfo,
        *,
        need_index: bool,
        keep_previous: bool = True,
        bot_seat: bool = False,
    ) -> MoveResult:
        """Apply ``move`` to ``game`` with :meth:`Game.play` (an accepted move changes the game in
        place), or answer a resend of its last move with :meth:`Game.resend`."""
        deal = game.deal
        index = self._index(game, deal, move, path, need_index, bot_seat)
        if index != deal.moves_made:
            return self._resent(game, move, index, path, info)
        try:
            played = game.play(move.seat, move.text, keep_previous=keep_previous)
        except Refusal as refusal:
            info.moves.append(("refused", refusal.reason.value))
            return MoveResult(wire.refusal_outcome(refusal), False, (), game, index)
        info.moves.append(("accepted", ""))
        if deal.winner >= 0:
            info.deals_finished += 1
        return _result(played)

    def validate(self, game: Game, move: pb.Move, path: str, info: CallInfo, *, need_index: bool) -> MoveResult:
        """The judgement of a move checked but not applied (ValidateMove, a stream's validate_only)."""
        deal = game.deal
        index = self._index(game, deal, move, path, need_index, False)
        made = deal.moves_made
        if index != made:
            raise _wrong_index(path, index, made)
        try:
            play = deal.verify_text(move.seat, move.text)
        except Refusal as refusal:
            info.moves.append(("refused", refusal.reason.value))
            return MoveResult(wire.refusal_outcome(refusal), False, (), game, index)
        info.moves.append(("validated", ""))
        if play is None:
            return MoveResult(wire.PASS_OUTCOME, True, (), game, index)
        return MoveResult(game.parts.outcome(play.mask, play.kind, play.key), True, (), game, index)

    @staticmethod
    def answer(
        result: MoveResult,
        view_seat: int | None,
        layout: wire.AnswerLayout,
        state_token: bytes = b"",
        seat_token: bytes = b"",
    ) -> bytes:
        """A judged move's answer, serialized for ``layout``: outcome, events, the table after it,
        the seat's view and the tokens given."""
        game = result.game
        deal = game.deal
        view = b"" if view_seat is None else cv.seat_view(deal, view_seat).SerializeToString()
        return game.writer().answer(
            layout, result, deal, view_seat, view=view, state_token=state_token, seat_token=seat_token
        )

    @staticmethod
    def _resent(game: Game, move: pb.Move, index: int, path: str, info: CallInfo) -> MoveResult:
        """A move whose index is not the next move's: the resend of the last move (its answer
        recomputed, nothing applied twice), or FAILED_PRECONDITION."""
        made = game.deal.moves_made
        last = game.last_move
        if index == made - 1 and last is not None:
            # Without the state before the move (a stream that sends no tokens keeps none) the
            # caller recognises the resend itself; the reason is MOVE_ALREADY_MADE either way.
            played = game.resend(move.seat, move.text)
            if played is not None:
                info.moves.append(("duplicate", ""))
                return _result(played)
            raise FailedPrecondition(
                f"{path}.index: move {index} was already made ({_move_text(last)}); the next move's index is {made}",
                reason="MOVE_ALREADY_MADE",
                metadata={"moves_made": str(made), "index": str(index)},
            )
        raise _wrong_index(path, index, made)


def _wrong_index(path: str, index: int, made: int) -> FailedPrecondition:
    return FailedPrecondition(
        f"{path}.index: the game has {made} moves made, so the next move's index is {made}, not {index}",
        reason="WRONG_MOVE_INDEX",
        metadata={"moves_made": str(made), "index": str(index)},
    )


__all__ = ["MoveJudge"]
