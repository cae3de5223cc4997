"""Make a folder where the distribution's packages sit at their import names, as symbolic links.

The repository's fixed layout maps folders onto ``bigtwo.*`` (``package-dir`` in pyproject.toml); the
editable install resolves that mapping with an import hook that mypy does not run. ``make lint`` points
mypy at this folder (``MYPYPATH``) so every package is checked under the name it is imported by.

    python tests/tools/package_links.py .tools/typecheck
"""

from __future__ import annotations

import argparse
import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def package_dirs() -> dict[str, Path]:
    """Each top package's import name and its folder, as pyproject.toml declares them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def link_tree(target: Path) -> list[str]:
    """Create ``target/bigtwo/<name>`` -> folder for every mapped package; return the import names."""
    names = []
    for name, folder in sorted(package_dirs().items()):
        link = target.joinpath(*name.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.path.relpath(folder, link.parent), target_is_directory=True)
        names.append(name)
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("--print-packages", action="store_true", help="print '-p NAME' for each package")
    args = parser.parse_args()
    names = link_tree(args.target)
    if args.print_packages:
        print(" ".join(f"-p {name}" for name in names))


if __name__ == "__main__":
    main()
