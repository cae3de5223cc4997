"""Between the service's protobuf messages and the client's values: games, moves, plays,
refusals, tables, seat views and settlements; rulesets, contexts and events are
:mod:`bigtwo.codec`'s (re-exported here), read and written as the service reads and writes them.

Protobuf stays here and in :mod:`bigtwo.client.calls`; everything a caller sees is an engine value
or a :mod:`bigtwo.client.results` value. Decoding is on every answer's path, so each reader is a
plain function of one message, and repeated numbers are copied with a slice (``tuple(x[:])``: the
slice is made in C, where ``tuple(x)`` steps an iterator item by item).
"""

from __future__ import annotations

from collections.abc import Sequence

from bigtwo.codec.contexts import context_from_pb, context_to_pb
from bigtwo.codec.events import events_from_pb
from bigtwo.codec.plays import KIND_FROM_PB, reason_from_pb
from bigtwo.codec.rulesets import ruleset_from_pb, ruleset_to_pb
from bigtwo.engine import Card, DealRecord, DealSettlement, Move, SeatSettlement, mask_text
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .results import GameRef, NamedPlay, Outcome, RefusalInfo, SeatHand, TableView

# -- rulesets, contexts, games -------------------------------------------------------------------


def game_to_pb(game: GameRef, *, use_token: bool = True) -> pb.Game:
    """The token when the caller holds one (the same cost at any move), else the whole log."""
    if use_token and game.token:
        return pb.Game(state_token=game.token)
    log = pb.GameLog(ruleset=ruleset_to_pb(game.ruleset), context=context_to_pb(game.context), moves=list(game.moves))
    if game.deal_code:
        log.deal_code = game.deal_code
    elif game.hands:
        log.explicit_deal.hands.extend(game.hands)
    else:
        raise ValueError("a game needs its deal code or its hands (or a state token)")
    return pb.Game(log=log)


def deal_result_pb(record: DealRecord) -> pb.DealResult:
    return pb.DealResult(
        deal_number=record.deal_number,
        winner=record.winner,
        scores=list(record.scores),
        cards_left=list(record.cards_left),
        deal_code=record.deal_code,
        by_dragon=record.by_dragon,
    )


def move_to_pb(move: Move | str, seat: int | None, index: int | None) -> pb.Move:
    """A move with its seat (``seat``, else the :class:`Move`'s own) and its index."""
    chosen: int | None
    if isinstance(move, Move):
        chosen, text = (move.seat if seat is None else seat), str(move)
    else:
        chosen, text = seat, move.strip()
    if chosen is None:
        raise ValueError("say which seat moves: pass a Move, or seat=")
    out = pb.Move(seat=chosen, text=text)
    if index is not None:
        out.index = index
    return out


def cards_text(cards: str | int | Sequence[Card]) -> str:
    """Cards as the service reads them: text as given, a mask or cards as canonical text."""
    if isinstance(cards, int):
        return mask_text(cards)
    if isinstance(cards, str):
        return cards
    return " ".join(str(card) for card in cards)


# -- answers -------------------------------------------------------------------------------------


def play_from_pb(message: pb.Play) -> NamedPlay | None:
    cards = message.cards
    if not cards.mask and not cards.text:
        return None
    return NamedPlay(cards.mask, KIND_FROM_PB.get(message.kind), message.name)


def plays_from_pb(messages: Sequence[pb.Play]) -> tuple[NamedPlay, ...]:
    return tuple(play for play in map(play_from_pb, messages) if play is not None)


def refusal_from_pb(message: pb.Refusal) -> RefusalInfo | None:
    reason = reason_from_pb(message)
    return None if reason is None else RefusalInfo(reason, message.message)


def outcome_from_pb(message: pb.MoveOutcome) -> Outcome:
    return Outcome(
        accepted=message.accepted,
        is_pass=message.is_pass,
        play=play_from_pb(message.play) if message.HasField("play") else None,
        refusal=None if message.accepted else refusal_from_pb(message.refusal),
    )


def table_from_pb(message: pb.TableState) -> TableView:
    return TableView(
        players=message.players,
        moves_made=message.moves_made,
        to_act=message.to_act,
        leader=message.leader,
        table=play_from_pb(message.table) if message.HasField("table") else None,
        last_player=message.last_player if message.HasField("last_player") else None,
        cards_left=tuple(message.cards_left[:]),
        played=message.played.mask,
        passed_seats=tuple(message.passed_seats[:]),
        opening_card=Card.parse(message.opening_card) if message.opening_card else None,
        over=message.over,
        winner=message.winner if message.HasField("winner") else None,
        scores=tuple(message.scores[:]),
        deal_number=message.deal_number,
        deal_id=message.deal_id,
        ruleset_fingerprint=message.ruleset_fingerprint,
        deal_code=message.deal_code,
    )


def view_from_pb(message: pb.SeatView, present: bool) -> SeatHand | None:
    if not present:
        return None
    return SeatHand(message.seat, message.hand.mask, message.ending_now, message.to_act)


def settlement_from_pb(message: api.ScoreDealResponse) -> DealSettlement:
    seats = tuple(
        SeatSettlement(s.seat, s.cards_left, s.twos_left, s.rate, s.multiplier, s.penalty, s.score)
        for s in message.seats
    )
    return DealSettlement(message.winner, seats)


__all__ = [
    "KIND_FROM_PB",
    "cards_text",
    "context_from_pb",
    "context_to_pb",
    "deal_result_pb",
    "events_from_pb",
    "game_to_pb",
    "move_to_pb",
    "outcome_from_pb",
    "play_from_pb",
    "plays_from_pb",
    "refusal_from_pb",
    "ruleset_from_pb",
    "ruleset_to_pb",
    "settlement_from_pb",
    "table_from_pb",
    "view_from_pb",
]
