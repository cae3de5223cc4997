"""The canonical layout's reader: a replay text laid out as :func:`~.canonical.dumps` writes it
(one header, ``key = value`` or array element a line; comments, blank lines and edited values
allowed) is read line by line, mostly by C string operations, with every value's line number and
the limits checked as it goes. It is several times faster than ``tomllib`` on such a text, and
the line numbers come free; a text that steps outside the layout raises :class:`OutsideLayout`
and goes to the general TOML reader (:mod:`.general`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .limits import DEFAULT_LIMITS, ReplayLimits
from .model import ReplayFormatError

Path_ = tuple[str | int, ...]
"""Where a value is in the parsed data: ``("deals", 0, "actions", 3)``."""

_HEADERS = frozenset(("[ruleset]", "[[seats]]", "[[deals]]", "[deals.result]", "[result]", "[seal]"))
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")
_DIGIT_RUN = re.compile(r"[0-9]{21,}")
_INT_ARRAY = re.compile(r"\[(-?[0-9]{1,20}(?:, -?[0-9]{1,20})*)?\]\Z")
"""A flat array of whole numbers as the writer writes it (a result column): read without JSON."""
_STRING_LINES = re.compile(r'(?:[ \t]*"[^"\\\n]*",[ \t]*\r?\n)*')
"""The lines of an array of plain strings, one a line, as the writer writes actions and hands."""
_STRING_LINE = re.compile(r'"([^"\\\n]*)",')


class OutsideLayout(Exception):
    """The text leaves the canonical layout at ``line``: the general TOML parser reads it instead."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _fast_value(text: str, limits: ReplayLimits, line: int) -> Any:
    """A value as the canonical writer writes it (JSON-compatible TOML, arrays flat), or raise
    ValueError; a value over a limit raises :class:`ReplayFormatError`."""
    if text in ("true", "false"):
        return text == "true"
    if _INT.match(text):
        if len(text.lstrip("-")) > limits.int_digits:
            raise ReplayFormatError(f"a number of more than {limits.int_digits} digits", line)
        return int(text)
    numbers = _INT_ARRAY.match(text)
    if numbers is not None:
        return _int_array(numbers.group(1), limits, line)
    first = text[:1]
    if first == '"':
        if len(text) - 2 > limits.string_chars:
            raise ReplayFormatError(f"a string of more than {limits.string_chars} characters", line)
        if text[-1] == '"' and text.count('"') == 2 and "\\" not in text and len(text) > 1:
            return text[1:-1]  # the common case: a plain string
    return _json_value(text, first)


def _int_array(inner: str | None, limits: ReplayLimits, line: int) -> list[int]:
    """The numbers of a flat array matched by ``_INT_ARRAY`` (``inner`` is what is between its
    brackets), each within the digit limit."""
    if not inner:
        return []
    values = [int(number) for number in inner.split(", ")]
    if max(map(abs, values)) >= 10**limits.int_digits:
        raise ReplayFormatError(f"a number of more than {limits.int_digits} digits", line)
    return values


def _json_value(text: str, first: str) -> Any:
    """A string with escapes or a flat array that is not all whole numbers, read by the JSON
    reader where TOML reads it the same; raise ValueError otherwise."""
    if "\\/" in text or first not in ('"', "["):
        raise ValueError(text)
    if first == "[" and ("[" in text[1:] or "{" in text or _DIGIT_RUN.search(text)):
        raise ValueError(text)  # nested, or a number too long for the JSON reader's cheap path
    value = json.loads(text)
    if isinstance(value, list):
        if not _is_flat_text_list(value):
            raise ValueError(text)
    elif not isinstance(value, str) or not _is_text(value):
        raise ValueError(text)
    return value


def _is_flat_text_list(values: list[Any]) -> bool:
    """Whether a decoded JSON array is one TOML reads the same: no nested array or table, no float
    or null, and every string Unicode text."""
    if any(isinstance(v, (list, dict, float)) or v is None for v in values):
        return False
    return not any(isinstance(v, str) and not _is_text(v) for v in values)


def _is_text(value: str) -> bool:
    """Whether a decoded string is Unicode text: JSON's ``\\ud800`` escape makes a lone surrogate,
    which TOML refuses (then the general parser says so)."""
    return value.isascii() or not any(0xD800 <= ord(char) <= 0xDFFF for char in value)


class _Layout:
    """One read of the canonical layout: the data and line numbers so far, and the counts the
    limits bound. The line loop (:func:`read_layout`) keeps its position in locals; a header, a key
    and an array are handled here."""

    __slots__ = ("data", "items", "keys", "limits", "path", "table", "tables", "text", "where")

    def __init__(self, text: str, limits: ReplayLimits) -> None:
        self.text = text
        self.limits = limits
        self.data: dict[str, Any] = {}
        self.where: dict[Path_, int] = {}
        self.table: dict[str, Any] = self.data
        self.path: Path_ = ()
        self.keys = self.tables = self.items = 0

    def header(self, line: str, number: int) -> None:
        if line not in _HEADERS:
            raise OutsideLayout(number)
        self.tables += 1
        if self.tables > self.limits.tables:
            raise ReplayFormatError(f"more than {self.limits.tables} table headers in the text", number)
        data = self.data
        if line == "[[seats]]" or line == "[[deals]]":
            name = line[2:-2]
            items_of = data.setdefault(name, [])
            if not isinstance(items_of, list):
                raise OutsideLayout(number)
            self.table = {}
            items_of.append(self.table)
            self.path = (name, len(items_of) - 1)
        elif line == "[deals.result]":
            deals = data.get("deals")
            if not deals or "result" in deals[-1]:
                raise OutsideLayout(number)
            self.table = deals[-1]["result"] = {}
            self.path = ("deals", len(deals) - 1, "result")
        else:
            name = line[1:-1]
            if name in data:
                raise OutsideLayout(number)
            self.table = data[name] = {}
            self.path = (name,)
        self.where[self.path] = number

    def key(self, key: str, equals: str, number: int) -> None:
        if not equals or not _BARE_KEY.match(key) or key in self.table:
            raise OutsideLayout(number)
        limits = self.limits
        if len(key) > limits.key_chars:
            raise ReplayFormatError(f"a key of more than {limits.key_chars} characters", number)
        self.keys += 1
        if self.keys > limits.keys:
            raise ReplayFormatError(f"more than {limits.keys} keys in the text", number)
        self.where[(*self.path, key)] = number

    def array(self, key: str, lines: list[str], number: int, offset: int) -> tuple[int, int]:
        """The array opened by ``key = [`` on the line before ``lines[number]`` (which starts at
        ``offset`` in the text), one element a line: (number, offset) after its ``]``."""
        first = number + 1
        array, number, offset = self._plain_strings(number, offset)
        count = len(lines)
        string_chars = self.limits.string_chars
        while True:
            if number >= count:
                raise OutsideLayout(number)
            raw = lines[number]
            item = raw.strip()
            number += 1
            offset += len(raw) + 1
            if item == "]":
                break
            if item[-1:] != ",":
                raise OutsideLayout(number)
            if item[0] == '"' and item[-2] == '"' and item.count('"') == 2 and "\\" not in item:
                array.append(item[1:-2])  # the common case: a plain string
                if len(item) - 3 > string_chars:
                    raise ReplayFormatError(f"a string of more than {string_chars} characters", number)
                continue
            element = _fast_value(item[:-1], self.limits, number)
            if isinstance(element, list):
                raise OutsideLayout(number)
            array.append(element)
        if array:
            self.where[(*self.path, key, "[")] = first
        self.items += len(array)
        self.table[key] = array
        return number, offset

    def _plain_strings(self, number: int, offset: int) -> tuple[list[Any], int, int]:
        """The plain strings, one a line, that start an array (as the writer writes actions and
        hands), read at once: (them, number, offset) after them."""
        text = self.text
        block = _STRING_LINES.match(text, offset)
        assert block is not None  # the pattern matches the empty string
        if block.end() == offset:
            return [], number, offset
        array: list[Any] = _STRING_LINE.findall(text, offset, block.end())
        if max(map(len, array)) > self.limits.string_chars:
            raise ReplayFormatError(f"a string of more than {self.limits.string_chars} characters", number + 1)
        return array, number + len(array), block.end()


def read_layout(text: str, limits: ReplayLimits) -> tuple[dict[str, Any], dict[Path_, int]]:
    """Parse the canonical layout the writer produces (one header, ``key = value`` or array element
    a line, comments and blank lines allowed), with every line number, checking the limits as it
    goes; raise :class:`OutsideLayout` where the text steps outside it. Linear: each line is read
    once, with string operations bounded by its length."""
    state = _Layout(text, limits)
    lines = text.split("\n")
    count = len(lines)
    number = 0
    offset = 0  # where lines[number] starts in text
    try:
        while number < count:
            raw = lines[number]
            line = raw.strip()
            number += 1
            offset += len(raw) + 1
            if not line or line[0] == "#":
                continue
            if line[0] == "[":
                state.header(line, number)
                continue
            key, equals, value = line.partition(" = ")
            state.key(key, equals, number)
            if value == "[":
                number, offset = state.array(key, lines, number, offset)
            else:
                state.table[key] = element = _fast_value(value, limits, number)
                if isinstance(element, list):
                    state.items += len(element)
            if state.items > limits.items:
                raise ReplayFormatError(f"more than {limits.items} array elements in the text", number)
    except ValueError as exc:
        if isinstance(exc, ReplayFormatError):
            raise
        raise OutsideLayout(number) from None
    return state.data, state.where


def try_layout(text: str, limits: ReplayLimits = DEFAULT_LIMITS) -> tuple[dict[str, Any], dict[Path_, int]] | None:
    """The canonical layout's data and line numbers (see :func:`read_layout`), or None when the text
    steps outside it."""
    try:
        return read_layout(text, limits)
    except OutsideLayout:
        return None
