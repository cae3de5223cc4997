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
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bigtwo.tools.local_server import LocalServer, descendants, free_port


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


class ServerUnderTest(LocalServer):
    """``bigtwo serve`` on a free port of 127.0.0.1 (``mode``: the name its reports carry, aio), with
    its RSS watched; :meth:`wait_ready` waits for its health, :meth:`stop` always ends it."""

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
        self.token_keys = secrets.token_hex(32)
        home = workdir / f"home-{mode}"
        home.mkdir(parents=True, exist_ok=True)
        port = free_port()
        super().__init__(
            "--host",
            "127.0.0.1",
            "--no-call-log",
            *extra_args,
            command=(bigtwo_executable(), "serve"),
            port=port,
            grace=2,
            keys=self.token_keys,
            home=home,
            env={"HOME": str(home)},
            unset=("BIGTWO_AUTH_TOKEN", "BIGTWO_WORKERS"),
            log=workdir / f"server-{mode}-{port}.log",
            wait=False,
        )
        self.watch = RssWatch(self.process.pid, cap_kb=rss_cap_mb * 1024)
        self.watch.start()

    def rss_kb(self) -> int:
        """The server's RSS now (0 once it is gone)."""
        return self.watch.sample()

    def cpu_seconds(self) -> float:
        """CPU time the server and its worker processes have used so far."""
        return cpu_seconds([self.pid, *descendants(self.pid)])

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    def stop(self, wait: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL (its workers too) if it does not exit; the exit code (None if it
        had to be killed)."""
        self.watch.stop()
        self.watch.family = descendants(self.pid)
        code = super().stop(wait)
        return None if self.killed else code
