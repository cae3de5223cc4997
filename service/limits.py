"""Every limit on what one request may ask of the service, in one table.

Each limit is checked before the work it bounds: before a text is parsed, a log replayed, a hand's
plays listed or a replay re-run. A request over a limit is refused with INVALID_ARGUMENT (a value
that cannot be right, such as a 40-card hand) or RESOURCE_EXHAUSTED (a request that could be right
but asks for more work than one call may take: a longer log, a larger audit), naming the field and
the limit. docs/SECURITY.md says why each one is where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bigtwo.engine.replay.limits import ReplayLimits


@dataclass(frozen=True, slots=True)
class Limits:
    """The request limits of one server (the defaults are the documented ones)."""

    message_bytes: int = 1 << 20
    """Largest request or response message (gRPC's receive and send limits; ``--max-message-bytes``)."""
    card_text: int = 256
    """Longest card text in one field: a hand of 18 cards written with suit symbols is about 60."""
    hand_cards: int = 18
    """Most cards in one hand given as input: 17 dealt to each of 3 players, plus the face-up card."""
    options: int = 32
    """Most options overriding a preset (RULES.md has fewer than 32)."""
    option_name: int = 64
    option_value: int = 1024
    """Longest option value: an explicit straights ladder of every rung is about 200 characters."""
    deal_code_text: int = 64
    token_bytes: int = 2048
    """Longest state token. A token grows with the deal's public history, a byte a move and a byte
    a card played, which the rules bound (``tokens.MAX_HISTORY_BYTES``); what the longest deal's
    token leaves of this limit is the room for a ruleset's overrides (``tokens.MAX_OVERRIDES_BYTES``,
    computed from the token layout and checked at import)."""
    log_moves: int = 1024
    """Longest log replayed (a deal has at most a few hundred moves): longer is RESOURCE_EXHAUSTED."""
    match_deals: int = 1000
    """Most deals in one match settled or audited."""
    audit_actions: int = 20_000
    """Most actions (moves, auto-passes, refused attempts) one AuditLog re-runs."""
    audit_steps: int = 5_000
    """Most steps an AuditLog returns with want_steps (a step is one action's table)."""
    bot_simulations: int = 10_000
    bot_ms: int = 10_000
    play_bots_moves: int = 64
    """Most moves one PlayBots makes. Between two turns of a person the bots make a few moves (at
    most a trick's worth), so this cuts only a call whose every seat is a bot (a host's table of
    bots: a deal has at most 208 moves, ``history.MAX_PLAYS + history.MAX_PASSES``); that call
    answers the moves made so far, a bot still to act, and the caller calls again. It keeps one
    call's work (a decision takes up to ~100 ms at the higher levels) within a few seconds."""
    score: int = 1_000_000
    """Largest absolute deal score or match total accepted (a deal scores at most a few hundred)."""
    quoted: int = 40
    """Characters of a bad value quoted back in an error: enough to recognise it, never a trailer
    over the 16 KiB metadata limit of stock clients."""
    replay: ReplayLimits = field(default_factory=ReplayLimits)
    """The replay text of AuditLog: its size and structure, checked before it is parsed."""

    def quote(self, value: str) -> str:
        """``value`` as an error quotes it: ``repr`` of at most :attr:`quoted` characters."""
        return quote(value, self.quoted)


@dataclass(frozen=True, slots=True)
class WebLimits:
    """The browser port's bounds on connections and time (``--web-limit NAME=VALUE`` overrides one;
    docs/SECURITY.md "Browser port" says which attack each one answers). The HTTP server (Granian,
    :mod:`bigtwo.service.web_server`) enforces the first four and the ping; the port's own ASGI layer
    the body, the deadline and the idle time."""

    connections: int = 1024
    """Connections served at once per server process; more wait in the listen backlog, unaccepted,
    until one closes (Granian's ``backpressure``). Idle HTTP/1.1 connections free their place after
    :attr:`header_seconds`."""
    streams_per_connection: int = 100
    """HTTP/2 streams open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS)."""
    header_seconds: float = 10.0
    """An HTTP/1.1 request's headers must arrive within this, and a kept-alive connection that sends
    no next request is closed after it (hyper's header read timeout starts when it waits)."""
    header_bytes: int = 64 * 1024
    """Largest request head (HTTP/1.1 read buffer, HTTP/2 header list)."""
    body_seconds: float = 30.0
    """A unary call's request body (a single message) must arrive whole within this from the call's
    start; past it the call ends DEADLINE_EXCEEDED and its connection is let go."""
    call_seconds: float = 3600.0
    """The longest deadline of a call on the browser port: a call (a stream above all) asking for
    none or a longer one gets this one, so a silent stream ends DEADLINE_EXCEEDED at it."""
    idle_seconds: float = 60.0
    """A connection (HTTP/2 above all: hyper has no idle timeout for it) with no call in flight and
    none for this long is closed by the port itself (``service/web_idle.py``), so connections that
    only answer pings cannot hold the places of :attr:`connections`."""
    ping_seconds: float = 30.0
    """An HTTP/2 connection is pinged this often and closed if a ping goes unanswered 20 s (a peer
    gone without closing)."""


WEB_LIMITS = WebLimits()
"""The browser port's bounds every server starts with."""


def quote(value: str, length: int = 40) -> str:
    """``repr(value)``, cut to a prefix of ``length`` characters (marked with an ellipsis)."""
    if len(value) <= length:
        return repr(value)
    return repr(value[:length]) + f"… ({len(value)} characters)"


LIMITS = Limits()
"""The limits every server starts with."""

__all__ = ["LIMITS", "WEB_LIMITS", "Limits", "WebLimits", "quote"]
