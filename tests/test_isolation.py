"""The suite writes nothing outside temporary folders (tests/conftest.py): not the real home
(``~/.bigtwo``'s development signing key, matplotlib's cache) and not the repository (Hypothesis'
database, pytest's cache), whatever a test or a server it starts does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bigtwo.tools.local_server import LocalServer

ROOT = Path(__file__).resolve().parent.parent


def _inside(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def _snapshot(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` and its modification time (empty when there is no folder)."""
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def _repository_status() -> set[str] | None:
    """The files and folders of the repository that git does not track (untracked or ignored,
    from ``git status --porcelain --ignored``): where a stray write would show; None outside a
    git checkout."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run(
        [git, "status", "--porcelain", "--ignored", "--untracked-files=normal"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        return None
    return {line for line in done.stdout.splitlines() if line.startswith(("??", "!!"))}


def test_the_session_has_a_home_of_its_own(
    real_home: Path, isolated_environment: dict[str, str], pytestconfig: pytest.Config
) -> None:
    from hypothesis import settings
    from hypothesis.configuration import storage_directory

    home = Path(os.environ["HOME"])
    for name, value in isolated_environment.items():
        assert os.environ[name] == value, name
        assert not _inside(value, ROOT), f"{name}={value} is inside the repository"
        if str(real_home) not in ("", "/"):
            assert not _inside(value, real_home), f"{name}={value} is inside the real home"
    assert Path.home() == home
    assert _inside(os.environ["BIGTWO_HOME"], home)
    assert settings().database is None
    assert not _inside(storage_directory("examples", intent_to_write=False).path, ROOT)
    assert not pytestconfig.pluginmanager.has_plugin("cacheprovider")


def test_a_server_and_a_command_write_only_to_the_temporary_home(real_home: Path, tmp_path: Path) -> None:
    """``bigtwo serve`` without token keys writes its development key under ``$BIGTWO_HOME``
    (here: the session's home, as ``~/.bigtwo`` is ``$HOME/.bigtwo``); matplotlib's cache and
    config go to ``MPLCONFIGDIR``. Neither touches the real home or the repository."""
    before_home = _snapshot(real_home / ".bigtwo")
    before_repository = _repository_status()
    # No token keys and no BIGTWO_HOME: the fallback, the home folder's .bigtwo.
    server = LocalServer(
        unset=("BIGTWO_TOKEN_KEYS", "BIGTWO_TOKEN_KEYS_FILE", "BIGTWO_HOME"), cwd=ROOT, log=tmp_path / "serve.log"
    )
    try:
        plot = subprocess.run(
            [sys.executable, "-c", "import matplotlib; print(matplotlib.get_configdir(), matplotlib.get_cachedir())"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    finally:
        server.stop(30)
    assert (Path(os.environ["HOME"]) / ".bigtwo" / "dev-signing-key").is_file()
    for folder in plot.stdout.split():
        assert _inside(folder, Path(os.environ["MPLCONFIGDIR"])), plot.stdout
    assert _snapshot(real_home / ".bigtwo") == before_home
    if before_repository is not None:
        after = _repository_status()
        assert after is not None and not after - before_repository, sorted(after or set())


def test_the_processes_a_test_starts_can_be_interrupted() -> None:
    """Ctrl-C reaches them (the terminal tests send it), however the suite itself was started."""
    code = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "True"
