"""Audit speed: ``python -m bigtwo.tools.replay_bench [--deals 10000] [--per-file 1] [--jobs 2]``.

Plays ``--deals`` deals (classic rules, a seeded random policy, about 1 refused attempt in 30
moves, signed files) into a temporary folder, then times the real command
``bigtwo audit FOLDER --jobs N --key KEY`` in a fresh process, and prints one JSON line.
The issue's target: 10,000 deals in under 10 s with 2 processes. Run by ``make bench``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bigtwo.tools.sample_matches import random_match_text

BENCH_KEY = b"bigtwo-bench-key"


def _write_files(job: tuple[str, int, int, int]) -> int:
    folder, first, count, per_file = job
    for file_index in range(first, first + count):
        text = random_match_text(per_file, file_index, f"bench file {file_index}", BENCH_KEY)
        Path(folder, f"match-{file_index:06d}.toml").write_text(text, encoding="utf-8", newline="\n")
    return count


def generate(folder: Path, deals: int, per_file: int, jobs: int) -> int:
    files = (deals + per_file - 1) // per_file
    step = max(1, files // (jobs * 8))
    work = [(str(folder), first, min(step, files - first), per_file) for first in range(0, files, step)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return sum(pool.imap_unordered(_write_files, work))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--per-file", type=int, default=1, help="deals per replay file (default 1: one file a deal)")
    parser.add_argument("--jobs", type=int, default=2, help="audit processes (default 2)")
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bigtwo-audit-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        key_file = Path(tmp) / "key"
        key_file.write_bytes(BENCH_KEY + b"\n")
        started = time.perf_counter()
        files = generate(folder, args.deals, args.per_file, max(1, multiprocessing.cpu_count()))
        generated = time.perf_counter() - started
        report = Path(tmp) / "report.json"
        command = [
            sys.executable,
            "-m",
            "bigtwo.cli.main",
            "audit",
            str(folder),
            "--jobs",
            str(args.jobs),
            "--key",
            str(key_file),
            "--quiet",
            "--json",
            str(report),
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(command, stdout=subprocess.DEVNULL, check=False)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        data = json.loads(report.read_text())
    line = {
        "bench": "audit",
        "files": files,
        "deals": data["deals"],
        "actions": data["actions"],
        "jobs": args.jobs,
        "seconds": round(seconds, 2),
        "deals_per_second": round(data["deals"] / seconds),
        "cpu_seconds": round(cpu, 2),
        "load_average": round(os.getloadavg()[0], 2),
        "valid": data["valid"],
        "failed": data["failed"],
        "target": "10000 deals < 10 s with 2 processes",
        "generate_seconds": round(generated, 2),
    }
    print(json.dumps(line))
    return 0 if result.returncode == 0 and data["failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
