"""The canonical replay text: :func:`dumps` writes one text for a :class:`~.model.GameLog`
(nothing in it depends on the machine, the clock or dict order), and the tamper evidence over it:
the SHA-256 hash chain (:func:`chain_heads`, :func:`seal`) and the HMAC signature
(:func:`signature_for`, :func:`sign`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import replace
from typing import Any

from .model import FORMAT_VERSION, SIGNATURE_SCHEME, DealLog, DealResult, GameLog, MatchResult

HEADER_COMMENT = (
    "# Big Two replay file (bigtwo-replay/1). p1..pN are the seats in play order; one action per line:\n"
    '# "pN <cards>" plays, "pN pass", "... auto" = auto-pass, "... timeout" = timed-out turn,\n'
    '# "... refused <reason>" = an attempt the rules refused. Check it with: bigtwo audit FILE\n'
)


def _str(value: str) -> str:
    """A TOML basic string (JSON's escapes are all valid TOML; DEL is escaped too)."""
    if value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {value!r} into a replay file")  # pragma: no cover


def _seat_ref(seat: int) -> str:
    return f"p{seat + 1}"


def _header_lines(log: GameLog) -> list[str]:
    lines = [f"format = {_str(log.version)}"]
    if log.comment:
        lines.append(f"comment = {_str(log.comment)}")
    lines += ["", "[ruleset]", f"preset = {_str(log.ruleset.preset)}", f"fingerprint = {_str(log.fingerprint)}"]
    for key, value in log.ruleset.overrides().items():
        lines.append(f"{key} = {_value(value)}")
    for seat in log.seats:
        lines += ["", "[[seats]]", f"name = {_str(seat.name)}", f"kind = {_str(seat.kind)}"]
        if seat.level is not None:
            lines.append(f"level = {_value(seat.level)}")
    return lines


def _deal_head_lines(deal: DealLog) -> list[str]:
    lines = ["[[deals]]", f"number = {deal.number}"]
    if deal.code:
        lines.append(f"code = {_str(deal.code)}")
    if deal.hands:
        lines.append("hands = [")
        lines += [f"  {_str(hand)}," for hand in deal.hands]
        lines.append("]")
    if deal.previous_winner is not None:
        lines.append(f"previous_winner = {_str(_seat_ref(deal.previous_winner))}")
    if deal.empty_seats:
        lines.append(f"empty_seats = {_value([_seat_ref(s) for s in deal.empty_seats])}")
    if deal.comment:
        lines.append(f"comment = {_str(deal.comment)}")
    return lines


def _deal_result_lines(result: DealResult) -> list[str]:
    lines = ["[deals.result]", f"winner = {_str(_seat_ref(result.winner))}"]
    if result.by_dragon:
        lines.append("by_dragon = true")
    for name in ("cards_left", "twos_left", "rate", "multiplier", "penalty", "score"):
        lines.append(f"{name} = {_value([getattr(seat, name) for seat in result.seats])}")
    return lines


def _match_result_lines(result: MatchResult) -> list[str]:
    return [
        "[result]",
        f"deals = {result.deals}",
        f"totals = {_value(list(result.totals))}",
        f"deals_won = {_value(list(result.deals_won))}",
        f"winners = {_value([_seat_ref(s) for s in result.winners])}",
        f"over = {_value(result.over)}",
    ]


def _chain_step(head: str, element: str) -> str:
    return hashlib.sha256(f"{head}\n{element}".encode()).hexdigest()


def chain_heads(log: GameLog) -> tuple[tuple[str, ...], str]:
    """Recompute the hash chain: (head after each deal, final head). Stored values are ignored."""
    head = hashlib.sha256(("\n".join([FORMAT_VERSION, *_header_lines(log)])).encode()).hexdigest()
    per_deal: list[str] = []
    for deal in log.deals:
        head = _chain_step(head, "\n".join(_deal_head_lines(deal)))
        for action in deal.actions:
            head = _chain_step(head, action.text())
        if deal.result is not None:
            head = _chain_step(head, "\n".join(_deal_result_lines(deal.result)))
        per_deal.append(head)
    if log.result is not None:
        head = _chain_step(head, "\n".join(_match_result_lines(log.result)))
    return tuple(per_deal), head


def signature_for(head: str, key: bytes) -> str:
    digest = hmac.new(key, f"{FORMAT_VERSION} seal {head}".encode(), hashlib.sha256).hexdigest()
    return f"{SIGNATURE_SCHEME}:{digest}"


def seal(log: GameLog, key: bytes | None = None) -> GameLog:
    """The log with its chain heads (re)computed, and signed when ``key`` is given (else unsigned)."""
    per_deal, head = chain_heads(log)
    deals = tuple(replace(deal, chain=chain) for deal, chain in zip(log.deals, per_deal, strict=True))
    return replace(log, deals=deals, chain=head, signature=signature_for(head, key) if key else "")


def sign(log: GameLog, key: bytes) -> GameLog:
    return seal(log, key)


def dumps(log: GameLog) -> str:
    """The canonical text of ``log`` (its stored chain and signature written as they are)."""
    lines = [HEADER_COMMENT.rstrip("\n"), *_header_lines(log)]
    for deal in log.deals:
        lines += ["", *_deal_head_lines(deal)]
        if deal.actions:
            lines.append("actions = [")
            lines += [f"  {_str(action.text())}," for action in deal.actions]
            lines.append("]")
        else:
            lines.append("actions = []")
        if deal.chain:
            lines.append(f"chain = {_str(deal.chain)}")
        if deal.result is not None:
            lines += ["", *_deal_result_lines(deal.result)]
    if log.result is not None:
        lines += ["", *_match_result_lines(log.result)]
    if log.chain or log.signature:
        lines += ["", "[seal]"]
        if log.chain:
            lines.append(f"chain = {_str(log.chain)}")
        if log.signature:
            lines.append(f"signature = {_str(log.signature)}")
    return "\n".join(lines) + "\n"
