"""Building and running the TypeScript front ends (clients/ts) from the tests.

Their npm packages come from ``make ts-deps`` (``make test`` runs it first), so the tests install
nothing: a TypeScript entry point is bundled by clients/ts's own esbuild into a temporary folder and
run by the machine's node. Under CI=true a missing toolchain fails the test; elsewhere it is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "clients" / "ts"
BIN = TS / "node_modules" / ".bin"


def require_toolchain() -> str:
    """The path of node, once node and clients/ts/node_modules are known to be there."""
    node = shutil.which("node")
    if node is None or not (BIN / "esbuild").exists():
        message = "node or clients/ts/node_modules is missing: run `make ts-deps`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return node


def bundle(entry: str, out_dir: Path, *, platform: str = "node") -> Path:
    """Bundle ``entry`` (a path under clients/ts) into one ES module in ``out_dir``."""
    require_toolchain()
    source = TS / entry
    out = out_dir / (source.stem + ".mjs")
    proc = subprocess.run(
        [
            str(BIN / "esbuild"),
            str(source),
            "--bundle",
            f"--platform={platform}",
            "--format=esm",
            "--log-level=warning",
            f"--outfile={out}",
        ],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def run_node(script: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a bundled script with node; its output is returned whatever its exit code."""
    node = require_toolchain()
    return subprocess.run([node, str(script), *args], capture_output=True, text=True, timeout=timeout)


def typecheck() -> subprocess.CompletedProcess[str]:
    """clients/ts's ``tsc --noEmit`` over every TypeScript source and test."""
    require_toolchain()
    return subprocess.run(
        [str(BIN / "tsc"), "--noEmit", "-p", "tsconfig.json"], cwd=TS, capture_output=True, text=True, timeout=300
    )
