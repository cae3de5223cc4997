"""``python -m bigtwo.tools.probe_bench``: the CPU one health probe costs, as the TLS overlay used to
probe (an ``exec`` probe: ``bigtwo health`` over TLS, a fresh Python process each time) and as it
probes now (the kubelet's native ``grpc:`` probe against the plaintext ``--health-port``).

It starts ``bigtwo serve`` with TLS (a CA and a certificate for localhost made here) and a health
port on 127.0.0.1, measures the server's own CPU at idle for ``--idle-seconds``, then:

1. ``--exec-probes`` runs of the overlay's probe command, ``bigtwo health --quiet --service
   bigtwo.v1.BigTwoService --tls-ca CA --server-name localhost``: the CPU of each process (user +
   system, from ``getrusage(RUSAGE_CHILDREN)``), and the server's CPU for them beyond its idle rate;
2. ``--native-probes`` probes the way the kubelet makes them: a new plaintext connection to the
   health port, one ``grpc.health.v1.Health/Check``, the connection closed: the server's CPU per
   probe beyond its idle rate (the prober here is Python; the kubelet's Go prober runs outside the
   pod, so its CPU is not the pod's).

The server's CPU is read from ``/proc/PID/stat`` (clock ticks), so many probes are made for a
figure per probe. The shares of a core use the manifests' periods (readiness every 5 s, liveness
every 10 s).

    python -m bigtwo.tools.probe_bench [--exec-probes 20] [--native-probes 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .local_server import LocalServer
from .memory_bench import BENCH_KEY, make_tls

SERVICE = "bigtwo.v1.BigTwoService"
PROBES_PER_SECOND = 1 / 5 + 1 / 10
"""The manifests' readiness (every 5 s) and liveness (every 10 s) probes; the startup probe runs only
until the first success."""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def check(target: str) -> int:
    """One probe as the kubelet makes it: a new connection, one Check, closed."""
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=SERVICE), timeout=10, wait_for_ready=True
        )
    return int(reply.status)


def measure(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    cert, key, ca_pem = make_tls(folder)
    ca = folder / "ca.crt"
    ca.write_bytes(ca_pem)
    tls = ("--tls-cert", str(cert), "--tls-key", str(key), "--no-call-log", "--heavy-workers", "1")
    server = LocalServer(
        *tls, health=True, clean=True, keys=BENCH_KEY, home=folder / "home", log=folder / "server.log", wait=False
    )
    env = server.env
    bigtwo = shutil.which("bigtwo", path=str(Path(sys.executable).parent)) or "bigtwo"
    probe = [bigtwo, "health", "--quiet", "--service", SERVICE, "--target", server.target]
    probe += ["--tls-ca", str(ca), "--server-name", "localhost"]
    health = f"127.0.0.1:{server.health_port}"
    try:
        server.wait_ready()  # on the plaintext health port
        time.sleep(3.0)  # the heavy worker's start is not a probe's cost
        cpu, started = server.cpu_seconds(), time.monotonic()
        time.sleep(args.idle_seconds)
        idle_rate = (server.cpu_seconds() - cpu) / (time.monotonic() - started)

        def server_beyond_idle(cpu_before: float, since: float) -> float:
            return (server.cpu_seconds() - cpu_before) - idle_rate * (time.monotonic() - since)

        mine, cpu, started = children_cpu(), server.cpu_seconds(), time.monotonic()
        for _ in range(args.exec_probes):
            subprocess.run(probe, env=env, check=True, timeout=60)
        exec_wall = (time.monotonic() - started) / args.exec_probes
        exec_process = (children_cpu() - mine) / args.exec_probes
        exec_server = server_beyond_idle(cpu, started) / args.exec_probes

        cpu, started = server.cpu_seconds(), time.monotonic()
        for _ in range(args.native_probes):
            assert check(health) == health_pb2.HealthCheckResponse.SERVING
        native_wall = (time.monotonic() - started) / args.native_probes
        native_server = server_beyond_idle(cpu, started) / args.native_probes
    finally:
        server.stop(30)
    before = exec_process + max(0.0, exec_server)
    after = max(0.0, native_server)
    return {
        "idle_server_cpu_share": round(idle_rate, 4),
        "exec_probe": {
            "probes": args.exec_probes,
            "process_cpu_ms": round(exec_process * 1000, 1),
            "server_cpu_ms": round(exec_server * 1000, 2),
            "wall_ms": round(exec_wall * 1000, 1),
            "command": " ".join(["bigtwo", *probe[1:]]),
        },
        "native_probe": {
            "probes": args.native_probes,
            "server_cpu_ms": round(native_server * 1000, 3),
            "wall_ms": round(native_wall * 1000, 2),
        },
        "core_share_at_manifest_periods": {
            "before": round(before * PROBES_PER_SECOND, 5),
            "after": round(after * PROBES_PER_SECOND, 6),
        },
        "ratio_before_to_after": round(before / after, 0) if after > 0 else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exec-probes", type=int, default=20, help="bigtwo health runs (default 20)")
    parser.add_argument("--native-probes", type=int, default=2000, help="health Checks (default 2000)")
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="the server's idle CPU rate (default 5 s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bigtwo-probes-") as temp:
        report = measure(args, Path(temp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    exec_probe, native = report["exec_probe"], report["native_probe"]
    shares = report["core_share_at_manifest_periods"]
    print(f"exec probe ({exec_probe['probes']} runs of `{exec_probe['command']}`):")
    print(f"  {exec_probe['process_cpu_ms']} ms CPU in the probe's process,", end=" ")
    print(f"{exec_probe['server_cpu_ms']} ms in the server")
    print(f"native probe ({native['probes']} Checks, a new plaintext connection each, on --health-port):")
    print(f"  {native['server_cpu_ms']} ms CPU in the server")
    print(f"share of a core at the manifests' periods: before {shares['before']:.2%}, after {shares['after']:.4%}")
    print(f"before / after: {report['ratio_before_to_after']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
