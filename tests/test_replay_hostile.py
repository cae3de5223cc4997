"""Hostile replay texts (issue 13): whatever text reaches ``loads`` (an AuditLog request holds any),
reading it ends in a log or in a ``ReplayFormatError`` with a plain sentence, never in another
exception, and its memory is bounded. Its CPU time is measured by
``python -m bigtwo.tools.hostile_bench``, not asserted here."""

from __future__ import annotations

import contextlib
import random
import tomllib
import tracemalloc
from pathlib import Path

import pytest
from bigtwo.client.replay_files import read_replay
from bigtwo.engine.cards import split_card_text
from bigtwo.engine.replay import GameLog, ReplayFormatError, VerdictKind, audit_text, dumps, loads
from bigtwo.engine.replay.actions import _card_tokens, parse_action
from bigtwo.engine.replay.general import scan
from bigtwo.engine.replay.layout import try_layout
from bigtwo.engine.replay.limits import ReplayLimits
from bigtwo.engine.replay.model import Action, ActionKind, _at_line
from bigtwo.tools.hostile_bench import BUDGET_BYTES, hostile_texts, largest_valid, sample_match
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GOLDEN = Path(__file__).parent / "golden"
LIMITS = ReplayLimits()
SIZE = 1 << 18
"""Large enough for every hostile shape to show (the cheap checks see the same text at 1 MiB)."""

VALID = frozenset(
    {
        "blank-lines-at-the-limit",
        "comment-lines-at-the-limit",
        "long-lines-at-the-limit",
        "many-actions",
        "distinct-actions",
        "distinct-glued-cards",
        "distinct-spellings",
    }
)
"""The texts of the table that are valid replay files, at the limits: they must still be read."""


@pytest.fixture(scope="module")
def match() -> str:
    return sample_match(2)


@pytest.fixture(scope="module")
def hostile(match: str) -> dict[str, str]:
    return hostile_texts(SIZE, match, LIMITS)


@pytest.fixture(scope="module")
def big() -> str:
    """The longest valid match the default limits read (over 100 deals)."""
    return largest_valid(LIMITS)


def _golden() -> list[str]:
    return [path.read_text(encoding="utf-8") for path in sorted(GOLDEN.glob("*.toml"))]


def _refusal(text: str) -> ReplayFormatError:
    with pytest.raises(ReplayFormatError) as info:
        loads(text)
    return info.value


def _readable(error: ReplayFormatError) -> None:
    """A sentence a person can read: short, about the text, with no Python internals in it."""
    message = str(error)
    assert 10 < len(message) < 400, message
    for internal in ("Traceback", "Error(", "sys.set_int_max_str_digits", "recursion", "object at 0x"):
        assert internal not in message, message


def test_the_table_names_every_kind_of_hostile_text(hostile: dict[str, str]) -> None:
    assert hostile.keys() >= VALID
    assert {"dotted-key", "nested-arrays", "nested-inline-tables", "integer-100000-digits"} <= hostile.keys()
    assert len(hostile) >= 60


def test_each_hostile_text_ends_in_a_sentence_or_a_log(hostile: dict[str, str]) -> None:
    for name, text in hostile.items():
        if name in VALID:
            assert isinstance(loads(text), GameLog), name
            continue
        error = _refusal(text)
        _readable(error)
        whole_text = error.message.startswith(("the text", "the file"))
        assert error.line >= 1 or whole_text, (name, str(error))


@pytest.mark.parametrize(
    ("text", "words", "line"),
    [
        ("a" + ".a" * 12_000 + " = 1", "longer than 4096 characters", 1),  # quadratic in tomllib
        ("a" + ".a" * 1000 + " = 1", "more than 4 parts", 1),
        ('format = "bigtwo-replay/1"\n["a"."b"."c"."d"."e"]\n', "more than 4 parts", 2),
        ("a = " + "[" * 1000 + "]" * 1000, "nested more than 4 deep", 1),  # RecursionError in json and tomllib
        ("a = " + "{a=" * 400 + "1" + "}" * 400, "nested more than 4 deep", 1),
        ("a = [\n" + "[\n" * 1000 + "]\n" * 1000 + "]\n", "nested more than 4 deep", 5),
        ("x = " + "1" * 100_000, "longer than 4096 characters", 1),  # Python's own int limit message
        ("x = " + "1" * 4000, "more than 20 digits", 1),
        ("x = [\n  " + "1" * 4000 + ",\n]\n", "more than 20 digits", 2),
        ("x=-" + "1" * 30, "more than 20 digits", 1),
        ("x = 0b" + "1" * 64, "more than 20 digits", 1),
        ('s = "' + "x" * 3000 + '"', "string of more than 2048", 1),
        ('s = """' + "x\n" * 3000 + '"""', "string of more than 2048", 1),
        ("k" * 65 + " = 1", "key of more than 64", 1),
        ('s = "abc\n', "not closed", 1),
        ("s = 'abc\n", "not closed", 1),
        ('s = """abc\n\n', "not closed", 1),
        ("a = [1, 2,\n3,\n", "not closed", 3),
        ("a = {b = 1", "not closed", 1),
        ("a = ]", "closes nothing", 1),
        ("é = 1", "unexpected character", 1),
        ("a = 1\n\x00", "control character (U+0000)", 2),
        ('a = "\x1b[31m"', "control character (U+001B)", 1),
        ("a = 1\rb = 2", "carriage return", 1),
        ("a = 1\n# \ud800\n", "U+D800 (a lone surrogate)", 2),
        ('a = "\\uD800"', "not a Unicode scalar value", 1),
        ("\n" * (1 << 15), "lines", 0),
        ("#" * 5000, "longer than 4096 characters", 1),
        ("x" * ((1 << 20) + 1), "at most 1048576 bytes", 0),
        ("é" * ((1 << 19) + 1), "bytes in UTF-8", 0),
        ('format = "bigtwo-replay/1"\nformat = "bigtwo-replay/1"\n', "Cannot overwrite a value", 2),
        ('format = "bigtwo-replay/1"\n[ruleset]\n[ruleset]\n', "Cannot declare", 3),
        ("[[deals]]\nnumber = 1\n" * 1030, "more than 1024 table headers", 2049),
        ("".join(f"k{i} = {i}\n" for i in range(4100)), "more than 4096 keys", 4097),
    ],
)
def test_hostile_text_is_refused_with_a_sentence(text: str, words: str, line: int) -> None:
    error = _refusal(text)
    assert words in str(error)
    assert error.line == line
    _readable(error)


def test_structure_limits_hold_in_both_layouts(match: str) -> None:
    """The canonical reader and the scan before tomllib refuse the same things over the limits."""
    actions = "".join(f'  "p1 pass # {i}",\n' for i in range(LIMITS.action_texts + 1))
    canonical = match.replace("actions = [\n", "actions = [\n" + actions, 1)
    assert "more than 1024 different action texts" in str(_refusal(canonical))
    items = match.replace("actions = [\n", "actions = [\n" + '  "p1 pass",\n' * LIMITS.items, 1)
    assert "more than 12288 array elements" in str(_refusal(items))
    general = "a = [" + "1,\n" * (LIMITS.items + 1) + "]\n"
    assert try_layout(general) is None
    assert "array elements" in str(_refusal(general)) or "laid out" in str(_refusal(general))
    small = ReplayLimits(items=10, general_bytes=1 << 20)
    with pytest.raises(ReplayFormatError, match="more than 10 array elements"):
        loads("a = [" + "1,\n" * 11 + "]\n", small)
    long_action = match.replace("actions = [\n", 'actions = [\n  "p1 ' + "3D " * 60 + '",\n', 1)
    assert "more than 128 characters before its comment" in str(_refusal(long_action))


def test_other_layouts_are_read_up_to_their_own_size(match: str, big: str) -> None:
    relaid = big.replace("number = ", "number=")
    error = _refusal(relaid)
    assert "laid out" in str(error)
    assert error.line == relaid[: relaid.index("number=")].count("\n") + 1
    small = match.replace("number = ", "number=")
    assert len(small) < LIMITS.general_bytes
    assert dumps(loads(small)) == dumps(loads(match))


def test_every_file_the_project_writes_still_loads(big: str) -> None:
    for text in _golden():
        assert dumps(loads(text)) == text
        assert dumps(loads(text.replace("\n", "\r\n"))) == text
        assert dumps(loads("\ufeff" + text)) == text
    hundred = sample_match(100)
    assert len(loads(hundred).deals) == 100
    assert big.count("[[deals]]") >= 100


def test_read_replay_refuses_a_file_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * ((1 << 20) + 10))
    with pytest.raises(ReplayFormatError, match="larger than 1048576 bytes"):
        read_replay(path)


def test_audit_text_passes_its_limits() -> None:
    verdict = audit_text("a = 1\n" * 10, limits=ReplayLimits(lines=5))
    assert verdict.kind is VerdictKind.FORMAT_ERROR
    assert "at most 5" in verdict.problems[0].message


def test_memory_stays_bounded(match: str, big: str, hostile: dict[str, str]) -> None:
    """tracemalloc's peak while reading the texts that build the most, at 1 MiB where they can be."""
    full = hostile_texts(1 << 20, match, LIMITS)
    texts = [big, full["distinct-glued-cards"], full["many-actions"], full["comment-lines-at-the-limit"]]
    texts.append(hostile["match-copied-to-1mib"])
    for text in texts:
        tracemalloc.start()
        try:
            with contextlib.suppress(ReplayFormatError):
                loads(text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < BUDGET_BYTES // 2, peak


# -- random and mutated texts ----------------------------------------------------------------------

TOML_PIECES = [
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    "=",
    " = ",
    ",",
    ".",
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\u",
    "\\uD800",
    "#",
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "\x00",
    "\ufeff",
    "\ud800",
    "é",
    "♦",
    "0x",
    "1e9",
    "inf",
    "nan",
    "true",
    "-",
    "9" * 25,
    "1979-05-27T07:32:00Z",
    "a",
    "p1",
    "pass",
    "refused",
    "deals",
    "actions",
    "result",
    "[[deals]]\n",
    "[deals.result]\n",
    'actions = [\n  "p1 3D",\n]\n',
]


def _only_format_errors(text: str) -> None:
    try:
        loads(text)
    except ReplayFormatError as exc:
        _readable(exc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_random_text_only_raises_format_errors(text: str) -> None:
    _only_format_errors(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOML_PIECES), max_size=60).map("".join))
def test_random_toml_pieces_only_raise_format_errors(text: str) -> None:
    _only_format_errors(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(_golden()),
    st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(TOML_PIECES), st.integers(1, 2000)),
        min_size=1,
        max_size=6,
    ),
)
def test_mutated_golden_files_only_raise_format_errors(text: str, edits: list[tuple[float, int, str, int]]) -> None:
    for where, cut, piece, times in edits:
        at = int(where * len(text))
        text = text[:at] + piece * times + text[at + cut :]
    _only_format_errors(text)


def test_seeded_mutations_of_a_big_match_only_raise_format_errors(big: str) -> None:
    rng = random.Random(13)
    for _ in range(15):
        text = big
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice(TOML_PIECES) * rng.choice((1, 3, 100)) + text[at + rng.randrange(8) :]
        _only_format_errors(text)


# -- the pieces agree with what they stand in for ---------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="3TtJ10AaDdSsHhCc♦♣♥♠♢♧♡♤ ,\t\xa0x9-", max_size=24))
def test_card_tokens_cut_like_the_engine(text: str) -> None:
    assert _card_tokens(text) == split_card_text(text)


def test_an_action_at_a_line_is_an_ordinary_action() -> None:
    action = parse_action("p2 3d 3♦ # note", 4, 5)
    moved = _at_line(action, 9)
    assert type(moved) is Action and moved == action and hash(moved) == hash(action)
    assert moved.line == 9 and action.line == 5 and moved.text() == "p2 3D 3D # note"
    assert moved.kind is ActionKind.PLAY and moved.cards == ("3D", "3D")
    with pytest.raises(AttributeError):
        moved.line = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        'a = { b = 1, c = [1, 2], d = { e = "]" } }\n',
        "a.b.c = 1\n[x.y]\nz = 'lit[eral' # comment with [ and \" and '''\n",
        's = """\nmulti " "" line [\n"""\nt = \'\'\'raw \\ [ \'\'\'\n',
        's = """a\\\n  b""""\n',
        "[[arr.ay]]\nk = 1\n[[arr.ay]]\nk = 2\n",
        "d = 1979-05-27 07:32:00\nf = [1.5, -0.0, inf, nan, +1e3]\nh = 0xff_ff\n",
        "\"quoted key\" = 1\n'lit key'.x = 2\n",
        "a = [\n  [1, 2],\n  [3, [4]],\n]\n",
    ],
)
def test_the_scan_passes_valid_toml_within_the_limits(text: str) -> None:
    tomllib.loads(text)
    scan(text, LIMITS)
    assert "unknown key" in str(_refusal(text))
