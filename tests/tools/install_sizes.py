"""Measure what each install of bigtwo holds: packages and size on disk in a fresh virtual environment.

    python tests/tools/install_sizes.py                 # every install in INSTALLS (needs PyPI; minutes)
    python tests/tools/install_sizes.py engine server   # some of them
    python tests/tools/install_sizes.py --markdown      # the README's table

The project's wheel is built once from a copy of the sources (nothing is written in the checkout);
each install is ``python -m venv`` then ``pip install --find-links WHEEL_DIR 'bigtwo[EXTRAS]'``.
"Packages" counts the distributions installed beside bigtwo (pip and setuptools, which every fresh
environment has, left out); "added" is the environment's size on disk (``du``, apparent bytes of
every file) less that of an empty environment made the same way. README "Installs" holds the figures.
Not a test: it downloads from PyPI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "engine", "service", "proto", "clients/client", "clients/cli")
TOOLS_SOURCES = "clients/tools"
INSTALLS: dict[str, str] = {
    "engine": "bigtwo",
    "client": "bigtwo[client]",
    "server": "bigtwo[server]",
    "server+web": "bigtwo[web]",
    "cli": "bigtwo[cli]",
    "cli+web": "bigtwo[cli,web]",
    "dev": "bigtwo[dev]",
}
ALWAYS_THERE = {"pip", "setuptools", "bigtwo"}


@dataclass(frozen=True)
class Measured:
    name: str
    requirement: str
    packages: tuple[str, ...]
    added_bytes: int


def copy_sources(into: Path) -> Path:
    """The sources a wheel is built from, copied (the build writes build/ and *.egg-info beside them)."""
    source = into / "src"
    for name in SOURCES:
        target = source / name
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
    shutil.copytree(ROOT / TOOLS_SOURCES, source / TOOLS_SOURCES, ignore=shutil.ignore_patterns("__pycache__"))
    return source


def build_wheel(into: Path) -> Path:
    """The project's wheel, built with ``pip wheel --no-deps`` from a copy of the sources."""
    source = copy_sources(into)
    wheels = into / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheels), str(source)],
        check=True,
    )
    return wheels


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def fresh_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin" / "python"


def installed(python: Path) -> tuple[str, ...]:
    listing = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return tuple(sorted(item["name"] for item in json.loads(listing) if item["name"] not in ALWAYS_THERE))


def measure(name: str, requirement: str, wheels: Path, work: Path, empty_bytes: int) -> Measured:
    venv = work / name
    python = fresh_venv(venv)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--find-links",
            str(wheels),
            requirement,
        ],
        check=True,
    )
    measured = Measured(name, requirement, installed(python), tree_bytes(venv) - empty_bytes)
    shutil.rmtree(venv)
    return measured


def megabytes(count: int) -> str:
    return f"{count / 1_000_000:.1f} MB" if count >= 1_000_000 else f"{count / 1_000:.0f} kB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("installs", nargs="*", help=f"which of {', '.join(INSTALLS)} (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the README's table")
    args = parser.parse_args(argv)
    unknown = set(args.installs) - set(INSTALLS)
    if unknown:
        parser.error(f"no install named {', '.join(sorted(unknown))}; choose among {', '.join(INSTALLS)}")
    with tempfile.TemporaryDirectory(prefix="bigtwo-sizes-") as tmp:
        work = Path(tmp)
        wheels = build_wheel(work)
        wheel = next(wheels.glob("bigtwo-*.whl"))
        empty = tree_bytes(fresh_venv(work / "empty").parent.parent)
        results = []
        for name in args.installs or INSTALLS:
            results.append(measure(name, INSTALLS[name], wheels, work, empty))
            row = results[-1]
            print(
                f"{row.name}: {len(row.packages)} packages, {megabytes(row.added_bytes)}", file=sys.stderr, flush=True
            )
        print(f"wheel: {wheel.name}, {megabytes(wheel.stat().st_size)}", file=sys.stderr)
    if args.markdown:
        print("| install | `pip install` | packages beside bigtwo | added to a fresh venv |")
        print("|---|---|---|---|")
        for row in results:
            print(f"| {row.name} | `'{row.requirement}'` | {len(row.packages)} | {megabytes(row.added_bytes)} |")
    else:
        print(json.dumps([{**row.__dict__, "count": len(row.packages)} for row in results], indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    raise SystemExit(main())
