"""Writing replay logs from games as they are played (``bigtwo play``, bots, the service).

:class:`ReplayWriter` wraps the engine: start a deal, feed it moves (refused attempts are recorded
with their reason, auto-passes are added), note seats that are left or taken over, and ask for the
sealed (and optionally signed) :class:`GameLog`. :func:`game_log_from_deals` turns already played
engine :class:`Deal` objects into a log. Pure: no I/O.

A replay file can hold an unfinished match: deals without a ``[deals.result]`` (the last one may
stop in the middle) and a ``[result]`` with ``over = false``. :meth:`ReplayWriter.from_log` reads
such a log back into a writer, action by action through the engine, so a match stopped by a lost
server, Ctrl-C or ``quit`` goes on from its file (``bigtwo play --resume FILE``) and the file it
ends in is the one an uninterrupted match would have written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import (
    BadCardError,
    CardsPlayed,
    Deal,
    DealCode,
    DealEnded,
    DealRecord,
    DealStarted,
    Event,
    Match,
    Move,
    Passed,
    Refusal,
    Ruleset,
    deal_from_code,
    explicit_deal,
    mask_text,
)
from ..cards import split_card_text
from .canonical import seal
from .model import Action, ActionKind, DealLog, DealResult, GameLog, MatchResult, SeatInfo
from .names import seat_ref as _seat_ref


def actions_from_events(events: Sequence[Event]) -> list[Action]:
    """The action lines of a deal's engine events (plays, passes, auto-passes)."""
    out: list[Action] = []
    for event in events:
        if isinstance(event, CardsPlayed):
            out.append(Action(event.seat, ActionKind.PLAY, tuple(mask_text(event.mask).split())))
        elif isinstance(event, Passed):
            out.append(Action(event.seat, ActionKind.PASS, auto=event.automatic))
    return out


def _result_of(ended: DealEnded) -> DealResult:
    """The result lines of a deal: the settlement its ``DealEnded`` holds."""
    return DealResult(ended.winner, ended.settlement.seats, ended.by_dragon)


def _match_result(match: Match) -> MatchResult:
    return MatchResult(len(match.deals), match.totals, match.deals_won, match.winners, match.over)


def _default_seats(players: int) -> tuple[SeatInfo, ...]:
    return tuple(SeatInfo(_seat_ref(seat)) for seat in range(players))


@dataclass
class _OpenDeal:
    number: int
    code: str
    hands: tuple[str, ...]
    previous_winner: int | None
    empty_seats: tuple[int, ...]
    comment: str
    deal: Deal
    actions: list[Action] = field(default_factory=list)
    result: DealResult | None = None

    def log(self) -> DealLog:
        return DealLog(
            number=self.number,
            code=self.code,
            hands=self.hands,
            previous_winner=self.previous_winner,
            empty_seats=self.empty_seats,
            comment=self.comment,
            actions=tuple(self.actions),
            result=self.result,
        )


class ReplayWriter:
    """Record a match as it is played::

    writer = ReplayWriter(rules, [SeatInfo("Ann"), SeatInfo("Bo", "bot", 3), ...])
    deal = writer.start_deal(DealCode.parse("7K3M9QX2AB4H8"))
    writer.play(Move.play(deal.to_act, "3D"))      # a refusal is recorded, then re-raised
    ...
    text = dumps(writer.log(key))                    # sealed; signed when key is given
    """

    def __init__(self, ruleset: Ruleset, seats: Sequence[SeatInfo] | None = None, *, comment: str = "") -> None:
        self.ruleset = ruleset
        self.seats = tuple(seats) if seats else _default_seats(ruleset.players)
        if len(self.seats) != ruleset.players:
            raise ValueError(f"{len(self.seats)} seats given; this ruleset seats {ruleset.players} players")
        self.comment = comment
        self.match = Match(ruleset)
        self._deals: list[_OpenDeal] = []

    @classmethod
    def from_log(cls, log: GameLog) -> ReplayWriter:
        """A writer holding everything ``log`` records (seats, deals, every action, refused
        attempts included), ready to go on where it stops. Each action is done again through the
        engine, and the deals it gives must be the file's own: :class:`ValueError` names the first
        action that does not fit (an auto-pass the rules would not make, a refusal they would not
        give, a result that differs)."""
        writer = cls(log.ruleset, log.seats, comment=log.comment)
        for record in log.deals:
            where = f"deal {record.number}"
            if writer._deals and not writer.deal.over:
                raise ValueError(f"{where} follows an unfinished deal")
            context = writer.match.next_context()
            if record.number != context.deal_number or record.previous_winner != context.previous_winner:
                raise ValueError(f"{where} is not the match's deal {context.deal_number} (number or previous winner)")
            if record.code:
                writer.start_deal(record.code, comment=record.comment)
                if record.hands and writer._deals[-1].hands != record.hands:
                    raise ValueError(f"{where}: the hands written differ from the ones its code deals")
            else:
                writer.start_deal(hands=record.hands, comment=record.comment)
            for action in record.actions:
                writer._redo(action, where)
            written = writer._deals[-1].log()
            if written.actions != record.actions:
                raise ValueError(f"{where}: the engine's auto-passes differ from the file's")
            if written.result != record.result:
                raise ValueError(f"{where}: the result written differs from the one the moves give")
        return writer

    def _redo(self, action: Action, where: str) -> None:
        """Do one action of a log again (an auto-pass is the engine's own and comes by itself)."""
        seat = f"{where}: {_seat_ref(action.seat)}'s {action.text()!r}"
        if action.kind is ActionKind.LEAVE:
            self.leave(action.seat, comment=action.comment)
        elif action.kind is ActionKind.TAKE:
            assert action.taker is not None
            self.take(action.seat, action.taker, comment=action.comment)
        elif action.auto:
            return
        elif action.refused:
            try:
                self.play_text(action.seat, action.move_text, timeout=action.timeout, comment=action.comment)
            except (Refusal, BadCardError):
                return
            raise ValueError(f"{seat} is written as refused, yet the rules allow it")
        else:
            try:
                self.play_text(action.seat, action.move_text, timeout=action.timeout, comment=action.comment)
            except (Refusal, BadCardError) as exc:
                raise ValueError(f"{seat} is refused by the rules: {exc}") from None

    @property
    def deals(self) -> tuple[DealLog, ...]:
        """Every deal started so far, as the log records it (the last may be unfinished)."""
        return tuple(open_deal.log() for open_deal in self._deals)

    @property
    def deal(self) -> Deal:
        if not self._deals:
            raise ValueError("no deal started yet")
        return self._deals[-1].deal

    def start_deal(
        self,
        code: DealCode | str | None = None,
        hands: Sequence[str] | None = None,
        *,
        comment: str = "",
    ) -> Deal:
        """Deal the next hand of the match from a deal code, or from explicit hands."""
        if self._deals and not self._deals[-1].deal.over:
            raise ValueError("the current deal is not over yet")
        if self.match.over:
            raise ValueError("the match is over")
        context = self.match.next_context()
        rules = self.ruleset
        if code is not None:
            deal_code = DealCode.parse(code) if isinstance(code, str) else code
            dealt = deal_from_code(deal_code, rules)
            code_text = str(deal_code)
        elif hands is not None:
            dealt = explicit_deal(list(hands), rules)
            code_text = ""
        else:
            raise ValueError("a deal needs a deal code or explicit hands")
        deal = Deal.start(rules, dealt, context)
        self._deals.append(
            _OpenDeal(
                number=context.deal_number,
                code=code_text,
                hands=dealt.hand_texts(),
                previous_winner=context.previous_winner,
                empty_seats=tuple(sorted(context.empty_seats)),
                comment=comment,
                deal=deal,
            )
        )
        if deal.over:  # a dragon
            self._finish()
        return deal

    def play(self, move: Move, *, timeout: bool = False, comment: str = "") -> tuple[Event, ...]:
        """Do ``move``; a refused move is recorded with its reason and the Refusal re-raised."""
        current = self._deals[-1] if self._deals else None
        if current is None:
            raise ValueError("no deal started yet")
        try:
            events = current.deal.do(move)
        except Refusal as refusal:
            kind = ActionKind.PASS if move.is_pass else ActionKind.PLAY
            cards = tuple(sorted((str(card) for card in move.cards), key=_card_order))
            current.actions.append(Action(move.seat, kind, cards, False, timeout, refusal.reason.value, comment))
            raise
        for action in actions_from_events(events):
            if action.seat == move.seat and not action.auto:
                action = Action(action.seat, action.kind, action.cards, False, timeout, "", comment)
            current.actions.append(action)
        if current.deal.over:
            self._finish()
        return events

    def play_text(self, seat: int, text: str, *, timeout: bool = False, comment: str = "") -> tuple[Event, ...]:
        """Do a move typed as text; text holding no card is recorded raw as refused (``bad-card``)."""
        try:
            move = Move.parse(seat, text)
        except BadCardError:
            current = self._deals[-1] if self._deals else None
            if current is None:
                raise ValueError("no deal started yet") from None
            try:
                current.deal.verify_text(seat, text)
            except Refusal as refusal:
                tokens = tuple(split_card_text(text))
                current.actions.append(
                    Action(seat, ActionKind.PLAY, tokens, False, timeout, refusal.reason.value, comment)
                )
                raise
            raise  # pragma: no cover - verify_text always refuses text that is no card
        return self.play(move, timeout=timeout, comment=comment)

    def leave(self, seat: int, *, comment: str = "") -> None:
        """The seat is left empty (a bot plays for it under its name; it keeps its points)."""
        self.match = self.match.leave(seat)
        if self._deals:
            self._deals[-1].actions.append(Action(seat, ActionKind.LEAVE, comment=comment))

    def take(self, seat: int, taker: SeatInfo, *, comment: str = "") -> None:
        """Someone takes over the seat, with its points."""
        self.match = self.match.take(seat)
        if self._deals:
            self._deals[-1].actions.append(Action(seat, ActionKind.TAKE, taker=taker, comment=comment))

    def _finish(self) -> None:
        current = self._deals[-1]
        ended = next(e for e in reversed(current.deal.events) if isinstance(e, DealEnded))
        current.result = _result_of(ended)
        self.match = self.match.record(
            DealRecord(
                current.number, ended.winner, current.result.scores, ended.cards_left, current.code, ended.by_dragon
            )
        )

    def log(self, key: bytes | None = None) -> GameLog:
        """The match so far as a sealed log (signed with ``key`` when given)."""
        log = GameLog(
            ruleset=self.ruleset,
            seats=self.seats,
            deals=tuple(open_deal.log() for open_deal in self._deals),
            result=_match_result(self.match) if self.match.deals else None,
            fingerprint=self.ruleset.fingerprint,
            comment=self.comment,
        )
        return seal(log, key)


def _card_order(text: str) -> int:
    from .. import Card, Refusal

    try:
        return Card.parse(text).index
    except Refusal:  # pragma: no cover - a Move's cards are Card objects
        return 99


def _deal_code(codes: Sequence[DealCode | str | None] | None, index: int) -> str:
    """Deal ``index``'s code as the log writes it ("" when it was not dealt from one): a code
    given as text is parsed, so a malformed one raises here."""
    code = codes[index] if codes is not None and index < len(codes) else None
    if code is not None and not isinstance(code, str):
        return str(code)
    return str(DealCode.parse(code)) if code else ""


def game_log_from_deals(
    ruleset: Ruleset,
    deals: Sequence[Deal],
    *,
    seats: Sequence[SeatInfo] | None = None,
    codes: Sequence[DealCode | str | None] | None = None,
    comment: str = "",
    key: bytes | None = None,
) -> GameLog:
    """A sealed log of engine deals already played in order (refusals are not known here).
    ``codes[i]`` is deal i's code when it was dealt from one."""
    match = Match(ruleset)
    records: list[DealLog] = []
    previous_winner: int | None = None
    for index, deal in enumerate(deals):
        started = deal.events[0]
        if not isinstance(started, DealStarted):
            raise ValueError(f"deal {index + 1}'s events do not open with DealStarted")
        code = _deal_code(codes, index)
        result = None
        ended = next((e for e in reversed(deal.events) if isinstance(e, DealEnded)), None)
        if ended is not None:
            result = _result_of(ended)
            match = match.record(
                DealRecord(started.deal_number, ended.winner, result.scores, ended.cards_left, code, ended.by_dragon)
            )
        hands = tuple(mask_text(hand) for hand in started.hands)
        explicit_deal(list(hands), ruleset)  # raises on hands that are no deal
        records.append(
            DealLog(
                number=started.deal_number,
                code=code,
                hands=hands,
                previous_winner=previous_winner if index else None,
                actions=tuple(actions_from_events(deal.events)),
                result=result,
            )
        )
        previous_winner = ended.winner if ended is not None else None
    log = GameLog(
        ruleset=ruleset,
        seats=tuple(seats) if seats else _default_seats(ruleset.players),
        deals=tuple(records),
        result=_match_result(match) if match.deals else None,
        fingerprint=ruleset.fingerprint,
        comment=comment,
    )
    return seal(log, key)
