"""A server of one's own on 127.0.0.1: free loopback ports, ``bigtwo serve`` (or a bench's server) in
a subprocess, waited for until its health service answers SERVING, its output in a log file, stopped
with SIGTERM and killed after a grace.

The one home of this for the command (``bigtwo play``'s own server), the tools (the benches,
``bigtwo loadtest --spawn``) and the tests (tests/service_support.py builds its ``ServerProcess`` on
it). What differs between them (flags, environment, which ports, the log file, the working folder,
a cgroup to enter) is a keyword of :class:`LocalServer`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Self

SERVE: tuple[str, ...] = (sys.executable, "-m", "bigtwo.cli.main", "serve")
"""``bigtwo serve`` of the running interpreter's install (a checkout's, under the dev install)."""

HEALTH_SERVICE = "bigtwo.v1.BigTwoService"
"""The name whose health says the Big Two service itself serves (the server sets it with "")."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the system's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (a server's worker processes, say), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, ()))
    return found


class LocalServer:
    """``bigtwo serve`` (``command``: another server's command line) on 127.0.0.1 in a subprocess.

    ``args`` are more flags for the command. The ports are chosen free once and kept across
    :meth:`start` (a server started again answers where the first did): ``port`` (free when not
    given), a ``/metrics`` port with ``metrics`` (else ``--metrics-port 0``), the browser port with
    ``web``, the plaintext health port with ``health``. ``grace`` is passed as ``--grace``.

    The environment is this process's (only its non-``BIGTWO_*`` variables with ``clean``), without
    ``PROMETHEUS_MULTIPROC_DIR`` and the names in ``unset``; ``keys`` sets ``BIGTWO_TOKEN_KEYS``
    (and drops ``BIGTWO_TOKEN_KEYS_FILE``), ``home`` sets ``BIGTWO_HOME``, ``env`` is applied last.
    Output goes to ``log`` (a temporary file, removed by :meth:`stop`, when not given). ``cwd``,
    ``preexec_fn`` (entering a cgroup, say) and ``own_session`` (Ctrl-C at the terminal does not
    reach it) go to :class:`subprocess.Popen`. With ``start`` it starts at once, and with ``wait``
    too, waits until it serves; a server that does not is stopped before the error is raised.
    """

    def __init__(
        self,
        *args: str,
        command: Sequence[str] = SERVE,
        port: int | None = None,
        metrics: bool = False,
        web: bool = False,
        health: bool = False,
        grace: float | None = None,
        keys: str | None = None,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        unset: Iterable[str] = (),
        clean: bool = False,
        log: Path | None = None,
        cwd: Path | None = None,
        preexec_fn: Callable[[], None] | None = None,
        own_session: bool = False,
        start: bool = True,
        wait: bool = True,
    ) -> None:
        self.port = port or free_port()
        self.metrics_port = free_port() if metrics else 0
        self.web_port = free_port() if web else 0
        self.health_port = free_port() if health else 0
        self.target = f"127.0.0.1:{self.port}"
        self.command = [*command, "--port", str(self.port), "--metrics-port", str(self.metrics_port)]
        for flag, value in (("--web-port", self.web_port), ("--health-port", self.health_port), ("--grace", grace)):
            if value:
                self.command += [flag, str(value)]
        self.command += args
        environment = {k: v for k, v in os.environ.items() if not (clean and k.startswith("BIGTWO_"))}
        for name in ("PROMETHEUS_MULTIPROC_DIR", *unset, *(("BIGTWO_TOKEN_KEYS_FILE",) if keys is not None else ())):
            environment.pop(name, None)
        if keys is not None:
            environment["BIGTWO_TOKEN_KEYS"] = keys
        if home is not None:
            environment["BIGTWO_HOME"] = str(home)
        self.env = {**environment, **(env or {})}
        self._temporary_log = log is None
        if log is None:
            handle, name = tempfile.mkstemp(prefix="bigtwo-server-", suffix=".log")
            os.close(handle)
            log = Path(name)
        self.log_path = log
        self._log_file: IO[bytes] | None = None
        self._popen: dict[str, Any] = {"cwd": cwd, "preexec_fn": preexec_fn, "start_new_session": own_session}
        self._process: subprocess.Popen[bytes] | None = None
        self.killed = False
        """Whether :meth:`stop` had to kill it (it did not end within its wait after SIGTERM)."""
        if start:
            self.start()
            if wait:
                self.wait_ready()

    # -- life -------------------------------------------------------------------------------------

    @property
    def process(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise RuntimeError("the server was not started")
        return self._process

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        """Whether it was started and has not ended."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start it (again, on the same ports, writing its log afresh)."""
        if self._log_file is not None:
            self._log_file.close()
        self._log_file = self.log_path.open("wb")
        self._process = subprocess.Popen(
            self.command,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            **self._popen,
        )

    def wait_ready(self, timeout: float = 120, *, credentials: Any = None, server_name: str = "") -> None:
        """Until the health service says SERVING: on the health port when there is one, else on the
        gRPC port (over TLS with ``credentials``, checking ``server_name`` when given). Generous: a
        loaded machine may take tens of seconds to start a server; one that exits is reported at
        once, with its log. A server that does not get ready is stopped."""
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        serving = health_pb2.HealthCheckResponse.SERVING
        if self.health_port:
            channel = grpc.insecure_channel(f"127.0.0.1:{self.health_port}")
        elif credentials is not None:
            options = [("grpc.ssl_target_name_override", server_name)] if server_name else []
            channel = grpc.secure_channel(self.target, credentials, options=options)
        else:
            channel = grpc.insecure_channel(self.target)
        deadline = time.monotonic() + timeout
        try:
            stub = health_pb2_grpc.HealthStub(channel)
            while True:
                if not self.alive():
                    raise RuntimeError(f"the server on {self.target} exited ({self.process.returncode}):\n{self.log()}")
                with contextlib.suppress(grpc.RpcError):
                    if stub.Check(health_pb2.HealthCheckRequest(service=HEALTH_SERVICE), timeout=1).status == serving:
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the server on {self.target} was not serving after {timeout} s:\n{self.log()}")
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        finally:
            channel.close()

    def wait_listening(self, timeout: float = 120) -> None:
        """Until its port accepts a connection (whatever it then answers: a TLS server that wants
        a client certificate, say); one that exits is reported at once."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                raise RuntimeError(f"the server on {self.target} exited ({self.process.returncode}):\n{self.log()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server on {self.target} did not listen within {timeout} s")
            time.sleep(0.05)

    def log(self) -> str:
        """What it has written so far (stdout and stderr)."""
        if self._log_file is not None and not self._log_file.closed:
            self._log_file.flush()
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used (its children not included)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def signal(self, signum: int) -> None:
        """Send ``signum`` if it still runs (SIGKILL: a crash; SIGSTOP: a hang)."""
        if self.alive():
            self.process.send_signal(signum)

    def terminate(self) -> None:
        """SIGTERM (a drain), without waiting: :meth:`stop` waits."""
        self.signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL, and wait for it to end."""
        if self.alive():
            self.process.kill()
            self.process.wait()

    def stop(self, wait: float = 20.0) -> int | None:
        """SIGTERM, then ``wait`` seconds for it to end, then SIGKILL (its worker processes too:
        :attr:`killed` says so); its exit code (None: never started). Always safe to call again."""
        code: int | None = None
        if self._process is not None:
            family = descendants(self._process.pid) if self.alive() else []
            self.terminate()
            try:
                code = self._process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.killed = True
                for pid in [self._process.pid, *family]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                code = self._process.wait()
        if self._log_file is not None:
            self._log_file.close()
        if self._temporary_log:
            self.log_path.unlink(missing_ok=True)
        return code

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
