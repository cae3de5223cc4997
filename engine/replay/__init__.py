"""Replay files and auditing (issue 4): a deterministic, hash-chained, optionally signed TOML
record of a whole match, the checker that re-runs it against the engine, and two renderers.

Start here::

    from . import read_replay, audit_log, ReplayWriter, dumps, loads

    log = read_replay("game.toml")        # lenient import, ReplayFormatError names the line
    verdict = audit_log(log, key=None)    # AuditVerdict: VALID, or the first thing wrong
    text = dumps(log)                     # canonical bytes: same game -> same text

``format`` (parse/serialize/hash chain/signature) and ``audit`` are pure; only the explicit
``read_replay``/``write_replay`` helpers touch files.
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
    read_replay,
    seal,
    sign,
    signature_for,
    write_replay,
)
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
    "read_replay",
    "seal",
    "sign",
    "signature_for",
    "write_replay",
]
