"""``bigtwo tournament --dask``: the same tournament on a local Dask cluster reports exactly what the
one-process run reports (whatever finishes first, and after a worker is killed mid-run), refuses
``--jobs`` beside it, and without Dask says how to install it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bigtwo.cli.main import main as cli_main
from bigtwo.engine import Ruleset
from bigtwo.tools.cluster import INSTALL_HINT, DaskTarget, dask_client
from bigtwo.tools.tournament import TournamentResult, run_tournament

LEVELS = ["great", "good", "random"]
TIMING = "decide_ms_p95"  # measured, not computed: the one field that differs between runs


def without_timing(report: dict[str, Any]) -> bytes:
    """The report as JSON bytes, the decision times left out."""
    for summary in report["levels"].values():
        del summary[TIMING]
    return json.dumps(report).encode()


def tournament_json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    argv = ["tournament", "--levels", ",".join(LEVELS), "--deals", "24", "--seed", "5", "--json", "--pairs"]
    assert cli_main([*argv, "--no-plot", *flags]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_two_local_workers_report_what_one_process_reports(capsys: pytest.CaptureFixture[str]) -> None:
    one = tournament_json(capsys, "--jobs", "1", "--no-progress")
    # With its progress bar (transient with --json): the bar is fed by batches finishing on the cluster.
    cluster = tournament_json(capsys, "--dask", "local:2")
    assert one["deals"] == cluster["deals"] == 24
    assert set(one["pairs"]) == {"great-good", "great-random", "good-random"}
    assert without_timing(cluster) == without_timing(one)


def test_dask_beside_jobs_or_a_malformed_target_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["tournament", "--dask", "local:2", "--jobs", "2", "--deals", "2", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "--dask and --jobs 2" in err and "give one" in err
    assert cli_main(["tournament", "--dask", "local:two", "--deals", "2", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "local:N" in err and "tcp://HOST:PORT" in err


def test_a_worker_killed_mid_run_loses_no_deal() -> None:
    ruleset = Ruleset.from_mapping({"preset": "classic"})
    deals = 240  # 16 batches of 15 deals, each a good tenth of a second: the kill lands mid-run
    alone = run_tournament(ruleset, LEVELS, deals, 11)
    done: list[int] = []
    killed: dict[str, Any] = {}
    with dask_client(DaskTarget(workers=2)) as client:

        def kill_a_busy_worker(n: int) -> None:
            done.append(n)
            if killed:
                return
            busy = [address for address, keys in client.processing().items() if keys]
            if busy:
                killed["address"] = busy[0]
                killed["at"] = sum(done)
                # The worker process exits at once, its tasks unfinished, without answering (hence
                # on_error="ignore"); its nanny starts a new one.
                client.run(os._exit, 1, workers=[busy[0]], on_error="ignore")

        on_cluster = run_tournament(ruleset, LEVELS, deals, 11, client=client, progress=kill_a_busy_worker)
        client.wait_for_workers(2, timeout=60)
        survivors = set(client.scheduler_info()["workers"])
    assert killed, "no batch was running on a worker after the first one finished"
    assert killed["at"] < deals
    assert killed["address"] not in survivors  # the killed process is gone; its nanny started another
    assert sum(done) == deals  # every batch counted once, redone ones included
    assert_same(on_cluster, alone)


def assert_same(got: TournamentResult, want: TournamentResult) -> None:
    assert got.points == want.points
    assert without_timing(got.to_json(pairs=True)) == without_timing(want.to_json(pairs=True))


def test_without_distributed_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['distributed'] = None  # import distributed now raises ImportError\n"
        "from bigtwo.cli.main import main\n"
        "sys.exit(main(['tournament', '--dask', 'local:2', '--deals', '2', '--no-plot', '--no-progress']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2  # a usage matter: --dask cannot be used until the extra is installed
    assert done.stderr.startswith("bigtwo tournament: --dask needs Dask")
    assert INSTALL_HINT in done.stderr
    assert "Traceback" not in done.stderr and "bug" not in done.stderr
    assert done.stdout == ""
