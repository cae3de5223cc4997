"""Replay files and auditing: a deterministic, hash-chained, optionally signed TOML
record of a whole match, and the checker that re-runs it against the engine.

Start here::

    from bigtwo.engine.replay import audit_log, ReplayWriter, dumps, loads

    log = loads(text)                     # lenient import, ReplayFormatError names the line
    verdict = audit_log(log, key=None)    # AuditVerdict: VALID, or the first thing wrong
    text = dumps(log)                     # canonical bytes: same game -> same text

Pure, no I/O: ``model`` (the values), ``canonical`` (the text, hash chain and signature), ``reader``
(``loads``, with ``layout`` and ``general`` under it), ``actions`` (one action line), ``validate``
(one log's structure), ``audit`` and ``writer``; ``format`` gathers the format's names. Files are
read and written by ``bigtwo.client.replay_files``.
"""

from .audit import AuditVerdict, Problem, StepView, VerdictKind, audit_log, audit_text
from .format import (
    FORMAT_VERSION,
    Action,
    ActionKind,
    DealLog,
    DealResult,
    GameLog,
    MatchResult,
    ReplayFormatError,
    SeatInfo,
    SeatResult,
    chain_heads,
    dumps,
    loads,
    seal,
    sign,
    signature_for,
)
from .validate import validate_log
from .writer import ReplayWriter, actions_from_events, game_log_from_deals

__all__ = [
    "FORMAT_VERSION",
    "Action",
    "ActionKind",
    "AuditVerdict",
    "DealLog",
    "DealResult",
    "GameLog",
    "MatchResult",
    "Problem",
    "ReplayFormatError",
    "ReplayWriter",
    "SeatInfo",
    "SeatResult",
    "StepView",
    "VerdictKind",
    "actions_from_events",
    "audit_log",
    "audit_text",
    "chain_heads",
    "dumps",
    "game_log_from_deals",
    "loads",
    "seal",
    "sign",
    "signature_for",
    "validate_log",
]
