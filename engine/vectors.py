"""Rule vectors (shared/vectors/README.md): one case in, a verdict out.

Pure: the caller reads the files (``bigtwo vectors``); this module only judges a case against the
engine. Cases arrive as parsed JSON, the vectors' own interchange format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cards import parse_mask
from .combos import Kind, Play, check_beats, classify_mask
from .deal import Deal, DealContext
from .dealing import explicit_deal
from .errors import NoLoneTripleError, Refusal
from .generate import all_plays, plays_of_size
from .rules import Ruleset
from .scoring import settle
from .tables import RuleTables, tables_for


@dataclass(frozen=True, slots=True)
class CaseResult:
    case_id: str
    passed: bool
    expected: str
    got: str


def check_case(case: Mapping[str, Any]) -> CaseResult:
    """Run one vector case; any exception other than a refusal is reported as the result."""
    case_id = str(case.get("id", "?"))
    expected = expected_text(case)
    try:
        got = _run(case)
    except Refusal as refusal:
        got = f"refused {refusal.reason.value}"
    except (ValueError, KeyError, TypeError) as exc:
        got = f"error {type(exc).__name__}: {exc}"
    return CaseResult(case_id, _matches(case, got), expected, got)


def expected_text(case: Mapping[str, Any]) -> str:
    check = case.get("check")
    if check in ("kind", "beats"):
        if "refused" in case:
            return f"refused {case['refused']}"
        return str(case["expect"]).lower() if check == "beats" else str(case["expect"])
    if check == "legal":
        return str(case.get("expect_count"))
    if check == "score":
        return str(list(case.get("expect", [])))
    if check == "game":
        return canonical(case.get("expect", {}))
    return f"unknown check {check!r}"


def _matches(case: Mapping[str, Any], got: str) -> bool:
    return got == expected_text(case)


def canonical(data: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={data[k]}" for k in sorted(data))


def _run(case: Mapping[str, Any]) -> str:
    ruleset = Ruleset.from_mapping(case.get("ruleset") or {})
    tables = tables_for(ruleset)
    check = case.get("check")
    if check == "kind":
        return classify_mask(parse_mask(case["cards"]), tables).kind.value
    if check == "beats":
        table = _table_play(parse_mask(case["table"]), tables)
        check_beats(parse_mask(case["play"]), table, tables)
        return "true"
    if check == "legal":
        hand = parse_mask(case["hand"])
        if case.get("table"):
            table = _table_play(parse_mask(case["table"]), tables)
            return str(len(plays_of_size(hand, table.size, tables, table.key)))
        return str(len(all_plays(hand, tables)))
    if check == "score":
        cards_left = [int(n) for n in case["cards_left"]]
        twos_left = [int(n) for n in case.get("twos_left") or [0] * len(cards_left)]
        return str(list(settle(ruleset, cards_left, twos_left).scores))
    if check == "game":
        return _run_game(case, ruleset)
    raise ValueError(f"unknown check {check!r}")


def _table_play(mask: int, tables: RuleTables) -> Play:
    """The play on the table. A lone triple stays a triple even where a table may not lead one
    (``only-in-full-house``): then nothing beats it, since no triple may be played."""
    try:
        return classify_mask(mask, tables)
    except NoLoneTripleError:
        return Play(mask, Kind.TRIPLE, (mask.bit_length() - 1) >> 2)


def _run_game(case: Mapping[str, Any], ruleset: Ruleset) -> str:
    context_data = case.get("context") or {}
    previous = context_data.get("previous_winner")
    context = DealContext(
        deal_number=int(context_data.get("deal_number", 1) or 1),
        previous_winner=None if previous is None else int(previous),
    )
    deal = Deal.start(ruleset, explicit_deal(list(case["hands"]), ruleset), context)
    expect = case.get("expect", {})
    for index, text in enumerate(case.get("moves", [])):
        try:
            deal.do_text(deal.to_act, text)
        except Refusal as refusal:
            outcome = {"refused_at": index, "reason": refusal.reason.value}
            return canonical(outcome)
    if "refused_at" in expect:
        return "no refusal; all moves accepted"
    outcome = game_outcome(deal)
    return canonical({k: outcome.get(k) for k in expect} if expect else outcome)


def game_outcome(deal: Deal) -> dict[str, Any]:
    """The fields a game case may expect, in the vectors' vocabulary."""
    return {
        "next_seat": None if deal.over else deal.to_act,
        "leader": deal.leader,
        "winner": deal.winner if deal.over else None,
        "cards_left": list(deal.cards_left()),
        "scores": list(deal.scores) if deal.over else None,
        "over": deal.over,
    }
