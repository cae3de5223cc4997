"""Opaque state tokens: a compact snapshot of a deal that the caller holds between calls, encrypted
and authenticated so that whoever holds it can read nothing from it.

Layout::

    version (1) | key id (4) | AES-SIV(key, version | key id | body)

AES-SIV (RFC 5297) puts its 16-byte synthetic IV, a CMAC of the whole plaintext, before the
plaintext encrypted in counter mode under that IV. The plaintext starts with the token's own head,
which is compared with the clear head after decryption: the version and key id are authenticated
as if they were associated data, without handing :mod:`cryptography` a second buffer, which costs
more per call than five more bytes to encrypt (docs/PERFORMANCE.md). The body (all integers
little-endian) holds the ruleset (fingerprint, preset, overrides), the deal's identity (deal code
seed or the random name drawn for explicit hands), the face-up card, the :class:`~bigtwo.engine.DealState`
after the last move, for idempotent retries the state before the last move and that move, and the
deal's public history (:class:`~bigtwo.service.history.History`): how it opened and every move made,
so that a stream or call resumed from a token tells the deal's story so far as one resumed from the
log does. A deal made by ``Deal`` ends with its seal (:class:`TableSeal`): 16 random bytes drawn
when it was dealt, and the level of each seat's bot. The history grows by a byte a move and a byte
a card played and is bounded by the rules
(:data:`MAX_HISTORY_BYTES`); it is only read when the events so far are asked for, so resuming from
a token costs the same late in a deal as early.

Why AES-SIV: the token must be deterministic (a retried move returns byte for byte the first
answer, token included, and the issuing replica recognises its own tokens by their bytes), so the
AEAD may take no random nonce. AES-SIV is deterministic by design and misuse-resistant: equal
snapshots give equal tokens and nothing else is shared, since the IV is a keyed function of the
whole plaintext; two tokens of one game at different moves look unrelated. It makes one CMAC pass
and one counter-mode pass over the plaintext and adds a 16-byte tag. The alternatives cost more on
the ApplyMove path (docs/SERVICE.md "State tokens", figures in docs/PERFORMANCE.md):
AES-GCM-SIV is deterministic only with a fixed nonce (outside what its bounds are stated for) or a
nonce derived from the body by a second keyed pass that the token must then carry, and both cost
more per call than AES-SIV; so did AES-GCM under such a derived nonce, which is not misuse-resistant.

Keys: each configured secret gives a 64-byte AES-256-SIV key through HKDF-SHA256 labelled with
this purpose, so the secret itself keys nothing else here (replay signatures and deal identifiers
derive their own). The key id is the first 4 bytes of SHA-256("bigtwo-token-key" | secret): it
picks the decryption key without trying them all and reveals nothing of the key. The first secret
encrypts, every secret decrypts (rotation, docs/SERVICE.md "Keys and rotation").

A token that does not authenticate (altered in any byte), whose key is unknown, whose version is
not this one, or which does not parse is refused with INVALID_ARGUMENT; it is never trusted.

A codec remembers the snapshots of the tokens it issued lately (:class:`IssuedTokens`): a client's
channel stays on one replica, so the token a call sends is most often the one that replica has just
answered with, and it is then read without decrypting it again or unpacking it. Only the exact
bytes issued match; any other token, from another replica or altered, is decrypted and checked in
full.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import NamedTuple

from bigtwo.engine import PRESET_NAMES, DealState, Kind, Move, Ruleset
from bigtwo.engine.cache import BoundedCache, IdentityCache
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .bounds import MAX_SEATS, BoundError, check_seats
from .errors import InvalidArgument, ResourceExhausted, Violation
from .history import MAX_HISTORY_BYTES, OPENING
from .limits import LIMITS

VERSION = 3
"""Version 1 tokens were signed with HMAC-SHA256 and not encrypted, version 2 carried no history;
neither is read any more (:data:`RETIRED`)."""
RETIRED = {
    1: "state token version 1 (signed, not encrypted) is no longer read: resume the game from its log",
    2: "state token version 2 (without the deal's history) is no longer read: resume the game from its log",
}
"""Why each earlier version is refused, in the words the caller sees."""
KEY_ID_SIZE = 4
TAG_SIZE = 16
"""AES-SIV's synthetic IV, which authenticates the token."""
AEAD_KEY_SIZE = 64
"""AES-256-SIV: one 256-bit key for the CMAC, one for counter mode."""
HKDF_INFO = b"bigtwo state token v2: AES-256-SIV key"
"""The key's label names the version that introduced it; later versions keep it (the version itself
is authenticated with every token)."""
_KINDS = list(Kind)
_HEAD = struct.Struct("<B4s")
HEAD_SIZE = _HEAD.size
"""Version and key id: in clear (to pick the key) and again inside the sealed plaintext."""


def key_id(key: bytes) -> bytes:
    """The 4-byte id a token names its key by: a SHA-256 prefix of the secret, which reveals nothing
    of it (and nothing of the AEAD key, derived apart)."""
    return hashlib.sha256(b"bigtwo-token-key" + key).digest()[:KEY_ID_SIZE]


def aead_key(key: bytes) -> bytes:
    """The AES-256-SIV key of one configured secret (HKDF-SHA256, labelled with its purpose)."""
    return HKDF(algorithm=hashes.SHA256(), length=AEAD_KEY_SIZE, salt=None, info=HKDF_INFO).derive(key)


@dataclass(frozen=True, slots=True)
class DealIdentity:
    """Which cards were dealt: a deal code's seed, or a random name drawn when explicit hands were dealt."""

    explicit: bool
    value: int
    """The 60-bit seed, or the 8 random bytes drawn for an explicit deal, as an integer."""
    text: str
    """The deal code, or ``explicit:`` and 16 hex digits (what logs and TableState show)."""


class LastMove(NamedTuple):
    """The last move made (for idempotent retries): who, which cards (mask), or a pass. A named
    tuple: one is made for every move applied."""

    seat: int
    mask: int
    is_pass: bool

    @classmethod
    def of(cls, move: Move) -> LastMove:
        return cls(move.seat, move.mask, move.is_pass)

    def same_as(self, move: Move) -> bool:
        return move.seat == self.seat and move.is_pass == self.is_pass and (self.is_pass or move.mask == self.mask)


class PackedState(NamedTuple):
    """A :class:`DealState` in its token form, unpacked only when needed: the state before the
    last move is read only by a retry, and is written into the next token as it came. A named
    tuple: two are made for every token read."""

    data: bytes
    players: int

    def unpack(self) -> DealState:
        return _unpack_state(self.data, 0, self.players)[0]


SEAL_SECRET_BYTES = 16


class TableSeal(NamedTuple):
    """What a deal fixes when it is made and every token of it carries sealed (issue 33): 16 bytes
    from the OS, which make the table's tokens its own (two tables dealt from one deal code never
    share a token, so the spent-token ledger tells them apart) and are the bots' randomness; and the
    level of each seat's bot, one code a seat (``bigtwo.engine.bots.BotLevel.code``; 0: none named).
    A seat token's bots play from these alone, never from what a caller asks."""

    secret: bytes
    levels: bytes
    """:data:`~bigtwo.service.bounds.MAX_SEATS` bytes, one level code a seat."""

    def level_code(self, seat: int) -> int:
        return self.levels[seat]


class Snapshot(NamedTuple):
    """Everything a token carries (a named tuple: one is made for every token read or written)."""

    ruleset: Ruleset
    identity: DealIdentity
    face_up_card: int
    face_up_seat: int
    state: DealState
    previous: DealState | PackedState | None = None
    last_move: LastMove | None = None
    viewer: int = -1
    """-1: the token is the table host's (any seat may act, any question be asked); a seat: the
    token is bound to that seat, which alone it acts and asks for (docs/SECURITY.md)."""
    packed: PackedState | None = None
    """``state`` in token form, when it was read from a token (the next token's previous state)."""
    history: bytes = b""
    """The deal's public history up to ``state``, packed (:class:`~bigtwo.service.history.History`).
    A token always carries one; its bound is checked when the token is read, its moves only when the
    events are rebuilt (a token authenticates, so reading every move of every token would check only
    our own writing, at a cost that grows with the deal)."""
    bots: int = 0
    """A seat token's bot seats, one bit a seat: the seats PlayBots may play for the seat's device
    (``DealRequest.bot_seats``); never the token's own seat, always 0 for the host's token."""
    seal: TableSeal | None = None
    """Drawn when ``Deal`` made the deal; None for a game that began from a log (its tokens follow
    from the log alone) or a token issued before seals existed."""


class KeyRing:
    """One encrypting key and every decrypting key (the encrypting one included).

    ``signing_key`` and ``verifying`` keep the configured secrets under their historical names
    (the first secret; every secret by key id): other keyed uses of the service (replay signatures,
    deal identifiers) derive their keys from them. Tokens use only the HKDF-derived AEAD keys."""

    def __init__(self, keys: list[bytes]) -> None:
        if not keys:
            raise ValueError("a key ring needs at least one key")
        for key in keys:
            if len(key) < 16:
                raise ValueError("token keys must be at least 16 bytes long")
        self.signing_key = keys[0]
        self.signing_id = key_id(keys[0])
        self.verifying: dict[bytes, bytes] = {}
        for key in keys:
            kid = key_id(key)
            if self.verifying.setdefault(kid, key) != key:
                raise ValueError("two token keys share a key id: replace one of them")
        self._aeads = {kid: AESSIV(aead_key(key)) for kid, key in self.verifying.items()}
        self._sealing = self._aeads[self.signing_id]
        self._head = _HEAD.pack(VERSION, self.signing_id)

    def seal(self, body: bytes) -> bytes:
        """A token of ``body`` under the first key: its head in clear, then the head and the body
        encrypted and authenticated together."""
        head = self._head
        return head + self._sealing.encrypt(head + body, None)

    def open(self, token: bytes) -> bytes | None:
        """The body of a token whose version was checked; None: no key with its id. Raises
        :class:`~cryptography.exceptions.InvalidTag` if it does not authenticate, or if the head
        sealed inside differs from the head in clear."""
        aead = self._aeads.get(token[1:HEAD_SIZE])
        if aead is None:
            return None
        plain = aead.decrypt(token[HEAD_SIZE:], None)
        if plain[:HEAD_SIZE] != token[:HEAD_SIZE]:
            raise InvalidTag
        return plain[HEAD_SIZE:]


# -- compact DealState ---------------------------------------------------------------------------


_STATE_STRUCTS = tuple(
    # hands, to_act, leader, table_mask, table_kind, table_key, last_player, passes, passed, played,
    # opening_card, winner, moves_made, deal_number, start_sizes, has_scores, scores
    struct.Struct(f"<{players}QBBQbqbBBQbbHI{players}BB{players}i")
    for players in range(MAX_SEATS + 1)
)
"""A state's layout by number of seats."""
check_seats(len(_STATE_STRUCTS) - 1)


def _pack_state(state: DealState, players: int) -> bytes:
    kind = -1 if state.table_kind is None else _KINDS.index(state.table_kind)
    scores = state.scores if state.scores else (0,) * players
    return _STATE_STRUCTS[players].pack(
        *state.hands,
        state.to_act,
        state.leader,
        state.table_mask,
        kind,
        state.table_key,
        state.last_player,
        state.passes,
        state.passed,
        state.played,
        state.opening_card,
        state.winner,
        state.moves_made,
        state.deal_number,
        *state.start_sizes,
        1 if state.scores else 0,
        *scores,
    )


def _unpack_state(data: bytes, offset: int, players: int) -> tuple[DealState, int]:
    layout = _STATE_STRUCTS[players]
    values = layout.unpack_from(data, offset)
    n = players
    # After the hands come DealState's next 13 fields in its own order; only the table's kind is
    # coded (an index, -1 for none). The face-up card travels in the token's identity part.
    fields = list(values[n : n + 13])
    fields[3] = None if fields[3] < 0 else _KINDS[fields[3]]
    has_scores = values[2 * n + 13]
    scores = values[2 * n + 14 :] if has_scores else ()
    # mypy cannot count a starred list's items against DealState's fields; the layout fixes them.
    state = DealState(values[:n], *fields, values[n + 13 : 2 * n + 13], scores)  # type: ignore[call-arg]
    return state, offset + layout.size


# -- rulesets inside tokens ----------------------------------------------------------------------


def _ruleset_bytes_of(ruleset: Ruleset) -> bytes:
    overrides = ruleset.overrides()
    text = json.dumps(overrides, sort_keys=True, separators=(",", ":")).encode() if overrides else b""
    if len(text) > MAX_OVERRIDES_BYTES:
        raise ResourceExhausted(
            f"ruleset: its options take {len(text)} bytes in a state token, which has room for {MAX_OVERRIDES_BYTES}",
            reason="RULESET_TOO_LONG",
            metadata={"max_bytes": str(MAX_OVERRIDES_BYTES)},
        )
    preset_index = PRESET_NAMES.index(ruleset.preset) if ruleset.preset in PRESET_NAMES else 0
    return bytes.fromhex(ruleset.fingerprint) + struct.pack("<BH", preset_index, len(text)) + text


def _ruleset_of(part: bytes) -> Ruleset:
    """The ruleset a token's ruleset part names (fingerprint, preset, overrides), checked against
    its fingerprint once per distinct part."""
    ruleset = _RULESETS.get(part)
    if ruleset is None:
        ruleset = _RULESETS.put(part, _read_ruleset(part))
    return ruleset


def _read_ruleset(part: bytes) -> Ruleset:
    fingerprint, preset_index, length = _HEAD_BODY.unpack_from(part, 0)
    overrides = part[_HEAD_BODY.size :]
    if len(overrides) != length:
        raise ValueError("truncated ruleset")
    data = json.loads(overrides) if overrides else {}
    ruleset = Ruleset.from_mapping({**data, "preset": PRESET_NAMES[preset_index]})
    if _ruleset_bytes(ruleset)[:8] != fingerprint:
        raise ValueError("the ruleset's fingerprint does not match")
    return ruleset


_RULESETS: BoundedCache[bytes, Ruleset] = BoundedCache("service.tokens.rulesets", 256)
_ruleset_bytes: IdentityCache[Ruleset, bytes] = IdentityCache("service.tokens.ruleset_bytes", _ruleset_bytes_of, 256)
_HEAD_BODY = struct.Struct("<8sBH")
_IDENTITY = struct.Struct("<BQbbb")
"""Explicit or not, the deal code's seed or the hands' digest, the face-up card and its seat, the viewer.
The viewer byte is -1 for the host's token, else ``seat | bots << VIEWER_SEAT_BITS`` (:func:`viewer_byte`):
a seat token's bot seats travel in the byte that names its seat, so tokens issued before bot seats
existed read as they did (no bots) and the layout kept its version."""
VIEWER_SEAT_BITS = 3
"""Bits of the viewer byte that hold the seat (seats 0..3 need 2; the third keeps the mask clear of
any seat count the bounds allow): the bot mask (4 bits for 4 seats) above them keeps the byte at
most ``3 | 15 << 3 = 123``, within a signed byte."""
if MAX_SEATS > 1 << VIEWER_SEAT_BITS or (MAX_SEATS - 1) | ((1 << MAX_SEATS) - 1) << VIEWER_SEAT_BITS > 127:
    raise BoundError("a seat and a bot mask no longer fit a token's signed viewer byte")


def viewer_byte(viewer: int, bots: int) -> int:
    """The viewer byte of a token bound to ``viewer`` (-1: the host's) with bot seats ``bots``."""
    return -1 if viewer < 0 else viewer | bots << VIEWER_SEAT_BITS


def check_viewer(viewer: int, bots: int, players: int) -> None:
    """A ValueError unless ``viewer`` and ``bots`` are what a token of ``players`` seats may carry."""
    if not -1 <= viewer < players:
        raise ValueError("no such viewer seat")
    if bots >= 1 << players or (viewer < 0 and bots) or (viewer >= 0 and bots >> viewer & 1):
        raise ValueError("bot seats that are not other seats of a seat token")


_MOVE = struct.Struct("<BQB")
_LENGTH = struct.Struct("<H")
_SEAL = struct.Struct(f"<{SEAL_SECRET_BYTES}s{MAX_SEATS}s")
"""The seal, after the history when there is one (a token without it reads as before)."""

MAX_TOKEN_BYTES = LIMITS.token_bytes
"""The longest token written (and read): a ruleset whose overrides would make a longer one gets none
(:data:`MAX_OVERRIDES_BYTES`)."""
MAX_OVERRIDES_BYTES = MAX_TOKEN_BYTES - (
    HEAD_SIZE  # in clear
    + TAG_SIZE
    + HEAD_SIZE  # sealed
    + _HEAD_BODY.size
    + _IDENTITY.size
    + 2 * _STATE_STRUCTS[MAX_SEATS].size  # the state, and the state before the last move
    + 1
    + _MOVE.size
    + _LENGTH.size
    + MAX_HISTORY_BYTES
    + _SEAL.size
)
"""Room the longest token of the longest deal leaves for a ruleset's overrides (their JSON text)."""
if MAX_OVERRIDES_BYTES <= 0:
    raise BoundError(f"a token of the longest deal leaves no room for a ruleset within {MAX_TOKEN_BYTES} bytes")


class IssuedTokens:
    """The snapshots of the tokens a codec issued lately, by the token's bytes.

    Why: authenticating a token and unpacking it is a large share of an ApplyMove's own work in a
    loaded server (the keyed pass the largest part, its code cold in the CPU caches by the time the
    next call of a game comes; docs/PERFORMANCE.md); a dictionary lookup of bytes that this process
    encrypted itself skips all of it. Equal bytes are the same token, so a hit is as safe as a token that
    authenticates.

    Two generations of at most ``size`` entries each: when the newer is full it becomes the older
    and the older is dropped, so a token stays known for at least ``size`` issues after its own
    (a game's next call comes long before that). Lookups and inserts are single dictionary
    operations, safe from the heavy calls' threads (``--heavy-kind thread``)."""

    __slots__ = ("newer", "older", "size")

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        # Two caches of one owner whose roles swap (their figures add up under the owner): the
        # newer is swapped out as it fills, so its own put never has to empty it.
        self.newer: BoundedCache[bytes, Snapshot] = BoundedCache("service.tokens.snapshots", size)
        self.older: BoundedCache[bytes, Snapshot] = BoundedCache("service.tokens.snapshots", size)

    def get(self, token: bytes) -> Snapshot | None:
        return self.newer.get(token) or self.older.get(token)

    def add(self, token: bytes, snap: Snapshot) -> None:
        newer = self.newer
        if len(newer) >= self.size:
            older = self.older
            if len(older):  # a generation dropped: the figure cache_stats reports as a clear
                older.clear()
                older.clears += 1
            self.older, self.newer = newer, older
            newer = older
        newer.put(token, snap)


class TokenCodec:
    """Encrypt and read state tokens with a :class:`KeyRing`."""

    def __init__(self, keys: KeyRing, *, remember: int = 4096, max_bytes: int = LIMITS.token_bytes) -> None:
        self.keys = keys
        self.issued = IssuedTokens(remember) if remember else None
        self.max_bytes = max_bytes

    def encode(self, snap: Snapshot) -> bytes:
        players = snap.ruleset.players
        parts = [
            _ruleset_bytes(snap.ruleset),
            _IDENTITY.pack(
                1 if snap.identity.explicit else 0,
                snap.identity.value,
                snap.face_up_card,
                snap.face_up_seat,
                viewer_byte(snap.viewer, snap.bots),
            ),
            state := _pack_state(snap.state, players),
        ]
        if snap.previous is not None and snap.last_move is not None:
            move = snap.last_move
            parts.append(b"\x01")
            previous = snap.previous
            parts.append(previous.data if isinstance(previous, PackedState) else _pack_state(previous, players))
            parts.append(_MOVE.pack(move.seat, move.mask, 1 if move.is_pass else 0))
        else:
            parts.append(b"\x00")
        history = snap.history
        if len(history) < OPENING.size:
            raise ValueError("a token carries the deal's history")
        parts += (_LENGTH.pack(len(history)), history)
        seal = snap.seal
        if seal is not None:
            parts.append(_SEAL.pack(seal.secret, seal.levels))
        token = self.keys.seal(b"".join(parts))
        if self.issued is not None:
            # As decode would read it back: with the state packed as the token holds it.
            self.issued.add(token, Snapshot(*snap[:8], PackedState(state, players), history, snap.bots, seal))
        return token

    def decode(self, token: bytes, path: str = "game.state_token") -> Snapshot:
        """Authenticate, decrypt and read a token; anything wrong is INVALID_ARGUMENT with an
        ErrorInfo reason."""
        if self.issued is not None:
            known = self.issued.get(token)
            if known is not None:
                return known
        if len(token) > self.max_bytes or len(token) <= HEAD_SIZE + TAG_SIZE + HEAD_SIZE:
            raise _refused(path, "TOKEN_MALFORMED", "not a state token issued by this service (wrong length)")
        version = token[0]
        if version != VERSION:
            description = RETIRED.get(version, f"state token version {version} is not supported (expected {VERSION})")
            raise _refused(path, "TOKEN_MALFORMED", description)
        try:
            body = self.keys.open(token)
        except InvalidTag:
            raise _refused(
                path, "TOKEN_BAD_SIGNATURE", "the state token does not authenticate: it was altered"
            ) from None
        if body is None:
            raise _refused(
                path,
                "TOKEN_UNKNOWN_KEY",
                "the state token was encrypted with a key this service does not hold (foreign, or rotated out)",
            )
        try:
            return self._read(body)
        except (struct.error, ValueError, IndexError, KeyError) as exc:  # encrypted by us but unreadable
            raise _refused(path, "TOKEN_MALFORMED", f"the state token does not parse: {exc}") from None

    @staticmethod
    def _read(body: bytes) -> Snapshot:
        offset = 0
        _fingerprint, _preset_index, length = _HEAD_BODY.unpack_from(body, offset)
        end = offset + _HEAD_BODY.size + length
        ruleset = _ruleset_of(bytes(body[offset:end]))
        offset = end
        explicit, value, face_up_card, face_up_seat, viewer = _IDENTITY.unpack_from(body, offset)
        offset += _IDENTITY.size
        players = ruleset.players
        bots = 0
        if viewer >= 0:
            viewer, bots = viewer & (1 << VIEWER_SEAT_BITS) - 1, viewer >> VIEWER_SEAT_BITS
        check_viewer(viewer, bots, players)
        state_at = offset
        state, offset = _unpack_state(body, offset, players)
        packed = PackedState(body[state_at:offset], players)
        previous: PackedState | None = None
        last_move = None
        if body[offset] == 1:
            size = _STATE_STRUCTS[players].size
            previous = PackedState(body[offset + 1 : offset + 1 + size], players)
            offset += 1 + size
            if len(previous.data) != size:
                raise ValueError("truncated state")
            seat, mask, is_pass = _MOVE.unpack_from(body, offset)
            offset += _MOVE.size
            last_move = LastMove(seat, mask, bool(is_pass))
        else:
            offset += 1
        (length,) = _LENGTH.unpack_from(body, offset)
        offset += _LENGTH.size
        history = bytes(body[offset : offset + length])
        if len(history) != length or not OPENING.size <= length <= MAX_HISTORY_BYTES:
            raise ValueError("the history is truncated, or longer than a deal's")
        offset += length
        seal = None
        if offset < len(body):
            secret, levels = _SEAL.unpack_from(body, offset)
            seal = TableSeal(secret, levels)
            offset += _SEAL.size
        if offset != len(body):
            raise ValueError("trailing bytes")
        return Snapshot(
            ruleset,
            identity_of(bool(explicit), value),
            face_up_card,
            face_up_seat,
            state,
            previous,
            last_move,
            viewer,
            packed,
            history,
            bots,
            seal,
        )


def _refused(path: str, reason: str, description: str) -> InvalidArgument:
    return InvalidArgument(f"{path}: {description}", violations=[Violation(path, description)], reason=reason)


_IDENTITIES: BoundedCache[tuple[bool, int], DealIdentity] = BoundedCache("service.tokens.identities", 4096)


def identity_of(explicit: bool, value: int) -> DealIdentity:
    identity = _IDENTITIES.get((explicit, value))
    if identity is None:
        identity = _IDENTITIES.put((explicit, value), _identity(explicit, value))
    return identity


def _identity(explicit: bool, value: int) -> DealIdentity:
    if explicit:
        return DealIdentity(True, value, f"explicit:{value:016x}")
    from bigtwo.engine import DealCode

    return DealIdentity(False, value, str(DealCode(value)))


def explicit_identity(nonce: bytes) -> DealIdentity:
    """A new explicit-hand deal's identity: 8 random bytes drawn when it is dealt, never a digest of
    its hands. Anyone may ask the service to deal any hands, so a name that followed from the hands
    would let a seat test candidate hands against the name it was shown (issue 33)."""
    if len(nonce) != 8:
        raise ValueError("an explicit deal's identity is 8 random bytes")
    return identity_of(True, int.from_bytes(nonce, "big"))
