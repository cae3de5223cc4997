"""``python -m bigtwo.tools.stall_bench``: does one heavy call stall everybody else's game?

The service runs on one event loop per process (its one mode): a call whose handler computes for
a long time on that loop delays every stream's move until it is done. This benchmark measures
how much, from outside, against ``bigtwo serve`` started as a subprocess (nothing of the server
package is imported here: the requests are built from the proto and the engine).

It opens ``--streams`` PlayStreams (64), each playing the legal moves of real deals, one move
every ``--interval-ms`` per stream (paced, so the server is not saturated by the streams alone:
the latency measured is the wait a player sees, not a queue the benchmark built). It measures
every move's round trip, first with the streams alone, then once for each unary RPC while a
worst-case request of that RPC runs in a loop beside them (one call after the other, each with a
deadline of ``--heavy-timeout`` seconds). "Worst case" is the largest work the request limits
allow: an 18-card hand for the move lists and splits, the pro bot at its largest budget, the
largest replay a request can carry, the longest logs, and a ruleset never seen before on every
call (so no per-ruleset cache helps).

Printed: a table (p50/p99/max of the stream moves per phase, p99 against the streams alone, the
heavy calls made and their status codes) and the same as JSON (``--json PATH`` also writes it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from bigtwo.codec.rpcs import UNARY_RPCS, check_covers, check_known
from bigtwo.engine import Deal, DealCode, Move, Ruleset, deal_from_code, mask_text, preset
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb

from .local_server import LocalServer

BENCH_KEY = "stall-bench-only-key-" + "0" * 32
PRESET = "classic"
DEALS = 64
"""Different deals the streams cycle through."""

MANY_PLAYS_HAND = "3D 3C 3H 3S 4D 4C 4H 4S 5D 5C 5H 5S 6D 6C 6H 6S 7D 7S"
"""An 18-card hand (the most a hand given as input may hold) with about 900 plays: four of every
rank from 3 to 6 and two 7s make pairs, triples, full houses, fours and straights of every suit."""
HARD_SPLIT_HAND = "3D 3S 4D 4S 5D 5H 5S 6D 6S 7D 7S 8D 8S 9D 9S TD JD AS"
"""An 18-card hand that is slow to split into the fewest plays (found by a local search): pairs
in a long run, so that straights and pairs overlap in very many ways."""
MANY_PLAYS_DEAL = (
    "3D 3C 3H 3S 4D 4C 4H 4S 5D 5C 5H 5S 6D 6C 6H 6S 7D",
    "7C 7S 8C 8S 9C 9S TC TS JC JS QC QS KC KS AC AS 2C",
    "7H 8D 8H 9D 9H TD TH JD JH QD QH KD KH AD AH 2D 2H",
)
"""A 3-player deal (17 cards each) whose first seat, once it has led 3♦ and both others passed,
leads with 16 cards that make about 450 plays: the largest choice a deal's seat can have."""
MANY_PLAYS_MOVES = ("3D", "pass", "pass")
BOT_MOVE_AT = 6
"""Moves of the long deal made before the bot is asked (early: long rollouts, several candidates)."""

NOT_TRIED = frozenset({"PlayBots"})
"""Unary RPCs with no worst-case request here yet: PlayBots came after this bench; its rounds of bot
moves are bounded in costs.py as BotMove's move is, and cost_bench measures them."""
check_known(NOT_TRIED, "stall_bench.NOT_TRIED")
RPCS = tuple(rpc.name for rpc in UNARY_RPCS if rpc.name not in NOT_TRIED)
"""The unary RPCs tried, in the proto's order: each needs its worst-case request in
:func:`heavy_requests`, or a place in :data:`NOT_TRIED` (checked as the requests are made)."""


# -- deals and moves ---------------------------------------------------------------------------------


def policy_moves(rules: Ruleset, seed: int, pass_rate: float = 0.6) -> list[str]:
    """A whole deal of legal moves: when following, pass ``pass_rate`` of the time, else the weakest
    legal play."""
    rng = random.Random(seed)
    deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
    out: list[str] = []
    while not deal.over:
        legal = deal.legal_moves()
        move: Move = legal[-1] if legal[-1].is_pass and rng.random() < pass_rate else legal[0]
        out.append(str(move))
        deal.do(move)
    return out


@dataclass
class StreamDeal:
    code: str
    moves: list[pb.Move]


def stream_deals(count: int) -> list[StreamDeal]:
    rules = preset(PRESET)
    deals = []
    for seed in range(1, count + 1):
        deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
        moves = []
        for index, text in enumerate(policy_moves(rules, seed)):
            moves.append(pb.Move(index=index, seat=deal.to_act, text=text))
            deal.do_text(deal.to_act, text)
        deals.append(StreamDeal(str(DealCode(seed)), moves))
    return deals


def longest_deal(tries: int = 200) -> tuple[str, list[str]]:
    """The deal code and moves of the longest deal found among ``tries`` (long logs cost most to
    replay): followers mostly pass, so tricks are short and leads go round."""
    rules = preset(PRESET)
    best: tuple[str, list[str]] = ("", [])
    for seed in range(1, tries + 1):
        moves = policy_moves(rules, seed, pass_rate=0.8)
        if len(moves) > len(best[1]):
            best = (str(DealCode(seed)), moves)
    return best


# -- worst-case requests -----------------------------------------------------------------------------


class Rulesets:
    """A ruleset never seen before on every call: the match length counts up."""

    def __init__(self, start: int) -> None:
        self.next = start

    def __call__(self, **options: str) -> pb.Ruleset:
        self.next += 1
        return pb.Ruleset(preset=PRESET, options={**options, "match": f"deals:{self.next}"})


def _every_option() -> dict[str, str]:
    """Every option of a ruleset set, with an explicit straights ladder (the longest to read)."""
    return {
        "suit_order": "CDHS",
        "straights": "A2345/5,23456/6,34567/7,45678/8,56789/9,6789T/T,789TJ/J,89TJQ/Q,9TJQK/K,TJQKA/A",
        "flush": "rank-first",
        "triples": "allowed",
        "opening": "winner-leads",
        "after_pass": "out-until-trick-ends",
        "single_two_last": "forbidden",
        "next_has_one_card": "highest-single",
        "dragon": "on",
        "auto_pass": "on",
        "penalty": "harsh",
        "twos_double": "on",
        "settlement": "zero-sum",
    }


def replay_text(key: bytes, size_limit: int = 900_000) -> str:
    """The largest valid replay the request limits let AuditLog read: a long match of whole deals,
    signed with ``key`` (so the signature is checked too)."""
    from bigtwo.engine.replay import dumps, game_log_from_deals
    from bigtwo.engine.replay.limits import ReplayLimits

    limits = ReplayLimits()
    rules = Ruleset.from_mapping({"preset": PRESET, "match": "open"})
    deals: list[Deal] = []
    codes: list[DealCode] = []
    items = 0
    seed = 1000
    text = ""
    while True:
        seed += 1
        code = DealCode(seed)
        deal = Deal.start(rules, deal_from_code(code, rules))
        for move in policy_moves(rules, seed):
            deal.do_text(deal.to_act, move)
        items += len(deal.events) + 4 * rules.players + 8
        if items > limits.items * 9 // 10:
            break
        deals.append(deal)
        codes.append(code)
        if len(deals) % 10 == 0:
            text = dumps(game_log_from_deals(rules, deals, codes=codes, key=key))
            if len(text.encode()) > size_limit or text.count("\n") > limits.lines * 9 // 10:
                deals, codes = deals[:-10], codes[:-10]
                break
    return dumps(game_log_from_deals(rules, deals, codes=codes, key=key))


@dataclass
class Heavy:
    """One RPC's worst-case request, made afresh for every call."""

    name: str
    make: Callable[[], Any]


def heavy_requests(key: bytes) -> dict[str, Heavy]:
    rulesets = Rulesets(random.Random(os.getpid()).randrange(1, 1 << 30))
    code, moves = longest_deal()
    rules = preset(PRESET)
    deal = Deal.start(rules, deal_from_code(DealCode.parse(code), rules))
    for text in moves[:-1]:
        deal.do_text(deal.to_act, text)
    last = pb.Move(index=len(moves) - 1, seat=deal.to_act, text=moves[-1])
    start = Deal.start(rules, deal_from_code(DealCode.parse(code), rules))

    def log(count: int) -> pb.Game:
        return pb.Game(log=pb.GameLog(ruleset=rulesets(), deal_code=code, moves=moves[:count]))

    def before_last() -> pb.Game:
        return log(len(moves) - 1)

    def bot_game() -> pb.Game:
        return log(BOT_MOVE_AT)

    def many_plays_game() -> pb.Game:
        return pb.Game(
            log=pb.GameLog(
                ruleset=rulesets(players="3"),
                explicit_deal=pb.ExplicitDeal(hands=MANY_PLAYS_DEAL),
                moves=MANY_PLAYS_MOVES,
            )
        )

    def settle() -> api.SettleMatchRequest:
        deals = [
            pb.DealResult(
                deal_number=i + 1, winner=i % 4, scores=[3, -1, -1, -1][-(i % 4) :] + [3, -1, -1, -1][: -(i % 4)]
            )
            for i in range(1000)
        ]
        ruleset = rulesets(settlement="zero-sum")
        ruleset.options["match"] = "open"
        ruleset.options["penalty"] = "flat"
        return api.SettleMatchRequest(ruleset=ruleset, deals=deals)

    text = replay_text(key)
    seeds = iter(range(1, 1 << 62))
    hand_17 = mask_text(start.hands[start.to_act])
    made: dict[str, Callable[[], Any]] = {
        "ListPresets": api.ListPresetsRequest,
        "DescribeRuleset": lambda: api.DescribeRulesetRequest(ruleset=rulesets(**_every_option())),
        "Deal": lambda: api.DealRequest(ruleset=rulesets(), deal_code=code, view_seat=0),
        "ValidateMove": lambda: api.ValidateMoveRequest(game=before_last(), move=last),
        "ApplyMove": lambda: api.ApplyMoveRequest(game=before_last(), move=last, view_seat=0),
        "LegalMoves": lambda: api.LegalMovesRequest(
            position=api.HandPosition(ruleset=rulesets(), hand=MANY_PLAYS_HAND)
        ),
        "NextHint": lambda: api.NextHintRequest(game=many_plays_game()),
        "TimeoutMove": lambda: api.TimeoutMoveRequest(game=bot_game(), bot_level="pro"),
        "SplitHand": lambda: api.SplitHandRequest(ruleset=rulesets(), hand=HARD_SPLIT_HAND),
        "NameCards": lambda: api.NameCardsRequest(game=before_last(), cards=hand_17, seat=last.seat),
        "ScoreDeal": lambda: api.ScoreDealRequest(game=log(len(moves))),
        "SettleMatch": settle,
        "ReplayLog": lambda: api.ReplayLogRequest(log=log(len(moves)).log, view_seat=0),
        "BotMove": lambda: api.BotMoveRequest(
            game=bot_game(), level="pro", seed=next(seeds), simulations=10_000, max_ms=10_000
        ),
        "AuditLog": lambda: api.AuditLogRequest(replay_toml=text),
    }
    check_covers(made, "stall_bench's heavy requests", [rpc for rpc in UNARY_RPCS if rpc.name in RPCS])
    return {name: Heavy(name, make) for name, make in made.items()}


# -- load --------------------------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    heavy_calls: int = 0
    heavy_seconds: list[float] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self, alone_p99: float) -> dict[str, Any]:
        heavy = sorted(self.heavy_seconds)
        return {
            "phase": self.name,
            "moves": len(self.latencies),
            "p50_ms": round(self.percentile(0.50) * 1000, 2),
            "p99_ms": round(self.percentile(0.99) * 1000, 2),
            "max_ms": round(max(self.latencies, default=0.0) * 1000, 2),
            "p99_vs_alone": round(self.percentile(0.99) / alone_p99, 2) if alone_p99 else None,
            "heavy_calls": self.heavy_calls,
            "heavy_p50_ms": round(heavy[len(heavy) // 2] * 1000, 1) if heavy else None,
            "codes": dict(self.codes),
        }


class Load:
    """The streams: each plays deal after deal, one move every ``interval`` seconds."""

    def __init__(self, stubs: list[Any], deals: list[StreamDeal], streams: int, interval: float) -> None:
        self.stubs = stubs
        self.deals = deals
        self.streams = streams
        self.interval = interval
        self.phase: Phase | None = None
        self.stopping = False
        self.errors: Counter[str] = Counter()

    async def stream(self, number: int) -> None:
        stub = self.stubs[number % len(self.stubs)]
        turn = number
        await asyncio.sleep(self.interval * number / self.streams)  # spread the streams' ticks
        next_at = time.perf_counter()
        while not self.stopping:
            deal = self.deals[turn % len(self.deals)]
            turn += self.streams
            call = stub.PlayStream()
            try:
                log = pb.GameLog(ruleset=pb.Ruleset(preset=PRESET), deal_code=deal.code)
                await call.write(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
                await call.read()
                for move in deal.moves:
                    if self.stopping:
                        break
                    wait = next_at - time.perf_counter()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    started = time.perf_counter()
                    next_at = max(next_at + self.interval, started)
                    await call.write(api.PlayStreamRequest(move=api.StreamMove(move=move)))
                    await call.read()
                    phase = self.phase
                    if phase is not None:
                        phase.latencies.append(time.perf_counter() - started)
                await call.done_writing()
                await call.code()
            except grpc.RpcError as exc:
                self.errors[exc.code().name] += 1
                call.cancel()
                await asyncio.sleep(self.interval)


async def heavy_loop(stub: Any, heavy: Heavy, phase: Phase, stop: asyncio.Event, timeout: float) -> None:
    method = getattr(stub, heavy.name)
    while not stop.is_set():
        request = heavy.make()
        started = time.perf_counter()
        try:
            await method(request, timeout=timeout)
            phase.codes["OK"] += 1
        except grpc.RpcError as exc:
            phase.codes[exc.code().name] += 1
        phase.heavy_seconds.append(time.perf_counter() - started)
        phase.heavy_calls += 1


async def run(args: argparse.Namespace, target: str, heavies: dict[str, Heavy]) -> list[dict[str, Any]]:
    deals = stream_deals(DEALS)
    options = [("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20)]
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(4)]
    stubs = [rpc.BigTwoServiceStub(channel) for channel in channels]
    heavy_channel = grpc.aio.insecure_channel(target, options=options)
    heavy_stub = rpc.BigTwoServiceStub(heavy_channel)
    await asyncio.gather(*(stub.ListPresets(api.ListPresetsRequest()) for stub in [*stubs, heavy_stub]))
    load = Load(stubs, deals, args.streams, args.interval_ms / 1000)
    tasks = [asyncio.create_task(load.stream(n)) for n in range(args.streams)]
    await asyncio.sleep(args.warmup)
    phases: list[Phase] = []
    try:
        for name in phase_names(args.rpcs):
            phase = Phase(name)
            stop = asyncio.Event()
            runner = None
            if name in heavies:
                runner = asyncio.create_task(heavy_loop(heavy_stub, heavies[name], phase, stop, args.heavy_timeout))
            load.phase = phase
            await asyncio.sleep(args.seconds)
            load.phase = None
            stop.set()
            if runner is not None:
                await runner
            phases.append(phase)
            print(_row(phase.summary(0.0)), file=sys.stderr, flush=True)
            await asyncio.sleep(args.settle)
    finally:
        load.stopping = True
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in [*channels, heavy_channel]:
            await channel.close()
    alone = sorted(phase.percentile(0.99) for phase in phases if phase.name.startswith(ALONE))
    baseline = alone[len(alone) // 2] if alone else 0.0
    results = [phase.summary(baseline) for phase in phases]
    if load.errors:
        results.append({"phase": "stream_errors", "codes": dict(load.errors)})
    return results


ALONE = "alone"
ALONE_EVERY = 5
"""An "alone" phase (streams only) comes first, after every five RPCs and last: the baseline p99
is their median, so that a machine shared with other work drifts into neither side."""


def phase_names(rpcs: list[str]) -> list[str]:
    names = [ALONE]
    for index, name in enumerate(rpcs, 1):
        names.append(name)
        if index % ALONE_EVERY == 0 or index == len(rpcs):
            names.append(f"{ALONE} {sum(n.startswith(ALONE) for n in names) + 1}")
    return names


HEADER = (
    f"{'phase':<16}{'moves':>7}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'p99/alone':>10}  heavy calls (p50 ms) codes"
)


def _row(summary: dict[str, Any]) -> str:
    if "moves" not in summary:
        return f"{summary['phase']:<16} {summary['codes']}"
    ratio = summary["p99_vs_alone"]
    heavy = ""
    if summary["heavy_calls"]:
        codes = " ".join(f"{code}={count}" for code, count in summary["codes"].items())
        heavy = f"{summary['heavy_calls']} ({summary['heavy_p50_ms']}) {codes}"
    return (
        f"{summary['phase']:<16}{summary['moves']:>7}{summary['p50_ms']:>9.2f}{summary['p99_ms']:>9.2f}"
        f"{summary['max_ms']:>9.1f}{'' if ratio is None else f'{ratio:.2f}':>10}  {heavy}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bigtwo.tools.stall_bench",
        description="Stream move latency beside a worst-case request of each RPC, against the streams alone.",
    )
    parser.add_argument("--streams", type=int, default=64, help="PlayStreams open at once (default %(default)s)")
    parser.add_argument("--interval-ms", type=float, default=50.0, help="per stream, one move every this many ms")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each phase (default %(default)s)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of streams before the first phase")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between phases")
    parser.add_argument("--heavy-timeout", type=float, default=20.0, help="deadline of each heavy call, seconds")
    parser.add_argument("--rpcs", nargs="*", default=list(RPCS), choices=RPCS, metavar="RPC", help="RPCs to try")
    parser.add_argument("--target", default="", help="bench this server instead of starting one")
    parser.add_argument(
        "--serve-args",
        default="",
        help="extra arguments for bigtwo serve, e.g. '--workers 2' or '--heavy-kind thread'",
    )
    parser.add_argument("--json", default="", help="also write the JSON figures to this file")
    args = parser.parse_args(argv)
    heavies = heavy_requests(BENCH_KEY.encode())
    server = None
    target = args.target
    if not target:
        server = LocalServer(*args.serve_args.split(), keys=BENCH_KEY)
        target = server.target
    print(HEADER, file=sys.stderr, flush=True)
    try:
        import uvloop

        results = uvloop.run(run(args, target, heavies))
    finally:
        if server is not None:
            server.stop()
    document = {
        "streams": args.streams,
        "interval_ms": args.interval_ms,
        "seconds": args.seconds,
        "serve_args": args.serve_args,
        "phases": results,
    }
    print(HEADER)
    for summary in results:
        print(_row(summary))
    text = json.dumps(document)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
