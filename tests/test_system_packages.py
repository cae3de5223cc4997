"""``make test``'s step for what the suite needs outside the virtual environment
(tests/tools/system_packages.sh): present, it does nothing; missing, it says so in one sentence before
any apt step, and a person without root, or an apt-get that fails (a held dpkg lock), gets a sentence
saying what to install instead of make's bare ``Error 100``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "tools" / "system_packages.sh"
MISSING_BROWSER = {"CHROMIUM": "/nonexistent/chromium"}


def run(*needs: str, env: dict[str, str], as_user: bool = False) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if as_user and os.geteuid() == 0:  # drop root as a person running make test would not have it
        prefix = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    return subprocess.run(
        [*prefix, "bash", str(SCRIPT), *needs],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **env},
    )


def sentences(text: str) -> int:
    return len([line for line in text.splitlines() if line.strip()])


def test_nothing_missing_is_a_silent_no_op() -> None:
    done = run("chromium", env={"CHROMIUM": "/bin/sh", "APT_GET": "false"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="needs setpriv to drop root")
def test_without_root_a_missing_package_is_one_sentence_naming_it_and_how_to_install_it() -> None:
    done = run("chromium", env={**MISSING_BROWSER, "APT_GET": "false"}, as_user=True)
    assert done.returncode == 1
    assert done.stdout == ""  # no apt step announced, none tried
    assert sentences(done.stderr) == 1, done.stderr
    assert "chromium fonts-dejavu-core" in done.stderr and "run it as root" in done.stderr
    assert "sudo apt-get install --no-install-recommends chromium fonts-dejavu-core" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the apt step runs only as root")
def test_a_failing_apt_get_ends_in_a_sentence_not_error_100() -> None:
    done = run("chromium", env={**MISSING_BROWSER, "APT_GET": "false"})
    assert done.returncode == 1
    assert "needs the Debian packages chromium fonts-dejavu-core" in done.stdout  # said before the apt step
    assert sentences(done.stderr) == 1, done.stderr
    assert "apt-get could not install chromium fonts-dejavu-core" in done.stderr
    assert "dpkg" in done.stderr  # the likely cause: a lock held by another apt run


def test_make_test_checks_the_system_packages_before_anything_it_installs() -> None:
    plan = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    assert "system_packages.sh chromium prometheus node" in plan
    assert "apt-get" not in plan  # only through the script, which speaks first
