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
    assert "system_packages.sh chromium prometheus redis node" in plan
    assert "apt-get" not in plan  # only through the script, which speaks first


def test_make_run_on_a_fresh_clone_says_what_it_installs_first(tmp_path: Path) -> None:
    """A fresh clone has no environment: ``make run``'s first lines say it is being created and
    installed (about half a minute here), before pip's own output."""
    # Under `make test` the outer make's MAKEFLAGS/MAKELEVEL reach this make, which then prints
    # "Entering directory": the plan is read as a newcomer's shell would run it.
    env = {key: value for key, value in os.environ.items() if key not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    plan = subprocess.run(
        ["make", "--no-print-directory", "-n", f"VENV={tmp_path / 'fresh'}", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    ).stdout.splitlines()
    assert plan[0].startswith("echo \"Creating the Python environment in "), plan[:3]
    assert any(line.startswith("echo \"Installing the service and the bigtwo command") for line in plan)


def test_the_readme_names_what_make_test_needs() -> None:
    """The Node.js version and the Debian packages, before a newcomer meets npm's engine warnings."""
    import json

    readme = (ROOT / "README.md").read_text()
    lock = json.loads((ROOT / "clients" / "ts" / "package-lock.json").read_text())
    wanted = {
        int(engines["node"].removeprefix(">=").split(".")[0])
        for package in lock["packages"].values()
        if (engines := package.get("engines")) and str(engines.get("node", "")).startswith(">=")
    }
    assert f"Node ≥ {max(wanted)}" in readme and "Node.js 20 or later" in readme
    for package in ("chromium", "fonts-dejavu-core", "prometheus", "redis-server"):
        assert f"`{package}`" in readme
