"""How seats and results are told to people: one numbering, ``p1`` .. ``pN`` (``p1`` is engine seat 0), the
numbering replay files use, on every screen, page and message; the API stays 0-based.

Names in a replay file must tell the seats apart on their own (a trick line in the HTML replay
shows only who played), so :func:`distinct_names` suffixes repeated names with their seat
(``good bot (p2)``). :func:`seat_label` is what a screen shows: the seat first, then the name
without that suffix (``p2 good bot``), so columns line up and nothing is said twice.
:func:`how_to_win` says in words who wins a match under a ruleset.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from .. import Ruleset
from ..cards import seat_ref
from ..rules import Penalty, Settlement

_SUFFIX = re.compile(r"\s*\(p(\d+)\)$")


def distinct_names(names: Sequence[str]) -> tuple[str, ...]:
    """The names with every repeated one suffixed by its seat: ``good bot (p2)``, ``good bot (p3)``."""
    counts = Counter(name.strip().casefold() for name in names)
    out = []
    for seat, name in enumerate(names):
        repeated = counts[name.strip().casefold()] > 1
        out.append(f"{name} ({seat_ref(seat)})" if repeated and not _own_suffix(seat, name) else name)
    return tuple(out)


def _own_suffix(seat: int, name: str) -> bool:
    found = _SUFFIX.search(name)
    return found is not None and int(found.group(1)) == seat + 1


def seat_label(seat: int, name: str) -> str:
    """``p2 good bot`` for seat 1 named ``good bot`` or ``good bot (p2)``; ``p2`` for an unnamed seat."""
    ref = seat_ref(seat)
    base = _SUFFIX.sub("", name) if _own_suffix(seat, name) else name
    base = base.strip()
    return ref if not base or base == ref else f"{ref} {base}"


def seat_labels(names: Sequence[str]) -> tuple[str, ...]:
    """:func:`seat_label` of every seat."""
    return tuple(seat_label(seat, name) for seat, name in enumerate(names))


def how_to_win(ruleset: Ruleset) -> str:
    """``the lowest total wins`` (penalty settlement), ``the highest total wins`` (zero-sum), or
    ``the most deals won wins`` (no penalty): the engine's :attr:`Match.winners` in words."""
    if ruleset.penalty is Penalty.NONE:
        return "the most deals won wins"
    if ruleset.settlement is Settlement.ZERO_SUM:
        return "the highest total wins"
    return "the lowest total wins"


__all__ = ["distinct_names", "how_to_win", "seat_label", "seat_labels", "seat_ref"]
