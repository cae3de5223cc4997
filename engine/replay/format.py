"""The Big Two replay file (``bigtwo-replay/1``): one import for the whole format. Its parts are
:mod:`.model` (the frozen values and :class:`ReplayFormatError`), :mod:`.canonical` (the canonical
text, hash chain and HMAC signature), :mod:`.actions` (one action line) and :mod:`.reader`
(:func:`loads`). Pure: text in, text out; files are the client's (``bigtwo.client.replay_files``).

A replay file is TOML (inspired by poker's PHH). Seats are referred to as ``p1`` .. ``pN`` (``p1`` is
engine seat 0). A deal lists one action per line, each naming its actor::

    actions = [
      "p1 3D 4D 5D 6D 7H",        # a play (cards in canonical order)
      "p2 pass",                  # a pass
      "p3 pass auto",             # an auto-pass the engine made (HK auto_pass)
      "p4 pass timeout",          # a timed-out turn (the engine's timeout move)
      "p2 9H refused does-not-beat",   # an attempt the rules refused (changes nothing)
      "p3 left",                  # the seat was left (a bot plays it under the seat's name)
      "p3 taken bot:2 Kim",       # the seat was taken over (kind[:level] then name)
      "p1 8S # any text after # is a comment kept in the log",
    ]

Determinism: :func:`dumps` writes one canonical text for a :class:`GameLog`; nothing in it depends on
the machine, the clock or dict order. Tamper evidence: every element (the header, each deal's
header, each action, each result) is chained by SHA-256, ``h = sha256(h_prev + "\\n" + element)``; the
head after each deal is stored in the deal (``chain``) and the final head in ``[seal]``; the optional
signature is ``hmac-sha256:`` + HMAC-SHA256(key, ``"bigtwo-replay/1 seal " + head``).
"""

from __future__ import annotations

from .actions import parse_action
from .canonical import HEADER_COMMENT, chain_heads, dumps, seal, sign, signature_for
from .general import locate
from .limits import DEFAULT_LIMITS
from .model import (
    FORMAT_VERSION,
    SIGNATURE_SCHEME,
    Action,
    ActionKind,
    DealLog,
    DealResult,
    GameLog,
    MatchResult,
    ReplayFormatError,
    SeatInfo,
    SeatResult,
)
from .reader import loads

__all__ = [
    "DEFAULT_LIMITS",
    "FORMAT_VERSION",
    "HEADER_COMMENT",
    "SIGNATURE_SCHEME",
    "Action",
    "ActionKind",
    "DealLog",
    "DealResult",
    "GameLog",
    "MatchResult",
    "ReplayFormatError",
    "SeatInfo",
    "SeatResult",
    "chain_heads",
    "dumps",
    "loads",
    "locate",
    "parse_action",
    "seal",
    "sign",
    "signature_for",
]
