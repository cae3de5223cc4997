"""Opaque deal identifiers: how answers name a deal without saying anything about its cards.

Every answer's table names its deal (``TableState.deal_id``) so that a front end, a log line and an
operator can tell deals apart. The name is neither the deal code, from which every hand follows,
nor an unsalted digest of the hands, which a seat can search once it has seen enough cards: it is
an HMAC-SHA256 of the deal's identity (the deal code's seed, or the explicit hands' digest) under a
key derived from the service's signing secret. The same deal always gets the same name on every
replica that shares the key ring, and without the secret no name can be tied to any cards.

Rotating the signing key renames deals: a deal in play when the new key starts signing shows a new
``deal_id`` from then on (docs/SECURITY.md).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from bigtwo.engine.cache import BoundedCache

from .tokens import DealIdentity

ID_PREFIX = "d-"
ID_CHARS = 26
"""Base32 characters kept: 130 bits, far beyond any search."""
_REMEMBERED = 4096


class DealIds:
    """The opaque identifier of each deal under one secret."""

    def __init__(self, secret: bytes) -> None:
        # A key of its own: the signing secret is never used for two purposes.
        self._key = hmac.new(secret, b"bigtwo deal id v1", hashlib.sha256).digest()
        self._names: BoundedCache[tuple[bool, int], str] = BoundedCache("service.deal_ids.names", _REMEMBERED)

    def of(self, identity: DealIdentity) -> str:
        """The deal's opaque identifier, e.g. ``d-5ZQ4...``."""
        key = (identity.explicit, identity.value)
        name = self._names.get(key)
        if name is None:
            label = b"explicit:" if identity.explicit else b"code:"
            digest = hmac.new(self._key, label + identity.value.to_bytes(8, "big"), hashlib.sha256).digest()
            name = self._names.put(key, ID_PREFIX + base64.b32encode(digest).decode()[:ID_CHARS])
        return name


__all__ = ["DealIds"]
