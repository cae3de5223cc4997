"""Conversions between the API's per-deal ``bigtwo.v1.GameLog`` message and the replay model.

The proto log is one deal: ruleset, deal code or explicit hands, context, and the moves made (no
seats: each move is the seat to act's; auto-passes are the engine's and not listed). A replay file
holds a whole match, with actors, auto-passes, refusals and results. So:

* :func:`game_log_from_pb` replays the moves to name each actor and add the auto-passes; the
  first move the rules refuse is kept as a plain action (the audit then reports it as
  ``ILLEGAL_MOVE``) and the moves after it are dropped, as ``ReplayLog`` does.
* :func:`pb_from_game_log` writes one deal of a replay file as a proto log (refusals, auto-passes
  and seat changes left out).
* :func:`move_index` maps a problem's action index in a deal to the proto's move index.
"""

from __future__ import annotations

from typing import Any

from bigtwo.engine import DealContext, Move, Refusal
from bigtwo.engine.replay.format import Action, ActionKind, DealLog, GameLog, SeatInfo, seal
from bigtwo.engine.replay.writer import ReplayWriter
from bigtwo.v1 import types_pb2 as pb

from .contexts import context_from_pb, context_to_pb
from .rulesets import ruleset_from_pb, ruleset_to_pb


def game_log_from_pb(message: pb.GameLog, seats: list[SeatInfo] | None = None, *, path: str = "") -> GameLog:
    """A sealed, unsigned replay log of a ``bigtwo.v1.GameLog`` (one deal). Its ruleset is read as
    every ruleset is (:func:`~bigtwo.codec.rulesets.ruleset_from_pb`, errors named under ``path``)."""
    rules = ruleset_from_pb(message.ruleset, f"{path}.ruleset" if path else "ruleset")
    writer = ReplayWriter(rules, seats)
    which = message.WhichOneof("deal")
    code = message.deal_code if which == "deal_code" else None
    hands = list(message.explicit_deal.hands) if which == "explicit_deal" else None
    deal = _start(writer, code, hands, context_from_pb(message.context))
    for text in message.moves:
        try:
            move = Move.parse(deal.to_act, text)
        except Refusal:
            break  # text that is no card cannot be written down as cards; callers refuse it first
        try:
            writer.play(move)
        except Refusal:
            # keep the refused move as a plain action: the audit names it as the first illegal move
            open_deal = writer._deals[-1]
            refused = open_deal.actions.pop()
            open_deal.actions.append(Action(refused.seat, refused.kind, refused.cards))
            break
    return seal(writer.log())


def _start(writer: ReplayWriter, code: str | None, hands: list[str] | None, context: DealContext) -> Any:
    from bigtwo.engine import Deal, DealCode, deal_from_code, explicit_deal
    from bigtwo.engine.replay.writer import _OpenDeal

    rules = writer.ruleset
    dealt = deal_from_code(DealCode.parse(code), rules) if code else explicit_deal(hands or [], rules)
    deal = Deal.start(rules, dealt, context)
    writer._deals.append(
        _OpenDeal(
            number=context.deal_number,
            code=str(DealCode.parse(code)) if code else "",
            hands=dealt.hand_texts(),
            previous_winner=context.previous_winner,
            empty_seats=tuple(sorted(context.empty_seats)),
            comment="",
            deal=deal,
        )
    )
    if deal.over:
        writer._finish()
    return deal


def pb_from_game_log(log: GameLog, deal_index: int = 0) -> pb.GameLog:
    """Deal ``deal_index`` of ``log`` as a ``bigtwo.v1.GameLog``."""
    record: DealLog = log.deals[deal_index]
    context = DealContext(record.number, record.previous_winner, frozenset(record.empty_seats))
    message = pb.GameLog(ruleset=ruleset_to_pb(log.ruleset), context=context_to_pb(context))
    if record.code:
        message.deal_code = record.code
    else:
        message.explicit_deal.hands.extend(record.hands)
    message.moves.extend(a.move_text for a in record.actions if _is_move(a))
    return message


def _is_move(action: Action) -> bool:
    return action.kind in (ActionKind.PLAY, ActionKind.PASS) and not action.auto and not action.refused


def move_index(record: DealLog, action_index: int) -> int:
    """The proto move index (moves made before it) of action ``action_index`` of ``record``."""
    return sum(1 for action in record.actions[:action_index] if _is_move(action))
