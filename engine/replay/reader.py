"""Reading a replay text: :func:`loads` checks the text against the limits before any parser sees
it, reads it with the canonical layout's reader (:mod:`.layout`) or, for any other TOML layout,
the general one (:mod:`.general`), then builds the :class:`~.model.GameLog`, naming the line of
the first thing wrong in a :class:`~.model.ReplayFormatError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .. import OPTION_NAMES, Ruleset, RulesetError
from ..cache import BoundedCache
from .actions import _canonical_hand, parse_action
from .general import general_read
from .layout import OutsideLayout, Path_, read_layout
from .limits import DEFAULT_LIMITS, ReplayLimits
from .model import (
    FORMAT_VERSION,
    Action,
    DealLog,
    DealResult,
    GameLog,
    MatchResult,
    ReplayFormatError,
    SeatInfo,
    SeatResult,
    _at_line,
)

# -- checking a text against the limits before it is parsed ---------------------------------------

_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")
"""Characters TOML allows nowhere, not even in a string or a comment (tab is allowed; a carriage
return only before a line feed)."""
_CONTROL_BYTES = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
"""The same control characters as UTF-8 bytes (which stand only for themselves in UTF-8): deleting
them from the encoded text finds whether there is one several times faster than the pattern."""


_LONG_LINES: BoundedCache[int, re.Pattern[str]] = BoundedCache("engine.replay.long_line_patterns", 8)


def _long_line(chars: int) -> re.Pattern[str]:
    """A line of more than ``chars`` characters: tried only at line starts, so linear in the text."""
    return _LONG_LINES.get_or_compute(chars, lambda n: re.compile(rf"^[^\n]{{{n + 1}}}", re.M))


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
                # Each valid key once: options may be spelled with - or _, and the list says so
                # rather than naming both spellings (which made it too long to show whole).
                once = dict.fromkeys(name.replace("-", "_") for name in allowed)
                spelled = " (- or _ alike)" if len(once) < len(allowed) else ""
                shown = key if len(str(key)) <= 40 else f"{str(key)[:40]}…"
                valid = ", ".join(once)
                raise self.fail((*path, key), f"unknown key {shown!r} in {what}; valid keys{spelled}: {valid}")
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


_TOP_KEYS = ("format", "comment", "ruleset", "seats", "deals", "result", "seal")
_DEAL_KEYS = ("number", "code", "hands", "previous_winner", "empty_seats", "comment", "actions", "chain", "result")
_RESULT_ARRAYS = ("cards_left", "twos_left", "rate", "multiplier", "penalty", "score")
_RULESET_KEYS = ("preset", "fingerprint", *OPTION_NAMES, *(name.replace("_", "-") for name in OPTION_NAMES))


def loads(text: str, limits: ReplayLimits = DEFAULT_LIMITS) -> GameLog:
    """Parse a replay file's text. Raises :class:`ReplayFormatError` naming the line, and nothing
    else whatever the text: its size and structure are checked against ``limits`` before any parser
    reads it, so the work is bounded too."""
    if not isinstance(text, str):
        raise ReplayFormatError(f"a replay text is a string, not {type(text).__name__}")
    text = _checked_text(text, limits)
    try:
        data, where = read_layout(text, limits)
    except OutsideLayout as outside:
        data, where = general_read(text, limits, outside.line)
    reader = _Reader(where)
    reader.table(data, (), _TOP_KEYS, "the file")
    version = reader.str_(data, "format", (), "")
    if not version:
        raise ReplayFormatError(f"missing 'format = \"{FORMAT_VERSION}\"' at the top of the file", 1)
    if version != FORMAT_VERSION:
        raise reader.fail(("format",), f"unknown format {version!r}; this reader knows {FORMAT_VERSION!r}")
    comment = reader.str_(data, "comment", (), "")
    ruleset, fingerprint = _read_ruleset(reader, data)
    players = ruleset.players
    seats = _read_seats(reader, data.get("seats", []), players)
    raw_deals = data.get("deals", [])
    if not isinstance(raw_deals, list):
        raise reader.fail(("deals",), "deals must be written as [[deals]] tables")
    seen: dict[str, Action] = {}
    deals = [_parse_deal(reader, raw, index, players, limits, seen) for index, raw in enumerate(raw_deals)]
    result = _read_match_result(reader, data["result"], players) if "result" in data else None
    chain = signature = ""
    if "seal" in data:
        table = reader.table(data["seal"], ("seal",), ("chain", "signature"), "[seal]")
        chain = reader.str_(table, "chain", ("seal",), "")
        signature = reader.str_(table, "signature", ("seal",), "")
    return GameLog(
        ruleset=ruleset,
        seats=seats,
        deals=tuple(deals),
        result=result,
        fingerprint=fingerprint,
        comment=comment,
        chain=chain,
        signature=signature,
        version=version,
    )


def _read_ruleset(reader: _Reader, data: Mapping[str, Any]) -> tuple[Ruleset, str]:
    """The ``[ruleset]`` table: (the ruleset, the fingerprint as written)."""
    if "ruleset" not in data:
        raise ReplayFormatError("missing the [ruleset] table (preset, fingerprint, overrides)", 0)
    raw_rules = reader.table(data["ruleset"], ("ruleset",), _RULESET_KEYS, "[ruleset]")
    fingerprint = reader.str_(raw_rules, "fingerprint", ("ruleset",), "")
    try:
        ruleset = Ruleset.from_mapping({k: v for k, v in raw_rules.items() if k != "fingerprint"})
    except RulesetError as exc:
        option = getattr(exc, "option", "") or ""
        raise reader.fail(("ruleset", option.replace("-", "_")) if option else ("ruleset",), str(exc)) from None
    return ruleset, fingerprint


def _read_seats(reader: _Reader, raw_seats: Any, players: int) -> tuple[SeatInfo, ...]:
    """The ``[[seats]]`` tables (``p1`` .. ``pN`` when there are none)."""
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
        return tuple(SeatInfo(f"p{seat + 1}") for seat in range(players))
    return tuple(seats)


def _read_match_result(reader: _Reader, raw: Any, players: int) -> MatchResult:
    """The ``[result]`` table."""
    path: Path_ = ("result",)
    table = reader.table(raw, path, ("deals", "totals", "deals_won", "winners", "over"), "[result]")
    winners_raw = table.get("winners", [])
    if not isinstance(winners_raw, list):
        raise reader.fail((*path, "winners"), 'winners must be a list of seats, e.g. ["p2"]')
    over = table.get("over", False)
    if not isinstance(over, bool):
        raise reader.fail((*path, "over"), "over must be true or false")
    return MatchResult(
        deals=reader.int_(table, "deals", path),
        totals=reader.ints(table, "totals", path, players),
        deals_won=reader.ints(table, "deals_won", path, players),
        winners=tuple(reader.seat(w, (*path, "winners", i), players) for i, w in enumerate(winners_raw)),
        over=over,
        line=reader.line(path),
    )


def _parse_deal(
    reader: _Reader, raw: Any, index: int, players: int, limits: ReplayLimits, seen: dict[str, Action]
) -> DealLog:
    """One ``[[deals]]`` table; ``seen`` holds the actions of the file parsed so far, by text."""
    path: Path_ = ("deals", index)
    table = reader.table(raw, path, _DEAL_KEYS, "[[deals]]")
    number = reader.int_(table, "number", path, minimum=1)
    code = _read_code(reader, table, path)
    hands = _read_hands(reader, table["hands"], path, players) if "hands" in table else ()
    if not code and not hands:
        raise reader.fail(path, "a deal needs its code or its hands (or both)")
    previous_winner = None
    if "previous_winner" in table:
        previous_winner = reader.seat(table["previous_winner"], (*path, "previous_winner"), players)
    raw_empty = table.get("empty_seats", [])
    if not isinstance(raw_empty, list):
        raise reader.fail((*path, "empty_seats"), 'empty_seats must be a list of seats, e.g. ["p3"]')
    empty = {reader.seat(seat, (*path, "empty_seats", i), players) for i, seat in enumerate(raw_empty)}
    actions = _read_actions(reader, table.get("actions", []), path, players, limits, seen)
    result = _read_deal_result(reader, table["result"], (*path, "result"), players) if "result" in table else None
    return DealLog(
        number=number,
        code=code,
        hands=hands,
        previous_winner=previous_winner,
        empty_seats=tuple(sorted(empty)),
        comment=reader.str_(table, "comment", path, ""),
        actions=actions,
        result=result,
        chain=reader.str_(table, "chain", path, ""),
        line=reader.line(path),
    )


def _read_code(reader: _Reader, table: Mapping[str, Any], path: Path_) -> str:
    """A deal's code in its canonical text ("" when it has none)."""
    code = reader.str_(table, "code", path, "")
    if not code:
        return code
    from .. import DealCode, DealCodeError

    try:
        return str(DealCode.parse(code))
    except DealCodeError as exc:
        raise reader.fail((*path, "code"), str(exc)) from None


def _read_hands(reader: _Reader, raw_hands: Any, path: Path_, players: int) -> tuple[str, ...]:
    """A deal's hands, each in its canonical text."""
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
    return tuple(canonical)


def _read_actions(
    reader: _Reader, raw_actions: Any, path: Path_, players: int, limits: ReplayLimits, seen: dict[str, Action]
) -> tuple[Action, ...]:
    """A deal's actions, each with its line; a text met before in the file is parsed once."""
    if not isinstance(raw_actions, list):
        raise reader.fail((*path, "actions"), "actions must be a list of strings, one action per line")
    actions = []
    first = reader.where.get((*path, "actions", "["))  # one action a line: the line is first + i
    for i, text in enumerate(raw_actions):
        line = first + i if first is not None else reader.line((*path, "actions", i))
        c = seen.get(text) if isinstance(text, str) else None
        if c is None:  # a text not met before in this file: checked, then parsed
            c = seen[text] = _new_action(text, i, players, limits, len(seen), line)
        actions.append(c if c.line == line else _at_line(c, line))
    return tuple(actions)


def _new_action(text: Any, i: int, players: int, limits: ReplayLimits, seen: int, line: int) -> Action:
    """Action ``i`` of a deal, a text not met before in the file (``seen`` texts were)."""
    if not isinstance(text, str):
        raise ReplayFormatError(f'action {i + 1} must be a string such as "p1 3D", not {_toml_type(text)}', line)
    if len(text) > limits.action_chars and len(text.partition("#")[0]) > limits.action_chars:
        raise ReplayFormatError(
            f"action {i + 1} has more than {limits.action_chars} characters before its comment", line
        )
    if seen >= limits.action_texts:
        raise ReplayFormatError(f"more than {limits.action_texts} different action texts in the file", line)
    return parse_action(text, players, line)


def _read_deal_result(reader: _Reader, raw: Any, path: Path_, players: int) -> DealResult:
    """A deal's ``[deals.result]`` table."""
    table = reader.table(raw, path, ("winner", "by_dragon", *_RESULT_ARRAYS), "[deals.result]")
    if "winner" not in table:
        raise reader.fail(path, "missing 'winner'")
    winner = reader.seat(table["winner"], (*path, "winner"), players)
    by_dragon = table.get("by_dragon", False)
    if not isinstance(by_dragon, bool):
        raise reader.fail((*path, "by_dragon"), "by_dragon must be true or false")
    columns = [reader.ints(table, name, path, players) for name in _RESULT_ARRAYS]
    seats = tuple(SeatResult(seat, *(column[seat] for column in columns)) for seat in range(players))
    return DealResult(winner, seats, by_dragon, line=reader.line(path))
