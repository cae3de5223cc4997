"""Batch work on a Dask cluster: ``--dask local:N`` or ``--dask tcp://HOST:PORT``.

``bigtwo audit`` and ``bigtwo tournament`` cut their work into batches (a few replay files, a few
deals), hand each batch to :func:`ordered_map` and get the answers back in the order of the batches,
whatever worker runs them and whatever order they finish in, so a run on a cluster reports exactly
what the one-process run reports. Dask does the distributing: it places the tasks, and when a
worker dies it runs the lost worker's tasks again elsewhere, so a lost worker loses no result.

Only ``window`` batches are in flight at a time, so a run over millions of files holds neither every
task nor every answer in memory: answers that finish early wait in a buffer until those before them
arrive. The workers import ``bigtwo`` themselves: on a remote cluster every worker needs the same
version installed (``pip install 'bigtwo[distributed]'``).

Dask is an extra: without it, :func:`dask_client` raises :class:`DaskMissing`, which says how to
install it.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from distributed import Client

Batch = TypeVar("Batch")
Answer = TypeVar("Answer")

INSTALL_HINT = "pip install 'bigtwo[distributed]'  (or, in a checkout: pip install -e '.[distributed]')"
# How long joining a running scheduler may take before the command says it cannot reach it.
CONNECT_SECONDS = 20.0
_LOCAL = re.compile(r"local:(\d{1,3})")
_REMOTE = re.compile(r"(tcp|tls)://[^\s/]+:\d{1,5}")


class DaskMissing(RuntimeError):
    """``--dask`` was given but Dask's distributed scheduler is not installed."""

    def __init__(self) -> None:
        super().__init__(f"--dask needs Dask's distributed scheduler, which is not installed: {INSTALL_HINT}")


class DaskUnreachable(RuntimeError):
    """The scheduler at ``--dask tcp://...`` did not answer."""


@dataclass(frozen=True)
class DaskTarget:
    """Where ``--dask`` runs the work: ``workers`` local processes, or the scheduler at ``address``."""

    workers: int = 0
    address: str = ""

    @classmethod
    def parse(cls, spec: str) -> DaskTarget:
        """``local:N`` (1 to 256 worker processes on this machine) or ``tcp://HOST:PORT``."""
        text = spec.strip()
        local = _LOCAL.fullmatch(text)
        if local:
            workers = int(local.group(1))
            if not 1 <= workers <= 256:
                raise ValueError(f"--dask {spec}: local clusters take 1 to 256 workers")
            return cls(workers=workers)
        if _REMOTE.fullmatch(text):
            return cls(address=text)
        raise ValueError(
            f"--dask {spec!r}: give local:N (N worker processes on this machine) or tcp://HOST:PORT "
            "(a running Dask scheduler)"
        )

    def describe(self) -> str:
        return (
            f"a local Dask cluster of {self.workers} worker(s)"
            if self.workers
            else f"the Dask scheduler at {self.address}"
        )


@contextmanager
def dask_client(target: DaskTarget) -> Iterator[Client]:
    """A client of ``target``; a local cluster is started here and stopped on the way out."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise DaskMissing() from exc
    if target.address:
        try:
            client = Client(target.address, timeout=CONNECT_SECONDS)
        except OSError as exc:
            raise DaskUnreachable(
                f"--dask {target.address}: no Dask scheduler answered within {CONNECT_SECONDS:.0f} s ({exc}). "
                "Start one with `dask scheduler` and workers with `dask worker ADDRESS`, or use --dask local:N."
            ) from exc
        with client:
            yield client
        return
    # One thread per worker process: the rules are pure Python, so threads would share one GIL.
    with (
        LocalCluster(
            n_workers=target.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # The scheduler serves HTTP (health, metrics) whatever this says; None means its fixed
            # port 8787, where a second cluster warns and moves. Any free port, on loopback only.
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def ordered_map(
    client: Client,
    task: Callable[[Batch], Answer],
    batches: Iterable[Batch],
    window: int,
    on_done: Callable[[Batch, Answer], None] | None = None,
) -> Iterator[Answer]:
    """``task(batch)`` for every batch on the cluster; answers yielded in the order of ``batches``.

    ``on_done`` is called as each batch finishes on the cluster (completion order), for progress.
    At most ``window`` batches run at once, and at most ``4 * window`` are submitted and not yet
    yielded, so a slow batch holds back the answers behind it but not the cluster.
    """
    from distributed import as_completed

    run = uuid.uuid4().hex
    source = enumerate(batches)
    pending: dict[int, Batch] = {}
    finished: dict[int, Answer] = {}
    index_of: dict[str, int] = {}
    running = as_completed()
    next_out = 0

    def refill() -> None:
        while running.count() < window and len(pending) < 4 * window:
            item = next(source, None)
            if item is None:
                return
            index, batch = item
            pending[index] = batch
            key = f"bigtwo-{run}-{index}"
            index_of[key] = index
            # pure=False with our own key: equal batches are still separate tasks, and the key says
            # which batch came back.
            running.add(client.submit(task, batch, pure=False, key=key))

    refill()
    for future in running:
        index = index_of.pop(future.key)
        answer: Answer = future.result()
        future.release()
        finished[index] = answer
        if on_done is not None:
            on_done(pending[index], answer)
        while next_out in finished:
            del pending[next_out]
            yield finished.pop(next_out)
            next_out += 1
        refill()
