"""The API's generated code is fresh (make proto) and the .proto files pass buf lint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
PACKAGE = PROTO / "bigtwo" / "v1"


def test_generated_code_is_not_stale(tmp_path: Path) -> None:
    protos = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.glob("*.proto"))
    assert protos, "no .proto files"
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        "-Iproto",
        f"--python_out={tmp_path}",
        f"--pyi_out={tmp_path}",
        f"--grpc_python_out={tmp_path}",
        *protos,
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=60)
    generated = sorted(p.name for p in (tmp_path / "bigtwo" / "v1").iterdir())
    committed = sorted(p.name for p in PACKAGE.iterdir() if p.name.endswith(("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")))
    assert generated == committed
    for name in generated:
        fresh = (tmp_path / "bigtwo" / "v1" / name).read_bytes()
        assert fresh == (PACKAGE / name).read_bytes(), f"{name} is stale: run make proto"


def test_every_field_and_message_is_commented() -> None:
    for proto in PACKAGE.glob("*.proto"):
        lines = proto.read_text().splitlines()
        for number, line in enumerate(lines):
            stripped = line.strip()
            is_field = (
                stripped.endswith(";") and "=" in stripped and not stripped.startswith(("option", "syntax", "package"))
            )
            is_type = stripped.startswith(("message ", "enum ", "rpc ", "service ", "oneof "))
            if (is_field or is_type) and not stripped.startswith("//") and not stripped.endswith("{}"):
                assert lines[number - 1].strip().startswith("//"), (
                    f"{proto.name}:{number + 1} has no comment: {stripped}"
                )


def test_buf_lint() -> None:
    """buf comes from ``make buf`` (which ``make test`` runs first); the test installs nothing.
    Under CI=true a missing buf fails the test; elsewhere it is skipped."""
    buf = ROOT / "clients" / "ts" / "node_modules" / ".bin" / "buf"
    if not buf.exists():
        message = f"{buf.relative_to(ROOT)} is missing: run `make buf` (npm package @bufbuild/buf)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    proc = subprocess.run([str(buf), "lint"], cwd=PROTO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
