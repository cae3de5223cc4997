"""The client's and the server's view of streamed moves, side by side: ``--threads`` clients each
stream ``--deals`` whole deals against one ``bigtwo serve`` (a subprocess on
127.0.0.1), timing each move from send to answer; then the server's /metrics gives its per-move
time and its queueing (the event loop's lag).

    .venv/bin/python tests/tools/latency_views.py --mode aio

A measurement for docs/OBSERVABILITY.md, not a test."""

from __future__ import annotations

import argparse
import queue
import random
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import grpc  # noqa: E402
from bigtwo.engine import DealCode  # noqa: E402
from bigtwo.v1 import service_pb2 as api  # noqa: E402
from bigtwo.v1 import service_pb2_grpc as rpc  # noqa: E402
from bigtwo.v1 import types_pb2 as pb  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from prometheus_support import _deal, _move  # noqa: E402
from service_support import ServerProcess  # noqa: E402


def player(target: str, seed: int, deals: int, times: list[float]) -> None:
    rng = random.Random(seed)
    with grpc.insecure_channel(target) as channel:
        stub = rpc.BigTwoServiceStub(channel)
        for _ in range(deals):
            code = str(DealCode(rng.randrange(1 << 40)))
            requests: queue.Queue[api.PlayStreamRequest | None] = queue.Queue()

            def feed(requests: queue.Queue[api.PlayStreamRequest | None] = requests) -> Iterator[api.PlayStreamRequest]:
                while (item := requests.get()) is not None:
                    yield item

            game = pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code=code))
            requests.put(api.PlayStreamRequest(open=api.StreamOpen(game=game)))
            answers = stub.PlayStream(feed())
            next(answers)
            deal = _deal(code)
            while not deal.over:
                move = rng.choice(deal.legal_moves())
                sent = time.perf_counter()
                requests.put(_move(deal.moves_made, move.seat, str(move)))
                next(answers)
                times.append(time.perf_counter() - sent)
                deal.do(move)
            requests.put(None)
            list(answers)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("aio",), default="aio")  # the one server mode (issue 34)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--deals", type=int, default=15, help="deals per thread")
    args = parser.parse_args()
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bigtwo-latency-") as name:
        server = ServerProcess(Path(name), "--no-call-log")
        try:
            threads = [
                threading.Thread(target=player, args=(server.target, n, args.deals, times)) for n in range(args.threads)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            url = f"http://127.0.0.1:{server.metrics_port}/metrics"
            with urllib.request.urlopen(url, timeout=5) as response:  # loopback only
                text = response.read().decode()
        finally:
            server.stop()
    times.sort()
    count = len(times)
    p50, p99 = times[count // 2] * 1e3, times[int(count * 0.99)] * 1e3
    print(f"{args.mode}: client per move p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    sums = {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.labels.get("method", "PlayStream") == "PlayStream" and sample.name.endswith(("_sum", "_count"))
    }
    for name in ("bigtwo_move_duration_seconds", "bigtwo_event_loop_lag_seconds"):
        observed = sums.get(f"{name}_count", 0.0)
        if observed:
            print(f"  {name}: {observed:.0f} observed, mean {sums[f'{name}_sum'] / observed * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
