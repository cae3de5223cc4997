"""Every way the engine says no, as specific exception classes (all ``ValueError``).

A refused move raises a :class:`Refusal` subclass carrying a :class:`Reason` (the stable id of
RULES.md's refusal table) and a sentence a player understands. Input that is not about a move at
all (an unknown option, a mistyped deal code, a broken log) raises its own ``ValueError`` subclass.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """RULES.md's refusal reasons, in the order they are checked (first match is named)."""

    GAME_OVER = "game-over"
    NOT_YOUR_TURN = "not-your-turn"
    CANNOT_PASS_LEADING = "cannot-pass-leading"
    BAD_CARD = "bad-card"
    NOT_IN_HAND = "not-in-hand"
    MUST_INCLUDE_OPENING_CARD = "must-include-opening-card"
    WRONG_SIZE = "wrong-size"
    NOT_A_COMBINATION = "not-a-combination"
    NO_TWO_IN_STRAIGHTS = "no-two-in-straights"
    NO_FLUSH = "no-flush"
    NO_LONE_TRIPLE = "no-lone-triple"
    DOES_NOT_BEAT = "does-not-beat"
    SINGLE_TWO_LAST = "single-two-last"
    MUST_PLAY_HIGHEST_SINGLE = "must-play-highest-single"

    def __str__(self) -> str:
        return self.value


class Refusal(ValueError):
    """A move the rules refuse. ``reason`` is stable; ``message`` is for people."""

    reason: Reason = Reason.NOT_A_COMBINATION

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class GameOverError(Refusal):
    reason = Reason.GAME_OVER


class NotYourTurnError(Refusal):
    reason = Reason.NOT_YOUR_TURN


class CannotPassLeadingError(Refusal):
    reason = Reason.CANNOT_PASS_LEADING


class BadCardError(Refusal):
    """Text that is not a card. Also raised by the card parser outside any move."""

    reason = Reason.BAD_CARD

    def __init__(self, text: str, message: str) -> None:
        super().__init__(message)
        self.text = text


class NotInHandError(Refusal):
    reason = Reason.NOT_IN_HAND


class MustIncludeOpeningCardError(Refusal):
    reason = Reason.MUST_INCLUDE_OPENING_CARD


class WrongSizeError(Refusal):
    reason = Reason.WRONG_SIZE


class NotACombinationError(Refusal):
    reason = Reason.NOT_A_COMBINATION


class NoTwoInStraightsError(Refusal):
    reason = Reason.NO_TWO_IN_STRAIGHTS


class NoFlushError(Refusal):
    reason = Reason.NO_FLUSH


class NoLoneTripleError(Refusal):
    reason = Reason.NO_LONE_TRIPLE


class DoesNotBeatError(Refusal):
    reason = Reason.DOES_NOT_BEAT


class SingleTwoLastError(Refusal):
    reason = Reason.SINGLE_TWO_LAST


class MustPlayHighestSingleError(Refusal):
    reason = Reason.MUST_PLAY_HIGHEST_SINGLE


REFUSAL_CLASSES: dict[Reason, type[Refusal]] = {
    cls.reason: cls
    for cls in (
        GameOverError,
        NotYourTurnError,
        CannotPassLeadingError,
        BadCardError,
        NotInHandError,
        MustIncludeOpeningCardError,
        WrongSizeError,
        NotACombinationError,
        NoTwoInStraightsError,
        NoFlushError,
        NoLoneTripleError,
        DoesNotBeatError,
        SingleTwoLastError,
        MustPlayHighestSingleError,
    )
}


class RulesetError(ValueError):
    """An unknown option, an unknown value, or options that cannot go together."""

    def __init__(self, message: str, *, option: str = "", valid: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.option = option
        self.valid = valid


class DealCodeError(ValueError):
    """A deal code that is malformed or fails its check character: it is never dealt."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class DealError(ValueError):
    """An explicit deal that cannot be played (wrong hand sizes, shared cards, ...)."""


class EventLogError(ValueError):
    """An event log that does not fold into a valid state (out of order, wrong deal, ...)."""
