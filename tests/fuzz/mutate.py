"""Bytes and messages that are wrong in every way the wire allows.

Two generators, both driven by a ``random.Random`` so a case is repeatable from its seed:

* :func:`mutate_bytes` edits serialized valid requests the way a broken or hostile client would:
  bit flips, interesting bytes, truncation, inserted and deleted runs, duplicated runs (a repeated
  field sent twice), splices with other requests, fields appended with a wrong wire type, invalid
  UTF-8 in a string, overlong varints, length prefixes that lie, and deeply nested groups.
* :func:`random_message` fills any message of the proto from its descriptor with hostile values:
  huge and odd strings, out-of-range numbers, unknown enum values, long repeated fields, maps with
  strange keys. It knows field types only, so it reaches every field the proto has, including
  fields added after this was written.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x10, 0x12, 0x1A, 0x22)
UINT32_EDGES = (0, 1, 2, 3, 4, 5, 12, 13, 17, 18, 51, 52, 53, 255, 1024, 1025, 65535, 2**31 - 1, 2**31, 2**32 - 1)
UINT64_EDGES = (*UINT32_EDGES, 2**32, 2**53, 2**63 - 1, 2**63, 2**64 - 1)
INT32_EDGES = (0, 1, -1, 2, 13, 100, 1_000_000, 1_000_001, -1_000_001, 2**31 - 1, -(2**31))
INT64_EDGES = (*INT32_EDGES, 2**63 - 1, -(2**63))
MAX_REPEATED = 2000


def varint(value: int) -> bytes:
    """Protobuf's base-128 varint (negative values as 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint((number << 3) | wire_type)


def length_delimited(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


# --- byte mutations ---------------------------------------------------------------------------


def _flip_bits(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)


def _set_bytes(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    for _ in range(rng.randint(1, 4)):
        if data:
            data[rng.randrange(len(data))] = rng.choice(INTERESTING_BYTES)


def _truncate(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    if data:
        del data[rng.randrange(len(data)) :]


def _delete_run(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    if data:
        start = rng.randrange(len(data))
        del data[start : start + rng.randint(1, 32)]


def _insert_random(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    at = rng.randint(0, len(data))
    data[at:at] = rng.randbytes(rng.choice((1, 2, 4, 16, 256)))


def _duplicate_run(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    """A run copied many times: a repeated field, a map entry or a whole message sent again."""
    if not data:
        return
    start = rng.randrange(len(data))
    run = bytes(data[start : start + rng.randint(1, 64)])
    times = rng.choice((2, 3, 10, 100, 1000))
    data[start:start] = run * times


def _repeat_whole(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    """The message concatenated with itself: every repeated field doubled, singular ones merged."""
    data.extend(bytes(data) * rng.choice((1, 2, 7, 50)))


def _splice(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    if not others:
        return
    other = rng.choice(others)
    cut_self = rng.randint(0, len(data))
    cut_other = rng.randint(0, len(other))
    data[cut_self:] = other[cut_other:]


def _append_other(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    """Another request merged in: fields of another message type under the same numbers."""
    if others:
        data.extend(rng.choice(others))


def _wrong_wire_type(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    number = rng.randint(1, 8)
    wire_type = rng.choice((0, 1, 2, 5))
    payload = {0: varint(rng.getrandbits(64)), 1: rng.randbytes(8), 5: rng.randbytes(4)}.get(wire_type)
    if payload is None:
        payload = varint(rng.randint(0, 40)) + rng.randbytes(rng.randint(0, 40))
    data.extend(tag(number, wire_type) + payload)


def _invalid_utf8(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    bad = rng.choice((b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"3D\xfe 4C", b"\xe2\x99"))
    data.extend(length_delimited(rng.randint(1, 6), bad))


def _overlong_varint(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    data.extend(tag(rng.randint(1, 8), 0) + b"\xff" * rng.choice((9, 10, 11, 20)) + b"\x01")


def _lying_length(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    length = rng.choice((2**31 - 1, 2**32 - 1, 2**63, 1 << 20, len(data) + 1))
    data.extend(tag(rng.randint(1, 8), 2) + varint(length) + rng.randbytes(rng.randint(0, 16)))


def _deep_groups(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    """Unknown start-group tags nested far past any parser's recursion limit."""
    depth = rng.choice((50, 99, 100, 101, 1000, 100_000))
    number = rng.choice((15, 1000, 536_870_911))
    data.extend(tag(number, 3) * depth + tag(number, 4) * rng.choice((0, depth)))


def _deep_messages(data: bytearray, rng: random.Random, others: Sequence[bytes]) -> None:
    """A length-delimited unknown field holding itself, many levels deep."""
    inner = b""
    for _ in range(rng.choice((10, 100, 101, 1000))):
        inner = length_delimited(rng.choice((1, 2, 99)), inner)
    data.extend(inner)


MUTATIONS: tuple[Callable[[bytearray, random.Random, Sequence[bytes]], None], ...] = (
    _flip_bits,
    _set_bytes,
    _truncate,
    _delete_run,
    _insert_random,
    _duplicate_run,
    _repeat_whole,
    _splice,
    _append_other,
    _wrong_wire_type,
    _invalid_utf8,
    _overlong_varint,
    _lying_length,
    _deep_groups,
    _deep_messages,
)


def mutate_bytes(data: bytes, rng: random.Random, others: Sequence[bytes] = (), limit: int = 1 << 21) -> bytes:
    """``data`` after one to four random mutations (never longer than ``limit``)."""
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        rng.choice(MUTATIONS)(out, rng, others)
        if len(out) > limit:
            del out[limit:]
    return bytes(out)


def random_bytes(rng: random.Random) -> bytes:
    """Bytes that were never a message, mostly short, sometimes long."""
    size = rng.choice((0, 1, 2, 3, 5, 8, 16, 64, 256, 1024, rng.randint(0, 65536)))
    return rng.randbytes(size)


# --- messages from descriptors ------------------------------------------------------------------


@dataclass
class Pools:
    """Values the descriptor-driven generator draws from: hostile ones and ones the service knows."""

    strings: list[str] = field(default_factory=list)
    """Hostile strings and strings the service recognises (presets, options, cards, codes)."""
    blobs: list[bytes] = field(default_factory=list)
    """Bytes fields: real state tokens, tampered ones, random bytes."""
    keys: list[str] = field(default_factory=list)
    """Map keys (option names and hostile names)."""
    values: list[str] = field(default_factory=list)
    """Map values (option values and hostile values)."""


@dataclass
class _Filler:
    """Fills messages under a byte budget, so a random message stays near the message limit
    instead of growing into megabytes the server would refuse before reading anything."""

    rng: random.Random
    pools: Pools
    budget: int

    def text(self) -> str:
        if not self.pools.strings:
            return ""
        value = self.rng.choice(self.pools.strings)
        if len(value) > self.budget:
            value = value[: max(0, self.budget)]
        self.budget -= len(value) + 2
        return value

    def scalar(self, descriptor: FieldDescriptor) -> object:
        rng, kind = self.rng, descriptor.type
        self.budget -= 10
        if kind == FieldDescriptor.TYPE_STRING:
            return self.text()
        if kind == FieldDescriptor.TYPE_BYTES:
            blob = rng.choice(self.pools.blobs) if self.pools.blobs and rng.random() < 0.8 else rng.randbytes(400)
            blob = blob[: rng.randint(0, len(blob))] if rng.random() < 0.1 else blob
            self.budget -= len(blob)
            return blob
        if kind == FieldDescriptor.TYPE_BOOL:
            return rng.random() < 0.5
        if kind == FieldDescriptor.TYPE_ENUM:
            enum = descriptor.enum_type
            numbers = [value.number for value in enum.values] if enum is not None else [0]
            return rng.choice(numbers) if rng.random() < 0.8 else rng.choice((-1, 99, 2**31 - 1))
        if kind in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
            return rng.choice(UINT32_EDGES) if rng.random() < 0.8 else rng.getrandbits(32)
        if kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
            return rng.choice(UINT64_EDGES) if rng.random() < 0.8 else rng.getrandbits(64)
        if kind in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32):
            return rng.choice(INT32_EDGES) if rng.random() < 0.8 else rng.randint(-(2**31), 2**31 - 1)
        if kind in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64):
            return rng.choice(INT64_EDGES)
        if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return rng.choice((0.0, -0.0, 1e308, float("inf"), float("nan")))
        raise TypeError(f"no generator for field type {kind} ({descriptor.full_name})")

    def count(self, depth: int) -> int:
        rng = self.rng
        if depth >= 2 or self.budget <= 0:
            return rng.randint(0, 3)
        return rng.choice((0, 0, 1, 1, 2, 3, 4, 5, 13, 52, 100, rng.randint(0, MAX_REPEATED)))

    def fill(self, message: Message, depth: int = 0) -> Message:
        rng = self.rng
        descriptor = cast(Descriptor, message.DESCRIPTOR)  # the upb descriptor has the same interface
        skipped: set[str] = set()
        for oneof in descriptor.oneofs:
            members = list(oneof.fields)
            keep = rng.choice(members).name if rng.random() < 0.85 else ""
            skipped.update(member.name for member in members if member.name != keep)
        for member in descriptor.fields:
            if member.name in skipped or rng.random() < 0.25:
                continue
            target = getattr(message, member.name)
            if _is_map(member):
                for _ in range(self.count(depth) if rng.random() < 0.3 else rng.randint(0, 4)):
                    if self.budget <= 0:
                        break
                    key = rng.choice(self.pools.keys) if self.pools.keys else ""
                    value = rng.choice(self.pools.values) if self.pools.values else ""
                    self.budget -= len(key) + len(value) + 4
                    target[key] = value
            elif member.is_repeated:
                for _ in range(self.count(depth)):
                    if self.budget <= 0:
                        break
                    if member.type == FieldDescriptor.TYPE_MESSAGE:
                        self.fill(target.add(), depth + 1)
                    else:
                        target.append(self.scalar(member))
            elif member.type == FieldDescriptor.TYPE_MESSAGE:
                if depth < 6:
                    target.SetInParent()
                    self.fill(target, depth + 1)
            else:
                setattr(message, member.name, self.scalar(member))
        return message


def _is_map(descriptor: FieldDescriptor) -> bool:
    message_type: Descriptor | None = descriptor.message_type
    return message_type is not None and bool(message_type.GetOptions().map_entry)


def random_message(message_type: type[Message], rng: random.Random, pools: Pools, budget: int = 900_000) -> Message:
    """A message of ``message_type`` with random hostile fields, about ``budget`` bytes at most."""
    return _Filler(rng, pools, budget).fill(message_type())
