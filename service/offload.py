"""Heavy calls run off the event loop: in a few worker processes, a bounded number at a time.

Why: the aio server answers every stream and call of a process on one event loop. A call that
computes for a long time on that loop (a pro bot's search, an audit of a whole match, the plays of
an 18-card hand) delays every other call and stream move until it is done, and a thread does not
help much: it holds the interpreter lock the loop needs for as long as it computes, handing it
over only every few milliseconds. A worker process computes beside the loop instead, on another
core. ``python -m bigtwo.tools.stall_bench`` measures the streams beside each heavy call (and
``--serve-args "--heavy-kind thread"`` the threads).

What runs where: :func:`bigtwo.service.costs.place` bounds each call's cost before its work (the
hand's plays, the bot level, the audit's size...); a call whose bound is over the loop's budget
runs here, every other call on the loop. A call sent here is admitted when fewer than
``workers + waiting`` of them are in flight in this process, else it is refused at once with
RESOURCE_EXHAUSTED (ErrorInfo ``HEAVY_CALLS_BUSY``, a :class:`~bigtwo.service.errors.Shed`: its
RetryInfo and gRPC retry pushback say when to try again): waiting in an unbounded queue would only
turn overload into deadlines missed later. The worker runs the same handler of
:class:`~bigtwo.service.core.Core` on the same request and returns the serialized answer (or the
error status) and the handler's :class:`~bigtwo.service.core.CallInfo`, so the answer is the same,
byte for byte, whichever way a call runs.

Deadlines and cancellation: a call still waiting for a worker when its client gives up is never
started (its future is cancelled; a worker also skips a call whose deadline has passed), and the
pro bot's clock budget (``max_ms``) is capped by the time the call has left. A call already
computing runs to its end: every heavy handler is bounded by the request limits
(:mod:`bigtwo.service.limits`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from concurrent import futures
from dataclasses import fields
from typing import NamedTuple

import grpc
from bigtwo.v1 import service_pb2 as api
from google.protobuf.message import Message
from google.rpc import status_pb2
from grpc_status import rpc_status

from .core import CallInfo, Core
from .errors import ServiceError, Shed, status_of, to_rpc_status
from .limits import LIMITS

KINDS = ("process", "thread")

DEFAULT_WAITING = 16
"""Heavy calls that may wait for a worker, per server process, beyond those computing: more are
refused at once. Every heavy call is bounded by the request limits, so the last one waiting
starts soon; a longer queue would only hold calls past their clients' deadlines."""

DEADLINE_MARGIN = 0.8
"""Share of the time a call has left that the pro bot's search may use: the rest covers the world
being rolled out when the clock is read, and the answer's way back."""


def default_workers(server_processes: int = 1) -> int:
    """Worker processes per server process, sized from the container's CPUs and memory (its
    cgroup's limits, else the affinity mask): :func:`bigtwo.service.container.size`."""
    from .container import read_budget, size

    return size(read_budget(), server_processes).heavy_workers


class DeadlinePassed(ServiceError):
    """The call's deadline passed before a worker could start it: the client has stopped waiting."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class RemoteTraceback(Exception):
    """The traceback of an error raised in a worker process, as text (logged as the cause)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


class Failed(Exception):
    """What a heavy handler raised, mapped to its status where it was raised (the status is what
    :func:`~bigtwo.service.errors.to_rpc_status` made of it there)."""

    def __init__(self, text: str, status: grpc.Status, code: grpc.StatusCode) -> None:
        super().__init__(text)
        self.status = status
        self.code = code


class Done(NamedTuple):
    """A heavy call's result as it crosses from the worker: only bytes, text and plain data (an
    exception object might not survive pickling, and a result that fails to unpickle would break
    the pool)."""

    response: bytes
    info: CallInfo
    status: bytes = b""
    """The error's ``google.rpc.Status``, serialized; empty when the call answered."""
    error: str = ""
    """The error's text (for the log line)."""
    trace: str = ""
    """The traceback of an error that maps to INTERNAL (a bug), for the log."""

    def unpack(self, info: CallInfo) -> bytes:
        """The answer's bytes; copies the handler's call facts into ``info``; raises :class:`Failed`
        for an error."""
        for name in _INFO_FIELDS:
            setattr(info, name, getattr(self.info, name))
        if not self.status:
            return self.response
        message = status_pb2.Status.FromString(self.status)
        status = status_of(message)
        failed = Failed(self.error, status, status.code)
        if self.trace:
            failed.__cause__ = RemoteTraceback(self.trace)
        raise failed


_INFO_FIELDS = tuple(field.name for field in fields(CallInfo))


def run(core: object, attr: str, request: Message, request_id: str, deadline: float | None) -> Done:
    """``core.attr(request, info)`` as a :class:`Done`, unless ``deadline`` (``time.monotonic()``,
    the same clock in every process of the machine) has passed. ``core`` is a
    :class:`~bigtwo.service.core.Core` or a stand-in with the same handlers, found by name."""
    info = CallInfo()
    try:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlinePassed("the call's deadline passed while it waited", reason="DEADLINE_PASSED")
            if attr == "bot_move" and isinstance(request, api.BotMoveRequest):
                cap_search(request, left)
        response = getattr(core, attr)(request, info)
        return Done(response if response.__class__ is bytes else response.SerializeToString(), info)
    except Exception as exc:
        status, code = to_rpc_status(exc, request_id)
        details = dict(status.trailing_metadata).get(rpc_status.GRPC_DETAILS_METADATA_KEY, b"")
        trace = "".join(traceback.format_exception(exc)) if code is grpc.StatusCode.INTERNAL else ""
        return Done(b"", info, details if isinstance(details, bytes) else details.encode(), str(exc)[:300], trace)


def cap_search(request: api.BotMoveRequest, seconds_left: float) -> None:
    """Cap a pro BotMove's clock budget (``max_ms``) by the time the call has left. A value over
    the limit is left alone, for the handler to refuse."""
    if request.level.strip().lower() != "pro" or request.max_ms > LIMITS.bot_ms:
        return
    cap = max(1, min(LIMITS.bot_ms, int(seconds_left * DEADLINE_MARGIN * 1000)))
    if not request.max_ms or request.max_ms > cap:
        request.max_ms = cap


# -- the worker processes' side -------------------------------------------------------------------

_CORE: Core | None = None
"""A worker process's core, made by :func:`_start_worker`."""


PARENT_CHECK_SECONDS = 1.0
"""How often a worker looks whether its server still lives: a server killed outright (SIGKILL, the
out-of-memory killer) cannot stop its workers, and an orphaned worker would hold its memory
forever. A look is one system call."""


def _start_worker(keys: list[bytes], server_pid: int) -> None:
    """A worker process's start: its own core, with the server's token keys, and a watch that ends
    the worker once its server is gone. Ctrl-C reaches the whole process group; the server stops
    its workers itself, after draining the calls."""
    global _CORE
    from .tokens import KeyRing, TokenCodec

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_server, args=(server_pid,), name="bigtwo-server-watch", daemon=True).start()
    _CORE = Core(TokenCodec(KeyRing(keys)))


def _exit_with_server(server_pid: int) -> None:
    """Ends this worker when its parent is no longer the server (re-parented after the server
    died), including when the server died before the worker started."""
    while os.getppid() == server_pid:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)


def _run_in_worker(attr: str, request: Message, request_id: str, deadline: float | None) -> Done:
    return run(_CORE, attr, request, request_id, deadline)


def _ready() -> int:
    return os.getpid()


# -- the server's side ----------------------------------------------------------------------------


BUSY_RETRY_SECONDS = 0.2
"""The RetryInfo delay of a call refused because the pool is full: about what a heavy call takes
(a pro decision 50–250 ms), so a slot is likely free by then."""
WORKER_LOST_RETRY_SECONDS = 0.5
"""The RetryInfo delay of a call whose worker died: a new worker process imports the engine first."""


def worker_lost() -> Shed:
    """The error of a call whose worker process ended while it computed (killed, out of memory)."""
    return Shed(
        "the process computing this call stopped before it answered; the server starts another",
        reason="HEAVY_WORKER_LOST",
        retry_after=WORKER_LOST_RETRY_SECONDS,
    )


class Offload:
    """Runs heavy handlers on an executor, at most ``workers + waiting`` at a time."""

    def __init__(
        self,
        new_executor: Callable[[], futures.Executor],
        task: Callable[..., Done],
        prefix: tuple[object, ...],
        *,
        kind: str,
        workers: int,
        waiting: int,
    ) -> None:
        self._new_executor = new_executor
        self.executor = new_executor()
        self._task = task
        self._prefix = prefix
        self.kind = kind
        self.workers = workers
        self.waiting = waiting
        self._in_flight = 0
        self._lock = threading.Lock()

    @classmethod
    def processes(cls, keys: list[bytes], workers: int, waiting: int) -> Offload:
        """Worker processes, each with a core of its own under the server's ``keys`` (first signs).
        Spawned, not forked: the server's gRPC threads must not be copied mid-flight."""

        def new_executor() -> futures.Executor:
            return futures.ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(keys, os.getpid()),
            )

        return cls(new_executor, _run_in_worker, (), kind="process", workers=workers, waiting=waiting)

    @classmethod
    def threads(cls, core: object, workers: int, waiting: int) -> Offload:
        """Threads of this process calling ``core`` (any core, e.g. the bench's stand-in)."""

        def new_executor() -> futures.Executor:
            return futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bigtwo-heavy")

        return cls(new_executor, run, (core,), kind="thread", workers=workers, waiting=waiting)

    def warm(self) -> list[futures.Future[int]]:
        """Start every worker now (a process takes a moment to import the engine), so that the
        first heavy calls do not wait for it; the futures end once each worker is ready. Starting
        does not wait: the server answers the other calls meanwhile."""
        if self.kind != "process":
            return []
        # A worker is spawned per task submitted while none is idle: one task per worker.
        return [self.executor.submit(_ready) for _ in range(self.workers)]

    def submit(self, attr: str, request: Message, request_id: str, deadline: float | None) -> futures.Future[Done]:
        """Start ``core.attr(request)`` on a worker, or raise RESOURCE_EXHAUSTED when as many
        heavy calls as allowed are in flight. The slot is freed when the work ends, not when the
        call does: a call given up while its work still runs keeps its slot until then."""
        with self._lock:
            admitted = self._in_flight < self.workers + self.waiting
            if admitted:
                self._in_flight += 1
        if not admitted:
            raise Shed(
                f"the server is busy with {self.workers + self.waiting} heavy calls (bots, audits, long "
                "move lists); try again shortly or on another replica",
                reason="HEAVY_CALLS_BUSY",
                retry_after=BUSY_RETRY_SECONDS,
                metadata={"workers": str(self.workers), "waiting": str(self.waiting)},
            )
        try:
            executor = self.executor
            try:
                future = executor.submit(self._task, *self._prefix, attr, request, request_id, deadline)
            except futures.BrokenExecutor:  # a worker died since: start afresh, once
                executor = self._replace(executor)
                future = executor.submit(self._task, *self._prefix, attr, request, request_id, deadline)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(lambda done: self._finished(executor, done))
        return future

    @property
    def in_flight(self) -> int:
        """Heavy calls admitted whose work has not ended (computing or waiting for a worker)."""
        return self._in_flight

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _finished(self, executor: futures.Executor, future: futures.Future[Done]) -> None:
        self._release()
        if not future.cancelled() and isinstance(future.exception(), futures.BrokenExecutor):
            self._replace(executor)

    def _replace(self, broken: futures.Executor) -> futures.Executor:
        """A working executor in place of ``broken`` (a pool whose worker died is unusable)."""
        with self._lock:
            if self.executor is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self.executor = self._new_executor()
            return self.executor

    def shutdown(self) -> None:
        """Stop the workers; calls still waiting are cancelled."""
        self.executor.shutdown(wait=True, cancel_futures=True)


__all__ = [
    "DEFAULT_WAITING",
    "KINDS",
    "DeadlinePassed",
    "Done",
    "Failed",
    "Offload",
    "default_workers",
    "worker_lost",
]
