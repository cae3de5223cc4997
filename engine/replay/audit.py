"""Audit a replay: re-run every deal through the engine and say whether the file is true.

:func:`audit_log` is pure (no I/O): log in, :class:`AuditVerdict` out. It is what the service's
Replay/Audit RPC calls. Checks, in the order a problem is reported:

1. the ruleset fingerprint (``RULESET_MISMATCH``);
2. per deal, in order: the hands against the deal code (``DEAL_CODE_MISMATCH``), the deal context
   against the deals before it (``CONTEXT_MISMATCH``), every action (``ILLEGAL_MOVE``: the first
   move the rules refuse, a refusal the rules would not make, a missing or invented auto-pass, a
   timed-out turn that is not the timeout move), the result against the moves (``RESULT_MISMATCH``);
3. the match result (``RESULT_MISMATCH``);
4. the hash chain (``BROKEN_CHAIN``) and, with a key, the signature (``BAD_SIGNATURE``): checked by
   :mod:`.integrity`, apart from the rules.

The verdict's kind is the first problem found (``VALID`` when none); every problem is listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from .. import (
    ALL_CARDS,
    CardsPlayed,
    Deal,
    DealContext,
    DealEnded,
    DealRecord,
    DealtCards,
    Event,
    Match,
    Move,
    Passed,
    Refusal,
    Ruleset,
    TrickEnded,
    classify_mask,
    play_name,
    timeout_move,
)
from ..cards import parse_cards
from .integrity import chain_problems, check_signature
from .limits import DEFAULT_LIMITS, ReplayLimits
from .model import Action, ActionKind, DealLog, GameLog, ReplayFormatError
from .names import seat_ref as _seat
from .reader import loads
from .validate import DealMismatch, dealt_cards, validate_log
from .verdicts import (
    AuditVerdict,
    Problem,
    SignatureStatus,
    StepView,
    VerdictKind,
    describe_event,
    format_error_verdict,
)

_CARDS = {str(card): card for card in ALL_CARDS}
_PLAY, _PASS = ActionKind.PLAY, ActionKind.PASS


def _plain_move(action: Action) -> Move | None:
    """A plain play or pass's move, or None for an action that :meth:`_Auditor.step` must take."""
    if action.auto or action.timeout or action.refused:
        return None
    if action.kind is _PASS:
        return Move(action.seat, (), True)
    if action.kind is _PLAY and all(t in _CARDS for t in action.cards):
        return Move(action.seat, tuple(_CARDS[t] for t in action.cards), False)
    return None


class _Stop(Exception):
    """Replay cannot go on (the problem is already recorded)."""


class _DealRun:
    """One deal being replayed: the engine's deal, its record, the seats empty so far, the trick
    as the views show it, and the auto-passes the engine made that the file must list next."""

    __slots__ = ("deal", "empty", "pending", "record", "trick", "trick_moves")

    def __init__(self, deal: Deal, record: DealLog, empty: set[int]) -> None:
        self.deal = deal
        self.record = record
        self.empty = empty
        self.trick = 1
        self.trick_moves: list[tuple[int, str]] = []
        """The current trick so far: (seat, ``3D 3S`` or ``pass``)."""
        self.pending: list[Passed] = []


def _move_of(action: Action) -> Move | None:
    """The move an action's cards make, or None when they are not all cards (a refused attempt
    keeps its raw tokens): then the engine judges the text."""
    if action.kind is ActionKind.PASS:
        return Move.pass_(action.seat)
    try:
        cards = tuple(_CARDS[t] if t in _CARDS else parse_cards(t)[0] for t in action.cards)
    except (Refusal, IndexError):
        return None
    return Move.play(action.seat, cards)


class _Auditor:
    def __init__(self, log: GameLog, views: bool) -> None:
        self.log = log
        self.rules: Ruleset = log.ruleset
        self.views = views
        self.problems: list[Problem] = []
        self.events: list[Event] = []
        self.steps: list[StepView] = []
        self.match = Match(self.rules)
        self.totals = [0] * self.rules.players
        self.actions_checked = 0
        self.deals_checked = 0
        self._trick_end_after_auto: list[Event] = []
        self._shown: tuple[int, int] = (0, -1)

    def problem(self, kind: VerdictKind, message: str, **where: object) -> None:
        self.problems.append(Problem(kind, message, **where))  # type: ignore[arg-type]

    def stop(self, kind: VerdictKind, message: str, **where: object) -> NoReturn:
        """Record the problem that ends the replay."""
        self.problem(kind, message, **where)
        raise _Stop

    # -- one deal ---------------------------------------------------------------------------------

    def dealt(self, record: DealLog) -> DealtCards:
        try:
            return dealt_cards(record, self.rules)
        except DealMismatch as exc:
            self.stop(VerdictKind.DEAL_CODE_MISMATCH, str(exc), deal_number=record.number, line=record.line)

    def context(self, index: int, record: DealLog, empty: set[int], previous: DealLog | None) -> DealContext:
        if previous is not None:
            expected_number = previous.number + 1
            expected_winner = self.match.deals[-1].winner if self.match.deals else None
            mismatch = ""
            if record.number != expected_number:
                mismatch = f"deal number is {record.number}; after deal {previous.number} it must be {expected_number}"
            elif record.previous_winner != expected_winner:
                shown = _seat(expected_winner) if expected_winner is not None else "none"
                given = _seat(record.previous_winner) if record.previous_winner is not None else "none"
                mismatch = f"previous_winner is {given}; the deal before was won by {shown}"
            elif set(record.empty_seats) != empty:
                mismatch = (
                    f"empty_seats is {[_seat(s) for s in record.empty_seats]}; the seat changes so far leave "
                    f"{[_seat(s) for s in sorted(empty)]}"
                )
            if mismatch:
                self.stop(VerdictKind.CONTEXT_MISMATCH, mismatch, deal_number=record.number, line=record.line)
        return DealContext(record.number, record.previous_winner, frozenset(record.empty_seats))

    def view(
        self,
        run: _DealRun,
        index: int,
        action: Action | None,
        events: tuple[Event, ...],
        refused: str = "",
        message: str = "",
    ) -> None:
        if not self.views:
            return
        deal, record = run.deal, run.record
        table_mask, table_seat = self._shown
        over = deal.over
        totals = tuple(self.totals[s] + (deal.scores[s] if over and deal.scores else 0) for s in range(deal.players))
        self.steps.append(
            StepView(
                step=len(self.steps),
                deal_number=record.number,
                action_index=index,
                line=action.line if action else record.line,
                actor=action.seat if action else -1,
                text=action.text() if action else f"deal {record.number}",
                events=events,
                refused=refused,
                message=message or "; ".join(describe_event(e) for e in events),
                hands=tuple(deal.hands),
                table=table_mask,
                table_seat=table_seat,
                table_name=play_name(classify_mask(table_mask, deal.tables), deal.tables) if table_mask else "",
                to_act=deal.to_act,
                trick=run.trick,
                trick_moves=tuple(run.trick_moves),
                deal_over=over,
                winner=deal.winner,
                deal_scores=tuple(deal.scores) if over else (),
                totals=totals,
                empty_seats=tuple(sorted(run.empty)),
            )
        )

    def illegal(self, record: DealLog, index: int, action: Action | None, reason: str, message: str) -> NoReturn:
        line = action.line if action else record.line
        who = f"action {index + 1} ({action.text()!r})" if action else f"after action {index}"
        self.stop(
            VerdictKind.ILLEGAL_MOVE,
            f"{who}: {reason}: {message}",
            deal_number=record.number,
            index=index,
            step=len(self.steps) if self.views else -1,
            line=line,
            reason=reason,
        )

    def play_deal(self, index: int, record: DealLog, empty: set[int], previous: DealLog | None) -> None:
        dealt = self.dealt(record)
        context = self.context(index, record, empty, previous)
        deal = Deal.start(self.rules, dealt, context)
        self.events.extend(deal.events)
        run = _DealRun(deal, record, empty)
        self._shown = (0, -1)
        self.view(run, -1, None, deal.events)
        actions = record.actions
        i = 0
        while i < len(actions):
            if not self.views and not run.pending:
                i = self.plain_moves(run, i)
                if i == len(actions):
                    break
            self.actions_checked += 1
            self.step(run, i, actions[i])
            i += 1
        if run.pending:
            self.illegal(
                record,
                len(actions),
                None,
                "auto-pass-missing",
                f"the rules pass for {_seat(run.pending[0].seat)} automatically, but the actions stop",
            )
        self.check_result(record, deal)

    def plain_moves(self, run: _DealRun, start: int) -> int:
        """The common case, no views wanted and no auto-pass due: do the plain plays and passes from
        action ``start`` on, in one tight loop; return the index of the first action :meth:`step`
        must take (the end when none)."""
        deal, actions, events = run.deal, run.record.actions, self.events
        i, end = start, len(actions)
        try:
            while i < end:
                move = _plain_move(actions[i])
                if move is None:
                    break
                produced = deal.do(move)
                i += 1
                events.extend(produced)
                if len(produced) > 1:
                    run.pending = [e for e in produced if isinstance(e, Passed) and e.automatic]
                    if run.pending:
                        break
        except Refusal as refusal:
            self.actions_checked += i - start + 1
            self.illegal(run.record, i, actions[i], refusal.reason.value, refusal.message)
        self.actions_checked += i - start
        return i

    def step(self, run: _DealRun, i: int, action: Action) -> None:
        """One action, every case: a seat change, a due auto-pass, a timed-out turn, a refusal."""
        if action.kind is ActionKind.LEAVE:
            run.empty.add(action.seat)
            self.view(run, i, action, (), message=f"{_seat(action.seat)} left the table")
        elif action.kind is ActionKind.TAKE:
            run.empty.discard(action.seat)
            self.view(run, i, action, (), message=f"{_seat(action.seat)} taken over")
        elif run.pending:
            self.auto_pass(run, i, action)
        else:
            if action.auto:
                self.illegal(run.record, i, action, "auto-pass-unexpected", "no automatic pass is due here")
            if action.timeout:
                self.check_timeout(run, i, action)
            produced = self.attempt(run, i, action)
            if produced is not None:
                self.moved(run, i, action, produced)

    def auto_pass(self, run: _DealRun, i: int, action: Action) -> None:
        """Action ``i`` must be the auto-pass the engine made (``pN pass auto``)."""
        due = run.pending[0]
        if not (action.kind is ActionKind.PASS and action.auto and action.seat == due.seat and not action.refused):
            self.illegal(
                run.record,
                i,
                action,
                "auto-pass-missing",
                f'the rules pass for {_seat(due.seat)} automatically here ("{_seat(due.seat)} pass auto")',
            )
        run.pending.pop(0)
        run.trick_moves.append((action.seat, "pass"))
        events: tuple[Event, ...] = (due,)
        trick_over = not run.pending and run.deal.table is None
        if trick_over:
            # the trick ended with the auto-passes; its TrickEnded belongs to this step
            events = (due, *self._trick_end_after_auto)
        self.view(run, i, action, events)
        if trick_over:
            run.trick += 1
            run.trick_moves = []
            self._shown = (0, -1)

    def check_timeout(self, run: _DealRun, i: int, action: Action) -> None:
        """A timed-out turn must be the engine's timeout move."""
        deal = run.deal
        expected = timeout_move(deal) if not deal.over and deal.to_act == action.seat else None
        if expected is None or str(expected) != action.move_text:
            shown = f"{_seat(action.seat)} {expected}" if expected is not None else "none (not this seat's turn)"
            self.illegal(
                run.record,
                i,
                action,
                "not-the-timeout-move",
                f"a timed-out turn makes the engine's timeout move: {shown}",
            )

    def attempt(self, run: _DealRun, i: int, action: Action) -> tuple[Event, ...] | None:
        """Do a play or pass through the engine: its events, or None for an attempt the file
        records as refused and the rules refuse for the same reason (which changes nothing)."""
        deal = run.deal
        try:
            move = _move_of(action)
            if not action.refused:
                return deal.do(move) if move is not None else deal.do_text(action.seat, " ".join(action.cards))
            if move is not None:
                deal.verify(move)
            else:
                deal.verify_text(action.seat, " ".join(action.cards))
        except Refusal as refusal:
            reason = refusal.reason.value
            if action.refused == reason:
                self.view(run, i, action, (), refused=reason, message=refusal.message)
                return None
            if action.refused:
                self.illegal(
                    run.record,
                    i,
                    action,
                    "wrong-refusal",
                    f"recorded as refused {action.refused}, but the rules refuse it as {reason} ({refusal.message})",
                )
            self.illegal(run.record, i, action, reason, refusal.message)
        self.illegal(
            run.record, i, action, "not-refused", f"recorded as refused {action.refused}, but the rules accept it"
        )

    def moved(self, run: _DealRun, i: int, action: Action, produced: tuple[Event, ...]) -> None:
        """The events of a move the rules accepted: the auto-passes it brings are due next."""
        self.events.extend(produced)
        if len(produced) == 1 and not self.views:
            run.trick_moves.append((action.seat, action.move_text))
            return
        autos = [e for e in produced if isinstance(e, Passed) and e.automatic]
        own = self.own_events(produced, autos)
        run.trick_moves.append((action.seat, action.move_text if action.kind is ActionKind.PLAY else "pass"))
        run.pending = autos
        for event in own:
            if isinstance(event, CardsPlayed):
                self._shown = (event.mask, event.seat)
        self.view(run, i, action, tuple(own))
        if any(isinstance(e, TrickEnded) for e in own):
            run.trick += 1
            run.trick_moves = []
            self._shown = (0, -1)

    def own_events(self, produced: tuple[Event, ...], autos: list[Passed]) -> list[Event]:
        """A move's own events: not its auto-passes, nor a trick's end that follows them (kept for them)."""
        own: list[Event] = []
        self._trick_end_after_auto = []
        for event in produced:
            if isinstance(event, Passed) and event.automatic:
                continue
            if autos and isinstance(event, TrickEnded):
                self._trick_end_after_auto.append(event)
                continue
            own.append(event)
        return own

    def check_result(self, record: DealLog, deal: Deal) -> None:
        result = record.result
        if not deal.over:
            if result is not None:
                self.stop(
                    VerdictKind.RESULT_MISMATCH,
                    f"a result is recorded, but the moves do not finish the deal ({_seat(deal.to_act)} to act)",
                    deal_number=record.number,
                    line=result.line,
                )
            return
        ended = next(e for e in reversed(deal.events) if isinstance(e, DealEnded))
        settlement = ended.settlement
        if result is None:
            self.stop(
                VerdictKind.RESULT_MISMATCH,
                f"the deal ends ({_seat(ended.winner)} wins) but no result is recorded",
                deal_number=record.number,
                line=record.line,
            )
        mismatch = ""
        if result.winner != ended.winner:
            mismatch = f"winner is {_seat(result.winner)} in the file, {_seat(ended.winner)} by the moves"
        elif result.by_dragon != ended.by_dragon:
            mismatch = (
                f"by_dragon is {str(result.by_dragon).lower()} in the file, {str(ended.by_dragon).lower()} by the moves"
            )
        else:
            for mine, true in zip(result.seats, settlement.seats, strict=True):
                for name in ("cards_left", "twos_left", "rate", "multiplier", "penalty", "score"):
                    if getattr(mine, name) != getattr(true, name):
                        mismatch = (
                            f"{_seat(true.seat)}'s {name} is {getattr(mine, name)} in the file, "
                            f"{getattr(true, name)} by the moves"
                        )
                        break
                if mismatch:
                    break
        if mismatch:
            self.stop(VerdictKind.RESULT_MISMATCH, f"result: {mismatch}", deal_number=record.number, line=result.line)
        try:
            self.match = self.match.record(
                DealRecord(
                    record.number, ended.winner, settlement.scores, ended.cards_left, record.code, ended.by_dragon
                )
            )
        except ValueError as exc:
            self.stop(
                VerdictKind.RESULT_MISMATCH,
                f"deal {record.number} cannot be recorded: {exc}",
                deal_number=record.number,
                line=record.line,
            )
        for seat, score in enumerate(settlement.scores):
            self.totals[seat] += score

    # -- the whole log ----------------------------------------------------------------------------

    def run(self) -> None:
        log = self.log
        if log.fingerprint != log.ruleset.fingerprint:
            self.problem(
                VerdictKind.RULESET_MISMATCH,
                f"the ruleset's fingerprint is {log.ruleset.fingerprint}, the file says {log.fingerprint or 'nothing'}",
            )
            return
        empty: set[int] = set(log.deals[0].empty_seats) if log.deals else set()
        previous: DealLog | None = None
        for index, record in enumerate(log.deals):
            if previous is not None and (not self.match.deals or self.match.deals[-1].deal_number != previous.number):
                self.problem(
                    VerdictKind.RESULT_MISMATCH,
                    f"deal {previous.number} is unfinished, yet deal {record.number} follows",
                    deal_number=record.number,
                    line=record.line,
                )
                return
            try:
                self.play_deal(index, record, empty, previous)
            except _Stop:
                return
            self.deals_checked += 1
            previous = record
        result = log.result
        if result is not None:
            match = self.match
            expected = (len(match.deals), match.totals, match.deals_won, match.winners, match.over)
            given = (result.deals, result.totals, result.deals_won, result.winners, result.over)
            names = ("deals", "totals", "deals_won", "winners", "over")
            for name, mine, true in zip(names, given, expected, strict=True):
                if mine != true:
                    self.problem(
                        VerdictKind.RESULT_MISMATCH,
                        f"match result: {name} is {_show(mine)} in the file, {_show(true)} by the deals",
                        line=result.line,
                    )
                    return
        elif self.match.deals:
            self.problem(VerdictKind.RESULT_MISMATCH, "the match result ([result]) is missing")


def _show(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def audit_log(
    log: GameLog,
    key: bytes | Sequence[bytes] | None = None,
    *,
    views: bool = True,
    require_signature: bool = False,
) -> AuditVerdict:
    """Re-run ``log`` through the engine and check its results, chain and signature.

    ``key``: the key (bytes) to verify the signature with, or several (key rotation: the signature
    is valid when any of them made it); ``views``: build the per-step
    views (skip them for bulk audits); ``require_signature``: an unsigned file is ``BAD_SIGNATURE``.
    A log out of shape (:func:`~.validate.validate_log`: one a replay file could not say) is
    ``FORMAT_ERROR``, however it was built.
    """
    try:
        validate_log(log)
    except ReplayFormatError as error:
        return format_error_verdict(error)
    return _audit(log, key, views, require_signature)


def _audit(log: GameLog, key: bytes | Sequence[bytes] | None, views: bool, require_signature: bool) -> AuditVerdict:
    """:func:`audit_log` of a log known to be in shape (validated, or read by ``loads``, which
    checks the same rules on the text)."""
    auditor = _Auditor(log, views)
    auditor.run()
    problems = auditor.problems
    chain, head = chain_problems(log)
    problems.extend(chain)
    status = check_signature(log, key, head, require_signature, problems)
    kind = problems[0].kind if problems else VerdictKind.VALID
    return AuditVerdict(
        kind=kind,
        problems=tuple(problems),
        signature=status,
        events=tuple(auditor.events),
        steps=tuple(auditor.steps),
        deals_checked=auditor.deals_checked,
        actions_checked=auditor.actions_checked,
        totals=tuple(auditor.totals),
    )


def audit_text(
    text: str,
    key: bytes | Sequence[bytes] | None = None,
    *,
    views: bool = False,
    require_signature: bool = False,
    limits: ReplayLimits = DEFAULT_LIMITS,
) -> AuditVerdict:
    """Parse (within ``limits``) and audit a replay file's text; a file that does not parse is
    ``FORMAT_ERROR``."""
    try:
        log = loads(text, limits)
    except ReplayFormatError as exc:
        return format_error_verdict(exc)
    return _audit(log, key, views, require_signature)


__all__ = [
    "AuditVerdict",
    "Problem",
    "SignatureStatus",
    "StepView",
    "VerdictKind",
    "audit_log",
    "audit_text",
    "describe_event",
    "format_error_verdict",
]
