"""The API's release baselines: `buf breaking` against the last released API, and recording a new one.

A baseline is the buf image of ``proto/`` as released at one version of the project:
``proto/releases/bigtwo-api-<version>.json`` (pyproject.toml's version). Baselines are append-only:
one per release, never re-recorded, so a change that breaks generated clients cannot be "fixed" by
recording the broken API as the baseline. The rule (docs/API.md "Versions and breaking changes"):
a released proto package (``bigtwo.v1``) only grows; a breaking change goes into a new package
(``bigtwo.v2``, new files), which buf's FILE rules accept since they add files.

    python tests/tools/api_baseline.py check    # make buf-breaking: proto/ and every baseline
    python tests/tools/api_baseline.py record   # make api-baseline: at a release, after the bump

``check`` runs ``buf breaking proto --against`` the newest baseline at or below the project's
version, and each baseline against the one before it (a re-recorded baseline that drops what an
older release had fails there); every package a baseline holds must still be in ``proto/``.
``record`` refuses to overwrite a baseline and to record an API that breaks the newest older one.
tests/test_api_breaking.py runs the same checks in ``make test``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto"
RELEASES = PROTO / "releases"
BUF = ROOT / "clients" / "ts" / "node_modules" / ".bin" / "buf"
BASELINE_NAME = re.compile(r"^bigtwo-api-(?P<version>[^/]+)\.json$")
PACKAGE_LINE = re.compile(r"^\s*package\s+(?P<name>[A-Za-z_][\w.]*)\s*;", re.MULTILINE)
BUF_SECONDS = 60.0


@dataclass(frozen=True)
class Baseline:
    """One recorded release of the API."""

    version: Version
    path: Path


def baseline_path(version: Version, releases: Path = RELEASES) -> Path:
    return releases / f"bigtwo-api-{version}.json"


def project_version(pyproject: Path = ROOT / "pyproject.toml") -> Version:
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return Version(config["project"]["version"])


def find_baselines(releases: Path = RELEASES) -> list[Baseline]:
    """Every baseline, oldest first. A file whose name is not a baseline's is an error: a baseline
    under another name would be silently left out of the check."""
    found: list[Baseline] = []
    for path in sorted(releases.iterdir()) if releases.is_dir() else []:
        match = BASELINE_NAME.match(path.name)
        if match is None:
            raise ValueError(f"{path}: not a baseline name (bigtwo-api-<version>.json)")
        try:
            found.append(Baseline(Version(match["version"]), path))
        except InvalidVersion as error:
            raise ValueError(f"{path}: {error}") from error
    return sorted(found, key=lambda baseline: baseline.version)


def newest_at_or_before(version: Version, baselines: list[Baseline]) -> Baseline | None:
    older = [baseline for baseline in baselines if baseline.version <= version]
    return older[-1] if older else None


def proto_packages(proto_dir: Path) -> set[str]:
    """The packages the .proto files under proto_dir declare."""
    return {
        match["name"]
        for path in proto_dir.rglob("*.proto")
        for match in PACKAGE_LINE.finditer(path.read_text(encoding="utf-8"))
    }


def image_packages(image: Path) -> set[str]:
    files = json.loads(image.read_text(encoding="utf-8"))["file"]
    return {str(descriptor.get("package", "")) for descriptor in files}


def breaking(buf: Path, current: Path, against: Path, config: Path = PROTO / "buf.yaml") -> list[str]:
    """buf's messages for each change of ``current`` (a proto folder or an image) that breaks
    ``against`` (an image) under the FILE rules of ``config``; empty when nothing breaks."""
    proc = subprocess.run(
        [str(buf), "breaking", str(current), "--against", str(against), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=BUF_SECONDS,
    )
    if proc.returncode == 0:
        return []
    messages = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return messages or [f"buf breaking exited {proc.returncode} without a message"]


def build_image(buf: Path, proto_dir: Path, out: Path) -> None:
    """The image of proto_dir as indented JSON without source info: comments are not API, and one
    descriptor field per line makes a new baseline's review a readable diff."""
    with tempfile.TemporaryDirectory() as scratch:
        raw = Path(scratch) / "image.json"
        subprocess.run(
            [str(buf), "build", str(proto_dir), "--exclude-source-info", "-o", str(raw)],
            check=True,
            timeout=BUF_SECONDS,
        )
        image = json.loads(raw.read_text(encoding="utf-8"))
    out.write_text(json.dumps(image, indent=1) + "\n", encoding="utf-8")


def check(buf: Path, proto_dir: Path = PROTO, releases: Path = RELEASES, version: Version | None = None) -> list[str]:
    """Every problem: no baseline for the version, a baseline ahead of it, a package dropped, a
    break against the newest baseline at or below the version, a baseline breaking its predecessor."""
    version = version if version is not None else project_version()
    baselines = find_baselines(releases)
    problems = [
        f"{baseline.path.name}: recorded for {baseline.version}, ahead of the project's version {version}"
        for baseline in baselines
        if baseline.version > version
    ]
    newest = newest_at_or_before(version, baselines)
    if newest is None:
        return [*problems, f"no baseline in {releases} for {version} or an older version (make api-baseline)"]
    current_packages = proto_packages(proto_dir)
    for baseline in baselines:
        dropped = image_packages(baseline.path) - current_packages
        if dropped:
            problems.append(f"{baseline.path.name}: released packages missing from {proto_dir}: {sorted(dropped)}")
    problems += [f"against {newest.path.name}: {message}" for message in breaking(buf, proto_dir, newest.path)]
    for older, newer in itertools.pairwise(baselines):
        problems += [
            f"{newer.path.name} against {older.path.name}: {message}"
            for message in breaking(buf, newer.path, older.path)
        ]
    return problems


def record(buf: Path, proto_dir: Path = PROTO, releases: Path = RELEASES, version: Version | None = None) -> Path:
    """Record proto_dir as the baseline of ``version``; ValueError when that would hide a break."""
    version = version if version is not None else project_version()
    target = baseline_path(version, releases)
    if target.exists():
        raise ValueError(f"{target} exists: a release's baseline is never re-recorded (move the version)")
    previous = newest_at_or_before(version, find_baselines(releases))
    if previous is not None:
        broken = breaking(buf, proto_dir, previous.path)
        if broken:
            raise ValueError(
                f"the API breaks {previous.path.name}; put the change in a new package (bigtwo.v2):\n"
                + "\n".join(broken)
            )
    releases.mkdir(parents=True, exist_ok=True)
    build_image(buf, proto_dir, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("command", choices=("check", "record"))
    parser.add_argument("--buf", type=Path, default=BUF, help="the buf binary (make ts-deps installs it)")
    args = parser.parse_args(argv)
    if not args.buf.exists():
        print(f"{args.buf} is missing: run `make buf`", file=sys.stderr)
        return 2
    if args.command == "record":
        try:
            path = record(args.buf)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 1
        print(f"recorded {path.relative_to(ROOT)}: commit it with the release")
        return 0
    problems = check(args.buf)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"proto/ keeps the API of every release up to {project_version()}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
