"""Opaque deal identifiers: how answers name a deal without saying anything about its cards.

Every answer's table names its deal (``TableState.deal_id``) so that a front end, a log line and an
operator can tell deals apart. The name is neither the deal code, from which every hand follows,
nor an unsalted digest of the hands, which a seat can search once it has seen enough cards: it is
an HMAC-SHA256 of the deal's identity under a key derived from the service's signing secret. The
identity is the deal code's seed, or for explicit hands 8 random bytes drawn when they were dealt and
carried sealed in the token: never the hands' digest, since anyone may ask for any hands to be dealt
and would read the name of each candidate (issue 33). The same deal (the same tokens) always gets the
same name on every replica that shares the key ring; without the secret no name can be tied to any
cards, and no call names a deal from cards the caller supplies. A game replayed from a log with
explicit hands is dealt anew on each call and so gets a new name each time.

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
