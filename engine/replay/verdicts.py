"""What an audit says: the verdict (:class:`AuditVerdict`, its :class:`VerdictKind` and every
:class:`Problem`), the per-step views a replay viewer shows (:class:`StepView`), and an engine
event in words (:func:`describe_event`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .. import Event
from .model import ReplayFormatError


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


def describe_event(event: Event) -> str:
    """An event in words, seats named p1..pN as in the replay file: the event's own sentence."""
    return event.describe()


def format_error_verdict(error: ReplayFormatError) -> AuditVerdict:
    """The ``FORMAT_ERROR`` verdict of a text that ``loads`` refused with ``error`` (a caller that
    has parsed the text already need not parse it again for its verdict)."""
    problem = Problem(VerdictKind.FORMAT_ERROR, error.message, line=error.line)
    return AuditVerdict(VerdictKind.FORMAT_ERROR, (problem,), SignatureStatus.UNSIGNED, (), (), 0, 0, ())
