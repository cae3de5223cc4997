"""``python -m bigtwo.tools.memory_bench``: the memory of a replica's whole process tree, at idle and
at full load, with the Kubernetes manifests' settings.

What a pod's memory limit holds is everything its cgroup charges: the server process, its heavy-call
workers and multiprocessing's resource tracker. This starts ``bigtwo serve`` with the environment the
Deployment sets (``--manifest base`` or ``overlay``: the example overlay's patch on the base,
TLS included, with a certificate made here), on 127.0.0.1 and free ports, and measures the
proportional set size (PSS, from ``/proc/PID/smaps_rollup``: a page shared by N processes counts 1/N
in each, so the sum is what the tree holds) of every process of the tree:

1. at idle, once every worker has started and the server has answered one call;
2. at full load: streams open up to 95% of ``--max-concurrent-rpcs`` less the heavy calls, each
   with a deal played to its last moves (the largest state a stream holds), and every heavy slot
   (``--heavy-workers`` + ``--heavy-waiting``) busy with pro bot searches at their largest budget;
   the largest sum seen over ``--seconds``, and that sum extrapolated to every call slot taken
   (the server's growth per stream times the slots left).

With ``--cgroup`` (root, and a kernel that lets a cgroup be made: docs/DEPLOY.md) the server runs in a
cgroup of its own with the manifest's CPU and memory limits, so that it sizes itself from them as in
the pod, and the cgroup's own peak (what the out-of-memory killer compares with the limit) is printed
beside the PSS sums.

    python -m bigtwo.tools.memory_bench --manifest base --cgroup
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from bigtwo.service.container import CGROUP_ROOT, PROC_SELF_CGROUP, own_groups, read_budget, size
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb

from .local_server import LocalServer, descendants
from .stall_bench import PRESET, StreamDeal, stream_deals

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = {
    "base": (ROOT / "deploy/k8s/base/deployment.yaml", None),
    "overlay": (ROOT / "deploy/k8s/base/deployment.yaml", ROOT / "deploy/k8s/overlays/example/deployment-tls.yaml"),
}
BENCH_KEY = "memory-bench-only-key-" + "0" * 32
MIB = 1 << 20
CHOSEN = ("cpus", "cpu_source", "memory_mib", "memory_source", "heavy_workers", "heavy_waiting", "max_concurrent_rpcs")
LOCAL_ENV = ("BIGTWO_HOST", "BIGTWO_PORT", "BIGTWO_METRICS_PORT", "BIGTWO_WEB_PORT", "BIGTWO_HOME")
"""Settings that name the pod's own addresses and files: replaced by local ones here."""


# -- the manifest's settings ----------------------------------------------------------------------


@dataclass(frozen=True)
class PodSettings:
    env: dict[str, str]
    cpu_limit: float
    memory_limit: int
    memory_request: int


def quantity_bytes(text: str) -> int:
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


def quantity_cpus(text: str | int | float) -> float:
    value = str(text)
    return int(value[:-1]) / 1000 if value.endswith("m") else float(value)


def pod_settings(which: str) -> PodSettings:
    import yaml  # type: ignore[import-untyped]

    base_path, patch_path = MANIFESTS[which]
    container = yaml.safe_load(base_path.read_text())["spec"]["template"]["spec"]["containers"][0]
    env = {item["name"]: str(item["value"]) for item in container["env"] if "value" in item}
    resources = container["resources"]
    if patch_path is not None:
        patched = yaml.safe_load(patch_path.read_text())["spec"]["template"]["spec"]["containers"][0]
        env.update({item["name"]: str(item["value"]) for item in patched.get("env", []) if "value" in item})
        resources = {**resources, **patched.get("resources", {})}
    return PodSettings(
        env,
        quantity_cpus(resources["limits"]["cpu"]),
        quantity_bytes(resources["limits"]["memory"]),
        quantity_bytes(resources["requests"]["memory"]),
    )


# -- a cgroup of the server's own -----------------------------------------------------------------


class CgroupUnavailable(Exception):
    """No cgroup with a CPU quota and a memory limit can be made here; the text says why."""


@dataclass
class Cgroup:
    """A child of this process's own cgroup with a CPU quota and a memory limit (v2 where its
    ``cpu`` and ``memory`` controllers are on, else v1's ``cpu`` and ``memory`` hierarchies). A
    process joins it with :meth:`enter` (e.g. as a subprocess's ``preexec_fn``)."""

    folders: list[Path]
    version: int

    @classmethod
    def make(
        cls, name: str, cpus: float, memory_bytes: int, root: Path = CGROUP_ROOT, proc: Path = PROC_SELF_CGROUP
    ) -> Cgroup:
        groups = own_groups(proc)
        for mount in (root, root / "unified"):
            listed = mount / "cgroup.controllers"
            controllers = listed.read_text().split() if listed.is_file() else []
            if {"cpu", "memory"} <= set(controllers):
                return cls._make_v2(mount / groups.get("", "/").strip("/") / name, cpus, memory_bytes)
        v2_note = "cgroup v2 has no cpu and memory controllers here (they are bound to v1)"
        folders = {}
        for controller in ("cpu", "memory"):
            names = (controller, "cpu,cpuacct")
            hierarchy = next((root / n for n in names if (root / n).is_dir() and controller in n), None)
            if hierarchy is None or controller not in groups:
                raise CgroupUnavailable(f"{v2_note}, and no cgroup v1 {controller} hierarchy is mounted at {root}")
            folders[controller] = hierarchy / groups[controller].strip("/") / name
        made = []
        try:
            for folder in folders.values():
                folder.mkdir()
                made.append(folder)
            (folders["cpu"] / "cpu.cfs_period_us").write_text("100000")
            (folders["cpu"] / "cpu.cfs_quota_us").write_text(str(int(cpus * 100_000)))
            (folders["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
        except OSError as exc:
            for folder in made:
                folder.rmdir()
            raise CgroupUnavailable(f"{v2_note}; cgroup v1: cannot set up {exc.filename}: {exc.strerror}") from None
        return cls(list(folders.values()), 1)

    @classmethod
    def _make_v2(cls, folder: Path, cpus: float, memory_bytes: int) -> Cgroup:
        try:
            (folder.parent / "cgroup.subtree_control").write_text("+cpu +memory")
            folder.mkdir()
            (folder / "cpu.max").write_text(f"{int(cpus * 100_000)} 100000")
            (folder / "memory.max").write_text(str(memory_bytes))
        except OSError as exc:
            if folder.is_dir():
                folder.rmdir()
            raise CgroupUnavailable(f"cgroup v2: cannot set up {exc.filename}: {exc.strerror}") from None
        return cls([folder], 2)

    def enter(self) -> None:
        """Move the calling process into the group (its children follow)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def _memory(self) -> Path:
        return next(f for f in self.folders if (f / "memory.max").exists() or (f / "memory.limit_in_bytes").exists())

    def peak_bytes(self) -> int | None:
        """The most memory the group was charged since it was made (v2 ``memory.peak``, kernels
        from 5.19; v1 ``memory.max_usage_in_bytes``)."""
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            path = self._memory() / name
            if path.exists():
                return int(path.read_text().split()[0])
        return None

    def remove(self, seconds: float = 10.0) -> None:
        """Remove the group once its processes have ended."""
        until = time.monotonic() + seconds
        for folder in self.folders:
            while True:
                try:
                    folder.rmdir()
                    break
                except OSError:
                    if time.monotonic() > until:
                        raise
                    time.sleep(0.1)


# -- the process tree ----------------------------------------------------------------------------


def pss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def role(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "gone"
    if "resource_tracker" in command:
        return "tracker"
    if "spawn_main" in command:
        return "worker"
    return "other"


def tree_pss(server: int) -> dict[str, int]:
    """PSS by role: ``server``, ``worker`` (summed), ``tracker``, ``other``, and ``total``."""
    sums = {"server": pss_bytes(server), "worker": 0, "tracker": 0, "other": 0}
    workers = 0
    for pid in descendants(server):
        kind = role(pid)
        if kind != "gone":
            sums[kind] += pss_bytes(pid)
            workers += kind == "worker"
    sums["total"] = sum(sums.values())
    sums["workers"] = workers
    return sums


# -- the server ----------------------------------------------------------------------------------


def make_tls(folder: Path) -> tuple[Path, Path, bytes]:
    """A CA and a certificate for localhost signed by it: (certificate, key, the CA's PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "memory bench CA")])
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert, key_path = folder / "tls.crt", folder / "tls.key"
    cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert, key_path, ca.public_bytes(serialization.Encoding.PEM)


class Server(LocalServer):
    """``bigtwo serve`` as the manifest's pod runs it (its environment), on free loopback ports;
    ``credentials`` verify it when the pod serves TLS."""

    def __init__(self, credentials: grpc.ChannelCredentials | None, **options: Any) -> None:
        self.credentials = credentials
        super().__init__(**options, wait=False)
        self.wait_ready(credentials=credentials, server_name="localhost")

    def channel(self) -> grpc.aio.Channel:
        options = [("grpc.use_local_subchannel_pool", 1)]
        if self.credentials is None:
            return grpc.aio.insecure_channel(self.target, options=options)
        return grpc.aio.secure_channel(
            self.target, self.credentials, options=[*options, ("grpc.ssl_target_name_override", "localhost")]
        )

    def chosen(self) -> dict[str, Any]:
        """The server's "container budget" log line."""
        for line in self.log().splitlines():
            if '"container budget"' in line:
                return dict(json.loads(line))
        return {}


def start_server(settings: PodSettings, folder: Path, cgroup: Cgroup | None) -> Server:
    """The pod's environment less what is local (host, ports, home: here, free loopback ports and a
    home in ``folder``), the bench's key in a key file, TLS when the pod serves it."""
    env = {k: v for k, v in settings.env.items() if k not in LOCAL_ENV}
    keys = folder / "token-keys"
    keys.write_text(BENCH_KEY + "\n")
    env.update(BIGTWO_LOG_CALLS="0", BIGTWO_TOKEN_KEYS_FILE=str(keys))
    credentials = None
    if "BIGTWO_TLS_CERT" in settings.env:
        cert, key, ca = make_tls(folder)
        env.update(BIGTWO_TLS_CERT=str(cert), BIGTWO_TLS_KEY=str(key))
        credentials = grpc.ssl_channel_credentials(ca)
    return Server(
        credentials,
        metrics=True,
        web="BIGTWO_WEB_PORT" in settings.env,
        clean=True,
        home=folder / "home",
        env=env,
        log=folder / "server.log",
        preexec_fn=cgroup.enter if cgroup is not None else None,
    )


# -- load ----------------------------------------------------------------------------------------


@dataclass
class Load:
    streams_open: int = 0
    moves: int = 0
    heavy_calls: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    first_errors: list[str] = field(default_factory=list)

    def count(self, error: grpc.RpcError) -> None:
        code = error.code().name
        self.codes[code] = self.codes.get(code, 0) + 1
        if len(self.first_errors) < 3:
            self.first_errors.append(f"{code}: {error.details()}")


async def hold_stream(
    stub: Any, deal: StreamDeal, load: Load, release: asyncio.Event, ready: asyncio.Semaphore
) -> None:
    call = stub.PlayStream()
    try:
        log = pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=deal.code)
        await call.write(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
        await call.read()
        for move in deal.moves[:-2]:  # the deal's largest state, still in play
            await call.write(api.PlayStreamRequest(move=api.StreamMove(move=move)))
            await call.read()
            load.moves += 1
        load.streams_open += 1
    except grpc.RpcError as exc:
        load.count(exc)
        return
    finally:
        ready.release()
    await release.wait()
    await call.done_writing()
    await call.code()


async def heavy_loop(stub: Any, deal: StreamDeal, load: Load, release: asyncio.Event, seed: int) -> None:
    game = pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=deal.code))
    while not release.is_set():
        request = api.BotMoveRequest(game=game, level="pro", seed=seed, simulations=10_000, max_ms=3_000)
        try:
            await stub.BotMove(request, timeout=60)
            load.heavy_calls += 1
        except grpc.RpcError as exc:
            load.count(exc)
            await asyncio.sleep(0.2)
        seed += 1


async def full_load(server: Server, streams: int, heavy: int, seconds: float) -> tuple[Load, dict[str, int]]:
    channels = [server.channel() for _ in range(8)]
    stubs = [rpc.BigTwoServiceStub(channel) for channel in channels]
    deals = stream_deals(64)
    load, release = Load(), asyncio.Event()
    ready = asyncio.Semaphore(0)
    heavies = [asyncio.create_task(heavy_loop(stubs[i % 8], deals[i % 64], load, release, i)) for i in range(heavy)]
    holders = []
    for number in range(streams):
        holders.append(asyncio.create_task(hold_stream(stubs[number % 8], deals[number % 64], load, release, ready)))
        if number % 64 == 63:
            await asyncio.sleep(0)
    for _ in range(streams):
        await ready.acquire()
    peak: dict[str, int] = {"total": 0}
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        sample = await asyncio.to_thread(tree_pss, server.process.pid)
        if sample["total"] > peak["total"]:
            peak = sample
        await asyncio.sleep(0.25)
    release.set()
    await asyncio.gather(*holders, *heavies, return_exceptions=True)
    for channel in channels:
        await channel.close()
    return load, peak


async def idle_call(server: Server) -> None:
    channel = server.channel()
    try:
        await rpc.BigTwoServiceStub(channel).ListPresets(api.ListPresetsRequest(), timeout=60, wait_for_ready=True)
    finally:
        await channel.close()


def wait_workers(server: Server, count: int, seconds: float = 120.0) -> None:
    until = time.monotonic() + seconds
    while sum(role(pid) == "worker" for pid in descendants(server.process.pid)) < count:
        if time.monotonic() > until or server.process.poll() is not None:
            raise SystemExit(f"memory_bench: {count} workers did not start: {server.log()[-2000:]}")
        time.sleep(0.2)
    time.sleep(3.0)  # each worker imports the engine after it appears


def mib(value: int | None) -> str:
    return "-" if value is None else f"{value / MIB:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", choices=sorted(MANIFESTS), default="base")
    parser.add_argument("--cgroup", action="store_true", help="run the server in a cgroup with the manifest's limits")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of full load sampled (default 10)")
    parser.add_argument(
        "--streams", type=int, default=0, help="streams held open (default: 95%% of the cap less the heavy calls)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    settings = pod_settings(args.manifest)
    cgroup = None
    if args.cgroup:
        try:
            cgroup = Cgroup.make(f"bigtwo-memory-bench-{os.getpid()}", settings.cpu_limit, settings.memory_limit)
        except CgroupUnavailable as exc:
            raise SystemExit(f"memory_bench: --cgroup: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="bigtwo-memory-") as temp:
        server = start_server(settings, Path(temp), cgroup)
        try:
            asyncio.run(idle_call(server))
            chosen = server.chosen()
            workers, waiting = int(chosen["heavy_workers"]), int(chosen["heavy_waiting"])
            wait_workers(server, workers)
            idle = tree_pss(server.process.pid)
            cap = int(chosen["max_concurrent_rpcs"]) or 10_000
            # 95% of the cap: gRPC frees a finished call's slot a moment after its end, so a heavy
            # call started right after another may find the cap full at 100%.
            streams = args.streams or max(1, int(cap * 0.95) - workers - waiting)
            load, peak = asyncio.run(full_load(server, streams, workers + waiting, args.seconds))
            cgroup_peak = cgroup.peak_bytes() if cgroup is not None else None
        finally:
            server.stop()
            if cgroup is not None:
                cgroup.remove()
    per_stream = (peak["server"] - idle["server"]) / max(1, load.streams_open)
    slots_left = max(0, cap - workers - waiting - load.streams_open)
    model = size(read_budget(), 1)  # for comparison: what this machine, outside any limit, would choose
    report = {
        "manifest": args.manifest,
        "limits": {"cpu": settings.cpu_limit, "memory_mib": settings.memory_limit / MIB},
        "request_memory_mib": settings.memory_request / MIB,
        "cgroup": cgroup.version if cgroup is not None else None,
        "chosen": {k: chosen.get(k) for k in CHOSEN},
        "idle_mib": {k: round(v / MIB, 1) if k != "workers" else v for k, v in idle.items()},
        "loaded_mib": {k: round(v / MIB, 1) if k != "workers" else v for k, v in peak.items()},
        "cgroup_peak_mib": None if cgroup_peak is None else round(cgroup_peak / MIB, 1),
        "streams_open": load.streams_open,
        "stream_moves": load.moves,
        "heavy_calls_answered": load.heavy_calls,
        "errors": load.codes,
        "first_errors": load.first_errors,
        "per_stream_kib": round(per_stream / 1024, 1),
        "at_cap_mib": round((peak["total"] + slots_left * per_stream) / MIB, 1),
        "unlimited_here": {"heavy_workers": model.heavy_workers, "max_concurrent_rpcs": model.max_concurrent_rpcs},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"manifest {args.manifest}: limits {settings.cpu_limit:g} CPU, {mib(settings.memory_limit)} MiB; "
        f"request {mib(settings.memory_request)} MiB; cgroup {report['cgroup'] or 'none'}"
    )
    print(f"chosen: {report['chosen']}")
    print("PSS MiB   " + " ".join(f"{title:>8}" for title in ("server", "workers", "tracker", "total")))
    for name, sums in (("idle", idle), ("loaded", peak)):
        columns = (mib(sums[key]) for key in ("server", "worker", "tracker", "total"))
        print(f"{name:<9} " + " ".join(f"{column:>8}" for column in columns))
    print(f"cgroup peak: {mib(cgroup_peak)} MiB; streams open {load.streams_open}, moves {load.moves}")
    print(f"heavy calls answered {load.heavy_calls}, errors {load.codes} {load.first_errors}")
    print(f"per stream {report['per_stream_kib']} KiB")
    print(f"the tree with every call slot taken ({cap} calls in flight), extrapolated: {report['at_cap_mib']} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
