"""``bigtwo audit`` at scale: the same rows in process, in a process pool and on Dask (a worker
killed mid-run included), tar archives with tampered and hostile members, fsspec URLs, the
streaming JSON-lines report, and the words said when Dask or a URL's package is missing.

One local Dask cluster of two worker processes serves the whole module."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bigtwo.cli.main import main as cli_main
from bigtwo.tools.audit_run import (
    FAILURES_SHOWN,
    AuditRow,
    AuditSettings,
    AuditTally,
    InProcess,
    JsonLinesReport,
    OnDask,
    ProcessPool,
    audit_rows,
)
from bigtwo.tools.cluster import DaskTarget, dask_client
from bigtwo.tools.replay_sources import HEADER_BYTES, SourceError, list_sources
from bigtwo.tools.sample_matches import random_match_text

pytest.importorskip("distributed")

KEY = b"audit-dask-test-key"
FILES = 120
SETTINGS = AuditSettings(KEY)


def _tampered(text: str) -> str:
    return text.replace('comment = "', 'comment = "edited ', 1)


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``FILES`` signed one-deal replays in two folders, one of them edited after it was signed,
    and one file that is not a replay at all."""
    root = tmp_path_factory.mktemp("replays")
    for index in range(FILES):
        folder = root / ("a" if index % 2 else "b")
        folder.mkdir(exist_ok=True)
        text = random_match_text(1, index, f"test file {index}", KEY)
        (folder / f"match-{index:04d}.toml").write_text(_tampered(text) if index == 7 else text, encoding="utf-8")
    (root / "b" / "garbage.toml").write_text("this is not toml = = =\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def baseline(replays: Path) -> list[AuditRow]:
    return list(audit_rows(list_sources([str(replays)]), SETTINGS, InProcess()))


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with dask_client(DaskTarget(workers=2)) as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def test_the_baseline_has_every_replay_and_its_failures(baseline: list[AuditRow]) -> None:
    assert len(baseline) == FILES + 1
    failed = {Path(row.path).name: row.verdict for row in baseline if not row.ok}
    assert failed.keys() == {"match-0007.toml", "garbage.toml"}
    assert failed["garbage.toml"] == "format-error"
    assert all(row.signature == "valid" and row.deals == 1 for row in baseline if row.ok)


def test_every_runner_gives_the_same_rows(replays: Path, baseline: list[AuditRow], cluster: Any) -> None:
    names = list_sources([str(replays)])
    for batch_files in (1, 5, 32):
        assert list(audit_rows(names, SETTINGS, OnDask(cluster), batch_files=batch_files)) == baseline
    assert list(audit_rows(names, SETTINGS, ProcessPool(2), batch_files=7)) == baseline


def test_a_worker_lost_mid_run_loses_no_row(replays: Path, baseline: list[AuditRow], cluster: Any) -> None:
    names = list_sources([str(replays)])
    pids: dict[str, int] = cluster.run(os.getpid)
    victim = sorted(pids)[0]
    done: list[int] = []

    def progress(count: int) -> None:
        done.append(count)
        if len(done) == 3:  # a few batches in, most still to come: kill one worker outright
            os.kill(pids[victim], signal.SIGKILL)

    rows = list(audit_rows(names, SETTINGS, OnDask(cluster), batch_files=2, progress=progress))
    assert rows == baseline
    assert sum(done) == len(names) and len(done) == (len(names) + 1) // 2
    cluster.wait_for_workers(2, timeout=60)
    assert pids[victim] not in cluster.run(os.getpid).values()  # the worker was really lost, and replaced


def test_the_command_on_a_running_scheduler(
    replays: Path, baseline: list[AuditRow], cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "key"
    key.write_bytes(KEY + b"\n")
    report, lines = tmp_path / "report.json", tmp_path / "report.jsonl"
    address = cluster.scheduler.address
    argv = ["audit", str(replays), "--key", str(key), "--dask", address, "--json", str(report), "--jsonl", str(lines)]
    assert cli_main(argv) == 1
    data = json.loads(report.read_text())
    assert data["results"] == sorted((row.as_dict() for row in baseline), key=lambda r: r["path"])
    assert data["failed"] == 2 and data["files"] == FILES + 1 and data["jobs"] == 2
    streamed = [json.loads(line) for line in lines.read_text().splitlines()]
    assert streamed[:-1] == [row.as_dict() for row in baseline]
    assert f"the Dask scheduler at {address})" in " ".join(capsys.readouterr().out.split())
    assert cli_main(["audit", str(replays), "--dask", address, "--jobs", "2"]) == 2
    assert "exclusive" in capsys.readouterr().err


# -- the streaming report --------------------------------------------------------------------------


def test_the_jsonl_report_streams_in_input_order_then_sums_up(
    replays: Path, baseline: list[AuditRow], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "key"
    key.write_bytes(KEY)
    out = tmp_path / "rows.jsonl"
    assert (
        cli_main(
            ["audit", str(replays / "b"), str(replays / "a"), "--key", str(key), "-j", "2", "-q", "--jsonl", str(out)]
        )
        == 1
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    rows, summary = lines[:-1], lines[-1]
    assert [r["path"] for r in rows] == list_sources([str(replays / "b"), str(replays / "a")])
    assert all("format" not in r for r in rows)
    assert summary["format"] == "bigtwo-audit-summary/1"
    assert summary["files"] == FILES + 1 and summary["failed"] == 2 and summary["valid"] == FILES - 1
    assert summary["deals"] == sum(r["deals"] for r in rows) and summary["jobs"] == 2
    assert summary["by_verdict"]["format-error"] == 1
    assert "JSON-lines report written to" in capsys.readouterr().out


def test_rows_are_written_as_they_arrive_and_only_the_first_failures_kept() -> None:
    written = io.StringIO()
    report = JsonLinesReport(written)
    failing = (AuditRow(f"f{i}.toml", "format-error", False, "bad") for i in range(FAILURES_SHOWN + 5))
    tally = AuditTally()
    for number, row in enumerate(report.rows(failing), start=1):
        assert written.getvalue().count("\n") == number  # each row is out before the next is made
        tally.add(row)
    assert tally.failed == FAILURES_SHOWN + 5 and len(tally.failures) == FAILURES_SHOWN
    assert [row.path for row in tally.failures] == [f"f{i}.toml" for i in range(FAILURES_SHOWN)]
    report.finish(tally, 1.0, 1, "1 process")
    assert json.loads(written.getvalue().splitlines()[-1])["failed"] == FAILURES_SHOWN + 5


# -- archives --------------------------------------------------------------------------------------


def _member(tar: tarfile.TarFile, name: str, data: bytes, **fields: Any) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    for field, value in fields.items():
        setattr(info, field, value)
    tar.addfile(info, io.BytesIO(data) if info.isreg() else None)


def _archive(path: Path, replays: Path, hostile: bool) -> Path:
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.add(replays / "a", arcname="replays", filter=lambda info: info)
        _member(tar, "replays/notes.txt", b"not a replay: skipped, as in a folder")
        if hostile:
            _member(tar, "replays/link.toml", b"", type=tarfile.SYMTYPE, linkname="/etc/passwd")
            _member(tar, "../escape.toml", b"x = 1\n")
            _member(tar, "/absolute.toml", b"x = 1\n")
            _member(tar, "replays/match-0001.toml", b"x = 1\n")  # a second member of the same name
            _member(tar, "replays/huge.toml", b" " * (1 << 20 | 1))
            _member(tar, "replays/fifo.toml", b"", type=tarfile.FIFOTYPE)
            _member(tar, "replays/last.toml", (replays / "a" / "match-0003.toml").read_bytes())
    return path


def test_an_archive_is_audited_member_by_member(replays: Path, tmp_path: Path, cluster: Any) -> None:
    archive = _archive(tmp_path / "day.tar.gz", replays, hostile=False)
    rows = list(audit_rows(list_sources([str(archive)]), SETTINGS, InProcess()))
    files = sorted((replays / "a").glob("*.toml"))
    assert sorted(row.path for row in rows) == sorted(f"{archive}#replays/{f.name}" for f in files)
    as_files = {Path(row.path).name: row for row in audit_rows([str(f) for f in files], SETTINGS, InProcess())}
    for row in rows:
        alone = as_files[row.path.rsplit("/", 1)[1]]
        assert (row.verdict, row.signature, row.actions) == (alone.verdict, alone.signature, alone.actions)
    tampered = [row for row in rows if not row.ok]
    assert [row.path.rsplit("/", 1)[1] for row in tampered] == ["match-0007.toml"]
    plain = tmp_path / "day.tar"
    with tarfile.open(archive) as packed, tarfile.open(plain, "w") as unpacked:
        for member in packed:
            unpacked.addfile(member, packed.extractfile(member) if member.isreg() else None)
    both = list_sources([str(archive), str(plain)])
    expected = rows + [
        AuditRow(**{**row.as_dict(), "path": row.path.replace("day.tar.gz#", "day.tar#")}) for row in rows
    ]
    assert list(audit_rows(both, SETTINGS, OnDask(cluster))) == expected


def test_hostile_members_are_refused_as_rows(replays: Path, tmp_path: Path) -> None:
    archive = _archive(tmp_path / "hostile.tgz", replays, hostile=True)
    rows = [(row.path.split("#", 1)[1], row) for row in audit_rows([str(archive)], SETTINGS, InProcess())]
    refused = {name: row.message for name, row in rows if row.verdict == "format-error"}
    assert set(refused) == {
        "replays/link.toml",
        "../escape.toml",
        "/absolute.toml",
        "replays/match-0001.toml",
        "replays/huge.toml",
        "replays/fifo.toml",
    }
    assert "regular file" in refused["replays/link.toml"] and "regular file" in refused["replays/fifo.toml"]
    assert "leaves the archive" in refused["../escape.toml"] and "leaves the archive" in refused["/absolute.toml"]
    assert refused["replays/match-0001.toml"] == "a second member of the same name"
    assert "larger than" in refused["replays/huge.toml"]
    first = next(row for name, row in rows if name == "replays/match-0001.toml")
    assert first.ok  # the first of that name was audited
    assert rows[-1][0] == "replays/last.toml" and rows[-1][1].ok  # and so are members after the hostile ones
    assert all(name != "replays/notes.txt" for name, _ in rows)


def test_a_header_bomb_and_a_damaged_archive_are_rows(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.tar.gz"
    with tarfile.open(bomb, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("x.toml")
        info.pax_headers = {"comment": "x" * (2 * HEADER_BYTES)}  # compresses to a few kB
        tar.addfile(info, io.BytesIO(b""))
    assert bomb.stat().st_size < HEADER_BYTES // 16
    (row,) = audit_rows([str(bomb)], SETTINGS, InProcess())
    assert (row.path, row.verdict) == (str(bomb), "format-error") and "header" in row.message
    damaged = tmp_path / "cut.tar.gz"
    damaged.write_bytes(b"\x1f\x8b" + os.urandom(200))
    (row,) = audit_rows([str(damaged)], SETTINGS, InProcess())
    assert row.verdict == "format-error" and "archive" in row.message
    empty = tmp_path / "empty.tar"
    tarfile.open(empty, "w").close()
    (row,) = audit_rows([str(empty)], SETTINGS, InProcess())
    assert "holds no replay files" in row.message


# -- URLs ------------------------------------------------------------------------------------------


def test_a_file_url_gives_the_rows_of_the_path(replays: Path, baseline: list[AuditRow]) -> None:
    names = list_sources([f"file://{replays}"])
    assert names == [f"file://{path}" for path in list_sources([str(replays)])]
    rows = list(audit_rows(names, SETTINGS, InProcess()))
    assert [row.as_dict() | {"path": ""} for row in rows] == [row.as_dict() | {"path": ""} for row in baseline]
    assert list_sources([f"file://{replays}/a/match-000*.toml"]) == [
        f"file://{replays}/a/match-{i:04d}.toml" for i in (1, 3, 5, 7, 9)
    ]


@pytest.fixture()
def memory_store(replays: Path, tmp_path: Path) -> Iterator[str]:
    """A ``memory://`` folder holding five replays and an archive of the ``a`` folder."""
    import fsspec

    fs = fsspec.filesystem("memory")
    for path in sorted((replays / "b").glob("match-000*.toml")):
        fs.pipe(f"/audit-test/day/{path.name}", path.read_bytes())
    fs.pipe("/audit-test/day/all.tar.gz", _archive(tmp_path / "all.tar.gz", replays, hostile=False).read_bytes())
    yield "memory://audit-test/day"
    fs.rm("/audit-test", recursive=True)


def test_a_memory_url_in_process_and_on_an_in_process_cluster(
    memory_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from distributed import Client

    names = list_sources([memory_store])
    assert names[0] == "memory:///audit-test/day/all.tar.gz" and len(names) == 6
    rows = list(audit_rows(names, SETTINGS, InProcess()))
    assert len(rows) == FILES // 2 + 5 and rows[0].path.startswith("memory:///audit-test/day/all.tar.gz#replays/")
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as client:
        assert list(audit_rows(names, SETTINGS, OnDask(client), batch_files=2)) == rows
    assert (
        cli_main(["audit", memory_store, "--jsonl", "-", "-q"]) == 1
    )  # no key: the edited match-0007 still breaks its chain
    printed = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["path"] for line in printed[:-1]] == [row.path for row in rows]


# -- what is said when something is missing --------------------------------------------------------


def test_missing_paths_and_url_packages_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SourceError, match="no such file or folder"):
        list_sources([str(tmp_path / "missing")])
    with pytest.raises(SourceError, match="no such file or folder"):
        list_sources([f"file://{tmp_path}/missing"])
    with pytest.raises(SourceError, match="no replay files"):
        list_sources([str(tmp_path)])
    try:
        import s3fs  # noqa: F401
    except ImportError:
        with pytest.raises(SourceError, match="pip install s3fs"):
            list_sources(["s3://bucket/day/"])
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(SourceError, match=r"pip install 'bigtwo\[distributed\]'"):
        list_sources([f"file://{tmp_path}"])


def test_without_dask_the_command_says_how_to_install_it(replays: Path) -> None:
    program = (
        "import sys; sys.modules['distributed'] = None; from bigtwo.cli.main import main; "
        f"raise SystemExit(main(['audit', {str(replays)!r}, '--dask', 'local:2']))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'bigtwo[distributed]'" in done.stderr and "Traceback" not in done.stderr


# -- the bench -------------------------------------------------------------------------------------


def test_the_bench_audits_archives_in_every_mode_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bigtwo.tools import audit_dask_bench

    keep = tmp_path / "bench"
    argv = ["--deals", "240", "--per-archive", "40", "--batch-files", "4", "--keep", str(keep)]
    assert audit_dask_bench.main(argv) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["deals"] == 240 and line["sources"] == 6 and line["rows_identical"] is True
    for mode in ("in_process", "pool_2", "dask_1", "dask_2"):
        assert line[mode]["valid"] == 240 and line[mode]["failed"] == 0
    archives = sorted(keep.glob("*.tar.gz"))
    assert len(archives) == 6
    written = [(path.stat().st_mtime_ns, path.stat().st_ino) for path in archives]
    assert audit_dask_bench.main(argv) == 0  # the kept replays are found again, not written anew
    again = json.loads(capsys.readouterr().out)
    assert again["rows_identical"] is True and again["dask_2"]["valid"] == 240
    assert [(path.stat().st_mtime_ns, path.stat().st_ino) for path in sorted(keep.glob("*.tar.gz"))] == written
