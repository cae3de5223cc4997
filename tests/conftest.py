"""Shared pytest configuration. The package is installed (make venv); nothing is added to sys.path.

A test run writes nothing outside temporary folders: not the developer's home (``~/.bigtwo``'s
development signing key, matplotlib's font cache, Chromium's profile, anything under ``~/.cache``
or ``~/.config``) and not the repository (Hypothesis' example database, pytest's cache, which
``-p no:cacheprovider`` in pyproject.toml turns off). So before anything runs, the session's
environment points every home-like variable at one temporary folder, removed at the end; servers
and commands the tests start in subprocesses inherit it. tests/test_isolation.py checks it, and
that those processes can be interrupted.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

REAL_HOME = os.environ.get("HOME", "")
"""The home folder of whoever runs the suite, which no test may write to."""

_SANDBOX = Path(tempfile.mkdtemp(prefix="bigtwo-tests-"))
_HOME = _SANDBOX / "home"

ISOLATED: dict[str, str] = {
    "HOME": str(_HOME),
    "BIGTWO_HOME": str(_HOME / ".bigtwo"),
    "XDG_CACHE_HOME": str(_HOME / ".cache"),
    "XDG_CONFIG_HOME": str(_HOME / ".config"),
    "XDG_DATA_HOME": str(_HOME / ".local" / "share"),
    "XDG_STATE_HOME": str(_HOME / ".local" / "state"),
    "MPLCONFIGDIR": str(_SANDBOX / "matplotlib"),
    "HYPOTHESIS_STORAGE_DIRECTORY": str(_SANDBOX / "hypothesis"),
}
"""The variables set for the whole session."""

_SAVED = {name: os.environ.get(name) for name in ISOLATED}
_HOME.mkdir()
os.environ.update(ISOLATED)

# A suite started in the background by a non-interactive shell (``make test &``, some CI runners)
# begins with SIGINT ignored, and every process it starts inherits that: the terminal tests' Ctrl-C
# would then do nothing and wait out their timeout. Python's own handler is the usual start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Failing examples are not kept between runs: a database would be a folder of the repository
# (or, moved, of the temporary home, which goes at the end anyway). Failures print their example.
settings.register_profile("bigtwo-isolated", database=None)
settings.load_profile("bigtwo-isolated")


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, value in _SAVED.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(_SANDBOX, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def make_run_beside() -> Iterator[list[int]]:
    """The whole session runs as it would beside a developer's ``make run``: its ports (gRPC 50051,
    metrics 9464, browser 8080) are held, those free now, so a test that binds or calls a default
    port fails here rather than on the developer's machine (issue 35)."""
    from service_support import holding_make_run_ports  # gRPC and the service load only when tests run

    with holding_make_run_ports() as held:
        yield held


@pytest.fixture(scope="session")
def real_home() -> Path:
    """The real home folder (from before the session's isolation)."""
    return Path(REAL_HOME)


@pytest.fixture(scope="session")
def isolated_environment() -> dict[str, str]:
    """The home-like variables the session set, and their values."""
    return dict(ISOLATED)
