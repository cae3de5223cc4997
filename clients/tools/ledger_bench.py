"""``python -m bigtwo.tools.ledger_bench``: what the spent-token ledger adds to a move, and what it holds.

It starts Debian's ``redis-server`` on a free 127.0.0.1 port in a temporary folder (nothing saved;
``--url redis://HOST:PORT/DB`` uses a running one instead), plays ``--deals`` deals move by move
through the service's own ApplyMove path in this process (:class:`~bigtwo.service.core.Core`, real
state tokens), and for every move times, on one event loop, the ApplyMove work itself and then the
ledger's share of the call (:func:`~bigtwo.service.ledger.spend_applied`: the move's record, the
token's digest and the one ``SET NX GET EX`` round trip). It prints both as p50/p99 and their ratio,
then Redis's ``used_memory`` growth per entry and per deal (one entry per move applied, kept for the
TTL) and ``MEMORY USAGE`` of one entry. Then the same deals on ``PlayStream`` sessions: a stream's
move without a ledger, the same move with the session spending (it keeps the state before each move
and writes the tokens of that state, :attr:`~bigtwo.service.streams.StreamSession.to_spend`), and
the ledger's round trips for them (:func:`~bigtwo.service.ledger.spend_streamed`). Figures are one
run on this machine (docs/PERFORMANCE.md).

    python -m bigtwo.tools.ledger_bench --deals 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code
from bigtwo.service.core import CallInfo, Core
from bigtwo.service.ledger import LedgerConfig, TokenLedger, spend_applied, spend_streamed, token_key
from bigtwo.service.streams import StreamSession
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .local_server import free_port

BENCH_KEY = b"ledger bench key, never a deployment's: 32+ characters"


def _start_redis(folder: str, cpus: set[int] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("ledger_bench needs redis-server (make redis), or --url of a running Redis")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", folder, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not start within 10 s")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(url: str, deals: int, seed: int) -> dict[str, Any]:
    core = Core(TokenCodec(KeyRing([BENCH_KEY])))
    ledger = TokenLedger(LedgerConfig(url, ttl_s=3600))
    client = ledger._client
    await client.flushdb()
    before = int((await client.info("memory"))["used_memory"])
    rules = Ruleset.from_mapping({"preset": "classic"})
    rng = random.Random(seed)
    applied: list[float] = []
    spent: list[float] = []
    last_token = b""
    for _ in range(deals):
        code = DealCode(rng.getrandbits(60))
        truth = Deal.start(rules, deal_from_code(code, rules))
        token = core.deal(
            api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code=str(code)), CallInfo()
        ).state_token
        while not truth.over:
            move = rng.choice(truth.legal_moves())
            request = api.ApplyMoveRequest(
                game=pb.Game(state_token=token), move=pb.Move(index=truth.moves_made, seat=move.seat, text=str(move))
            )
            info = CallInfo()
            started = time.perf_counter()
            answer = core.apply_move(request, info)
            middle = time.perf_counter()
            await spend_applied(ledger, request, info)
            done = time.perf_counter()
            applied.append(middle - started)
            spent.append(done - middle)
            last_token = token
            token = answer.state_token
            truth.do(move)
    after = int((await client.info("memory"))["used_memory"])
    entries = int(await client.dbsize())
    one = int(await client.memory_usage(token_key(last_token)) or 0)
    await ledger.close()
    ms = 1000.0
    return {
        "deals": deals,
        "moves": len(spent),
        "apply_move_ms": {"p50": _quantile(applied, 0.5) * ms, "p99": _quantile(applied, 0.99) * ms},
        "ledger_ms": {"p50": _quantile(spent, 0.5) * ms, "p99": _quantile(spent, 0.99) * ms},
        "ledger_over_apply_p50": _quantile(spent, 0.5) / _quantile(applied, 0.5),
        "entries": entries,
        "used_memory_per_entry_bytes": (after - before) / max(1, entries),
        "memory_usage_one_entry_bytes": one,
        "entries_per_deal": entries / deals,
        "used_memory_per_deal_bytes": (after - before) / deals,
    }


async def measure_streams(url: str, deals: int, seed: int) -> dict[str, Any]:
    """PlayStream's moves opened from a dealt token: plain, spending (tokens written), and the ledger's share."""
    core = Core(TokenCodec(KeyRing([BENCH_KEY])))
    ledger = TokenLedger(LedgerConfig(url, ttl_s=3600))
    await ledger._client.flushdb()
    rules = Ruleset.from_mapping({"preset": "classic"})
    rng = random.Random(seed)
    plain: list[float] = []
    spending: list[float] = []
    spent: list[float] = []
    for _ in range(deals):
        code = DealCode(rng.getrandbits(60))
        truth = Deal.start(rules, deal_from_code(code, rules))
        dealt = core.deal(api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code=str(code)), CallInfo())
        opening = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(state_token=dealt.state_token)))
        sessions = [StreamSession(core, CallInfo()), StreamSession(core, CallInfo(), spending=True)]
        for session in sessions:
            session.handle(opening)
        while not truth.over:
            move = rng.choice(truth.legal_moves())
            wire = pb.Move(index=truth.moves_made, seat=move.seat, text=str(move))
            request = api.PlayStreamRequest(move=api.StreamMove(move=wire))
            started = time.perf_counter()
            sessions[0].handle(request)
            middle = time.perf_counter()
            sessions[1].handle(request)
            spend_from = time.perf_counter()
            await spend_streamed(ledger, sessions[1])
            done = time.perf_counter()
            plain.append(middle - started)
            spending.append(spend_from - middle)
            spent.append(done - spend_from)
            truth.do(move)
    await ledger.close()
    ms = 1000.0
    return {
        "moves": len(spent),
        "stream_move_ms": {"p50": _quantile(plain, 0.5) * ms, "p99": _quantile(plain, 0.99) * ms},
        "stream_move_spending_ms": {"p50": _quantile(spending, 0.5) * ms, "p99": _quantile(spending, 0.99) * ms},
        "stream_ledger_ms": {"p50": _quantile(spent, 0.5) * ms, "p99": _quantile(spent, 0.99) * ms},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.ledger_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=200, help="deals played move by move (default %(default)s)")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--url", default="", help="a running Redis (default: start redis-server here)")
    parser.add_argument(
        "--redis-cpus",
        default="",
        help="CPUs for the redis-server it starts, e.g. 1 (this process keeps the others): Redis on cores of "
        "its own, as a deployment gives it, instead of taking turns with the bench's event loop",
    )
    args = parser.parse_args(argv)
    redis_cpus = {int(cpu) for cpu in args.redis_cpus.split(",") if cpu.strip()}
    if redis_cpus:
        mine = os.sched_getaffinity(0) - redis_cpus
        if not mine or not redis_cpus <= os.sched_getaffinity(0):
            parser.error(f"--redis-cpus {args.redis_cpus}: name CPUs of {sorted(os.sched_getaffinity(0))}, leaving one")
        os.sched_setaffinity(0, mine)
    with tempfile.TemporaryDirectory(prefix="ledger-bench-") as folder:
        process = None
        url = args.url
        if not url:
            process, url = _start_redis(folder, redis_cpus or None)
        try:
            figures = asyncio.run(measure(url, args.deals, args.seed))
            figures["stream"] = asyncio.run(measure_streams(url, args.deals, args.seed))
        finally:
            if process is not None:
                process.kill()
                process.wait(timeout=10)
    json.dump(figures, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
