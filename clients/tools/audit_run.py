"""The one audit runner behind ``bigtwo audit``: batches of replays in, report rows out, in order.

The names :func:`bigtwo.tools.replay_sources.list_sources` found are cut into :class:`AuditBatch`
es, a few replay files each or one whole archive, so a million files is thousands of tasks, not a
million. A batch is audited by :func:`audit_batch` wherever it runs: in this process, in a local
process pool (``--jobs N``) or on a Dask cluster (``--dask``, through
:func:`bigtwo.tools.cluster.ordered_map`). Every runner gives the batches' rows back in the order
of the batches, and a batch's rows come in the order of its replays, so the rows are the same,
one for one, whatever runs them, however many workers and whatever order they finish in.

A row is an :class:`AuditRow`. :class:`AuditTally` counts rows as they pass and keeps only the first
failures, so a run over millions of replays holds no list of rows; :class:`JsonLinesReport`
writes each row as a line as it arrives, then a summary line.
"""

from __future__ import annotations

import json
import multiprocessing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from bigtwo.engine.replay.audit import VerdictKind, audit_text
from bigtwo.engine.replay.limits import DEFAULT_LIMITS, ReplayLimits

from .cluster import ordered_map
from .replay_sources import Entry, is_archive, read_entries

if TYPE_CHECKING:
    from distributed import Client

REPORT_FORMAT = "bigtwo-audit-report/1"
SUMMARY_FORMAT = "bigtwo-audit-summary/1"
BATCH_FILES = 256
"""Replay files a batch: about a quarter of a second of work for one-deal files. Dask's cost per
task (the scheduler's bookkeeping, the round trip to the worker) is paid once per batch, and
smaller batches lost a sixth of the rate to it (docs/PERFORMANCE.md)."""
FAILURES_SHOWN = 20


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One replay's line of the report (the same keys as the JSON report's ``results``)."""

    path: str
    verdict: str
    ok: bool
    message: str = ""
    line: int = 0
    deal: int = 0
    index: int = -1
    reason: str = ""
    signature: str = "unsigned"
    deals: int = 0
    actions: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """The row as one line of JSON (keys sorted)."""
        return json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """What every worker audits with: the signing key, whether unsigned fails, the replay limits."""

    key: bytes | None = None
    require_signature: bool = False
    limits: ReplayLimits = DEFAULT_LIMITS


@dataclass(frozen=True, slots=True)
class AuditBatch:
    """A few replay files, or one archive: the unit of work a worker opens and reads itself."""

    names: tuple[str, ...]


def make_batches(names: Iterable[str], batch_files: int = BATCH_FILES) -> Iterator[AuditBatch]:
    """Consecutive replay files ``batch_files`` at a time; each archive a batch of its own."""
    group: list[str] = []
    for name in names:
        if is_archive(name):
            if group:
                yield AuditBatch(tuple(group))
                group = []
            yield AuditBatch((name,))
            continue
        group.append(name)
        if len(group) >= batch_files:
            yield AuditBatch(tuple(group))
            group = []
    if group:
        yield AuditBatch(tuple(group))


def audit_entry(entry: Entry, settings: AuditSettings) -> AuditRow:
    """One replay's row: its bytes audited, or ``FORMAT_ERROR`` with why it could not be read."""
    if entry.data is None:
        return AuditRow(entry.path, VerdictKind.FORMAT_ERROR.value, False, entry.problem)
    try:
        text = entry.data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return AuditRow(entry.path, VerdictKind.FORMAT_ERROR.value, False, "the file is not UTF-8 text")
    verdict = audit_text(text, settings.key, require_signature=settings.require_signature, limits=settings.limits)
    first = verdict.first
    return AuditRow(
        path=entry.path,
        verdict=verdict.kind.value,
        ok=verdict.ok,
        message=first.describe() if first else "",
        line=first.line if first else 0,
        deal=first.deal_number if first else 0,
        index=first.index if first else -1,
        reason=first.reason if first else "",
        signature=verdict.signature.value,
        deals=verdict.deals_checked,
        actions=verdict.actions_checked,
    )


def audit_batch(batch: AuditBatch, settings: AuditSettings) -> tuple[AuditRow, ...]:
    """Every row of ``batch``, in order; what runs on a worker (it reads the replays itself)."""
    return tuple(audit_entry(entry, settings) for name in batch.names for entry in read_entries(name, settings.limits))


# -- runners ---------------------------------------------------------------------------------------

Task = Callable[[AuditBatch], tuple[AuditRow, ...]]
OnDone = Callable[[AuditBatch, tuple[AuditRow, ...]], None]


class Runner(Protocol):
    """Runs ``task`` on every batch; answers in the order of the batches."""

    processes: int

    def describe(self) -> str: ...

    def map(self, task: Task, batches: Iterable[AuditBatch], on_done: OnDone) -> Iterator[tuple[AuditRow, ...]]: ...


@dataclass
class InProcess:
    processes: int = 1

    def describe(self) -> str:
        return "1 process"

    def map(self, task: Task, batches: Iterable[AuditBatch], on_done: OnDone) -> Iterator[tuple[AuditRow, ...]]:
        for batch in batches:
            rows = task(batch)
            on_done(batch, rows)
            yield rows


@dataclass
class ProcessPool:
    """``processes`` local worker processes (forked where the system can: no re-import)."""

    processes: int

    def describe(self) -> str:
        return f"{self.processes} process(es)"

    def map(self, task: Task, batches: Iterable[AuditBatch], on_done: OnDone) -> Iterator[tuple[AuditRow, ...]]:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        with multiprocessing.get_context(method).Pool(self.processes) as pool:
            for batch, rows in pool.imap(partial(_paired, task), batches):
                on_done(batch, rows)
                yield rows


def _paired(task: Task, batch: AuditBatch) -> tuple[AuditBatch, tuple[AuditRow, ...]]:
    """The batch with its rows: the pool's answers carry the batch back for ``on_done``."""
    return batch, task(batch)


@dataclass
class OnDask:
    """The workers of a Dask cluster (``client``), ``per_thread`` batches running per worker thread."""

    client: Client
    label: str = "a Dask cluster"
    per_thread: int = 2
    processes: int = field(init=False)

    def __post_init__(self) -> None:
        self.processes = max(1, sum(self.client.nthreads().values()))

    def describe(self) -> str:
        return self.label

    def map(self, task: Task, batches: Iterable[AuditBatch], on_done: OnDone) -> Iterator[tuple[AuditRow, ...]]:
        window = max(2, self.per_thread * max(1, sum(self.client.nthreads().values())))
        return ordered_map(self.client, task, batches, window, on_done)


def audit_rows(
    names: Iterable[str],
    settings: AuditSettings,
    runner: Runner,
    *,
    batch_files: int = BATCH_FILES,
    progress: Callable[[int], None] | None = None,
) -> Iterator[AuditRow]:
    """The rows of every replay ``names`` hold, in order; ``progress(n)`` as each batch of ``n``
    names finishes (on a cluster: as it finishes there, in whatever order)."""

    def done(batch: AuditBatch, rows: tuple[AuditRow, ...]) -> None:
        if progress is not None:
            progress(len(batch.names))

    task = partial(audit_batch, settings=settings)
    for rows in runner.map(task, make_batches(names, batch_files), done):
        yield from rows


# -- the report ------------------------------------------------------------------------------------


@dataclass
class AuditTally:
    """Counters over the rows seen so far, and the first :data:`FAILURES_SHOWN` failures."""

    files: int = 0
    valid: int = 0
    failed: int = 0
    deals: int = 0
    actions: int = 0
    by_verdict: Counter[str] = field(default_factory=Counter)
    signatures: Counter[str] = field(default_factory=Counter)
    failures: list[AuditRow] = field(default_factory=list)

    def add(self, row: AuditRow) -> None:
        self.files += 1
        self.deals += row.deals
        self.actions += row.actions
        self.by_verdict[row.verdict] += 1
        self.signatures[row.signature] += 1
        if row.ok:
            self.valid += 1
            return
        self.failed += 1
        if len(self.failures) < FAILURES_SHOWN:
            self.failures.append(row)

    def summary(self, seconds: float, jobs: int) -> dict[str, Any]:
        """The JSON report's fields but its ``results``."""
        return {
            "format": REPORT_FORMAT,
            "files": self.files,
            "valid": self.valid,
            "failed": self.failed,
            "deals": self.deals,
            "actions": self.actions,
            "by_verdict": dict(sorted(self.by_verdict.items())),
            "signatures": dict(sorted(self.signatures.items())),
            "seconds": round(seconds, 3),
            "jobs": jobs,
        }


def json_report(tally: AuditTally, rows: Iterable[AuditRow], seconds: float, jobs: int) -> dict[str, Any]:
    """The ``--json`` report (``bigtwo-audit-report/1``): the summary and every row, by path."""
    report = tally.summary(seconds, jobs)
    report["results"] = [row.as_dict() for row in sorted(rows, key=lambda r: r.path)]
    return report


class JsonLinesReport:
    """``--jsonl``: one row a line, in input order, flushed as rows arrive; then one summary line
    (the only line with a ``format`` key: ``bigtwo-audit-summary/1``)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def rows(self, rows: Iterable[AuditRow]) -> Iterator[AuditRow]:
        """``rows``, passed through, each written first."""
        for row in rows:
            self.out.write(row.to_json() + "\n")
            self.out.flush()  # a reader following the file sees each row as it is audited
            yield row

    def finish(self, tally: AuditTally, seconds: float, jobs: int, runner: str) -> None:
        summary = tally.summary(seconds, jobs)
        summary["format"] = SUMMARY_FORMAT
        summary["runner"] = runner
        self.out.write(json.dumps(summary, sort_keys=True) + "\n")
        self.out.flush()


__all__ = [
    "BATCH_FILES",
    "REPORT_FORMAT",
    "SUMMARY_FORMAT",
    "AuditBatch",
    "AuditRow",
    "AuditSettings",
    "AuditTally",
    "InProcess",
    "JsonLinesReport",
    "OnDask",
    "ProcessPool",
    "Runner",
    "audit_batch",
    "audit_entry",
    "audit_rows",
    "json_report",
    "make_batches",
]
