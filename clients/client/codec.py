"""Between the service's protobuf messages and the client's values: rulesets, contexts, games,
plays, refusals, tables, seat views and events.

Protobuf stays here and in :mod:`bigtwo.client.calls`; everything a caller sees is an engine value
or a :mod:`bigtwo.client.results` value. Decoding is on every answer's path, so each reader is a
plain function of one message, events are decoded through a table keyed by the event's oneof
name rather than a chain of tests, and repeated numbers are copied with a slice (``tuple(x[:])``:
the slice is made in C, where ``tuple(x)`` steps an iterator item by item).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bigtwo.engine import (
    Card,
    CardsPlayed,
    DealContext,
    DealEnded,
    DealRecord,
    DealSettlement,
    DealStarted,
    DragonRevealed,
    Event,
    Kind,
    LastCard,
    Move,
    Passed,
    Reason,
    Ruleset,
    SeatSettlement,
    TrickEnded,
    classify_mask,
    mask_text,
    settle_with_winner,
    tables_for,
)
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .results import GameRef, NamedPlay, Outcome, RefusalInfo, SeatHand, TableView

KIND_FROM_PB = {pb.Kind.Value("KIND_" + kind.name): kind for kind in Kind}
_REASON_FROM_PB = {pb.Reason.Value("REASON_" + reason.name): reason for reason in Reason}

# -- rulesets, contexts, games -------------------------------------------------------------------


def ruleset_to_pb(ruleset: Ruleset) -> pb.Ruleset:
    options = {}
    for key, value in ruleset.overrides().items():
        options[key] = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
    return pb.Ruleset(preset=ruleset.preset, options=options)


def ruleset_from_pb(message: pb.Ruleset) -> Ruleset:
    return Ruleset.from_mapping({**dict(message.options), "preset": message.preset or "classic"})


def context_to_pb(context: DealContext) -> pb.DealContext:
    out = pb.DealContext(deal_number=context.deal_number, empty_seats=sorted(context.empty_seats))
    if context.previous_winner is not None:
        out.previous_winner = context.previous_winner
    return out


def context_from_pb(message: pb.DealContext) -> DealContext:
    previous = message.previous_winner if message.HasField("previous_winner") else None
    return DealContext(max(1, message.deal_number), previous, frozenset(message.empty_seats))


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
    if not message.reason and not message.reason_id:
        return None
    reason = _REASON_FROM_PB.get(message.reason) or Reason(message.reason_id)
    return RefusalInfo(reason, message.message)


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


# -- events --------------------------------------------------------------------------------------


def _cards_played(message: pb.Event, ruleset: Ruleset) -> Event:
    e = message.cards_played
    play = classify_mask(e.play.cards.mask, tables_for(ruleset))
    return CardsPlayed(e.seat, play.mask, play.kind, play.key, e.move_index)


def _passed(message: pb.Event, ruleset: Ruleset) -> Event:
    return Passed(message.passed.seat, message.passed.move_index, message.passed.automatic)


def _trick_ended(message: pb.Event, ruleset: Ruleset) -> Event:
    return TrickEnded(message.trick_ended.winner)


def _last_card(message: pb.Event, ruleset: Ruleset) -> Event:
    return LastCard(message.last_card.seat)


def _dragon_revealed(message: pb.Event, ruleset: Ruleset) -> Event:
    return DragonRevealed(message.dragon_revealed.seat, message.dragon_revealed.hand.mask)


def _deal_ended(message: pb.Event, ruleset: Ruleset) -> Event:
    e = message.deal_ended
    # The wire carries the counts; the engine's settlement of them is the record's result.
    return DealEnded(settle_with_winner(ruleset, e.winner, e.cards_left, e.twos_left), e.by_dragon)


def _deal_started(message: pb.Event, ruleset: Ruleset) -> Event:
    e = message.deal_started
    return DealStarted(
        tuple(hand.mask for hand in e.hands),
        e.leader,
        Card.parse(e.opening_card).index if e.opening_card else -1,
        e.deal_number or 1,
        Card.parse(e.face_up_card).index if e.face_up_card else -1,
        e.face_up_seat if e.HasField("face_up_seat") else -1,
    )


_EVENT_READERS: dict[str, Callable[[pb.Event, Ruleset], Event]] = {
    "cards_played": _cards_played,
    "passed": _passed,
    "trick_ended": _trick_ended,
    "last_card": _last_card,
    "dragon_revealed": _dragon_revealed,
    "deal_ended": _deal_ended,
    "deal_started": _deal_started,
}


def events_from_pb(messages: Sequence[pb.Event], ruleset: Ruleset) -> tuple[Event, ...]:
    """Protobuf events to the engine's own event values (hidden hands are 0, as the engine's
    :func:`~bigtwo.engine.redact` gives them). An event kind this client does not know (a newer
    service) is skipped, as protobuf skips unknown fields."""
    out: list[Event] = []
    for message in messages:
        read = _EVENT_READERS.get(message.WhichOneof("event") or "")
        if read is not None:
            out.append(read(message, ruleset))
    return tuple(out)


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
