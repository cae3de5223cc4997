"""The ``bigtwo replay`` and ``bigtwo audit`` subcommands (registered by :mod:`bigtwo.cli.main`)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bigtwo.client.replay_files import read_replay
from bigtwo.engine.replay.audit import VerdictKind, audit_log, audit_text
from bigtwo.engine.replay.format import ReplayFormatError

REPORT_FORMAT = "bigtwo-audit-report/1"


def load_key(path: str | Path) -> bytes:
    """A signing key file: its bytes, trailing whitespace (a final newline) removed."""
    from .errors import UsageError

    key = Path(path).read_bytes().rstrip()
    if not key:
        raise UsageError(f"--key {path}: the key file is empty; give the file the replays were signed with.")
    return key


def add_parsers(sub: Any) -> None:
    from .arguments import non_negative_int, output_file, positive_int, readable_file

    replay = sub.add_parser(
        "replay",
        help="show a replay file trick by trick (or write it as an HTML page)",
        description="Re-run a replay file through the engine and show it trick by trick, with refusals, "
        "settlement cards and match totals. Exit status 1 when the file does not check out.",
    )
    replay.add_argument("file", type=readable_file, help="a bigtwo-replay/1 TOML file")
    replay.add_argument(
        "--html", type=output_file, metavar="OUT.html", help="write one self-contained HTML page instead"
    )
    replay.add_argument(
        "--key", type=readable_file, metavar="FILE", help="signing key file to verify the signature with"
    )
    replay.add_argument("--width", type=positive_int, default=None, help="terminal width (default: detected)")
    replay.set_defaults(func=cmd_replay)

    audit = sub.add_parser(
        "audit",
        help="check replay files (thousands, or folders of them)",
        description="Audit replay files: re-run every deal, check results, hash chains and signatures. "
        "Exit status 1 when any file fails.",
    )
    audit.add_argument("paths", nargs="+", metavar="PATH", help="replay files or folders (searched for *.toml)")
    audit.add_argument(
        "--jobs", "-j", type=non_negative_int, default=1, help="worker processes (default 1; 0 = one per CPU)"
    )
    audit.add_argument(
        "--json", type=output_file, metavar="REPORT.json", help="write a JSON report ('-' for standard output)"
    )
    audit.add_argument(
        "--key", type=readable_file, metavar="FILE", help="signing key file: signatures are verified with it"
    )
    audit.add_argument("--require-signature", action="store_true", help="unsigned files fail")
    audit.add_argument("--quiet", "-q", action="store_true", help="no progress bar or table, only the summary line")
    audit.set_defaults(func=cmd_audit)


# -- bigtwo replay ---------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .errors import UsageError

    console = Console(width=args.width) if args.width else Console()
    try:
        log = read_replay(args.file)
    except ReplayFormatError as exc:
        raise UsageError(f"{args.file} is not a replay file bigtwo can read: {exc}") from None
    key = load_key(args.key) if args.key else None
    verdict = audit_log(log, key)
    if args.html:
        from bigtwo.engine.replay.html import render_html

        Path(args.html).write_text(
            render_html(log, verdict, title=f"Big Two replay · {Path(args.file).name}"), encoding="utf-8"
        )
        console.print(f"wrote {args.html} ({len(verdict.steps)} steps); {verdict.summary()}", highlight=False)
    else:
        from .render_terminal import render

        render(log, verdict, console)
    return 0 if verdict.ok else 1


# -- bigtwo audit ----------------------------------------------------------------------------------


def iter_replay_files(paths: Iterable[str]) -> Iterator[str]:
    """Files as given, folders searched recursively for ``*.toml`` (sorted: a stable order)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(str(p) for p in path.rglob("*.toml") if p.is_file())
            yield from found
        else:
            yield str(path)


_KEY: bytes | None = None
_REQUIRE = False


def _init_worker(key: bytes | None, require: bool) -> None:
    global _KEY, _REQUIRE
    _KEY, _REQUIRE = key, require


def audit_file(path: str) -> dict[str, Any]:
    """One file's line of the report."""
    try:
        raw = Path(path).read_bytes()
        text = raw.decode("utf-8-sig").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        message = exc.strerror if isinstance(exc, OSError) else "the file is not UTF-8 text"
        return {
            "path": path,
            "verdict": VerdictKind.FORMAT_ERROR.value,
            "ok": False,
            "message": message,
            "line": 0,
            "deal": 0,
            "index": -1,
            "reason": "",
            "signature": "unsigned",
            "deals": 0,
            "actions": 0,
        }
    verdict = audit_text(text, _KEY, require_signature=_REQUIRE)
    first = verdict.first
    return {
        "path": path,
        "verdict": verdict.kind.value,
        "ok": verdict.ok,
        "message": first.describe() if first else "",
        "line": first.line if first else 0,
        "deal": first.deal_number if first else 0,
        "index": first.index if first else -1,
        "reason": first.reason if first else "",
        "signature": verdict.signature.value,
        "deals": verdict.deals_checked,
        "actions": verdict.actions_checked,
    }


def run_audit(
    files: list[str], jobs: int, key: bytes | None, require: bool, progress: Any = None
) -> list[dict[str, Any]]:
    """Audit ``files`` with ``jobs`` processes; results in the order of ``files``."""
    results: list[dict[str, Any]] = []
    if jobs <= 1 or len(files) < 2:
        _init_worker(key, require)
        for path in files:
            results.append(audit_file(path))
            if progress:
                progress(1)
        return results
    chunk = max(1, min(64, len(files) // (jobs * 8)))
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    with context.Pool(jobs, initializer=_init_worker, initargs=(key, require)) as pool:
        for result in pool.imap(audit_file, files, chunksize=chunk):
            results.append(result)
            if progress:
                progress(1)
    return results


def build_report(results: list[dict[str, Any]], seconds: float, jobs: int) -> dict[str, Any]:
    kinds = Counter(result["verdict"] for result in results)
    return {
        "format": REPORT_FORMAT,
        "files": len(results),
        "valid": sum(1 for r in results if r["ok"]),
        "failed": sum(1 for r in results if not r["ok"]),
        "deals": sum(r["deals"] for r in results),
        "actions": sum(r["actions"] for r in results),
        "by_verdict": dict(sorted(kinds.items())),
        "signatures": dict(sorted(Counter(r["signature"] for r in results).items())),
        "seconds": round(seconds, 3),
        "jobs": jobs,
        "results": sorted(results, key=lambda r: r["path"]),
    }


def cmd_audit(args: argparse.Namespace) -> int:
    from rich.console import Console

    files = _files_to_audit(args.paths)
    key = load_key(args.key) if args.key else None
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    started = time.perf_counter()
    results = _audit_with_progress(args, files, jobs, key)
    seconds = time.perf_counter() - started
    report = build_report(results, seconds, jobs)
    out = Console(stderr=True) if args.json == "-" else Console()
    if not args.quiet:
        _print_summary(out, report)
    out.print(
        f"{report['files']} files, {report['deals']} deals, {report['actions']} actions: "
        f"{report['valid']} valid, {report['failed']} failed ({seconds:.2f} s, {jobs} process(es))",
        highlight=False,
    )
    if args.json:
        _write_report(args.json, report, out)
    return 1 if report["failed"] else 0


def _files_to_audit(paths: list[str]) -> list[str]:
    """The replay files given and in the folders given; at least one, every path there."""
    from .errors import UsageError

    files = list(iter_replay_files(paths))
    missing = [f for f in files if not Path(f).exists()]
    if missing:
        raise UsageError(f"{missing[0]}: no such file or folder. Give replay files or folders of them.")
    if not files:
        raise UsageError(f"no replay files (*.toml) in {', '.join(paths)}.")
    return files


def _audit_with_progress(
    args: argparse.Namespace, files: list[str], jobs: int, key: bytes | None
) -> list[dict[str, Any]]:
    """Audit ``files``; a progress bar on stderr unless ``--quiet``."""
    if args.quiet:
        return run_audit(files, jobs, key, args.require_signature)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("auditing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("audit", total=len(files))
        return run_audit(files, jobs, key, args.require_signature, progress=lambda n: bar.advance(task, n))


def _print_summary(out: Any, report: dict[str, Any]) -> None:
    """The verdict counts, and the first failures with what is wrong."""
    from rich.table import Table

    table = Table(title="Audit summary")
    table.add_column("verdict")
    table.add_column("files", justify="right")
    for kind, count in report["by_verdict"].items():
        table.add_row(f"[green]{kind}[/]" if kind == "valid" else f"[red]{kind}[/]", str(count))
    table.add_row("[bold]total[/]", f"[bold]{report['files']}[/]")
    out.print(table)
    failures = [r for r in report["results"] if not r["ok"]]
    if failures:
        fail_table = Table(title=f"Failures (first {min(20, len(failures))} of {len(failures)})")
        fail_table.add_column("file")
        fail_table.add_column("verdict")
        fail_table.add_column("what is wrong")
        for r in failures[:20]:
            fail_table.add_row(r["path"], r["verdict"], r["message"])
        out.print(fail_table)


def _write_report(where: str, report: dict[str, Any], out: Any) -> None:
    """The JSON report to standard output (``-``) or a file, and where it went."""
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if where == "-":
        sys.stdout.write(text)
        out.print("JSON report written to standard output", highlight=False)
    else:
        Path(where).write_text(text, encoding="utf-8")
        out.print(f"JSON report written to {Path(where).resolve()}", highlight=False, soft_wrap=True)
