"""Build the project's wheel offline and a fresh virtual environment holding it alone.

``make bare-wheel`` (which ``make test`` runs first) calls this, so tests/test_installs.py reads a
built wheel and runs the bare install without installing anything itself. The wheel is built from
a copy of the sources in a temporary folder (``pip wheel --no-deps --no-build-isolation
--no-index``: no network, nothing written into the checkout but OUT), and the environment gets that
wheel alone (``pip install --no-index``: nothing else can come in).

    python tests/tools/bare_wheel.py .tools/bare-wheel    # OUT/dist/bigtwo-*.whl, OUT/venv
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "engine",
    "service",
    "proto",
    "clients/client",
    "clients/cli",
    "clients/tools",
)
"""What the wheel is built from (every package folder of pyproject.toml's package-dir)."""


def build(out: Path) -> Path:
    """The wheel in ``out/dist`` (built afresh) and ``out/venv`` holding it alone; the wheel's path."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "src"
        for name in SOURCES:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, source / name)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--quiet"]
        subprocess.run([*command, "--wheel-dir", str(out / "dist"), str(source)], check=True, timeout=240)
    (wheel,) = (out / "dist").glob("bigtwo-*.whl")
    venv = out / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--no-index", "--quiet", str(wheel)], check=True, timeout=120)
    return wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for dist/ and venv/ (made afresh)")
    args = parser.parse_args()
    print(f"bare wheel: {build(args.out)} and {args.out / 'venv'}")


if __name__ == "__main__":
    main()
