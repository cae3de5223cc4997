"""The container's budget (CPUs and memory, as its cgroup sets them) and what the server sizes from it.

Why: inside a pod with a CPU limit, ``os.sched_getaffinity`` still lists every CPU of the node,
so a pool sized from it starts as many worker processes as the node has cores (16 of them cost
450 MB at idle against a 512 MiB limit). The limits the kernel enforces live in the process's
cgroup: ``cpu.max`` and ``memory.max`` under cgroup v2, ``cpu.cfs_quota_us``/``cpu.cfs_period_us``
and ``memory.limit_in_bytes`` under v1. :func:`read_budget` reads them for the group this process
is in (``/proc/self/cgroup``) and every group above it up to the mount's root (a parent's limit
binds its children), and falls back to the affinity mask and no memory limit where there is none.

:func:`size` turns a budget into the heavy-call workers, the heavy calls that may wait, and the
calls in flight a process admits (``--max-concurrent-rpcs``), so that at full load the whole
process tree (server, its workers and multiprocessing's resource tracker) fits the memory limit;
the figures it counts per process are :data:`MEMORY`, measured with ``deploy/measure_memory.py``
(docs/DEPLOY.md). Flags given explicitly always win; the server logs the budget it read and what it
chose at start.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")

NO_LIMIT_BYTES = 1 << 60
"""cgroup v1 writes "no limit" as a huge number (9223372036854771712 on x86-64, page-rounded
LONG_MAX): anything at least this large is no limit."""


@dataclass(frozen=True)
class Budget:
    """What this process may use, and where each figure was read."""

    cpus: float
    """CPU-seconds per second: the quota over its period, or the CPUs of the affinity mask, whichever
    is fewer."""
    cpu_source: str
    """``cgroup v2 cpu.max``, ``cgroup v1 cpu.cfs_quota_us`` or ``affinity``."""
    affinity: int
    """CPUs in this process's affinity mask (a cpuset shows here)."""
    memory_bytes: int | None
    """The hard limit (the out-of-memory killer's), or None where none is set."""
    memory_source: str
    """``cgroup v2 memory.max``, ``cgroup v1 memory.limit_in_bytes`` or ``none``."""
    memory_high_bytes: int | None = None
    """cgroup v2 ``memory.high`` (throttled above it), v1 ``memory.soft_limit_in_bytes``; None: none."""

    def as_log(self) -> dict[str, object]:
        return {
            "cpus": round(self.cpus, 3),
            "cpu_source": self.cpu_source,
            "affinity_cpus": self.affinity,
            "memory_mib": None if self.memory_bytes is None else round(self.memory_bytes / MIB, 1),
            "memory_source": self.memory_source,
            "memory_high_mib": None if self.memory_high_bytes is None else round(self.memory_high_bytes / MIB, 1),
        }


MIB = 1 << 20


@dataclass(frozen=True)
class MemoryModel:
    """Proportional set size (PSS) each part of the process tree reaches at full load, measured with
    ``deploy/measure_memory.py`` on the manifests' settings (docs/DEPLOY.md, "Memory"), rounded up."""

    server: int = 64 * MIB
    """One server process with its ports, metrics and caches, beyond what its calls hold (53 MiB
    idle, 60 MiB with every heavy slot busy)."""
    worker: int = 48 * MIB
    """One heavy-call worker process while it computes (47 MiB measured with pro searches)."""
    tracker: int = 8 * MIB
    """multiprocessing's resource tracker, one per server process with worker processes (7 MiB)."""
    supervisor: int = 48 * MIB
    """The parent of ``--workers N`` server processes (it serves their merged metrics)."""
    call: int = 48 * 1024
    """One call or stream in flight, with its buffers: 39 KiB measured per open stream in mid-deal
    (a request of the usual size; a burst of messages near ``--max-message-bytes`` is what the
    headroom is for)."""
    idle_server: int = 56 * MIB
    """One server process at idle, once it has answered a call (53 MiB measured)."""
    idle_worker: int = 32 * MIB
    """One worker process at idle, the engine imported (30.5 MiB measured)."""
    headroom: float = 0.15
    """Share of the limit left unplanned: page cache, allocator slack, a burst of larger messages."""


MEMORY = MemoryModel()

MAX_CALLS = 10_000
"""Calls in flight per process where memory does not bound them (gRPC's cap; the old default)."""
MIN_CALLS = 64
"""Fewest calls in flight a process admits, however small the limit."""
WAITING_PER_WORKER = 8
"""Heavy calls that may wait per worker: each is bounded by the request limits (a decision takes up
to ~100 ms at the higher levels), so the last one waiting starts within about a second; a longer
queue would only hold calls past their clients' deadlines."""


@dataclass(frozen=True)
class Sizing:
    """What a server process chose from a :class:`Budget` (before flags override)."""

    heavy_workers: int
    heavy_waiting: int
    max_concurrent_rpcs: int
    bound_by: str
    """What bound the workers: ``cpu`` or ``memory``."""
    fits: bool = True
    """False when even one worker and :data:`MIN_CALLS` calls exceed the memory limit at full load
    (the server logs a warning: the pod needs more memory)."""

    def tree_bytes(self, server_processes: int = 1, model: MemoryModel = MEMORY) -> int:
        """What the process tree holds at full load with these settings (every call slot taken,
        every worker computing)."""
        return tree_bytes(self.heavy_workers, self.max_concurrent_rpcs, server_processes, model)


def tree_bytes(heavy_workers: int, calls: int, server_processes: int = 1, model: MemoryModel = MEMORY) -> int:
    """PSS of the whole tree at full load: per server process its own, its workers', its resource
    tracker's and its calls'; plus the supervisor of ``--workers N``."""
    per_process = model.server + heavy_workers * model.worker + (model.tracker if heavy_workers else 0)
    per_process += calls * model.call
    supervisor = model.supervisor if server_processes > 1 else 0
    return supervisor + server_processes * per_process


def idle_tree_bytes(heavy_workers: int, server_processes: int = 1, model: MemoryModel = MEMORY) -> int:
    """PSS of the whole tree at idle: what a pod's memory request should hold."""
    per_process = model.idle_server + heavy_workers * model.idle_worker + (model.tracker if heavy_workers else 0)
    return (model.supervisor if server_processes > 1 else 0) + server_processes * per_process


def size(budget: Budget, server_processes: int = 1, model: MemoryModel = MEMORY) -> Sizing:
    """The heavy workers, heavy calls waiting and calls in flight of one of ``server_processes``.

    - Workers: half the CPUs (rounded up: a limit of 1.5 CPUs counts 2) shared among the server
      processes, at least one; the other half is the event loops'. Then no more than half the memory
      a server process has beyond its own (less :attr:`MemoryModel.headroom`) holds, at least one:
      the other half is for the calls, which every game needs.
    - Heavy waiting: :data:`WAITING_PER_WORKER` a worker.
    - Calls in flight: as many as the memory left after the server and its workers holds (each
      :attr:`MemoryModel.call`), between :data:`MIN_CALLS` and :data:`MAX_CALLS`.
    """
    processes = max(1, server_processes)
    by_cpu = max(1, math.ceil(budget.cpus - 1e-9) // (2 * processes))
    workers, bound_by, calls = by_cpu, "cpu", MAX_CALLS
    if budget.memory_bytes is not None:
        usable = budget.memory_bytes * (1 - model.headroom)
        if processes > 1:
            usable -= model.supervisor
        each = usable / processes - model.server - model.tracker
        by_memory = int(each / 2 // model.worker)  # the other half holds the calls
        if by_memory < workers:
            workers, bound_by = max(1, by_memory), "memory"
        left = each - workers * model.worker
        calls = max(MIN_CALLS, min(MAX_CALLS, int(left // model.call)))
    fits = budget.memory_bytes is None or tree_bytes(workers, calls, processes, model) <= budget.memory_bytes
    return Sizing(workers, WAITING_PER_WORKER * workers, calls, bound_by, fits)


# -- reading the cgroup -----------------------------------------------------------------------------


def read_budget(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_SELF_CGROUP) -> Budget:
    """The budget of this process's container: cgroup v2 files where they are (at ``root``, or at
    ``root/unified`` on a hybrid host), else cgroup v1's, else the affinity mask and no memory limit.

    ``root`` and ``proc_cgroup`` are parameters so that a test can hand in a folder of real files
    of each layout."""
    groups = own_groups(proc_cgroup)
    affinity = _affinity()
    v2 = _v2_dirs(root, groups.get("", ""))
    cpus, cpu_source = _v2_cpu(v2)
    if cpus is None:
        cpus, cpu_source = _v1_cpu(_v1_dirs(root, groups, "cpu"))
    memory, memory_source, high = _v2_memory(v2)
    if memory is None and high is None:
        memory, memory_source, high = _v1_memory(_v1_dirs(root, groups, "memory"))
    if cpus is None or cpus >= affinity:
        cpus, cpu_source = float(affinity), "affinity"
    return Budget(cpus, cpu_source, affinity, memory, memory_source, high)


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def own_groups(proc_cgroup: Path) -> dict[str, str]:
    """``/proc/self/cgroup`` as {controller: path}; the v2 group under the key ``""``. A v1 line
    naming several controllers (``cpu,cpuacct``) is filed under each, and under the joined name."""
    try:
        text = proc_cgroup.read_text()
    except OSError:
        return {}
    groups: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            groups[""] = path
            continue
        groups[controllers] = path
        for name in controllers.split(","):
            groups.setdefault(name, path)
    return groups


def _chain(mount: Path, path: str) -> list[Path]:
    """The folders from this process's group up to the mount's root, nearest first. Without a
    cgroup namespace, /proc/self/cgroup names the path on the host (``/docker/ID``) while the
    container sees its own group at the mount's root: leading parts are dropped until a folder
    exists."""
    parts = [part for part in path.strip("/").split("/") if part and part != ".."]
    for start in range(len(parts) + 1):
        group = mount.joinpath(*parts[start:])
        if group.is_dir():
            break
    else:
        return []
    chain = [group]
    while group != mount and group.parent != group:
        group = group.parent
        chain.append(group)
    return chain


def _v2_dirs(root: Path, path: str) -> list[Path]:
    for mount in (root, root / "unified"):
        if (mount / "cgroup.controllers").is_file():
            return _chain(mount, path)
    return []


def _v1_dirs(root: Path, groups: dict[str, str], controller: str) -> list[Path]:
    joined = next((name for name in groups if "," in name and controller in name.split(",")), None)
    for name in (joined, controller):
        if name is not None and (root / name).is_dir() and controller in groups:
            return _chain(root / name, groups[controller])
    return []


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _v2_cpu(chain: list[Path]) -> tuple[float | None, str]:
    best: float | None = None
    for group in chain:
        text = _read(group / "cpu.max")
        if not text:
            continue
        quota, _, period = text.partition(" ")
        if quota != "max" and quota.isdigit() and period.isdigit() and int(period) > 0:
            cpus = int(quota) / int(period)
            best = cpus if best is None else min(best, cpus)
    return best, "cgroup v2 cpu.max"


def _v1_cpu(chain: list[Path]) -> tuple[float | None, str]:
    best: float | None = None
    for group in chain:
        quota, period = _read(group / "cpu.cfs_quota_us"), _read(group / "cpu.cfs_period_us")
        valid = quota and period and quota.lstrip("-").isdigit() and period.isdigit()
        if valid and int(quota or 0) > 0 and int(period or 0) > 0:  # -1: no quota
            cpus = int(quota or 0) / int(period or 0)
            best = cpus if best is None else min(best, cpus)
    return best, "cgroup v1 cpu.cfs_quota_us"


def _smallest(chain: list[Path], name: str) -> int | None:
    best: int | None = None
    for group in chain:
        text = _read(group / name)
        if text and text.isdigit() and int(text) < NO_LIMIT_BYTES:
            best = int(text) if best is None else min(best, int(text))
    return best


def _v2_memory(chain: list[Path]) -> tuple[int | None, str, int | None]:
    limit = _smallest(chain, "memory.max")
    return limit, "cgroup v2 memory.max" if limit is not None else "none", _smallest(chain, "memory.high")


def _v1_memory(chain: list[Path]) -> tuple[int | None, str, int | None]:
    limit = _smallest(chain, "memory.limit_in_bytes")
    source = "cgroup v1 memory.limit_in_bytes" if limit is not None else "none"
    return limit, source, _smallest(chain, "memory.soft_limit_in_bytes")


__all__ = [
    "MAX_CALLS",
    "MEMORY",
    "MIN_CALLS",
    "WAITING_PER_WORKER",
    "Budget",
    "MemoryModel",
    "Sizing",
    "idle_tree_bytes",
    "own_groups",
    "read_budget",
    "size",
    "tree_bytes",
]
