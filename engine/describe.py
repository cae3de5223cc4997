"""A ruleset in words (HK: "the table always shows which rules it is playing")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cards import Suit

if TYPE_CHECKING:
    from .rules import Ruleset


def _suits(order: str) -> str:
    return " < ".join(Suit("DCHS".index(letter)).symbol for letter in order)


def describe_ruleset(rules: Ruleset) -> tuple[str, ...]:
    lowest = Suit("DCHS".index(rules.suit_order.value[0]))
    lowest_card = f"3{lowest.symbol}"
    return (*_table_lines(rules, lowest_card), *_turn_lines(rules, lowest_card), *_scoring_lines(rules))


def _table_lines(rules: Ruleset, lowest_card: str) -> list[str]:
    """Seats, cards, suits and what the cards form."""
    from .rules import Flush, Triples

    return [
        f"Preset {rules.preset}" + (f" with {len(rules.overrides())} change(s)" if rules.overrides() else ""),
        f"{rules.players} players, {rules.hand_size} cards each"
        + (f"; the 52nd card goes face up to the holder of {lowest_card}" if rules.players == 3 else "")
        + ("; the rest stay unseen" if rules.players == 2 else ""),
        f"Suits low to high: {_suits(rules.suit_order.value)}",
        f"Straights: {rules.straights.describe()}",
        {
            Flush.SUIT_FIRST: "Flushes compare suit first, then ranks from the top",
            Flush.RANK_FIRST: "Flushes compare ranks from the top; the suit only breaks a full tie",
            Flush.NONE: "No plain flush: five of a suit must run in sequence (a straight flush)",
        }[rules.flush],
        "Triples may be played alone"
        if rules.triples is Triples.ALLOWED
        else "A triple may only be played inside a full house",
    ]


def _turn_lines(rules: Ruleset, lowest_card: str) -> list[str]:
    """Who leads, passing, and the rules that forbid or end a play."""
    from .rules import AfterPass, NextHasOneCard, Opening, SingleTwoLast, Switch, TwoPlayerStart

    lines = [
        f"The holder of {lowest_card} leads every deal and must play it"
        if rules.opening is Opening.LOWEST_CARD_EVERY_DEAL
        else f"{lowest_card} leads the first deal; then the last deal's winner leads with anything"
    ]
    if rules.players == 2:
        lines.append(
            "Two players: the holder of the lowest card dealt starts"
            if rules.two_player_start is TwoPlayerStart.LOWEST_DEALT_CARD
            else f"Two players: the deck is reshuffled until {lowest_card} is dealt"
        )
    lines.append(
        "A pass only skips that turn"
        if rules.after_pass is AfterPass.MAY_PLAY_AGAIN
        else "Passed is out: a seat that passes sits out until the trick ends"
    )
    switches = (
        (rules.single_two_last is SingleTwoLast.FORBIDDEN, "You can't go out on a single 2"),
        (
            rules.next_has_one_card is NextHasOneCard.HIGHEST_SINGLE,
            "When the next player has one card, a single must be your highest",
        ),
        (rules.dragon is Switch.ON, "Dragon: a hand of all 13 ranks wins at once"),
        (
            rules.auto_pass is Switch.ON,
            "Auto-pass: when no unplayed cards can beat a play, everyone passes at once",
        ),
    )
    return lines + [line for on, line in switches if on]


def _scoring_lines(rules: Ruleset) -> list[str]:
    """Penalty, settlement and the match's length."""
    from .rules import MatchKind, Penalty, Settlement, Switch

    penalty_text = {
        Penalty.TIERED: "1 a card for 1-9 left, 2 for 10-12, 3 for 13",
        Penalty.HARSH: "1 a card below 8, 2 for 8-9, 3 for 10-12, 4 for 13",
        Penalty.FLAT: "1 a card left",
        Penalty.NONE: "no scoring: win or lose",
    }[rules.penalty]
    lines = [f"Penalty: {penalty_text}" + (", doubled for every 2 held" if rules.twos_double is Switch.ON else "")]
    if rules.penalty is not Penalty.NONE:
        lines.append(
            "Zero-sum: the winner collects what the others pay; highest total wins"
            if rules.settlement is Settlement.ZERO_SUM
            else "Penalty points: lowest total wins; ties share the win"
        )
    match = rules.match
    lines.append(
        {
            MatchKind.DEALS: f"A match is {match.amount} deals",
            MatchKind.TARGET: f"The match ends when a total reaches {match.amount}",
            MatchKind.SINGLE: "A single deal",
            MatchKind.OPEN: "Open match: totals run on until the table stops",
        }[match.kind]
    )
    return lines
