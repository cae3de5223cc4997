"""Judging moves: a move message checked against a loaded game, then validated, or applied and
answered (the per-move path: every stream message and every ApplyMove goes through :meth:`MoveJudge.judge`).

Move indices (docs/SERVICE.md "Retries"): a move carries its index, the number of moves made before
it. ``index == moves_made``: the move is judged and, when accepted, applied. ``index == moves_made
- 1`` and the move equals the last move made: a retry whose answer was lost; the answer is
recomputed from the state before that move (the log's, or the one the token carries) and is
byte-for-byte the first answer; nothing is applied twice. Any other index is FAILED_PRECONDITION
(ErrorInfo ``MOVE_ALREADY_MADE`` or ``WRONG_MOVE_INDEX``, with ``moves_made``).
"""

from __future__ import annotations

from bigtwo.engine import CardsPlayed, Move, Refusal, mask_pretty, seat_ref
from bigtwo.v1 import types_pb2 as pb

from . import convert as cv
from . import wire
from .errors import FailedPrecondition, bad_field
from .game import CallInfo, Game, MoveResult
from .history import move_bytes
from .limits import Limits
from .tokens import LastMove

_PASS_BY_SEAT = tuple(LastMove(seat, 0, True) for seat in range(4))
"""A pass by each seat, as the last move made."""


def _move_text(move: LastMove) -> str:
    """The last move in a person's words (a browser's Try again can meet this sentence)."""
    return f"{seat_ref(move.seat)} " + ("passed" if move.is_pass else f"played {mask_pretty(move.mask)}")


def _unset_index(made: int, path: str, need_index: bool) -> int:
    """The index of a move sent without one: the next move's, where the call allows leaving it out."""
    if need_index:
        raise bad_field(f"{path}.index", f"required: the move's index in the deal (moves made: {made})")
    return made


class MoveJudge:
    """Judges and answers moves; mixed into :class:`bigtwo.service.core.Core`, whose limits it reads."""

    limits: Limits

    def judge(
        self,
        game: Game,
        move: pb.Move,
        path: str,
        info: CallInfo,
        *,
        apply: bool,
        need_index: bool,
        keep_previous: bool = True,
        bot_seat: bool = False,
    ) -> MoveResult:
        """Validate or apply ``move`` on ``game`` (which an accepted apply changes in place).
        ``bot_seat``: the service moves for one of a seat token's bot seats (PlayBots, which checked
        the seat against the token's bot seats), so the token's own seat is not required."""
        deal = game.deal
        made = deal.moves_made
        seat = move.seat
        if seat >= deal.players:
            cv.seat_from(seat, deal.players, f"{path}.seat")  # raises, naming the field
        if game.viewer >= 0 and not bot_seat:
            game.check_seat(seat, f"{path}.seat")
        text = move.text
        if len(text) > self.limits.card_text:
            raise bad_field(f"{path}.text", f"at most {self.limits.card_text} characters")
        index = move.index
        if not index and not move.HasField("index"):  # a zero may be unset: only then ask protobuf
            index = _unset_index(made, path, need_index)
        if index != made:
            return self._other_index(game, move, index, path, info, apply=apply)
        if not apply:
            return self._validate(game, seat, text, index, info)
        before = game.state_before_move() if keep_previous else None
        try:
            events = deal.do_text(seat, text)
        except Refusal as refusal:
            info.moves.append(("refused", refusal.reason.value))
            return MoveResult(wire.refusal_outcome(refusal), False, (), game, index)
        first = events[0]
        if isinstance(first, CardsPlayed):
            game.last_move = LastMove(seat, first.mask, False)
            parts = game.parts
            outcome = parts.outcomes.get(first.mask) or parts.outcome(first.mask, first.kind, first.key)
        else:
            game.last_move = _PASS_BY_SEAT[seat]
            outcome = wire.PASS_OUTCOME
        if game.history_moves == made:  # kept move by move once read (Game.public_history)
            game.history += move_bytes(seat, game.last_move.mask)
            game.history_moves = made + 1
        game.previous = before
        game.packed = None
        info.moves.append(("accepted", ""))
        if deal.winner >= 0:
            info.deals_finished += 1
        return MoveResult(outcome, True, events, game, index)

    def _validate(self, game: Game, seat: int, text: str, index: int, info: CallInfo) -> MoveResult:
        """The judgement of a move checked but not applied (ValidateMove, a stream's validate_only)."""
        try:
            play = game.deal.verify_text(seat, text)
        except Refusal as refusal:
            info.moves.append(("refused", refusal.reason.value))
            return MoveResult(wire.refusal_outcome(refusal), False, (), game, index)
        info.moves.append(("validated", ""))
        if play is None:
            return MoveResult(wire.PASS_OUTCOME, True, (), game, index)
        return MoveResult(game.parts.outcome(play.mask, play.kind, play.key), True, (), game, index)

    def answer(
        self,
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
        writer = game.deal_writer or game.writer()
        return writer.answer(layout, result, deal, view_seat, view=view, state_token=state_token, seat_token=seat_token)

    def _other_index(
        self, game: Game, move: pb.Move, index: int, path: str, info: CallInfo, *, apply: bool
    ) -> MoveResult:
        made = game.deal.moves_made
        meta = {"moves_made": str(made), "index": str(index)}
        if apply and index == made - 1 and game.last_move is not None:
            try:
                resent = Move.parse(move.seat, move.text)
            except Refusal:  # no card, or a card repeated: not the move made
                resent = None
            # Without the state before the move (a stream that sends no tokens keeps none) the
            # caller recognises the resend itself; the reason is MOVE_ALREADY_MADE either way.
            if resent is not None and game.previous is not None and game.last_move.same_as(resent):
                # A retry whose answer was lost: recompute it from the state before that move.
                again = game.retried()
                scratch = CallInfo()
                result = self.judge(again, move, path, scratch, apply=True, need_index=True)
                info.moves.append(("duplicate", ""))
                return result
            raise FailedPrecondition(
                f"{path}.index: move {index} was already made ({_move_text(game.last_move)}); "
                f"the next move's index is {made}",
                reason="MOVE_ALREADY_MADE",
                metadata=meta,
            )
        raise FailedPrecondition(
            f"{path}.index: the game has {made} moves made, so the next move's index is {made}, not {index}",
            reason="WRONG_MOVE_INDEX",
            metadata=meta,
        )


__all__ = ["MoveJudge"]
