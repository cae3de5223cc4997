"""How large and how deeply built a replay text may be before it is parsed.

The replay format reads text from anywhere (files on disk, an AuditLog request), so its reader
checks the text against these limits first and refuses what is over them with a
:class:`~bigtwo.engine.replay.format.ReplayFormatError` naming the limit, before any parsing work.
The service's own table (``bigtwo.service.limits``) holds the instance it audits with.

Together they bound what one text can cost: every reader of the text is linear in its size, and
the work per element (an action becomes an object, a key a dictionary entry) is bounded by the
counts below, so a text at every limit at once is read in a bounded time and memory
(``python -m bigtwo.tools.hostile_bench`` measures it). The defaults read every replay file
this project writes, up to matches of about 115 deals.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReplayLimits:
    """Limits on one replay text (the defaults read every replay file this project writes)."""

    text_bytes: int = 1 << 20
    """Longest replay text in UTF-8 bytes: the service's message limit. A 100-deal match is
    about 160 kB."""

    lines: int = 1 << 15
    """Most lines: the writer writes one line per action, about 130 lines a deal with the deal's
    headers and blank lines, so this is twice what a match at the :attr:`items` limit needs."""

    line_chars: int = 4096
    """Longest line in characters: the longest lines the writer writes are comments and names,
    which :attr:`string_chars` bounds, written with escapes."""

    string_chars: int = 2048
    """Longest string value as written, escapes included: a comment is a note, a name a name; the
    longest value the format needs otherwise is an explicit straights ladder of about 200."""

    action_chars: int = 128
    """Longest action text before its ``#`` comment: ``p1``, a play of 18 cards written ``10♦``
    (72 characters), ``timeout`` and the longest refusal reason make 117. Reading a move costs
    interpreted work per card, so this bounds the work per action."""

    action_texts: int = 1024
    """Most different action texts in one file: each is parsed in full, every repetition is a
    lookup. Plays recur: a 100-deal match has about 600 different ones, a 250-deal match fewer than
    1,000."""

    depth: int = 4
    """Deepest nesting of arrays and inline tables: the format needs one level (a list of
    strings); a hand-written file may write a table inline, ``seats = [{...}]``, which is two.
    The general TOML parser recurses once per level."""

    key_chars: int = 64
    """Longest key, or part of a dotted key, in characters: the longest key the format knows is
    17 characters."""

    key_parts: int = 4
    """Most parts in one dotted key or table header: the format's deepest is ``[deals.result]``
    (2). The general TOML parser does work proportional to the square of this number."""

    keys: int = 4096
    """Most ``key = value`` pairs: a deal has at most 16 (with its result's), so a match at the
    :attr:`items` limit has about 2,000."""

    tables: int = 1024
    """Most table headers (``[ruleset]``, ``[[seats]]``, ``[[deals]]``, ``[deals.result]``...):
    two a deal, so room for a few hundred deals."""

    items: int = 12_288
    """Most array elements in the whole text: a deal has about 105 (its actions and hands, one a
    line, and its result's six columns of one number a seat), so this reads a match of about 115
    deals. Each element becomes a Python object with its line number, which is most of the cost of
    reading a large text; the service audits at most 20,000 actions in any case."""

    int_digits: int = 20
    """Most digits in one number: a 64-bit integer (TOML's range) has 19. Python itself refuses to
    read integers of more than 4,300 digits, with a message that names none of this."""

    general_bytes: int = 12 << 10
    """Longest text read by the general TOML parser. A text laid out as the writer writes (one
    header, ``key = value`` or list element a line; comments, blank lines and edited values
    allowed) is read line by line by the format's own reader, mostly in C; any other layout falls
    back to ``tomllib`` and a second pass that finds each value's line, which together cost up to
    several microseconds a byte (an array of small numbers is the worst). A hand-written file of
    two or three deals fits."""


DEFAULT_LIMITS = ReplayLimits()
"""The limits :func:`~bigtwo.engine.replay.reader.loads` checks when given none."""

__all__ = ["DEFAULT_LIMITS", "ReplayLimits"]
