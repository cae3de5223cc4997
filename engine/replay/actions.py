"""One action line of a replay file (``"p2 9H refused does-not-beat"``) read into an
:class:`~.model.Action`: lenient about spelling (unicode suits, ``10``, glued cards, any case),
strict about structure, and cached, since a match repeats the same few hundred texts.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

from .. import ALL_CARDS, BadCardError, Card, Suit
from ..cache import BoundedCache
from .model import Action, ActionKind, ReplayFormatError, SeatInfo, _at_line
from .validate import REASONS, not_a_seat, only_a_pass_is_automatic, quoted, unknown_reason

_ACTION_TAGS = ("auto", "timeout", "refused")

_CARD_ORDER = {str(card): card.index for card in ALL_CARDS}
_SPELLINGS: BoundedCache[str, str] = BoundedCache("engine.replay.card_spellings", 4096)
"""Each card spelling met so far (``3♦``, ``3d``, ``10D``...) to its canonical text: the engine
accepts a bounded set of spellings, so this stays small, and reading a move's cards is then a
lookup per card in C (a spelling not in it yet is read once by ``Card.parse``)."""
for _text in _CARD_ORDER:
    _SPELLINGS.put(_text, _text)


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
        texts[index] = _SPELLINGS.put(token, str(card))
    return tuple(sorted(texts, key=_CARD_ORDER.__getitem__)), ""  # type: ignore[arg-type]


_ACTION_CACHE: BoundedCache[tuple[str, int], Action] = BoundedCache("engine.replay.actions", 50_000)
"""Parsed action texts (with line 0), by text and table size: a match repeats the same few
thousand texts, and a bulk audit reads many matches in one process."""
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
        if len(text) <= _ACTION_CACHE_TEXT:
            _ACTION_CACHE.put(key, c)
        return c
    return c if c.line == line else _at_line(c, line)


def _parse_action(text: str, players: int, line: int) -> Action:
    body, hash_mark, comment = text.partition("#")
    comment = comment.strip() if hash_mark else ""
    tokens = body.split()
    if not tokens:
        raise ReplayFormatError(f'empty action {quoted(text)}: write the actor then the move, e.g. "p1 3D"', line)
    seat = _actor(text, tokens[0], players, line)
    rest = tokens[1:]
    if not rest:
        raise ReplayFormatError(f"action {quoted(text)} names no move (cards, pass, left or taken)", line)
    word = rest[0].lower()
    if word in ("left", "leaves"):
        if len(rest) > 1:
            raise ReplayFormatError(f"action {quoted(text)}: nothing may follow 'left'", line)
        return Action(seat, ActionKind.LEAVE, comment=comment, line=line)
    if word in ("taken", "takes"):
        return Action(seat, ActionKind.TAKE, taker=_taker(text, rest, line), comment=comment, line=line)
    return _move(text, seat, rest, comment, line)


def _actor(text: str, token: str, players: int, line: int) -> int:
    """The engine seat of an action's first word (``p1`` is seat 0)."""
    actor = token.lower()
    if not (actor.startswith("p") and actor[1:].isdigit()):
        raise ReplayFormatError(f"action {quoted(text)} does not start with its actor (p1 .. p{players})", line)
    seat = int(actor[1:]) - 1
    if not 0 <= seat < players:
        raise ReplayFormatError(not_a_seat(text, token, players), line)
    return seat


def _taker(text: str, rest: Sequence[str], line: int) -> SeatInfo:
    """Who takes a seat over: ``taken human NAME`` or ``taken bot:LEVEL NAME``."""
    if len(rest) < 2:
        raise ReplayFormatError(f"action {quoted(text)}: write 'taken human NAME' or 'taken bot:LEVEL NAME'", line)
    kind, _, level_text = rest[1].lower().partition(":")
    if kind not in ("human", "bot"):
        raise ReplayFormatError(f"action {quoted(text)}: the taker is 'human' or 'bot[:LEVEL]', not {rest[1]!r}", line)
    level: int | str | None = None
    if level_text:
        level = int(level_text) if level_text.isdigit() else level_text
    return SeatInfo(" ".join(rest[2:]), kind, level)


def _move(text: str, seat: int, rest: Sequence[str], comment: str, line: int) -> Action:
    """A play or a pass: cards or ``pass``, then at most ``auto``, ``timeout`` and ``refused REASON``."""
    lowered = list(map(str.lower, rest))
    index = min((lowered.index(tag) for tag in _ACTION_TAGS if tag in lowered), default=len(rest))
    move_tokens = rest[:index]
    if len(rest) - index > 4:
        raise ReplayFormatError(
            f"action {quoted(text)}: too many words after the move (the tags are auto, timeout, refused REASON)",
            line,
        )
    auto, timeout, refused = _tags(text, rest[index:], line)
    if not move_tokens:
        raise ReplayFormatError(f"action {quoted(text)} names no move (cards or pass)", line)
    if len(move_tokens) == 1 and move_tokens[0].lower() == "pass":
        return Action(seat, ActionKind.PASS, (), auto, timeout, refused, comment, line=line)
    if auto:
        raise ReplayFormatError(only_a_pass_is_automatic(text), line)
    cards, error = _canonical_cards(_card_tokens(" ".join(move_tokens)), raw_ok=bool(refused))
    if error:
        raise ReplayFormatError(f"action {quoted(text)}: {error}", line)
    return Action(seat, ActionKind.PLAY, cards, False, timeout, refused, comment, line=line)


def _tags(text: str, tags: Sequence[str], line: int) -> tuple[bool, bool, str]:
    """(auto, timeout, refusal reason) of the words after a move."""
    auto = timeout = False
    refused = ""
    index = 0
    while index < len(tags):
        tag = tags[index].lower()
        if tag == "auto":
            auto = True
        elif tag == "timeout":
            timeout = True
        elif tag == "refused":
            if index + 1 >= len(tags):
                raise ReplayFormatError(
                    f"action {quoted(text)}: 'refused' needs its reason, e.g. refused does-not-beat", line
                )
            refused = tags[index + 1].lower()
            if refused not in REASONS:
                raise ReplayFormatError(unknown_reason(text, tags[index + 1]), line)
            index += 1
        else:
            raise ReplayFormatError(f"action {quoted(text)}: unexpected {tags[index]!r} after the tags", line)
        index += 1
    return auto, timeout, refused


def _canonical_hand(text: str) -> str:
    cards, error = _canonical_cards(_card_tokens(text), raw_ok=False)
    if error:
        raise ValueError(error)
    if len(set(cards)) != len(cards):
        raise ValueError(f"a card is listed twice in {text!r}")
    return " ".join(cards)
