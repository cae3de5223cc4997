"""``python -m bigtwo.tools.web_bench``: moves per second through the browser port's protocols
(Connect, binary and JSON, HTTP/1.1 and HTTP/2; gRPC-Web) against native gRPC, in one run.

One real server (``bigtwo serve`` as deployed: per-call logs, metrics) with its browser port on;
the same prepared deals are played by ApplyMove with state tokens, one call per move, at each load
(games played at once), over each way in turn. A round measures every way once, back to back, and
the rounds repeat, so slow drift of the machine spreads over all of them alike. For each way: moves
per second, p50/p99 latency per move seen by the client, the server process's CPU time per move,
and the ratio to native gRPC of the same round (the median over rounds). Then, per load and HTTP
version, the browser port's ratio to the gRPC port (``web_port_vs_grpc``): Connect's binary way over
that version (the table's protocol, and connect-web's), and the lowest of the port's binary ways
(gRPC-Web too), each against issue 32's floor of :data:`RATIO_FLOOR`; and, steadier on a busy
machine, the same share in moves per second of the server's CPU (``cpu_ratio_to_grpc``: gRPC's
server CPU per move over the way's), what the port can serve once the server's CPU is the limit.

The clients are the Connect project's own (connectrpc over pyqwest) and grpcio's, in this process:
on a machine of two cores the client shares the CPU with the server, which is why the server's CPU
per move is reported too (the protocol's own cost on the server side), and the client's
(``client_cpu_us_per_move``: this process's CPU over the run, its connections' set-up and one
warm-up game included, as the server's is). At one game a move waits for the client and the server
in turn, so a client that spends more per move lowers its way's moves per second as surely as the
server would: the Connect client's gRPC-Web, which reads every answer through its streaming path,
spends about twice what grpcio's does (docs/PERFORMANCE.md "Browser protocols").

The ``-node`` ways play the same loop through the stock TypeScript runtime that browsers and Node
front ends use (@connectrpc/connect-node: Connect binary and gRPC-Web over each HTTP version,
clients/ts/bench/web_moves.ts, bundled by clients/ts's esbuild and run by node, its CPU its own,
counted after an untimed warm-up); they are skipped, with a sentence saying ``make ts-deps``, where
node or clients/ts/node_modules is missing (``--no-node`` leaves them out). ``web_port_vs_grpc``
keeps the Python client's figures as its headline fields, adds the stock client's as ``node_*``, and
judges the floor way by way in ``ways``, each naming its client.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb

from .service_bench import BENCH_KEY, GAMES, PreparedGame, Run, ServerProcess, prepare_games

LOADS = (1, 16)
RATIO_FLOOR = 0.6
"""The browser port serves at least this share of the gRPC port's unary moves per second, over
HTTP/1.1 and over HTTP/2 (issue 32)."""
SERVICE = "bigtwo.v1.BigTwoService"


@dataclass(frozen=True, slots=True)
class Way:
    """How a client reaches the API: the protocol, its HTTP version and its codec."""

    name: str
    protocol: str
    """``grpc`` (native, the gRPC port), ``connect`` or ``grpc-web`` (the browser port)."""
    http2: bool = True
    json: bool = False
    client: str = "python"
    """``python`` (grpcio or connectrpc in this process) or ``node`` (the stock TypeScript runtime,
    @connectrpc/connect-node, in a node process: clients/ts/bench/web_moves.ts)."""

    @property
    def client_name(self) -> str:
        if self.client == "node":
            return "connect-node (TypeScript)"
        return "grpcio (Python)" if self.protocol == "grpc" else "connectrpc (Python)"


WAYS = (
    Way("grpc", "grpc"),
    Way("connect-proto-h1", "connect", http2=False),
    Way("connect-json-h1", "connect", http2=False, json=True),
    Way("connect-proto-h2", "connect"),
    Way("grpc-web-proto-h1", "grpc-web", http2=False),
    Way("grpc-web-proto-h2", "grpc-web"),
)
NODE_WAYS = (
    Way("connect-proto-h1-node", "connect", http2=False, client="node"),
    Way("connect-proto-h2-node", "connect", client="node"),
    Way("grpc-web-proto-h1-node", "grpc-web", http2=False, client="node"),
    Way("grpc-web-proto-h2-node", "grpc-web", client="node"),
)
"""The same loop through the stock TypeScript client, the runtime browsers and Node front ends use:
run when node and clients/ts/node_modules are there (``make ts-deps``)."""
TS = Path(__file__).resolve().parent.parent / "ts"
NODE_WARM_S = 1.0
"""The stock client's untimed warm-up before each of its runs: a fresh node process spends about
twice the CPU a move over its first two seconds (V8 compiling the hot paths: 1,440 against 800 µs a
gRPC-Web move over HTTP/1.1 in 2 s and 8 s runs), which a long-lived browser tab does not. The
Python ways warm up with one game, which is all an interpreter without a JIT needs."""

ApplyMove = Callable[[api.ApplyMoveRequest], Awaitable[api.ApplyMoveResponse]]


class Clients:
    """One way's clients (``count`` connections), each an ``apply`` function; closed together."""

    def __init__(self, way: Way, server: ServerProcess, count: int) -> None:
        self.way = way
        self.applies: list[ApplyMove] = []
        self._closers: list[Callable[[], Awaitable[Any]]] = []
        for _ in range(count):
            if way.protocol == "grpc":
                self._native(server.port)
            else:
                self._web(server.web_port)

    def _native(self, port: int) -> None:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = rpc.BigTwoServiceStub(channel)
        self.applies.append(stub.ApplyMove)
        self._closers.append(channel.close)

    def _web(self, port: int) -> None:
        from connectrpc.client import ConnectClient
        from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
        from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
        from connectrpc.protocol import ProtocolType
        from pyqwest import Client, HTTPTransport, HTTPVersion

        version = HTTPVersion.HTTP2 if self.way.http2 else HTTPVersion.HTTP1
        http = Client(HTTPTransport(http_version=version))
        protocol = ProtocolType.CONNECT if self.way.protocol == "connect" else ProtocolType.GRPC_WEB
        codec = google_protobuf_json_codec() if self.way.json else google_protobuf_binary_codec()
        client = ConnectClient(
            f"http://127.0.0.1:{port}", codec=codec, protocol=protocol, http_client=http, send_compression=None
        )
        method: MethodInfo[api.ApplyMoveRequest, api.ApplyMoveResponse] = MethodInfo(
            name="ApplyMove",
            service_name=SERVICE,
            input=api.ApplyMoveRequest,
            output=api.ApplyMoveResponse,
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.UNARY,
        )

        async def apply(request: api.ApplyMoveRequest) -> api.ApplyMoveResponse:
            return await client.execute_unary(request=request, method=method)

        self.applies.append(apply)
        self._closers.append(client.close)

    async def close(self) -> None:
        for close in self._closers:
            await close()


async def _game(apply: ApplyMove, game: PreparedGame, latencies: list[float]) -> None:
    token = game.start_token
    for move in game.moves:
        started = time.perf_counter()
        reply = await apply(api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move))
        latencies.append(time.perf_counter() - started)
        if not reply.outcome.accepted:
            raise RuntimeError(f"the bench's move {move} was refused: {reply.outcome.refusal.message}")
        token = reply.state_token


async def _load(way: Way, server: ServerProcess, games: list[PreparedGame], concurrency: int, seconds: float) -> Run:
    clients = Clients(way, server, min(concurrency, 8))
    run = Run(way.name, "real", concurrency)
    try:
        await _game(clients.applies[0], games[0], [])  # connections up, code paths warm
        deadline = time.perf_counter() + seconds

        async def worker(number: int) -> None:
            apply = clients.applies[number % len(clients.applies)]
            turn = number
            while time.perf_counter() < deadline:
                await _game(apply, games[turn % len(games)], run.latencies)
                turn += concurrency

        started = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in range(concurrency)))
        run.seconds = time.perf_counter() - started
        run.moves = len(run.latencies)
    finally:
        await clients.close()
    return run


class NodeClient:
    """The stock-client ways' driver (clients/ts/bench/web_moves.ts), bundled by clients/ts's esbuild
    into a temporary folder; :meth:`missing` says why it cannot run (node or the npm packages absent)."""

    def __init__(self, games: list[PreparedGame]) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="web-bench-node-")
        self.script = Path(self._folder.name) / "web_moves.mjs"
        self.node = shutil.which("node")
        self.games = json.dumps(
            {
                "games": [
                    {
                        "token": base64.b64encode(game.start_token).decode(),
                        "moves": [base64.b64encode(move.SerializeToString()).decode() for move in game.moves],
                    }
                    for game in games
                ]
            }
        )

    def missing(self) -> str | None:
        esbuild = TS / "node_modules" / ".bin" / "esbuild"
        if self.node is None or not esbuild.exists():
            return (
                "node or clients/ts/node_modules is missing: run `make ts-deps` for the stock TypeScript client's ways"
            )
        built = subprocess.run(
            [
                str(esbuild),
                "bench/web_moves.ts",
                "--bundle",
                "--platform=node",
                "--format=esm",
                f"--outfile={self.script}",
            ],
            cwd=TS,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return None if built.returncode == 0 else f"clients/ts/bench/web_moves.ts did not build: {built.stderr}"

    def run(self, way: Way, server: ServerProcess, concurrency: int, seconds: float) -> Run:
        """One way at one load, after the driver's untimed warm-up (:data:`NODE_WARM_S`): its own
        count, time, latencies and CPU, and the server's CPU from the warm-up's end."""
        assert self.node is not None
        http = "2" if way.http2 else "1.1"
        args = [str(server.web_port), way.protocol, http, str(concurrency), str(seconds), str(NODE_WARM_S)]
        with subprocess.Popen(
            [self.node, str(self.script), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(self.games)
            proc.stdin.close()
            warm = proc.stdout.readline()
            cpu_before = server.cpu_seconds()
            out_line = proc.stdout.read()
            code = proc.wait(timeout=seconds + 120)
        if code != 0 or not warm.strip():
            raise RuntimeError(f"{way.name}: the node driver failed (exit {code}; its error is above)")
        out = json.loads(out_line)
        run = Run(way.name, "real", concurrency, out["moves"], out["seconds"], 0.0, out["cpu_s"], out["latencies"])
        run.server_cpu = server.cpu_seconds() - cpu_before
        return run

    def close(self) -> None:
        self._folder.cleanup()


def _row(way: Way, load: int, runs: list[Run], ratios: list[float]) -> dict[str, Any]:
    moves = sum(run.moves for run in runs)
    seconds = sum(run.seconds for run in runs)
    latencies = sorted(latency for run in runs for latency in run.latencies)

    def percentile(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0.0

    return {
        "figure": "web_protocols",
        "way": way.name,
        "client": way.client_name,
        "load": load,
        "moves_per_s": round(moves / seconds, 1) if seconds else 0.0,
        "ratio_to_grpc": round(statistics.median(ratios), 3) if ratios else 1.0,
        "p50_ms": round(percentile(0.5), 3),
        "p99_ms": round(percentile(0.99), 3),
        "server_cpu_us_per_move": round(sum(run.server_cpu for run in runs) / moves * 1e6, 1) if moves else 0.0,
        "client_cpu_us_per_move": round(sum(run.client_cpu for run in runs) / moves * 1e6, 1) if moves else 0.0,
        "rounds": len(runs),
    }


def _versus_grpc(rows: list[dict[str, Any]], load: int) -> list[dict[str, Any]]:
    """Per HTTP version, the browser port's ratios to gRPC among ``rows`` (one load). The headline
    fields are the Python client's, as before the stock client's ways: Connect binary's, and the
    lowest of its binary ways (in moves per second, and in moves per second of the server's CPU:
    ``lowest_cpu_ratio``); ``node_*`` the same through the stock TypeScript client when it ran; and
    ``ways`` judges the floor way by way, each naming its client."""
    summary = []
    for version in ("h1", "h2"):
        binary = [row for row in rows if f"proto-{version}" in row["way"]]
        row: dict[str, Any] = {"figure": "web_port_vs_grpc", "http": version, "load": load, "floor": RATIO_FLOOR}
        for prefix, client in (("", "python"), ("node_", "node")):
            mine = [way for way in binary if way["way"].endswith("-node") == (client == "node")]
            if not mine:
                continue
            connect = next(way for way in mine if way["way"].startswith("connect-"))
            lowest = min(mine, key=lambda way: way["ratio_to_grpc"])
            row |= {
                f"{prefix}client": connect["client"],
                f"{prefix}ratio_to_grpc": connect["ratio_to_grpc"],
                f"{prefix}cpu_ratio_to_grpc": connect["cpu_ratio_to_grpc"],
                f"{prefix}lowest_ratio": lowest["ratio_to_grpc"],
                f"{prefix}lowest_way": lowest["way"],
                f"{prefix}lowest_cpu_ratio": min(way["cpu_ratio_to_grpc"] for way in mine),
                f"{prefix}met": connect["ratio_to_grpc"] >= RATIO_FLOOR,
                f"{prefix}every_way_met": lowest["ratio_to_grpc"] >= RATIO_FLOOR,
            }
        row["ways"] = [
            {
                "way": way["way"],
                "client": way["client"],
                "ratio_to_grpc": way["ratio_to_grpc"],
                "cpu_ratio_to_grpc": way["cpu_ratio_to_grpc"],
                "met": way["ratio_to_grpc"] >= RATIO_FLOOR,
            }
            for way in binary
        ]
        summary.append(row)
    return summary


def measure(
    seconds: float,
    loads: tuple[int, ...],
    rounds: int,
    emit: Callable[[dict[str, Any]], None],
    mode: str = "aio",
    deals: int = GAMES,
    node: bool = True,
) -> list[dict[str, Any]]:
    """Each way at each load for ``rounds`` rounds of ``seconds``, cycling through ``deals`` deals;
    with ``node``, the stock TypeScript client's ways too where node and its packages are there (a
    sentence on stderr says when they are not)."""
    import uvloop
    from bigtwo.service.tokens import KeyRing, TokenCodec

    games = prepare_games(deals, TokenCodec(KeyRing([BENCH_KEY.encode()])))
    ways: tuple[Way, ...] = WAYS
    driver = NodeClient(games) if node else None
    if driver is not None:
        why = driver.missing()
        if why is None:
            ways += NODE_WAYS
        else:
            print(f"web_bench: the stock TypeScript client's ways are skipped: {why}", file=sys.stderr)
    server = ServerProcess("real", mode, max(loads) + 16, web=True)
    rows: list[dict[str, Any]] = []
    try:
        for load in loads:
            runs: dict[str, list[Run]] = {way.name: [] for way in ways}
            ratios: dict[str, list[float]] = {way.name: [] for way in ways}
            for number in range(rounds):
                native = 0.0
                for way in ways:
                    cpu_before, client_before = server.cpu_seconds(), time.process_time()
                    if way.client == "node" and driver is not None:
                        run = driver.run(way, server, load, seconds)  # node's own CPU, after its warm-up
                    else:
                        run = uvloop.run(_load(way, server, games, load, seconds))
                        run.client_cpu = time.process_time() - client_before
                        run.server_cpu = server.cpu_seconds() - cpu_before
                    runs[way.name].append(run)
                    native = run.rate if way.protocol == "grpc" else native
                    ratios[way.name].append(run.rate / native if native else 0.0)
                    print(
                        f"  load {load} round {number + 1}/{rounds}: {way.name} {run.rate:.0f} moves/s", file=sys.stderr
                    )
            load_rows = [_row(way, load, runs[way.name], ratios[way.name]) for way in ways]
            native_cpu = load_rows[0]["server_cpu_us_per_move"]
            for row in load_rows:  # moves per second of the server's CPU, against gRPC's
                cpu = row["server_cpu_us_per_move"]
                row["cpu_ratio_to_grpc"] = round(native_cpu / cpu, 3) if cpu else 0.0
            for row in load_rows + _versus_grpc(load_rows, load):
                rows.append(row)
                emit(row)
    finally:
        server.stop()
        if driver is not None:
            driver.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.web_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per way, load and round (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over every way (default 3)")
    parser.add_argument("--loads", default=",".join(map(str, LOADS)), help="games at once, comma-separated")
    parser.add_argument("--mode", choices=("aio",), default="aio")  # one server mode since issue 34
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--no-node", action="store_true", help="leave out the stock TypeScript client's ways")
    args = parser.parse_args(argv)
    loads = tuple(int(part) for part in args.loads.split(",") if part.strip())

    def emit(row: dict[str, Any]) -> None:
        print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)

    measure(args.seconds, loads, args.rounds, emit, args.mode, node=not args.no_node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
