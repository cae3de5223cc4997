"""The rule vectors (tests/vectors/, a copy of shared/vectors) through the engine's judge, and the
``bigtwo vectors`` command that runs them from files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bigtwo.cli.vectors_cmd import VectorFileError, run_vector_files
from bigtwo.engine.vectors import CaseResult, check_case

TESTS = Path(__file__).resolve().parent
VECTORS = TESTS / "vectors"
REPO = TESTS.parent


def _all_cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(VECTORS.rglob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            out.append((f"{path.relative_to(VECTORS).as_posix()}::{case['id']}", case))
    return out


CASES = _all_cases()


def test_vectors_folder_is_not_empty() -> None:
    assert len(CASES) >= 200
    ids = [case["id"] for _, case in CASES]
    assert len(ids) == len(set(ids)), "case ids are unique across files"


@pytest.mark.parametrize("case", [case for _, case in CASES], ids=[name for name, _ in CASES])
def test_vector_case(case: dict[str, Any]) -> None:
    result = check_case(case)
    assert result.passed, f"{result.case_id}: expected {result.expected}, got {result.got}"


# -- run_vector_files: the pluggable runner ------------------------------------------------------


def test_run_vector_files_counts_with_the_engine_judge() -> None:
    failures: list[CaseResult] = []
    passed, failed = run_vector_files([VECTORS], check_case, lambda result, _path: failures.append(result))
    assert (passed, failed) == (len(CASES), 0)
    assert failures == []


def test_run_vector_files_uses_the_given_judge(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"cases": [{"id": "one"}, {"id": "two"}, {"id": "three"}]}))
    seen: list[str] = []

    def judge(case: Any) -> CaseResult:
        seen.append(case["id"])
        return CaseResult(case["id"], case["id"] != "two", "x", "y")

    failed_ids: list[str] = []
    assert run_vector_files([tmp_path], judge, lambda result, _path: failed_ids.append(result.case_id)) == (2, 1)
    assert seen == ["one", "two", "three"]
    assert failed_ids == ["two"]


def test_run_vector_files_counts_a_crashing_judge_as_a_failure(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"cases": [{"id": "boom"}]}))

    def judge(case: Any) -> CaseResult:
        raise ConnectionError("service went away")

    results: list[CaseResult] = []
    assert run_vector_files([tmp_path / "a.json"], judge, lambda result, _path: results.append(result)) == (0, 1)
    assert results[0].case_id == "boom" and "ConnectionError" in results[0].got


@pytest.mark.parametrize(
    ("content", "why"),
    [("{not json", "not valid JSON"), ("[1, 2]", "not a vector file"), ('{"cases": [1]}', "case 0")],
)
def test_run_vector_files_refuses_a_bad_file_before_judging(tmp_path: Path, content: str, why: str) -> None:
    (tmp_path / "a-good.json").write_text(json.dumps({"cases": [{"id": "fine"}]}))
    bad = tmp_path / "b-bad.json"
    bad.write_text(content)
    judged: list[Any] = []
    with pytest.raises(VectorFileError) as info:
        run_vector_files([tmp_path], lambda case: judged.append(case) or CaseResult("x", True, "", ""))
    assert info.value.path == bad and why in str(info.value)
    assert judged == []


def test_run_vector_files_refuses_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(VectorFileError, match="no such file"):
        run_vector_files([tmp_path / "nowhere.json"], check_case)


# -- the command -----------------------------------------------------------------------------------


def _bigtwo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bigtwo.cli.main", *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def test_command_passes_the_vectors_folder() -> None:
    proc = _bigtwo("vectors", "tests/vectors")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == f"{len(CASES)} passed, 0 failed"
    assert len(lines) == 1, "no failure lines when everything passes"


def test_command_accepts_files_and_folders_together() -> None:
    proc = _bigtwo("vectors", "tests/vectors/seed-examples.json", "tests/vectors/random")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == f"{len(CASES)} passed, 0 failed"


def test_command_exits_2_on_a_broken_json_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"cases": [ {"id": "half-written"')
    proc = _bigtwo("vectors", str(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert str(broken) in proc.stdout + proc.stderr


def test_command_exits_2_on_a_missing_path(tmp_path: Path) -> None:
    proc = _bigtwo("vectors", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert "missing" in proc.stderr


def test_command_exits_1_and_names_a_wrong_case(tmp_path: Path) -> None:
    cases = [
        {"id": "deliberately-wrong-pair", "ruleset": {}, "check": "kind", "cards": "9S 9D", "expect": "triple"},
        {"id": "right-pair", "ruleset": {}, "check": "kind", "cards": "9S 9D", "expect": "pair"},
    ]
    (tmp_path / "wrong.json").write_text(json.dumps({"cases": cases}))
    proc = _bigtwo("vectors", str(tmp_path / "wrong.json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    failing = [line for line in lines[:-1] if "deliberately-wrong-pair" in line]
    assert len(failing) == 1 and "triple" in failing[0] and "pair" in failing[0]
    assert not any("right-pair" in line for line in lines)


@pytest.mark.parametrize("command", [[], ["vectors"], ["bench"], ["version"], ["run"]])
def test_every_subcommand_has_help(command: list[str]) -> None:
    proc = _bigtwo(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage: bigtwo" in proc.stdout


def test_bench_json_lines() -> None:
    """Shape of ``bigtwo bench engine --json`` (one quick run; no timing is asserted)."""
    from bigtwo.engine import PRESET_NAMES

    proc = _bigtwo("bench", "engine", "--json", "--runs", "1")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    assert all(set(row) == {"figure", "preset", "value", "unit"} for row in rows)
    assert all(isinstance(row["value"], float) and row["value"] > 0 for row in rows)
    selfplay = [row["preset"] for row in rows if row["figure"] == "selfplay_deals_per_s"]
    assert selfplay == list(PRESET_NAMES)
    figures = {row["figure"] for row in rows}
    assert figures >= {"legal_moves_calls_per_s", "legal_moves_api_calls_per_s", "verify_deals_per_s"}
