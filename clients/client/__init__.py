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

from importlib import import_module
from typing import Any

from bigtwo.engine.installs import require_extra

# The client extra's modules (pip install 'bigtwo[client]'; bigtwo.cli.extras maps each to its extra,
# tests/test_installs.py checks): without them, importing the package fails at once with that sentence.
CLIENT_MODULES = ("grpc", "google.protobuf", "google.rpc")

require_extra(__name__, "client", CLIENT_MODULES)

_HOME_OF: dict[str, str] = {
    **dict.fromkeys(
        (
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
        ),
        "client",
    ),
    **dict.fromkeys(("DealOutcome", "Seat", "Table", "bot_seat", "script_seat"), "table"),
}
"""The package's public names, declared here once, each with the module it comes from (a name of
that module's ``__all__``: tests/test_client_api.py checks each)."""
__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'bigtwo.client' has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
