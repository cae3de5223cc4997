"""The service's handlers as plain functions: request message in, response message out.

No gRPC here: :mod:`bigtwo.service.servicer` hosts these on a sync or an aio server, maps errors
(one place, :func:`bigtwo.service.errors.to_rpc_status`), logs and counts. Each handler converts
the request, calls the engine, converts back.

Move indices (docs/SERVICE.md "Retries"): a move carries its index, the number of moves made before
it. ``index == moves_made``: the move is judged and, when accepted, applied. ``index == moves_made
- 1`` and the move equals the last move made: a retry whose answer was lost; the answer is
recomputed from the state before that move (the log's, or the one the token carries) and is
byte-for-byte the first answer; nothing is applied twice. Any other index is FAILED_PRECONDITION
(ErrorInfo ``MOVE_ALREADY_MADE`` or ``WRONG_MOVE_INDEX``, with ``moves_made``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bigtwo.engine import (
    PRESET_NAMES,
    PRESET_SUMMARIES,
    PRESETS,
    CardsPlayed,
    Deal,
    DealCode,
    DealContext,
    DealRecord,
    DealStarted,
    DealState,
    DealtCards,
    Event,
    Match,
    Move,
    Passed,
    Play,
    Refusal,
    Ruleset,
    check_beats,
    classify_mask,
    deal_from_code,
    explicit_deal,
    fewest_plays,
    hint_cycle,
    next_hint,
    observe,
    parse_mask,
    play_name,
    settle,
    tables_for,
    timeout_move,
)
from bigtwo.engine.bots import LEVELS, Budget, bot_for
from bigtwo.engine.generate import CARD_MASK, all_plays, plays_of_size
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from . import convert as cv
from . import wire
from .deal_ids import DealIds
from .errors import FailedPrecondition, PermissionDenied, ResourceExhausted, at_field, bad_field
from .limits import LIMITS, Limits, quote
from .tokens import (
    DealIdentity,
    History,
    LastMove,
    PackedState,
    Snapshot,
    TokenCodec,
    explicit_identity,
    identity_of,
    move_bytes,
    opening,
    without_last,
)


@dataclass(slots=True)
class Game:
    """A game loaded from a log or a token: the live deal and what a new token needs."""

    ruleset: Ruleset
    deal: Deal
    identity: DealIdentity
    face_up_card: int = -1
    face_up_seat: int = -1
    previous: DealState | PackedState | Deal | None = None
    """The deal before the last move (for retries): a state from a token, or a cheap clone."""
    last_move: LastMove | None = None
    packed: PackedState | None = None
    """The deal's current state as the token it came from held it; None once a move changed it."""
    history: bytes = b""
    """The deal's public history, packed (``tokens.History``), up to ``history_moves`` moves:
    :meth:`judge` adds each move it applies, one concatenation, so a token's game never reads its
    events back; empty until first asked for in a deal that holds every event since its start (a
    log's), which reads it from them once (:meth:`public_history`)."""
    loaded: DealState | None = None
    """A token's state when it was loaded: what ``loaded_history`` leads to."""
    loaded_history: bytes = b""
    """A token's history when it was loaded: the events before the deal's own (``deal.events``)."""
    history_moves: int = field(init=False, default=-1)
    """How many moves ``history`` holds (-1: none read yet)."""
    parts: wire.RulesetParts = field(init=False)
    """The ruleset's serialized answer parts, looked up once per game (every move uses them)."""
    deal_writer: wire.DealWriter | None = field(init=False, default=None)
    """Writes the deal's answers; made by the first answer (a stream's moves share it)."""
    public_id: str = field(init=False, default="")
    """The deal's opaque name in answers and logs (:mod:`bigtwo.service.deal_ids`)."""
    viewer: int = field(init=False, default=-1)
    """The seat a seat-bound token is bound to (-1: the table host's game, any seat): calls with it
    act and ask only for that seat, and every token they return is bound to it too."""

    def __post_init__(self) -> None:
        self.parts = wire.parts_for(self.ruleset)

    @property
    def deal_code(self) -> str:
        """The deal code ("" for explicit hands): only for the table host, or once the deal is over."""
        return "" if self.identity.explicit else self.identity.text

    def writer(self) -> wire.DealWriter:
        writer = self.deal_writer
        if writer is None:
            writer = self.deal_writer = wire.DealWriter(self.deal, self.public_id, self.parts, deal_code=self.deal_code)
        return writer

    def table(self) -> pb.TableState:
        """The public table now, as a message (answers other than a move's)."""
        return wire.table_to_pb(self.deal, self.public_id, deal_code=self.deal_code)

    def state_before_move(self) -> PackedState | Deal:
        """What ``previous`` becomes when a move is applied: the token's bytes as they came, or
        else a clone of the deal."""
        return self.packed if self.packed is not None else self.deal.clone()

    def snapshot(self, viewer: int | None = None) -> Snapshot:
        """What a token of this game holds; bound to ``viewer`` when given, else as the game is."""
        previous = self.previous.state() if isinstance(self.previous, Deal) else self.previous
        return Snapshot(
            self.ruleset,
            self.identity,
            self.face_up_card,
            self.face_up_seat,
            self.deal.state(),
            previous,
            self.last_move,
            self.viewer if viewer is None else viewer,
            None,
            self.history if self.history_moves == self.deal.moves_made else self.public_history(),
        )

    def public_history(self) -> bytes:
        """The deal's public history now (what its token carries), packed. Kept move by move by
        :meth:`judge`; read from the events only for a deal that holds them all (a log's), once."""
        if self.history_moves != self.deal.moves_made:
            events = self.deal.events
            started = events[0]
            assert isinstance(started, DealStarted)  # a token's game is kept move by move
            parts = [opening(started.leader, started.opening_card)]
            for event in events:
                if isinstance(event, CardsPlayed):
                    parts.append(move_bytes(event.seat, event.mask))
                elif isinstance(event, Passed) and not event.automatic:
                    parts.append(move_bytes(event.seat, 0))
            self.history, self.history_moves = b"".join(parts), self.deal.moves_made
        return self.history

    def events_so_far(self) -> tuple[Event, ...]:
        """Every event of the deal so far, as a deal replayed from its log holds them: a deal
        resumed from a token rebuilds those before it was loaded from the token's history."""
        events = self.deal.events
        if events and isinstance(events[0], DealStarted):
            return events
        assert self.loaded is not None  # a token's game
        history = History.unpack(self.loaded_history)
        return rebuild_events(self.ruleset, self.loaded, history, self.face_up_card, self.face_up_seat) + events

    def check_seat(self, seat: int, path: str) -> None:
        """PERMISSION_DENIED when the game came from a token bound to another seat than ``seat``."""
        if self.viewer >= 0 and seat != self.viewer:
            raise PermissionDenied(
                f"{path}: this state token is bound to seat {self.viewer}; it acts and asks for that seat only",
                reason="TOKEN_BOUND_TO_SEAT",
                metadata={"seat": str(self.viewer)},
            )

    def retried(self) -> Game:
        """The game as it was before its last move (to answer a resend of that move again)."""
        assert self.last_move is not None
        before = self.before_last_move()
        history = without_last(self.public_history(), self.last_move.mask)
        again = Game(
            self.ruleset,
            before,
            self.identity,
            self.face_up_card,
            self.face_up_seat,
            history=history,
            loaded=before.state(),
            loaded_history=history,
        )
        again.history_moves = before.moves_made
        again.public_id, again.viewer = self.public_id, self.viewer
        return again

    def before_last_move(self) -> Deal:
        assert self.previous is not None
        if isinstance(self.previous, Deal):
            return self.previous.clone()
        state = self.previous.unpack() if isinstance(self.previous, PackedState) else self.previous
        deal = Deal.from_state(self.ruleset, state)
        deal.face_up_card, deal.face_up_seat = self.face_up_card, self.face_up_seat
        return deal


@dataclass(slots=True)
class CallInfo:
    """What a handler tells the call wrapper for the log line and the metrics."""

    deal_id: str = ""
    preset: str = ""
    moves: list[tuple[str, str]] = field(default_factory=list)
    """(result, reason) per move judged: accepted / refused / duplicate / validated."""
    deals_started: int = 0
    deals_finished: int = 0
    bot_level: str = ""
    """The bot level that chose a move (BotMove, TimeoutMove with bot_level)."""


class MoveResult(NamedTuple):
    """A judged move (a named tuple: one is made for every move judged)."""

    outcome: bytes
    """The ``MoveOutcome``, serialized (see :mod:`bigtwo.service.wire`)."""
    accepted: bool
    events: tuple[Event, ...]
    game: Game
    move_index: int


_PASS_BY_SEAT = tuple(LastMove(seat, 0, True) for seat in range(4))
"""A pass by each seat, as the last move made."""


def _move_text(move: LastMove) -> str:
    return f"seat {move.seat}: " + ("pass" if move.is_pass else cv.cards_text(move.mask))


def bot_level_from(text: str, path: str) -> str:
    """A bot level name (case and spaces ignored); INVALID_ARGUMENT listing the valid ones."""
    level = text.strip().lower()
    if level not in LEVELS:
        raise bad_field(path, f"unknown bot level {quote(text)}; valid levels: {', '.join(LEVELS)}")
    return level


def bot_choice(deal: Deal, level: str, seed: int, budget: Budget | None = None) -> Move:
    """The bot's move for the seat to act, decided from that seat's observation only."""
    return bot_for(level, budget).choose(observe(deal, deal.to_act), deal.ruleset, random.Random(seed))


def table_play(text: str, path: str, tables: Any) -> Play:
    """A play to beat given as card text (an input, not a move): INVALID_ARGUMENT when it is none."""
    try:
        return classify_mask(cv.mask_from(text, path), tables)
    except Refusal as refusal:
        raise bad_field(path, f"the table is no play: {refusal.message}") from None


class Core:
    """Every RPC's logic. Thread-safe: it holds only the token codec."""

    def __init__(
        self,
        codec: TokenCodec,
        entropy: Callable[[int], bytes] = secrets.token_bytes,
        limits: Limits = LIMITS,
    ) -> None:
        self.codec = codec
        self.entropy = entropy
        self.limits = limits
        self.deal_ids = DealIds(codec.keys.signing_key)

    def _named(self, game: Game, info: CallInfo) -> Game:
        game.public_id = info.deal_id = self.deal_ids.of(game.identity)
        info.preset = game.ruleset.preset
        return game

    # -- loading games -------------------------------------------------------------------------

    def start(
        self,
        ruleset: Ruleset,
        source: str,
        code_text: str,
        hands: list[str],
        context_msg: pb.DealContext,
        path: str,
        info: CallInfo,
    ) -> Game:
        """A new deal from a code (``source == "deal_code"``), explicit hands, or fresh (None)."""
        base = path
        path = f"{path}." if path else ""
        limits = self.limits
        if source == "explicit_deal":
            if len(hands) > 4:
                raise bad_field(f"{path}explicit_deal.hands", "at most 4 hands")
            for seat, text in enumerate(hands):
                if len(text) > limits.card_text:
                    raise bad_field(f"{path}explicit_deal.hands[{seat}]", f"at most {limits.card_text} characters")
            with at_field(f"{path}explicit_deal.hands"):
                dealt = explicit_deal(list(hands), ruleset)
            identity = explicit_identity(dealt.hands)
        else:
            if source == "deal_code":
                if len(code_text) > limits.deal_code_text:
                    raise bad_field(f"{path}deal_code", "a deal code is 13 symbols")
                with at_field(f"{path}deal_code"):
                    deal_code = DealCode.parse(code_text)
            else:
                deal_code = DealCode.from_entropy(self.entropy(16))
            dealt = deal_from_code(deal_code, ruleset)
            identity = identity_of(False, deal_code.seed)
        context = cv.context_from(context_msg, ruleset.players, f"{path}context")
        with at_field(base or "context"):
            deal = Deal.start(ruleset, dealt, context)
        return self._named(Game(ruleset, deal, identity, dealt.face_up_card, dealt.face_up_seat), info)

    def load_log(self, log: pb.GameLog, path: str, info: CallInfo) -> Game:
        ruleset = cv.ruleset_from(log.ruleset, f"{path}.ruleset")
        source = log.WhichOneof("deal")
        if source is None:
            raise bad_field(f"{path}.deal_code", "a log needs its cards: set deal_code or explicit_deal")
        self._check_moves(log.moves, f"{path}.moves")
        game = self.start(ruleset, source, log.deal_code, list(log.explicit_deal.hands), log.context, path, info)
        deal = game.deal
        last = len(log.moves) - 1
        for index, text in enumerate(log.moves):
            where = f"{path}.moves[{index}]"
            try:
                move = Move.parse(deal.to_act, text)
                if index == last:
                    game.previous, game.last_move = deal.state(), LastMove.of(move)
                deal.do(move)
            except Refusal as refusal:
                raise bad_field(
                    where,
                    f"move {index} ({quote(text)}) is refused ({refusal.reason.value}): {refusal.message}",
                    reason="LOG_MOVE_REFUSED",
                ) from None
        return game

    def _check_moves(self, moves: Any, path: str) -> None:
        """A log's moves against the limits, before any is replayed."""
        limits = self.limits
        if len(moves) > limits.log_moves:
            raise ResourceExhausted(
                f"{path}: {len(moves)} moves; at most {limits.log_moves}",
                reason="LOG_TOO_LONG",
                metadata={"max_moves": str(limits.log_moves)},
            )
        for index, text in enumerate(moves):
            if len(text) > limits.card_text:
                raise bad_field(f"{path}[{index}]", f"at most {limits.card_text} characters")

    def load(self, message: pb.Game, path: str, info: CallInfo) -> Game:
        which = message.WhichOneof("game")
        if which == "state_token":
            snap = self.codec.decode(message.state_token, f"{path}.state_token")
            deal = Deal.from_state(snap.ruleset, snap.state)
            deal.face_up_card, deal.face_up_seat = snap.face_up_card, snap.face_up_seat
            game = Game(
                snap.ruleset,
                deal,
                snap.identity,
                snap.face_up_card,
                snap.face_up_seat,
                snap.previous,
                snap.last_move,
                snap.packed,
                snap.history,
                snap.state,
                snap.history,
            )
            game.history_moves = snap.state.moves_made
            game.viewer = snap.viewer
            return self._named(game, info)
        if which == "log":
            return self.load_log(message.log, f"{path}.log", info)
        raise bad_field(path, "set log or state_token")

    def token(self, game: Game) -> bytes:
        return self.codec.encode(game.snapshot())

    def seat_token(self, game: Game, view_seat: int | None) -> bytes:
        """The token bound to ``view_seat`` an answer with a view carries (none without one); for a
        game already bound to that seat it is the game's own token, ``state_token``."""
        if view_seat is None:
            return b""
        return self.codec.encode(game.snapshot(view_seat))

    def view_seat_of(self, request: Any, game: Game, path: str = "view_seat") -> int | None:
        """The seat whose view an answer carries (``request.view_seat``, named ``path`` in errors):
        a seat-bound game allows only its own seat, and takes it as the default."""
        view_seat = None
        if request.HasField("view_seat"):
            view_seat = cv.seat_from(request.view_seat, game.ruleset.players, path)
        if game.viewer >= 0:
            if view_seat is not None:
                game.check_seat(view_seat, path)
            return game.viewer
        return view_seat

    # -- moves ---------------------------------------------------------------------------------

    def _view(self, game: Game, view_seat: int | None) -> pb.SeatView | None:
        return None if view_seat is None else cv.seat_view(game.deal, view_seat)

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
    ) -> MoveResult:
        """Validate or apply ``move`` on ``game`` (which an accepted apply changes in place)."""
        deal = game.deal
        made = deal.moves_made
        seat = move.seat
        if seat >= deal.players:
            cv.seat_from(seat, deal.players, f"{path}.seat")  # raises, naming the field
        if game.viewer >= 0:
            game.check_seat(seat, f"{path}.seat")
        text = move.text
        if len(text) > self.limits.card_text:
            raise bad_field(f"{path}.text", f"at most {self.limits.card_text} characters")
        index = move.index
        if not index and not move.HasField("index"):  # a zero may be unset: only then ask protobuf
            if need_index:
                raise bad_field(f"{path}.index", f"required: the move's index in the deal (moves made: {made})")
            index = made
        if index != made:
            return self._other_index(game, move, index, path, info, apply=apply)
        if not apply:
            try:
                play = deal.verify_text(seat, text)
            except Refusal as refusal:
                info.moves.append(("refused", refusal.reason.value))
                return MoveResult(wire.refusal_outcome(refusal), False, (), game, index)
            info.moves.append(("validated", ""))
            if play is None:
                return MoveResult(wire.PASS_OUTCOME, True, (), game, index)
            return MoveResult(game.parts.outcome(play.mask, play.kind, play.key), True, (), game, index)
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

    # -- RPCs ----------------------------------------------------------------------------------

    def list_presets(self, request: api.ListPresetsRequest, info: CallInfo) -> api.ListPresetsResponse:
        out = api.ListPresetsResponse()
        for name in PRESET_NAMES:
            rules = PRESETS[name]
            out.presets.append(
                pb.Preset(
                    name=name,
                    summary=PRESET_SUMMARIES.get(name, ""),
                    ruleset=cv.ruleset_to_pb(rules),
                    fingerprint=rules.fingerprint,
                    description=list(rules.describe()),
                )
            )
        return out

    def describe_ruleset(self, request: api.DescribeRulesetRequest, info: CallInfo) -> api.DescribeRulesetResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        info.preset = rules.preset
        return api.DescribeRulesetResponse(
            ruleset=cv.ruleset_to_pb(rules),
            overrides={key: cv.option_text(value) for key, value in rules.overrides().items()},
            fingerprint=rules.fingerprint,
            description=list(rules.describe()),
        )

    def deal(self, request: api.DealRequest, info: CallInfo) -> api.DealResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        view_seat = self._view_seat(request, rules)
        source = request.WhichOneof("source")
        game = self.start(
            rules, source or "", request.deal_code, list(request.explicit_deal.hands), request.context, "", info
        )
        info.deals_started += 1
        if game.deal.over:
            info.deals_finished += 1
        out = api.DealResponse(
            deal_code=self.code_for(game, view_seat),
            state_token=self.token(game),
            table=game.table(),
            events=cv.events_to_pb(game.deal.events, rules, view_seat),
            seat_token=self.seat_token(game, view_seat),
        )
        if view_seat is not None:
            out.view.CopyFrom(cv.seat_view(game.deal, view_seat))
        return out

    @staticmethod
    def code_for(game: Game, view_seat: int | None) -> str:
        """The deal code an answer carries: the table host's (no view_seat) always, a seat's only
        once the deal is over. docs/SECURITY.md."""
        return game.deal_code if view_seat is None or game.deal.over else ""

    @staticmethod
    def _view_seat(request: object, rules: Ruleset, name: str = "view_seat") -> int | None:
        if not request.HasField(name):  # type: ignore[attr-defined]
            return None
        return cv.seat_from(getattr(request, name), rules.players, name)

    def _require(self, request: object, name: str) -> None:
        if not request.HasField(name):  # type: ignore[attr-defined]
            raise bad_field(name, "required")

    def validate_move(self, request: api.ValidateMoveRequest, info: CallInfo) -> api.ValidateMoveResponse:
        self._require(request, "move")
        game = self.load(request.game, "game", info)
        result = self.judge(game, request.move, "move", info, apply=False, need_index=False)
        return api.ValidateMoveResponse(outcome=pb.MoveOutcome.FromString(result.outcome))

    def apply_move(self, request: api.ApplyMoveRequest, info: CallInfo) -> api.ApplyMoveResponse:
        return api.ApplyMoveResponse.FromString(self.apply_move_answer(request, info))

    def apply_move_answer(self, request: api.ApplyMoveRequest, info: CallInfo) -> bytes:
        """ApplyMove's answer, serialized: what the server sends (see :mod:`bigtwo.service.wire`)."""
        self._require(request, "move")
        game = self.load(request.game, "game", info)
        view_seat = self.view_seat_of(request, game)
        result = self.judge(game, request.move, "move", info, apply=True, need_index=True)
        token = self.token(result.game)
        seat_token = token if result.game.viewer >= 0 else self.seat_token(result.game, view_seat)
        return self.answer(result, view_seat, wire.APPLY, token, seat_token)

    def legal_moves(self, request: api.LegalMovesRequest, info: CallInfo) -> api.LegalMovesResponse:
        which = request.WhichOneof("source")
        if which == "game":
            game = self.load(request.game, "game", info)
            deal = game.deal
            game.check_seat(deal.to_act, "game")
            plays = deal.legal_plays()
            return api.LegalMovesResponse(
                seat=deal.to_act,
                plays=[cv.play_to_pb(play, game.ruleset) for play in plays],
                can_pass=not deal.over and deal.table is not None,
            )
        if which == "position":
            position = request.position
            rules = cv.ruleset_from(position.ruleset, "position.ruleset")
            tables = tables_for(rules)
            hand = self._hand(position.hand, "position.hand")
            if position.table.strip():
                table = table_play(position.table, "position.table", tables)
                encoded = plays_of_size(hand, table.size, tables, table.key)
                encoded.sort()
            else:
                encoded = all_plays(hand, tables)
            plays = [classify_mask(e & CARD_MASK, tables) for e in encoded]
            return api.LegalMovesResponse(plays=[cv.play_to_pb(play, rules) for play in plays])
        raise bad_field("source", "set game or position")

    def _hand(self, text: str, path: str) -> int:
        """A hand given as input: its cards, at most as many as any seat is dealt."""
        hand = cv.mask_from(text, path)
        most = self.limits.hand_cards
        if hand.bit_count() > most:
            raise bad_field(path, f"{hand.bit_count()} cards; a hand has at most {most}")
        return hand

    def next_hint(self, request: api.NextHintRequest, info: CallInfo) -> api.NextHintResponse:
        game = self.load(request.game, "game", info)
        game.check_seat(game.deal.to_act, "game")
        after = cv.mask_from(request.after, "after") if request.after.strip() else 0
        cycle = hint_cycle(game.deal)
        out = api.NextHintResponse(cycle_length=len(cycle))
        play = next_hint(game.deal, after)
        if play is not None:
            out.play.CopyFrom(cv.play_to_pb(play, game.ruleset))
        return out

    def timeout_move(self, request: api.TimeoutMoveRequest, info: CallInfo) -> api.TimeoutMoveResponse:
        game = self.load(request.game, "game", info)
        if game.deal.over:
            raise FailedPrecondition("the deal is over: no turn can time out", reason="DEAL_OVER")
        game.check_seat(game.deal.to_act, "game")
        if request.bot_level:
            # TW: the computer plays the timed-out turn; seed 0, so a game always times out the same way.
            info.bot_level = bot_level_from(request.bot_level, "bot_level")
            move = bot_choice(game.deal, info.bot_level, 0)
        else:
            move = timeout_move(game.deal)
        return api.TimeoutMoveResponse(move=pb.Move(index=game.deal.moves_made, seat=move.seat, text=str(move)))

    def bot_move(self, request: api.BotMoveRequest, info: CallInfo) -> api.BotMoveResponse:
        level = bot_level_from(request.level, "level")
        limits = self.limits
        if request.simulations > limits.bot_simulations:
            raise bad_field("simulations", f"at most {limits.bot_simulations}")
        if request.max_ms > limits.bot_ms:
            raise bad_field("max_ms", f"at most {limits.bot_ms}")
        game = self.load(request.game, "game", info)
        deal = game.deal
        if deal.over:
            raise FailedPrecondition("the deal is over: no seat is to act", reason="DEAL_OVER")
        game.check_seat(deal.to_act, "game")
        budget = None
        if level == "pro" and (request.simulations or request.max_ms):
            budget = Budget()
            if request.simulations:
                budget = dataclasses.replace(budget, simulations=request.simulations)
            if request.max_ms:
                budget = dataclasses.replace(budget, max_ms=float(request.max_ms))
        move = bot_choice(deal, level, request.seed, budget)
        info.bot_level = level
        name = "" if move.is_pass else play_name(classify_mask(move.mask, deal.tables), deal.tables)
        return api.BotMoveResponse(
            move=pb.Move(index=deal.moves_made, seat=move.seat, text=str(move)), name=name, level=level
        )

    def split_hand(self, request: api.SplitHandRequest, info: CallInfo) -> api.SplitHandResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        hand = self._hand(request.hand, "hand")
        return api.SplitHandResponse(plays=[cv.play_to_pb(play, rules) for play in fewest_plays(hand, rules)])

    def name_cards(self, request: api.NameCardsRequest, info: CallInfo) -> api.NameCardsResponse:
        """The readout line. A selection that does not parse (bad-card) or repeats a card
        (not-in-hand) is an answer like any refusal: in a game, in RULES.md's order for the seat
        (``verify_text``); with a ruleset, then wrong-size, the play's own reason, does-not-beat."""
        text = request.cards
        if len(text) > self.limits.card_text:
            raise bad_field("cards", f"at most {self.limits.card_text} characters")
        which = request.WhichOneof("context")
        out = api.NameCardsResponse()
        if which == "game":
            game = self.load(request.game, "game", info)
            deal = game.deal
            seat = cv.seat_from(request.seat, deal.players, "seat")
            game.check_seat(seat, "seat")
            tables = deal.tables
            out.ending_now = cv.seat_view(deal, seat).ending_now

            def judge() -> object:
                return deal.verify_text(seat, text)

        elif which == "ruleset":
            tables = tables_for(cv.ruleset_from(request.ruleset, "ruleset"))
            table = table_play(request.table, "table", tables) if request.table.strip() else None

            def judge() -> object:
                return check_beats(parse_mask(text), table, tables)

        else:
            raise bad_field("context", "set ruleset or game")
        with contextlib.suppress(Refusal):
            own = classify_mask(parse_mask(text), tables)
            out.name = play_name(own, tables)
            out.kind = cv.KIND_TO_PB[own.kind]
        try:
            judge()
        except Refusal as refusal:
            out.refusal.CopyFrom(cv.refusal_to_pb(refusal))
        else:
            out.playable = True
        return out

    def score_deal(self, request: api.ScoreDealRequest, info: CallInfo) -> api.ScoreDealResponse:
        which = request.WhichOneof("source")
        if which == "counts":
            counts = request.counts
            rules = cv.ruleset_from(counts.ruleset, "counts.ruleset")
            cards_left = list(counts.cards_left)
            if len(cards_left) != rules.players:
                raise bad_field("counts.cards_left", f"one entry per seat: {rules.players} seats")
            if any(n > 18 for n in cards_left):
                raise bad_field("counts.cards_left", "a seat holds at most 18 cards")
            twos = list(counts.twos_left) or [0] * len(cards_left)
            if len(twos) != len(cards_left) or any(t > 4 or t > n for t, n in zip(twos, cards_left, strict=False)):
                raise bad_field("counts.twos_left", "one entry per seat, each at most 4 and at most its cards left")
            with at_field("counts.cards_left"):
                settlement = settle(rules, cards_left, twos)
        elif which == "game":
            game = self.load(request.game, "game", info)
            if not game.deal.over:
                raise FailedPrecondition("the deal is not over: nothing to score yet", reason="DEAL_NOT_OVER")
            ended = game.deal.settlement()
            assert ended is not None  # the deal is over
            settlement = ended
        else:
            raise bad_field("source", "set counts or game")
        return api.ScoreDealResponse(
            winner=settlement.winner,
            seats=[
                pb.SeatScore(
                    seat=line.seat,
                    cards_left=line.cards_left,
                    twos_left=line.twos_left,
                    rate=line.rate,
                    multiplier=line.multiplier,
                    penalty=line.penalty,
                    score=line.score,
                )
                for line in settlement.seats
            ],
            scores=settlement.scores,
        )

    def settle_match(self, request: api.SettleMatchRequest, info: CallInfo) -> api.SettleMatchResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        limits = self.limits
        if len(request.deals) > limits.match_deals:
            raise ResourceExhausted(
                f"deals: {len(request.deals)} deals; at most {limits.match_deals}",
                reason="MATCH_TOO_LONG",
                metadata={"max_deals": str(limits.match_deals)},
            )
        match = Match(rules)
        for seat in request.empty_seats:
            match = match.leave(cv.seat_from(seat, rules.players, "empty_seats"))
        for index, result in enumerate(request.deals):
            path = f"deals[{index}]"
            winner = cv.seat_from(result.winner, rules.players, f"{path}.winner")
            if len(result.scores) != rules.players:
                raise bad_field(f"{path}.scores", f"one score per seat: {rules.players} seats")
            for seat, score in enumerate(result.scores):
                if abs(score) > limits.score:
                    raise bad_field(
                        f"{path}.scores[{seat}]", f"{score} is not a deal's score (at most {limits.score} either way)"
                    )
            if match.over:
                raise bad_field(path, "the match was already over before this deal")
            with at_field(path):
                match = match.record(
                    DealRecord(
                        result.deal_number or index + 1,
                        winner,
                        tuple(result.scores),
                        tuple(result.cards_left),
                        result.deal_code,
                        result.by_dragon,
                    )
                )
        if request.stopped:
            match = match.stop()
        return api.SettleMatchResponse(
            totals=match.totals,
            deals_won=match.deals_won,
            over=match.over,
            winners=match.winners,
            next_context=cv.context_to_pb(match.next_context()),
        )

    def replay_log(self, request: api.ReplayLogRequest, info: CallInfo) -> api.ReplayLogResponse:
        log = request.log
        rules = cv.ruleset_from(log.ruleset, "log.ruleset")
        view_seat = self._view_seat(request, rules)
        self._check_moves(log.moves, "log.moves")
        source = log.WhichOneof("deal")
        if source is None:
            raise bad_field("log.deal_code", "a log needs its cards: set deal_code or explicit_deal")
        game = self.start(rules, source, log.deal_code, list(log.explicit_deal.hands), log.context, "log", info)
        out = api.ReplayLogResponse()
        deal = game.deal
        for index, text in enumerate(log.moves):
            before = deal.state()
            try:
                events = deal.do_text(deal.to_act, text)
            except Refusal as refusal:
                out.refused, out.refused_at = True, index
                out.refusal.CopyFrom(cv.refusal_to_pb(refusal))
                break
            first = events[0]
            game.previous = before
            if isinstance(first, CardsPlayed):
                game.last_move = LastMove(first.seat, first.mask, False)
            else:
                assert isinstance(first, Passed), first  # a move's first event is its play or its pass
                game.last_move = LastMove(first.seat, 0, True)
        out.moves_applied = deal.moves_made
        out.events.extend(cv.events_to_pb(deal.events, rules, view_seat))
        out.table.CopyFrom(game.table())
        out.state_token = self.token(game)
        return out

    def audit_log(self, request: api.AuditLogRequest, info: CallInfo) -> api.AuditLogResponse:
        """Audit a replay file (or one deal's log) with ``bigtwo.engine.replay``: the replay format
        and its checker live there, as pure modules; imported on first use. The signature is checked
        with the service's keys (the signing key and every verification key)."""
        from bigtwo.engine import replay

        # Every verification key counts, so files signed before a key rotation still verify.
        keys = (self.codec.keys.signing_key, *self.codec.keys.verifying.values())
        which = request.WhichOneof("source")
        if which == "replay_toml":
            try:
                log = replay.loads(request.replay_toml, self.limits.replay)
            except replay.ReplayFormatError as error:
                verdict = replay.audit.format_error_verdict(error)  # its FORMAT_ERROR verdict, without parsing again
                return cv.audit_to_pb(verdict, None, None)
        elif which == "game_log":
            log = self._replay_of(request.game_log, "game_log", info)
        else:
            raise bad_field("source", "set replay_toml or game_log")
        view_seat = self._view_seat(request, log.ruleset)
        actions = sum(len(record.actions) for record in log.deals)
        limits = self.limits
        if len(log.deals) > limits.match_deals or actions > limits.audit_actions:
            raise ResourceExhausted(
                f"{len(log.deals)} deals, {actions} actions: at most {limits.match_deals} deals and "
                f"{limits.audit_actions} actions in one audit",
                reason="AUDIT_TOO_LARGE",
                metadata={"max_actions": str(limits.audit_actions), "max_deals": str(limits.match_deals)},
            )
        if request.want_steps and actions + len(log.deals) > limits.audit_steps:
            raise ResourceExhausted(
                f"want_steps: {actions + len(log.deals)} steps; at most {limits.audit_steps} (audit without "
                "steps, or deal by deal)",
                reason="AUDIT_TOO_LARGE",
                metadata={"max_steps": str(limits.audit_steps)},
            )
        info.preset = log.ruleset.preset
        if log.deals:
            info.deal_id = log.deals[0].code or "explicit"
        verdict = replay.audit_log(log, keys, views=request.want_steps, require_signature=request.require_signature)
        return cv.audit_to_pb(verdict, log, view_seat)

    def _replay_of(self, message: pb.GameLog, path: str, info: CallInfo) -> Any:
        """A one-deal replay log from a ``GameLog``, its fields checked here with their paths."""
        from bigtwo.codec.replay import game_log_from_pb

        cv.ruleset_from(message.ruleset, f"{path}.ruleset")
        if message.WhichOneof("deal") is None:
            raise bad_field(f"{path}.deal_code", "a log needs its cards: set deal_code or explicit_deal")
        self._check_moves(message.moves, f"{path}.moves")
        for index, text in enumerate(message.moves):
            where = f"{path}.moves[{index}]"
            try:
                Move.parse(0, text)
            except Refusal as refusal:  # a replay records cards: text that is none cannot be one
                raise bad_field(where, refusal.message) from None
        with at_field(path):
            return game_log_from_pb(message)


def rebuild_events(
    ruleset: Ruleset, state: DealState, history: History, face_up_card: int = -1, face_up_seat: int = -1
) -> tuple[Event, ...]:
    """The events of the deal that ``history`` tells and ``state`` is the state of: the hands at the
    start are the hands now plus what each seat played; the deal opens as the history says and each
    move is replayed by the engine, which checks it. A history that does not lead to ``state`` is a
    ValueError (a token is authenticated, so it would be this service's own mistake)."""
    moves = history.moves_made()
    hands = list(state.hands)
    for seat, mask in moves:
        if seat >= len(hands):
            raise ValueError("the history names a seat the deal does not have")
        hands[seat] |= mask
    if history.opening_card < 0:  # the previous deal's winner leads (opening = winner-leads)
        context = DealContext(state.deal_number, previous_winner=history.leader)
    else:
        context = DealContext(state.deal_number)
    deal = Deal.start(ruleset, DealtCards(tuple(hands), face_up_card, face_up_seat), context)
    started = deal.events[0]
    assert isinstance(started, DealStarted)
    if (started.leader, started.opening_card) != (history.leader, history.opening_card):
        raise ValueError("the history's opening does not follow from its hands")
    try:
        for seat, mask in moves:
            if mask:
                deal.play_mask(seat, mask)
            else:
                deal.pass_turn(seat)
    except Refusal as refusal:
        raise ValueError(f"the history holds a move the rules refuse: {refusal.message}") from None
    # A token's state leaves the face-up card to the token's identity part.
    if deal.state()._replace(face_up_card=-1, face_up_seat=-1) != state._replace(face_up_card=-1, face_up_seat=-1):
        raise ValueError("the history does not lead to the token's state")
    return deal.events


def outcome_reason(outcome: pb.MoveOutcome) -> str:
    return "" if outcome.accepted else outcome.refusal.reason_id


__all__ = ["CallInfo", "Core", "Game", "MoveResult"]
