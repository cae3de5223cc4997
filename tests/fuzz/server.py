"""The server under test: ``bigtwo serve`` in a subprocess, with a fresh signing key and a home of
its own in a temporary folder, watched for its memory (its worker processes' included) and its
life.

The process is started from the outside (the installed ``bigtwo`` script), so a crash, a hang or
a runaway allocation in it is seen as a client sees it. A watchdog thread reads ``VmRSS`` from
``/proc`` and kills the server when it passes a hard cap: a request that makes the server allocate
without bound must fail the run, not exhaust the machine the fuzzer shares with others.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

SERVICE = "bigtwo.v1.BigTwoService"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bigtwo_executable() -> str:
    """The ``bigtwo`` script beside the running interpreter (the project's venv), else on PATH."""
    beside = Path(sys.executable).parent / "bigtwo"
    if beside.exists():
        return str(beside)
    found = shutil.which("bigtwo")
    if found is None:
        raise FileNotFoundError("no bigtwo executable beside the interpreter or on PATH (run make venv)")
    return found


def rss_kb(pid: int) -> int | None:
    """The resident set size of ``pid`` in KiB, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the server's worker processes, say), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, ()))
    return found


def cpu_seconds(pids: Sequence[int]) -> float:
    """User plus system CPU time of the live processes among ``pids``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def tree_rss_kb(pid: int, family: Sequence[int] = ()) -> int | None:
    """The RSS of ``pid`` plus that of ``family`` (its descendants), or None when ``pid`` is gone:
    a server that runs heavy calls in worker processes holds their memory too."""
    own = rss_kb(pid)
    if own is None:
        return None
    return own + sum(rss_kb(child) or 0 for child in family)


@dataclass
class RssWatch:
    """Samples the server's RSS on a thread of its own, so a busy client loop cannot delay it."""

    pid: int
    interval: float = 0.1
    cap_kb: int = 0
    """Kill the server above this RSS (0: never)."""
    peak_kb: int = 0
    last_kb: int = 0
    killed_at_kb: int = 0
    family: list[int] = field(default_factory=list)
    """The server's descendants, looked up again now and then (workers may be started later)."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rss-watch", daemon=True)
        self._thread.start()

    def sample(self) -> int:
        """The RSS of the server and its worker processes now (0 once the server is gone)."""
        self.family = descendants(self.pid)
        value = tree_rss_kb(self.pid, self.family) or 0
        if value:
            self.last_kb = value
            self.peak_kb = max(self.peak_kb, value)
        return value

    def _run(self) -> None:
        ticks = 0
        while not self._stop.wait(self.interval):
            ticks += 1
            if ticks % 10 == 0:
                self.family = descendants(self.pid)
            value = tree_rss_kb(self.pid, self.family) or 0
            if value:
                self.last_kb = value
                self.peak_kb = max(self.peak_kb, value)
            if self.cap_kb and value > self.cap_kb:
                self.killed_at_kb = value
                for pid in [self.pid, *self.family]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                return
            if not value:
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)


class ServerUnderTest:
    """``bigtwo serve`` on a free port of 127.0.0.1 (``mode``: the name its reports carry, aio);
    :meth:`stop` always ends it."""

    def __init__(
        self,
        mode: str,
        workdir: Path,
        *,
        rss_cap_mb: int = 3072,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.mode = mode
        self.workdir = workdir
        self.port = free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.token_keys = secrets.token_hex(32)
        home = workdir / f"home-{mode}"
        home.mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / f"server-{mode}-{self.port}.log"
        environment = {**os.environ, "BIGTWO_TOKEN_KEYS": self.token_keys, "HOME": str(home), "BIGTWO_HOME": str(home)}
        for name in ("PROMETHEUS_MULTIPROC_DIR", "BIGTWO_AUTH_TOKEN", "BIGTWO_TOKEN_KEYS_FILE", "BIGTWO_WORKERS"):
            environment.pop(name, None)
        command = [
            bigtwo_executable(),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--metrics-port",
            "0",
            "--grace",
            "2",
            "--no-call-log",
            *extra_args,
        ]
        self._log_file = self.log_path.open("wb")
        self.process = subprocess.Popen(command, env=environment, stdout=self._log_file, stderr=subprocess.STDOUT)
        self.watch = RssWatch(self.process.pid, cap_kb=rss_cap_mb * 1024)
        self.watch.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_healthy(self, timeout: float = 120) -> None:
        """Block until the standard health service says the Big Two service is SERVING."""
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(self.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while True:
                if not self.alive():
                    raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log_tail()}")
                try:
                    answer = stub.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=1)
                    if answer.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"server not healthy after {timeout} s:\n{self.log_tail()}")
                time.sleep(0.1)

    def rss_kb(self) -> int:
        """The server's RSS now (0 once it is gone)."""
        return self.watch.sample()

    def cpu_seconds(self) -> float:
        """CPU time the server and its worker processes have used so far."""
        return cpu_seconds([self.pid, *descendants(self.pid)])

    def log_tail(self, lines: int = 40) -> str:
        self._log_file.flush()
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def log_text(self) -> str:
        self._log_file.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL (its workers too) if it does not exit; the exit code (None if it
        had to be killed)."""
        self.watch.stop()
        self.watch.family = descendants(self.pid)
        code: int | None
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                code = self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                for pid in [self.pid, *self.watch.family]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self.process.wait()
                code = None
        else:
            code = self.process.returncode
        self._log_file.close()
        return code

    def __enter__(self) -> ServerUnderTest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
