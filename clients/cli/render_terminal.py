"""``bigtwo replay FILE``: a replay in the terminal, trick by trick, cards in colour, refusals, the
settlement card of every deal (each loser's cards left, rate, penalty; the winner's total) and the
match totals. Built from :func:`audit_log`'s per-step views, so what is shown is what the engine did.
Seats are shown as ``p2 name`` (:func:`~bigtwo.engine.replay.names.seat_label`), the numbering of
the file itself; an attempt refused for holding no card shows what was typed.
"""

from __future__ import annotations

from bigtwo.engine import Card, TrickEnded, cards_of
from bigtwo.engine.replay.audit import AuditVerdict, StepView
from bigtwo.engine.replay.format import Action, ActionKind, DealLog, DealResult, GameLog, parse_action
from bigtwo.engine.replay.names import seat_label
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .settlement_rows import COLUMNS, LEGEND, settlement_rows

SETTLEMENT_LEGEND = LEGEND

_RED = frozenset("DH")


def card_text(card: Card) -> Text:
    return Text(card.pretty, style="bold red" if card.suit.letter in _RED else "bold bright_white")


def cards_text(mask_or_cards: int | str) -> Text:
    out = Text()
    cards = cards_of(mask_or_cards) if isinstance(mask_or_cards, int) else _parse(mask_or_cards)
    for index, card in enumerate(cards):
        if index:
            out.append(" ")
        out.append_text(card_text(card))
    return out


def _parse(text: str) -> tuple[Card, ...]:
    out = []
    for token in text.split():
        try:
            out.append(Card.parse(token))
        except ValueError:
            continue
    return tuple(out)


def _who(log: GameLog, seat: int) -> str:
    return seat_label(seat, log.seat_name(seat))


def _attempt(action: Action) -> Text:
    """What a refused attempt held: its cards, or the text typed when it holds no card."""
    if action.kind is ActionKind.PASS:
        return Text("pass")
    typed = " ".join(action.cards)
    if action.cards and len(_parse(typed)) == len(action.cards):
        return cards_text(typed)
    return Text(f"“{typed}”" if typed else "nothing", style="italic")


def _verdict_text(verdict: AuditVerdict) -> Text:
    if verdict.ok:
        return Text("✔ " + verdict.summary(), style="bold green")
    return Text("✘ " + verdict.summary(), style="bold red")


def _deal_panel(log: GameLog, record: DealLog, steps: list[StepView]) -> Panel:
    head = Text()
    head.append(f"Deal {record.number}", style="bold")
    if record.code:
        head.append(f" · code {record.code}", style="cyan")
    if record.comment:
        head.append(f" · {record.comment}", style="italic")
    parts: list[Text | Table] = [head]
    for seat, hand in enumerate(steps[0].hands):
        line = Text(f"  {_who(log, seat):<18} ", style="dim")
        line.append_text(cards_text(hand))
        parts.append(line)
    parts += _trick_lines(log, steps[1:])
    if record.result is not None:
        result = record.result
        collected = sum(seat_line.penalty for seat_line in result.seats)
        parts.append(_settlement_card(log, record.number, result))
        parts.append(
            Text(f"  {_who(log, result.winner)} wins the deal; losers' penalties total {collected}", style="green")
        )
    else:
        parts.append(Text("  (deal unfinished)", style="yellow"))
    return Panel(Group(*parts), expand=True)


def _trick_lines(log: GameLog, steps: list[StepView]) -> list[Text | Table]:
    """One line per trick (each move, and who won it), with refusals and seats left or taken between."""
    parts: list[Text | Table] = []
    trick_line: Text | None = None
    current_trick = 0
    for step in steps:
        if step.actor < 0:
            continue
        who = _who(log, step.actor)
        action = parse_action(step.text, log.players)
        if step.refused:
            note = Text(f"    ✘ {who} tried ", style="yellow")
            note.append_text(_attempt(action))
            note.append(f": refused {step.refused} — {step.message}", style="yellow")
            parts.append(note)
            continue
        if action.kind in (ActionKind.LEAVE, ActionKind.TAKE):
            parts.append(Text(f"    · {step.message}: {step.text}", style="magenta"))
            continue
        if step.trick != current_trick or trick_line is None:
            current_trick = step.trick
            trick_line = Text(f"  Trick {step.trick:>2}: ", style="bold")
            parts.append(trick_line)
        else:
            trick_line.append("  ·  ", style="dim")
        _append_move(trick_line, log, who, action, step)
    return parts


def _append_move(trick_line: Text, log: GameLog, who: str, action: Action, step: StepView) -> None:
    trick_line.append(f"{who} ", style="cyan")
    if action.kind is ActionKind.PASS:
        trick_line.append("pass" + (" (auto)" if action.auto else ""), style="dim")
    else:
        trick_line.append_text(cards_text(" ".join(action.cards)))
    if action.timeout:
        trick_line.append(" ⏱", style="yellow")
    if action.comment:
        trick_line.append(f" ({action.comment})", style="italic dim")
    if any(isinstance(e, TrickEnded) for e in step.events):
        trick_line.append(f"  → {_who(log, step.table_seat)}", style="green")


def _settlement_card(log: GameLog, number: int, result: DealResult) -> Table:
    card = Table(
        title=f"Settlement · deal {number}",
        title_style="bold",
        show_edge=True,
        caption=SETTLEMENT_LEGEND,
        caption_style="dim",
    )
    for column in COLUMNS:
        card.add_column(column, justify="left" if column == "seat" else "right")
    for row in settlement_rows(result.seats, result.winner, lambda seat: _who(log, seat), by_dragon=result.by_dragon):
        style = "bold green" if row[0].endswith("★") else ""
        card.add_row(*(Text(cell, style=style) for cell in row))
    return card


def render(log: GameLog, verdict: AuditVerdict, console: Console) -> None:
    """Print the whole replay."""
    title = Text("Big Two replay", style="bold")
    title.append(f" · {log.ruleset.preset} · {log.players} players · rules {log.ruleset.fingerprint}", style="dim")
    console.print(title)
    if log.comment:
        console.print(Text(log.comment, style="italic"))
    seats = Table(show_header=True, box=None)
    seats.add_column("seat")
    seats.add_column("name")
    seats.add_column("player")
    for seat, info in enumerate(log.seats):
        seats.add_row(f"p{seat + 1}", info.name, info.label)
    console.print(seats)
    by_deal: dict[int, list[StepView]] = {}
    for step in verdict.steps:
        by_deal.setdefault(step.deal_number, []).append(step)
    for record in log.deals:
        steps = by_deal.get(record.number)
        if not steps:
            console.print(Text(f"Deal {record.number}: not replayed (see the verdict below)", style="red"))
            continue
        console.print(_deal_panel(log, record, steps))
    if log.result is not None:
        totals = Table(title="Match totals", title_style="bold")
        totals.add_column("seat")
        totals.add_column("deals won", justify="right")
        totals.add_column("total", justify="right")
        for seat in range(log.players):
            style = "bold green" if seat in log.result.winners else ""
            totals.add_row(
                Text(_who(log, seat), style=style),
                str(log.result.deals_won[seat]),
                Text(str(log.result.totals[seat]), style=style),
            )
        console.print(totals)
        state = "over" if log.result.over else "not over"
        names = ", ".join(_who(log, s) for s in log.result.winners)
        console.print(
            Text(
                f"Match {state} after {log.result.deals} deal{'' if log.result.deals == 1 else 's'}; "
                f"{'winner' if log.result.over else 'leading'}: {names}",
                style="bold",
            )
        )
    elif log.deals:
        console.print(Text("Match not over: no deal finished yet", style="bold"))
    console.print(_verdict_text(verdict))
