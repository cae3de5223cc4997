"""The bounds the service's fast tables are built for, each checked once, where the table is built.

The per-move code indexes tables instead of computing (a varint by length, a field's encoding by
seat, a state layout by number of seats) and keys memos by engine records. Those tables are right
only inside bounds that other code guarantees: the engine's rules (how many seats a deal has), the
token layout (how long a token grows), the engine's events (records of different types never equal).
Each bound is checked here against what guarantees it, at import, so a change elsewhere that breaks
one fails at start-up with :class:`BoundError`, not in an answer.
"""

from __future__ import annotations

from bigtwo.engine import LastCard, Ruleset, RulesetError, TrickEnded

MAX_SEATS = 4
"""Seats a deal has at most: tables by seat have this many entries (:func:`check_seats`)."""
SMALL_LENGTH = 1 << 14
"""Lengths below this are written from a table of one- and two-byte varints (16 KiB): every part
of a move's answer, and the answer itself, must be shorter (:func:`check_length`)."""


class BoundError(ValueError):
    """A bound a table was built for does not hold; ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def seat_counts() -> tuple[int, ...]:
    """The numbers of seats the engine's rules allow, asked of the engine itself."""
    try:
        Ruleset(players=0)
    except RulesetError as error:
        if error.option == "players" and error.valid:
            return tuple(int(value) for value in error.valid)
    raise BoundError("the engine no longer names the numbers of seats it allows")


def check_seats(entries: int) -> None:
    """Raise :class:`BoundError` unless a table of ``entries`` entries by seat covers every seat of
    every deal the engine allows."""
    most = max(seat_counts())
    if most > entries:
        raise BoundError(f"the engine allows {most} seats; tables by seat hold {entries}")


def check_length(what: str, longest: int) -> None:
    """Raise :class:`BoundError` unless ``longest`` bytes (the most ``what`` can take) is below
    :data:`SMALL_LENGTH`."""
    if longest >= SMALL_LENGTH:
        raise BoundError(f"{what} may take {longest} bytes; lengths are written for below {SMALL_LENGTH}")


def check_events_compare_by_type() -> None:
    """Raise :class:`BoundError` unless engine events of different types with equal fields are
    unequal: memos keyed by events (the wire's small events) would hand one event's bytes to the
    other. Named tuples compare as plain tuples; ``bigtwo.engine.events`` makes them compare by
    type, and this checks that it still does."""
    trick: object = TrickEnded(1)
    last_card: object = LastCard(1)
    if trick == last_card or {trick: None}.keys() & {last_card}:
        raise BoundError("engine events of different types with equal fields compare equal")


check_seats(MAX_SEATS)

__all__ = [
    "MAX_SEATS",
    "SMALL_LENGTH",
    "BoundError",
    "check_events_compare_by_type",
    "check_length",
    "check_seats",
    "seat_counts",
]
