"""A game as the handlers hold it: the live deal loaded from a log or a token, and what a new token
of it needs, with the one way a move changes it (:meth:`Game.play`, which returns :class:`Played`);
and the records a handler fills for the call wrapper (:class:`CallInfo`) and a judged move
(:class:`MoveResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from bigtwo.engine import (
    CardsPlayed,
    Deal,
    DealContext,
    DealStarted,
    DealState,
    DealtCards,
    Event,
    Move,
    Passed,
    Refusal,
    Ruleset,
)
from bigtwo.v1 import types_pb2 as pb

from . import wire
from .bounds import MAX_SEATS
from .errors import PermissionDenied
from .history import History, move_bytes, opening, without_last
from .tokens import DealIdentity, LastMove, PackedState, Snapshot, TableSeal


class Played(NamedTuple):
    """What one move did to a game (:meth:`Game.play`, :meth:`Game.resend`): a frozen record (a
    named tuple: one is made for every move played)."""

    game: Game
    """The game the move was played in: the game itself, or for a resend the game as it was before
    the move, with the move played again."""
    move_index: int
    """The move's index in the deal: the moves made before it."""
    move: LastMove
    """The move as the game now holds it as its last."""
    events: tuple[Event, ...]
    """The events the move produced (automatic passes and the deal's end included)."""


_PASS_BY_SEAT = tuple(LastMove(seat, 0, True) for seat in range(MAX_SEATS))
"""A pass by each seat, as the last move made."""


class Game:
    """A game loaded from a log or a token: the live deal and what a new token of it needs.

    The game owns its transitions: :meth:`play` is the one way a move changes it, and keeps every
    field a token reads in step with the deal (the state before the last move, the last move, the
    packed public history); :meth:`resend` answers the re-send of the last move without changing
    it. Its fields are read through properties and written by no other module."""

    __slots__ = (
        "_bots",
        "_deal",
        "_face_up_card",
        "_face_up_seat",
        "_history",
        "_history_moves",
        "_identity",
        "_last_move",
        "_loaded",
        "_loaded_history",
        "_packed",
        "_parts",
        "_previous",
        "_public_id",
        "_ruleset",
        "_seal",
        "_viewer",
        "_writer",
    )

    def __init__(
        self,
        ruleset: Ruleset,
        deal: Deal,
        identity: DealIdentity,
        face_up_card: int = -1,
        face_up_seat: int = -1,
        *,
        public_id: str = "",
        viewer: int = -1,
        bots: int = 0,
        seal: TableSeal | None = None,
    ) -> None:
        """A game of ``deal`` with no move of it recorded yet (a new deal, or a log's before its
        moves are played); :meth:`resumed` makes one from a token."""
        self._ruleset = ruleset
        self._deal = deal
        self._identity = identity
        self._face_up_card = face_up_card
        self._face_up_seat = face_up_seat
        self._public_id = public_id
        self._viewer = viewer
        self._bots = bots
        self._seal = seal
        self._previous: DealState | PackedState | Deal | None = None
        self._last_move: LastMove | None = None
        # The deal's current state as the token it came from held it; None once a move changed it.
        self._packed: PackedState | None = None
        # The deal's public history, packed (``history.History``), up to ``_history_moves`` moves
        # (-1: none read yet): play adds each move by one concatenation, so a token's game never
        # reads its events back; a log's game reads it from its events once (public_history).
        self._history = b""
        self._history_moves = -1
        # A token's state when it was loaded, and its history then: what events_so_far rebuilds
        # the events before the deal's own from.
        self._loaded: DealState | None = None
        self._loaded_history = b""
        self._parts = wire.parts_for(ruleset)
        self._writer: wire.DealWriter | None = None

    @classmethod
    def resumed(cls, snap: Snapshot, public_id: str) -> Game:
        """The game a token holds (``snap``), named ``public_id``. Every field set once, here (one
        is made for every call that sends a token)."""
        ruleset, state = snap.ruleset, snap.state
        deal = Deal.from_state(ruleset, state)
        deal.face_up_card, deal.face_up_seat = snap.face_up_card, snap.face_up_seat
        game = cls.__new__(cls)
        game._ruleset, game._deal, game._identity = ruleset, deal, snap.identity
        game._face_up_card, game._face_up_seat = snap.face_up_card, snap.face_up_seat
        game._public_id, game._viewer, game._bots, game._seal = public_id, snap.viewer, snap.bots, snap.seal
        game._previous, game._last_move, game._packed = snap.previous, snap.last_move, snap.packed
        game._history = game._loaded_history = snap.history
        game._history_moves = state.moves_made
        game._loaded = state
        game._parts = wire.parts_for(ruleset)
        game._writer = None
        return game

    # -- reading ---------------------------------------------------------------------------------

    @property
    def ruleset(self) -> Ruleset:
        return self._ruleset

    @property
    def deal(self) -> Deal:
        """The live deal: read it; only :meth:`play` moves it."""
        return self._deal

    @property
    def identity(self) -> DealIdentity:
        return self._identity

    @property
    def face_up_card(self) -> int:
        return self._face_up_card

    @property
    def face_up_seat(self) -> int:
        return self._face_up_seat

    @property
    def previous(self) -> DealState | PackedState | Deal | None:
        """The deal before the last move (for retries): a state from a token, or a cheap clone;
        None when it was not kept (a stream that sends no tokens)."""
        return self._previous

    @property
    def last_move(self) -> LastMove | None:
        return self._last_move

    @property
    def parts(self) -> wire.RulesetParts:
        """The ruleset's serialized answer parts, looked up once per game (every move uses them)."""
        return self._parts

    @property
    def public_id(self) -> str:
        """The deal's opaque name in answers and logs (:mod:`bigtwo.service.deal_ids`)."""
        return self._public_id

    @property
    def viewer(self) -> int:
        """The seat a seat-bound token is bound to (-1: the table host's game, any seat): calls with it
        act and ask only for that seat, and every token they return is bound to it too."""
        return self._viewer

    @property
    def bots(self) -> int:
        """A seat token's bot seats, one bit a seat (``tokens.Snapshot.bots``): the seats PlayBots plays
        for that seat's device. Every token of the game keeps them."""
        return self._bots

    @property
    def seal(self) -> TableSeal | None:
        """What the deal fixed when ``Deal`` made it: its tokens' own randomness and the seats' bot
        levels (``tokens.TableSeal``); None for a game that began from a log."""
        return self._seal

    @property
    def deal_code(self) -> str:
        """The deal code ("" for explicit hands): only for the table host, or once the deal is over."""
        return "" if self._identity.explicit else self._identity.text

    def code_for(self, view_seat: int | None) -> str:
        """The deal code an answer carries: the table host's (no view_seat) always, a seat's only
        once the deal is over. docs/SECURITY.md."""
        return self.deal_code if view_seat is None or self._deal.over else ""

    def writer(self) -> wire.DealWriter:
        """Writes the deal's answers; made by the first answer (a stream's moves share it)."""
        writer = self._writer
        if writer is None:
            writer = self._writer = wire.DealWriter(self._deal, self._public_id, self._parts, deal_code=self.deal_code)
        return writer

    def table(self) -> pb.TableState:
        """The public table now, as a message (answers other than a move's)."""
        return wire.table_to_pb(self._deal, self._public_id, deal_code=self.deal_code)

    # -- the transitions -------------------------------------------------------------------------

    def play(self, seat: int, move: str | Move, *, keep_previous: bool = True) -> Played:
        """Play ``move`` (typed as text, or parsed: a log's) for ``seat``, the seat to act, and record
        it: the deal moves on, the move becomes the last move, the public history grows by it (once
        kept move by move) and, with ``keep_previous``, the state before it is kept for a retry
        (the token's bytes as they came, or else a clone of the deal). A move the rules refuse
        raises its :class:`~bigtwo.engine.Refusal` and changes nothing."""
        deal = self._deal
        made = deal.moves_made
        if keep_previous:
            before: PackedState | Deal | None = self._packed if self._packed is not None else deal.clone()
        else:
            before = None
        events = deal.do_text(seat, move) if move.__class__ is str else deal.do(move)  # type: ignore[arg-type]
        first = events[0]
        last = LastMove(seat, first.mask, False) if isinstance(first, CardsPlayed) else _PASS_BY_SEAT[seat]
        if self._history_moves == made:  # kept move by move once read (public_history)
            self._history += move_bytes(seat, last.mask)
            self._history_moves = made + 1
        self._previous = before
        self._last_move = last
        self._packed = None
        return Played(self, made, last, events)

    def repeats_last(self, seat: int, text: str) -> bool:
        """Whether ``text`` by ``seat`` is the last move made again (a retry whose answer was lost)."""
        last = self._last_move
        if last is None:
            return False
        try:
            return last.same_as(Move.parse(seat, text))
        except Refusal:  # no card, or a card repeated: not the move made
            return False

    def resend(self, seat: int, text: str) -> Played | None:
        """The idempotent re-send of the last move: the move played again on the game as it was
        before it (whose answer is byte-for-byte the first answer), this game unchanged; None when
        ``text`` by ``seat`` is not the last move, or the state before it was not kept."""
        if self._previous is None or not self.repeats_last(seat, text):
            return None
        return self._before_last_move().play(seat, text)

    def _before_last_move(self) -> Game:
        """The game as it was before its last move, its history kept move by move."""
        assert self._last_move is not None
        previous = self._previous
        assert previous is not None
        if isinstance(previous, Deal):
            before = previous.clone()
        else:
            state = previous.unpack() if isinstance(previous, PackedState) else previous
            before = Deal.from_state(self._ruleset, state)
            before.face_up_card, before.face_up_seat = self._face_up_card, self._face_up_seat
        history = without_last(self.public_history(), self._last_move.mask)
        again = Game(
            self._ruleset,
            before,
            self._identity,
            self._face_up_card,
            self._face_up_seat,
            public_id=self._public_id,
            viewer=self._viewer,
            bots=self._bots,
            seal=self._seal,
        )
        again._history = again._loaded_history = history
        again._history_moves = before.moves_made
        again._loaded = before.state()
        return again

    # -- what a token and a bot read -------------------------------------------------------------

    def snapshot(self, viewer: int | None = None, bots: int | None = None) -> Snapshot:
        """What a token of this game holds; bound to ``viewer`` (with bot seats ``bots``) when given,
        else as the game is."""
        previous = self._previous
        if isinstance(previous, Deal):
            previous = previous.state()
        return Snapshot(
            self._ruleset,
            self._identity,
            self._face_up_card,
            self._face_up_seat,
            self._deal.state(),
            previous,
            self._last_move,
            self._viewer if viewer is None else viewer,
            None,
            self._history if self._history_moves == self._deal.moves_made else self.public_history(),
            self._bots if bots is None else bots,
            self._seal,
        )

    def public_history(self) -> bytes:
        """The deal's public history now (what its token carries), packed. Kept move by move by
        :meth:`play`; read from the events only for a deal that holds them all (a log's), once."""
        if self._history_moves != self._deal.moves_made:
            events = self._deal.events
            started = events[0]
            assert isinstance(started, DealStarted)  # a token's game is kept move by move
            parts = [opening(started.leader, started.opening_card)]
            for event in events:
                if isinstance(event, CardsPlayed):
                    parts.append(move_bytes(event.seat, event.mask))
                elif isinstance(event, Passed) and not event.automatic:
                    parts.append(move_bytes(event.seat, 0))
            self._history, self._history_moves = b"".join(parts), self._deal.moves_made
        return self._history

    def events_so_far(self) -> tuple[Event, ...]:
        """Every event of the deal so far, as a deal replayed from its log holds them: a deal
        resumed from a token rebuilds those before it was loaded from the token's history."""
        events = self._deal.events
        if events and isinstance(events[0], DealStarted):
            return events
        assert self._loaded is not None  # a token's game
        history = History.unpack(self._loaded_history)
        return rebuild_events(self._ruleset, self._loaded, history, self._face_up_card, self._face_up_seat) + events

    def check_seat(self, seat: int, path: str) -> None:
        """PERMISSION_DENIED when the game came from a token bound to another seat than ``seat``."""
        if self._viewer >= 0 and seat != self._viewer:
            raise PermissionDenied(
                f"{path}: this state token is bound to seat {self._viewer}; it acts and asks for that seat only",
                reason="TOKEN_BOUND_TO_SEAT",
                metadata={"seat": str(self._viewer)},
            )


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
    bot_levels: list[str] = field(default_factory=list)
    """The level of each move a bot made (PlayBots: one entry a move, counted like BotMove's)."""
    loaded: tuple[object, Game] | None = field(default=None, repr=False, compare=False)
    """A game loaded before the handler ran (to place the call by its cost, :mod:`bigtwo.service.costs`),
    with the message it was loaded from: the handler's load of that message takes it instead of
    loading again. Never set in a worker process, so never sent back from one."""


class MoveResult(NamedTuple):
    """A judged move (a named tuple: one is made for every move judged)."""

    outcome: bytes
    """The ``MoveOutcome``, serialized (see :mod:`bigtwo.service.wire`)."""
    accepted: bool
    events: tuple[Event, ...]
    game: Game
    move_index: int


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


__all__ = ["CallInfo", "Game", "MoveResult", "Played", "rebuild_events"]
