"""``bigtwo bench service``: the service against a no-op server of the same messages and settings.

For each transport (moves over one PlayStream per game; ApplyMove by state token, one call per move)
and each load (1, 16 and 256 games played at once), the same prepared deals are played against:

* the real server (``bigtwo serve`` in a subprocess, as deployed: per-call logs, metrics), and
* a no-op server: the same process, hosting, wrapper, logs and metrics, whose handlers return the
  real service's answer to the same call, computed at start-up, without calling the engine: the
  same messages byte for byte (the transport's own ceiling).

It reports moves per second, p50/p99 latency per move seen by the client and the server process's
CPU time per move, and the ratio real / no-op. It also times ApplyMove by token in process at move 5
and at move 80 of one long deal: the token carries the state, not the log, so both cost the same.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from bigtwo.engine import Deal, DealCode, Move, Ruleset, deal_from_code, preset
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb

from .local_server import LocalServer

BENCH_KEY = "bench-only-key-" + "0" * 32
LOADS = (1, 16, 256)
PRESET = "classic"
GAMES = 256
"""Different deals the load cycles through (the no-op server holds the real answers to all)."""


# -- prepared games --------------------------------------------------------------------------------


@dataclass
class PreparedGame:
    code: str
    moves: list[pb.Move]
    start_token: bytes = b""


def _policy_moves(rules: Ruleset, seed: int) -> list[str]:
    """A whole deal: when following, pass 60% of the time, else the weakest legal play."""
    rng = random.Random(seed)
    deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
    out: list[str] = []
    while not deal.over:
        legal = deal.legal_moves()
        move: Move = legal[-1] if legal[-1].is_pass and rng.random() < 0.6 else legal[0]
        out.append(str(move))
        deal.do(move)
    return out


def prepare_games(count: int, codec: Any) -> list[PreparedGame]:
    from bigtwo.service.core import CallInfo
    from bigtwo.service.servicer import ServiceCore

    rules = preset(PRESET)
    # Fixed entropy: a dealt table seals random bytes in its tokens, and the no-op server and the
    # bench's clients each prepare these games, whose tokens must be the same bytes on both sides.
    core = ServiceCore(codec, entropy=bytes)
    games = []
    for seed in range(1, count + 1):
        code = str(DealCode(seed))
        texts = _policy_moves(rules, seed)
        deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
        moves = []
        for index, text in enumerate(texts):
            moves.append(pb.Move(index=index, seat=deal.to_act, text=text))
            deal.do_text(deal.to_act, text)
        start = core.deal(api.DealRequest(ruleset=pb.Ruleset(preset=PRESET), deal_code=code), CallInfo())
        games.append(PreparedGame(code, moves, start.state_token))
    return games


# -- the no-op server ------------------------------------------------------------------------------


class NoopSession:
    def __init__(self, core: NoopCore) -> None:
        self.core = core
        self.answers: list[api.PlayStreamResponse | bytes] = []

    def handle(self, request: api.PlayStreamRequest) -> api.PlayStreamResponse | bytes:
        if self.core.spin:
            self.core.work()
        if request.WhichOneof("message") == "open":
            code = request.open.game.log.deal_code
            opened, self.answers = self.core.streams.get(code) or self.core.streams[self.core.any_code]
            return opened
        answers = self.answers
        return answers[min(request.move.move.index, len(answers) - 1)]


class NoopCore:
    """Answers every call of the bench with the real service's answer to it, computed once at
    start-up: the same messages, byte for byte, with no engine work per call (the transport's
    own ceiling). Calls about other games (``bigtwo loadtest --noop``) get the answer to a call
    of the same kind about one of the bench's games.

    With ``spin_us``, it spins that long in a plain Python loop before each answer: a stand-in for
    a handler of known cost (``bigtwo bench service --spin-us``), to see how much handler time a
    ratio to the no-op leaves."""

    def __init__(self, codec: Any, spin_us: float = 0.0, games: int = GAMES) -> None:
        from bigtwo.service.core import CallInfo
        from bigtwo.service.servicer import UNARY, ServiceCore
        from bigtwo.service.streams import StreamSession

        real = ServiceCore(codec)
        self.streams: dict[str, tuple[api.PlayStreamResponse | bytes, list[api.PlayStreamResponse | bytes]]] = {}
        self.applies: dict[bytes, bytes] = {}
        for game in prepare_games(games, codec):
            info = CallInfo()
            session = StreamSession(real, info)
            log = pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=game.code)
            opened = session.handle(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
            answers = [session.handle(api.PlayStreamRequest(move=api.StreamMove(move=move))) for move in game.moves]
            self.streams[game.code] = (opened, answers)
            token = game.start_token
            for move in game.moves:
                request = api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move)
                answer = self.applies[token] = real.apply_move_answer(request, info)
                token = api.ApplyMoveResponse.FromString(answer).state_token
        self.spin = spin_us / 1e6
        self.any_code = next(iter(self.streams))
        self.any_apply = next(iter(self.applies.values()))
        for _name, (_request_cls, response_cls, attr) in UNARY.items():
            if attr != "apply_move_answer":
                canned = response_cls()
                setattr(self, attr, lambda request, info, canned=canned: canned)

    def apply_move_answer(self, request: api.ApplyMoveRequest, info: Any) -> bytes:
        if self.spin:
            self.work()
        return self.applies.get(request.game.state_token) or self.any_apply

    def work(self) -> None:
        """Spin for ``spin_us`` (busy, as a handler's Python would be)."""
        clock = time.perf_counter
        until = clock() + self.spin
        while clock() < until:
            pass

    def session(self, info: Any) -> NoopSession:
        return NoopSession(self)


# -- servers in subprocesses -----------------------------------------------------------------------


class ServerProcess(LocalServer):
    """A bench server (``kind`` real or noop) in a subprocess, started once its health says SERVING;
    with ``web``, its browser port too (:attr:`web_port`: Connect and gRPC-Web); with ``metrics``, its
    Prometheus /metrics on 127.0.0.1 (:attr:`metrics_port`: the server's own histograms)."""

    def __init__(
        self,
        kind: str,
        mode: str,
        threads: int,
        spin_us: float = 0.0,
        *,
        web: bool = False,
        games: int = GAMES,
        metrics: bool = False,
    ) -> None:
        command = (sys.executable, "-m", "bigtwo.tools.service_bench", "--serve", kind, "--mode", mode)
        flags = ("--threads", str(threads), "--spin-us", str(spin_us), "--games", str(games))
        super().__init__(*flags, command=command, web=web, metrics=metrics, keys=BENCH_KEY)


def _serve(
    kind: str,
    port: int,
    mode: str,
    threads: int,
    spin_us: float = 0.0,
    web_port: int = 0,
    games: int = GAMES,
    metrics_port: int = 0,
) -> int:
    from bigtwo.service.server import ServerConfig, run_one

    if metrics_port:  # as bigtwo serve does for one process (a bench's servers are one process)
        from bigtwo.service.telemetry import start_metrics_server

        start_metrics_server("127.0.0.1", metrics_port)
    cfg = ServerConfig(port=port, metrics_port=0, grace=1.0, web_port=web_port or None)
    make_core = functools.partial(NoopCore, spin_us=spin_us, games=games) if kind == "noop" else None
    return run_one(cfg, reuse_port=False, make_core=make_core)


# -- load --------------------------------------------------------------------------------------------


@dataclass
class Run:
    transport: str
    server: str
    games: int
    moves: int = 0
    seconds: float = 0.0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    latencies: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.moves / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _stream_game(stub: Any, game: PreparedGame, latencies: list[float]) -> int:
    call = stub.PlayStream()
    log = pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=game.code)
    await call.write(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
    await call.read()
    for move in game.moves:
        started = time.perf_counter()
        await call.write(api.PlayStreamRequest(move=api.StreamMove(move=move)))
        await call.read()
        latencies.append(time.perf_counter() - started)
    await call.done_writing()
    await call.code()
    return len(game.moves)


async def _unary_game(stub: Any, game: PreparedGame, latencies: list[float]) -> int:
    token = game.start_token
    for move in game.moves:
        started = time.perf_counter()
        reply = await stub.ApplyMove(api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move))
        latencies.append(time.perf_counter() - started)
        token = reply.state_token
    return len(game.moves)


async def _load(port: int, transport: str, games: list[PreparedGame], concurrency: int, seconds: float) -> Run:
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(min(concurrency, 8))]
    stubs = [rpc.BigTwoServiceStub(channel) for channel in channels]
    play = _stream_game if transport == "stream" else _unary_game
    run = Run(transport, "", concurrency)
    deadline = time.perf_counter() + seconds
    # warm up every channel
    await asyncio.gather(*(stub.ListPresets(api.ListPresetsRequest()) for stub in stubs))

    async def worker(number: int) -> None:
        stub = stubs[number % len(stubs)]
        turn = number
        while time.perf_counter() < deadline:
            await play(stub, games[turn % len(games)], run.latencies)
            turn += concurrency

    started = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    run.seconds = time.perf_counter() - started
    run.moves = len(run.latencies)
    for channel in channels:
        await channel.close()
    return run


def measure(
    mode: str,
    seconds: float,
    loads: tuple[int, ...],
    emit: Callable[[dict[str, Any]], None],
    repeats: int = 1,
    spin_us: float = 0.0,
    games: int = GAMES,
    token_repeats: int = 3000,
) -> list[dict[str, Any]]:
    """Each load ``repeats`` times, real and no-op back to back; the ratio is the median of the
    pairs' ratios (a pair shares the machine's state, so slow drift cancels out). With ``spin_us``
    the "real" server is a no-op that spins that long per answer (see :class:`NoopCore`). ``games``
    (the deals the load cycles through) and ``token_repeats`` are smaller in tests, where the
    figures only need to exist."""
    import resource

    import uvloop
    from bigtwo.service.tokens import KeyRing, TokenCodec

    def client_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    codec = TokenCodec(KeyRing([BENCH_KEY.encode()]))
    prepared = prepare_games(games, codec)
    threads = max(loads) + 16
    results: list[dict[str, Any]] = []
    servers: dict[str, ServerProcess] = {}
    try:
        servers["real"] = ServerProcess("noop" if spin_us else "real", mode, threads, spin_us, games=games)
        servers["noop"] = ServerProcess("noop", mode, threads, games=games)
        for transport in ("stream", "unary"):
            for load in loads:
                pairs: list[dict[str, Run]] = []
                for _ in range(repeats):
                    pair: dict[str, Run] = {}
                    for kind, server in servers.items():
                        cpu_before, client_before = server.cpu_seconds(), client_cpu()
                        run = uvloop.run(_load(server.port, transport, prepared, load, seconds))
                        run.server_cpu = server.cpu_seconds() - cpu_before
                        run.client_cpu = client_cpu() - client_before
                        run.server = kind
                        pair[kind] = run
                    pairs.append(pair)
                row = _row(transport, mode, load, pairs)
                if spin_us:
                    row["real_is_noop_spinning_us"] = spin_us
                results.append(row)
                emit(row)
    finally:
        for server in servers.values():
            server.stop()
    row = token_cost(codec, token_repeats)
    results.append(row)
    emit(row)
    return results


def _row(transport: str, mode: str, load: int, pairs: list[dict[str, Run]]) -> dict[str, Any]:
    def merged(kind: str) -> Run:
        runs = [pair[kind] for pair in pairs]
        out = Run(transport, kind, load)
        for run in runs:
            out.moves += run.moves
            out.seconds += run.seconds
            out.server_cpu += run.server_cpu
            out.client_cpu += run.client_cpu
            out.latencies.extend(run.latencies)
        return out

    real, noop = merged("real"), merged("noop")
    ratios = [pair["real"].rate / pair["noop"].rate for pair in pairs if pair["noop"].rate]
    return {
        "figure": f"service_{transport}_moves",
        "mode": mode,
        "games": load,
        "repeats": len(pairs),
        "real_moves_per_s": round(statistics.median(pair["real"].rate for pair in pairs), 1),
        "noop_moves_per_s": round(statistics.median(pair["noop"].rate for pair in pairs), 1),
        "ratio": round(statistics.median(ratios), 3) if ratios else 0.0,
        "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)] if ratios else [],
        "real_p50_ms": round(real.percentile(0.5) * 1000, 3),
        "real_p99_ms": round(real.percentile(0.99) * 1000, 3),
        "noop_p50_ms": round(noop.percentile(0.5) * 1000, 3),
        "noop_p99_ms": round(noop.percentile(0.99) * 1000, 3),
        "real_server_cpu_us_per_move": round(real.server_cpu / max(real.moves, 1) * 1e6, 1),
        "noop_server_cpu_us_per_move": round(noop.server_cpu / max(noop.moves, 1) * 1e6, 1),
        "real_client_cpu_us_per_move": round(real.client_cpu / max(real.moves, 1) * 1e6, 1),
        "noop_client_cpu_us_per_move": round(noop.client_cpu / max(noop.moves, 1) * 1e6, 1),
    }


def token_cost(codec: Any, repeats: int = 3000) -> dict[str, Any]:
    """ApplyMove by token in process: the median cost at move 5 and at move 80 of one long deal, on
    the replica that issued the tokens and on one that did not."""
    from bigtwo.service.core import CallInfo
    from bigtwo.service.servicer import ServiceCore
    from bigtwo.service.tokens import TokenCodec

    core = ServiceCore(codec)
    rules = preset(PRESET)
    seed = next(s for s in range(1, 500) if len(_policy_moves(rules, s)) > 85)
    texts = _policy_moves(rules, seed)
    code = str(DealCode(seed))
    reply = core.deal(api.DealRequest(ruleset=pb.Ruleset(preset=PRESET), deal_code=code), CallInfo())
    token, deal = reply.state_token, Deal.start(rules, deal_from_code(DealCode(seed), rules))
    requests = {}
    for index, text in enumerate(texts[:81]):
        request = api.ApplyMoveRequest(
            game=pb.Game(state_token=token), move=pb.Move(index=index, seat=deal.to_act, text=text)
        )
        if index in (5, 80):
            requests[index] = request
        token = core.apply_move(request, CallInfo()).state_token
        deal.do_text(deal.to_act, text)
    log_request = api.ApplyMoveRequest(
        game=pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=code, moves=texts[:80])),
        move=requests[80].move,
    )

    # Another replica: it did not issue the tokens, so it verifies and unpacks each in full.
    replica = ServiceCore(TokenCodec(codec.keys, remember=0))

    def median_us(request: api.ApplyMoveRequest, count: int, on: Any = core) -> float:
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            on.apply_move_answer(request, CallInfo())
            samples.append(time.perf_counter() - started)
        return statistics.median(samples) * 1e6

    at5, at80 = median_us(requests[5], repeats), median_us(requests[80], repeats)
    other5, other80 = median_us(requests[5], repeats, replica), median_us(requests[80], repeats, replica)
    by_log = median_us(log_request, max(repeats // 10, 50))
    return {
        "figure": "apply_by_token_us",
        "deal_code": code,
        "at_move_5": round(at5, 1),
        "at_move_80": round(at80, 1),
        "ratio_80_to_5": round(at80 / at5, 3),
        "other_replica_at_move_5": round(other5, 1),
        "other_replica_at_move_80": round(other80, 1),
        "by_log_at_move_80": round(by_log, 1),
    }


# -- command -----------------------------------------------------------------------------------------


def add_bench_subject(parser: argparse.ArgumentParser) -> None:
    """Add ``service`` to the ``bench`` command's subjects (its module is owned elsewhere)."""
    for action in parser._actions:  # argparse has no public way to extend choices
        if action.dest == "subject" and action.choices is not None:
            action.choices = [*action.choices, "service"]
            action.help = (action.help or "") + "; service: the gRPC service against a no-op server"
    parser.add_argument("--seconds", type=float, default=1.5, help="service: seconds per load level (default 1.5)")
    parser.add_argument("--mode", choices=("aio",), default=None, help="service: server mode (one since issue 34: aio)")
    parser.add_argument(
        "--repeats", type=int, default=1, help="service: real/no-op pairs per load; the median ratio (default 1)"
    )
    parser.add_argument(
        "--spin-us",
        type=float,
        default=0.0,
        help="service: measure, instead of the real server, a no-op that spins this many µs per answer",
    )
    engine_func = parser.get_default("func")

    def dispatch(args: argparse.Namespace) -> int:
        if args.subject == "service":
            return run_service_bench(args)
        return int(engine_func(args))

    parser.set_defaults(func=dispatch)


def run_service_bench(args: argparse.Namespace) -> int:
    mode = "aio"  # the server's one mode (issue 34); rows still name it, beside the dated sync rows
    as_json = getattr(args, "json", False)

    def emit(row: dict[str, Any]) -> None:
        if as_json:
            print(json.dumps(row), flush=True)
        else:
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)

    measure(
        mode,
        float(getattr(args, "seconds", 1.5)),
        LOADS,
        emit,
        repeats=int(getattr(args, "repeats", 1) or 1),
        spin_us=float(getattr(args, "spin_us", 0.0) or 0.0),
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.service_bench")
    parser.add_argument("--serve", choices=("real", "noop"), help="run a bench server (internal)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=("aio",), default=None)
    parser.add_argument("--threads", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--spin-us", type=float, default=0.0)
    parser.add_argument("--games", type=int, default=GAMES, help="with --serve: deals the no-op answers (internal)")
    parser.add_argument("--web-port", type=int, default=0, help="with --serve: the browser port too (internal)")
    parser.add_argument("--metrics-port", type=int, default=0, help="with --serve: /metrics too (internal)")
    args = parser.parse_args(argv)
    if args.serve:
        return _serve(
            args.serve,
            args.port,
            "aio",
            args.threads,
            args.spin_us,
            args.web_port,
            args.games,
            args.metrics_port,
        )
    return run_service_bench(args)


if __name__ == "__main__":
    sys.exit(main())
