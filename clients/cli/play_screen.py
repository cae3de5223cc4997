"""What ``bigtwo play`` and ``bigtwo deal`` print: the output stream (Rich colour on a terminal,
plain text when piped) and the table as the person sees it.

Seats are ``p1`` .. ``pN`` on the screen, in files and in messages (the API's seat 0 is ``p1``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from bigtwo.engine import CardsPlayed, DealEnded, DragonRevealed, LastCard, Passed, TrickEnded, cards_of
from bigtwo.engine.replay.names import seat_ref

from .settlement_rows import COLUMNS, LEGEND, settlement_rows

LEGEND_TABLE = (
    "← to act: whose turn it is. Opened the trick: that seat played first in this trick; the trick ends "
    "when every other seat passes, and the seat that played last wins it and opens the next one."
)
LEGEND_ENDING_NOW = "ending now N: what this deal would score for you if another seat went out now."
LEGEND_SETTLEMENT = LEGEND


class Out:
    """Rich when colour is on, plain text otherwise (``[b]`` style markup stripped, ``\\[`` read
    as a bracket in both: see :func:`escape`)."""

    _MARKUP = re.compile(r"(?<!\\)\[/?[a-z #0-9_]*\]")

    def __init__(self, color: str, stream: IO[str] | None = None) -> None:
        self.stream = stream
        use = sys.stdout.isatty() if color == "auto" else color == "always"
        if use and os.environ.get("NO_COLOR"):
            use = False
        self.console: Any = None
        if use:
            from rich.console import Console

            self.console = Console(highlight=False, force_terminal=True, file=stream)

    def __call__(self, text: str = "") -> None:
        if self.console is not None:
            self.console.print(text)
        else:
            print(self._MARKUP.sub("", text).replace("\\[", "["), flush=True, file=self.stream)


def pretty(mask: int) -> str:
    return " ".join(card.pretty for card in cards_of(mask))


def escape(text: str) -> str:
    """A name or message shown through :class:`Out`, its brackets not read as markup."""
    return text.replace("[", "\\[")


@dataclass
class Screen:
    """Everything ``bigtwo play`` prints about the table: one seat numbering (p1..pN), each seat
    by its label (``p2 good bot``), "You" for the person; each term explained the first time."""

    say: Out
    labels: Sequence[str]
    me: int
    explained: set[str] = field(default_factory=set)

    def who(self, seat: int) -> str:
        return "You" if seat == self.me else escape(self.labels[seat])

    def row(self, seat: int) -> str:
        return escape(f"{seat_ref(seat)} You" if seat == self.me else self.labels[seat])

    def explain_once(self, term: str, text: str) -> None:
        if term not in self.explained:
            self.explained.add(term)
            self.say(f"[dim]({text})[/dim]")

    def table(self, table: Any) -> None:
        say = self.say
        say("")
        say(f"[b]Deal {table.deal_number}[/b] · move {table.moves_made + 1}")
        for seat, left in enumerate(table.cards_left):
            noun = "card " if left == 1 else "cards"
            say(f"  {self.row(seat):<20} {left:>2} {noun}  {'  '.join(_seat_marks(table, seat, left))}")
        if table.table is not None:
            by = f" by {self.who(table.last_player)}" if table.last_player is not None else ""
            say(f"On the table: [b]{pretty(table.table.mask)}[/b]  {table.table.name}{by}")
        elif not table.over:
            opening = f" (must include {table.opening_card.pretty})" if table.opening_card else ""
            say(f"On the table: nothing; {self.who(table.to_act)} to open a trick with any play{opening}")
        self.explain_once("table", LEGEND_TABLE)

    def events(self, events: Sequence[Any], play_name: str = "") -> None:
        for event in events:
            line = self.event(event, play_name)
            if line:
                self.say(line)

    def event(self, event: Any, play_name: str = "") -> str:
        """One event's line ("" for an event the screen does not show)."""
        me = self.me
        if isinstance(event, CardsPlayed):
            verb = "play" if event.seat == me else "plays"
            return f"{self.who(event.seat)} {verb} [b]{pretty(event.mask)}[/b]  {play_name}"
        if isinstance(event, Passed):
            verb = "pass" if event.seat == me else "passes"
            return f"{self.who(event.seat)} {verb}" + (" (auto)" if event.automatic else "")
        if isinstance(event, TrickEnded):
            verbs = "win the trick and open" if event.winner == me else "wins the trick and opens"
            return f"[dim]— {self.who(event.winner)} {verbs} the next[/dim]"
        if isinstance(event, LastCard):
            return f"[red]⚑ {self.who(event.seat)}: last card![/red]"
        if isinstance(event, DragonRevealed):
            return f"{self.who(event.seat)} show{'' if event.seat == me else 's'} a dragon: {pretty(event.hand)}"
        if isinstance(event, DealEnded):
            verb = "went out and won" if not event.by_dragon else "won with a dragon"
            return f"[b]{self.who(event.winner)} {verb} the deal.[/b]"
        return ""

    def settlement(self, outcome: Any) -> None:
        say, s = self.say, outcome.settlement
        say("")
        say(f"[b]Settlement · deal {outcome.number}[/b]")
        say(_columns(COLUMNS))
        for row in settlement_rows(s.seats, s.winner, self.row):
            say(_columns(row))
        self.explain_once("settlement", LEGEND_SETTLEMENT)
        collected = sum(line.penalty for line in s.seats)
        say(f"  Winner: {self.who(s.winner)}; the others' penalties total {collected}")
        standing = outcome.standing
        totals = ", ".join(f"{seat_ref(i)} {t}" for i, t in enumerate(standing.totals))
        say(f"  Match totals{'' if getattr(standing, 'over', False) else ' so far'}: {totals}")

    def match_table(self, table: Any, *, stopped: bool) -> None:
        standing = table.standing
        if standing is None or not table.deals:
            self.say("No deal finished.")
            return
        say = self.say
        say("")
        state = " · over" if standing.over else (" · stopped" if stopped else "")
        say(f"[b]Match table[/b] · {len(table.deals)} deal{'' if len(table.deals) == 1 else 's'}{state}")
        header = "  " + f"{'seat':<20}" + "".join(f"{'d' + str(d.number):>5}" for d in table.deals)
        say(header + f"{'total':>7} {'won':>4}")
        for seat in range(len(standing.totals)):
            row = "".join(f"{d.settlement.scores[seat]:>5}" for d in table.deals)
            win = ("  ★ winner" if standing.over else "  ★ leading") if seat in standing.winners else ""
            say(f"  {self.row(seat):<20}{row}{standing.totals[seat]:>7} {standing.deals_won[seat]:>4}{win}")


_WIDTHS = (22, 4, 3, 4, 3, 7, 6)


def _columns(cells: Sequence[str]) -> str:
    """A settlement row in fixed columns: the seat left-aligned, the figures right-aligned."""
    return "  " + " ".join(
        f"{cell:<{width}}" if k == 0 else f"{cell:>{width}}"
        for k, (cell, width) in enumerate(zip(cells, _WIDTHS, strict=True))
    )


def _seat_marks(table: Any, seat: int, left: int) -> list[str]:
    """The marks beside a seat's row of the table: to act, opened the trick, last card, passed."""
    marks = []
    if seat == table.to_act and not table.over:
        marks.append("[yellow]← to act[/yellow]")
    if seat == table.leader and table.table is not None and not table.over:
        marks.append("opened the trick")
    if left == 1:
        marks.append("[red]⚑ last card[/red]")
    if seat in table.passed_seats:
        marks.append("passed")
    return marks
