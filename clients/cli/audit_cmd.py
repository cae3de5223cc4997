"""The ``bigtwo audit`` subcommand (registered by :mod:`bigtwo.cli.main`): flags in, the audit
runner (:mod:`bigtwo.tools.audit_run`) over the sources it names, the summary and reports out."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from bigtwo.tools.audit_run import (
    AuditRow,
    AuditSettings,
    AuditTally,
    InProcess,
    JsonLinesReport,
    OnDask,
    ProcessPool,
    Runner,
    audit_rows,
    json_report,
)
from bigtwo.tools.cluster import DaskTarget, dask_client
from bigtwo.tools.replay_sources import ARCHIVE_SUFFIXES, SourceError, list_sources

from .errors import UsageError
from .replay_cmd import load_key


def dask_target(text: str) -> DaskTarget:
    try:
        return DaskTarget.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub: Any) -> None:
    from .arguments import non_negative_int, output_file, readable_file

    audit = sub.add_parser(
        "audit",
        help="check replay files, archives or folders of them, locally or on Dask",
        description="Audit replay files: re-run every deal, check results, hash chains and signatures. "
        f"Paths are replay files, tar archives of them ({', '.join(ARCHIVE_SUFFIXES)}), folders, or fsspec "
        "URLs (file://, s3://... with its package installed). Exit status 1 when any replay fails.",
    )
    audit.add_argument(
        "paths", nargs="+", metavar="PATH", help="replay files, archives, folders (searched for both) or URLs"
    )
    audit.add_argument(
        "--jobs", "-j", type=non_negative_int, default=1, help="worker processes (default 1; 0 = one per CPU)"
    )
    audit.add_argument(
        "--dask",
        type=dask_target,
        metavar="SPEC",
        help="run on Dask: local:N starts N local workers, tcp://HOST:PORT joins a running scheduler "
        "(needs pip install 'bigtwo[distributed]'; not with --jobs)",
    )
    audit.add_argument(
        "--json", type=output_file, metavar="REPORT.json", help="write a JSON report ('-' for standard output)"
    )
    audit.add_argument(
        "--jsonl",
        type=output_file,
        metavar="REPORT.jsonl",
        help="stream a row a line as replays are audited, then a summary line ('-' for standard output)",
    )
    audit.add_argument(
        "--key", type=readable_file, metavar="FILE", help="signing key file: signatures are verified with it"
    )
    audit.add_argument("--require-signature", action="store_true", help="unsigned files fail")
    audit.add_argument("--quiet", "-q", action="store_true", help="no progress bar or table, only the summary line")
    audit.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    from rich.console import Console

    if args.dask and args.jobs != 1:
        raise UsageError("--dask and --jobs are exclusive: on Dask the cluster's workers are the processes.")
    if args.json == "-" and args.jsonl == "-":
        raise UsageError("--json - and --jsonl - both want standard output; write one of them to a file.")
    try:
        names = list_sources(args.paths)
    except SourceError as exc:
        raise UsageError(str(exc)) from None
    settings = AuditSettings(load_key(args.key) if args.key else None, args.require_signature)
    out = Console(stderr=True) if "-" in (args.json, args.jsonl) else Console()
    tally = AuditTally()
    kept: list[AuditRow] | None = [] if args.json else None
    started = time.perf_counter()
    interrupted = False
    with _runner(args, len(names)) as runner, _jsonl_out(args.jsonl) as stream:
        jsonl = JsonLinesReport(stream) if stream is not None else None
        try:
            with _progress(args.quiet, len(names)) as advance:
                rows = audit_rows(names, settings, runner, progress=advance)
                for row in jsonl.rows(rows) if jsonl else rows:
                    tally.add(row)
                    if kept is not None:
                        kept.append(row)
        except KeyboardInterrupt:  # Ctrl-C: what was audited so far is still said
            interrupted = True
        seconds = time.perf_counter() - started
        if jsonl and not interrupted:
            jsonl.finish(tally, seconds, runner.processes, runner.describe())
    if not args.quiet:
        _print_summary(out, tally)
    out.print(
        f"{_count(tally.files, 'file')}, {_count(tally.deals, 'deal')}, {_count(tally.actions, 'action')}: "
        f"{tally.valid} valid, {tally.failed} failed ({seconds:.2f} s, {runner.describe()})",
        highlight=False,
    )
    if interrupted:
        out.print(
            f"Interrupted (Ctrl-C) after {tally.files} of {len(names)} files: the counts above are over those; "
            "no report was written.",
            highlight=False,
        )
        return 130
    if args.jsonl and args.jsonl != "-":
        out.print(f"JSON-lines report written to {Path(args.jsonl).resolve()}", highlight=False, soft_wrap=True)
    if kept is not None:
        _write_report(args.json, json_report(tally, kept, seconds, runner.processes), out)
    return 1 if tally.failed else 0


@contextmanager
def _runner(args: argparse.Namespace, sources: int) -> Iterator[Runner]:
    if args.dask:
        with dask_client(args.dask) as client:
            yield OnDask(client, label=args.dask.describe())
        return
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    yield ProcessPool(jobs) if jobs > 1 and sources > 1 else InProcess()


@contextmanager
def _jsonl_out(where: str | None) -> Iterator[TextIO | None]:
    if not where:
        yield None
    elif where == "-":
        yield sys.stdout
    else:
        with open(where, "w", encoding="utf-8") as file:
            yield file


@contextmanager
def _progress(quiet: bool, total: int) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr over the sources (files and archives), unless ``quiet``."""
    if quiet:
        yield None
        return
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
        task = bar.add_task("audit", total=total)
        yield lambda n: bar.advance(task, n)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _print_summary(out: Any, tally: AuditTally) -> None:
    """The verdict counts, and the first failures with what is wrong."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Audit summary")
    table.add_column("verdict")
    table.add_column("files", justify="right")
    for kind, count in sorted(tally.by_verdict.items()):
        table.add_row(f"[green]{kind}[/]" if kind == "valid" else f"[red]{kind}[/]", str(count))
    table.add_row("[bold]total[/]", f"[bold]{tally.files}[/]")
    out.print(table)
    if tally.failures:
        # One line a failure, never cut to the terminal's width: a file name is what a person copies
        # (a table column cut it with "…" at 80 columns), so the terminal wraps the line instead.
        out.print(f"[bold]Failures[/] (first {len(tally.failures)} of {tally.failed}):")
        for row in tally.failures:  # names and messages are data, not markup
            line = Text.assemble("  ", (row.path, "bold"), "  ", (row.verdict, "red"), ": ", row.message)
            out.print(line, soft_wrap=True)


def _write_report(where: str, report: dict[str, Any], out: Any) -> None:
    """The JSON report to standard output (``-``) or a file, and where it went."""
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if where == "-":
        sys.stdout.write(text)
        out.print("JSON report written to standard output", highlight=False)
    else:
        Path(where).write_text(text, encoding="utf-8")
        out.print(f"JSON report written to {Path(where).resolve()}", highlight=False, soft_wrap=True)
