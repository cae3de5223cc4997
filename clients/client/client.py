"""The reference Python client of the Big Two service (docs/CLIENT.md), under one name.

A small typed wrapper over gRPC that speaks the engine's own values: an engine
:class:`~bigtwo.engine.Ruleset` goes in, engine :class:`~bigtwo.engine.Card`, :class:`Move`,
:class:`Kind` and event values come out, and results are small frozen dataclasses. No protobuf
message appears in a public signature.

The game lives with the caller (the service is stateless): every call that works on a game takes a
:class:`GameRef` (ruleset, deal code or hands, context, the moves so far and the latest state token)
and every accepted move returns the next one. ::

    from . import BigTwoClient
    from bigtwo.engine import preset

    with BigTwoClient("127.0.0.1:50051") as client:
        dealt = client.deal(preset("classic"), deal_code="0000003NQK8N1")
        game = dealt.game
        while not dealt.table.over:          # (see examples/deal_and_play_unary.py)
            hint = client.next_hint(game)
            ...

This module gathers the client's parts, one concern each:

====================================  ==========================================================
:mod:`bigtwo.client.results`          the frozen values calls answer (``GameRef``, ``MoveResult``...)
:mod:`bigtwo.client.client_errors`    ``BigTwoError`` and its subclasses, connection failures
:mod:`bigtwo.client.codec`            protobuf messages to and from those values
:mod:`bigtwo.client.calls`            the one table of RPCs and a builder per public method
:mod:`bigtwo.client.transport`        targets, channels, TLS and token, deadlines, the retry policy
:mod:`bigtwo.client.connect`          waiting for a target, and saying why it cannot be reached
:mod:`bigtwo.client.sync_client`      ``BigTwoClient`` and ``PlayStream``
:mod:`bigtwo.client.aio_client`       ``AsyncBigTwoClient`` and ``AsyncPlayStream`` (``grpc.aio``)
====================================  ==========================================================
"""

from __future__ import annotations

from .aio_client import AsyncBigTwoClient, AsyncPlayStream
from .calls import SERVICE
from .client_errors import (
    BigTwoDeadlineExceeded,
    BigTwoError,
    BigTwoFailedPrecondition,
    BigTwoInternal,
    BigTwoInvalidArgument,
    BigTwoResourceExhausted,
    BigTwoUnauthenticated,
    BigTwoUnavailable,
    FieldViolation,
    connection_failure,
    error_from_rpc,
)
from .codec import (
    context_from_pb,
    context_to_pb,
    game_to_pb,
    ruleset_from_pb,
    ruleset_to_pb,
    settlement_from_pb,
)
from .connect import await_connection, check_reachable
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
    RefusalInfo,
    Replayed,
    RulesetInfo,
    SeatHand,
    TableView,
)
from .sync_client import BigTwoClient, PlayStream
from .transport import (
    DEFAULT_STREAM_TIMEOUT,
    DEFAULT_TARGET,
    DEFAULT_TIMEOUT,
    NO_RETRY,
    RETRIED_CODES,
    RetryPolicy,
    Security,
    parse_targets,
)

__all__ = [
    "DEFAULT_STREAM_TIMEOUT",
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "RETRIED_CODES",
    "SERVICE",
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
    "BotLevels",
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
    "await_connection",
    "check_reachable",
    "connection_failure",
    "context_from_pb",
    "context_to_pb",
    "error_from_rpc",
    "game_to_pb",
    "parse_targets",
    "ruleset_from_pb",
    "ruleset_to_pb",
    "settlement_from_pb",
]
