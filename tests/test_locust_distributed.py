"""Locust in distributed mode: one master and two workers, headless, against two local replicas.

The master binds 127.0.0.1 on a free port and waits for both workers; each worker plays whole deals
with the locustfile's users, worker by worker in the two ways the locustfile knows (ApplyMove by
state token, PlayStream), so the master's aggregated stats show by their request names that both
workers' users ran. Every answer is checked against the engine by the locustfile itself (a mismatch
is a Locust failure), so "no failure" here means every move was judged as the engine judges it.
The replicas serve TLS, as the example Kubernetes overlay does, and the workers verify them with
the locustfile's BIGTWO_TLS_CA and BIGTWO_SERVER_NAME. The replicas' own counters (/metrics) show
that each replica took calls and that every move the master counts reached a replica. Every process
is stopped, whatever the outcome.

Two more runs guard issue 31's finding, a distributed run that froze and passed with nothing sent:
stream users with malformed requests beside their streams, more users per worker than gevent's
thread pool has threads (this froze every worker before the locustfile widened the pool), and a
worker stopped mid-run (SIGSTOP), which must fail the run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import grpc
import pytest
from client_support import Pki, make_pki
from prometheus_client.parser import text_string_to_metric_families
from service_support import ServerProcess, free_port
from service_support import replicas as started_replicas

# Not importorskip: importing locust monkey-patches this process for gevent, which stalls gRPC here.
pytestmark = [
    pytest.mark.timeout(150),
    pytest.mark.skipif(importlib.util.find_spec("locust") is None, reason="locust is in the dev and [load] extras"),
]

ROOT = Path(__file__).resolve().parents[1]
LOCUSTFILE = ROOT / "deploy" / "locust" / "locustfile.py"
USERS = 6
RUN_SECONDS = 8
HARD_TIMEOUT = 90.0
"""The whole Locust run, start to exit; a loaded machine may take seconds to import Locust and gRPC."""
WORKER_MODES = ("unary", "stream")
"""Worker i plays its deals over WORKER_MODES[i]: ApplyMove requests can only come from worker 0,
PlayStream moves only from worker 1."""


class Processes:
    """The Locust processes, each logging to a file; :meth:`stop_all` ends every one still running."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: list[tuple[subprocess.Popen[bytes], IO[bytes], Path]] = []

    def start(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log_path = self.folder / f"{name}.log"
        log = log_path.open("wb")
        process = subprocess.Popen(command, env=env, cwd=self.folder, stdout=log, stderr=subprocess.STDOUT)
        self.started.append((process, log, log_path))
        return process

    def logs(self) -> str:
        out = []
        for _, log, path in self.started:
            log.flush()
            out.append(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}")
        return "\n".join(out)

    def stop_all(self) -> None:
        for process, _, _ in self.started:
            if process.poll() is None:
                process.terminate()
        for process, log, _ in self.started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path)


@pytest.fixture
def replicas(tmp_path: Path, pki: Pki) -> Iterator[list[ServerProcess]]:
    """Two TLS replicas with /metrics, ready once their health answered over a verified handshake."""
    tls = ("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    ca = grpc.ssl_channel_credentials(root_certificates=pki.ca.read_bytes())
    with started_replicas(
        tmp_path, 2, "--no-call-log", *tls, metrics=True, credentials=ca, server_name="localhost"
    ) as servers:
        yield servers


def counters(server: ServerProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The replica's counters now, by sample name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in samples.items() if n == name and labels.items() <= dict(ls).items())


def locust_command() -> str:
    locust = shutil.which("locust", path=str(Path(sys.executable).parent)) or shutil.which("locust")
    assert locust, "the locust command is installed with the dev extra"
    return locust


def start_run(
    processes: Processes, env: dict[str, str], worker_modes: tuple[str, ...], users: int, seconds: int, out: Path
) -> subprocess.Popen[bytes]:
    """A headless master expecting one worker per mode, and those workers; the master's process."""
    locust, port = locust_command(), free_port()
    master = processes.start(
        "master",
        # The master runs no user, but loads the locustfile for its user classes.
        [
            *(locust, "-f", str(LOCUSTFILE), "--master", "--headless", "--only-summary"),
            *("--master-bind-host", "127.0.0.1", "--master-bind-port", str(port)),
            *("--expect-workers", str(len(worker_modes)), "--expect-workers-max-wait", "60"),
            *("-u", str(users), "-r", str(users), "-t", f"{seconds}s", "--stop-timeout", "2"),
            *("--json-file", str(out / "stats"), "--csv", str(out / "run")),
        ],
        env,
    )
    for index, mode in enumerate(worker_modes):
        processes.start(
            f"worker-{index}",
            [locust, "-f", str(LOCUSTFILE), "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)],
            {**env, "BIGTWO_MODE": mode},
        )
    return master


def plain_env(**more: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BIGTWO_", "LOCUST_"))},
        "PYTHONDONTWRITEBYTECODE": "1",  # Locust imports the locustfile: no __pycache__ in deploy/
        **more,
    }


def test_a_master_and_two_workers_play_checked_deals_on_both_replicas(
    replicas: list[ServerProcess], pki: Pki, tmp_path: Path
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BIGTWO_", "LOCUST_"))},
        "BIGTWO_TARGETS": ",".join(server.target for server in replicas),
        "BIGTWO_SEED": "test-locust-distributed",
        "BIGTWO_REFUSED_SHARE": "0.05",
        "BIGTWO_TLS_CA": str(pki.ca),
        "BIGTWO_SERVER_NAME": "localhost",
        "PYTHONDONTWRITEBYTECODE": "1",  # Locust imports the locustfile: no __pycache__ in deploy/
    }
    processes = Processes(tmp_path)
    try:
        master = start_run(processes, env, WORKER_MODES, USERS, RUN_SECONDS, tmp_path)
        try:
            code = master.wait(timeout=HARD_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the Locust master ran past {HARD_TIMEOUT:.0f} s\n{processes.logs()}")
        master_log = (tmp_path / "master.log").read_text(errors="replace")
        failures = (tmp_path / "run_failures.csv").read_text()
        assert code == 0, f"master exit {code}; failures:\n{failures}\n{processes.logs()}"
        assert "2 workers connected" in master_log, master_log
        assert f"Sending spawn jobs of {USERS} users" in master_log and "to 2 ready workers" in master_log

        stats = {entry["name"]: entry for entry in json.loads((tmp_path / "stats.json").read_text())}
        requests = {name: entry["num_requests"] for name, entry in stats.items()}
        assert sum(entry["num_failures"] for entry in stats.values()) == 0, failures
        assert len(failures.splitlines()) == 1, f"only the header: {failures}"
        # One worker's users only use ApplyMove, the other's only PlayStream: both ran.
        assert requests.get("ApplyMove", 0) > 0 and requests.get("Deal", 0) > 0, requests
        assert requests.get("PlayStream move", 0) > 0 and requests.get("PlayStream open", 0) > 0, requests
        moves = {
            "accepted": requests["ApplyMove"] + requests["PlayStream move"],
            "refused": requests.get("ApplyMove (refused)", 0) + requests.get("PlayStream move (refused)", 0),
        }
        assert moves["refused"] > 0, "the refused share reached the replicas"

        seen = [counters(server) for server in replicas]
        for server, samples in zip(replicas, seen, strict=True):
            for method in ("Deal", "ApplyMove", "PlayStream"):
                assert total(samples, "bigtwo_rpc_calls_total", method=method) > 0, (server.target, method)
        # Every move the master counts was judged by a replica (a replica may have judged a few more:
        # the moves in flight when the run ended, whose answers no user recorded).
        for result, counted in moves.items():
            judged = sum(total(samples, "bigtwo_moves_total", result=result) for samples in seen)
            assert judged >= counted > 0, (result, judged, counted)
    finally:
        processes.stop_all()
    assert all(process.poll() is not None for process, _, _ in processes.started)


@pytest.fixture
def plain_replicas(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    with started_replicas(tmp_path, 2, "--no-call-log") as servers:
        yield servers


STREAM_USERS = 48
"""24 stream users a worker, each with three connections to each replica and a malformed request
beside every move: more than gevent's 10 threads, and well past the ~20 at which runs froze within a
second or two before the locustfile widened the pool."""


def test_stream_users_with_malformed_requests_beside_them_keep_playing(
    plain_replicas: list[ServerProcess], tmp_path: Path
) -> None:
    """Issue 31: one master, two stream workers, malformed requests beside the streams. Before the
    fix the users' open streams held every thread of gevent's pool while their users waited for one
    to send a malformed request: nothing more was sent, and the run passed."""
    env = plain_env(
        BIGTWO_TARGETS=",".join(server.target for server in plain_replicas),
        BIGTWO_SEED="test-locust-freeze",
        BIGTWO_MALFORMED_SHARE="1",
        BIGTWO_CHANNELS="3",
    )
    processes = Processes(tmp_path)
    try:
        master = start_run(processes, env, ("stream", "stream"), STREAM_USERS, RUN_SECONDS, tmp_path)
        try:
            code = master.wait(timeout=HARD_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the Locust master ran past {HARD_TIMEOUT:.0f} s\n{processes.logs()}")
        assert code == 0, f"master exit {code}\n{processes.logs()}"
        stats = {entry["name"]: entry for entry in json.loads((tmp_path / "stats.json").read_text())}
        requests = {name: entry["num_requests"] for name, entry in stats.items()}
        # A frozen worker sends its users' stream openings and a malformed request or two, then
        # nothing: each user playing on makes dozens of moves a second on any machine.
        assert requests.get("PlayStream move", 0) > 20 * STREAM_USERS, requests
        assert requests.get("malformed", 0) > 20 * STREAM_USERS, requests
    finally:
        processes.stop_all()


PROBE = """
import sys
from gevent import monkey

monkey.patch_all()  # as Locust does, before the locustfile is imported
import importlib.util
import gevent
spec = importlib.util.spec_from_file_location("locustfile", sys.argv[1])
locustfile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(locustfile)
import grpc
from bigtwo.v1 import service_pb2 as api, service_pb2_grpc as rpc, types_pb2 as pb

target, streams = sys.argv[2], int(sys.argv[3])
if sys.argv[4] == "widen":
    locustfile._widen_thread_pool(streams)  # what on_start does for that many users
opened = []
for _ in range(streams):  # each on its own connection, open and idle, as between two moves
    feed = locustfile._Feed()
    log = pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code="0000003NQK8N1")
    feed.items.put(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
    channel = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
    responses = rpc.BigTwoServiceStub(channel).PlayStream(iter(feed), timeout=60)
    next(responses)
    opened.append((feed, responses))
gevent.sleep(0.5)
stub = rpc.BigTwoServiceStub(grpc.insecure_channel(target))
try:
    with gevent.Timeout(5):
        stub.ListPresets(api.ListPresetsRequest(), timeout=4)  # a malformed request's blocking call
    print("answered")
except gevent.Timeout:
    print("frozen")
for feed, responses in opened:
    feed.items.put(None)
    responses.cancel()
"""


@pytest.mark.parametrize(("streams", "pool", "outcome"), [(9, "default", "frozen"), (24, "widen", "answered")])
def test_open_streams_hold_gevent_threads_until_the_pool_is_widened(
    plain_replicas: list[ServerProcess], tmp_path: Path, streams: int, pool: str, outcome: str
) -> None:
    """The cause, shown on its own: under gevent each idle open stream's connection keeps a thread
    of the hub's pool (10), so with 9 open a blocking call beside them never gets one; the pool the
    locustfile sizes for its users answers it with 24 open."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(script), str(LOCUSTFILE), plain_replicas[0].target, str(streams), pool],
        env=plain_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1:] == [outcome], done.stdout + done.stderr[-3000:]


def test_a_run_that_stalls_or_loses_a_worker_fails(plain_replicas: list[ServerProcess], tmp_path: Path) -> None:
    """A worker stopped (SIGSTOP) mid-run sends no heartbeat or report again: the master must exit
    1 and say why, where Locust alone exits 0 with the other worker's figures."""
    env = plain_env(BIGTWO_TARGETS=",".join(server.target for server in plain_replicas), BIGTWO_SEED="stall")
    processes = Processes(tmp_path)
    try:
        master = start_run(processes, env, ("unary", "unary"), 4, 14, tmp_path)
        log = tmp_path / "master.log"
        deadline = time.monotonic() + HARD_TIMEOUT
        while "Sending spawn jobs" not in log.read_text(errors="replace"):
            assert master.poll() is None and time.monotonic() < deadline, processes.logs()
            time.sleep(0.2)
        time.sleep(5.0)  # both workers play and have reported (every 3 s)
        stopped = processes.started[2][0]
        stopped.send_signal(signal.SIGSTOP)
        try:
            code = master.wait(timeout=HARD_TIMEOUT)
        finally:
            stopped.send_signal(signal.SIGCONT)
        text = log.read_text(errors="replace")
        assert code == 1, f"master exit {code}\n{processes.logs()}"
        assert "run failed: worker" in text, text
    finally:
        processes.stop_all()


def test_fewer_requests_than_asked_fail_the_run(plain_replicas: list[ServerProcess], tmp_path: Path) -> None:
    """A local run asked for more requests (--min-requests) than it could make exits 1 with the
    count in words; the same run with a reachable count exits 0."""
    env = plain_env(BIGTWO_TARGETS=plain_replicas[0].target)
    base = [locust_command(), "-f", str(LOCUSTFILE), "--headless", "--only-summary", "-u", "2", "-r", "2", "-t", "3s"]
    for asked, expected in ((10**9, 1), (1, 0)):  # one request: reachable however loaded the machine is
        done = subprocess.run(
            [*base, "--min-requests", str(asked)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=HARD_TIMEOUT,
        )
        assert done.returncode == expected, done.stderr[-3000:]
        assert ("fewer than the 1000000000 expected" in done.stderr) == bool(expected), done.stderr[-3000:]
