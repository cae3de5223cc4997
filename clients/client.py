"""The reference Python client of the Big Two service (docs/CLIENT.md).

A small typed wrapper over the generated stubs that speaks the engine's own values: an engine
:class:`~bigtwo.engine.Ruleset` goes in, engine :class:`~bigtwo.engine.Card`, :class:`Move`,
:class:`Kind` and event values come out, and results are the small frozen dataclasses below. No
protobuf message appears in a public signature.

The game lives with the caller (the service is stateless): every call that works on a game takes a
:class:`GameRef` (ruleset, deal code or hands, context, the moves so far and the latest state token)
and every accepted move returns the next one. ::

    from bigtwo.client import BigTwoClient
    from bigtwo.engine import preset

    with BigTwoClient("127.0.0.1:50051") as client:
        dealt = client.deal(preset("classic"), deal_code="0000003NQK8N1")
        game = dealt.game
        while not dealt.table.over:          # (see examples/deal_and_play_unary.py)
            hint = client.next_hint(game)
            ...

Every call has a deadline (``timeout``, default :data:`DEFAULT_TIMEOUT` seconds). A unary call that
fails with ``UNAVAILABLE``, or with ``CANCELLED`` (what gRPC answers a call that reached a server at
the instant it began to shut down, grpc/grpc#41785), is retried with exponential backoff and jitter
on the next target of the list: every unary RPC is a pure function of its request, and a move
carries its index, so a retried ``ApplyMove`` is judged against the caller's game again and can
never be applied twice. Other statuses become typed exceptions (:class:`BigTwoError` and its
subclasses).

:class:`AsyncBigTwoClient` is the same client on ``grpc.aio``.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
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
    cards_of,
    classify_mask,
    mask_text,
    settle_with_winner,
    tables_for,
)
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc
from bigtwo.v1 import types_pb2 as pb
from google.rpc import error_details_pb2, status_pb2

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 5.0
"""Seconds: the deadline of every unary call unless the client or the call says otherwise."""
DEFAULT_STREAM_TIMEOUT = 3600.0
"""Seconds: the deadline of a whole PlayStream (a stream holds one deal)."""
SERVICE = "bigtwo.v1.BigTwoService"

# -- results: small frozen values ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamedPlay:
    """Cards and what they form, with the readout name (``Pair K``)."""

    mask: int
    kind: Kind | None
    name: str

    @property
    def cards(self) -> tuple[Card, ...]:
        return cards_of(self.mask)

    @property
    def text(self) -> str:
        """Canonical text (``3D 3S``), what a move sends."""
        return mask_text(self.mask)

    @property
    def size(self) -> int:
        return self.mask.bit_count()

    def __str__(self) -> str:
        return self.name or self.text


@dataclass(frozen=True, slots=True)
class RefusalInfo:
    """Why the rules refuse a move: the RULES.md reason and the sentence a player sees."""

    reason: Reason
    message: str

    def __str__(self) -> str:
        return f"{self.message} ({self.reason.value})"


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    is_pass: bool = False
    play: NamedPlay | None = None
    refusal: RefusalInfo | None = None


@dataclass(frozen=True, slots=True)
class TableView:
    """What everyone at the table may see."""

    players: int
    moves_made: int
    to_act: int
    leader: int
    table: NamedPlay | None
    last_player: int | None
    cards_left: tuple[int, ...]
    played: int
    passed_seats: tuple[int, ...]
    opening_card: Card | None
    over: bool
    winner: int | None
    scores: tuple[int, ...]
    deal_number: int
    deal_id: str
    """The deal's opaque name (nothing about the cards follows from it)."""
    ruleset_fingerprint: str
    deal_code: str = ""
    """The deal code once the deal is over (empty while it is in play)."""


@dataclass(frozen=True, slots=True)
class SeatHand:
    """One seat's own view: its hand and WEB's "ending now" readout."""

    seat: int
    mask: int
    ending_now: str
    to_act: bool

    @property
    def cards(self) -> tuple[Card, ...]:
        return cards_of(self.mask)


@dataclass(frozen=True, slots=True)
class GameRef:
    """The game as the caller holds it: enough to rebuild it anywhere (the log) and the latest
    signed state token (cheaper to send). Immutable: moves return a new one."""

    ruleset: Ruleset
    deal_code: str = ""
    hands: tuple[str, ...] = ()
    context: DealContext = field(default_factory=DealContext)
    moves: tuple[str, ...] = ()
    token: bytes = b""

    @property
    def moves_made(self) -> int:
        """The index the next move carries."""
        return len(self.moves)

    def after(self, move_text: str, token: bytes) -> GameRef:
        return replace(self, moves=(*self.moves, move_text), token=token)


@dataclass(frozen=True, slots=True)
class Dealt:
    game: GameRef
    deal_code: str
    table: TableView
    events: tuple[Event, ...]
    view: SeatHand | None
    seat_token: bytes = b""
    """With a view: a state token bound to that seat, safe to hand to its device (docs/SECURITY.md)."""


@dataclass(frozen=True, slots=True)
class MoveResult:
    """The answer to a move. ``game`` is the game after it (unchanged when refused)."""

    index: int
    outcome: Outcome
    events: tuple[Event, ...]
    game: GameRef
    table: TableView
    view: SeatHand | None
    seat_token: bytes = b""
    """With a view: a state token bound to that seat, safe to hand to its device (docs/SECURITY.md)."""

    @property
    def accepted(self) -> bool:
        return self.outcome.accepted


@dataclass(frozen=True, slots=True)
class LegalMoves:
    seat: int
    plays: tuple[NamedPlay, ...]
    can_pass: bool


@dataclass(frozen=True, slots=True)
class Hint:
    play: NamedPlay | None
    cycle_length: int


@dataclass(frozen=True, slots=True)
class Readout:
    """The readout line: what a selection forms and whether it can be played now, or why not."""

    name: str
    kind: Kind | None
    playable: bool
    refusal: RefusalInfo | None
    ending_now: str


@dataclass(frozen=True, slots=True)
class BotChoice:
    """A bot's move for the seat to act (BotMove): apply it with ``apply_move``."""

    move: Move
    name: str
    """The readout name of what it plays ("Pair 9"; empty for a pass)."""
    level: str


@dataclass(frozen=True, slots=True)
class RulesetInfo:
    ruleset: Ruleset
    overrides: dict[str, str]
    fingerprint: str
    description: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PresetInfo:
    name: str
    summary: str
    ruleset: Ruleset
    fingerprint: str
    description: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MatchStanding:
    totals: tuple[int, ...]
    deals_won: tuple[int, ...]
    over: bool
    winners: tuple[int, ...]
    next_context: DealContext


@dataclass(frozen=True, slots=True)
class Replayed:
    moves_applied: int
    refused: bool
    refused_at: int
    refusal: RefusalInfo | None
    events: tuple[Event, ...]
    table: TableView
    game: GameRef


# -- errors --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldViolation:
    field: str
    description: str


class BigTwoError(Exception):
    """A call that failed: the gRPC status code, its message and the rich details the service
    attached (google.rpc.BadRequest field violations, google.rpc.ErrorInfo reason and metadata)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        violations: Sequence[FieldViolation] = (),
        reason: str = "",
        metadata: dict[str, str] | None = None,
        target: str = "",
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.violations = tuple(violations)
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.target = target


class BigTwoInvalidArgument(BigTwoError):
    """A malformed request; ``violations`` names the fields."""


class BigTwoFailedPrecondition(BigTwoError):
    """E.g. a move whose index does not fit the game (``reason`` MOVE_ALREADY_MADE / WRONG_MOVE_INDEX)."""

    @property
    def moves_made(self) -> int | None:
        value = self.metadata.get("moves_made")
        return int(value) if value is not None else None


class BigTwoUnauthenticated(BigTwoError):
    """A missing or wrong bearer token."""


class BigTwoResourceExhausted(BigTwoError):
    """A request over the limits, or a server at its concurrency limit."""


class BigTwoUnavailable(BigTwoError):
    """No target answered, after every retry."""


class BigTwoDeadlineExceeded(BigTwoError):
    """The call's deadline passed."""


class BigTwoInternal(BigTwoError):
    """A bug in the service; the message carries the request id its log shows."""


_ERRORS: dict[grpc.StatusCode, type[BigTwoError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: BigTwoInvalidArgument,
    grpc.StatusCode.FAILED_PRECONDITION: BigTwoFailedPrecondition,
    grpc.StatusCode.UNAUTHENTICATED: BigTwoUnauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: BigTwoResourceExhausted,
    grpc.StatusCode.UNAVAILABLE: BigTwoUnavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: BigTwoDeadlineExceeded,
    grpc.StatusCode.INTERNAL: BigTwoInternal,
}


def error_from_rpc(error: Any, target: str = "") -> BigTwoError:
    """A typed exception for a failed call (sync ``grpc.RpcError`` or ``grpc.aio.AioRpcError``)."""
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    message = error.details() if callable(getattr(error, "details", None)) else str(error)
    violations: list[FieldViolation] = []
    reason, metadata = "", {}
    trailing = error.trailing_metadata() if callable(getattr(error, "trailing_metadata", None)) else None
    for key, value in trailing or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations += [FieldViolation(v.field, v.description) for v in bad.field_violations]
            elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, metadata = info.reason, dict(info.metadata)
    if code is grpc.StatusCode.UNAVAILABLE and not reason:
        reason = connection_failure(message or "")[0]
    cls = _ERRORS.get(code, BigTwoError)
    return cls(code, message or "", violations=violations, reason=reason, metadata=metadata, target=target)


# -- retries -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, for :data:`RETRIED_CODES` (unary calls) and for reopening a
    broken stream. ``attempts`` counts the first try.

    The n-th wait is ``min(max_backoff, initial_backoff * multiplier**n)`` scaled by a random
    factor in ``[1 - jitter, 1]`` (so replicas restarted together are not hit in lockstep)."""

    attempts: int = 8
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.5

    def delay(self, retry: int, rng: random.Random) -> float:
        base = min(self.max_backoff, self.initial_backoff * self.multiplier**retry)
        return base * (1.0 - self.jitter * rng.random())


NO_RETRY = RetryPolicy(attempts=1)
RETRIED_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})
"""Statuses a unary call is sent again for. CANCELLED: gRPC answers it (not UNAVAILABLE) to a call
that reached a server at the instant it began to shut down, before a handler took it
(grpc/grpc#41785); the calls are pure functions of their requests, so resending is safe."""


# -- connection settings -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Security:
    """TLS (``tls=True``; ``ca_file`` to trust a private CA), mutual TLS (``cert_file`` and
    ``key_file``), and a bearer token sent as ``authorization: Bearer TOKEN`` on every call."""

    tls: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    server_name: str = ""
    """Override the name checked against the server's certificate (tests, IP targets)."""
    token: str = ""

    def channel_credentials(self) -> grpc.ChannelCredentials | None:
        if not (self.tls or self.ca_file or self.cert_file):
            return None
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("mutual TLS needs both cert_file and key_file")
        read = lambda path: Path(path).read_bytes() if path else None  # noqa: E731
        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca_file),
            private_key=read(self.key_file),
            certificate_chain=read(self.cert_file),
        )

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()


def parse_targets(targets: str | Sequence[str]) -> tuple[str, ...]:
    """``"host:port,host:port"`` or a list of them."""
    items = targets.split(",") if isinstance(targets, str) else list(targets)
    out = tuple(item.strip() for item in items if item.strip())
    if not out:
        raise ValueError("no target given (host:port)")
    return out


def _channel_options(security: Security) -> list[tuple[str, Any]]:
    options: list[tuple[str, Any]] = [
        # Reconnect quickly after a replica restarts (gRPC's default first wait is 1 s, growing to 120 s).
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
        ("grpc.enable_retries", 0),  # retries are ours: only UNAVAILABLE, with backoff, across targets
    ]
    if security.server_name:
        options.append(("grpc.ssl_target_name_override", security.server_name))
    return options


# -- connection failures -------------------------------------------------------------------------

_CONNECTION_FAILURES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # (words of gRPC's failure text, lower case; the reason; what it means, in words)
    (("connection refused",), "CONNECTION_REFUSED", "nothing is listening there (connection refused)"),
    (
        ("domain name not found", "errors resolving", "dns resolution failed", "name or service not known"),
        "NAME_NOT_RESOLVED",
        "the host name does not resolve",
    ),
    (("wrong_version_number",), "TLS_NOT_SPOKEN", "the TLS handshake failed: the server does not speak TLS"),
    (
        ("certificate_verify_failed", "certificate verify failed"),
        "TLS_CERTIFICATE_REJECTED",
        "the TLS handshake failed: the server's certificate is not trusted",
    ),
    (("handshake", "ssl_error", "tsi_"), "TLS_HANDSHAKE_FAILED", "the TLS handshake failed"),
    (
        ("http1", "failed parsing http/2", "expected settings frame"),
        "NOT_GRPC",
        "the server there is not a gRPC server (it answered HTTP/1)",
    ),
    (
        ("socket closed", "connection reset", "end of tcp stream", "connection closed", "goaway"),
        "CONNECTION_CLOSED",
        "the server there closed the connection at once",
    ),
    (
        ("before receiving settings", "timed out"),
        "NO_ANSWER",
        "the server there accepted the connection but never answered as a gRPC server",
    ),
    (
        ("network is unreachable", "no route to host", "host is unreachable"),
        "NO_ROUTE",
        "there is no route to that host",
    ),
)


def connection_failure(details: str) -> tuple[str, str]:
    """What a connection failure's text (gRPC's ``details()`` of an UNAVAILABLE call) means: a
    reason (``CONNECTION_REFUSED``, ``NAME_NOT_RESOLVED``, ``TLS_NOT_SPOKEN``,
    ``TLS_CERTIFICATE_REJECTED``, ``TLS_HANDSHAKE_FAILED``, ``NOT_GRPC``, ``CONNECTION_CLOSED``,
    ``NO_ANSWER``, ``NO_ROUTE``, else ``UNAVAILABLE``) and the same in words, for people."""
    text = details.lower()
    for words, reason, meaning in _CONNECTION_FAILURES:
        if any(word in text for word in words):
            return reason, meaning
    return "UNAVAILABLE", f"it does not answer ({details.strip() or 'unavailable'})"


def _probe(channel: Any, timeout: float) -> str | None:
    """One call with a short deadline and no waiting for a connection: gRPC's own account of why
    the channel cannot connect (None when the call got through to a server, whatever it said)."""
    try:
        channel.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=timeout)
    except grpc.RpcError as error:
        failed: Any = error
        if failed.code() is grpc.StatusCode.UNAVAILABLE:
            return str(failed.details() or "")
        if failed.code() is grpc.StatusCode.DEADLINE_EXCEEDED:
            return ""
    return None


_FAIL_AT_ONCE = frozenset(
    {"CONNECTION_REFUSED", "NAME_NOT_RESOLVED", "TLS_NOT_SPOKEN", "TLS_CERTIFICATE_REJECTED", "NOT_GRPC", "NO_ROUTE"}
)
"""Failures that waiting does not mend: an impatient wait gives up at the first one. Others (a
connection accepted but not answered: a server that listens before it serves) are waited out."""


def await_connection(channel: Any, target: str, timeout: float, *, patient: bool = True) -> None:
    """Wait until the sync ``channel`` to ``target`` is connected, at most ``timeout`` seconds.

    ``patient``: wait through every failed attempt (a server that is still starting); otherwise
    give up at the first attempt that fails for good (nothing listening, a TLS mismatch, not a
    gRPC server...), which for a dead address takes milliseconds instead of the whole ``timeout``.
    Raises :class:`BigTwoUnavailable` whose ``reason`` and message say what was seen (see
    :func:`connection_failure`; ``NO_ANSWER`` when nothing happened in time)."""
    changed = threading.Event()
    seen: list[grpc.ChannelConnectivity] = []

    def watch(state: grpc.ChannelConnectivity) -> None:
        seen.append(state)
        changed.set()

    deadline = time.monotonic() + max(0.0, timeout)
    last = ""  # gRPC's account of the latest failed attempt, once asked for

    def probe() -> str | None:
        return _probe(channel, max(0.1, min(2.0, deadline - time.monotonic())))

    channel.subscribe(watch, try_to_connect=True)
    try:
        while changed.wait(max(0.0, deadline - time.monotonic())):
            changed.clear()
            state = seen[-1]
            if state is grpc.ChannelConnectivity.READY:
                return
            if state is grpc.ChannelConnectivity.TRANSIENT_FAILURE and not patient:
                details = probe()
                if details is None:
                    return
                last = details or last
                reason, meaning = connection_failure(last)
                if last and reason in _FAIL_AT_ONCE:
                    raise BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, meaning, reason=reason, target=target)
            if time.monotonic() >= deadline:
                break
    finally:
        channel.unsubscribe(watch)
    if seen and seen[-1] is grpc.ChannelConnectivity.READY:
        return
    if grpc.ChannelConnectivity.TRANSIENT_FAILURE in seen:
        details = probe()
        if details is None:
            return
        last = details or last
        if last:
            reason, meaning = connection_failure(last)
            raise BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, meaning, reason=reason, target=target)
    raise BigTwoUnavailable(
        grpc.StatusCode.UNAVAILABLE, f"no answer within {timeout:g} s", reason="NO_ANSWER", target=target
    )


def check_reachable(
    target: str, *, timeout: float = DEFAULT_TIMEOUT, security: Security | None = None, patient: bool = False
) -> None:
    """Connect to ``target`` once and let go: raises :class:`BigTwoUnavailable` (see
    :func:`await_connection`) when it cannot be reached. For commands that use the generated stubs
    or grpc.aio and want to stop before their first call rather than fail every one."""
    security = security or Security()
    credentials = security.channel_credentials()
    options = _channel_options(security)
    if credentials is None:
        channel = grpc.insecure_channel(target, options=options)
    else:
        channel = grpc.secure_channel(target, credentials, options=options)
    with channel:
        await_connection(channel, target, timeout, patient=patient)


# -- conversions (protobuf stays in this module) -------------------------------------------------

_KIND_FROM_PB = {pb.Kind.Value("KIND_" + kind.name): kind for kind in Kind}
_REASON_FROM_PB = {pb.Reason.Value("REASON_" + reason.name): reason for reason in Reason}


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


def _play(message: pb.Play) -> NamedPlay | None:
    if not message.cards.mask and not message.cards.text:
        return None
    return NamedPlay(message.cards.mask, _KIND_FROM_PB.get(message.kind), message.name)


def _refusal(message: pb.Refusal) -> RefusalInfo | None:
    if not message.reason and not message.reason_id:
        return None
    reason = _REASON_FROM_PB.get(message.reason) or Reason(message.reason_id)
    return RefusalInfo(reason, message.message)


def _outcome(message: pb.MoveOutcome) -> Outcome:
    return Outcome(
        accepted=message.accepted,
        is_pass=message.is_pass,
        play=_play(message.play) if message.HasField("play") else None,
        refusal=None if message.accepted else _refusal(message.refusal),
    )


def _card(text: str) -> Card | None:
    return Card.parse(text) if text else None


def _table(message: pb.TableState) -> TableView:
    return TableView(
        players=message.players,
        moves_made=message.moves_made,
        to_act=message.to_act,
        leader=message.leader,
        table=_play(message.table) if message.HasField("table") else None,
        last_player=message.last_player if message.HasField("last_player") else None,
        cards_left=tuple(message.cards_left),
        played=message.played.mask,
        passed_seats=tuple(message.passed_seats),
        opening_card=_card(message.opening_card),
        over=message.over,
        winner=message.winner if message.HasField("winner") else None,
        scores=tuple(message.scores),
        deal_number=message.deal_number,
        deal_id=message.deal_id,
        ruleset_fingerprint=message.ruleset_fingerprint,
        deal_code=message.deal_code,
    )


def _view(message: pb.SeatView, present: bool) -> SeatHand | None:
    if not present:
        return None
    return SeatHand(message.seat, message.hand.mask, message.ending_now, message.to_act)


def _events(messages: Sequence[pb.Event], ruleset: Ruleset) -> tuple[Event, ...]:
    """Protobuf events to the engine's own event values (hidden hands are 0, as the engine's
    :func:`~bigtwo.engine.redact` gives them)."""
    out: list[Event] = []
    tables = None
    for message in messages:
        which = message.WhichOneof("event")
        if which == "cards_played":
            e = message.cards_played
            tables = tables or tables_for(ruleset)
            play = classify_mask(e.play.cards.mask, tables)
            out.append(CardsPlayed(e.seat, play.mask, play.kind, play.key, e.move_index))
        elif which == "passed":
            out.append(Passed(message.passed.seat, message.passed.move_index, message.passed.automatic))
        elif which == "trick_ended":
            out.append(TrickEnded(message.trick_ended.winner))
        elif which == "last_card":
            out.append(LastCard(message.last_card.seat))
        elif which == "dragon_revealed":
            out.append(DragonRevealed(message.dragon_revealed.seat, message.dragon_revealed.hand.mask))
        elif which == "deal_ended":
            e = message.deal_ended
            # The wire carries the counts; the engine's settlement of them is the record's result.
            settled = settle_with_winner(ruleset, e.winner, e.cards_left, e.twos_left)
            out.append(DealEnded(settled, e.by_dragon))
        elif which == "deal_started":
            e = message.deal_started
            opening = Card.parse(e.opening_card).index if e.opening_card else -1
            face_up = Card.parse(e.face_up_card).index if e.face_up_card else -1
            out.append(
                DealStarted(
                    tuple(hand.mask for hand in e.hands),
                    e.leader,
                    opening,
                    e.deal_number or 1,
                    face_up,
                    e.face_up_seat if e.HasField("face_up_seat") else -1,
                )
            )
    return tuple(out)


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


def _move_text(move: Move | str) -> tuple[int | None, str]:
    if isinstance(move, Move):
        return move.seat, str(move)
    return None, move.strip()


def _cards_text(cards: str | int | Sequence[Card]) -> str:
    if isinstance(cards, int):
        return mask_text(cards)
    if isinstance(cards, str):
        return cards
    return " ".join(str(card) for card in cards)


def settlement_from_pb(message: api.ScoreDealResponse) -> DealSettlement:
    seats = tuple(
        SeatSettlement(s.seat, s.cards_left, s.twos_left, s.rate, s.multiplier, s.penalty, s.score)
        for s in message.seats
    )
    return DealSettlement(message.winner, seats)


def _deal_result_pb(record: DealRecord) -> pb.DealResult:
    return pb.DealResult(
        deal_number=record.deal_number,
        winner=record.winner,
        scores=list(record.scores),
        cards_left=list(record.cards_left),
        deal_code=record.deal_code,
        by_dragon=record.by_dragon,
    )


def _token_refused(error: BigTwoError) -> bool:
    return isinstance(error, BigTwoInvalidArgument) and error.reason in ("TOKEN_UNKNOWN_KEY", "TOKEN_BAD_SIGNATURE")


# -- requests and answers shared by the sync and the asyncio client ------------------------------


class _Calls:
    """Builds each RPC's request and reads its answer; the sync and aio clients only transport."""

    @staticmethod
    def deal(
        ruleset: Ruleset,
        deal_code: str | None,
        hands: Sequence[str] | None,
        context: DealContext | None,
        view_seat: int | None,
    ) -> api.DealRequest:
        request = api.DealRequest(ruleset=ruleset_to_pb(ruleset), context=context_to_pb(context or DealContext()))
        if deal_code:
            request.deal_code = deal_code
        elif hands:
            request.explicit_deal.hands.extend(hands)
        if view_seat is not None:
            request.view_seat = view_seat
        return request

    @staticmethod
    def dealt(
        response: api.DealResponse, ruleset: Ruleset, hands: Sequence[str] | None, context: DealContext | None
    ) -> Dealt:
        game = GameRef(
            ruleset=ruleset,
            deal_code=response.deal_code,
            hands=tuple(hands or ()) if not response.deal_code else (),
            context=context or DealContext(),
            token=response.state_token,
        )
        return Dealt(
            game,
            response.deal_code,
            _table(response.table),
            _events(response.events, ruleset),
            _view(response.view, response.HasField("view")),
            response.seat_token,
        )

    @staticmethod
    def move(game: GameRef, move: Move | str, seat: int | None, index: int | None) -> pb.Move:
        move_seat, text = _move_text(move)
        chosen = seat if seat is not None else move_seat
        if chosen is None:
            raise ValueError("say which seat moves: pass a Move, or seat=")
        out = pb.Move(seat=chosen, text=text)
        if index is not None:
            out.index = index
        return out

    @staticmethod
    def moved(response: Any, game: GameRef, index: int, text: str) -> MoveResult:
        outcome = _outcome(response.outcome)
        if outcome.accepted:
            canonical = "pass" if outcome.is_pass else (outcome.play.text if outcome.play else text)
            game = game.after(canonical, response.state_token or b"")
        elif response.state_token:
            game = replace(game, token=response.state_token)
        has_view = response.HasField("view")
        return MoveResult(
            index,
            outcome,
            _events(response.events, game.ruleset),
            game,
            _table(response.table),
            _view(response.view, has_view),
            getattr(response, "seat_token", b""),
        )

    @staticmethod
    def replayed(response: api.ReplayLogResponse, game: GameRef) -> Replayed:
        moves = game.moves[: response.moves_applied]
        return Replayed(
            response.moves_applied,
            response.refused,
            response.refused_at,
            _refusal(response.refusal) if response.refused else None,
            _events(response.events, game.ruleset),
            _table(response.table),
            replace(game, moves=moves, token=response.state_token),
        )

    @staticmethod
    def with_game(request: Any, game: pb.Game) -> Any:
        """A copy of ``request`` with its game set (the game differs between token and log tries)."""
        out = type(request)()
        out.CopyFrom(request)
        out.game.CopyFrom(game)
        return out

    @staticmethod
    def timeout_request(bot_level: str) -> api.TimeoutMoveRequest:
        return api.TimeoutMoveRequest(bot_level=bot_level)

    @staticmethod
    def bot_request(level: str, seed: int, simulations: int, max_ms: int) -> api.BotMoveRequest:
        return api.BotMoveRequest(level=level, seed=seed, simulations=simulations, max_ms=max_ms)

    @staticmethod
    def bot_choice(response: api.BotMoveResponse) -> BotChoice:
        return BotChoice(Move.parse(response.move.seat, response.move.text), response.name, response.level)

    @staticmethod
    def readout(response: api.NameCardsResponse) -> Readout:
        return Readout(
            response.name,
            _KIND_FROM_PB.get(response.kind),
            response.playable,
            None if response.playable else _refusal(response.refusal),
            response.ending_now,
        )

    @staticmethod
    def standing(response: api.SettleMatchResponse) -> MatchStanding:
        return MatchStanding(
            tuple(response.totals),
            tuple(response.deals_won),
            response.over,
            tuple(response.winners),
            context_from_pb(response.next_context),
        )


@dataclass(slots=True)
class _Channel:
    target: str
    channel: Any
    stub: Any


class _Base:
    """Targets, security, deadlines and retries common to both clients."""

    def __init__(
        self,
        targets: str | Sequence[str] = DEFAULT_TARGET,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        security: Security | None = None,
        tls: bool = False,
        ca_file: str = "",
        cert_file: str = "",
        key_file: str = "",
        server_name: str = "",
        token: str = "",
        stream_timeout: float = DEFAULT_STREAM_TIMEOUT,
        seed: int | None = None,
    ) -> None:
        self.targets = parse_targets(targets)
        self.timeout = timeout
        self.stream_timeout = stream_timeout
        self.retry = retry or RetryPolicy()
        self.security = security or Security(tls, ca_file, cert_file, key_file, server_name, token)
        self._metadata = self.security.metadata()
        self._rng = random.Random(seed)
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self.calls_made = 0
        self.retries_made = 0
        self.cancelled_retries = 0
        """Retries of unary calls answered CANCELLED (a server caught shutting down)."""

    def _retrying(self, code: grpc.StatusCode, attempt: int, policy: RetryPolicy) -> bool:
        """Whether a unary call that failed with ``code`` is sent again (and counts it)."""
        if code not in RETRIED_CODES or attempt + 1 >= policy.attempts:
            return False
        self.retries_made += 1
        if code is grpc.StatusCode.CANCELLED:
            self.cancelled_retries += 1
        return True

    def _index(self) -> int:
        with self._lock:
            return next(self._counter) % len(self.targets)

    def _timeout(self, timeout: float | None) -> float:
        return self.timeout if timeout is None else timeout

    def _make_channels(self, aio: bool) -> list[_Channel]:
        credentials = self.security.channel_credentials()
        options = _channel_options(self.security)
        grpc_mod: Any = grpc.aio if aio else grpc
        out = []
        for target in self.targets:
            if credentials is None:
                channel = grpc_mod.insecure_channel(target, options=options)
            else:
                channel = grpc_mod.secure_channel(target, credentials, options=options)
            out.append(_Channel(target, channel, service_pb2_grpc.BigTwoServiceStub(channel)))
        return out


class BigTwoClient(_Base):
    """The sync client. One channel per target; calls rotate over the targets (round-robin), and a
    call that finds a target UNAVAILABLE is retried, after a backoff, on the next one."""

    def __init__(self, targets: str | Sequence[str] = DEFAULT_TARGET, **kwargs: Any) -> None:
        super().__init__(targets, **kwargs)
        self._channels = self._make_channels(aio=False)

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        for channel in self._channels:
            channel.channel.close()

    def __enter__(self) -> BigTwoClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self, timeout: float = 10.0, *, patient: bool = True) -> None:
        """Block until every target accepts connections, at most ``timeout`` seconds each; raises
        :class:`BigTwoUnavailable` saying why one does not (:func:`await_connection`). Not
        ``patient``: give up at a target's first failed attempt instead of waiting for it to start."""
        for channel in self._channels:
            await_connection(channel.channel, channel.target, timeout, patient=patient)

    # -- transport -------------------------------------------------------------------------------

    def _call(self, method: str, request: Any, timeout: float | None = None, *, retry: bool = True) -> Any:
        policy = self.retry if retry else NO_RETRY
        start = self._index()
        attempt = 0
        while True:
            channel = self._channels[(start + attempt) % len(self._channels)]
            self.calls_made += 1
            try:
                return getattr(channel.stub, method)(request, timeout=self._timeout(timeout), metadata=self._metadata)
            except grpc.RpcError as error:
                if self._retrying(error.code(), attempt, policy):  # type: ignore[attr-defined]
                    time.sleep(policy.delay(attempt, self._rng))
                    attempt += 1
                    continue
                raise error_from_rpc(error, channel.target) from None

    def _game_call(self, method: str, build: Any, game: GameRef, timeout: float | None) -> Any:
        """A call on a game: with its token; when the token is refused as foreign (keys rotated,
        another deployment), once more with the whole log."""
        try:
            return self._call(method, build(game_to_pb(game)), timeout)
        except BigTwoError as error:
            if game.token and _token_refused(error) and (game.deal_code or game.hands):
                return self._call(method, build(game_to_pb(game, use_token=False)), timeout)
            raise

    # -- rulesets --------------------------------------------------------------------------------

    def list_presets(self, *, timeout: float | None = None) -> list[PresetInfo]:
        response = self._call("ListPresets", api.ListPresetsRequest(), timeout)
        return [
            PresetInfo(p.name, p.summary, ruleset_from_pb(p.ruleset), p.fingerprint, tuple(p.description))
            for p in response.presets
        ]

    def describe_ruleset(self, ruleset: Ruleset, *, timeout: float | None = None) -> RulesetInfo:
        response = self._call("DescribeRuleset", api.DescribeRulesetRequest(ruleset=ruleset_to_pb(ruleset)), timeout)
        return RulesetInfo(
            ruleset_from_pb(response.ruleset),
            dict(response.overrides),
            response.fingerprint,
            tuple(response.description),
        )

    # -- deals and moves -------------------------------------------------------------------------

    def deal(
        self,
        ruleset: Ruleset,
        *,
        deal_code: str | None = None,
        hands: Sequence[str] | None = None,
        context: DealContext | None = None,
        view_seat: int | None = None,
        timeout: float | None = None,
    ) -> Dealt:
        """A new deal: from a deal code, explicit hands, or fresh cards (the service picks a code).
        Retrying a fresh deal is safe: the service keeps nothing, so a lost answer is just dropped."""
        request = _Calls.deal(ruleset, deal_code, hands, context, view_seat)
        return _Calls.dealt(self._call("Deal", request, timeout), ruleset, hands, context)

    def apply_move(
        self,
        game: GameRef,
        move: Move | str,
        *,
        seat: int | None = None,
        view_seat: int | None = None,
        timeout: float | None = None,
    ) -> MoveResult:
        """Apply ``move`` (its index is ``game.moves_made``). A refused move is an answer
        (``result.outcome.refusal``), not an exception; ``result.game`` is the game after it."""
        index = game.moves_made
        message = _Calls.move(game, move, seat, index)

        def build(g: pb.Game) -> api.ApplyMoveRequest:
            request = api.ApplyMoveRequest(game=g, move=message)
            if view_seat is not None:
                request.view_seat = view_seat
            return request

        return _Calls.moved(self._game_call("ApplyMove", build, game, timeout), game, index, message.text)

    def validate_move(
        self, game: GameRef, move: Move | str, *, seat: int | None = None, timeout: float | None = None
    ) -> Outcome:
        message = _Calls.move(game, move, seat, game.moves_made)
        response = self._game_call(
            "ValidateMove", lambda g: api.ValidateMoveRequest(game=g, move=message), game, timeout
        )
        return _outcome(response.outcome)

    def legal_moves(self, game: GameRef, *, timeout: float | None = None) -> LegalMoves:
        response = self._game_call("LegalMoves", lambda g: api.LegalMovesRequest(game=g), game, timeout)
        plays = tuple(p for p in (_play(m) for m in response.plays) if p is not None)
        return LegalMoves(response.seat, plays, response.can_pass)

    def next_hint(self, game: GameRef, after: str | int | Sequence[Card] = "", *, timeout: float | None = None) -> Hint:
        """HK's Find: the next play of the hint cycle after the current selection."""
        text = _cards_text(after)
        response = self._game_call("NextHint", lambda g: api.NextHintRequest(game=g, after=text), game, timeout)
        return Hint(_play(response.play) if response.HasField("play") else None, response.cycle_length)

    def timeout_move(self, game: GameRef, *, bot_level: str = "", timeout: float | None = None) -> Move:
        """The move a timed-out turn makes (apply it with :meth:`apply_move`): the rules' (HK: pass,
        or the lowest card when leading), or with ``bot_level`` that bot's (TW)."""
        request = _Calls.timeout_request(bot_level)
        response = self._game_call("TimeoutMove", lambda g: _Calls.with_game(request, g), game, timeout)
        return Move.parse(response.move.seat, response.move.text)

    def bot_move(
        self,
        game: GameRef,
        level: str,
        *,
        seed: int = 0,
        simulations: int = 0,
        max_ms: int = 0,
        timeout: float | None = None,
    ) -> BotChoice:
        """The move a bot of ``level`` (random, beginner, good, great, pro) makes for the seat to
        act, decided by the service from that seat's view only; the same game, level and seed give
        the same move. ``simulations`` / ``max_ms``: the pro search's budget (0: its default)."""
        request = _Calls.bot_request(level, seed, simulations, max_ms)
        response = self._game_call("BotMove", lambda g: _Calls.with_game(request, g), game, timeout)
        return _Calls.bot_choice(response)

    def split_hand(
        self, ruleset: Ruleset, hand: str | int | Sequence[Card], *, timeout: float | None = None
    ) -> list[NamedPlay]:
        request = api.SplitHandRequest(ruleset=ruleset_to_pb(ruleset), hand=_cards_text(hand))
        return [p for p in (_play(m) for m in self._call("SplitHand", request, timeout).plays) if p is not None]

    def name_cards(
        self,
        cards: str | int | Sequence[Card],
        *,
        game: GameRef | None = None,
        seat: int = 0,
        ruleset: Ruleset | None = None,
        table: str | int | Sequence[Card] = "",
        timeout: float | None = None,
    ) -> Readout:
        """The readout line: for a seat in a game, or under a ruleset against a table."""
        text = _cards_text(cards)
        if game is not None:
            response = self._game_call(
                "NameCards", lambda g: api.NameCardsRequest(cards=text, game=g, seat=seat), game, timeout
            )
        else:
            request = api.NameCardsRequest(
                cards=text, ruleset=ruleset_to_pb(ruleset or Ruleset()), table=_cards_text(table)
            )
            response = self._call("NameCards", request, timeout)
        return _Calls.readout(response)

    def score_deal(self, game: GameRef, *, timeout: float | None = None) -> DealSettlement:
        """The settlement card of a finished deal."""
        response = self._game_call("ScoreDeal", lambda g: api.ScoreDealRequest(game=g), game, timeout)
        return settlement_from_pb(response)

    def score_counts(
        self,
        ruleset: Ruleset,
        cards_left: Sequence[int],
        twos_left: Sequence[int] = (),
        *,
        timeout: float | None = None,
    ) -> DealSettlement:
        counts = pb.CardCounts(ruleset=ruleset_to_pb(ruleset), cards_left=list(cards_left), twos_left=list(twos_left))
        return settlement_from_pb(self._call("ScoreDeal", api.ScoreDealRequest(counts=counts), timeout))

    def settle_match(
        self,
        ruleset: Ruleset,
        deals: Sequence[DealRecord],
        *,
        empty_seats: Sequence[int] = (),
        stopped: bool = False,
        timeout: float | None = None,
    ) -> MatchStanding:
        request = api.SettleMatchRequest(
            ruleset=ruleset_to_pb(ruleset),
            deals=[_deal_result_pb(d) for d in deals],
            empty_seats=list(empty_seats),
            stopped=stopped,
        )
        return _Calls.standing(self._call("SettleMatch", request, timeout))

    def replay_log(self, game: GameRef, *, view_seat: int | None = None, timeout: float | None = None) -> Replayed:
        """Replay ``game``'s whole log (its token is ignored); stops at the first refused move."""
        request = api.ReplayLogRequest(log=game_to_pb(game, use_token=False).log)
        if view_seat is not None:
            request.view_seat = view_seat
        return _Calls.replayed(self._call("ReplayLog", request, timeout), game)

    # -- the stream ------------------------------------------------------------------------------

    def play_stream(
        self,
        game: GameRef,
        *,
        view_seat: int | None = None,
        resume: bool = True,
        timeout: float | None = None,
    ) -> PlayStream:
        """Open a PlayStream on ``game`` (use as a context manager). With ``resume`` (default) the
        stream asks for a state token with every result, and a stream broken by UNAVAILABLE is
        reopened from the last token on the next target, the pending move sent again."""
        stream = PlayStream(self, game, view_seat=view_seat, resume=resume, timeout=timeout)
        stream.open()
        return stream


class _Feed:
    """The request side of a sync bidirectional stream: a blocking queue as an iterator."""

    _END = object()

    def __init__(self) -> None:
        import queue

        self._queue: Any = queue.Queue()

    def put(self, item: Any) -> None:
        self._queue.put(item)

    def close(self) -> None:
        self._queue.put(self._END)

    def __iter__(self) -> Iterator[Any]:
        while True:
            item = self._queue.get()
            if item is self._END:
                return
            yield item


class PlayStream:
    """One deal over ``PlayStream``: :meth:`move` sends a move and waits for its result."""

    def __init__(
        self, client: BigTwoClient, game: GameRef, *, view_seat: int | None, resume: bool, timeout: float | None
    ) -> None:
        self.client = client
        self.game = game
        self.view_seat = view_seat
        self.resume = resume
        self.timeout = client.stream_timeout if timeout is None else timeout
        self.opened: Dealt | None = None
        self.reopened = 0
        self._feed: _Feed | None = None
        self._responses: Any = None
        self._target = ""

    def open(self) -> Dealt:
        policy = self.client.retry
        attempt = 0
        while True:
            try:
                return self._open_once()
            except BigTwoUnavailable:
                if attempt + 1 >= policy.attempts:
                    raise
                time.sleep(policy.delay(attempt, self.client._rng))
                attempt += 1

    def _open_once(self) -> Dealt:
        self._close_call()
        channel = self.client._channels[self.client._index()]
        self._target = channel.target
        feed = self._feed = _Feed()
        opening = api.StreamOpen(game=game_to_pb(self.game), state_tokens=self.resume)
        if self.view_seat is not None:
            opening.view_seat = self.view_seat
        feed.put(api.PlayStreamRequest(open=opening))
        self._responses = channel.stub.PlayStream(iter(feed), timeout=self.timeout, metadata=self.client._metadata)
        response = self._next().opened
        self.game = replace(self.game, token=response.state_token or self.game.token)
        dealt = Dealt(
            self.game,
            response.deal_code,
            _table(response.table),
            _events(response.events, self.game.ruleset),
            _view(response.view, response.HasField("view")),
            response.seat_token,
        )
        self.opened = dealt
        return dealt

    def _next(self) -> Any:
        try:
            return next(self._responses)
        except grpc.RpcError as error:
            raise error_from_rpc(error, self._target) from None
        except StopIteration:
            raise BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, "the stream ended", target=self._target) from None

    def move(self, move: Move | str, *, seat: int | None = None, validate_only: bool = False) -> MoveResult:
        index = self.game.moves_made
        message = _Calls.move(self.game, move, seat, index)
        policy = self.client.retry
        attempt = 0
        while True:
            assert self._feed is not None
            self._feed.put(api.PlayStreamRequest(move=api.StreamMove(move=message, validate_only=validate_only)))
            try:
                reply = self._next().move_result
                break
            except BigTwoUnavailable:
                if not self.resume or attempt + 1 >= policy.attempts:
                    raise
                # The stream broke: the move may or may not have been applied on the dead stream.
                # Reopen from the last token (the game before this move) and send it again: the
                # game is the caller's, so nothing is lost and nothing applied twice.
                time.sleep(policy.delay(attempt, self.client._rng))
                attempt += 1
                self.reopened += 1
                try:
                    self._open_once()
                except BigTwoUnavailable:
                    continue
        if validate_only:
            return MoveResult(index, _outcome(reply.outcome), (), self.game, _table(reply.table), None)
        result = _Calls.moved(reply, self.game, index, message.text)
        self.game = result.game
        return result

    def _close_call(self) -> None:
        if self._feed is not None:
            self._feed.close()
        if self._responses is not None:
            self._responses.cancel()
        self._feed = self._responses = None

    def close(self) -> None:
        self._close_call()

    def __enter__(self) -> PlayStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- asyncio -------------------------------------------------------------------------------------


class AsyncBigTwoClient(_Base):
    """The same client on ``grpc.aio``: every method is a coroutine; ``async with`` closes it."""

    def __init__(self, targets: str | Sequence[str] = DEFAULT_TARGET, **kwargs: Any) -> None:
        super().__init__(targets, **kwargs)
        self._channels = self._make_channels(aio=True)

    async def close(self) -> None:
        for channel in self._channels:
            await channel.channel.close()

    async def __aenter__(self) -> AsyncBigTwoClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, method: str, request: Any, timeout: float | None = None) -> Any:
        import asyncio

        start = self._index()
        attempt = 0
        while True:
            channel = self._channels[(start + attempt) % len(self._channels)]
            self.calls_made += 1
            try:
                return await getattr(channel.stub, method)(
                    request, timeout=self._timeout(timeout), metadata=self._metadata
                )
            except grpc.aio.AioRpcError as error:
                if self._retrying(error.code(), attempt, self.retry):
                    await asyncio.sleep(self.retry.delay(attempt, self._rng))
                    attempt += 1
                    continue
                raise error_from_rpc(error, channel.target) from None

    async def _game_call(self, method: str, build: Any, game: GameRef, timeout: float | None) -> Any:
        try:
            return await self._call(method, build(game_to_pb(game)), timeout)
        except BigTwoError as error:
            if game.token and _token_refused(error) and (game.deal_code or game.hands):
                return await self._call(method, build(game_to_pb(game, use_token=False)), timeout)
            raise

    async def list_presets(self, *, timeout: float | None = None) -> list[PresetInfo]:
        response = await self._call("ListPresets", api.ListPresetsRequest(), timeout)
        return [
            PresetInfo(p.name, p.summary, ruleset_from_pb(p.ruleset), p.fingerprint, tuple(p.description))
            for p in response.presets
        ]

    async def deal(
        self,
        ruleset: Ruleset,
        *,
        deal_code: str | None = None,
        hands: Sequence[str] | None = None,
        context: DealContext | None = None,
        view_seat: int | None = None,
        timeout: float | None = None,
    ) -> Dealt:
        request = _Calls.deal(ruleset, deal_code, hands, context, view_seat)
        return _Calls.dealt(await self._call("Deal", request, timeout), ruleset, hands, context)

    async def apply_move(
        self,
        game: GameRef,
        move: Move | str,
        *,
        seat: int | None = None,
        view_seat: int | None = None,
        timeout: float | None = None,
    ) -> MoveResult:
        index = game.moves_made
        message = _Calls.move(game, move, seat, index)

        def build(g: pb.Game) -> api.ApplyMoveRequest:
            request = api.ApplyMoveRequest(game=g, move=message)
            if view_seat is not None:
                request.view_seat = view_seat
            return request

        return _Calls.moved(await self._game_call("ApplyMove", build, game, timeout), game, index, message.text)

    async def validate_move(
        self, game: GameRef, move: Move | str, *, seat: int | None = None, timeout: float | None = None
    ) -> Outcome:
        message = _Calls.move(game, move, seat, game.moves_made)
        response = await self._game_call(
            "ValidateMove", lambda g: api.ValidateMoveRequest(game=g, move=message), game, timeout
        )
        return _outcome(response.outcome)

    async def next_hint(
        self, game: GameRef, after: str | int | Sequence[Card] = "", *, timeout: float | None = None
    ) -> Hint:
        text = _cards_text(after)
        response = await self._game_call("NextHint", lambda g: api.NextHintRequest(game=g, after=text), game, timeout)
        return Hint(_play(response.play) if response.HasField("play") else None, response.cycle_length)

    async def timeout_move(self, game: GameRef, *, bot_level: str = "", timeout: float | None = None) -> Move:
        request = _Calls.timeout_request(bot_level)
        response = await self._game_call("TimeoutMove", lambda g: _Calls.with_game(request, g), game, timeout)
        return Move.parse(response.move.seat, response.move.text)

    async def bot_move(
        self,
        game: GameRef,
        level: str,
        *,
        seed: int = 0,
        simulations: int = 0,
        max_ms: int = 0,
        timeout: float | None = None,
    ) -> BotChoice:
        """See :meth:`BigTwoClient.bot_move`."""
        request = _Calls.bot_request(level, seed, simulations, max_ms)
        response = await self._game_call("BotMove", lambda g: _Calls.with_game(request, g), game, timeout)
        return _Calls.bot_choice(response)

    async def name_cards(
        self, cards: str | int | Sequence[Card], *, game: GameRef, seat: int, timeout: float | None = None
    ) -> Readout:
        text = _cards_text(cards)
        response = await self._game_call(
            "NameCards", lambda g: api.NameCardsRequest(cards=text, game=g, seat=seat), game, timeout
        )
        return _Calls.readout(response)

    async def score_deal(self, game: GameRef, *, timeout: float | None = None) -> DealSettlement:
        response = await self._game_call("ScoreDeal", lambda g: api.ScoreDealRequest(game=g), game, timeout)
        return settlement_from_pb(response)

    async def settle_match(
        self, ruleset: Ruleset, deals: Sequence[DealRecord], *, stopped: bool = False, timeout: float | None = None
    ) -> MatchStanding:
        request = api.SettleMatchRequest(
            ruleset=ruleset_to_pb(ruleset), deals=[_deal_result_pb(d) for d in deals], stopped=stopped
        )
        return _Calls.standing(await self._call("SettleMatch", request, timeout))

    async def play_stream(self, game: GameRef, *, view_seat: int | None = None) -> AsyncPlayStream:
        """Open a PlayStream (``async with``); see :meth:`BigTwoClient.play_stream`."""
        stream = AsyncPlayStream(self, game, view_seat)
        await stream.open()
        return stream


_BROKEN_CORE = "Internal error from Core"
"""grpc.aio's details for a stream whose connection broke under it (not a bug in the service)."""


class AsyncPlayStream:
    """One deal over ``PlayStream`` on grpc.aio (reopened from the last token when it breaks)."""

    def __init__(self, client: AsyncBigTwoClient, game: GameRef, view_seat: int | None) -> None:
        self.client = client
        self.game = game
        self.view_seat = view_seat
        self.opened: Dealt | None = None
        self.reopened = 0
        self._call: Any = None
        self._target = ""

    async def open(self) -> Dealt:
        """Open the stream; a target found UNAVAILABLE is retried on the next one after a backoff
        (the client's retry policy), like :meth:`PlayStream.open`."""
        import asyncio

        policy = self.client.retry
        attempt = 0
        while True:
            try:
                return await self._open_once()
            except BigTwoUnavailable:
                if attempt + 1 >= policy.attempts:
                    raise
                await asyncio.sleep(policy.delay(attempt, self.client._rng))
                attempt += 1

    async def _open_once(self) -> Dealt:
        await self.close()
        channel = self.client._channels[self.client._index()]
        self._target = channel.target
        self._call = channel.stub.PlayStream(timeout=self.client.stream_timeout, metadata=self.client._metadata)
        opening = api.StreamOpen(game=game_to_pb(self.game), state_tokens=True)
        if self.view_seat is not None:
            opening.view_seat = self.view_seat
        response = (await self._exchange(api.PlayStreamRequest(open=opening))).opened
        self.game = replace(self.game, token=response.state_token or self.game.token)
        self.opened = Dealt(
            self.game,
            response.deal_code,
            _table(response.table),
            _events(response.events, self.game.ruleset),
            _view(response.view, response.HasField("view")),
            response.seat_token,
        )
        return self.opened

    async def _exchange(self, request: Any) -> Any:
        """One request, one response. A broken connection shows up as UNAVAILABLE, as a write to a
        call that already ended (``asyncio.InvalidStateError``), or as INTERNAL "Internal error
        from Core" from grpc.aio: all three are :class:`BigTwoUnavailable`, so :meth:`move` reopens."""
        import asyncio

        try:
            await self._call.write(request)
            response = await self._call.read()
        except asyncio.InvalidStateError as error:
            raise BigTwoUnavailable(
                grpc.StatusCode.UNAVAILABLE, f"the stream ended ({error})", target=self._target
            ) from None
        except grpc.aio.AioRpcError as error:
            if error.code() is grpc.StatusCode.INTERNAL and _BROKEN_CORE in (error.details() or ""):
                raise BigTwoUnavailable(
                    grpc.StatusCode.UNAVAILABLE, f"the stream broke ({error.details()})", target=self._target
                ) from None
            raise error_from_rpc(error, self._target) from None
        if response is grpc.aio.EOF:
            raise BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, "the stream ended", target=self._target)
        return response

    async def move(self, move: Move | str, *, seat: int | None = None) -> MoveResult:
        import asyncio

        index = self.game.moves_made
        message = _Calls.move(self.game, move, seat, index)
        attempt = 0
        while True:
            try:
                reply = (await self._exchange(api.PlayStreamRequest(move=api.StreamMove(move=message)))).move_result
                break
            except BigTwoUnavailable:
                if attempt + 1 >= self.client.retry.attempts:
                    raise
                await asyncio.sleep(self.client.retry.delay(attempt, self.client._rng))
                attempt += 1
                self.reopened += 1
                try:
                    await self._open_once()
                except BigTwoUnavailable:
                    continue
        result = _Calls.moved(reply, self.game, index, message.text)
        self.game = result.game
        return result

    async def events(self) -> AsyncIterator[Event]:  # pragma: no cover - convenience
        if self.opened is not None:
            for event in self.opened.events:
                yield event

    async def close(self) -> None:
        if self._call is not None:
            self._call.cancel()
            self._call = None

    async def __aenter__(self) -> AsyncPlayStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = [
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "AsyncBigTwoClient",
    "AsyncPlayStream",
    "BigTwoClient",
    "BigTwoDeadlineExceeded",
    "BigTwoError",
    "BigTwoFailedPrecondition",
    "BigTwoInternal",
    "BigTwoInvalidArgument",
    "BigTwoResourceExhausted",
    "BigTwoUnauthenticated",
    "BigTwoUnavailable",
    "BotChoice",
    "Dealt",
    "FieldViolation",
    "GameRef",
    "Hint",
    "LegalMoves",
    "MatchStanding",
    "MoveResult",
    "NamedPlay",
    "Outcome",
    "PlayStream",
    "PresetInfo",
    "Readout",
    "RefusalInfo",
    "Replayed",
    "RetryPolicy",
    "RulesetInfo",
    "SeatHand",
    "Security",
    "TableView",
    "error_from_rpc",
    "parse_targets",
]
