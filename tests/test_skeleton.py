"""The installed package layout: bigtwo.* imports and the console entry point runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("name", ["bigtwo.engine", "bigtwo.service", "bigtwo.client"])
def test_subpackages_import(name: str) -> None:
    assert importlib.import_module(name) is not None


def test_cli_help_exits_zero() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bigtwo.cli.main", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "bigtwo" in proc.stdout
