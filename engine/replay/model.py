"""The replay file's data model: frozen values for a whole match (:class:`GameLog`), its deals,
actions and results, and :class:`ReplayFormatError`, the one error a replay text is refused with.
Pure values: reading and writing the text are :mod:`.reader` and :mod:`.canonical`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .. import Ruleset, SeatSettlement

FORMAT_VERSION = "bigtwo-replay/1"
SIGNATURE_SCHEME = "hmac-sha256"


class ReplayFormatError(ValueError):
    """A replay file that cannot be read; ``line`` (1-based, 0 when unknown) says where."""

    MESSAGE_CHARS = 320
    """Longest message: one quoting a long value (a 2,000-character option value, a hand of
    brackets) is cut in its middle, which keeps what was wrong and what is allowed."""

    def __init__(self, message: str, line: int = 0) -> None:
        if len(message) > self.MESSAGE_CHARS:
            message = f"{message[:200]} … {message[-110:]}"
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


# -- the data model -------------------------------------------------------------------------------


class ActionKind(StrEnum):
    PLAY = "play"
    PASS = "pass"
    LEAVE = "left"
    TAKE = "taken"


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who sits in a seat: a person or a bot (with its level)."""

    name: str
    kind: str = "human"
    """``human`` or ``bot``."""
    level: int | str | None = None

    @property
    def label(self) -> str:
        if self.kind == "bot":
            return f"bot:{self.level}" if self.level is not None else "bot"
        return self.kind


@dataclass(frozen=True, slots=True)
class Action:
    """One line of a deal's ``actions``: a play, a pass, a refused attempt, or a seat change."""

    seat: int
    kind: ActionKind
    cards: tuple[str, ...] = ()
    """Canonical card texts (``3D``), sorted; the raw tokens of a refused attempt holding a bad card."""
    auto: bool = False
    timeout: bool = False
    refused: str = ""
    """The refusal reason id (RULES.md) when the rules refused this attempt."""
    comment: str = ""
    taker: SeatInfo | None = None
    line: int = field(default=0, compare=False)
    canonical: str = field(default="", compare=False, repr=False)
    """The canonical text, when already known (a parsed action keeps it: the hash chain reads it)."""

    @property
    def is_move(self) -> bool:
        return self.kind in (ActionKind.PLAY, ActionKind.PASS)

    @property
    def move_text(self) -> str:
        return "pass" if self.kind is ActionKind.PASS else " ".join(self.cards)

    def text(self) -> str:
        """The canonical line (without quotes)."""
        if self.canonical:
            return self.canonical
        parts = [f"p{self.seat + 1}"]
        if self.kind is ActionKind.LEAVE:
            parts.append("left")
        elif self.kind is ActionKind.TAKE:
            assert self.taker is not None
            parts += ["taken", self.taker.label]
            if self.taker.name:
                parts.append(self.taker.name)
        else:
            parts.append(self.move_text)
            if self.auto:
                parts.append("auto")
            if self.timeout:
                parts.append("timeout")
            if self.refused:
                parts += ["refused", self.refused]
        if self.comment:
            parts += ["#", self.comment]
        return " ".join(parts)

    def __str__(self) -> str:
        return self.text()


class _LineCopy:
    """An :class:`Action`'s twin without ``frozen``: the same slots, filled by plain assignments,
    then given the class :class:`Action`. Reading a file makes one action a line from the few
    hundred different texts a match has; the frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` a field) costs three times as much, and was most of the time a large
    file took to read. The result is an ordinary, equal and immutable :class:`Action`."""

    __slots__ = Action.__slots__

    def __init__(self, action: Action, line: int) -> None:
        self.seat = action.seat
        self.kind = action.kind
        self.cards = action.cards
        self.auto = action.auto
        self.timeout = action.timeout
        self.refused = action.refused
        self.comment = action.comment
        self.taker = action.taker
        self.line = line
        self.canonical = action.canonical


def _at_line(action: Action, line: int) -> Action:
    """``action`` as read on ``line`` (``dataclasses.replace(action, line=line)``, but cheap)."""
    copy: Any = _LineCopy(action, line)
    copy.__class__ = Action
    return copy  # type: ignore[no-any-return]


SeatResult = SeatSettlement
"""One line of a deal's settlement card: the engine's own record."""


@dataclass(frozen=True, slots=True)
class DealResult:
    winner: int
    seats: tuple[SeatResult, ...]
    by_dragon: bool = False
    line: int = field(default=0, compare=False)

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(seat.score for seat in self.seats)


@dataclass(frozen=True, slots=True)
class DealLog:
    number: int
    code: str = ""
    """The deal code (canonical text), or "" for hands dealt elsewhere."""
    hands: tuple[str, ...] = ()
    """Each seat's starting hand (canonical text); may be empty when a code is given."""
    previous_winner: int | None = None
    empty_seats: tuple[int, ...] = ()
    comment: str = ""
    actions: tuple[Action, ...] = ()
    result: DealResult | None = None
    chain: str = ""
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class MatchResult:
    deals: int
    totals: tuple[int, ...]
    deals_won: tuple[int, ...]
    winners: tuple[int, ...]
    over: bool
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class GameLog:
    """A whole match as the replay file records it."""

    ruleset: Ruleset
    seats: tuple[SeatInfo, ...]
    deals: tuple[DealLog, ...] = ()
    result: MatchResult | None = None
    fingerprint: str = ""
    """The ruleset fingerprint as written (checked against ``ruleset.fingerprint``)."""
    comment: str = ""
    chain: str = ""
    signature: str = ""
    version: str = FORMAT_VERSION

    @property
    def players(self) -> int:
        return self.ruleset.players

    @property
    def signed(self) -> bool:
        return bool(self.signature)

    def seat_name(self, seat: int) -> str:
        return self.seats[seat].name if 0 <= seat < len(self.seats) else f"p{seat + 1}"
