"""How large and how deeply built a replay text may be before it is parsed.

The replay format reads text from anywhere (files on disk, an AuditLog request), so its reader
checks the text against these limits first and refuses what is over them with a
:class:`~bigtwo.client.replay.format.ReplayFormatError` naming the limit, before any parsing work.
The service's own table (``bigtwo.service.limits``) holds the instance it audits with.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReplayLimits:
    """Limits on one replay text (the defaults read every replay file this project writes)."""

    text_bytes: int = 1 << 20
    """Longest replay text: a whole 100-deal match is about 300 kB."""


__all__ = ["ReplayLimits"]
