"""The person's seat in ``bigtwo play``: the prompt and what each typed line does.

Your hand sorted by rank, suit or plays (SplitHand), a readout line for every selection
(NameCards: what it forms, whether it can be played now and why not), ``hint`` (NextHint cycle),
``pass``, the table, and WEB's "ending now" penalty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bigtwo.engine import BadCardError, Refusal, cards_of, parse_mask, tables_for
from bigtwo.engine.replay.names import seat_ref

from .play_screen import LEGEND_ENDING_NOW, LEGEND_SETTLEMENT, LEGEND_TABLE, Out, Screen, escape, pretty

SORTS = ("rank", "suit", "plays")
CARDS_LOOK_LIKE = "(cards look like 3d 10h ♠A; type help for the commands)"

HELP = f"""\
Type the cards to play, e.g. 3d 3s (or 3♦ 3♠, 10h, ♠A). A selection that cannot be played is
read out with the reason, and nothing is sent. Other commands:
  hint  (h)        select the next play of the hint cycle; Enter plays the selection
  <Enter>          play the current selection (e.g. the hint; pass when the hint says pass)
  ?3d 3s           read out a selection without playing it
  pass  (p)        pass
  sort [rank|suit|plays]   sort your hand (no word: the next sort)
  table (t)        show the table again
  help             this text
  quit  (q)        stop here; the match so far is saved, and bigtwo play --resume FILE goes on with it
Seats are p1..pN in play order.
{LEGEND_TABLE}
{LEGEND_ENDING_NOW}
Settlement card: {LEGEND_SETTLEMENT}"""


class QuitGame(Exception):
    """The person typed quit (or closed the input)."""


@dataclass
class Person:
    """The person's seat: prompts on the terminal; a Table seat source.

    ``selection`` is what Enter plays (the last cards typed or hinted); ``pass_on_enter`` is set
    when the hint found nothing that beats the table, so that Enter then passes."""

    seat: int
    say: Out
    sort: str = "rank"
    selection: int = 0
    screen: Screen | None = None
    reader: Callable[[str], str] = input
    pass_on_enter: bool = False
    pending: str = ""
    """A line whose call the service never answered (it stopped): asked again, unprompted, at the
    same turn once the game's server is back, so a ``hint`` is not dropped."""

    def ask(self, prompt: str) -> str:
        try:
            return str(self.reader(prompt))
        except EOFError:
            raise QuitGame() from None

    def sorted_hand(self, turn: Any) -> str:
        hand = turn.hand
        tables = tables_for(turn.ruleset)
        cards = cards_of(hand)
        if self.sort == "suit":
            cards = tuple(sorted(cards, key=lambda c: (tables.suit_strength[c.suit], c.rank)))
            return " ".join(c.pretty for c in cards)
        if self.sort == "plays":
            plays = turn.client.split_hand(turn.ruleset, hand)
            return "  ".join("\\[" + pretty(p.mask) + "]" if p.size > 1 else pretty(p.mask) for p in plays)
        cards = tuple(sorted(cards, key=lambda c: tables.strength[c.index]))
        return " ".join(c.pretty for c in cards)

    def show_table(self, turn: Any) -> None:
        screen = self.screen or Screen(self.say, [seat_ref(s) for s in range(turn.ruleset.players)], self.seat)
        screen.table(turn.table)
        readout = turn.client.name_cards("", game=turn.game, seat=self.seat)
        self.say(f"Your hand ({self.sort}): [b]{self.sorted_hand(turn)}[/b]")
        if readout.ending_now:
            self.say(f"[dim]{readout.ending_now}[/dim]")
            screen.explain_once("ending now", LEGEND_ENDING_NOW)

    def refusal(self, refusal: Any, turn: Any) -> str:
        """A refusal in the screen's words: ``p2 good bot``, never the API's 0-based seat."""
        who = self.screen.who if self.screen is not None else seat_ref
        return escape(refusal_sentence(refusal, turn.table, who))

    def readout(self, turn: Any, mask: int) -> Any:
        readout = turn.client.name_cards(mask, game=turn.game, seat=self.seat)
        name = readout.name or pretty(mask) or "nothing selected"
        if readout.playable:
            self.say(f"[green]✓ {name}: can be played[/green]")
        else:
            why = self.refusal(readout.refusal, turn) if readout.refusal else "cannot be played"
            reason = f" ({readout.refusal.reason.value})" if readout.refusal else ""
            self.say(f"[red]✗ {name}: {why}{reason}[/red]")
        return readout

    def __call__(self, turn: Any) -> str:
        if turn.refusal is not None:
            self.say(f"[red]✗ refused: {self.refusal(turn.refusal, turn)} ({turn.refusal.reason.value})[/red]")
        else:
            self.selection = 0
            self.pass_on_enter = False
            self.show_table(turn)
        from bigtwo.client.client import BigTwoUnavailable

        while True:
            line, self.pending = self.pending or self.ask("your move> ").strip(), ""
            try:
                move = self.command(turn, line)
            except BigTwoUnavailable:
                self.pending = line
                raise
            if move is not None:
                return move

    def command(self, turn: Any, line: str) -> str | None:
        """What one typed line does: the move to send, or None to ask again."""
        word = line.lower()
        if word in ("quit", "q", "exit"):
            raise QuitGame()
        if word in ("pass", "p"):
            return "pass"
        if not line:
            return self.enter(turn)
        if word in ("help", "?"):
            self.say(escape(HELP))
        elif word in ("table", "t"):
            self.show_table(turn)
        elif word == "sort" or word.startswith("sort "):
            self.resort(turn, word[4:].strip())
        elif word in ("hint", "h"):
            self.hint(turn)
        else:
            return self.select(turn, line)
        return None

    def enter(self, turn: Any) -> str | None:
        """Enter alone: the selection, a pass the hint advised, or (nothing to play) the table again."""
        if self.selection:
            return cards_text(self.selection)
        if self.pass_on_enter:
            return "pass"
        self.show_table(turn)
        return None

    def resort(self, turn: Any, choice: str) -> None:
        if choice and choice not in SORTS:
            self.say(f"[red]✗ sort {escape(choice)}: sorts are {', '.join(SORTS)}[/red]  (sort alone: the next one)")
            return
        self.sort = choice or SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.say(f"Your hand ({self.sort}): [b]{self.sorted_hand(turn)}[/b]")

    def hint(self, turn: Any) -> None:
        hint = turn.client.next_hint(turn.game, self.selection)
        if hint.play is None:
            self.selection = 0
            self.pass_on_enter = True
            self.say("Hint: nothing beats the table; pass.")
            self.say("Press Enter to pass.")
            return
        self.selection = hint.play.mask
        self.say(f"Hint ({hint.cycle_length} in the cycle): [b]{pretty(hint.play.mask)}[/b]  {hint.play.name}")
        self.say("Press Enter to play it, h for the next one.")

    def select(self, turn: Any, line: str) -> str | None:
        """Cards typed: read out; played at once when playable (``?`` first: only read out)."""
        only_read = line.startswith("?")
        try:
            mask = parse_mask(line.lstrip("?"))
        except (BadCardError, Refusal) as exc:
            self.say(f"[red]✗ {escape(str(exc))}[/red]  {CARDS_LOOK_LIKE}")
            return None
        if not mask:
            self.say(f"[red]✗ no cards given[/red]  {CARDS_LOOK_LIKE}")
            return None
        self.selection = mask
        self.pass_on_enter = False
        readout = self.readout(turn, mask)
        return cards_text(mask) if readout.playable and not only_read else None


def refusal_sentence(refusal: Any, table: Any, who: Callable[[int], str]) -> str:
    """The sentence of a refusal (a :class:`bigtwo.client.client.RefusalInfo`) for the terminal, its
    seats named by ``who`` as the screen names them (never the API's 0-based ``seat 1``): see
    :func:`bigtwo.client.table.refusal_in_seat_names`."""
    from bigtwo.client.table import refusal_in_seat_names

    return refusal_in_seat_names(refusal, table, who)


def cards_text(mask: int) -> str:
    """The cards as the service reads them (``3d 3s``)."""
    return " ".join(str(card) for card in cards_of(mask))
