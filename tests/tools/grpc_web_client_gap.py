"""Where gRPC-Web's gap at one game comes from (issue 32): web_bench's client (the Connect project's
Python client) against a minimal client that sends the request whole (``Content-Length``, one
write, as a browser's ``fetch`` does; the Connect client does too) and reads the answer whole, over
HTTP/1.1 keep-alive, one game at a time, ApplyMove with state tokens, on one server, rounds
alternating with gRPC. Per way: moves per second, its ratio to gRPC's in the same round, the
server's CPU per move, the client's (this process's) and the client's p50.
``python tests/tools/grpc_web_client_gap.py --rounds 5`` (docs/PERFORMANCE.md "Browser protocols").

The minimal client offers no compressed answer, where the Connect client offers gzip: before the
port stopped compressing answers (``service/web_server.py`` ``ACCEPT_ENCODINGS``), much of the
server CPU this tool showed between the two clients was the server's gzip, not the client's shape."""

import argparse
import asyncio
import json
import statistics
import struct
import sys
import time

from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.tools import web_bench as wb
from bigtwo.tools.service_bench import BENCH_KEY, ServerProcess, prepare_games
from bigtwo.v1 import service_pb2 as api


class Raw:
    def __init__(self, port, grpc_web):
        self.port, self.grpc_web = port, grpc_web

    async def open(self):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)

    async def apply(self, req):
        data = req.SerializeToString()
        if self.grpc_web:
            body = b"\x00" + struct.pack(">I", len(data)) + data
            ctype = "application/grpc-web+proto"
            extra = "x-grpc-web: 1\r\n"
        else:
            body = data
            ctype = "application/proto"
            extra = "connect-protocol-version: 1\r\n"
        request = (
            f"POST /bigtwo.v1.BigTwoService/ApplyMove HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"content-type: {ctype}\r\n{extra}content-length: {len(body)}\r\n\r\n"
        )
        self.w.write(request.encode() + body)  # one write, the whole body
        head = await self.r.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        assert lines[0].startswith("HTTP/1.1 200"), head
        hdr = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}
        if "content-length" in hdr:
            payload = await self.r.readexactly(int(hdr["content-length"]))
        else:
            payload = b""
            while True:
                size = int((await self.r.readuntil(b"\r\n"))[:-2], 16)
                chunk = await self.r.readexactly(size + 2)
                if size == 0:
                    break
                payload += chunk[:-2]
        if self.grpc_web:
            n = struct.unpack(">I", payload[1:5])[0]
            msg = payload[5 : 5 + n]
            assert payload[0] == 0 and b"grpc-status:0" in payload[5 + n :].replace(b" ", b""), payload[5 + n :]
        else:
            msg = payload
        return api.ApplyMoveResponse.FromString(msg)

    async def close(self):
        self.w.close()


async def run_raw(way_grpc_web, server, games, seconds):
    c = Raw(server.web_port, way_grpc_web)
    await c.open()
    lat = []
    await wb._game(c.apply, games[0], [])
    end = time.perf_counter() + seconds
    t = time.perf_counter()
    turn = 0
    while time.perf_counter() < end:
        await wb._game(c.apply, games[turn % len(games)], lat)
        turn += 1
    took = time.perf_counter() - t
    await c.close()
    return len(lat), took, lat


def main(seconds: float = 2.0, rounds: int = 3) -> None:
    import uvloop

    games = prepare_games(wb.GAMES, TokenCodec(KeyRing([BENCH_KEY.encode()])))
    server = ServerProcess("real", "aio", 32, web=True)
    rows = {}
    try:
        for _ in range(rounds):
            for name in (
                "grpc",
                "connect-proto-h1",
                "grpc-web-proto-h1",
                "raw-connect-proto-h1",
                "raw-grpc-web-proto-h1",
            ):
                cpu0, client0 = server.cpu_seconds(), time.process_time()
                if name.startswith("raw-"):
                    moves, took, lat = uvloop.run(run_raw("grpc-web" in name, server, games, seconds))
                else:
                    way = next(w for w in wb.WAYS if w.name == name)
                    run = uvloop.run(wb._load(way, server, games, 1, seconds))
                    moves, took, lat = run.moves, run.seconds, run.latencies
                cpu, client = server.cpu_seconds() - cpu0, time.process_time() - client0
                rows.setdefault(name, []).append(
                    (moves / took, cpu / moves * 1e6, statistics.median(lat) * 1000, client / moves * 1e6)
                )
                print(name, round(moves / took), file=sys.stderr)
    finally:
        server.stop()
    for name, rs in rows.items():
        print(
            json.dumps(
                {
                    "way": name,
                    "moves_per_s": [round(x[0]) for x in rs],
                    "ratio_to_grpc": [round(x[0] / g[0], 2) for x, g in zip(rs, rows["grpc"], strict=True)],
                    "server_cpu_us_per_move": [round(x[1]) for x in rs],
                    "client_cpu_us_per_move": [round(x[3]) for x in rs],
                    "p50_ms": [round(x[2], 3) for x in rs],
                }
            )
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    main(args.seconds, args.rounds)
