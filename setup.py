"""The wheel leaves out what only a checkout runs: pyproject.toml's ``[tool.bigtwo.wheel]`` names the
modules and packages of ``bigtwo.tools`` (benches, the bot study, the PPO port, their sample data)
that the ``bigtwo`` command never imports. Everything else is configured in pyproject.toml.

setuptools includes every ``*.py`` of a listed package and has no setting to drop one module, hence
this hook. An editable install (``pip install -e``, what ``make test`` and ``make bench`` use) maps
the source folders as they are, so there the left-out modules still import.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LEFT_OUT: tuple[str, ...] = tuple(
    tomllib.loads((Path(__file__).parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["bigtwo"]["wheel"][
        "leave-out"
    ]
)


def left_out(name: str) -> bool:
    """Whether the module or package ``name`` (dotted) stays out of the wheel."""
    return any(name == gone or name.startswith(gone + ".") for gone in LEFT_OUT)


class BuildPyLeavingOut(build_py):  # type: ignore[misc]
    """build_py without the left-out modules, their packages and those packages' data."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        found: list[tuple[str, str, str]] = super().find_package_modules(package, package_dir)
        if self.editable_mode:
            return found
        return [entry for entry in found if not left_out(f"{entry[0]}.{entry[1]}")]

    def _get_pkg_data_files(self, package: str) -> tuple[str, str, str, list[str]]:
        package_name, src_dir, build_dir, files = super()._get_pkg_data_files(package)
        if left_out(package) and not self.editable_mode:
            files = []
        return package_name, src_dir, build_dir, files


setup(cmdclass={"build_py": BuildPyLeavingOut})
