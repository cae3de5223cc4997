"""Audit verdicts: :class:`~bigtwo.engine.replay.AuditVerdict` -> ``bigtwo.v1.AuditLogResponse``."""

from __future__ import annotations

from typing import cast

from bigtwo.engine.replay import AuditVerdict, GameLog, VerdictKind
from bigtwo.v1 import service_pb2 as api

from .cards import card_set
from .events import events_to_pb
from .replay import move_index


def verdict_kind_to_pb(kind: VerdictKind) -> api.VerdictKind:
    """A replay ``VerdictKind`` (``illegal-move``) as the API enum (``VERDICT_KIND_ILLEGAL_MOVE``)."""
    return cast(api.VerdictKind, api.VerdictKind.Value("VERDICT_KIND_" + kind.value.upper().replace("-", "_")))


def audit_to_pb(verdict: AuditVerdict, log: GameLog | None, view_seat: int | None) -> api.AuditLogResponse:
    """The verdict of an audit of ``log`` (None: the text did not parse). Events and steps carry no
    hand but ``view_seat``'s (none when it is None)."""
    out = api.AuditLogResponse(
        kind=verdict_kind_to_pb(verdict.kind),
        signature=verdict.signature.value,
        deals_checked=verdict.deals_checked,
        actions_checked=verdict.actions_checked,
        totals=verdict.totals,
    )
    records = {record.number: record for record in log.deals} if log is not None else {}
    for problem in verdict.problems:
        item = out.problems.add(
            kind=verdict_kind_to_pb(problem.kind),
            message=problem.message,
            deal_number=max(0, problem.deal_number),
            line=max(0, problem.line),
            reason_id=problem.reason,
        )
        if problem.index >= 0:
            item.action_index = problem.index
            record = records.get(problem.deal_number)
            if record is not None:
                item.move_index = move_index(record, problem.index)
    if log is None:
        return out
    out.events.extend(events_to_pb(verdict.events, log.ruleset, view_seat))
    for view in verdict.steps:
        step = out.steps.add(
            step=view.step,
            deal_number=view.deal_number,
            text=view.text,
            refused=view.refused,
            to_act=view.to_act,
            table=card_set(view.table),
            cards_left=[hand.bit_count() for hand in view.hands],
            deal_over=view.deal_over,
            deal_scores=view.deal_scores,
            totals=view.totals,
        )
        if view.action_index >= 0:
            step.action_index = view.action_index
        if view.actor >= 0:
            step.actor = view.actor
        if view.deal_over and view.winner >= 0:
            step.winner = view.winner
        if view_seat is not None and view_seat < len(view.hands):
            step.hand.CopyFrom(card_set(view.hands[view_seat]))
    return out


__all__ = ["audit_to_pb", "verdict_kind_to_pb"]
