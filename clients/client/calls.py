"""The client's RPCs, and each public call as a pure builder.

:data:`RPCS` holds every RPC the client speaks (name, request and response types, whether it may
be sent again), read from the service's descriptor (:mod:`bigtwo.codec.rpcs`): every RPC of the
proto but those of :data:`NOT_OFFERED`. Each unary method of the clients is one builder here: it
takes the method's public arguments and returns a :class:`Call` (the RPC, its request, the
converter of its answer and, for a call on a game sent with its token, the same request with the
whole log). Each client turns every
builder of :data:`UNARY_METHODS` into a method (:func:`bigtwo.client.sync_client.unary`,
:func:`bigtwo.client.aio_client.unary`), so a method, its signature and its docstring are written
once and the sync and asyncio clients cannot drift apart; they differ only in how they transport
(tests/test_client_api.py holds them to that).

Every unary RPC is a pure function of its request and a move carries its index, so all of them are
``idempotent``: sending one again after ``UNAVAILABLE`` can never apply a move twice. The stream
is not (it holds a deal); it resumes from its last token instead
(:class:`~bigtwo.client.stream_state.StreamState`).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from bigtwo.codec.rpcs import RPCS as SERVICE_RPCS
from bigtwo.codec.rpcs import SERVICE_NAME, RpcSpec, check_known
from bigtwo.engine import Card, DealContext, DealRecord, DealSettlement, Move, Ruleset
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

from .codec import (
    KIND_FROM_PB,
    cards_text,
    context_from_pb,
    context_to_pb,
    deal_result_pb,
    events_from_pb,
    game_to_pb,
    move_to_pb,
    outcome_from_pb,
    play_from_pb,
    plays_from_pb,
    refusal_from_pb,
    ruleset_from_pb,
    ruleset_to_pb,
    settlement_from_pb,
    table_from_pb,
    view_from_pb,
)
from .results import (
    BotChoice,
    BotLevels,
    Dealt,
    GameRef,
    Hint,
    LegalMoves,
    MatchStanding,
    MoveResult,
    NamedPlay,
    Outcome,
    PresetInfo,
    Readout,
    Replayed,
    RulesetInfo,
)

SERVICE = SERVICE_NAME

R = TypeVar("R", bound=Message)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Rpc(Generic[R]):
    """One RPC of the service as the client speaks it."""

    name: str
    request: type[Message]
    response: type[R]
    idempotent: bool = True
    """Sent again (on the next target, after a backoff) when it finds a target UNAVAILABLE."""
    streaming: bool = False

    @property
    def path(self) -> str:
        return f"/{SERVICE}/{self.name}"

    @classmethod
    def of(cls, spec: RpcSpec) -> Rpc[Any]:
        """The client's view of an RPC of the proto: a unary one may be sent again, the stream not."""
        return Rpc(spec.name, spec.request, spec.response, idempotent=not spec.streaming, streaming=spec.streaming)


NOT_OFFERED = frozenset({"AuditLog", "PlayBots"})
"""RPCs of the service the client does not wrap: replay files are audited where they are read
(:mod:`bigtwo.engine.replay`), so a client has no use for the remote audit; and this client is a
table host, holding the state token, whose table moves its bot seats with ``BotMove`` and a seed per
turn, while ``PlayBots`` is for a seat's device that holds only a seat token (the browser table)."""
check_known(NOT_OFFERED, "bigtwo.client.calls.NOT_OFFERED")
RPCS: tuple[Rpc[Any], ...] = tuple(Rpc.of(spec) for spec in SERVICE_RPCS if spec.name not in NOT_OFFERED)
"""Every RPC of the proto the client speaks, in the proto's order (each unary one made a method by
one builder below: tests/test_client_api.py checks that none is left without)."""
UNARY_RPCS = tuple(rpc for rpc in RPCS if not rpc.streaming)
_BY_NAME = {rpc.name: rpc for rpc in RPCS}


def offered(name: str) -> Rpc[Any]:
    """The RPC ``name`` of :data:`RPCS` (a builder names the one it sends)."""
    return _BY_NAME[name]


PLAY_STREAM = offered("PlayStream")


@dataclass(slots=True)
class Call(Generic[R, T]):
    """One unary call, ready to send: what a client method does, without the transport."""

    rpc: Rpc[R]
    request: Message
    convert: Callable[[R], T]
    timeout: float | None = None
    """Seconds; None: the client's own deadline."""
    game: GameRef | None = None
    """For a call on a game: the game, and ``build`` its request from a :class:`pb.Game`."""
    build: Callable[[pb.Game], Message] | None = None

    def with_log(self) -> Message | None:
        """For a call on a game sent with its token: the same request with the game's whole log,
        sent once when a replica refuses the token as foreign (keys rotated, another deployment).
        None when there is no token to refuse or no log to send instead."""
        game, build = self.game, self.build
        if game is None or build is None or not game.token or not (game.deal_code or game.hands):
            return None
        return build(game_to_pb(game, use_token=False))


def _on_game(
    rpc: Rpc[R], game: GameRef, build: Callable[[pb.Game], Message], convert: Callable[[R], T], timeout: float | None
) -> Call[R, T]:
    """A call on ``game``: with its token when it has one (the log otherwise)."""
    return Call(rpc, build(game_to_pb(game)), convert, timeout, game, build)


# -- answers shared by the unary calls and the stream --------------------------------------------


def dealt_from(response: api.DealResponse | api.StreamOpened, game: GameRef) -> Dealt:
    return Dealt(
        game,
        response.deal_code,
        table_from_pb(response.table),
        events_from_pb(response.events, game.ruleset),
        view_from_pb(response.view, response.HasField("view")),
        response.seat_token,
    )


def moved(response: api.ApplyMoveResponse | api.StreamMoveResult, game: GameRef, index: int, text: str) -> MoveResult:
    """The answer to move ``index`` (sent as ``text``) on ``game``; its game is the one after it."""
    outcome = outcome_from_pb(response.outcome)
    if outcome.accepted:
        canonical = "pass" if outcome.is_pass else (outcome.play.text if outcome.play else text)
        game = game.after(canonical, response.state_token or b"")
    elif response.state_token:
        game = replace(game, token=response.state_token)
    return MoveResult(
        index,
        outcome,
        events_from_pb(response.events, game.ruleset),
        game,
        table_from_pb(response.table),
        view_from_pb(response.view, response.HasField("view")),
        response.seat_token if isinstance(response, api.ApplyMoveResponse) else b"",
    )


# -- the unary methods, one builder each ---------------------------------------------------------

UNARY_METHODS: dict[str, Callable[..., Call[Any, Any]]] = {}
"""Every unary method of both clients, by name: each builder below marked :func:`client_method`.
The test of the clients checks that each client has exactly these, made from these builders."""
B = TypeVar("B", bound=Callable[..., Call[Any, Any]])


def client_method(build: B) -> B:
    """Mark ``build`` as the builder of the clients' method of its name (:data:`UNARY_METHODS`)."""
    UNARY_METHODS[build.__name__] = build
    return build


@client_method
def list_presets(*, timeout: float | None = None) -> Call[api.ListPresetsResponse, list[PresetInfo]]:
    """The service's presets with their rulesets, fingerprints and descriptions."""

    def convert(response: api.ListPresetsResponse) -> list[PresetInfo]:
        return [
            PresetInfo(p.name, p.summary, ruleset_from_pb(p.ruleset), p.fingerprint, tuple(p.description))
            for p in response.presets
        ]

    return Call(offered("ListPresets"), api.ListPresetsRequest(), convert, timeout)


@client_method
def bot_levels(*, timeout: float | None = None) -> Call[api.ListPresetsResponse, BotLevels]:
    """The service's bot levels, weakest first, with a line about each, and its default level (read
    from the ListPresets answer: front ends offer these, never a list of their own)."""

    def convert(response: api.ListPresetsResponse) -> BotLevels:
        levels = tuple((level.name, level.description) for level in response.bot_levels)
        return BotLevels(levels, response.default_bot_level)

    return Call(offered("ListPresets"), api.ListPresetsRequest(), convert, timeout)


@client_method
def describe_ruleset(
    ruleset: Ruleset, *, timeout: float | None = None
) -> Call[api.DescribeRulesetResponse, RulesetInfo]:
    """The ruleset as the service reads it: its overrides of the preset, fingerprint and rules in words."""

    def convert(response: api.DescribeRulesetResponse) -> RulesetInfo:
        return RulesetInfo(
            ruleset_from_pb(response.ruleset),
            dict(response.overrides),
            response.fingerprint,
            tuple(response.description),
        )

    return Call(
        offered("DescribeRuleset"), api.DescribeRulesetRequest(ruleset=ruleset_to_pb(ruleset)), convert, timeout
    )


@client_method
def deal(
    ruleset: Ruleset,
    *,
    deal_code: str | None = None,
    hands: Sequence[str] | None = None,
    context: DealContext | None = None,
    view_seat: int | None = None,
    timeout: float | None = None,
) -> Call[api.DealResponse, Dealt]:
    """A new deal: from a deal code, explicit hands, or fresh cards (the service picks a code).
    Retrying a fresh deal is safe: the service keeps nothing, so a lost answer is just dropped."""
    request = api.DealRequest(ruleset=ruleset_to_pb(ruleset), context=context_to_pb(context or DealContext()))
    if deal_code:
        request.deal_code = deal_code
    elif hands:
        request.explicit_deal.hands.extend(hands)
    if view_seat is not None:
        request.view_seat = view_seat

    def convert(response: api.DealResponse) -> Dealt:
        game = GameRef(
            ruleset=ruleset,
            deal_code=response.deal_code,
            hands=tuple(hands or ()) if not response.deal_code else (),
            context=context or DealContext(),
            token=response.state_token,
        )
        return dealt_from(response, game)

    return Call(offered("Deal"), request, convert, timeout)


@client_method
def apply_move(
    game: GameRef,
    move: Move | str,
    *,
    seat: int | None = None,
    view_seat: int | None = None,
    timeout: float | None = None,
) -> Call[api.ApplyMoveResponse, MoveResult]:
    """Apply ``move`` (its index is ``game.moves_made``). A refused move is an answer
    (``result.outcome.refusal``), not an exception; ``result.game`` is the game after it."""
    index = game.moves_made
    message = move_to_pb(move, seat, index)

    def build(g: pb.Game) -> api.ApplyMoveRequest:
        request = api.ApplyMoveRequest(game=g, move=message)
        if view_seat is not None:
            request.view_seat = view_seat
        return request

    return _on_game(offered("ApplyMove"), game, build, lambda r: moved(r, game, index, message.text), timeout)


@client_method
def validate_move(
    game: GameRef, move: Move | str, *, seat: int | None = None, timeout: float | None = None
) -> Call[api.ValidateMoveResponse, Outcome]:
    """Whether ``move`` would be accepted now, and why not; nothing is applied."""
    message = move_to_pb(move, seat, game.moves_made)
    return _on_game(
        offered("ValidateMove"),
        game,
        lambda g: api.ValidateMoveRequest(game=g, move=message),
        lambda r: outcome_from_pb(r.outcome),
        timeout,
    )


@client_method
def legal_moves(game: GameRef, *, timeout: float | None = None) -> Call[api.LegalMovesResponse, LegalMoves]:
    """Every play the seat to act may make, and whether it may pass."""
    return _on_game(
        offered("LegalMoves"),
        game,
        lambda g: api.LegalMovesRequest(game=g),
        lambda r: LegalMoves(r.seat, plays_from_pb(r.plays), r.can_pass),
        timeout,
    )


@client_method
def next_hint(
    game: GameRef, after: str | int | Sequence[Card] = "", *, timeout: float | None = None
) -> Call[api.NextHintResponse, Hint]:
    """HK's Find: the next play of the hint cycle after the current selection."""
    text = cards_text(after)
    return _on_game(
        offered("NextHint"),
        game,
        lambda g: api.NextHintRequest(game=g, after=text),
        lambda r: Hint(play_from_pb(r.play) if r.HasField("play") else None, r.cycle_length),
        timeout,
    )


@client_method
def timeout_move(
    game: GameRef, *, bot_level: str = "", timeout: float | None = None
) -> Call[api.TimeoutMoveResponse, Move]:
    """The move a timed-out turn makes (apply it with ``apply_move``): the rules' (HK: pass, or
    the lowest card when leading), or with ``bot_level`` that bot's (TW)."""
    return _on_game(
        offered("TimeoutMove"),
        game,
        lambda g: api.TimeoutMoveRequest(game=g, bot_level=bot_level),
        lambda r: Move.parse(r.move.seat, r.move.text),
        timeout,
    )


@client_method
def bot_move(
    game: GameRef,
    level: str,
    *,
    seed: int = 0,
    simulations: int = 0,
    max_ms: int = 0,
    timeout: float | None = None,
) -> Call[api.BotMoveResponse, BotChoice]:
    """The move a bot of ``level`` (random, beginner, good, great, pro) makes for the seat to
    act, decided by the service from that seat's view only; the same game, level and seed give
    the same move. ``simulations`` / ``max_ms``: the pro search's budget (0: its default)."""
    return _on_game(
        offered("BotMove"),
        game,
        lambda g: api.BotMoveRequest(game=g, level=level, seed=seed, simulations=simulations, max_ms=max_ms),
        lambda r: BotChoice(Move.parse(r.move.seat, r.move.text), r.name, r.level),
        timeout,
    )


@client_method
def split_hand(
    ruleset: Ruleset, hand: str | int | Sequence[Card], *, timeout: float | None = None
) -> Call[api.SplitHandResponse, list[NamedPlay]]:
    """A hand cut into plays under ``ruleset`` (the "plays" sort order of a hand)."""
    request = api.SplitHandRequest(ruleset=ruleset_to_pb(ruleset), hand=cards_text(hand))
    return Call(offered("SplitHand"), request, lambda r: list(plays_from_pb(r.plays)), timeout)


def _readout(response: api.NameCardsResponse) -> Readout:
    return Readout(
        response.name,
        KIND_FROM_PB.get(response.kind),
        response.playable,
        None if response.playable else refusal_from_pb(response.refusal),
        response.ending_now,
    )


@client_method
def name_cards(
    cards: str | int | Sequence[Card],
    *,
    game: GameRef | None = None,
    seat: int = 0,
    ruleset: Ruleset | None = None,
    table: str | int | Sequence[Card] = "",
    timeout: float | None = None,
) -> Call[api.NameCardsResponse, Readout]:
    """The readout line: for a seat in a game, or under a ruleset against a table."""
    text = cards_text(cards)
    if game is not None:
        return _on_game(
            offered("NameCards"), game, lambda g: api.NameCardsRequest(cards=text, game=g, seat=seat), _readout, timeout
        )
    request = api.NameCardsRequest(cards=text, ruleset=ruleset_to_pb(ruleset or Ruleset()), table=cards_text(table))
    return Call(offered("NameCards"), request, _readout, timeout)


@client_method
def score_deal(game: GameRef, *, timeout: float | None = None) -> Call[api.ScoreDealResponse, DealSettlement]:
    """The settlement card of a finished deal."""
    return _on_game(offered("ScoreDeal"), game, lambda g: api.ScoreDealRequest(game=g), settlement_from_pb, timeout)


@client_method
def score_counts(
    ruleset: Ruleset,
    cards_left: Sequence[int],
    twos_left: Sequence[int] = (),
    *,
    timeout: float | None = None,
) -> Call[api.ScoreDealResponse, DealSettlement]:
    """The settlement card of cards left (and twos left) per seat under ``ruleset``: the scoring
    alone, for a deal played elsewhere."""
    counts = api.CardCounts(ruleset=ruleset_to_pb(ruleset), cards_left=list(cards_left), twos_left=list(twos_left))
    return Call(offered("ScoreDeal"), api.ScoreDealRequest(counts=counts), settlement_from_pb, timeout)


@client_method
def settle_match(
    ruleset: Ruleset,
    deals: Sequence[DealRecord],
    *,
    empty_seats: Sequence[int] = (),
    stopped: bool = False,
    timeout: float | None = None,
) -> Call[api.SettleMatchResponse, MatchStanding]:
    """The match's standing after ``deals``: totals, deals won, whether it is over (``stopped``:
    the players stopped it) and the next deal's context."""
    request = api.SettleMatchRequest(
        ruleset=ruleset_to_pb(ruleset),
        deals=[deal_result_pb(d) for d in deals],
        empty_seats=list(empty_seats),
        stopped=stopped,
    )

    def convert(response: api.SettleMatchResponse) -> MatchStanding:
        return MatchStanding(
            tuple(response.totals),
            tuple(response.deals_won),
            response.over,
            tuple(response.winners),
            context_from_pb(response.next_context),
        )

    return Call(offered("SettleMatch"), request, convert, timeout)


@client_method
def replay_log(
    game: GameRef, *, view_seat: int | None = None, timeout: float | None = None
) -> Call[api.ReplayLogResponse, Replayed]:
    """Replay ``game``'s whole log (its token is ignored); stops at the first refused move."""
    request = api.ReplayLogRequest(log=game_to_pb(game, use_token=False).log)
    if view_seat is not None:
        request.view_seat = view_seat

    def convert(response: api.ReplayLogResponse) -> Replayed:
        return Replayed(
            response.moves_applied,
            response.refused,
            response.refused_at,
            refusal_from_pb(response.refusal) if response.refused else None,
            events_from_pb(response.events, game.ruleset),
            table_from_pb(response.table),
            replace(game, moves=game.moves[: response.moves_applied], token=response.state_token),
        )

    return Call(offered("ReplayLog"), request, convert, timeout)


F = TypeVar("F", bound=Callable[..., Any])


def as_method(method: F, build: Callable[..., Any], owner: str) -> F:
    """``method`` (a client's transport of ``build``'s call) dressed as ``build``: its name,
    docstring and signature with ``self`` first, for ``help()``, IDEs and the signature test."""
    functools.update_wrapper(method, build)
    method.__qualname__ = f"{owner}.{build.__name__}"
    signature = inspect.signature(build, eval_str=True)
    own = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[own, *signature.parameters.values()],
        return_annotation=typing.get_args(signature.return_annotation)[1],  # Call[Response, T] -> T
    )
    return method


__all__ = [
    "NOT_OFFERED",
    "RPCS",
    "SERVICE",
    "UNARY_METHODS",
    "UNARY_RPCS",
    "Call",
    "Rpc",
    "as_method",
    "client_method",
    "dealt_from",
    "moved",
    "offered",
]
