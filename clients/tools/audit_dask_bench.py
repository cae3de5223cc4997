"""Audit speed on Dask: ``python -m bigtwo.tools.audit_dask_bench [--deals 100000] [--per-archive 0]``.

Writes ``--deals`` signed one-deal replays (classic rules, a seeded random policy, the replays
:mod:`bigtwo.tools.replay_bench` audits) as one file each, or as ``.tar.gz`` archives of
``--per-archive`` replays each, into a temporary folder (or ``--keep DIR``, where a second run finds
them again). Then audits them with the one audit runner (:mod:`bigtwo.tools.audit_run`) in this
process, in a pool of 2 processes, and on local Dask clusters of 1 and 2 workers, and prints one
JSON line: deals per second of each, the ratios of 2 Dask workers to 1 and to this process, and
whether every run gave the same rows (a digest of them, in order).

The timed part is the audit alone: the cluster is started, and its workers have imported bigtwo,
before the clock starts (``start_seconds`` says what that took).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import multiprocessing
import os
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from .audit_run import BATCH_FILES, AuditSettings, AuditTally, InProcess, OnDask, ProcessPool, Runner, audit_rows
from .cluster import DaskTarget, dask_client
from .replay_bench import BENCH_KEY, generate
from .replay_sources import list_sources
from .sample_matches import random_match_text

MANIFEST = "bench-manifest.json"


def _write_archive(job: tuple[str, int, int]) -> int:
    folder, number, per_archive = job
    first = number * per_archive
    with tarfile.open(Path(folder, f"day-{number:05d}.tar.gz"), "w:gz") as tar:
        for index in range(first, first + per_archive):
            data = random_match_text(1, index, f"bench file {index}", BENCH_KEY).encode("utf-8")
            info = tarfile.TarInfo(f"replays/match-{index:07d}.toml")
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))
    return per_archive


def prepare(folder: Path, deals: int, per_archive: int) -> float:
    """The replays in ``folder``, written unless a run with the same figures left them; seconds spent."""
    wanted = {"deals": deals, "per_archive": per_archive, "key": BENCH_KEY.decode()}
    manifest = folder / MANIFEST
    if manifest.exists() and json.loads(manifest.read_text()) == wanted:
        return 0.0
    if any(folder.iterdir()):
        raise SystemExit(f"{folder} holds other files; give an empty folder (or the one a bench run wrote) to --keep")
    started = time.perf_counter()
    jobs = max(1, multiprocessing.cpu_count())
    if per_archive:
        archives = (deals + per_archive - 1) // per_archive
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            sum(pool.imap_unordered(_write_archive, [(str(folder), n, per_archive) for n in range(archives)]))
    else:
        generate(folder, deals, 1, jobs)
    manifest.write_text(json.dumps(wanted))
    return time.perf_counter() - started


def _warm() -> None:
    """What a worker imports before the clock starts (each worker process starts cold)."""
    import bigtwo.tools.audit_run  # noqa: F401


def measure(names: list[str], runner: Runner, batch_files: int) -> dict[str, Any]:
    """One audit of ``names``: seconds, deals per second, the verdict counts and the rows' digest."""
    tally, digest = AuditTally(), hashlib.sha256()
    started = time.perf_counter()
    for row in audit_rows(names, AuditSettings(BENCH_KEY), runner, batch_files=batch_files):
        tally.add(row)
        digest.update(row.to_json().encode("utf-8") + b"\n")
    seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 2),
        "deals": tally.deals,
        "deals_per_second": round(tally.deals / seconds),
        "valid": tally.valid,
        "failed": tally.failed,
        "rows_sha256": digest.hexdigest()[:16],
    }


@contextmanager
def _on_dask(workers: int) -> Iterator[tuple[Runner, float]]:
    started = time.perf_counter()
    with dask_client(DaskTarget(workers=workers)) as client:
        client.wait_for_workers(workers, timeout=120)
        client.run(_warm)
        yield OnDask(client), time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=100_000, help="one-deal replays to audit (default 100000)")
    parser.add_argument(
        "--per-archive", type=int, default=0, help="replays per .tar.gz archive (default 0: one file each)"
    )
    parser.add_argument("--batch-files", type=int, default=BATCH_FILES, help=f"files a batch (default {BATCH_FILES})")
    parser.add_argument("--keep", metavar="DIR", help="write the replays into DIR and keep them (reused next time)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bigtwo-audit-dask-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        generated = prepare(folder, args.deals, args.per_archive)
        names = list_sources([str(folder)])  # the manifest is neither a replay nor an archive
        runs: dict[str, Callable[[], AbstractContextManager[tuple[Runner, float]]]] = {
            "in_process": lambda: nullcontext((InProcess(), 0.0)),
            "pool_2": lambda: nullcontext((ProcessPool(2), 0.0)),
            "dask_1": lambda: _on_dask(1),
            "dask_2": lambda: _on_dask(2),
        }
        figures: dict[str, dict[str, Any]] = {}
        for label, start in runs.items():
            with start() as (runner, start_seconds):
                figures[label] = measure(names, runner, args.batch_files) | {"start_seconds": round(start_seconds, 2)}
    rate = {label: figure["deals_per_second"] for label, figure in figures.items()}
    line = {
        "bench": "audit-dask",
        "deals": figures["in_process"]["deals"],
        "sources": len(names),
        "form": f"tar.gz archives of {args.per_archive}" if args.per_archive else "one file a deal",
        "batch_files": args.batch_files,
        **figures,
        "ratio_dask_2_to_1": round(rate["dask_2"] / rate["dask_1"], 2),
        "ratio_dask_2_to_in_process": round(rate["dask_2"] / rate["in_process"], 2),
        "rows_identical": len({figure["rows_sha256"] for figure in figures.values()}) == 1,
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "generate_seconds": round(generated, 2),
    }
    print(json.dumps(line))
    return 0 if line["rows_identical"] and figures["in_process"]["failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
