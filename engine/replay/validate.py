"""One validator for the shape of a replay log, whoever built it: :func:`loads` from a text, the
:class:`~.writer.ReplayWriter`, or the API's per-deal ``GameLog`` converted by ``bigtwo.codec``.

:func:`validate_log` checks what a replay file can say at all for the log's ruleset (the seats,
each deal's header, every action, the results: seats in range, one entry a seat, an auto-pass
only as a pass, a known refusal reason, a taker for a taken seat); whether the moves are legal
and the results true is the audit's work. The audit runs it first, so any log, however built,
gets a verdict rather than an exception. The reader states the same rules on the text, with the
same sentences (:func:`not_a_seat`, :func:`only_a_pass_is_automatic`, :func:`unknown_reason`).
:func:`dealt_cards` is the cards a deal record deals, its code and its hands agreeing.
"""

from __future__ import annotations

from .. import DealCode, DealError, DealtCards, Reason, Ruleset, deal_from_code, explicit_deal, mask_text
from .model import Action, ActionKind, DealLog, DealResult, GameLog, MatchResult, ReplayFormatError

REASONS = frozenset(reason.value for reason in Reason)
"""The refusal reason ids (RULES.md) an action may be recorded as refused with."""


class DealMismatch(ValueError):
    """A deal record whose hands are no deal, or differ from the ones its code deals."""


def quoted(text: str) -> str:
    """``repr(text)``, cut after 60 characters: an error names the action, it does not echo a page."""
    return repr(text) if len(text) <= 60 else repr(text[:60]) + f"... ({len(text)} characters)"


def not_a_seat(text: str, actor: str, players: int) -> str:
    return f"action {quoted(text)}: {actor} is not a seat at this {players}-player table"


def only_a_pass_is_automatic(text: str) -> str:
    return f"action {quoted(text)}: only a pass can be automatic"


def unknown_reason(text: str, reason: str) -> str:
    return f"action {quoted(text)}: {reason!r} is not a refusal reason; valid: {', '.join(sorted(REASONS))}"


def _seat_in_range(seat: int | None, players: int) -> bool:
    return seat is None or 0 <= seat < players


def _action_problem(action: Action, players: int) -> str:
    """What is wrong with ``action`` at a ``players``-seat table ("" when nothing): its text is
    built only for a message."""
    if not 0 <= action.seat < players:
        return not_a_seat(action.text(), f"p{action.seat + 1}", players)
    if action.kind is ActionKind.PLAY or action.kind is ActionKind.PASS:
        return _move_problem(action)
    return _seat_change_problem(action)


def _move_problem(action: Action) -> str:
    """What is wrong with a play or pass whose seat is in range ("" when nothing)."""
    kind = action.kind
    if kind is ActionKind.PLAY and not action.cards:
        return f"action {quoted(action.text())} names no move (cards or pass)"
    if action.auto and kind is ActionKind.PLAY:
        return only_a_pass_is_automatic(action.text())
    if action.refused and action.refused not in REASONS:
        return unknown_reason(action.text(), action.refused)
    return ""


def _seat_change_problem(action: Action) -> str:
    """What is wrong with a seat change (taken, left, ...) whose seat is in range ("" when nothing)."""
    if action.cards or action.auto or action.timeout or action.refused:
        return f"action {quoted(action.text())}: a seat change has no cards, auto, timeout or refusal"
    if action.kind is ActionKind.TAKE and (action.taker is None or action.taker.kind not in ("human", "bot")):
        return f"action {quoted(action.text())}: write 'taken human NAME' or 'taken bot:LEVEL NAME'"
    return ""


def validate_action(action: Action, players: int) -> None:
    """Raise :class:`ReplayFormatError` (at the action's line) when ``action`` is not one a replay
    file can record at a ``players``-seat table."""
    problem = _action_problem(action, players)
    if problem:
        raise ReplayFormatError(problem, action.line)


def _validate_deal(deal: DealLog, players: int) -> None:
    _validate_deal_header(deal, players)
    play, pass_ = ActionKind.PLAY, ActionKind.PASS
    for action in deal.actions:
        # A plain play or pass in range, most of a log, is in shape: this test is all it costs.
        kind = action.kind
        plain = kind is pass_ or (kind is play and action.cards)
        if not plain or action.refused or action.auto or not 0 <= action.seat < players:
            validate_action(action, players)
    if deal.result is not None:
        _validate_deal_result(deal.result, players)


def _validate_deal_header(deal: DealLog, players: int) -> None:
    """A deal's own keys: its number, its code or hands, the seats it names."""
    line = deal.line
    if deal.number < 1:
        raise ReplayFormatError(f"number must be at least 1, not {deal.number}", line)
    if not deal.code and not deal.hands:
        raise ReplayFormatError("a deal needs its code or its hands (or both)", line)
    if deal.hands and len(deal.hands) != players:
        raise ReplayFormatError(f"{len(deal.hands)} hands given; this table seats {players}", line)
    if not all(_seat_in_range(seat, players) for seat in (deal.previous_winner, *deal.empty_seats)):
        raise ReplayFormatError(f"previous_winner and empty_seats name seats p1 .. p{players}", line)


def _validate_deal_result(result: DealResult, players: int) -> None:
    """A deal's result: one entry a seat, and a winner who is a seat."""
    if len(result.seats) != players:
        raise ReplayFormatError(f"the result has {len(result.seats)} seats; this table seats {players}", result.line)
    if not _seat_in_range(result.winner, players):
        raise ReplayFormatError(f"the result's winner is not a seat: write p1 .. p{players}", result.line)


def dealt_cards(record: DealLog, rules: Ruleset) -> DealtCards:
    """The cards ``record`` deals: by its code or by its hands, which must agree when it gives
    both; :class:`DealMismatch` says what differs."""
    from_code = from_hands = None
    if record.code:
        from_code = deal_from_code(DealCode.parse(record.code), rules)
    if record.hands:
        try:
            from_hands = explicit_deal(list(record.hands), rules)
        except DealError as exc:
            raise DealMismatch(f"the hands are not a deal: {exc}") from None
    if from_code is not None and from_hands is not None:
        for seat, (a, b) in enumerate(zip(from_code.hands, from_hands.hands, strict=True)):
            if a != b:
                raise DealMismatch(
                    f"deal code {record.code} deals p{seat + 1} {mask_text(a)!r}, but the file gives {mask_text(b)!r}"
                )
    dealt = from_code or from_hands
    assert dealt is not None
    return dealt


def _validate_match_result(result: MatchResult, players: int) -> None:
    if len(result.totals) != players or len(result.deals_won) != players:
        raise ReplayFormatError(f"totals and deals_won have one entry a seat; this table seats {players}", result.line)
    if not all(_seat_in_range(seat, players) for seat in result.winners):
        raise ReplayFormatError(f"the match result names a winner who is not p1 .. p{players}", result.line)


def validate_log(log: GameLog) -> None:
    """Raise :class:`ReplayFormatError`, naming the line where the log was read from a text (0
    otherwise), at the first part of ``log`` a replay file could not say for its ruleset: seats,
    deal headers, actions (:func:`validate_action`) and results. Linear in the log, a few
    comparisons an action."""
    players = log.ruleset.players
    if len(log.seats) != players:
        raise ReplayFormatError(f"{len(log.seats)} [[seats]] given; this ruleset seats {players} players")
    for seat in log.seats:
        if seat.kind not in ("human", "bot"):
            raise ReplayFormatError(f"kind is 'human' or 'bot', not {seat.kind!r}")
    for deal in log.deals:
        _validate_deal(deal, players)
    if log.result is not None:
        _validate_match_result(log.result, players)


__all__ = ["REASONS", "DealMismatch", "dealt_cards", "validate_action", "validate_log"]
