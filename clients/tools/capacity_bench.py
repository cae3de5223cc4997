"""``python -m bigtwo.tools.capacity_bench``: the capacity of one replica, and where its knee is.

One replica (``bigtwo serve``'s hosting, aio, as deployed: per-call logs, metrics, its browser port
on) is offered a rising load, step by step, over three ways in: moves over ``PlayStream`` (one
stream per game), ``ApplyMove`` by state token (one call per move), and the browser port (Connect,
binary, HTTP/1.1, one ``ApplyMove`` per move). Each step paces every game at once to a total of
``rate`` moves/s for ``seconds`` and records:

* the throughput it got (moves answered per second) and the client's p50/p99 per move;
* the server's own p50/p99 per move, from its Prometheus histogram ``bigtwo_move_duration_seconds``
  read before and after the step (the step's share of it; quantiles interpolated inside buckets as
  Prometheus' ``histogram_quantile`` does), and the p99 of its event loop's lag
  (``bigtwo_event_loop_lag_seconds``: the wait a message meets before its handler runs, which
  grpc.aio does not let a handler time);
* the server process's CPU per second of the step (its share of a core), so that the throughput
  per core is the throughput divided by it.

The same steps run against the no-op server of :mod:`bigtwo.tools.service_bench` (the same hosting,
wrappers, logs and metrics, answering each call with the real answer computed at start-up, no
engine), in the same run, so the ratio to it is the share of the transport's own ceiling the service
keeps. The capacity of each way is the best throughput per core among the steps whose client p99
stayed at or under ``P99_BOUND_MS`` (50 ms) and that got at least 90% of the offered rate.

The client is this process (asyncio, grpc.aio and the Connect project's client), prepared moves only:
no engine on the client side, so on a small machine the client costs the server as little CPU as it
can. The plot (``--plot``, matplotlib) shows each way's throughput and latencies against the offered
rate, real and no-op, with the 50 ms bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb

from .loadtest.channels import Pacer
from .loadtest.report import percentile
from .service_bench import BENCH_KEY, GAMES, PRESET, PreparedGame, ServerProcess, prepare_games

TRANSPORTS = ("stream", "unary", "browser")
RATES = (250, 500, 1000, 1500, 2000, 3000, 4000, 6000)
"""Offered moves/s, step by step; a way's sweep stops two steps past its knee."""
P99_BOUND_MS = 50.0
CONCURRENCY = 64
"""Games played at once: enough for every rate here at a few ms a move; past the knee it bounds
the queue, as a fleet of front ends waiting for their answers does."""
SERVER_METHOD = {"stream": "PlayStream", "unary": "ApplyMove", "browser": "ApplyMove"}
"""The ``method`` label of each way's moves in ``bigtwo_move_duration_seconds``."""

Histogram = dict[float, float]
"""Cumulative counts by upper bound (``le``), +Inf included."""


# -- the server's histograms ---------------------------------------------------------------------


def scrape(port: int) -> dict[str, Histogram]:
    """The move-latency histogram of each method and the loop-lag histogram, now."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    out: dict[str, Histogram] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.endswith("_bucket"):
                continue
            if family.name == "bigtwo_move_duration_seconds":
                key = sample.labels.get("method", "")
            elif family.name == "bigtwo_event_loop_lag_seconds":
                key = "loop_lag"
            else:
                continue
            out.setdefault(key, {})[float(sample.labels["le"])] = sample.value
    return out


def quantile(before: Histogram, after: Histogram, q: float) -> float:
    """The ``q`` quantile (seconds) of what was observed between two readings of one histogram,
    interpolated linearly inside its bucket (Prometheus' ``histogram_quantile``); 0 when nothing."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if total <= 0:
        return 0.0
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, count in zip(bounds, counts, strict=True):
        if count >= rank:
            if bound == float("inf"):
                return lower  # beyond the last finite bucket: its bound is all that is known
            inside = count - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, count
    return lower


# -- the three ways in ---------------------------------------------------------------------------


class Ways:
    """``connections`` clients of one way to one server; :meth:`play` plays one game on the
    ``n``-th, paced; :meth:`close` closes them."""

    def __init__(self, transport: str, server: ServerProcess, connections: int) -> None:
        self.transport = transport
        self.connections = connections
        self.closers: list[Callable[[], Awaitable[Any]]] = []
        self.stubs: list[Any] = []
        self.applies: list[Callable[[api.ApplyMoveRequest], Awaitable[api.ApplyMoveResponse]]] = []
        if transport == "browser":
            from .web_bench import Clients, Way

            clients = Clients(Way("connect-proto-h1", "connect", http2=False), server, connections)
            self.applies = clients.applies
            self.closers.append(clients.close)
            return
        for _ in range(connections):
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
            stub = rpc.BigTwoServiceStub(channel)
            self.stubs.append(stub)
            self.applies.append(stub.ApplyMove)
            self.closers.append(channel.close)

    async def close(self) -> None:
        for close in self.closers:
            await close()

    async def play(self, n: int, game: PreparedGame, pacer: Pacer, latencies: list[float], done: Any) -> None:
        if self.transport == "stream":
            await _stream_game(self.stubs[n % len(self.stubs)], game, pacer, latencies, done)
        else:
            await _unary_game(self.applies[n % len(self.applies)], game, pacer, latencies, done)


async def _stream_game(stub: Any, game: PreparedGame, pacer: Pacer, latencies: list[float], done: Any) -> None:
    call = stub.PlayStream()
    log = pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=game.code)
    await call.write(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
    await call.read()
    for move in game.moves:
        if done():
            break
        await pacer.wait()
        started = time.perf_counter()
        await call.write(api.PlayStreamRequest(move=api.StreamMove(move=move)))
        await call.read()
        latencies.append(time.perf_counter() - started)
    await call.done_writing()
    await call.code()


async def _unary_game(
    apply: Callable[[api.ApplyMoveRequest], Awaitable[api.ApplyMoveResponse]],
    game: PreparedGame,
    pacer: Pacer,
    latencies: list[float],
    done: Any,
) -> None:
    token = game.start_token
    for move in game.moves:
        if done():
            break
        await pacer.wait()
        started = time.perf_counter()
        reply = await apply(api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move))
        latencies.append(time.perf_counter() - started)
        token = reply.state_token


# -- one step ------------------------------------------------------------------------------------


@dataclass
class Step:
    transport: str
    server: str
    rate: float
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    server_cpu: float = 0.0
    server_p50: float = 0.0
    server_p99: float = 0.0
    loop_lag_p99: float = 0.0

    @property
    def achieved(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def row(self) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        core = self.server_cpu / self.seconds if self.seconds else 0.0
        return {
            "figure": "capacity_step",
            "transport": self.transport,
            "server": self.server,
            "offered_moves_per_s": self.rate,
            "moves_per_s": round(self.achieved, 1),
            "client_p50_ms": round(percentile(ordered, 0.50) * 1000, 3),
            "client_p99_ms": round(percentile(ordered, 0.99) * 1000, 3),
            "server_p50_ms": round(self.server_p50 * 1000, 3),
            "server_p99_ms": round(self.server_p99 * 1000, 3),
            "loop_lag_p99_ms": round(self.loop_lag_p99 * 1000, 3),
            "server_cores": round(core, 3),
            "moves_per_s_per_core": round(self.achieved / core, 1) if core > 0.05 else 0.0,
        }


async def _step(transport: str, server: ServerProcess, games: list[PreparedGame], rate: float, seconds: float) -> Step:
    ways = Ways(transport, server, min(CONCURRENCY, 8))
    step = Step(transport, "", rate)
    try:
        # Every connection up and its code paths warm before the clock starts: a channel first used
        # inside a short step spends part of it connecting (one on a loaded machine counted no
        # stream move in a 0.6 s step).
        for number in range(ways.connections):
            await ways.play(number, games[number % len(games)], Pacer(0), [], lambda: False)
        before, cpu_before = scrape(server.metrics_port), server.cpu_seconds()
        pacer = Pacer(rate)
        deadline = time.perf_counter() + seconds

        def done() -> bool:
            return time.perf_counter() >= deadline

        async def worker(number: int) -> None:
            turn = number
            while not done():
                await ways.play(number, games[turn % len(games)], pacer, step.latencies, done)
                turn += CONCURRENCY

        started = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in range(CONCURRENCY)))
        step.seconds = time.perf_counter() - started
        step.server_cpu = server.cpu_seconds() - cpu_before
        after = scrape(server.metrics_port)
    finally:
        await ways.close()
    method = SERVER_METHOD[transport]
    step.server_p50 = quantile(before.get(method, {}), after.get(method, {}), 0.50)
    step.server_p99 = quantile(before.get(method, {}), after.get(method, {}), 0.99)
    step.loop_lag_p99 = quantile(before.get("loop_lag", {}), after.get("loop_lag", {}), 0.99)
    return step


def short(row: dict[str, Any]) -> bool:
    """The step got less than 90% of the rate offered: the replica (or the client) is saturated."""
    return bool(row["moves_per_s"] < 0.9 * row["offered_moves_per_s"])


# -- the sweep -----------------------------------------------------------------------------------


def capacity(rows: list[dict[str, Any]], transport: str, server: str) -> dict[str, Any]:
    """The best step of ``transport`` on ``server`` within the bound (None figures when none is)."""
    within = [
        r
        for r in rows
        if r["transport"] == transport
        and r["server"] == server
        and r["client_p99_ms"] <= P99_BOUND_MS
        and r["moves_per_s"] >= 0.9 * r["offered_moves_per_s"]
    ]
    best = max(within, key=lambda r: r["moves_per_s"], default=None)  # the most load within the bound
    kept_up = [
        r
        for r in rows
        if r["transport"] == transport and r["server"] == server and r["moves_per_s"] >= 0.9 * r["offered_moves_per_s"]
    ]
    cpu = max(kept_up, key=lambda r: r["moves_per_s_per_core"], default=None)
    return {
        "moves_per_s": best["moves_per_s"] if best else None,
        "moves_per_s_per_core": best["moves_per_s_per_core"] if best else None,
        "at_offered": best["offered_moves_per_s"] if best else None,
        "client_p50_ms": best["client_p50_ms"] if best else None,
        "client_p99_ms": best["client_p99_ms"] if best else None,
        "server_p50_ms": best["server_p50_ms"] if best else None,
        "server_p99_ms": best["server_p99_ms"] if best else None,
        # The most moves per second of the server's CPU at any step it kept up with, whatever the
        # latency: the CPU cost alone, which other work on the machine changes far less than a p99.
        "cpu_moves_per_s_per_core": cpu["moves_per_s_per_core"] if cpu else None,
        "cpu_at_offered": cpu["offered_moves_per_s"] if cpu else None,
    }


def summary(rows: list[dict[str, Any]], transports: tuple[str, ...]) -> list[dict[str, Any]]:
    """Per way: the capacity on the real and the no-op server, their ratio, and the gap between
    the client's and the server's p50 at the lowest and the highest step within the bound."""
    out = []
    for transport in transports:
        real, noop = capacity(rows, transport, "real"), capacity(rows, transport, "noop")
        mine = [r for r in rows if r["transport"] == transport and r["server"] == "real"]
        low = min(mine, key=lambda r: r["offered_moves_per_s"], default=None)
        within = [r for r in mine if r["client_p99_ms"] <= P99_BOUND_MS]
        high = max(within or mine, key=lambda r: r["moves_per_s"], default=None)
        ratio = cpu_ratio = None
        if real["moves_per_s_per_core"] and noop["moves_per_s_per_core"]:
            ratio = round(real["moves_per_s_per_core"] / noop["moves_per_s_per_core"], 3)
        if real["cpu_moves_per_s_per_core"] and noop["cpu_moves_per_s_per_core"]:
            cpu_ratio = round(real["cpu_moves_per_s_per_core"] / noop["cpu_moves_per_s_per_core"], 3)
        out.append(
            {
                "figure": "capacity",
                "transport": transport,
                "p99_bound_ms": P99_BOUND_MS,
                "real": real,
                "noop": noop,
                "ratio_to_noop_per_core": ratio,
                "cpu_ratio_to_noop": cpu_ratio,
                "gap_p50_ms_low_load": round(low["client_p50_ms"] - low["server_p50_ms"], 3) if low else None,
                "gap_p50_ms_high_load": round(high["client_p50_ms"] - high["server_p50_ms"], 3) if high else None,
                "gap_p99_ms_high_load": round(high["client_p99_ms"] - high["server_p99_ms"], 3) if high else None,
            }
        )
    return out


def measure(
    transports: tuple[str, ...],
    rates: tuple[float, ...],
    seconds: float,
    emit: Callable[[dict[str, Any]], None],
    deals: int = GAMES,
) -> list[dict[str, Any]]:
    """Every way at each rate in turn, the real server's step then the no-op's back to back (a
    pair meets the same load from the rest of the machine), until both fell short of the offered
    rate at two steps."""
    import uvloop
    from bigtwo.service.tokens import KeyRing, TokenCodec

    games = prepare_games(deals, TokenCodec(KeyRing([BENCH_KEY.encode()])))
    rows: list[dict[str, Any]] = []
    servers: dict[str, ServerProcess] = {}
    try:
        for kind in ("real", "noop"):
            servers[kind] = ServerProcess(kind, "aio", CONCURRENCY + 16, web=True, games=deals, metrics=True)
        for transport in transports:
            shortfalls = dict.fromkeys(servers, 0)
            for rate in rates:
                for kind, server in servers.items():
                    if shortfalls[kind] >= 2:
                        continue
                    step = uvloop.run(_step(transport, server, games, rate, seconds))
                    step.server = kind
                    row = step.row()
                    rows.append(row)
                    emit(row)
                    shortfalls[kind] += short(row)
                if min(shortfalls.values()) >= 2:
                    break
    finally:
        for server in servers.values():
            server.stop()
    for row in summary(rows, transports):
        rows.append(row)
        emit(row)
    return rows


# -- the plot ------------------------------------------------------------------------------------


def plot(rows: list[dict[str, Any]], path: Path, transports: tuple[str, ...]) -> Path:
    """Per way: moves/s against the offered rate (top) and the client's and server's p50/p99
    (bottom, log scale), real and no-op, with the 50 ms bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(transports), figsize=(5 * len(transports), 8), squeeze=False)
    for column, transport in enumerate(transports):
        top, bottom = axes[0][column], axes[1][column]
        for kind, style in (("real", "-"), ("noop", ":")):
            steps = (r for r in rows if r.get("figure") == "capacity_step" and r["transport"] == transport)
            mine = sorted((r for r in steps if r["server"] == kind), key=lambda r: r["offered_moves_per_s"])
            offered = [r["offered_moves_per_s"] for r in mine]
            top.plot(offered, [r["moves_per_s"] for r in mine], style, marker="o", label=f"{kind} answered")
            if kind == "real":
                for name, color in (("client_p50_ms", "tab:blue"), ("client_p99_ms", "tab:red")):
                    bottom.plot(offered, [r[name] for r in mine], "-", marker="o", color=color, label=name[:-3])
                for name, color in (("server_p50_ms", "tab:blue"), ("server_p99_ms", "tab:red")):
                    bottom.plot(offered, [r[name] for r in mine], "--", marker="x", color=color, label=name[:-3])
            else:
                bottom.plot(offered, [r["client_p99_ms"] for r in mine], ":", color="tab:gray", label="noop client_p99")
        top.plot(top.get_xlim(), top.get_xlim(), color="lightgray", linewidth=0.8, label="offered")
        top.set_title(f"{transport}: one replica")
        top.set_ylabel("moves/s answered")
        top.legend(fontsize="small")
        bottom.axhline(P99_BOUND_MS, color="black", linestyle="--", linewidth=0.8, label="50 ms")
        bottom.set_yscale("log")
        bottom.set_xlabel("offered moves/s")
        bottom.set_ylabel("latency per move (ms)")
        bottom.legend(fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.capacity_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--transports", default=",".join(TRANSPORTS), help="comma-separated: stream, unary, browser")
    parser.add_argument("--rates", default=",".join(str(r) for r in RATES), help="offered moves/s, step by step")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per step (default 3)")
    parser.add_argument("--deals", type=int, default=GAMES, help="prepared deals the load cycles through")
    parser.add_argument("--plot", default="", help="write the PNG here (needs matplotlib, the 'plot' extra)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    transports = tuple(t.strip() for t in args.transports.split(",") if t.strip())
    if unknown := [t for t in transports if t not in TRANSPORTS]:
        parser.error(f"unknown transport {unknown[0]!r}; choose among {', '.join(TRANSPORTS)}")
    rates = tuple(float(r) for r in args.rates.split(",") if r.strip())

    def emit(row: dict[str, Any]) -> None:
        text = json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items())
        print(text, flush=True)

    rows = measure(transports, rates, args.seconds, emit, args.deals)
    if args.plot:
        print(f"Plot written to {plot(rows, Path(args.plot), transports).resolve()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
