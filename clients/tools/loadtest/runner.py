"""Running a load: local replicas to aim at, several generator processes, the live progress line."""

from __future__ import annotations

import multiprocessing
import os
import queue as queues
import secrets
import signal
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..local_server import SERVE, LocalServer
from .generator import LoadConfig, LoadResult, run

# -- local replicas --------------------------------------------------------------------------------


class Replicas:
    """N ``bigtwo serve`` processes (or no-op servers) on 127.0.0.1, sharing one signing key so that
    any replica verifies any other's tokens, each waited for until its health says SERVING (a replica
    that exits is reported at once). :meth:`stop` always ends them."""

    def __init__(self, count: int, *, noop: bool = False, mode: str = "aio", grace: float = 2.0) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="bigtwo-loadtest-"))
        keys = secrets.token_hex(32)
        noop_server = (sys.executable, "-m", "bigtwo.tools.service_bench", "--serve", "noop", "--mode", mode)
        self.servers: list[LocalServer] = []
        try:
            for _ in range(count):  # all started before the first is waited for: they start together
                self.servers.append(
                    LocalServer(
                        command=noop_server if noop else SERVE,
                        grace=None if noop else grace,  # the no-op server's grace is its own
                        keys=keys,
                        home=self.home,
                        wait=False,
                    )
                )
            for server in self.servers:
                server.wait_ready()
        except BaseException:
            self.stop()
            raise

    @property
    def targets(self) -> list[str]:
        return [server.target for server in self.servers]

    def kill(self, index: int, signum: int = signal.SIGKILL) -> None:
        self.servers[index].signal(signum)

    def stop(self) -> None:
        for server in self.servers:
            server.terminate()
        for server in self.servers:
            server.stop(10)
        self.servers = []


# -- processes -------------------------------------------------------------------------------------


def split(cfg: LoadConfig, processes: int) -> list[LoadConfig]:
    """Share one load between ``processes`` generators: games, moves, rate and concurrency divided,
    disjoint game numbers (so the same seed gives the same deals in total)."""
    if processes <= 1:
        return [cfg]

    def part(total: int, index: int) -> int:
        return total // processes + (1 if index < total % processes else 0)

    out = []
    for index in range(processes):
        out.append(
            replace(
                cfg,
                concurrency=max(1, part(cfg.concurrency, index)),
                games=part(cfg.games, index) if cfg.games else 0,
                moves=max(1, part(cfg.moves, index)) if cfg.moves else 0,
                rate=cfg.rate / processes,
                first_game=cfg.first_game + index * 10_000_000,
                ramp_seconds=cfg.ramp_seconds,
            )
        )
    return out


def _child(cfg: LoadConfig, shared: Any, queue: Any, ready: Any, go: Any, stop: Any) -> None:
    """One generator process: Ctrl-C reaches the parent, which sets ``stop``; the child then ends
    its run as Ctrl-C would and sends what it measured."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def tick(result: LoadResult) -> None:
        shared[:] = list(result.snapshot())

    ready.put(os.getpid())
    go.wait(120)
    queue.put(run(cfg, on_tick=tick, stop=stop.is_set))


class GeneratorLost(RuntimeError):
    """A load generator process ended without sending its figures."""


class Progress:
    """The live line: read from the running result(s) by rich's refresh thread."""

    def __init__(self, sources: list[Any], started: float) -> None:
        self.sources = sources
        self.started = started
        self.last = (started, 0)
        self.rate = 0.0

    def totals(self) -> list[int]:
        sums = [0] * 6
        for source in self.sources:
            values = source.snapshot() if isinstance(source, LoadResult) else list(source)
            for i, value in enumerate(values):
                sums[i] += int(value)
        return sums

    def __rich__(self) -> Any:
        from rich.text import Text

        moves, refused, errors, finished, retried, open_games = self.totals()
        now = time.monotonic()
        if now - self.last[0] >= 0.5:
            self.rate = (moves - self.last[1]) / (now - self.last[0])
            self.last = (now, moves)
        line = (
            f"{now - self.started:6.1f}s  games {finished} done, {open_games} open  ·  moves {moves} "
            f"({self.rate:,.0f}/s)  ·  refused {refused}  ·  retried {retried}  ·  errors {errors}"
        )
        return Text(line, style="red" if errors else "")


def _live(sources: list[Any], started: float) -> Any:
    """A started progress line on stderr, refreshed four times a second."""
    from rich.console import Console
    from rich.live import Live

    live = Live(Progress(sources, started), console=Console(stderr=True), refresh_per_second=4)
    live.start()
    return live


def _run_here(cfg: LoadConfig, progress: bool, before: threading.Timer | None, started: float) -> LoadResult:
    """Run ``cfg`` in this process."""
    result = LoadResult()
    live = _live([result], started) if progress else None
    try:
        if before:  # the run's clock starts with ``before`` (a kill at S seconds is at S on it)
            result.started_at = time.monotonic()
            before.start()
        return run(cfg, result)
    finally:
        if live:
            live.stop()


def run_load(
    cfg: LoadConfig, processes: int = 1, *, progress: bool = False, before: threading.Timer | None = None
) -> LoadResult:
    """Run ``cfg`` in this process or in ``processes`` processes; ``before`` starts with the load."""
    started = time.monotonic()
    if processes <= 1:
        return _run_here(cfg, progress, before, started)
    context = multiprocessing.get_context("spawn")
    queue, ready, go, stop = context.Queue(), context.Queue(), context.Event(), context.Event()
    arrays = [context.Array("d", 6, lock=False) for _ in range(processes)]
    children = [
        context.Process(target=_child, args=(part, arrays[i], queue, ready, go, stop), daemon=True)
        for i, part in enumerate(split(cfg, processes))
    ]
    for child in children:
        child.start()
    try:
        _wait_ready(ready, children, time.monotonic() + 120)  # every child has imported grpc and the engine
    except GeneratorLost:
        for child in children:
            child.kill()
            child.join(timeout=10)
        raise
    started = time.monotonic()
    go.set()
    live = _live(arrays, started) if progress else None
    if before:
        before.start()
    merged = LoadResult()
    try:
        _collect(merged, queue, children, stop, time.monotonic() + (cfg.duration or 3600) + 120)
    finally:
        if live:
            live.stop()
        for child in children:
            child.join(timeout=10)
            if child.is_alive():
                child.kill()
    merged.config = {**cfg.__dict__, "processes": processes}
    return merged


def _wait_ready(ready: Any, children: list[Any], give_up: float) -> None:
    """Wait until every child says it is ready, so that all start together. A child that ends
    first (killed, crashed while importing) fails the run at once instead of leaving it waiting
    for a word that never comes."""
    waiting = len(children)
    while waiting:
        try:
            ready.get(timeout=0.25)
            waiting -= 1
            continue
        except queues.Empty:
            pass
        ended = [child.exitcode for child in children if child.exitcode is not None]
        if ended:
            raise GeneratorLost(
                f"{len(ended)} load generator process(es) ended without reporting before the load started "
                f"(exit codes {ended})"
            )
        if time.monotonic() > give_up:
            raise GeneratorLost(f"{waiting} load generator process(es) did not start within 120 s")


def _collect(merged: LoadResult, queue: Any, children: list[Any], stop: Any, give_up: float) -> None:
    """Merge every child's figures into ``merged``. Ctrl-C asks the children to stop and still
    collects what they measured; a child that ends without sending its figures (killed, crashed)
    fails the run at once instead of leaving it waiting."""
    received = 0
    while received < len(children):
        try:
            merged.merge(queue.get(timeout=0.25))
            received += 1
            continue
        except queues.Empty:
            pass
        except KeyboardInterrupt:
            stop.set()
            merged.interrupted = True
            give_up = min(give_up, time.monotonic() + 5.0)
            continue
        ended = [child for child in children if child.exitcode is not None]
        if len(ended) > received and queue.empty():
            lost = [child.exitcode for child in ended if child.exitcode != 0]
            raise GeneratorLost(
                f"{len(ended) - received} load generator process(es) ended without reporting (exit codes {lost})"
            )
        if time.monotonic() > give_up:
            raise GeneratorLost(f"{len(children) - received} load generator process(es) stopped reporting")
