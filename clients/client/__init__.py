"""Clients for the Big Two service: the typed gRPC client (:mod:`bigtwo.client.client` gathers its
modules: ``results``, ``client_errors``, ``codec``, ``calls``, ``transport``, ``connect``,
``sync_client``, ``aio_client``), the table helper (:mod:`bigtwo.client.table`), replay files and
the ``bigtwo`` command line.

``from bigtwo.client import BigTwoClient`` works; the client's modules (and gRPC) are imported only
when first used, so ``bigtwo`` commands that need no gRPC start fast. They are imported through
:mod:`bigtwo.client.client`, the one name :mod:`bigtwo.cli.errors` looks the client's exceptions
up by.
"""

from __future__ import annotations

from typing import Any

_CLIENT_NAMES = frozenset(
    {
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
    }
)
_TABLE_NAMES = frozenset({"Table", "Seat", "DealOutcome", "bot_seat", "script_seat"})


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    if name in _TABLE_NAMES:
        from . import table

        return getattr(table, name)
    raise AttributeError(f"module 'bigtwo.client' has no attribute {name!r}")
