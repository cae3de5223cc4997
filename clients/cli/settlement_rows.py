"""A deal's settlement card as both terminal screens show it (``bigtwo play`` after each deal and
``bigtwo replay``): the same columns, the same legend, the same words, so a person reading one
recognises the other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

COLUMNS = ("seat", "left", "2s", "rate", "×", "penalty", "score")
LEGEND = (
    "left: cards left · 2s: twos among them · rate: points per card at that count · ×: multiplier "
    "(doubles per 2 held under twos-double) · penalty: left × rate × multiplier · score: this deal's score"
)


def score_text(score: int) -> str:
    return f"{score:+d}" if score else "0"


def settlement_rows(
    seats: Sequence[Any], winner: int, who: Callable[[int], str], *, by_dragon: bool = False
) -> list[tuple[str, ...]]:
    """One row of :data:`COLUMNS` per seat (``seats``: the settlement's seat lines); the winner's
    row is starred and says ``wins`` where a loser's penalty stands."""
    rows: list[tuple[str, ...]] = []
    for line in seats:
        if line.seat == winner:
            won = "wins with a dragon" if by_dragon else "wins"
            rows.append(
                (f"{who(line.seat)} ★", str(line.cards_left), str(line.twos_left), "", "", won, score_text(line.score))
            )
        else:
            times = f"×{line.multiplier}" if line.multiplier != 1 else ""
            rows.append(
                (
                    who(line.seat),
                    str(line.cards_left),
                    str(line.twos_left),
                    str(line.rate),
                    times,
                    str(line.penalty),
                    score_text(line.score),
                )
            )
    return rows
