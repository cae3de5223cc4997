"""A real ``redis-server`` for the tests (Debian's, installed by ``make redis``): on a free
127.0.0.1 port, in a temporary folder, with nothing written to disk (``--save "" --appendonly no``),
stopped by the test that started it."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from service_support import free_port

REDIS_SERVER = shutil.which("redis-server")


class RedisServer:
    def __init__(self, folder: Path, port: int | None = None) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed: run make redis (make test does)")
        self.folder = folder
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *(REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.folder)),
                *("--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on 127.0.0.1:{self.port} within 10 s")

    def stop(self) -> None:
        """Kill it (SIGKILL: Redis gone mid-game, as a crash would leave it)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None
