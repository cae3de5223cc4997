"""A replay's seal: whether its hash chain and its signature say the file is as it was written.

The audit (:mod:`.audit`) re-runs the deals against the rules; this module checks the file itself,
apart from the rules: every deal's chain against its contents, the file's seal against the deals
(``BROKEN_CHAIN``, the first break only: every later link is broken by it), and the HMAC signature
over the seal against one key or several (``BAD_SIGNATURE``). It reads no key of its own and does
no I/O.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence

from .canonical import chain_heads, signature_for
from .model import SIGNATURE_SCHEME, GameLog
from .verdicts import Problem, SignatureStatus, VerdictKind


def chain_problems(log: GameLog) -> tuple[list[Problem], str]:
    """The chain's first break (none when it holds) and the head the file's contents give."""
    per_deal, head = chain_heads(log)
    for record, true in zip(log.deals, per_deal, strict=True):
        if record.chain != true:
            what = "has no chain" if not record.chain else "chain does not match its contents"
            problem = Problem(
                VerdictKind.BROKEN_CHAIN,
                f"{what} (edited after it was written?)",
                deal_number=record.number,
                line=record.line,
            )
            return [problem], head
    if log.chain != head:
        what = "has no chain" if not log.chain else "chain does not match the file"
        return [Problem(VerdictKind.BROKEN_CHAIN, f"[seal] {what} (edited after it was written?)")], head
    return [], head


def check_signature(
    log: GameLog, key: bytes | Sequence[bytes] | None, head: str, require_signature: bool, problems: list[Problem]
) -> SignatureStatus:
    """The signature's status against ``key`` (one or several: key rotation, valid when any made it)
    over the true ``head``; what is wrong goes to ``problems``."""
    if not log.signature:
        status = SignatureStatus.UNSIGNED
        if require_signature:
            problems.append(Problem(VerdictKind.BAD_SIGNATURE, "the file is unsigned"))
    elif not log.signature.startswith(SIGNATURE_SCHEME + ":"):
        status = SignatureStatus.BAD
        problems.append(
            Problem(VerdictKind.BAD_SIGNATURE, f"unknown signature scheme (expected {SIGNATURE_SCHEME}:...)")
        )
    elif not (keys := [key] if isinstance(key, bytes) else list(key or ())):
        status = SignatureStatus.NOT_CHECKED
    elif any(hmac.compare_digest(log.signature, signature_for(head, one)) for one in keys):
        status = SignatureStatus.VALID
    else:
        status = SignatureStatus.BAD
        problems.append(Problem(VerdictKind.BAD_SIGNATURE, "the signature does not match this key and contents"))
    return status


__all__ = ["chain_problems", "check_signature"]
