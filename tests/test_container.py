"""The container's budget (service/container.py): cgroup v2 and v1 files of each layout, read from
folders of real files; the sizing rules; and a real server started inside a real cgroup."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from bigtwo.service.container import (
    MAX_CALLS,
    MEMORY,
    MIN_CALLS,
    WAITING_PER_WORKER,
    Budget,
    idle_tree_bytes,
    read_budget,
    size,
    tree_bytes,
)
from bigtwo.tools.local_server import descendants
from bigtwo.tools.memory_bench import Cgroup, CgroupUnavailable, role
from service_support import ServerProcess

MIB = 1 << 20
V1_NO_LIMIT = "9223372036854771712"
AFFINITY = len(os.sched_getaffinity(0))


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")


# -- reading -----------------------------------------------------------------------------------------


def test_cgroup_v2_limits_are_read_and_a_parent_limit_binds_its_child(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(
        root,
        {
            "cgroup.controllers": "cpuset cpu io memory pids",
            "kubepods/cgroup.controllers": "cpuset cpu io memory pids",
            "kubepods/pod1/cpu.max": "max 100000",
            "kubepods/pod1/memory.max": str(256 * MIB),  # the pod's limit is below the container's
            "kubepods/pod1/c1/cpu.max": "50000 100000",
            "kubepods/pod1/c1/memory.max": str(512 * MIB),
            "kubepods/pod1/c1/memory.high": "max",
        },
    )
    proc = tmp_path / "proc-cgroup"
    proc.write_text("0::/kubepods/pod1/c1\n")
    budget = read_budget(root, proc)
    assert (budget.cpus, budget.cpu_source) == (min(0.5, AFFINITY), "cgroup v2 cpu.max")
    assert (budget.memory_bytes, budget.memory_source) == (256 * MIB, "cgroup v2 memory.max")
    assert budget.memory_high_bytes is None


def test_cgroup_v2_without_limits_falls_back_to_the_affinity_mask(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root, {"cgroup.controllers": "cpu memory", "app/cpu.max": "max 100000", "app/memory.max": "max"})
    proc = tmp_path / "proc-cgroup"
    proc.write_text("0::/app\n")
    budget = read_budget(root, proc)
    assert (budget.cpus, budget.cpu_source, budget.affinity) == (float(AFFINITY), "affinity", AFFINITY)
    assert (budget.memory_bytes, budget.memory_source) == (None, "none")


def test_cgroup_v1_with_joined_controllers_and_a_host_path_outside_the_container(tmp_path: Path) -> None:
    """Docker without a cgroup namespace: /proc/self/cgroup names /docker/ID, but the container sees
    its own group at the mount's root."""
    root = tmp_path / "cgroup"
    write(
        root,
        {
            "cpu,cpuacct/cpu.cfs_quota_us": "150000",
            "cpu,cpuacct/cpu.cfs_period_us": "100000",
            "memory/memory.limit_in_bytes": str(384 * MIB),
            "memory/memory.soft_limit_in_bytes": V1_NO_LIMIT,
        },
    )
    proc = tmp_path / "proc-cgroup"
    proc.write_text("12:memory:/docker/abc123\n4:cpu,cpuacct:/docker/abc123\n1:name=systemd:/docker/abc123\n")
    budget = read_budget(root, proc)
    # Read from the fake cgroup files above (a CPU quota, not a time); the affinity mask caps it.
    assert budget.cpus == min(1.5, AFFINITY)
    assert budget.cpu_source == ("cgroup v1 cpu.cfs_quota_us" if AFFINITY > 1.5 else "affinity")
    assert (budget.memory_bytes, budget.memory_source) == (384 * MIB, "cgroup v1 memory.limit_in_bytes")
    assert budget.memory_high_bytes is None


def test_cgroup_v1_no_limit_values_are_no_limit(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(
        root,
        {
            "cpu/grp/cpu.cfs_quota_us": "-1",
            "cpu/grp/cpu.cfs_period_us": "100000",
            "memory/grp/memory.limit_in_bytes": V1_NO_LIMIT,
        },
    )
    proc = tmp_path / "proc-cgroup"
    proc.write_text("3:cpu:/grp\n4:memory:/grp\n")
    budget = read_budget(root, proc)
    assert (budget.cpu_source, budget.memory_bytes) == ("affinity", None)


def test_hybrid_host_reads_v1_when_the_unified_tree_has_no_cpu_or_memory_files(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(
        root,
        {
            "unified/cgroup.controllers": "hugetlb",
            "cpu/job/cpu.cfs_quota_us": "25000",
            "cpu/job/cpu.cfs_period_us": "100000",
            "memory/job/memory.limit_in_bytes": str(200 * MIB),
        },
    )
    proc = tmp_path / "proc-cgroup"
    proc.write_text("4:memory:/job\n1:cpu:/job\n0::/\n")
    budget = read_budget(root, proc)
    assert (budget.cpus, budget.cpu_source) == (0.25, "cgroup v1 cpu.cfs_quota_us")
    assert budget.memory_bytes == 200 * MIB


def test_no_cgroup_at_all_is_the_affinity_mask_and_no_memory_limit(tmp_path: Path) -> None:
    budget = read_budget(tmp_path / "none", tmp_path / "no-proc-file")
    assert budget == Budget(float(AFFINITY), "affinity", AFFINITY, None, "none", None)


# -- sizing ------------------------------------------------------------------------------------------


def test_a_pod_with_one_cpu_gets_one_worker_whatever_the_node_has() -> None:
    for node_cpus in (2, 16, 64):
        sizing = size(Budget(1.0, "cgroup v2 cpu.max", node_cpus, 512 * MIB, "cgroup v2 memory.max"))
        assert (sizing.heavy_workers, sizing.heavy_waiting) == (1, WAITING_PER_WORKER)
        assert MIN_CALLS < sizing.max_concurrent_rpcs < MAX_CALLS
        assert sizing.tree_bytes() <= 512 * MIB * (1 - MEMORY.headroom) and sizing.fits


def test_memory_bounds_the_workers_the_cpus_would_give() -> None:
    """The issue's pod: 16 CPUs seen, 512 MiB: 8 workers by CPU would leave too little for calls."""
    by_cpu = size(Budget(16.0, "affinity", 16, None, "none"))
    assert by_cpu.heavy_workers == 8 and by_cpu.max_concurrent_rpcs == MAX_CALLS and by_cpu.bound_by == "cpu"
    bounded = size(Budget(16.0, "affinity", 16, 512 * MIB, "cgroup v1 memory.limit_in_bytes"))
    assert 1 <= bounded.heavy_workers < by_cpu.heavy_workers and bounded.bound_by == "memory"
    assert bounded.heavy_workers * MEMORY.worker <= 512 * MIB / 2
    assert bounded.tree_bytes() <= 512 * MIB
    assert idle_tree_bytes(bounded.heavy_workers) < bounded.tree_bytes()


def test_server_processes_share_the_budget() -> None:
    budget = Budget(8.0, "cgroup v2 cpu.max", 32, 2048 * MIB, "cgroup v2 memory.max")
    one, four = size(budget, 1), size(budget, 4)
    assert (one.heavy_workers, four.heavy_workers) == (4, 1)
    assert four.max_concurrent_rpcs < one.max_concurrent_rpcs
    assert tree_bytes(four.heavy_workers, four.max_concurrent_rpcs, 4) <= 2048 * MIB


def test_a_limit_too_small_for_one_worker_says_so() -> None:
    sizing = size(Budget(1.0, "cgroup v2 cpu.max", 2, 96 * MIB, "cgroup v2 memory.max"))
    assert (sizing.heavy_workers, sizing.max_concurrent_rpcs, sizing.fits) == (1, MIN_CALLS, False)


# -- a real server in a real cgroup ------------------------------------------------------------------


def budget_line(server: ServerProcess) -> dict[str, object]:
    for line in server.log().splitlines():
        if '"container budget"' in line:
            return dict(json.loads(line))
    raise AssertionError(f"no budget line in the log: {server.log()[-2000:]}")


def test_a_server_in_a_cgroup_sizes_itself_from_it(tmp_path: Path) -> None:
    """bigtwo serve started inside a cgroup with 0.5 CPU and 256 MiB: it reads both, chooses from them
    (one worker, the calls 256 MiB hold), keeps a flag given, and its workers live in the group."""
    if os.geteuid() != 0:
        pytest.skip("making a cgroup needs root")
    cpus, memory = 0.5, 256 * MIB
    try:
        group = Cgroup.make(f"bigtwo-test-{os.getpid()}", cpus, memory)
    except CgroupUnavailable as exc:
        pytest.skip(f"no cgroup can be made here: {exc}")
    server = None
    try:
        server = ServerProcess(tmp_path, "--no-call-log", "--heavy-waiting", "3", metrics=False, preexec_fn=group.enter)
        chosen = budget_line(server)
        expected = size(Budget(cpus, "", AFFINITY, memory, ""))
        kind = f"cgroup v{group.version}"
        assert chosen["cpus"] == cpus and str(chosen["cpu_source"]).startswith(f"{kind} cpu")
        assert chosen["memory_mib"] == 256 and str(chosen["memory_source"]).startswith(f"{kind} memory")
        assert chosen["heavy_workers"] == expected.heavy_workers == 1
        assert chosen["max_concurrent_rpcs"] == expected.max_concurrent_rpcs < MAX_CALLS
        assert chosen["heavy_waiting"] == 3 and chosen["given"] == ["--heavy-waiting"]
        until = time.monotonic() + 60
        while not any(role(pid) == "worker" for pid in descendants(server.process.pid)):
            assert time.monotonic() < until, "the heavy worker did not start"
            time.sleep(0.2)
        for pid in [server.process.pid, *descendants(server.process.pid)]:
            assert group.folders[0].name in Path(f"/proc/{pid}/cgroup").read_text(), pid
        assert 0 < (group.peak_bytes() or 0) <= memory
    finally:
        if server is not None:
            assert server.stop() == 0
        group.remove()
