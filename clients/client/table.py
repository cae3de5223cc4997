"""A table that runs a whole match for a front end (docs/CLIENT.md "Driving a table").

:class:`Table` holds what a table host must hold, since the service keeps nothing: the game (its
log and latest state token, a :class:`~bigtwo.client.client.GameRef`), the settlement of every deal
and the match standing. It asks each seat's source for its move in turn: a person (a callable that
prompts), a bot level, or a script. It applies the service's timeout move when a source gives up
(returns ``None``) or misses ``turn_timeout``, keeps each deal's settlement card (ScoreDeal) and the
match totals (SettleMatch), and writes the replay file (:mod:`bigtwo.engine.replay`). ::

    from . import BigTwoClient
    from .table import Table, bot_seat
    from bigtwo.engine import preset

    with BigTwoClient("127.0.0.1:50051") as client:
        table = Table(client, preset("classic"), [bot_seat("good"), bot_seat("great"), ...])
        standing = table.play_match()
        table.write_replay("match.toml")

Bots: a bot seat asks the service for its move (the BotMove RPC), which decides from that seat's
view only; each turn's seed is drawn from the seat's seed and the turn's place in the match (deal
number, moves made, attempt), so a table replays the same way, and so does a match resumed from
its replay file (:meth:`Table.restore`).
``bot_seat(level, local=True)`` runs :mod:`bigtwo.engine.bots` here instead, on the seat's
:class:`~bigtwo.engine.Observation` from the local mirror of the deal (the
:class:`~bigtwo.engine.replay.ReplayWriter`'s engine, fed the moves the service accepted). Either
way the service stays the judge of every move, and a mirror that disagrees with it stops the table
(:class:`TableMismatch`). ``timeout_bot`` (TW) has a bot play a timed-out turn instead of the rules'
timeout move.

No match is lost: the table's state is the replay writer's (local) plus the service's answers, so
:meth:`Table.write_replay` writes an unfinished match at any point (a lost server, Ctrl-C, quit),
and :meth:`Table.restore` takes such a file back (every deal asked of the service again with
ReplayLog) and goes on. A deal whose last move was accepted but whose settlement could not be asked
is settled by :meth:`Table.settle` (or the next :meth:`Table.start_deal`).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigtwo.engine import (
    BadCardError,
    DealContext,
    DealRecord,
    DealSettlement,
    DragonRevealed,
    Move,
    Observation,
    Reason,
    Refusal,
    Ruleset,
    observe,
)
from bigtwo.engine.replay import DealLog, GameLog, ReplayWriter, SeatInfo, dumps
from bigtwo.engine.replay.names import seat_ref

from .client import BigTwoClient, Dealt, GameRef, MatchStanding, MoveResult, PlayStream, RefusalInfo, TableView
from .replay_files import write_replay

MAX_REFUSALS_PER_TURN = 50
"""A source refused this many times in one turn gets the timeout move instead."""


class TableMismatch(RuntimeError):
    """The local mirror of the deal disagrees with the service (different engine or ruleset)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """What a seat's source is given when it must move."""

    seat: int
    game: GameRef
    table: TableView
    observation: Observation
    """The seat's own view (its hand, the counts, the table, the public history)."""
    ruleset: Ruleset
    client: BigTwoClient
    refusal: RefusalInfo | None = None
    """Why the source's previous attempt this turn was refused (a person sees it and tries again)."""
    attempt: int = 0

    @property
    def hand(self) -> int:
        return self.observation.hand


SeatSource = Callable[[Turn], "Move | str | None"]
"""A seat's move: a :class:`Move`, its text (``"3D 3S"``, ``"pass"``), or ``None`` to time out."""


@dataclass(slots=True)
class Seat:
    """Who sits in a seat and where its moves come from."""

    name: str
    choose: SeatSource
    kind: str = "human"
    level: str | None = None

    @property
    def info(self) -> SeatInfo:
        return SeatInfo(self.name, self.kind, self.level)


def turn_rng(seed: int, turn: Turn) -> random.Random:
    """The random source of one turn: a function of the seat's seed and where the turn is (seat,
    deal number, moves made, attempt), not of the turns before it, so a match resumed from its
    file makes the same choices as one that never stopped."""
    context = turn.game.context
    return random.Random(f"bigtwo-bot/{seed}/{turn.seat}/{context.deal_number}/{turn.game.moves_made}/{turn.attempt}")


def bot_seat(level: str, *, name: str = "", seed: int = 0, local: bool = False) -> Seat:
    """A bot at a level (``random``, ``beginner``, ``good``, ``great``, ``pro``); deterministic
    for a seed. Its moves come from the service's BotMove RPC (each turn's seed from
    :func:`turn_rng`), or with ``local`` from :mod:`bigtwo.engine.bots` run here."""
    if local:
        from bigtwo.engine.bots import bot_for

        bot = bot_for(level)

        def choose_here(turn: Turn) -> Move:
            return bot.choose(turn.observation, turn.ruleset, turn_rng(seed, turn))

        return Seat(name or f"{level} bot", choose_here, "bot", level)

    def choose(turn: Turn) -> Move:
        return turn.client.bot_move(turn.game, level, seed=turn_rng(seed, turn).getrandbits(63)).move

    return Seat(name or f"{level} bot", choose, "bot", level)


def script_seat(moves: Iterable[str], *, name: str = "script") -> Seat:
    """Moves from a list, in order; when they run out, the seat times out."""
    feed = iter(moves)

    def choose(turn: Turn) -> str | None:
        return next(feed, None)

    return Seat(name, choose)


def hint_seat(*, name: str = "hint") -> Seat:
    """Plays the service's first hint (HK's Find), else passes: a simple autopilot."""

    def choose(turn: Turn) -> str:
        hint = turn.client.next_hint(turn.game)
        return hint.play.text if hint.play is not None else "pass"

    return Seat(name, choose)


@dataclass(frozen=True, slots=True)
class DealOutcome:
    """A finished deal: its code, its settlement card and the match standing after it."""

    number: int
    deal_code: str
    settlement: DealSettlement
    standing: MatchStanding
    moves: tuple[str, ...]
    table: TableView


@dataclass(slots=True)
class _Current:
    dealt: Dealt
    game: GameRef
    table: TableView
    stream: PlayStream | None = None
    settled: bool = False
    """The deal is over and its settlement and the standing after it are in ``Table.deals``."""


@dataclass
class Table:
    """Runs deals and a match over the service for the given seats (one per player)."""

    client: BigTwoClient
    ruleset: Ruleset
    seats: Sequence[Seat]
    turn_timeout: float | None = None
    """Seconds a source may take before the service's timeout move is played for it (None: no clock)."""
    use_stream: bool = False
    """Send moves over one PlayStream per deal instead of unary ApplyMove calls."""
    on_move: Callable[[Table, MoveResult], None] | None = None
    """Called after every accepted move (render the table here)."""
    on_refusal: Callable[[Table, int, RefusalInfo], None] | None = None
    timeout_bot: str = ""
    """TW: a bot level that plays a timed-out turn ("": the rules' timeout move, HK's pass or lowest card)."""
    replay_key: bytes | None = None
    """HMAC key to sign the replay file with (unsigned when None)."""
    comment: str = ""
    deals: list[DealOutcome] = field(default_factory=list)
    standing: MatchStanding | None = None
    stopped: bool = False

    def __post_init__(self) -> None:
        if len(self.seats) != self.ruleset.players:
            raise ValueError(f"{len(self.seats)} seats given; the ruleset seats {self.ruleset.players}")
        self.writer = ReplayWriter(self.ruleset, [seat.info for seat in self.seats], comment=self.comment)
        self.current: _Current | None = None

    # -- state -------------------------------------------------------------------------------------

    @property
    def game(self) -> GameRef:
        assert self.current is not None, "no deal started"
        return self.current.game

    @property
    def table(self) -> TableView:
        assert self.current is not None, "no deal started"
        return self.current.table

    @property
    def over(self) -> bool:
        """True when the match is over (or stopped)."""
        return self.stopped or (self.standing is not None and self.standing.over)

    def next_context(self) -> DealContext:
        return self.standing.next_context if self.standing is not None else DealContext()

    def observation(self, seat: int) -> Observation:
        return observe(self.writer.deal, seat)

    @property
    def unsettled(self) -> bool:
        """The current deal is over but its settlement was not asked yet (the service was lost
        in between): :meth:`settle` asks it."""
        return self.current is not None and self.current.table.over and not self.current.settled

    @property
    def in_deal(self) -> bool:
        """A deal is in play (started, not over)."""
        return self.current is not None and not self.current.table.over

    def settle(self) -> DealOutcome:
        """Ask the settlement of the current deal, over but not settled yet (see :attr:`unsettled`)."""
        if not self.unsettled:
            raise ValueError("no deal waits for its settlement")
        self._finish()
        return self.deals[-1]

    def restore(self, log: GameLog) -> None:
        """Take back a match from its replay log (unfinished or not), before the first deal: the
        writer replays every action through the engine (:meth:`ReplayWriter.from_log`), the
        service replays each deal's moves (ReplayLog: the game and its token again), finished
        deals are settled again, and the table goes on where the log stops. Raises
        :class:`ValueError` for a log of other rules or seats, :class:`TableMismatch` when the
        service does not accept the moves the log holds."""
        if self.current is not None or self.deals:
            raise ValueError("restore a match into a table before its first deal")
        if log.ruleset != self.ruleset or log.ruleset.fingerprint != self.ruleset.fingerprint:
            raise ValueError(
                f"the log's rules ({log.ruleset.fingerprint}) are not this table's ({self.ruleset.fingerprint})"
            )
        if len(log.seats) != len(self.seats):
            raise ValueError(f"the log seats {len(log.seats)} players; this table {len(self.seats)}")
        writer = ReplayWriter.from_log(log)
        for record in writer.deals:
            self._restore_deal(record)
        self.writer = writer

    def _restore_deal(self, record: DealLog) -> None:
        """One deal of a log asked of the service again (ReplayLog), settled again when it is over."""
        moves = tuple(a.move_text for a in record.actions if a.is_move and not a.auto and not a.refused)
        game = GameRef(
            self.ruleset,
            deal_code=record.code,
            hands=() if record.code else record.hands,
            context=self.next_context(),
            moves=moves,
        )
        replayed = self.client.replay_log(game)
        if replayed.refused or replayed.moves_applied != len(moves):
            why = "it stopped early"
            if replayed.refusal is not None:
                why = refusal_in_seat_names(replayed.refusal, replayed.table)
            raise TableMismatch(
                f"deal {record.number}: the service refused move {replayed.refused_at + 1} of the log: {why}"
            )
        if replayed.table.over != (record.result is not None):
            raise TableMismatch(f"deal {record.number}: the service and the log disagree on whether it is over")
        dealt = Dealt(replayed.game, record.code, replayed.table, replayed.events, None)
        self.current = _Current(dealt, replayed.game, replayed.table)
        if replayed.table.over:
            self._finish()
        elif self.use_stream:
            self.current.stream = self.client.play_stream(replayed.game)

    # -- a deal ------------------------------------------------------------------------------------

    def start_deal(self, deal_code: str | None = None, hands: Sequence[str] | None = None) -> Dealt:
        """Deal the next deal of the match (fresh cards when neither a code nor hands are given)."""
        if self.unsettled:
            self._finish()
        if self.in_deal:
            raise ValueError("the current deal is not over yet")
        if self.over:
            raise ValueError("the match is over")
        context = self.next_context()
        dealt = self.client.deal(self.ruleset, deal_code=deal_code, hands=hands, context=context)
        if dealt.deal_code:
            self.writer.start_deal(dealt.deal_code)
        else:
            self.writer.start_deal(hands=list(hands or ()))
        current = _Current(dealt, dealt.game, dealt.table)
        if self.use_stream and not dealt.table.over:
            current.stream = self.client.play_stream(dealt.game)
        self.current = current
        if dealt.table.over:  # a dragon
            self._finish()
        return dealt

    def step(self) -> MoveResult:
        """Ask the seat to act for its move and apply it (refused attempts are recorded and the
        seat is asked again; a timeout plays the service's timeout move)."""
        current = self.current
        if current is None or current.table.over:
            raise ValueError("no deal in progress")
        seat = current.table.to_act
        refusal: RefusalInfo | None = None
        for attempt in range(MAX_REFUSALS_PER_TURN):
            turn = Turn(
                seat, current.game, current.table, self.observation(seat), self.ruleset, self.client, refusal, attempt
            )
            choice = self._ask(seat, turn)
            if choice is None:
                return self._timed_out(seat)
            result = self._apply(seat, choice, timeout=False)
            if result.accepted:
                return result
            refusal = result.outcome.refusal
            if refusal is not None and self.on_refusal is not None:
                self.on_refusal(self, seat, refusal)
        return self._timed_out(seat)

    def _timed_out(self, seat: int) -> MoveResult:
        """The timed-out turn: the rules' timeout move (recorded as ``timeout`` in the replay), or
        with ``timeout_bot`` that bot's move (recorded as a move, with a comment: the audit checks
        ``timeout`` actions against the rules' timeout move)."""
        game = self.game
        if not self.timeout_bot:
            return self._apply(seat, self.client.timeout_move(game), timeout=True)
        move = self.client.timeout_move(game, bot_level=self.timeout_bot)
        return self._apply(seat, move, timeout=False, comment=f"timed out: the {self.timeout_bot} bot played")

    def _ask(self, seat: int, turn: Turn) -> Move | str | None:
        source = self.seats[seat].choose
        if self.turn_timeout is None:
            return source(turn)
        box: list[Move | str | None] = []
        worker = threading.Thread(target=lambda: box.append(source(turn)), daemon=True)
        worker.start()
        worker.join(self.turn_timeout)
        return box[0] if box else None

    def _apply(self, seat: int, choice: Move | str, *, timeout: bool, comment: str = "") -> MoveResult:
        current = self.current
        assert current is not None
        move_text = str(choice) if isinstance(choice, Move) else choice
        if current.stream is not None:
            result = current.stream.move(move_text, seat=seat)
        else:
            result = self.client.apply_move(current.game, move_text, seat=seat)
        if result.accepted:
            try:
                self.writer.play_text(seat, result.game.moves[-1], timeout=timeout, comment=comment)
            except Refusal as refusal:
                why = refusal_in_seat_names(RefusalInfo(refusal.reason, refusal.message), self.writer.deal)
                raise TableMismatch(
                    f"the service accepted {move_text!r} for {seat_ref(seat)}; the mirror refused: {why}"
                ) from None
            current.game, current.table = result.game, result.table
            if self.on_move is not None:
                self.on_move(self, result)
            if result.table.over:
                self._finish()
        else:
            try:
                self.writer.play_text(seat, move_text, timeout=timeout)
            except (Refusal, BadCardError):
                pass  # recorded as a refused attempt
            else:
                raise TableMismatch(f"the service refused {move_text!r} for {seat_ref(seat)}; the mirror accepted it")
        return result

    def _finish(self) -> None:
        current = self.current
        assert current is not None
        if current.stream is not None:
            current.stream.close()
            current.stream = None
        settlement = self.client.score_deal(current.game)
        number = current.table.deal_number
        record = DealRecord(
            number,
            settlement.winner,
            settlement.scores,
            tuple(line.cards_left for line in settlement.seats),
            current.dealt.deal_code,
            any(isinstance(event, DragonRevealed) for event in current.dealt.events),
        )
        records = [*self._records(), record]
        self.standing = self.client.settle_match(self.ruleset, records)
        self.deals.append(
            DealOutcome(number, current.dealt.deal_code, settlement, self.standing, current.game.moves, current.table)
        )
        current.settled = True

    def _records(self) -> list[DealRecord]:
        return [
            DealRecord(
                d.number,
                d.settlement.winner,
                d.settlement.scores,
                tuple(line.cards_left for line in d.settlement.seats),
                d.deal_code,
            )
            for d in self.deals
        ]

    def play_deal(self, deal_code: str | None = None, hands: Sequence[str] | None = None) -> DealOutcome:
        """Deal and play one whole deal."""
        self.start_deal(deal_code, hands)
        while not self.table.over:
            self.step()
        return self.deals[-1]

    def play_match(self, codes: Iterable[str | None] = (), *, max_deals: int | None = None) -> MatchStanding:
        """Play deals until the match is over (``max_deals`` stops an open match). ``codes`` gives
        the deal codes in order; after they run out deals are fresh."""
        feed = iter(codes)
        while not self.over and (max_deals is None or len(self.deals) < max_deals):
            self.play_deal(next(feed, None))
        if not self.over:
            self.stop()
        assert self.standing is not None
        return self.standing

    def stop(self) -> MatchStanding | None:
        """The table stops the match (an open match ends only so)."""
        self.stopped = True
        if self.current is not None and self.current.stream is not None:
            self.current.stream.close()
        if self.deals:
            self.standing = self.client.settle_match(self.ruleset, self._records(), stopped=True)
        return self.standing

    # -- the record --------------------------------------------------------------------------------

    def replay_log(self) -> GameLog:
        return self.writer.log(self.replay_key)

    def replay_text(self) -> str:
        return dumps(self.replay_log())

    def write_replay(self, path: str | Path) -> Path:
        path = Path(path)
        write_replay(path, self.replay_log())
        return path


def refusal_in_seat_names(refusal: RefusalInfo, table: Any, who: Callable[[int], str] = seat_ref) -> str:
    """A refusal's sentence naming seats as every other message does (``who``: ``p1``..``pN``).

    The engine's sentences for two reasons name seats (``p2``; a service of an older release said
    ``seat 1``, from 0). For those the sentence is made here from the reason and ``table`` (a
    :class:`TableView` or the mirror's engine deal: whose turn it is, who went out), so ``who`` can
    name the seats; every other sentence names no seat and is kept."""
    if refusal.reason is Reason.NOT_YOUR_TURN and table is not None and not table.over:
        return f"It is {who(table.to_act)}'s turn"
    if refusal.reason is Reason.GAME_OVER and table is not None and table.winner is not None:
        return f"The deal is over: {who(table.winner)} went out"
    return str(refusal.message)


def seats_from(spec: Sequence[Any]) -> list[Seat]:
    """Seats from a mix of :class:`Seat` objects and bot level names."""
    return [item if isinstance(item, Seat) else bot_seat(str(item), seed=index) for index, item in enumerate(spec)]


__all__ = [
    "DealOutcome",
    "Seat",
    "SeatSource",
    "Table",
    "TableMismatch",
    "Turn",
    "bot_seat",
    "hint_seat",
    "refusal_in_seat_names",
    "script_seat",
    "seats_from",
    "turn_rng",
]
