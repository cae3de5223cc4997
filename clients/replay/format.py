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

from bigtwo.engine import ALL_CARDS, BadCardError, Card, Reason, Ruleset, RulesetError, SeatSettlement
from bigtwo.engine.cards import split_card_text

FORMAT_VERSION = "bigtwo-replay/1"
SIGNATURE_SCHEME = "hmac-sha256"
HEADER_COMMENT = (
    "# Big Two replay file (bigtwo-replay/1). p1..pN are the seats in play order; one action per line:\n"
    '# "pN <cards>" plays, "pN pass", "... auto" = auto-pass, "... timeout" = timed-out turn,\n'
    '# "... refused <reason>" = an attempt the rules refused. Check it with: bigtwo audit FILE\n'
)
_REASONS = frozenset(reason.value for reason in Reason)
_ACTION_TAGS = ("auto", "timeout", "refused")


class ReplayFormatError(ValueError):
    """A replay file that cannot be read; ``line`` (1-based, 0 when unknown) says where."""

    def __init__(self, message: str, line: int = 0) -> None:
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


def _canonical_cards(tokens: Sequence[str], raw_ok: bool) -> tuple[tuple[str, ...], str]:
    """(canonical card texts sorted by card, error) for a play's tokens."""
    if all(token in _CANONICAL_CARD for token in tokens):
        return tuple(sorted(tokens, key=lambda token: _CANONICAL_CARD[token].index)), ""
    cards: list[Card] = []
    for token in tokens:
        try:
            cards.append(Card.parse(token))
        except BadCardError as exc:
            if raw_ok:
                return tuple(tokens), ""
            return (), str(exc)
    cards.sort(key=lambda card: card.index)
    return tuple(str(card) for card in cards), ""


_ACTION_CACHE: dict[tuple[str, int], Action] = {}


def parse_action(text: str, players: int, line: int = 0) -> Action:
    """Parse one action line (lenient: unicode suits, ``10``, glued cards, any case)."""
    cached = _ACTION_CACHE.get((text, players))
    if cached is not None:
        if not line:
            return cached
        c = cached
        return Action(c.seat, c.kind, c.cards, c.auto, c.timeout, c.refused, c.comment, c.taker, line, c.canonical)
    action = _parse_action(text, players, line)
    action = replace(action, canonical=action.text())
    if len(_ACTION_CACHE) < 50_000:
        _ACTION_CACHE[(text, players)] = replace(action, line=0)
    return action


def _parse_action(text: str, players: int, line: int) -> Action:
    body, hash_mark, comment = text.partition("#")
    comment = comment.strip() if hash_mark else ""
    tokens = body.split()
    if not tokens:
        raise ReplayFormatError(f'empty action {text!r}: write the actor then the move, e.g. "p1 3D"', line)
    actor = tokens[0].lower()
    if not (actor.startswith("p") and actor[1:].isdigit()):
        raise ReplayFormatError(f"action {text!r} does not start with its actor (p1 .. p{players})", line)
    seat = int(actor[1:]) - 1
    if not 0 <= seat < players:
        raise ReplayFormatError(f"action {text!r}: {tokens[0]} is not a seat at this {players}-player table", line)
    rest = tokens[1:]
    if not rest:
        raise ReplayFormatError(f"action {text!r} names no move (cards, pass, left or taken)", line)
    word = rest[0].lower()
    if word in ("left", "leaves"):
        if len(rest) > 1:
            raise ReplayFormatError(f"action {text!r}: nothing may follow 'left'", line)
        return Action(seat, ActionKind.LEAVE, comment=comment, line=line)
    if word in ("taken", "takes"):
        if len(rest) < 2:
            raise ReplayFormatError(f"action {text!r}: write 'taken human NAME' or 'taken bot:LEVEL NAME'", line)
        label = rest[1].lower()
        kind, _, level_text = label.partition(":")
        if kind not in ("human", "bot"):
            raise ReplayFormatError(f"action {text!r}: the taker is 'human' or 'bot[:LEVEL]', not {rest[1]!r}", line)
        level: int | str | None = None
        if level_text:
            level = int(level_text) if level_text.isdigit() else level_text
        taker = SeatInfo(" ".join(rest[2:]), kind, level)
        return Action(seat, ActionKind.TAKE, taker=taker, comment=comment, line=line)
    # a move: cards or pass, then tags
    move_tokens: list[str] = []
    index = 0
    while index < len(rest) and rest[index].lower() not in _ACTION_TAGS:
        move_tokens.append(rest[index])
        index += 1
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
                    f"action {text!r}: 'refused' needs its reason, e.g. refused does-not-beat", line
                )
            refused = rest[index + 1].lower()
            if refused not in _REASONS:
                raise ReplayFormatError(
                    f"action {text!r}: {rest[index + 1]!r} is not a refusal reason; "
                    f"valid: {', '.join(sorted(_REASONS))}",
                    line,
                )
            index += 1
        else:
            raise ReplayFormatError(f"action {text!r}: unexpected {rest[index]!r} after the tags", line)
        index += 1
    if not move_tokens:
        raise ReplayFormatError(f"action {text!r} names no move (cards or pass)", line)
    if len(move_tokens) == 1 and move_tokens[0].lower() == "pass":
        return Action(seat, ActionKind.PASS, (), auto, timeout, refused, comment, line=line)
    if auto:
        raise ReplayFormatError(f"action {text!r}: only a pass can be automatic", line)
    card_tokens = [piece for token in move_tokens for piece in split_card_text(token)]
    cards, error = _canonical_cards(card_tokens, raw_ok=bool(refused))
    if error:
        raise ReplayFormatError(f"action {text!r}: {error}", line)
    return Action(seat, ActionKind.PLAY, cards, False, timeout, refused, comment, line=line)


def _canonical_hand(text: str) -> str:
    cards, error = _canonical_cards(split_card_text(text), raw_ok=False)
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


def _fast_value(text: str) -> Any:
    """A value as the canonical writer writes it (JSON-compatible TOML), or raise ValueError."""
    if text in ("true", "false"):
        return text == "true"
    if _INT.match(text):
        return int(text)
    first = text[:1]
    if first == '"' and text[-1] == '"' and text.count('"') == 2 and "\\" not in text and len(text) > 1:
        return text[1:-1]  # the common case: a plain string
    if "\\/" in text or first not in ('"', "["):
        raise ValueError(text)
    value = json.loads(text)
    if isinstance(value, list):
        if any(isinstance(v, (list, dict, float)) or v is None for v in value):
            raise ValueError(text)
    elif not isinstance(value, str):
        raise ValueError(text)
    return value


def _fast_parse(text: str) -> tuple[dict[str, Any], dict[Path_, int]] | None:
    """Parse the canonical subset of TOML the writer produces, with every line number; None when the
    text steps outside it (then the full TOML parser and :func:`locate` take over)."""
    data: dict[str, Any] = {}
    where: dict[Path_, int] = {}
    table: dict[str, Any] = data
    path: Path_ = ()
    lines = text.split("\n")
    count = len(lines)
    number = 0
    try:
        while number < count:
            line = lines[number].strip()
            number += 1
            if not line or line[0] == "#":
                continue
            if line[0] == "[":
                if line not in _HEADERS:
                    return None
                if line == "[[seats]]" or line == "[[deals]]":
                    name = line[2:-2]
                    items = data.setdefault(name, [])
                    if not isinstance(items, list):
                        return None
                    table = {}
                    items.append(table)
                    path = (name, len(items) - 1)
                elif line == "[deals.result]":
                    deals = data.get("deals")
                    if not deals or "result" in deals[-1]:
                        return None
                    table = deals[-1]["result"] = {}
                    path = ("deals", len(deals) - 1, "result")
                else:
                    name = line[1:-1]
                    if name in data:
                        return None
                    table = data[name] = {}
                    path = (name,)
                where[path] = number
                continue
            key, equals, value = line.partition(" = ")
            if not equals or not _BARE_KEY.match(key) or key in table:
                return None
            where[(*path, key)] = number
            if value == "[":
                items = []
                while True:
                    if number >= count:
                        return None
                    item = lines[number].strip()
                    number += 1
                    if item == "]":
                        break
                    if item[-1:] != ",":
                        return None
                    if not items:
                        where[(*path, key, "[")] = number
                    if item[0] == '"' and item[-2] == '"' and item.count('"') == 2 and "\\" not in item:
                        items.append(item[1:-2])  # the common case: a plain string
                        continue
                    element = _fast_value(item[:-1])
                    if isinstance(element, list):
                        return None
                    items.append(element)
                table[key] = items
            else:
                table[key] = _fast_value(value)
    except ValueError:
        return None
    return data, where


def loads(text: str) -> GameLog:
    """Parse a replay file's text. Raises :class:`ReplayFormatError` naming the line."""
    fast = _fast_parse(text)
    if fast is not None:
        data, where = fast
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            found = re.search(r"\(at line (\d+), column \d+\)", message)
            line = int(found.group(1)) if found else 0
            raise ReplayFormatError(f"not valid TOML: {message}", line) from None
        where = locate(text)
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
    deals = [_parse_deal(reader, raw, index, players) for index, raw in enumerate(raw_deals)]

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
    from bigtwo.engine import OPTION_NAMES

    return ("preset", "fingerprint", *OPTION_NAMES, *(name.replace("_", "-") for name in OPTION_NAMES))


def _parse_deal(reader: _Reader, raw: Any, index: int, players: int) -> DealLog:
    path: Path_ = ("deals", index)
    table = reader.table(raw, path, _DEAL_KEYS, "[[deals]]")
    number = reader.int_(table, "number", path, minimum=1)
    code = reader.str_(table, "code", path, "")
    if code:
        from bigtwo.engine import DealCode, DealCodeError

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
    for i, text in enumerate(raw_actions):
        line = reader.line((*path, "actions", i))
        if not isinstance(text, str):
            raise ReplayFormatError(f'action {i + 1} must be a string such as "p1 3D", not {_toml_type(text)}', line)
        actions.append(parse_action(text, players, line))
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


def read_replay(path: str | Path) -> GameLog:
    """Read and parse a replay file (UTF-8; a byte-order mark is accepted)."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ReplayFormatError("the file is not UTF-8 text", line) from None
    return loads(text.replace("\r\n", "\n"))


def write_replay(path: str | Path, log: GameLog) -> None:
    """Write the canonical text (UTF-8, ``\\n`` line ends: the same bytes on every machine)."""
    Path(path).write_bytes(dumps(log).encode("utf-8"))
