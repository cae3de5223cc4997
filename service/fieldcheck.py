"""The rule every answer :mod:`bigtwo.service.wire` writes follows, stated as code: each field of
each message once, in field-number order (a repeated field's entries in one run), as protobuf itself
writes it. See :func:`check_fields`."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from google.protobuf.descriptor import Descriptor, FieldDescriptor

if TYPE_CHECKING:
    from google._upb._message import Descriptor as UpbDescriptor

MessageDescriptor: TypeAlias = "Descriptor | UpbDescriptor"
"""A message's descriptor: protobuf hands out its Python class or the upb extension's, alike in
what is read here."""

_VARINT = 0
_LENGTH = 2


class WireError(AssertionError):
    """Bytes this module wrote that protobuf would not have written: a field twice, or out of order."""


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise WireError("a varint runs past the end")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def check_fields(descriptor: MessageDescriptor, data: bytes) -> None:
    """Raise :class:`WireError` unless ``data`` holds each field of a ``descriptor`` message at most
    once, in field-number order (a repeated field's entries in one run), and so does every
    sub-message in it: the encoding protobuf writes, which every decoder reads alike.

    Why it is stated as code: a message written as two pieces parses the same in Python (pieces
    merge) and differently elsewhere (protobufjs keeps the last piece), so only a check of the
    bytes notices. Each cached part is checked once as it is made (``wire._checked``); the tests
    check every answer."""
    at, last = 0, 0
    fields = descriptor.fields_by_number
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire_type = key >> 3, key & 7
        field = fields.get(number)
        if field is None:
            raise WireError(f"{descriptor.full_name}: unknown field {number}")
        if number < last or (number == last and not field.is_repeated):
            raise WireError(f"{descriptor.full_name}.{field.name} written twice or out of order")
        last = number
        if wire_type == _VARINT:
            _, at = _read_varint(data, at)
        elif wire_type == _LENGTH:
            length, at = _read_varint(data, at)
            payload, at = data[at : at + length], at + length
            if len(payload) != length:
                raise WireError(f"{descriptor.full_name}.{field.name} runs past the end")
            if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type is not None:
                check_fields(field.message_type, payload)
        elif wire_type == 1:
            at += 8
        elif wire_type == 5:
            at += 4
        else:
            raise WireError(f"{descriptor.full_name}.{field.name}: wire type {wire_type}")
    if at != len(data):
        raise WireError(f"{descriptor.full_name} runs past the end")


__all__ = ["WireError", "check_fields"]
