"""The shipped Prometheus files pass Debian's ``promtool`` (installed by ``make prometheus``, which
``make test`` runs first; the tests install nothing): ``check rules``, ``check config`` (the rule
path resolves outside the container too) and ``test rules`` — unit tests in which every alert is
shown both firing and not firing. Under CI=true a missing promtool fails; elsewhere it skips."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

OBSERVABILITY = Path(__file__).resolve().parents[1] / "deploy" / "observability"
ALERTS = OBSERVABILITY / "alerts.yml"
CONFIG = OBSERVABILITY / "prometheus.yml"
UNIT_TESTS = sorted((OBSERVABILITY / "tests").glob("*.yml"))


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        message = "promtool is missing: run `make prometheus` (Debian's prometheus package)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def run(promtool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool, *args], capture_output=True, text=True, timeout=60, cwd=OBSERVABILITY, check=False)


def alert_names() -> list[str]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule["alert"] for group in groups for rule in group["rules"] if "alert" in rule]


def test_check_rules(promtool: str) -> None:
    done = run(promtool, "check", "rules", str(ALERTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alert_names())} rules found" in done.stdout


def test_check_config_from_anywhere(promtool: str, tmp_path: Path) -> None:
    # From another working directory: the rule file is found relative to the config file.
    done = subprocess.run(
        [promtool, "check", "config", str(CONFIG)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 1 rule files found" in done.stdout


def test_rule_unit_tests_pass(promtool: str) -> None:
    assert UNIT_TESTS
    done = run(promtool, "test", "rules", *map(str, UNIT_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    fired: set[str] = set()
    quiet: set[str] = set()
    for path in UNIT_TESTS:
        document: dict[str, Any] = yaml.safe_load(path.read_text())
        assert document["rule_files"] == ["../alerts.yml"], path
        for case in document["tests"]:
            for check in case.get("alert_rule_test", []):
                (fired if check["exp_alerts"] else quiet).add(check["alertname"])
    names = set(alert_names())
    assert names - fired == set(), "alerts never shown firing"
    assert names - quiet == set(), "alerts never shown quiet"
    assert (fired | quiet) - names == set(), "tests of alerts that do not exist"
