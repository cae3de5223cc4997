"""Audit a replay: re-run every deal through the engine and say whether the file is true.

:func:`audit_log` is pure (no I/O): log in, :class:`AuditVerdict` out. It is what the service's
Replay/Audit RPC calls. Checks, in the order a problem is reported:

1. the ruleset fingerprint (``RULESET_MISMATCH``);
2. per deal, in order: the hands against the deal code (``DEAL_CODE_MISMATCH``), the deal context
   against the deals before it (``CONTEXT_MISMATCH``), every action (``ILLEGAL_MOVE``: the first
   move the rules refuse, a refusal the rules would not make, a missing or invented auto-pass, a
   timed-out turn that is not the timeout move), the result against the moves (``RESULT_MISMATCH``);
3. the match result (``RESULT_MISMATCH``);
4. the hash chain (``BROKEN_CHAIN``) and, with a key, the signature (``BAD_SIGNATURE``).

The verdict's kind is the first problem found (``VALID`` when none); every problem is listed.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .. import (
    ALL_CARDS,
    CardsPlayed,
    Deal,
    DealCode,
    DealContext,
    DealEnded,
    DealError,
    DealRecord,
    DealStarted,
    DealtCards,
    DragonRevealed,
    Event,
    LastCard,
    Match,
    Move,
    Passed,
    Refusal,
    Ruleset,
    TrickEnded,
    classify_mask,
    deal_from_code,
    explicit_deal,
    mask_text,
    play_name,
    timeout_move,
)
from ..cards import parse_cards
from .canonical import chain_heads, signature_for
from .limits import DEFAULT_LIMITS, ReplayLimits
from .model import SIGNATURE_SCHEME, Action, ActionKind, DealLog, GameLog, ReplayFormatError
from .reader import loads


class VerdictKind(StrEnum):
    VALID = "valid"
    FORMAT_ERROR = "format-error"
    RULESET_MISMATCH = "ruleset-mismatch"
    DEAL_CODE_MISMATCH = "deal-code-mismatch"
    CONTEXT_MISMATCH = "context-mismatch"
    ILLEGAL_MOVE = "illegal-move"
    RESULT_MISMATCH = "result-mismatch"
    BROKEN_CHAIN = "broken-chain"
    BAD_SIGNATURE = "bad-signature"

    def __str__(self) -> str:
        return self.value


class SignatureStatus(StrEnum):
    VALID = "valid"
    BAD = "bad"
    UNSIGNED = "unsigned"
    NOT_CHECKED = "not-checked"
    """Signed, but no key was given."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Problem:
    kind: VerdictKind
    message: str
    deal_number: int = 0
    index: int = -1
    """The action's index within its deal (0-based), for ``ILLEGAL_MOVE``; else -1."""
    step: int = -1
    """The global step index (see :class:`StepView`), or -1."""
    line: int = 0
    reason: str = ""
    """A refusal reason id (RULES.md) or one of ``wrong-refusal``, ``not-refused``, ``auto-pass-missing``,
    ``auto-pass-unexpected``, ``not-the-timeout-move``."""

    def describe(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        deal = f"deal {self.deal_number}: " if self.deal_number else ""
        return f"{where}{deal}{self.message}"


@dataclass(frozen=True, slots=True)
class StepView:
    """What the table looks like after one step (a deal's start, or one action), seen by everyone:
    a replay is public, so every hand is shown."""

    step: int
    deal_number: int
    action_index: int
    """Index of the action within its deal; -1 for the deal's start."""
    line: int
    actor: int
    """The seat acting, or -1 for a deal's start."""
    text: str
    """The action's canonical text (or ``deal N``)."""
    events: tuple[Event, ...]
    refused: str
    message: str
    hands: tuple[int, ...]
    table: int
    """Mask of the cards on the table (0 when the trick is fresh)."""
    table_seat: int
    table_name: str
    to_act: int
    trick: int
    trick_moves: tuple[tuple[int, str], ...]
    """The current trick so far: (seat, ``3D 3S`` or ``pass``), refusals left out."""
    deal_over: bool
    winner: int
    deal_scores: tuple[int, ...]
    totals: tuple[int, ...]
    """Match totals after this step (a finished deal's scores included)."""
    empty_seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    kind: VerdictKind
    problems: tuple[Problem, ...]
    signature: SignatureStatus
    events: tuple[Event, ...]
    """Every engine event of every deal replayed, in order (``DealStarted`` opens each deal)."""
    steps: tuple[StepView, ...]
    deals_checked: int
    actions_checked: int
    totals: tuple[int, ...]

    @property
    def ok(self) -> bool:
        return self.kind is VerdictKind.VALID

    @property
    def first(self) -> Problem | None:
        return self.problems[0] if self.problems else None

    def summary(self) -> str:
        if self.ok:
            sig = {
                SignatureStatus.VALID: "signature valid",
                SignatureStatus.UNSIGNED: "unsigned",
                SignatureStatus.NOT_CHECKED: "signed (no key given: signature not checked)",
                SignatureStatus.BAD: "signature bad",
            }[self.signature]
            return f"valid: {self.deals_checked} deals, {self.actions_checked} actions; {sig}"
        assert self.first is not None
        return f"{self.kind.value}: {self.first.describe()}"


_CARDS = {str(card): card for card in ALL_CARDS}


class _Stop(Exception):
    """Replay cannot go on (the problem is already recorded)."""


def _seat(seat: int) -> str:
    return f"p{seat + 1}"


def describe_event(event: Event) -> str:
    """An event in words, seats named p1..pN as in the replay file."""
    if isinstance(event, DealStarted):
        return f"deal {event.deal_number}: {_seat(event.leader)} leads"
    if isinstance(event, CardsPlayed):
        return f"{_seat(event.seat)} plays {mask_text(event.mask)}"
    if isinstance(event, Passed):
        return f"{_seat(event.seat)} passes" + (" (auto)" if event.automatic else "")
    if isinstance(event, TrickEnded):
        return f"trick to {_seat(event.winner)}"
    if isinstance(event, LastCard):
        return f"{_seat(event.seat)}: last card!"
    if isinstance(event, DragonRevealed):
        return f"{_seat(event.seat)} shows a dragon ({mask_text(event.hand)})"
    return f"{_seat(event.winner)} wins the deal" + (" with a dragon" if event.by_dragon else "")


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

    # -- one deal ---------------------------------------------------------------------------------

    def dealt(self, record: DealLog) -> DealtCards:
        rules = self.rules
        from_code = from_hands = None
        if record.code:
            from_code = deal_from_code(DealCode.parse(record.code), rules)
        if record.hands:
            try:
                from_hands = explicit_deal(list(record.hands), rules)
            except DealError as exc:
                self.problem(
                    VerdictKind.DEAL_CODE_MISMATCH,
                    f"the hands are not a deal: {exc}",
                    deal_number=record.number,
                    line=record.line,
                )
                raise _Stop from None
        if from_code is not None and from_hands is not None:
            for seat, (a, b) in enumerate(zip(from_code.hands, from_hands.hands, strict=True)):
                if a != b:
                    self.problem(
                        VerdictKind.DEAL_CODE_MISMATCH,
                        f"deal code {record.code} deals {_seat(seat)} {mask_text(a)!r}, "
                        f"but the file gives {mask_text(b)!r}",
                        deal_number=record.number,
                        line=record.line,
                    )
                    raise _Stop
        dealt = from_code or from_hands
        assert dealt is not None
        return dealt

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
                self.problem(VerdictKind.CONTEXT_MISMATCH, mismatch, deal_number=record.number, line=record.line)
                raise _Stop
        return DealContext(record.number, record.previous_winner, frozenset(record.empty_seats))

    def view(
        self,
        deal: Deal,
        record: DealLog,
        index: int,
        action: Action | None,
        events: tuple[Event, ...],
        trick: int,
        trick_moves: list[tuple[int, str]],
        empty: set[int],
        refused: str = "",
        message: str = "",
    ) -> None:
        if not self.views:
            return
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
                trick=trick,
                trick_moves=tuple(trick_moves),
                deal_over=over,
                winner=deal.winner,
                deal_scores=tuple(deal.scores) if over else (),
                totals=totals,
                empty_seats=tuple(sorted(empty)),
            )
        )

    def illegal(self, record: DealLog, index: int, action: Action | None, reason: str, message: str) -> None:
        line = action.line if action else record.line
        who = f"action {index + 1} ({action.text()!r})" if action else f"after action {index}"
        self.problem(
            VerdictKind.ILLEGAL_MOVE,
            f"{who}: {reason}: {message}",
            deal_number=record.number,
            index=index,
            step=len(self.steps) if self.views else -1,
            line=line,
            reason=reason,
        )
        raise _Stop

    def play_deal(self, index: int, record: DealLog, empty: set[int], previous: DealLog | None) -> None:
        rules = self.rules
        dealt = self.dealt(record)
        context = self.context(index, record, empty, previous)
        deal = Deal.start(rules, dealt, context)
        self.events.extend(deal.events)
        trick = 1
        trick_moves: list[tuple[int, str]] = []
        self._shown = (0, -1)
        self.view(deal, record, -1, None, deal.events, trick, trick_moves, empty)
        pending: list[Passed] = []
        fast = not self.views
        play_kind, pass_kind = ActionKind.PLAY, ActionKind.PASS
        all_events = self.events
        for i, action in enumerate(record.actions):
            self.actions_checked += 1
            if fast and not pending and not (action.auto or action.timeout or action.refused):
                # the common case, no views wanted: a plain play or pass
                kind = action.kind
                try:
                    if kind is pass_kind:
                        produced = deal.do(Move(action.seat, (), True))
                    elif kind is play_kind and all(t in _CARDS for t in action.cards):
                        produced = deal.do(Move(action.seat, tuple(_CARDS[t] for t in action.cards), False))
                    else:
                        produced = None
                except Refusal as refusal:
                    self.illegal(record, i, action, refusal.reason.value, refusal.message)
                if produced is not None:
                    all_events.extend(produced)
                    if len(produced) > 1:
                        pending = [e for e in produced if isinstance(e, Passed) and e.automatic]
                    continue
            if action.kind is ActionKind.LEAVE:
                empty.add(action.seat)
                self.view(
                    deal,
                    record,
                    i,
                    action,
                    (),
                    trick,
                    trick_moves,
                    empty,
                    message=f"{_seat(action.seat)} left the table",
                )
                continue
            if action.kind is ActionKind.TAKE:
                empty.discard(action.seat)
                self.view(
                    deal, record, i, action, (), trick, trick_moves, empty, message=f"{_seat(action.seat)} taken over"
                )
                continue
            if pending:
                due = pending[0]
                if not (
                    action.kind is ActionKind.PASS and action.auto and action.seat == due.seat and not action.refused
                ):
                    self.illegal(
                        record,
                        i,
                        action,
                        "auto-pass-missing",
                        f'the rules pass for {_seat(due.seat)} automatically here ("{_seat(due.seat)} pass auto")',
                    )
                pending.pop(0)
                trick_moves.append((action.seat, "pass"))
                events: tuple[Event, ...] = (due,)
                if not pending and deal.table is None:
                    # the trick ended with the auto-passes; its TrickEnded belongs to this step
                    events = (due, *self._trick_end_after_auto)
                self.view(deal, record, i, action, events, trick, trick_moves, empty)
                if not pending and deal.table is None:
                    trick += 1
                    trick_moves = []
                    self._shown = (0, -1)
                continue
            if action.auto:
                self.illegal(record, i, action, "auto-pass-unexpected", "no automatic pass is due here")
            if action.timeout:
                expected = timeout_move(deal) if not deal.over and deal.to_act == action.seat else None
                if expected is None or str(expected) != action.move_text:
                    shown = (
                        f"{_seat(action.seat)} {expected}" if expected is not None else "none (not this seat's turn)"
                    )
                    self.illegal(
                        record,
                        i,
                        action,
                        "not-the-timeout-move",
                        f"a timed-out turn makes the engine's timeout move: {shown}",
                    )
            try:
                if action.kind is ActionKind.PASS:
                    move = Move.pass_(action.seat)
                    produced = deal.verify(move) if action.refused else deal.do(move)
                else:
                    try:
                        cards = tuple(_CARDS[t] if t in _CARDS else parse_cards(t)[0] for t in action.cards)
                    except (Refusal, IndexError):
                        text = " ".join(action.cards)
                        produced = (
                            deal.verify_text(action.seat, text) if action.refused else deal.do_text(action.seat, text)
                        )
                    else:
                        move = Move.play(action.seat, cards)
                        produced = deal.verify(move) if action.refused else deal.do(move)
            except Refusal as refusal:
                reason = refusal.reason.value
                if action.refused == reason:
                    self.view(
                        deal, record, i, action, (), trick, trick_moves, empty, refused=reason, message=refusal.message
                    )
                    continue
                if action.refused:
                    self.illegal(
                        record,
                        i,
                        action,
                        "wrong-refusal",
                        f"recorded as refused {action.refused}, but the rules refuse it as {reason} "
                        f"({refusal.message})",
                    )
                self.illegal(record, i, action, reason, refusal.message)
            if action.refused:
                self.illegal(
                    record, i, action, "not-refused", f"recorded as refused {action.refused}, but the rules accept it"
                )
            assert isinstance(produced, tuple)
            self.events.extend(produced)
            if len(produced) == 1 and not self.views:
                trick_moves.append((action.seat, action.move_text))
                continue
            own: list[Event] = []
            self._trick_end_after_auto = []
            autos = [e for e in produced if isinstance(e, Passed) and e.automatic]
            for event in produced:
                if isinstance(event, Passed) and event.automatic:
                    continue
                if autos and isinstance(event, TrickEnded):
                    self._trick_end_after_auto.append(event)
                    continue
                own.append(event)
            trick_moves.append((action.seat, action.move_text if action.kind is ActionKind.PLAY else "pass"))
            pending = autos
            for event in own:
                if isinstance(event, CardsPlayed):
                    self._shown = (event.mask, event.seat)
            self.view(deal, record, i, action, tuple(own), trick, trick_moves, empty)
            if any(isinstance(e, TrickEnded) for e in own):
                trick += 1
                trick_moves = []
                self._shown = (0, -1)
        if pending:
            self.illegal(
                record,
                len(record.actions),
                None,
                "auto-pass-missing",
                f"the rules pass for {_seat(pending[0].seat)} automatically, but the actions stop",
            )
        self.check_result(record, deal)

    def check_result(self, record: DealLog, deal: Deal) -> None:
        result = record.result
        if not deal.over:
            if result is not None:
                self.problem(
                    VerdictKind.RESULT_MISMATCH,
                    f"a result is recorded, but the moves do not finish the deal ({_seat(deal.to_act)} to act)",
                    deal_number=record.number,
                    line=result.line,
                )
                raise _Stop
            return
        ended = next(e for e in reversed(deal.events) if isinstance(e, DealEnded))
        settlement = ended.settlement
        if result is None:
            self.problem(
                VerdictKind.RESULT_MISMATCH,
                f"the deal ends ({_seat(ended.winner)} wins) but no result is recorded",
                deal_number=record.number,
                line=record.line,
            )
            raise _Stop
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
            self.problem(
                VerdictKind.RESULT_MISMATCH, f"result: {mismatch}", deal_number=record.number, line=result.line
            )
            raise _Stop
        try:
            self.match = self.match.record(
                DealRecord(
                    record.number, ended.winner, settlement.scores, ended.cards_left, record.code, ended.by_dragon
                )
            )
        except ValueError as exc:
            self.problem(
                VerdictKind.RESULT_MISMATCH,
                f"deal {record.number} cannot be recorded: {exc}",
                deal_number=record.number,
                line=record.line,
            )
            raise _Stop from None
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
    """
    auditor = _Auditor(log, views)
    auditor.run()
    problems = auditor.problems
    per_deal, head = chain_heads(log)
    for record, true in zip(log.deals, per_deal, strict=True):
        if record.chain != true:
            what = "has no chain" if not record.chain else "chain does not match its contents"
            problems.append(
                Problem(
                    VerdictKind.BROKEN_CHAIN,
                    f"{what} (edited after it was written?)",
                    deal_number=record.number,
                    line=record.line,
                )
            )
            break
    else:
        if log.chain != head:
            what = "has no chain" if not log.chain else "chain does not match the file"
            problems.append(Problem(VerdictKind.BROKEN_CHAIN, f"[seal] {what} (edited after it was written?)"))
    if not log.signature:
        status = SignatureStatus.UNSIGNED
        if require_signature:
            problems.append(Problem(VerdictKind.BAD_SIGNATURE, "the file is unsigned"))
    elif not log.signature.startswith(SIGNATURE_SCHEME + ":"):
        status = SignatureStatus.BAD
        problems.append(
            Problem(VerdictKind.BAD_SIGNATURE, f"unknown signature scheme (expected {SIGNATURE_SCHEME}:...)")
        )
    elif not (keys := [key] if isinstance(key, bytes) else list(key or ())):
        status = SignatureStatus.NOT_CHECKED
    elif any(hmac.compare_digest(log.signature, signature_for(head, one)) for one in keys):
        status = SignatureStatus.VALID
    else:
        status = SignatureStatus.BAD
        problems.append(Problem(VerdictKind.BAD_SIGNATURE, "the signature does not match this key and contents"))
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
    return audit_log(log, key, views=views, require_signature=require_signature)


def format_error_verdict(error: ReplayFormatError) -> AuditVerdict:
    """The ``FORMAT_ERROR`` verdict of a text that ``loads`` refused with ``error`` (a caller that
    has parsed the text already need not parse it again for its verdict)."""
    problem = Problem(VerdictKind.FORMAT_ERROR, error.message, line=error.line)
    return AuditVerdict(VerdictKind.FORMAT_ERROR, (problem,), SignatureStatus.UNSIGNED, (), (), 0, 0, ())
