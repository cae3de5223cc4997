"""``bigtwo deal``: deal a deal code (or a fresh one) under a ruleset and show every hand and the
leader, dealt by the local engine or by the service with ``--target``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from bigtwo.engine import Card, Ruleset, cards_of
from bigtwo.engine.replay.names import seat_ref

from .arguments import add_ruleset_arguments, ruleset_from_args
from .play_screen import Out, pretty
from .play_server import add_connection_arguments, connected
from .play_setup import share_command


def deal_main(args: argparse.Namespace) -> int:
    from bigtwo.engine import Deal, DealCode, deal_from_code

    rules = ruleset_from_args(args)
    if args.target:
        with connected(args) as client:
            dealt = client.deal(rules, deal_code=args.deal_code or None)
            code = dealt.deal_code
    else:
        code = args.deal_code or str(DealCode.from_entropy(os.urandom(16)))
    try:
        dealt_cards = deal_from_code(DealCode.parse(code), rules)
    except ValueError as exc:
        print(f"bigtwo deal: {exc}", file=sys.stderr)
        return 2
    deal = Deal.start(rules, dealt_cards)
    hands = [deal.hands[seat] for seat in range(rules.players)]
    if args.target:  # the service's answer and the engine's must agree
        assert tuple(dealt.table.cards_left) == tuple(h.bit_count() for h in hands)
    if args.json:
        print(json.dumps(_deal_json(rules, code, deal, dealt_cards, hands), ensure_ascii=False))
    else:
        _show_deal(Out(args.color), rules, code, deal, dealt_cards, hands)
    return 0


def _deal_json(rules: Ruleset, code: str, deal: Any, dealt_cards: Any, hands: list[int]) -> dict[str, Any]:
    """The deal as one JSON object for scripts."""
    opening = Card.from_index(deal.opening_card) if deal.opening_card >= 0 else None
    face_up = dealt_cards.face_up_card
    return {
        "deal_code": code,
        "preset": rules.preset,
        "ruleset_fingerprint": rules.fingerprint,
        "players": rules.players,
        "leader": deal.leader,
        "opening_card": str(opening) if opening else "",
        "hands": [" ".join(str(c) for c in cards_of(h)) for h in hands],
        "face_up_card": str(Card.from_index(face_up)) if face_up >= 0 else "",
        "over": deal.over,
    }


def _show_deal(say: Out, rules: Ruleset, code: str, deal: Any, dealt_cards: Any, hands: list[int]) -> None:
    say(f"[b]Deal {code}[/b] · {rules.preset} · rules {rules.fingerprint}")
    for seat, hand in enumerate(hands):
        mark = "  ← plays first" if seat == deal.leader else ""
        say(f"  {seat_ref(seat)}: {pretty(hand)}{mark}")
    if deal.opening_card >= 0:
        say(f"The first play must include {Card.from_index(deal.opening_card).pretty}.")
    face_up = dealt_cards.face_up_card
    if face_up >= 0:
        say(f"Face-up card: {Card.from_index(face_up).pretty} ({seat_ref(dealt_cards.face_up_seat)})")
    say(f"Play it: {share_command(rules, code)}")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    deal: argparse.ArgumentParser = sub.add_parser(
        "deal",
        help="deal a deal code under a ruleset: hands and leader (--json)",
        description="Deal a deal code (or a fresh one) under a ruleset and print every hand and the leader. "
        "Dealt by the local engine, or by the service with --target.",
    )
    add_ruleset_arguments(deal)
    deal.add_argument("--deal-code", default="", help="the deal code (default: a fresh one)")
    deal.add_argument("--json", action="store_true", help="one JSON object for scripts")
    deal.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_connection_arguments(deal)
    deal.set_defaults(func=deal_main)
    return deal
