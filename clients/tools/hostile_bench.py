"""What a hostile replay text costs to read: ``python -m bigtwo.tools.hostile_bench``.

Builds each text of :data:`HOSTILE` at about the size limit (1 MiB), then for each prints the CPU
time of :func:`~bigtwo.engine.replay.format.loads` (the best of ``--repeats`` runs), the peak of the
memory it allocated (tracemalloc, in a run of its own since tracing slows everything down), and
how the reading ended. Every text must end in a ``ReplayFormatError`` (or, for the valid ones,
in a log) within the budget of one hostile request (docs/SECURITY.md): 100 ms of CPU and 50 MB
(AuditLog reads a text once, with the service's limits, which are these defaults). The exit
status is 1 when a text ends in any other exception or is over the budget. CPU times vary with
the machine's load: the figures printed come with the load average.

The same builders make the table of ``tests/test_replay_hostile.py`` at smaller sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import tracemalloc
from collections.abc import Callable

from bigtwo.engine.replay.format import ReplayFormatError, loads
from bigtwo.engine.replay.limits import ReplayLimits
from bigtwo.tools.sample_matches import random_match_text

BUDGET_MS = 100.0
BUDGET_BYTES = 50 * 1000 * 1000
SIZE = 1 << 20


def sample_match(deals: int, seed: int = 7) -> str:
    """The canonical text of a signed classic match of ``deals`` deals played by a seeded random
    policy with a refused attempt now and then (the shape of every file the project writes)."""
    return random_match_text(deals, seed, f"sample match of {deals} deals", b"hostile-bench-key")


def _fill(head: str, unit: str, size: int, tail: str = "") -> str:
    """``head``, then ``unit`` repeated, then ``tail``: about ``size`` characters."""
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def _numbered(template: str, size: int) -> str:
    """Lines from ``template`` (with ``{i}``), each different, up to about ``size`` characters."""
    lines: list[str] = []
    total = 0
    i = 0
    while total < size:
        line = template.format(i=i)
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


def _repeat_deals(match: str, size: int) -> str:
    """A valid match text whose deals are copied until it is about ``size`` characters."""
    head, sep, rest = match.partition("[[deals]]")
    body, _, _ = rest.partition("\n[result]")
    block = sep + body
    return head + block * max(1, (size - len(head)) // len(block))


def _actions(lines: str, match: str) -> str:
    """``match`` with ``lines`` inserted at the top of its first deal's actions."""
    return match.replace("actions = [\n", "actions = [\n" + lines, 1)


def hostile_texts(size: int = SIZE, match: str | None = None, limits: ReplayLimits | None = None) -> dict[str, str]:
    """Each hostile text, by name: those of the issue and their kin at about ``size`` characters,
    and others built to pass the cheap checks of ``limits`` and reach as far into the reader as
    they can. ``match`` is a valid canonical text to edit (by default a sample of 2 deals)."""
    limits = limits or ReplayLimits()
    base = match if match is not None else sample_match(2)
    big_line = min(size - 16, limits.line_chars - 96)
    many = max(1, min(size // 14, limits.items - base.count("\n")))  # array elements that still fit
    lines = max(1, min(size // 32, limits.lines - base.count("\n") - 8))
    distinct = limits.action_texts - 64
    cards = "3♦" * ((limits.action_chars - 40) // 2)
    builders: dict[str, Callable[[], str]] = {
        # the three shapes that once made a TOML parser slow or deep
        "dotted-key": lambda: _fill("a", ".a", size, " = 1"),
        "nested-arrays": lambda: "a = " + "[" * (size // 2 - 4) + "]" * (size // 2 - 4),
        "nested-inline-tables": lambda: "a = " + "{a=" * (size // 4) + "1" + "}" * (size // 4),
        "integer-100000-digits": lambda: "x = " + "9" * min(size, 100_000),
        # structure
        "dotted-keys-on-lines": lambda: _fill("", "a.b.c.d.e.f.g.h = 1\n", size),
        "dotted-table-header": lambda: _fill("[", "a.", size, "a]\nb = 1\n"),
        "quoted-dotted-header": lambda: _fill("[", '"a".', size, '"a"]\n'),
        "open-brackets": lambda: "[" * size,
        "arrays-nested-on-lines": lambda: _fill("a = ", "[\n", size),
        "unterminated-array": lambda: _fill("a = [", "1,\n", size),
        "unterminated-inline-table": lambda: _fill("a = {", "b = 1, ", big_line),
        "huge-inline-array": lambda: _fill("a = [", "1,", size, "]"),
        "huge-inline-array-lines": lambda: _fill("a = [\n", "  1,\n", size, "]\n"),
        "huge-array-of-strings": lambda: _fill("a = [\n", '  "p1 pass",\n', size, "]\n"),
        "many-keys": lambda: _numbered("k{i} = {i}\n", size),
        "many-keys-general": lambda: _numbered("k{i}={i}\n", size),
        "many-tables": lambda: _numbered("[t{i}]\n", size),
        "many-array-tables": lambda: _fill('[ruleset]\npreset = "classic"\n', "[[deals]]\n", size),
        "duplicate-keys": lambda: _fill("", "a = 1\n", size),
        "duplicate-tables": lambda: _fill("", "[ruleset]\n", size),
        # values
        "integers-4000-digits": lambda: _numbered("k{i} = " + "9" * big_line + "\n", size),
        "integers-in-arrays": lambda: _fill("a = [\n", "  " + "9" * big_line + ",\n", size, "]\n"),
        "odd-numbers": lambda: _fill("x = 0x", "f", big_line) + "\ny = 1" + "_0" * (big_line // 2 - 4) + "\n",
        "long-string": lambda: _fill('s = "', "x", size, '"'),
        "long-strings-on-lines": lambda: _numbered('k{i} = "' + "x" * big_line + '"\n', size),
        "unterminated-string": lambda: _fill('s = "', "x", size),
        "unterminated-strings-on-lines": lambda: _numbered('k{i} = "' + "x" * 60 + "\n", size),
        "multiline-string": lambda: _fill('s = """', "x\n", size, '"""'),
        "line-continuations": lambda: _fill('s = """', "\\\n", size, '"""'),
        "unterminated-multiline": lambda: _fill('s = """', 'x"\n', size),
        "escapes": lambda: _fill('s = "', "\\n", big_line, '"'),
        "surrogate-escapes": lambda: 's = "\\uD800"\n' + base,
        "quotes-flood": lambda: '"' * big_line + "\n" + "'" * big_line,
        # characters
        "nul-bytes": lambda: "\x00" * size,
        "nul-in-a-string": lambda: base.replace('comment = "', 'comment = "\x00', 1),
        "lone-surrogate": lambda: base + "# \ud800\n",
        "boms": lambda: "\ufeff" * (size // 3),
        "bom-then-garbage": lambda: "\ufeff" + _fill("", "= = =\n", size),
        "crlf-only": lambda: "\r\n" * (size // 2),
        "lone-carriage-returns": lambda: "\r" * size,
        "long-comment-line": lambda: _fill("#", "x", size),
        "blank-lines": lambda: "\n" * size,
        "unicode-outside-strings": lambda: _fill("", "é = 1\n", size),
        # real files bent out of shape
        "match-copied-to-1mib": lambda: _repeat_deals(base, size),
        "trailing-comment-in-big-match": lambda: _repeat_deals(base, size // 4) + "over = true # note\n",
        "match-with-error-at-the-end": lambda: _repeat_deals(base, size // 4) + "\n[result]\ndeals = x\n",
        "long-hands": lambda: base.replace("hands = [\n", "hands = [\n" + '  "' + "3D" * 1000 + '",\n', 1),
        "long-ruleset-value": lambda: base.replace("[ruleset]\n", '[ruleset]\nstraights = "' + "x" * 2000 + '"\n', 1),
        # at the limits: past the cheap checks, as deep into the reader as the limits let them
        "match-at-the-line-limit": lambda: _repeat_deals(base, min(size, limits.lines * 14)),
        "blank-lines-at-the-limit": lambda: "\n" * lines + base,
        "comment-lines-at-the-limit": lambda: _fill("", "# " + "x" * 28 + "\n", min(size, lines * 31)) + base,
        "long-lines-at-the-limit": lambda: _fill("", "# " + "x" * big_line + "\n", size // 2) + base,
        "many-actions": lambda: _actions('  "p1 pass",\n' * many, base),
        "distinct-actions": lambda: _actions(_numbered('  "p1 pass # note {i}",\n', distinct * 22), base),
        "distinct-glued-cards": lambda: _actions(
            _numbered('  "p1 ' + cards + '{i} refused does-not-beat",\n', distinct * (len(cards) + 30))
            + '  "p1 pass",\n' * (many - distinct),
            base,
        ),
        "distinct-garbage-words": lambda: _actions(
            _numbered('  "p1 ' + "x " * (len(cards) // 2) + '{i} refused does-not-beat",\n', distinct * 160),
            base,
        ),
        "distinct-spellings": lambda: _actions(
            _numbered('  "p2 ' + "10♢ j♣ Q♡ k♤ " * 6 + 'A{i} refused bad-card",\n', distinct * 90), base
        ),
        "many-keys-in-layout": lambda: _numbered("k{i} = {i}\n", limits.keys * 12)[: size // 2],
        "many-tables-in-layout": lambda: "[[deals]]\nnumber = 1\n" * (limits.tables - 8) + base,
        "long-strings-in-layout": lambda: _fill(
            'format = "bigtwo-replay/1"\nx = [\n', '  "' + "x" * limits.string_chars + '",\n', size // 2, "]\n"
        ),
        "integers-in-layout": lambda: _fill("a = [\n", "  " + "9" * limits.int_digits + ",\n", size // 4, "]\n"),
    }
    return {name: build() for name, build in builders.items()}


def general_texts(limits: ReplayLimits) -> dict[str, str]:
    """Texts outside the canonical layout at the size the general TOML parser reads, laid out so
    that each costs it the most per byte."""
    size = limits.general_bytes - 64
    return {
        "general-keys": _numbered("k{i}={i}\n", size),
        "general-int-array": _fill("a = [\n", "1," * 1000 + "\n", size, "]"),
        "general-string-array": _fill("a = [\n", '"",' * 600 + "\n", size, "]"),
        "general-escapes": "".join(f's{i} = "' + "\\n" * 1000 + '"\n' for i in range(size // 2010)),
        "general-basic-strings": "".join(f's{i} = "' + "x" * 2000 + '"\n' for i in range(size // 2010)),
        "general-inline-tables": _numbered("t{i} = {{a = 1, b = [1, 2]}}\n", size),
        "general-tables": _numbered("[t{i}]\na = 1\n", size),
        "general-match": _repeat_deals(sample_match(2), size).replace(" = ", "=", 1),
    }


def measure(text: str, *, repeats: int, limits: ReplayLimits) -> tuple[float, int, str]:
    """(best CPU milliseconds, peak traced bytes, outcome) of reading ``text``."""

    def read() -> str:
        try:
            log = loads(text, limits)
        except ReplayFormatError as exc:
            return f"ReplayFormatError: {exc}"
        except Exception as exc:  # reported, and the exit status says so
            return f"{type(exc).__name__}!: {exc}"
        return f"read: {len(log.deals)} deals"

    best = float("inf")
    outcome = ""
    for _ in range(repeats):
        started = time.process_time()
        outcome = read()
        best = min(best, time.process_time() - started)
    tracemalloc.start()
    try:
        read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best * 1000, peak, outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=SIZE, help="characters per text (default 1 MiB)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per text; the best CPU time counts")
    parser.add_argument("--only", metavar="NAME", action="append", help="only these texts")
    parser.add_argument("--json", action="store_true", help="one JSON line per text")
    args = parser.parse_args(argv)
    limits = ReplayLimits()
    texts = hostile_texts(min(args.size, SIZE - 4096), sample_match(2), limits)
    texts.update(general_texts(limits))
    texts["valid-match-at-the-limits"] = largest_valid(limits)
    failed = 0
    worst_ms = worst_peak = 0.0
    for name, text in texts.items():
        if args.only and name not in args.only:
            continue
        ms, peak, outcome = measure(text, repeats=args.repeats, limits=limits)
        ok = "!:" not in outcome and ms <= BUDGET_MS and peak <= BUDGET_BYTES
        failed += not ok
        worst_ms, worst_peak = max(worst_ms, ms), max(worst_peak, peak)
        if args.json:
            line = {"text": name, "bytes": len(text.encode("utf-8", "surrogatepass")), "cpu_ms": round(ms, 2)}
            line |= {"peak_mb": round(peak / 1e6, 2), "ok": ok, "outcome": outcome[:120]}
            print(json.dumps(line, ensure_ascii=False))
        else:
            mark = "" if ok else "  <-- OVER"
            print(f"{name:32} {len(text):>8} chars {ms:8.1f} ms {peak / 1e6:7.2f} MB  {outcome[:70]}{mark}")
    budget = f"budget {BUDGET_MS:.0f} ms, {BUDGET_BYTES / 1e6:.0f} MB"
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"worst: {worst_ms:.1f} ms of CPU, {worst_peak / 1e6:.2f} MB ({budget}); {failed} over; load average {load}")
    return 1 if failed else 0


def largest_valid(limits: ReplayLimits, most: int = 400) -> str:
    """The longest valid match text the limits read: the first deals of a match of ``most``."""
    head, *deals = sample_match(most).split("\n[[deals]]")
    low, high = 1, len(deals)
    while low < high:  # the most deals that still read
        middle = (low + high + 1) // 2
        try:
            loads("\n[[deals]]".join([head, *deals[:middle]]), limits)
        except ReplayFormatError:
            high = middle - 1
        else:
            low = middle
    return "\n[[deals]]".join([head, *deals[:low]])


if __name__ == "__main__":
    raise SystemExit(main())
