"""The TypeScript code generated from proto/ (clients/ts/src/gen) is current: regenerated into a
temporary folder by clients/ts's own buf and protoc-gen-es (``make ts-proto``), it is byte for byte
the committed code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ts_support import BIN, ROOT, TS, require_toolchain


def test_generated_typescript_is_current(tmp_path: Path) -> None:
    require_toolchain()
    template = tmp_path / "buf.gen.yaml"
    text = (TS / "buf.gen.yaml").read_text(encoding="utf-8")
    out = tmp_path / "gen"
    template.write_text(
        text.replace("local: node_modules/.bin/protoc-gen-es", f"local: {BIN / 'protoc-gen-es'}").replace(
            "out: src/gen", f"out: {out}"
        ),
        encoding="utf-8",
    )
    proc = subprocess.run(
        [str(BIN / "buf"), "generate", str(ROOT / "proto"), "--template", str(template)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    committed = TS / "src" / "gen"
    fresh = {p.relative_to(out): p.read_bytes() for p in out.rglob("*.ts")}
    current = {p.relative_to(committed): p.read_bytes() for p in committed.rglob("*.ts")}
    stale = sorted(str(name) for name in fresh.keys() | current.keys() if fresh.get(name) != current.get(name))
    assert fresh and not stale, f"clients/ts/src/gen is stale ({', '.join(stale)}): run `make ts-proto`"
    shutil.rmtree(out)
