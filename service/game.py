"""A game as the handlers hold it: the live deal loaded from a log or a token, and what a new token
of it needs; with the records a handler fills for the call wrapper (:class:`CallInfo`) and a judged
move (:class:`MoveResult`)."""

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
    Passed,
    Refusal,
    Ruleset,
)
from bigtwo.v1 import types_pb2 as pb

from . import wire
from .errors import PermissionDenied
from .history import History, move_bytes, opening, without_last
from .tokens import DealIdentity, LastMove, PackedState, Snapshot


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
    bots: int = field(init=False, default=0)
    """A seat token's bot seats, one bit a seat (``tokens.Snapshot.bots``): the seats PlayBots plays
    for that seat's device. Every token of the game keeps them."""

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

    def snapshot(self, viewer: int | None = None, bots: int | None = None) -> Snapshot:
        """What a token of this game holds; bound to ``viewer`` (with bot seats ``bots``) when given,
        else as the game is."""
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
            self.bots if bots is None else bots,
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
        again.public_id, again.viewer, again.bots = self.public_id, self.viewer, self.bots
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


__all__ = ["CallInfo", "Game", "MoveResult", "rebuild_events"]
