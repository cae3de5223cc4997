"""API stability: proto/ keeps the API of every release (`buf breaking`, FILE rules), and the baselines
it is checked against cannot be re-recorded to hide a break (tests/tools/api_baseline.py, docs/API.md
"Versions and breaking changes").

buf comes from ``make buf`` (which ``make test`` runs first); under CI=true a missing buf fails the
tests that need it, elsewhere they are skipped (as tests/test_service_proto.py::test_buf_lint)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version
from tools.api_baseline import (
    BUF,
    PROTO,
    RELEASES,
    ROOT,
    baseline_path,
    breaking,
    build_image,
    check,
    find_baselines,
    image_packages,
    newest_at_or_before,
    project_version,
    proto_packages,
    record,
)

SERVICE = Path("bigtwo/v1/service.proto")
TYPES = Path("bigtwo/v1/types.proto")


@pytest.fixture
def buf() -> Path:
    if not BUF.exists():
        message = f"{BUF.relative_to(ROOT)} is missing: run `make buf` (npm package @bufbuild/buf)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return BUF


def proto_copy(tmp_path: Path) -> Path:
    """The .proto files and buf.yaml of proto/, without the generated Python beside them."""
    copy = tmp_path / "proto"
    for source in [PROTO / "buf.yaml", *PROTO.rglob("*.proto")]:
        target = copy / source.relative_to(PROTO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return copy


def edit(proto_dir: Path, file: Path, old: str, new: str) -> None:
    path = proto_dir / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{file} no longer holds {old!r} once: update this test's edit"
    path.write_text(text.replace(old, new), encoding="utf-8")


def newest_release() -> Path:
    newest = newest_at_or_before(project_version(), find_baselines())
    assert newest is not None, f"no baseline in {RELEASES} for {project_version()} or older: make api-baseline"
    return newest.path


def test_a_release_baseline_exists_for_this_version_or_an_older_one() -> None:
    version = project_version()
    baselines = find_baselines()
    assert [b.path.name for b in baselines if b.version > version] == [], "a baseline ahead of pyproject's version"
    newest = newest_release()
    packages = image_packages(newest)
    assert packages, f"{newest.name} declares no package"
    assert all(re.fullmatch(r"bigtwo\.v\d+", name) for name in packages), packages
    assert packages <= proto_packages(PROTO), "a released package is gone from proto/"


def test_baselines_are_never_edited_once_committed() -> None:
    """A committed baseline is changed by no later commit and not in the work tree: re-recording
    one would turn a break of generated clients into the new normal."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for baseline in find_baselines():
        relative = baseline.path.relative_to(ROOT).as_posix()
        log = subprocess.run(
            ["git", "log", "--format=%H", "--", relative], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
        if not log:
            continue  # recorded for the release being made, not committed yet
        assert len(log) == 1, f"{relative} was changed after it was committed ({len(log)} commits)"
        diff = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", relative], cwd=ROOT, check=False)
        assert diff.returncode == 0, f"{relative} differs from its commit"


def test_proto_keeps_the_api_of_every_release(buf: Path) -> None:
    assert check(buf) == []


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        pytest.param(
            SERVICE,
            "uint32 cycle_length = 2;",
            "uint32 cycle_length = 3;",
            'Previously present field "2" with name "cycle_length" on message "NextHintResponse" was deleted.',
            id="field-renumbered",
        ),
        pytest.param(
            TYPES,
            '  // The reason\'s stable RULES.md id, e.g. "does-not-beat".\n  string reason_id = 2;\n',
            "",
            'Previously present field "2" with name "reason_id" on message "Refusal" was deleted.',
            id="field-removed",
        ),
        pytest.param(
            SERVICE,
            "  rpc SplitHand(SplitHandRequest) returns (SplitHandResponse);\n",
            "",
            'Previously present RPC "SplitHand" on service "BigTwoService" was deleted.',
            id="rpc-removed",
        ),
    ],
)
def test_a_breaking_change_fails_with_bufs_message(
    buf: Path, tmp_path: Path, file: Path, old: str, new: str, message: str
) -> None:
    changed = proto_copy(tmp_path)
    edit(changed, file, old, new)
    assert any(message in line for line in breaking(buf, changed, newest_release())), message
    problems = check(buf, proto_dir=changed)
    assert any(message in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        pytest.param(
            SERVICE,
            "  uint32 cycle_length = 2;\n",
            "  uint32 cycle_length = 2;\n  // How many plays beat the table.\n  uint32 beating = 3;\n",
            id="field-added",
        ),
        pytest.param(
            SERVICE,
            "  rpc SplitHand(SplitHandRequest) returns (SplitHandResponse);\n",
            "  rpc SplitHand(SplitHandRequest) returns (SplitHandResponse);\n"
            "  // The presets again.\n  rpc ListRulesets(ListPresetsRequest) returns (ListPresetsResponse);\n",
            id="rpc-added",
        ),
    ],
)
def test_an_additive_change_passes(buf: Path, tmp_path: Path, file: Path, old: str, new: str) -> None:
    changed = proto_copy(tmp_path)
    edit(changed, file, old, new)
    assert breaking(buf, changed, newest_release()) == []
    assert check(buf, proto_dir=changed) == []


def test_a_break_goes_into_a_new_package(buf: Path, tmp_path: Path) -> None:
    """bigtwo.v2 in new files, bigtwo.v1 untouched: FILE rules see only files added."""
    changed = proto_copy(tmp_path)
    v2 = changed / "bigtwo" / "v2"
    v2.mkdir()
    for name in ("types.proto", "service.proto"):
        text = (changed / "bigtwo" / "v1" / name).read_text(encoding="utf-8")
        (v2 / name).write_text(
            text.replace("bigtwo.v1", "bigtwo.v2").replace("bigtwo/v1/", "bigtwo/v2/"), encoding="utf-8"
        )
    edit(changed, Path("bigtwo/v2/service.proto"), "uint32 cycle_length = 2;", "uint32 cycle_length = 3;")
    assert check(buf, proto_dir=changed) == []
    assert proto_packages(changed) == {"bigtwo.v1", "bigtwo.v2"}


def test_a_release_baseline_is_never_re_recorded(buf: Path, tmp_path: Path) -> None:
    releases = tmp_path / "releases"
    shutil.copytree(RELEASES, releases)
    newest = newest_at_or_before(project_version(), find_baselines(releases))
    assert newest is not None
    before = newest.path.read_bytes()
    with pytest.raises(ValueError, match="never re-recorded"):
        record(buf, releases=releases, version=newest.version)
    assert newest.path.read_bytes() == before


def test_a_new_version_cannot_record_a_break(buf: Path, tmp_path: Path) -> None:
    """Moving pyproject's version does not license a break of a released package."""
    releases = tmp_path / "releases"
    shutil.copytree(RELEASES, releases)
    changed = proto_copy(tmp_path)
    edit(changed, SERVICE, "  rpc SplitHand(SplitHandRequest) returns (SplitHandResponse);\n", "")
    newer = Version(f"{project_version().major + 1}.0.0")
    with pytest.raises(ValueError, match='Previously present RPC "SplitHand"'):
        record(buf, proto_dir=changed, releases=releases, version=newer)
    assert not baseline_path(newer, releases).exists()


def test_a_baseline_that_breaks_the_release_before_it_fails(buf: Path, tmp_path: Path) -> None:
    """A broken API recorded by hand (not through record) as a newer release's baseline."""
    releases = tmp_path / "releases"
    shutil.copytree(RELEASES, releases)
    changed = proto_copy(tmp_path)
    edit(changed, SERVICE, "uint32 cycle_length = 2;", "uint32 cycle_length = 3;")
    newer = Version(f"{project_version().major + 1}.0.0")
    build_image(buf, changed, baseline_path(newer, releases))
    problems = check(buf, proto_dir=changed, releases=releases, version=newer)
    assert any(
        problem.startswith(f"{baseline_path(newer).name} against ") and '"cycle_length"' in problem
        for problem in problems
    ), problems


def test_a_stray_file_among_the_baselines_is_an_error(tmp_path: Path) -> None:
    releases = tmp_path / "releases"
    shutil.copytree(RELEASES, releases)
    (releases / "bigtwo-api-latest.binpb").write_bytes(b"")
    with pytest.raises(ValueError, match="not a baseline name"):
        find_baselines(releases)
