"""The general TOML reader, for a replay text not laid out as the writer writes it (a hand-edited
file): ``tomllib`` parses it, after :func:`scan` has checked its structure against the limits
(nesting, keys, tables, elements, strings and numbers: what would make the parser's work or memory
grow) in one linear pass; :func:`locate` then finds each value's line, which ``tomllib`` does not
report. ``tomllib`` is several times slower than the canonical layout's reader (:mod:`.layout`),
so only texts of up to :attr:`~.limits.ReplayLimits.general_bytes` are read this way.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from .layout import Path_
from .limits import ReplayLimits
from .model import ReplayFormatError

# -- checking the structure before the parser reads it -------------------------------------------

_SCAN = re.compile(
    r"(?P<nl>\n)"
    r"|(?P<gap>(?:[ \t\r]+|#[^\n]*)+)"
    r'|(?P<mlstr>"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""(?:""?)?|\'\'\'[\s\S]*?\'\'\'(?:\'\'?)?)'
    r'|(?P<str>"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')'
    r"|(?P<bare>[A-Za-z0-9_+:-]+)"
    r"|(?P<punct>[\[\]{}=,.])"
    r"|(?P<bad>[\s\S])"
)
"""The tokens of TOML, as far as its structure goes: strings (with their escapes) and comments are
read whole, so no bracket, quote or dot inside them counts; every other character is its own token
or part of a bare word. Each alternative starts with a different character, so a token is found
without backtracking and the scan is linear."""


class _Scan:
    """The state of one :func:`scan`: only counts, so its memory is bounded by the nesting limit."""

    def __init__(self, text: str, limits: ReplayLimits) -> None:
        self.text = text
        self.limits = limits
        self.line = 1
        self.stack: list[str] = []  # "[" for an array, "{" for an inline table
        self.in_key = True  # reading a key: at a statement's start, after "{" or after "," in an inline table
        self.header = 0  # 1 inside "[name]", 2 inside "[[name]]", 3 between its two closing brackets
        self.second_open = False  # the next token is the second "[" of "[["
        self.dots = self.keys = self.tables = self.items = 0

    def run(self) -> None:
        limits, stack = self.limits, self.stack
        short = min(limits.key_chars, limits.int_digits)
        # The rarer tokens, dispatched by kind; the common ones are handled inline below.
        handlers: dict[str | None, Callable[[str | None, str, int], None]] = {
            "bad": self.bad,
            "punct": self.punct,
            "str": self.word,
            "mlstr": self.word,
            "bare": self.word,
        }
        for match in _SCAN.finditer(self.text):
            kind = match.lastgroup
            if kind == "gap":
                continue
            token = match.group()
            if kind == "bare" and len(token) <= short:  # a short key or value, most of a large text
                if not self.in_key and stack and stack[-1] == "[":
                    self.items += 1
                    if self.items > limits.items:
                        raise ReplayFormatError(f"more than {limits.items} array elements in the text", self.line)
                continue
            if token == "," and not self.in_key and stack and stack[-1] == "[":
                continue
            if kind == "nl":
                self.line += 1
                if not self.stack:
                    self.in_key, self.dots, self.header = True, 0, 0
            else:
                handlers[kind](kind, token, match.end())
        self.check_closed()

    def check_closed(self) -> None:
        """At the text's end: every array and inline table is closed."""
        if self.stack:
            what = "an array" if self.stack[-1] == "[" else "an inline table"
            raise ReplayFormatError(f"{what} is not closed", self.line)

    def bad(self, kind: str | None, token: str, end: int) -> None:
        """A character that starts no token: an unclosed string's quote, or a stray character."""
        if token in "\"'":
            raise ReplayFormatError(f"a string opened with {token} is not closed", self.line)
        raise ReplayFormatError(f"unexpected character {token!r} outside a string", self.line)

    def punct(self, kind: str | None, token: str, end: int) -> None:
        if self.second_open:
            self.second_open = False
        elif self.in_key:
            self.key_punct(token, end)
        elif token == "[" or token == "{":
            self.open(token)
        elif token == "]" or token == "}":
            if not self.stack or self.stack[-1] != ("[" if token == "]" else "{"):
                raise ReplayFormatError(f"{token!r} closes nothing that is open", self.line)
            self.stack.pop()
        elif token == "," and self.stack and self.stack[-1] == "{":
            self.in_key = True

    def open(self, token: str) -> None:
        stack = self.stack
        if stack and stack[-1] == "[":
            self.items += 1
        stack.append(token)
        if len(stack) > self.limits.depth:
            raise ReplayFormatError(f"arrays or inline tables nested more than {self.limits.depth} deep", self.line)
        self.in_key = token == "{"

    def key_punct(self, token: str, end: int) -> None:
        """A dot, ``=``, a header's bracket or an empty inline table's ``}`` while reading a key."""
        if token == ".":
            self.dot()
        elif token == "=" and not self.header:
            self.equals()
        elif token == "[" and not self.stack and not self.header and not self.dots:
            self.open_header(end)
        elif token == "]" and self.header:
            self.header = 3 if self.header == 2 else 0
            self.in_key = self.header == 3
            self.dots = 0
        elif token == "}" and self.stack and self.stack[-1] == "{":  # an empty inline table
            self.stack.pop()
            self.in_key = False

    def dot(self) -> None:
        """A dot in a key or table name: one more part."""
        self.dots += 1
        if self.dots >= self.limits.key_parts:
            raise ReplayFormatError(
                f"a dotted key or table name has more than {self.limits.key_parts} parts", self.line
            )

    def equals(self) -> None:
        """The ``=`` after a key: one more key, and its value follows."""
        self.keys += 1
        if self.keys > self.limits.keys:
            raise ReplayFormatError(f"more than {self.limits.keys} keys in the text", self.line)
        self.in_key, self.dots = False, 0

    def open_header(self, end: int) -> None:
        """A table header's first ``[`` (``end`` is just after it): one more table."""
        self.second_open = self.text.startswith("[", end)
        self.header = 2 if self.second_open else 1
        self.tables += 1
        if self.tables > self.limits.tables:
            raise ReplayFormatError(f"more than {self.limits.tables} table headers in the text", self.line)

    def word(self, kind: str | None, token: str, end: int) -> None:
        """A string or a bare word: a key's part or a value."""
        limits = self.limits
        if kind == "bare":
            size = len(token)
        else:
            size = len(token) - (2 if kind == "str" else 6)
            if size > limits.string_chars:
                raise ReplayFormatError(f"a string of more than {limits.string_chars} characters", self.line)
            if kind == "mlstr":
                self.line += token.count("\n")
        if self.in_key:
            if size > limits.key_chars:
                raise ReplayFormatError(f"a key of more than {limits.key_chars} characters", self.line)
            return
        if kind == "bare" and size > limits.int_digits and sum(map(str.isdigit, token)) > limits.int_digits:
            raise ReplayFormatError(f"a number of more than {limits.int_digits} digits", self.line)
        if self.stack and self.stack[-1] == "[":
            self.items += 1
            if self.items > limits.items:
                raise ReplayFormatError(f"more than {limits.items} array elements in the text", self.line)


def scan(text: str, limits: ReplayLimits) -> None:
    """Check the structure of a text the general TOML parser is about to read (nesting, keys,
    tables, elements, strings and numbers) against ``limits``, in one pass over its tokens; raise
    :class:`ReplayFormatError` naming the line of the first thing over a limit. Only counts are
    kept, so the scan's own memory is bounded by :attr:`~ReplayLimits.depth` and it cannot recurse.
    Where the text is not TOML the scan may stop with its own sentence, or leave it to the parser."""
    _Scan(text, limits).run()


# -- locating lines in the source -----------------------------------------------------------------

_TOKEN = re.compile(
    r'(?P<ml>"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\')'
    r'|(?P<str>"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')'
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<nl>\n)"
    r"|(?P<open>\[)|(?P<close>\])|(?P<eq>=)|(?P<comma>,)|(?P<lbrace>\{)|(?P<rbrace>\})"
    r"|(?P<ws>[ \t\r]+)"
    r"|(?P<bare>[^\s\[\]=,{}#\"']+)",
    re.S,
)


def _unquote(token: str) -> str:
    token = token.strip()
    if token.startswith('"'):
        try:
            return str(json.loads(token))
        except ValueError:
            return token.strip('"')
    return token.strip("'")


class _Locator:
    """The state of one :func:`locate`: where it is in the text, the table and key being read,
    and the element of a top-level array."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.where: dict[Path_, int] = {}
        self.aot: dict[tuple[str, ...], int] = {}  # [[name]] tables met so far, by name
        self.table: Path_ = ()
        self.line = 1
        self.depth = 0
        self.at_line_start = True
        self.pending_key: list[str] = []
        self.key_path: Path_ = ()
        self.element = 0
        self.element_marked = False
        self.header: list[str] | None = None
        self.header_double = False
        self.position = 0

    def run(self) -> dict[Path_, int]:
        text = self.text
        while self.position < len(text):
            match = _TOKEN.match(text, self.position)
            if match is None:  # pragma: no cover - the bare class matches everything else
                self.position += 1
                continue
            self.position = match.end()
            kind = match.lastgroup
            if kind == "ws":
                continue
            if self.depth == 0 and self.header is None and (kind == "bare" or kind == "nl"):
                # a key, a value or a line's end outside any array, most of a text of many keys
                if kind == "nl":
                    self.line += 1
                    self.at_line_start = True
                    self.pending_key = []
                elif self.at_line_start:
                    self.pending_key.append(match.group())
                continue
            if self.depth == 1 and (kind == "bare" or kind == "str" or kind == "comma"):
                # an element of a top-level array, or the comma after it, most of a large text
                if kind == "comma":
                    self.element += 1
                    self.element_marked = False
                elif not self.element_marked:
                    self.mark_element()
                continue
            self.token(kind, match.group())
        return self.where

    def token(self, kind: str | None, token: str) -> None:
        if kind == "nl":
            self.line += 1
            if self.depth == 0 and self.header is None:
                self.at_line_start = True
                self.pending_key = []
        elif kind == "ml":
            self.mark_element()
            self.line += token.count("\n")
        elif kind in ("ws", "comment"):
            return
        elif self.header is not None:
            self.header_token(kind, token)
        elif self.depth == 0:
            self.top_level(kind, token)
        else:
            self.nested(kind)

    def mark_element(self) -> None:
        """The line of the top-level array's current element, at its first token."""
        if self.depth == 1 and not self.element_marked:
            self.where[(*self.key_path, self.element)] = self.line
            self.element_marked = True

    def header_token(self, kind: str | None, token: str) -> None:
        assert self.header is not None
        if kind != "close":
            self.header.append(token)
            return
        if self.header_double and self.text.startswith("]", self.position):
            self.position += 1
        names = [_unquote(p) for p in ".".join(self.header).split(".") if p.strip()]
        resolved: list[str | int] = []
        for index, name in enumerate(names):
            resolved.append(name)
            prefix = tuple(names[: index + 1])
            if self.header_double and index == len(names) - 1:
                self.aot[prefix] = self.aot.get(prefix, 0) + 1
            if prefix in self.aot:
                resolved.append(self.aot[prefix] - 1)
        self.table = tuple(resolved)
        self.where.setdefault(self.table, self.line)
        self.header = None
        self.at_line_start = False

    def top_level(self, kind: str | None, token: str) -> None:
        if self.at_line_start and kind == "open":
            self.header = []
            self.header_double = self.text.startswith("[", self.position)
            if self.header_double:
                self.position += 1
        elif kind == "eq":
            self.key_path = (*self.table, *(_unquote(p) for p in " ".join(self.pending_key).split(".")))
            self.where[self.key_path] = self.line
            self.pending_key = []
            self.at_line_start = False
            self.element = 0
            self.element_marked = False
        elif self.at_line_start and kind in ("bare", "str"):
            self.pending_key.append(token)
        elif kind in ("open", "lbrace"):
            self.depth = 1
            self.element = 0
            self.element_marked = False

    def nested(self, kind: str | None) -> None:
        """A token inside an array or inline table."""
        if kind in ("open", "lbrace"):
            self.mark_element()
            self.depth += 1
        elif kind in ("close", "rbrace"):
            self.depth -= 1
        elif kind == "comma" and self.depth == 1:
            self.element += 1
            self.element_marked = False
        else:
            self.mark_element()


def locate(text: str) -> dict[Path_, int]:
    """Best-effort map from value paths (``("deals", 0, "actions", 3)``) to 1-based line numbers."""
    return _Locator(text).run()


def general_read(text: str, limits: ReplayLimits, outside: int) -> tuple[dict[str, Any], dict[Path_, int]]:
    """Parse a text in any TOML layout (``outside`` is the first line not in the canonical one):
    the size and structure limits are checked by :func:`scan` first, so ``tomllib`` and
    :func:`locate` see only text whose cost is bounded."""
    if len(text) > limits.general_bytes:
        raise ReplayFormatError(
            f"this line is not laid out as the replay writer writes (one header, key = value or list "
            f"element a line), and a text laid out otherwise is read only up to {limits.general_bytes} "
            f"characters; this one has {len(text)}",
            outside,
        )
    scan(text, limits)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(found.group(1)) if found else 0
        raise ReplayFormatError(f"not valid TOML: {message}", line) from None
    return data, locate(text)
