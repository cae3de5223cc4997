"""The Big Two replay file (``bigtwo-replay/1``): data model, lenient parser, canonical writer,
hash chain and HMAC signature. Pure: the only I/O is in :func:`read_replay` / :func:`write_replay`.

A replay file is TOML (inspired by poker's PHH). Seats are referred to as ``p1`` .. ``pN`` (``p1`` is
engine seat 0). A deal lists one action per line, each naming its actor::

    actions = [
      "p1 3D 4D 5D 6D 7H",        # a play (cards in canonical order)
      "p2 pass",                  # a pass
      "p3 pass auto",             # an auto-pass the engine made (HK auto_pass)
      "p4 pass timeout",          # a timed-out turn (the engine's timeout move)
      "p2 9H refused does-not-beat",   # an attempt the rules refused (changes nothing)
      "p3 left",                  # the seat was left (a bot plays it under the seat's name)
      "p3 taken bot:2 Kim",       # the seat was taken over (kind[:level] then name)
      "p1 8S # any text after # is a comment kept in the log",
    ]

Determinism: :func:`dumps` writes one canonical text for a :class:`GameLog`; nothing in it depends on
the machine, the clock or dict order. Tamper evidence: every element (the header, each deal's
header, each action, each result) is chained by SHA-256, ``h = sha256(h_prev + "\\n" + element)``; the
head after each deal is stored in the deal (``chain``) and the final head in ``[seal]``; the optional
signature is ``hmac-sha256:`` + HMAC-SHA256(key, ``"bigtwo-replay/1 seal " + head``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from .. import ALL_CARDS, BadCardError, Card, Reason, Ruleset, RulesetError, SeatSettlement, Suit
from .limits import ReplayLimits

FORMAT_VERSION = "bigtwo-replay/1"
SIGNATURE_SCHEME = "hmac-sha256"
HEADER_COMMENT = (
    "# Big Two replay file (bigtwo-replay/1). p1..pN are the seats in play order; one action per line:\n"
    '# "pN <cards>" plays, "pN pass", "... auto" = auto-pass, "... timeout" = timed-out turn,\n'
    '# "... refused <reason>" = an attempt the rules refused. Check it with: bigtwo audit FILE\n'
)
_REASONS = frozenset(reason.value for reason in Reason)
_ACTION_TAGS = ("auto", "timeout", "refused")
DEFAULT_LIMITS = ReplayLimits()
"""The limits :func:`loads` and :func:`read_replay` check when given none."""


class ReplayFormatError(ValueError):
    """A replay file that cannot be read; ``line`` (1-based, 0 when unknown) says where."""

    MESSAGE_CHARS = 320
    """Longest message: one quoting a long value (a 2,000-character option value, a hand of
    brackets) is cut in its middle, which keeps what was wrong and what is allowed."""

    def __init__(self, message: str, line: int = 0) -> None:
        if len(message) > self.MESSAGE_CHARS:
            message = f"{message[:200]} … {message[-110:]}"
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


# -- the data model -------------------------------------------------------------------------------


class ActionKind(StrEnum):
    PLAY = "play"
    PASS = "pass"
    LEAVE = "left"
    TAKE = "taken"


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who sits in a seat: a person or a bot (with its level)."""

    name: str
    kind: str = "human"
    """``human`` or ``bot``."""
    level: int | str | None = None

    @property
    def label(self) -> str:
        if self.kind == "bot":
            return f"bot:{self.level}" if self.level is not None else "bot"
        return self.kind


@dataclass(frozen=True, slots=True)
class Action:
    """One line of a deal's ``actions``: a play, a pass, a refused attempt, or a seat change."""

    seat: int
    kind: ActionKind
    cards: tuple[str, ...] = ()
    """Canonical card texts (``3D``), sorted; the raw tokens of a refused attempt holding a bad card."""
    auto: bool = False
    timeout: bool = False
    refused: str = ""
    """The refusal reason id (RULES.md) when the rules refused this attempt."""
    comment: str = ""
    taker: SeatInfo | None = None
    line: int = field(default=0, compare=False)
    canonical: str = field(default="", compare=False, repr=False)
    """The canonical text, when already known (a parsed action keeps it: the hash chain reads it)."""

    @property
    def is_move(self) -> bool:
        return self.kind in (ActionKind.PLAY, ActionKind.PASS)

    @property
    def move_text(self) -> str:
        return "pass" if self.kind is ActionKind.PASS else " ".join(self.cards)

    def text(self) -> str:
        """The canonical line (without quotes)."""
        if self.canonical:
            return self.canonical
        parts = [f"p{self.seat + 1}"]
        if self.kind is ActionKind.LEAVE:
            parts.append("left")
        elif self.kind is ActionKind.TAKE:
            assert self.taker is not None
            parts += ["taken", self.taker.label]
            if self.taker.name:
                parts.append(self.taker.name)
        else:
            parts.append(self.move_text)
            if self.auto:
                parts.append("auto")
            if self.timeout:
                parts.append("timeout")
            if self.refused:
                parts += ["refused", self.refused]
        if self.comment:
            parts += ["#", self.comment]
        return " ".join(parts)

    def __str__(self) -> str:
        return self.text()


class _LineCopy:
    """An :class:`Action`'s twin without ``frozen``: the same slots, filled by plain assignments,
    then given the class :class:`Action`. Reading a file makes one action a line from the few
    hundred different texts a match has; the frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` a field) costs three times as much, and was most of the time a large
    file took to read. The result is an ordinary, equal and immutable :class:`Action`."""

    __slots__ = Action.__slots__

    def __init__(self, action: Action, line: int) -> None:
        self.seat = action.seat
        self.kind = action.kind
        self.cards = action.cards
        self.auto = action.auto
        self.timeout = action.timeout
        self.refused = action.refused
        self.comment = action.comment
        self.taker = action.taker
        self.line = line
        self.canonical = action.canonical


def _at_line(action: Action, line: int) -> Action:
    """``action`` as read on ``line`` (``dataclasses.replace(action, line=line)``, but cheap)."""
    copy: Any = _LineCopy(action, line)
    copy.__class__ = Action
    return copy  # type: ignore[no-any-return]


SeatResult = SeatSettlement
"""One line of a deal's settlement card: the engine's own record."""


@dataclass(frozen=True, slots=True)
class DealResult:
    winner: int
    seats: tuple[SeatResult, ...]
    by_dragon: bool = False
    line: int = field(default=0, compare=False)

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(seat.score for seat in self.seats)


@dataclass(frozen=True, slots=True)
class DealLog:
    number: int
    code: str = ""
    """The deal code (canonical text), or "" for hands dealt elsewhere."""
    hands: tuple[str, ...] = ()
    """Each seat's starting hand (canonical text); may be empty when a code is given."""
    previous_winner: int | None = None
    empty_seats: tuple[int, ...] = ()
    comment: str = ""
    actions: tuple[Action, ...] = ()
    result: DealResult | None = None
    chain: str = ""
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class MatchResult:
    deals: int
    totals: tuple[int, ...]
    deals_won: tuple[int, ...]
    winners: tuple[int, ...]
    over: bool
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class GameLog:
    """A whole match as the replay file records it."""

    ruleset: Ruleset
    seats: tuple[SeatInfo, ...]
    deals: tuple[DealLog, ...] = ()
    result: MatchResult | None = None
    fingerprint: str = ""
    """The ruleset fingerprint as written (checked against ``ruleset.fingerprint``)."""
    comment: str = ""
    chain: str = ""
    signature: str = ""
    version: str = FORMAT_VERSION

    @property
    def players(self) -> int:
        return self.ruleset.players

    @property
    def signed(self) -> bool:
        return bool(self.signature)

    def seat_name(self, seat: int) -> str:
        return self.seats[seat].name if 0 <= seat < len(self.seats) else f"p{seat + 1}"


# -- canonical text --------------------------------------------------------------------------------


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


# -- checking a text against the limits before it is parsed ---------------------------------------

_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")
"""Characters TOML allows nowhere, not even in a string or a comment (tab is allowed; a carriage
return only before a line feed)."""
_CONTROL_BYTES = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
"""The same control characters as UTF-8 bytes (which stand only for themselves in UTF-8): deleting
them from the encoded text finds whether there is one several times faster than the pattern."""


@functools.lru_cache(maxsize=8)
def _long_line(chars: int) -> re.Pattern[str]:
    """A line of more than ``chars`` characters: tried only at line starts, so linear in the text."""
    return re.compile(rf"^[^\n]{{{chars + 1}}}", re.M)


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _checked_text(text: str, limits: ReplayLimits) -> str:
    """``text`` without a leading byte-order mark, once its size and characters are within
    ``limits``: everything here is one pass of C code over the text, so it costs the same whatever
    the text holds, and it runs before any parser sees it."""
    if len(text) > limits.text_bytes:
        raise ReplayFormatError(
            f"the text has {len(text)} characters; a replay text is at most {limits.text_bytes} bytes"
        )
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise ReplayFormatError(
            f"U+{code:04X} (a lone surrogate) is not a character; a replay text is UTF-8", _line_at(text, exc.start)
        ) from None
    if len(data) > limits.text_bytes:
        raise ReplayFormatError(f"the text is {len(data)} bytes in UTF-8; a replay text is at most {limits.text_bytes}")
    lone_cr = b"\r" in data and data.count(b"\r") != data.count(b"\r\n")
    if lone_cr or len(data.translate(None, _CONTROL_BYTES)) != len(data):
        bad = _ILLEGAL.search(text)
        assert bad is not None
        what = "a carriage return not followed by a line feed" if bad.group() == "\r" else "a control character"
        raise ReplayFormatError(
            f"{what} (U+{ord(bad.group()):04X}) is not allowed in a replay file, even in a string "
            "(write it as an escape such as \\u0000)",
            _line_at(text, bad.start()),
        )
    del data
    if text.startswith("\ufeff"):  # a byte-order mark, as some editors write: read_replay drops it too
        text = text[1:]
    lines = text.count("\n") + 1
    if lines > limits.lines:
        raise ReplayFormatError(f"the text has {lines} lines; a replay text has at most {limits.lines}")
    long = _long_line(limits.line_chars).search(text)
    if long is not None:
        raise ReplayFormatError(f"the line is longer than {limits.line_chars} characters", _line_at(text, long.start()))
    return text


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


def _scan(text: str, limits: ReplayLimits) -> None:
    """Check the structure of a text the general TOML parser is about to read (nesting, keys,
    tables, elements, strings and numbers) against ``limits``, in one pass over its tokens; raise
    :class:`ReplayFormatError` naming the line of the first thing over a limit. Only counts are
    kept, so the scan's own memory is bounded by :attr:`~ReplayLimits.depth` and it cannot recurse.
    Where the text is not TOML the scan may stop with its own sentence, or leave it to the parser."""
    line = 1
    stack: list[str] = []  # "[" for an array, "{" for an inline table
    in_key = True  # reading a key: at a statement's start, after "{" or after "," in an inline table
    header = 0  # 1 inside "[name]", 2 inside "[[name]]", 3 between its two closing brackets
    second_open = False  # the next token is the second "[" of "[["
    dots = keys = tables = items = 0
    for match in _SCAN.finditer(text):
        kind = match.lastgroup
        token = match.group()
        if kind == "gap":
            continue
        if kind == "nl":
            line += 1
            if not stack:
                in_key, dots, header = True, 0, 0
            continue
        if kind == "bad":
            if token in "\"'":
                raise ReplayFormatError(f"a string opened with {token} is not closed", line)
            raise ReplayFormatError(f"unexpected character {token!r} outside a string", line)
        if kind == "punct":
            if second_open:
                second_open = False
                continue
            if in_key:
                if token == ".":
                    dots += 1
                    if dots >= limits.key_parts:
                        raise ReplayFormatError(
                            f"a dotted key or table name has more than {limits.key_parts} parts", line
                        )
                elif token == "=" and not header:
                    keys += 1
                    if keys > limits.keys:
                        raise ReplayFormatError(f"more than {limits.keys} keys in the text", line)
                    in_key, dots = False, 0
                elif token == "[" and not stack and not header and not dots:
                    second_open = text.startswith("[", match.end())
                    header = 2 if second_open else 1
                    tables += 1
                    if tables > limits.tables:
                        raise ReplayFormatError(f"more than {limits.tables} table headers in the text", line)
                elif token == "]" and header:
                    header = 3 if header == 2 else 0
                    in_key = header == 3
                    dots = 0
                elif token == "}" and stack and stack[-1] == "{":  # an empty inline table
                    stack.pop()
                    in_key = False
                continue
            if token == "[" or token == "{":
                if stack and stack[-1] == "[":
                    items += 1
                stack.append(token)
                if len(stack) > limits.depth:
                    raise ReplayFormatError(f"arrays or inline tables nested more than {limits.depth} deep", line)
                in_key = token == "{"
            elif token == "]" or token == "}":
                if not stack or stack[-1] != ("[" if token == "]" else "{"):
                    raise ReplayFormatError(f"{token!r} closes nothing that is open", line)
                stack.pop()
            elif token == "," and stack and stack[-1] == "{":
                in_key = True
            continue
        # a string or a bare word: a key's part or a value
        if kind == "bare":
            size = len(token)
        else:
            size = len(token) - (2 if kind == "str" else 6)
            if size > limits.string_chars:
                raise ReplayFormatError(f"a string of more than {limits.string_chars} characters", line)
            if kind == "mlstr":
                line += token.count("\n")
        if in_key:
            if size > limits.key_chars:
                raise ReplayFormatError(f"a key of more than {limits.key_chars} characters", line)
            continue
        if kind == "bare" and size > limits.int_digits and sum(map(str.isdigit, token)) > limits.int_digits:
            raise ReplayFormatError(f"a number of more than {limits.int_digits} digits", line)
        if stack and stack[-1] == "[":
            items += 1
            if items > limits.items:
                raise ReplayFormatError(f"more than {limits.items} array elements in the text", line)
    if stack:
        raise ReplayFormatError(f"{'an array' if stack[-1] == '[' else 'an inline table'} is not closed", line)


# -- locating lines in the source ------------------------------------------------------------------

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

Path_ = tuple[str | int, ...]


def _unquote(token: str) -> str:
    token = token.strip()
    if token.startswith('"'):
        try:
            return str(json.loads(token))
        except ValueError:
            return token.strip('"')
    return token.strip("'")


def locate(text: str) -> dict[Path_, int]:
    """Best-effort map from value paths (``("deals", 0, "actions", 3)``) to 1-based line numbers."""
    where: dict[Path_, int] = {}
    aot: dict[tuple[str, ...], int] = {}
    table: Path_ = ()
    line = 1
    depth = 0
    at_line_start = True
    pending_key: list[str] = []
    key_path: Path_ = ()
    element = 0
    element_marked = False
    header: list[str] | None = None
    header_double = False
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:  # pragma: no cover - the bare class matches everything else
            position += 1
            continue
        kind = match.lastgroup
        token = match.group()
        position = match.end()
        if kind == "nl":
            line += 1
            if depth == 0 and header is None:
                at_line_start = True
                pending_key = []
            continue
        if kind in ("ws", "comment"):
            continue
        if kind == "ml":
            if depth == 1 and not element_marked:
                where[(*key_path, element)] = line
                element_marked = True
            line += token.count("\n")
            continue
        if header is not None:
            if kind == "close":
                if header_double and text.startswith("]", position):
                    position += 1
                names = [_unquote(p) for p in ".".join(header).split(".") if p.strip()]
                resolved: list[str | int] = []
                for index, name in enumerate(names):
                    resolved.append(name)
                    prefix = tuple(names[: index + 1])
                    is_last = index == len(names) - 1
                    if header_double and is_last:
                        aot[prefix] = aot.get(prefix, 0) + 1
                    if prefix in aot:
                        resolved.append(aot[prefix] - 1)
                table = tuple(resolved)
                where.setdefault(table, line)
                header = None
                at_line_start = False
            else:
                header.append(token)
            continue
        if depth == 0:
            if at_line_start and kind == "open":
                header = []
                header_double = text.startswith("[", position)
                if header_double:
                    position += 1
                continue
            if kind == "eq":
                key_path = (*table, *(_unquote(p) for p in " ".join(pending_key).split(".")))
                where[key_path] = line
                pending_key = []
                at_line_start = False
                element = 0
                element_marked = False
                continue
            if at_line_start and kind in ("bare", "str"):
                pending_key.append(token)
                continue
            if kind in ("open", "lbrace"):
                depth = 1
                element = 0
                element_marked = False
            continue
        # inside an array or inline table
        if kind in ("open", "lbrace"):
            if depth == 1 and not element_marked:
                where[(*key_path, element)] = line
                element_marked = True
            depth += 1
        elif kind in ("close", "rbrace"):
            depth -= 1
        elif kind == "comma" and depth == 1:
            element += 1
            element_marked = False
        elif depth == 1 and not element_marked:
            where[(*key_path, element)] = line
            element_marked = True
    return where


# -- parsing ---------------------------------------------------------------------------------------


class _Reader:
    def __init__(self, where: dict[Path_, int]) -> None:
        self.where = where

    def line(self, path: Path_) -> int:
        if path and isinstance(path[-1], int) and path not in self.where:
            first = self.where.get((*path[:-1], "["))
            if first is not None:  # one element a line (the fast parser's arrays)
                return first + path[-1]
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return 0

    def fail(self, path: Path_, message: str) -> ReplayFormatError:
        return ReplayFormatError(message, self.line(path))

    def table(self, data: Any, path: Path_, allowed: Iterable[str], what: str) -> Mapping[str, Any]:
        if not isinstance(data, Mapping):
            raise self.fail(path, f"{what} must be a table")
        allowed = tuple(allowed)
        for key in data:
            if key not in allowed:
                raise self.fail((*path, key), f"unknown key {key!r} in {what}; valid keys: {', '.join(allowed)}")
        return data

    def str_(self, data: Mapping[str, Any], key: str, path: Path_, default: str | None = None) -> str:
        if key not in data:
            if default is None:
                raise self.fail(path, f"missing {key!r}")
            return default
        value = data[key]
        if not isinstance(value, str):
            raise self.fail((*path, key), f"{key} must be a string, not {_toml_type(value)}")
        return value

    def int_(self, data: Mapping[str, Any], key: str, path: Path_, minimum: int = 0) -> int:
        if key not in data:
            raise self.fail(path, f"missing {key!r}")
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail((*path, key), f"{key} must be a whole number, not {_toml_type(value)}")
        if value < minimum:
            raise self.fail((*path, key), f"{key} must be at least {minimum}, not {value}")
        return value

    def ints(self, data: Mapping[str, Any], key: str, path: Path_, count: int) -> tuple[int, ...]:
        if key not in data:
            raise self.fail(path, f"missing {key!r}")
        value = data[key]
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
            raise self.fail((*path, key), f"{key} must be a list of whole numbers, one per seat")
        if len(value) != count:
            raise self.fail((*path, key), f"{key} has {len(value)} entries; this table seats {count}")
        return tuple(value)

    def seat(self, value: Any, path: Path_, players: int) -> int:
        text = value.strip().lower() if isinstance(value, str) else ""
        if not (text.startswith("p") and text[1:].isdigit() and 1 <= int(text[1:]) <= players):
            raise self.fail(path, f"{value!r} is not a seat: write p1 .. p{players}")
        return int(text[1:]) - 1


def _toml_type(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


_CANONICAL_CARD = {str(card): card for card in ALL_CARDS}
_CARD_ORDER = {str(card): card.index for card in ALL_CARDS}
_SPELLINGS = {text: text for text in _CARD_ORDER}
"""Each card spelling met so far (``3♦``, ``3d``, ``10D``...) to its canonical text: the engine
accepts a bounded set of spellings, so this stays small, and reading a move's cards is then a
lookup per card in C (a spelling not in it yet is read once by ``Card.parse``)."""


def _suit_characters() -> str:
    """The characters the engine reads as a suit (letters of either case and the suit symbols of
    U+2660..U+2667), asked of ``Suit.parse`` itself."""
    suits = []
    for char in "DCHSdchs" + "".join(map(chr, range(0x2660, 0x2668))):
        with contextlib.suppress(BadCardError):
            Suit.parse(char)
            suits.append(char)
    return "".join(suits)


_GLUED_PIECE = re.compile(r"\S[^\s{0}]*[{0}]|\S+".format(re.escape(_suit_characters())))
"""The cards of one word longer than three characters, as ``split_card_text`` cuts it: after each
suit character that does not start a piece (so ``3♦3♠`` is two cards), the rest whole."""


def _card_tokens(text: str) -> list[str]:
    """``split_card_text(text)``, with the cutting of glued cards done by one regular expression
    per long word instead of a loop over each character in Python (tests check they agree)."""
    words = text.replace(",", " ").split()
    if not words or max(map(len, words)) <= 3:
        return words
    pieces: list[str] = []
    for word in words:
        if len(word) <= 3:
            pieces.append(word)
        else:
            pieces += _GLUED_PIECE.findall(word)
    return pieces


def _canonical_cards(tokens: Sequence[str], raw_ok: bool) -> tuple[tuple[str, ...], str]:
    """(canonical card texts sorted by card, error) for a play's tokens; a refused attempt's
    tokens that are not all cards come back as they are when ``raw_ok``. Work in Python is per
    new spelling, not per card, so a long move costs little more than a short one."""
    texts = list(map(_SPELLINGS.get, tokens))
    while None in texts:
        index = texts.index(None)
        token = tokens[index]
        try:
            card = Card.parse(token)
        except BadCardError as exc:
            if raw_ok:
                return tuple(tokens), ""
            return (), str(exc)
        texts[index] = str(card)
        if len(_SPELLINGS) < 4096:  # every spelling the engine accepts fits many times over
            _SPELLINGS[token] = str(card)
    return tuple(sorted(texts, key=_CARD_ORDER.__getitem__)), ""  # type: ignore[arg-type]


_ACTION_CACHE: dict[tuple[str, int], Action] = {}
"""Parsed action texts (with line 0), by text and table size: a match repeats the same few
thousand texts, and a bulk audit reads many matches in one process."""
_ACTION_CACHE_SIZE = 50_000
_ACTION_CACHE_TEXT = 80
"""Longest text remembered: every action without a comment is shorter, and a long text (a
comment) is rarely repeated, so the cache's memory stays a few megabytes whoever sends texts."""


def parse_action(text: str, players: int, line: int = 0) -> Action:
    """Parse one action line (lenient: unicode suits, ``10``, glued cards, any case)."""
    key = (text, players)
    c = _ACTION_CACHE.get(key)
    if c is None:
        c = _parse_action(text, players, line)
        # Its canonical text, set on the object no one else has seen yet: a second frozen
        # dataclass built for it would cost most of what parsing did.
        object.__setattr__(c, "canonical", c.text())
        if len(text) <= _ACTION_CACHE_TEXT and len(_ACTION_CACHE) < _ACTION_CACHE_SIZE:
            _ACTION_CACHE[key] = c
        return c
    return c if c.line == line else _at_line(c, line)


def _quoted(text: str) -> str:
    """``repr(text)``, cut after 60 characters: an error names the action, it does not echo a page."""
    return repr(text) if len(text) <= 60 else repr(text[:60]) + f"... ({len(text)} characters)"


def _parse_action(text: str, players: int, line: int) -> Action:
    body, hash_mark, comment = text.partition("#")
    comment = comment.strip() if hash_mark else ""
    tokens = body.split()
    if not tokens:
        raise ReplayFormatError(f'empty action {_quoted(text)}: write the actor then the move, e.g. "p1 3D"', line)
    actor = tokens[0].lower()
    if not (actor.startswith("p") and actor[1:].isdigit()):
        raise ReplayFormatError(f"action {_quoted(text)} does not start with its actor (p1 .. p{players})", line)
    seat = int(actor[1:]) - 1
    if not 0 <= seat < players:
        raise ReplayFormatError(
            f"action {_quoted(text)}: {tokens[0]} is not a seat at this {players}-player table", line
        )
    rest = tokens[1:]
    if not rest:
        raise ReplayFormatError(f"action {_quoted(text)} names no move (cards, pass, left or taken)", line)
    word = rest[0].lower()
    if word in ("left", "leaves"):
        if len(rest) > 1:
            raise ReplayFormatError(f"action {_quoted(text)}: nothing may follow 'left'", line)
        return Action(seat, ActionKind.LEAVE, comment=comment, line=line)
    if word in ("taken", "takes"):
        if len(rest) < 2:
            raise ReplayFormatError(f"action {_quoted(text)}: write 'taken human NAME' or 'taken bot:LEVEL NAME'", line)
        label = rest[1].lower()
        kind, _, level_text = label.partition(":")
        if kind not in ("human", "bot"):
            raise ReplayFormatError(
                f"action {_quoted(text)}: the taker is 'human' or 'bot[:LEVEL]', not {rest[1]!r}", line
            )
        level: int | str | None = None
        if level_text:
            level = int(level_text) if level_text.isdigit() else level_text
        taker = SeatInfo(" ".join(rest[2:]), kind, level)
        return Action(seat, ActionKind.TAKE, taker=taker, comment=comment, line=line)
    # a move: cards or pass, then at most "auto", "timeout" and "refused REASON"
    lowered = list(map(str.lower, rest))
    index = min((lowered.index(tag) for tag in _ACTION_TAGS if tag in lowered), default=len(rest))
    move_tokens = rest[:index]
    if len(rest) - index > 4:
        raise ReplayFormatError(
            f"action {_quoted(text)}: too many words after the move (the tags are auto, timeout, refused REASON)",
            line,
        )
    auto = timeout = False
    refused = ""
    while index < len(rest):
        tag = rest[index].lower()
        if tag == "auto":
            auto = True
        elif tag == "timeout":
            timeout = True
        elif tag == "refused":
            if index + 1 >= len(rest):
                raise ReplayFormatError(
                    f"action {_quoted(text)}: 'refused' needs its reason, e.g. refused does-not-beat", line
                )
            refused = rest[index + 1].lower()
            if refused not in _REASONS:
                raise ReplayFormatError(
                    f"action {_quoted(text)}: {rest[index + 1]!r} is not a refusal reason; "
                    f"valid: {', '.join(sorted(_REASONS))}",
                    line,
                )
            index += 1
        else:
            raise ReplayFormatError(f"action {_quoted(text)}: unexpected {rest[index]!r} after the tags", line)
        index += 1
    if not move_tokens:
        raise ReplayFormatError(f"action {_quoted(text)} names no move (cards or pass)", line)
    if len(move_tokens) == 1 and move_tokens[0].lower() == "pass":
        return Action(seat, ActionKind.PASS, (), auto, timeout, refused, comment, line=line)
    if auto:
        raise ReplayFormatError(f"action {_quoted(text)}: only a pass can be automatic", line)
    cards, error = _canonical_cards(_card_tokens(" ".join(move_tokens)), raw_ok=bool(refused))
    if error:
        raise ReplayFormatError(f"action {_quoted(text)}: {error}", line)
    return Action(seat, ActionKind.PLAY, cards, False, timeout, refused, comment, line=line)


def _canonical_hand(text: str) -> str:
    cards, error = _canonical_cards(_card_tokens(text), raw_ok=False)
    if error:
        raise ValueError(error)
    if len(set(cards)) != len(cards):
        raise ValueError(f"a card is listed twice in {text!r}")
    return " ".join(cards)


_TOP_KEYS = ("format", "comment", "ruleset", "seats", "deals", "result", "seal")
_DEAL_KEYS = ("number", "code", "hands", "previous_winner", "empty_seats", "comment", "actions", "chain", "result")
_RESULT_ARRAYS = ("cards_left", "twos_left", "rate", "multiplier", "penalty", "score")


_HEADERS = frozenset(("[ruleset]", "[[seats]]", "[[deals]]", "[deals.result]", "[result]", "[seal]"))
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")
_DIGIT_RUN = re.compile(r"[0-9]{21,}")
_INT_ARRAY = re.compile(r"\[(-?[0-9]{1,20}(?:, -?[0-9]{1,20})*)?\]\Z")
"""A flat array of whole numbers as the writer writes it (a result column): read without JSON."""
_STRING_LINES = re.compile(r'(?:[ \t]*"[^"\\\n]*",[ \t]*\r?\n)*')
"""The lines of an array of plain strings, one a line, as the writer writes actions and hands."""
_STRING_LINE = re.compile(r'"([^"\\\n]*)",')


class _OutsideLayout(Exception):
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
        inner = numbers.group(1)
        values = [int(number) for number in inner.split(", ")] if inner else []
        if inner and max(map(abs, values)) >= 10**limits.int_digits:
            raise ReplayFormatError(f"a number of more than {limits.int_digits} digits", line)
        return values
    first = text[:1]
    if len(text) - 2 > limits.string_chars and first == '"':
        raise ReplayFormatError(f"a string of more than {limits.string_chars} characters", line)
    if first == '"' and text[-1] == '"' and text.count('"') == 2 and "\\" not in text and len(text) > 1:
        return text[1:-1]  # the common case: a plain string
    if "\\/" in text or first not in ('"', "["):
        raise ValueError(text)
    if first == "[" and ("[" in text[1:] or "{" in text or _DIGIT_RUN.search(text)):
        raise ValueError(text)  # nested, or a number too long for the JSON reader's cheap path
    value = json.loads(text)
    if isinstance(value, list):
        if any(isinstance(v, (list, dict, float)) or v is None for v in value):
            raise ValueError(text)
        if any(isinstance(v, str) and not _is_text(v) for v in value):
            raise ValueError(text)
    elif not isinstance(value, str) or not _is_text(value):
        raise ValueError(text)
    return value


def _is_text(value: str) -> bool:
    """Whether a decoded string is Unicode text: JSON's ``\\ud800`` escape makes a lone surrogate,
    which TOML refuses (then the general parser says so)."""
    return value.isascii() or not any(0xD800 <= ord(char) <= 0xDFFF for char in value)


def _fast_read(text: str, limits: ReplayLimits) -> tuple[dict[str, Any], dict[Path_, int]]:
    """Parse the canonical layout the writer produces (one header, ``key = value`` or array element
    a line, comments and blank lines allowed), with every line number, checking the limits as it
    goes; raise :class:`_OutsideLayout` where the text steps outside it. Linear: each line is read
    once, with string operations bounded by its length."""
    data: dict[str, Any] = {}
    where: dict[Path_, int] = {}
    table: dict[str, Any] = data
    path: Path_ = ()
    lines = text.split("\n")
    count = len(lines)
    number = 0
    offset = 0  # where lines[number] starts in text
    keys = tables = items = 0
    try:
        while number < count:
            raw = lines[number]
            line = raw.strip()
            number += 1
            offset += len(raw) + 1
            if not line or line[0] == "#":
                continue
            if line[0] == "[":
                if line not in _HEADERS:
                    raise _OutsideLayout(number)
                tables += 1
                if tables > limits.tables:
                    raise ReplayFormatError(f"more than {limits.tables} table headers in the text", number)
                if line == "[[seats]]" or line == "[[deals]]":
                    name = line[2:-2]
                    items_of = data.setdefault(name, [])
                    if not isinstance(items_of, list):
                        raise _OutsideLayout(number)
                    table = {}
                    items_of.append(table)
                    path = (name, len(items_of) - 1)
                elif line == "[deals.result]":
                    deals = data.get("deals")
                    if not deals or "result" in deals[-1]:
                        raise _OutsideLayout(number)
                    table = deals[-1]["result"] = {}
                    path = ("deals", len(deals) - 1, "result")
                else:
                    name = line[1:-1]
                    if name in data:
                        raise _OutsideLayout(number)
                    table = data[name] = {}
                    path = (name,)
                where[path] = number
                continue
            key, equals, value = line.partition(" = ")
            if not equals or not _BARE_KEY.match(key) or key in table:
                raise _OutsideLayout(number)
            if len(key) > limits.key_chars:
                raise ReplayFormatError(f"a key of more than {limits.key_chars} characters", number)
            keys += 1
            if keys > limits.keys:
                raise ReplayFormatError(f"more than {limits.keys} keys in the text", number)
            where[(*path, key)] = number
            if value == "[":
                array: list[Any] = []
                first = number + 1
                block = _STRING_LINES.match(text, offset)
                assert block is not None  # the pattern matches the empty string
                if block.end() > offset:  # plain strings, one a line: read at once
                    array = _STRING_LINE.findall(text, offset, block.end())
                    if max(map(len, array)) > limits.string_chars:
                        raise ReplayFormatError(f"a string of more than {limits.string_chars} characters", first)
                    number += len(array)
                    offset = block.end()
                while True:
                    if number >= count:
                        raise _OutsideLayout(number)
                    raw = lines[number]
                    item = raw.strip()
                    number += 1
                    offset += len(raw) + 1
                    if item == "]":
                        break
                    if item[-1:] != ",":
                        raise _OutsideLayout(number)
                    if item[0] == '"' and item[-2] == '"' and item.count('"') == 2 and "\\" not in item:
                        array.append(item[1:-2])  # the common case: a plain string
                        if len(item) - 3 > limits.string_chars:
                            raise ReplayFormatError(f"a string of more than {limits.string_chars} characters", number)
                        continue
                    element = _fast_value(item[:-1], limits, number)
                    if isinstance(element, list):
                        raise _OutsideLayout(number)
                    array.append(element)
                if array:
                    where[(*path, key, "[")] = first
                items += len(array)
                table[key] = array
            else:
                table[key] = element = _fast_value(value, limits, number)
                if isinstance(element, list):
                    items += len(element)
            if items > limits.items:
                raise ReplayFormatError(f"more than {limits.items} array elements in the text", number)
    except ValueError as exc:
        if isinstance(exc, ReplayFormatError):
            raise
        raise _OutsideLayout(number) from None
    return data, where


def _fast_parse(text: str, limits: ReplayLimits = DEFAULT_LIMITS) -> tuple[dict[str, Any], dict[Path_, int]] | None:
    """The canonical layout's data and line numbers (see :func:`_fast_read`), or None when the text
    steps outside it."""
    try:
        return _fast_read(text, limits)
    except _OutsideLayout:
        return None


def _general_read(text: str, limits: ReplayLimits, outside: int) -> tuple[dict[str, Any], dict[Path_, int]]:
    """Parse a text in any TOML layout (``outside`` is the first line not in the canonical one):
    the size and structure limits are checked by :func:`_scan` first, so ``tomllib`` and
    :func:`locate` see only text whose cost is bounded."""
    if len(text) > limits.general_bytes:
        raise ReplayFormatError(
            f"this line is not laid out as the replay writer writes (one header, key = value or list "
            f"element a line), and a text laid out otherwise is read only up to {limits.general_bytes} "
            f"characters; this one has {len(text)}",
            outside,
        )
    _scan(text, limits)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(found.group(1)) if found else 0
        raise ReplayFormatError(f"not valid TOML: {message}", line) from None
    return data, locate(text)


def loads(text: str, limits: ReplayLimits = DEFAULT_LIMITS) -> GameLog:
    """Parse a replay file's text. Raises :class:`ReplayFormatError` naming the line, and nothing
    else whatever the text: its size and structure are checked against ``limits`` before any parser
    reads it, so the work is bounded too."""
    if not isinstance(text, str):
        raise ReplayFormatError(f"a replay text is a string, not {type(text).__name__}")
    text = _checked_text(text, limits)
    try:
        data, where = _fast_read(text, limits)
    except _OutsideLayout as outside:
        data, where = _general_read(text, limits, outside.line)
    reader = _Reader(where)
    reader.table(data, (), _TOP_KEYS, "the file")
    version = reader.str_(data, "format", (), "")
    if not version:
        raise ReplayFormatError(f"missing 'format = \"{FORMAT_VERSION}\"' at the top of the file", 1)
    if version != FORMAT_VERSION:
        raise reader.fail(("format",), f"unknown format {version!r}; this reader knows {FORMAT_VERSION!r}")
    comment = reader.str_(data, "comment", (), "")

    # ruleset
    if "ruleset" not in data:
        raise ReplayFormatError("missing the [ruleset] table (preset, fingerprint, overrides)", 0)
    raw_rules = reader.table(data["ruleset"], ("ruleset",), _ruleset_keys(), "[ruleset]")
    fingerprint = reader.str_(raw_rules, "fingerprint", ("ruleset",), "")
    try:
        ruleset = Ruleset.from_mapping({k: v for k, v in raw_rules.items() if k != "fingerprint"})
    except RulesetError as exc:
        option = getattr(exc, "option", "") or ""
        raise reader.fail(("ruleset", option.replace("-", "_")) if option else ("ruleset",), str(exc)) from None
    players = ruleset.players

    # seats
    raw_seats = data.get("seats", [])
    if not isinstance(raw_seats, list):
        raise reader.fail(("seats",), "seats must be written as [[seats]] tables")
    if raw_seats and len(raw_seats) != players:
        raise reader.fail(("seats",), f"{len(raw_seats)} [[seats]] given; this ruleset seats {players} players")
    seats: list[SeatInfo] = []
    for index, raw in enumerate(raw_seats):
        path: Path_ = ("seats", index)
        table = reader.table(raw, path, ("name", "kind", "level"), "[[seats]]")
        name = reader.str_(table, "name", path)
        kind = reader.str_(table, "kind", path, "human")
        if kind not in ("human", "bot"):
            raise reader.fail((*path, "kind"), f"kind is 'human' or 'bot', not {kind!r}")
        level = table.get("level")
        if level is not None and (isinstance(level, bool) or not isinstance(level, (int, str))):
            raise reader.fail((*path, "level"), "level must be a number or a word")
        seats.append(SeatInfo(name, kind, level))
    if not seats:
        seats = [SeatInfo(f"p{seat + 1}") for seat in range(players)]

    # deals
    raw_deals = data.get("deals", [])
    if not isinstance(raw_deals, list):
        raise reader.fail(("deals",), "deals must be written as [[deals]] tables")
    seen: dict[str, Action] = {}
    deals = [_parse_deal(reader, raw, index, players, limits, seen) for index, raw in enumerate(raw_deals)]

    result: MatchResult | None = None
    if "result" in data:
        path = ("result",)
        table = reader.table(data["result"], path, ("deals", "totals", "deals_won", "winners", "over"), "[result]")
        winners_raw = table.get("winners", [])
        if not isinstance(winners_raw, list):
            raise reader.fail((*path, "winners"), 'winners must be a list of seats, e.g. ["p2"]')
        over = table.get("over", False)
        if not isinstance(over, bool):
            raise reader.fail((*path, "over"), "over must be true or false")
        result = MatchResult(
            deals=reader.int_(table, "deals", path),
            totals=reader.ints(table, "totals", path, players),
            deals_won=reader.ints(table, "deals_won", path, players),
            winners=tuple(reader.seat(w, (*path, "winners", i), players) for i, w in enumerate(winners_raw)),
            over=over,
            line=reader.line(path),
        )
    chain = signature = ""
    if "seal" in data:
        table = reader.table(data["seal"], ("seal",), ("chain", "signature"), "[seal]")
        chain = reader.str_(table, "chain", ("seal",), "")
        signature = reader.str_(table, "signature", ("seal",), "")
    return GameLog(
        ruleset=ruleset,
        seats=tuple(seats),
        deals=tuple(deals),
        result=result,
        fingerprint=fingerprint,
        comment=comment,
        chain=chain,
        signature=signature,
        version=version,
    )


def _ruleset_keys() -> tuple[str, ...]:
    from .. import OPTION_NAMES

    return ("preset", "fingerprint", *OPTION_NAMES, *(name.replace("_", "-") for name in OPTION_NAMES))


def _parse_deal(
    reader: _Reader, raw: Any, index: int, players: int, limits: ReplayLimits, seen: dict[str, Action]
) -> DealLog:
    """One ``[[deals]]`` table; ``seen`` holds the actions of the file parsed so far, by text."""
    path: Path_ = ("deals", index)
    table = reader.table(raw, path, _DEAL_KEYS, "[[deals]]")
    number = reader.int_(table, "number", path, minimum=1)
    code = reader.str_(table, "code", path, "")
    if code:
        from .. import DealCode, DealCodeError

        try:
            code = str(DealCode.parse(code))
        except DealCodeError as exc:
            raise reader.fail((*path, "code"), str(exc)) from None
    hands: tuple[str, ...] = ()
    if "hands" in table:
        raw_hands = table["hands"]
        if not isinstance(raw_hands, list) or not all(isinstance(h, str) for h in raw_hands):
            raise reader.fail((*path, "hands"), "hands must be a list of strings, one hand per seat")
        if len(raw_hands) != players:
            raise reader.fail((*path, "hands"), f"{len(raw_hands)} hands given; this table seats {players}")
        canonical = []
        for seat, hand in enumerate(raw_hands):
            try:
                canonical.append(_canonical_hand(hand))
            except ValueError as exc:
                raise reader.fail((*path, "hands", seat), f"p{seat + 1}'s hand: {exc}") from None
        hands = tuple(canonical)
    if not code and not hands:
        raise reader.fail(path, "a deal needs its code or its hands (or both)")
    previous_winner = None
    if "previous_winner" in table:
        previous_winner = reader.seat(table["previous_winner"], (*path, "previous_winner"), players)
    empty: list[int] = []
    raw_empty = table.get("empty_seats", [])
    if not isinstance(raw_empty, list):
        raise reader.fail((*path, "empty_seats"), 'empty_seats must be a list of seats, e.g. ["p3"]')
    for i, seat in enumerate(raw_empty):
        empty.append(reader.seat(seat, (*path, "empty_seats", i), players))
    raw_actions = table.get("actions", [])
    if not isinstance(raw_actions, list):
        raise reader.fail((*path, "actions"), "actions must be a list of strings, one action per line")
    actions = []
    first = reader.where.get((*path, "actions", "["))  # one action a line: the line is first + i
    for i, text in enumerate(raw_actions):
        line = first + i if first is not None else reader.line((*path, "actions", i))
        c = seen.get(text) if isinstance(text, str) else None
        if c is None:  # a text not met before in this file: checked, then parsed
            if not isinstance(text, str):
                raise ReplayFormatError(
                    f'action {i + 1} must be a string such as "p1 3D", not {_toml_type(text)}', line
                )
            if len(text) > limits.action_chars and len(text.partition("#")[0]) > limits.action_chars:
                raise ReplayFormatError(
                    f"action {i + 1} has more than {limits.action_chars} characters before its comment", line
                )
            if len(seen) >= limits.action_texts:
                raise ReplayFormatError(f"more than {limits.action_texts} different action texts in the file", line)
            c = seen[text] = parse_action(text, players, line)
        actions.append(c if c.line == line else _at_line(c, line))
    result = None
    if "result" in table:
        rpath = (*path, "result")
        rtable = reader.table(table["result"], rpath, ("winner", "by_dragon", *_RESULT_ARRAYS), "[deals.result]")
        if "winner" not in rtable:
            raise reader.fail(rpath, "missing 'winner'")
        winner = reader.seat(rtable["winner"], (*rpath, "winner"), players)
        by_dragon = rtable.get("by_dragon", False)
        if not isinstance(by_dragon, bool):
            raise reader.fail((*rpath, "by_dragon"), "by_dragon must be true or false")
        columns = [reader.ints(rtable, name, rpath, players) for name in _RESULT_ARRAYS]
        seats = tuple(SeatResult(seat, *(column[seat] for column in columns)) for seat in range(players))
        result = DealResult(winner, seats, by_dragon, line=reader.line(rpath))
    return DealLog(
        number=number,
        code=code,
        hands=hands,
        previous_winner=previous_winner,
        empty_seats=tuple(sorted(set(empty))),
        comment=reader.str_(table, "comment", path, ""),
        actions=tuple(actions),
        result=result,
        chain=reader.str_(table, "chain", path, ""),
        line=reader.line(path),
    )


# -- files -----------------------------------------------------------------------------------------


def read_replay(path: str | Path, limits: ReplayLimits = DEFAULT_LIMITS) -> GameLog:
    """Read and parse a replay file (UTF-8; a byte-order mark is accepted) within ``limits``."""
    with Path(path).open("rb") as file:
        raw = file.read(limits.text_bytes + 1)
    if len(raw) > limits.text_bytes:
        raise ReplayFormatError(f"the file is larger than {limits.text_bytes} bytes, the most a replay file may be")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ReplayFormatError("the file is not UTF-8 text", line) from None
    return loads(text.replace("\r\n", "\n"), limits)


def write_replay(path: str | Path, log: GameLog) -> None:
    """Write the canonical text (UTF-8, ``\\n`` line ends: the same bytes on every machine)."""
    Path(path).write_bytes(dumps(log).encode("utf-8"))
