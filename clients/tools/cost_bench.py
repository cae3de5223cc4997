"""``python -m bigtwo.tools.cost_bench``: what each call costs at its worst, and where it runs.

The server answers a call on its event loop unless the call's cost bound, read before its work
(:mod:`bigtwo.service.costs`), is over the loop's budget; then the call goes to the heavy-call
pool. This bench measures, in this process, what the handlers cost on the worst requests found for
each kind of work (hands of fours, of one suit, pairs along a run, random hands of 13 to 18 cards;
the slowest positions of real deals for each bot level; audits and matches by size; the longest
deal's log for the calls that always run on the loop), and prints beside each case's worst time the
bound the server reads for that request and where it runs it. A request placed on the loop that
took longer than the loop's budget is counted in the row (``--check`` exits 1 then): the bound's
figures in ``service/costs.py`` need measuring again.

Each request is timed as CPU time (``time.process_time``) of the handler and the serializing of its
answer, every memo emptied first (a hand, a token never seen: the cold cost is the worst), median
of ``--repeats`` runs. docs/PERFORMANCE.md ("Where each call runs") has a run's table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, mask_text, observe, tables_for
from bigtwo.engine.bots import bot_for
from bigtwo.engine.cache import clear_caches
from bigtwo.engine.cards import FULL_DECK_MASK as FULL_DECK
from bigtwo.service import costs
from bigtwo.service.core import CallInfo, Core
from bigtwo.service.servicer import UNARY
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .stall_bench import longest_deal

ERR = sys.stderr
BENCH_KEY = b"cost-bench-only-key-" + b"0" * 32
PRESET = "classic"


def _cards(text: str) -> tuple[str, ...]:
    return tuple(text.split(" "))


SHAPES: dict[str, tuple[str, ...]] = {
    "fours": _cards("3D 3C 3H 3S 4D 4C 4H 4S 5D 5C 5H 5S 6D 6C 6H 6S 7D 7S"),
    "one suit": _cards("3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S 3D 4D 5D 6D 7D"),
    "run of pairs": _cards("3D 3S 4D 4S 5D 5H 5S 6D 6S 7D 7S 8D 8S 9D 9S TD JD AS"),
}
"""The hands that cost most, found for each kind of work, 18 cards each (their first n cards are
the n-card hands): fours and full houses (about 900 plays), one suit's 13 cards (about 1,300
flushes), pairs along a run (the slowest to split into the fewest plays, stall_bench's
HARD_SPLIT_HAND)."""
FOURS_WITHOUT_3D = _cards("4D 4C 4H 4S 5D 5C 5H 5S 6D 6C 6H 6S 7D 7C 7H 7S 8D")
SPADES_WITHOUT_3D = _cards("3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S 4D 5D 6D 7D")
HAND_SIZES = (13, 15, 17, 18)
RANDOM_HANDS = 30
"""Random hands tried per size besides the constructed ones (the worst counts)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One row: a method and the fact its bound reads, with the requests to time."""

    method: str
    fact: str
    requests: list[Any]


RULESETS: dict[tuple[tuple[str, str], ...], Ruleset] = {}
"""Every ruleset the bench's requests use: compiled again after the memos are emptied, so that a
figure is a call's own (a ruleset never seen costs its compiling on any call, about 0.3 ms)."""


def rules(**options: str) -> pb.Ruleset:
    key = tuple(sorted(options.items()))
    if key not in RULESETS:
        RULESETS[key] = Ruleset.from_mapping({"preset": PRESET, **options})
    return pb.Ruleset(preset=PRESET, options=options)


def cold() -> None:
    """Every memo emptied (hands, plays, tokens never seen), the bench's rulesets compiled."""
    clear_caches()
    for ruleset in RULESETS.values():
        tables_for(ruleset)


def random_hands(size: int, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    cards = [1 << bit for bit in range(52) if FULL_DECK >> bit & 1]
    return [mask_text(sum(rng.sample(cards, size))) for _ in range(count)]


class Games:
    """State tokens of positions, issued by the bench's own core (as a client would hold them)."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def token(self, log: pb.GameLog) -> pb.Game:
        answer = self.core.replay_log(api.ReplayLogRequest(log=log), CallInfo())
        return pb.Game(state_token=answer.state_token)

    def leading(self, cards: int, shape: tuple[str, ...] = FOURS_WITHOUT_3D, players: int = 3) -> pb.Game:
        """A game whose seat 0 leads a fresh trick (3♦ led, every other seat passed) holding the
        first ``cards`` cards of ``shape``."""
        own = ["3D", *shape[:cards]]
        rest = [mask_text(1 << b) for b in range(52) if FULL_DECK >> b & 1 and mask_text(1 << b) not in own]
        size = min(17, len(rest) // (players - 1))
        hands = [" ".join(own)] + [" ".join(rest[size * s : size * (s + 1)]) for s in range(players - 1)]
        log = pb.GameLog(
            ruleset=rules(players=str(players)),
            explicit_deal=pb.ExplicitDeal(hands=hands),
            moves=["3D"] + ["pass"] * (players - 1),
        )
        return self.token(log)

    def slowest(self, players: int, level: str, deals: int, keep: int = 4) -> list[pb.Game]:
        """The positions of ``deals`` deals (every seat at ``level``) where the bot took longest to
        decide in the engine, as tokens: the worst to time through the service."""
        ruleset = Ruleset.from_mapping({"preset": PRESET, "players": str(players)})
        found: list[tuple[float, str, list[str]]] = []
        bot = bot_for(level)
        for seed in range(1, deals + 1):
            code = DealCode(seed)
            deal = Deal.start(ruleset, deal_from_code(code, ruleset))
            played: list[str] = []
            rng = random.Random(seed)
            while not deal.over:
                cold()
                started = time.process_time()
                move = bot.choose(observe(deal, deal.to_act), ruleset, rng)
                found.append((time.process_time() - started, str(code), list(played)))
                played.append(str(move))
                deal.do(move)
        found.sort(key=lambda entry: -entry[0])
        return [
            self.token(pb.GameLog(ruleset=rules(players=str(players)), deal_code=code, moves=moves))
            for _, code, moves in found[:keep]
        ]


def hand_cases(games: Games) -> Iterator[Case]:
    for size in HAND_SIZES:
        shapes = {name: [" ".join(cards[:size])] for name, cards in SHAPES.items()}
        shapes["random"] = random_hands(size, RANDOM_HANDS, size)
        for name, texts in shapes.items():
            fact = f"{size} cards, {name}"
            yield Case(
                "LegalMoves",
                fact,
                [api.LegalMovesRequest(position=api.HandPosition(ruleset=rules(), hand=h)) for h in texts],
            )
            yield Case("SplitHand", fact, [api.SplitHandRequest(ruleset=rules(), hand=h) for h in texts])
    for players, cards in ((4, 12), (3, 16)):
        for name, shape in (("fours", FOURS_WITHOUT_3D), ("one suit", SPADES_WITHOUT_3D)):
            game = games.leading(cards, shape, players)
            fact = f"game, {cards} cards, {name}, leading"
            yield Case("LegalMoves", fact, [api.LegalMovesRequest(game=game)])
            yield Case("NextHint", fact, [api.NextHintRequest(game=game)])


def bot_cases(games: Games, deals: int) -> Iterator[Case]:
    for players, cards in ((4, "13 cards"), (3, "17-18 cards")):
        for level in costs.BOT_LEVELS:
            if level == "pro":  # each decision takes its whole default budget: a few positions
                positions = games.slowest(players, "great", 1, keep=2)
            else:
                positions = games.slowest(players, level, deals)
            requests = [api.BotMoveRequest(game=g, level=level, seed=7) for g in positions]
            yield Case("BotMove", f"{level}, {cards}, real deals", requests)
        for level in costs.BOT_LEVELS[:-1]:
            # A seat token's bots play at the levels its deal sealed (DealRequest.bot_levels).
            seat_games = []
            for seed in range(1, deals + 1):
                answer = games.core.deal(
                    api.DealRequest(
                        ruleset=rules(players=str(players)),
                        deal_code=str(DealCode(seed)),
                        view_seat=players - 1,
                        bot_seats=list(range(players - 1)),
                        bot_levels=[api.SeatBotLevel(seat=s, level=level) for s in range(players - 1)],
                    ),
                    CallInfo(),
                )
                seat_games.append(pb.Game(state_token=answer.seat_token))
            yield Case("PlayBots", f"{level}, {cards}, a round", [api.PlayBotsRequest(game=g) for g in seat_games])
    for players, held in ((4, 12), (3, 16)):
        for name, shape in (("fours", FOURS_WITHOUT_3D), ("one suit", SPADES_WITHOUT_3D)):
            game = games.leading(held, shape, players)
            for level in costs.BOT_LEVELS[:-1]:
                request = api.BotMoveRequest(game=game, level=level, seed=7)
                yield Case("BotMove", f"{level}, {held} cards, {name}, leading", [request])


def log_cases(games: Games, key: bytes) -> Iterator[Case]:
    from bigtwo.engine.replay import dumps, game_log_from_deals

    rules(match="open")
    ruleset = RULESETS[(("match", "open"),)]
    deals: list[Deal] = []
    codes: list[DealCode] = []
    for seed in range(1, 101):
        code = DealCode(seed)
        deal = Deal.start(ruleset, deal_from_code(code, ruleset))
        while not deal.over:
            legal = deal.legal_moves()
            deal.do(legal[-1] if legal[-1].is_pass and seed % 3 else legal[0])
        deals.append(deal)
        codes.append(code)
    for count in (1, 3, 10, 30, 100):
        text = dumps(game_log_from_deals(ruleset, deals[:count], codes=codes[:count], key=key))
        yield Case("AuditLog", f"{count} deals, {len(text) // 1000} kB", [api.AuditLogRequest(replay_toml=text)])
    for count in (10, 100, 300, 1000):
        results = [pb.DealResult(deal_number=i + 1, winner=i % 4, scores=[3, -1, -1, -1]) for i in range(count)]
        request = api.SettleMatchRequest(ruleset=rules(match="open", settlement="zero-sum"), deals=results)
        yield Case("SettleMatch", f"{count} deals", [request])


def loop_cases() -> Iterator[Case]:
    """The calls that always run on the loop, at their worst: the longest deal's log replayed
    (read from its log, its last move judged), every option of a ruleset read."""
    code, moves = longest_deal()
    log = pb.GameLog(ruleset=rules(), deal_code=code, moves=moves)
    before_last = pb.Game(log=pb.GameLog(ruleset=rules(), deal_code=code, moves=moves[:-1]))
    ruleset = Ruleset.from_mapping({"preset": PRESET, "match": "open"})
    deal = Deal.start(ruleset, deal_from_code(DealCode.parse(code), ruleset))
    for text in moves[:-1]:
        deal.do_text(deal.to_act, text)
    last = pb.Move(index=len(moves) - 1, seat=deal.to_act, text=moves[-1])
    facts = f"a log of {len(moves)} moves"
    yield Case("Deal", "a deal code", [api.DealRequest(ruleset=rules(), deal_code=code, view_seat=0)])
    yield Case("ApplyMove", facts, [api.ApplyMoveRequest(game=before_last, move=last, view_seat=0)])
    yield Case("ValidateMove", facts, [api.ValidateMoveRequest(game=before_last, move=last)])
    yield Case("ReplayLog", facts, [api.ReplayLogRequest(log=log, view_seat=0)])
    yield Case("ScoreDeal", facts, [api.ScoreDealRequest(game=pb.Game(log=log))])
    yield Case("TimeoutMove", facts + ", no bot", [api.TimeoutMoveRequest(game=before_last)])
    yield Case("AuditLog", facts + ", game_log", [api.AuditLogRequest(game_log=log)])


def timed(call: Callable[[Any, CallInfo], Any], request: Any, repeats: int) -> float:
    """Median CPU seconds of ``call(request)`` and serializing its answer, every memo emptied
    before each run (a hand, ruleset and token never seen: the cold cost is the worst)."""
    times = []
    for _ in range(repeats):
        cold()
        started = time.process_time()
        answer = call(request, CallInfo())
        if answer.__class__ is not bytes:
            answer.SerializeToString()
        times.append(time.process_time() - started)
    return statistics.median(times)


def measure(core: Core, case: Case, repeats: int) -> dict[str, Any]:
    """The case's worst time, the bound and place of that request, and how many of its requests
    took longer than their own bound."""
    call = getattr(core, UNARY[case.method][2])  # the handler the server calls
    worst, worst_placement, over = 0.0, None, 0
    for request in case.requests:
        seconds = timed(call, request, repeats)
        placement = costs.place(case.method, request, core, CallInfo())
        # Misplaced: placed on the loop, yet it took longer than the loop's budget.
        over += placement.where is costs.Where.LOOP and seconds * 1e6 > costs.LOOP_BUDGET_US
        if worst_placement is None or seconds >= worst:
            worst, worst_placement = seconds, placement
    assert worst_placement is not None
    return {
        "method": case.method,
        "case": case.fact,
        "requests": len(case.requests),
        "worst_us": round(worst * 1e6),
        "bound_us": worst_placement.bound_us,
        "bound_fact": worst_placement.fact,
        "runs_on": worst_placement.where.value,
        "misplaced": over,
    }


UNDER_LOAD_ARGS = "--heavy-workers 1 --heavy-waiting 2 --no-call-log"
SEARCHERS = 6


def under_load(serve_args: str, server_path: str = "", rounds: int = 5, deals: int = 40) -> dict[str, int]:
    """Ordinary calls while the heavy-call pool is saturated: ``bigtwo serve`` (this interpreter's
    bigtwo, or with ``server_path`` as its ``PYTHONPATH`` another checkout's) with one worker and two waiting,
    six pro searches in a loop, then ``LegalMoves`` and ``NextHint`` by log on real 4-player deals,
    one at a time: how many were answered, how many refused and why (status counts)."""
    import asyncio
    from collections import Counter

    import grpc
    from bigtwo.v1 import service_pb2_grpc as rpc

    from .local_server import LocalServer

    if server_path:
        os.environ["PYTHONPATH"] = server_path  # the server's only: this process has imported its code
    server = LocalServer(*serve_args.split(), keys=BENCH_KEY.decode())
    games = [pb.Game(log=pb.GameLog(ruleset=rules(), deal_code=str(DealCode(seed)))) for seed in range(1, deals + 1)]
    codes: Counter[str] = Counter()

    async def run() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = rpc.BigTwoServiceStub(channel)
            stop = asyncio.Event()

            async def search(number: int) -> None:
                while not stop.is_set():
                    request = api.BotMoveRequest(game=games[number], level="pro", seed=number, max_ms=200)
                    try:
                        await stub.BotMove(request, timeout=30)
                    except grpc.RpcError:
                        await asyncio.sleep(0.01)

            searches = [asyncio.create_task(search(number)) for number in range(SEARCHERS)]
            await asyncio.sleep(1.0)
            for _ in range(rounds):
                for game in games:
                    for call in (
                        stub.LegalMoves(api.LegalMovesRequest(game=game), timeout=30),
                        stub.NextHint(api.NextHintRequest(game=game), timeout=30),
                    ):
                        try:
                            await call
                            codes["OK"] += 1
                        except grpc.RpcError as error:
                            codes[error.code().name] += 1
            stop.set()
            await asyncio.gather(*searches)

    try:
        asyncio.run(run())
    finally:
        server.stop()
    return dict(codes)


HEADER = f"| {'method':<12} | {'case':<36} | {'worst µs':>9} | {'bound µs':>9} | {'bound read from':<24} | runs on |"


def _row(row: dict[str, Any]) -> str:
    flag = f" ({row['misplaced']} over the budget)" if row["misplaced"] else ""
    return (
        f"| {row['method']:<12} | {row['case']:<36} | {row['worst_us']:>9} | {row['bound_us']:>9} | "
        f"{row['bound_fact']:<24} | {row['runs_on']}{flag} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bigtwo.tools.cost_bench", description="Worst-case cost of each call, and where it runs."
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each request (median)")
    parser.add_argument("--deals", type=int, default=6, help="deals whose first moves the bots are timed at")
    parser.add_argument("--only", nargs="*", default=[], help="only these methods")
    parser.add_argument("--json", default="", help="also write the rows as JSON to this file")
    parser.add_argument(
        "--under-load",
        action="store_true",
        help="instead: ordinary LegalMoves/NextHint against a started server whose pool pro searches saturate",
    )
    parser.add_argument("--serve-args", default=UNDER_LOAD_ARGS, help="bigtwo serve's arguments for --under-load")
    parser.add_argument(
        "--server-pythonpath", default="", help="--under-load: the server's PYTHONPATH (another checkout's bigtwo)"
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a request placed on the loop took longer than its budget"
    )
    args = parser.parse_args(argv)
    if args.under_load:
        codes = under_load(args.serve_args, args.server_pythonpath)
        print(json.dumps({"serve_args": args.serve_args, "server_pythonpath": args.server_pythonpath, "codes": codes}))
        return 0
    core = Core(TokenCodec(KeyRing([BENCH_KEY])))
    # Tokens come from another core with the same key (another replica): the measured core has
    # issued none of them, so it reads each one cold.
    games = Games(Core(TokenCodec(KeyRing([BENCH_KEY]))))
    rows = []
    print(HEADER, flush=True)
    for cases in (loop_cases(), hand_cases(games), bot_cases(games, args.deals), log_cases(games, BENCH_KEY)):
        for case in cases:
            if args.only and case.method not in args.only:
                continue
            row = measure(core, case, args.repeats)
            rows.append(row)
            print(_row(row), flush=True)
    print(json.dumps({"budget_us": costs.LOOP_BUDGET_US, "rows": rows}))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"budget_us": costs.LOOP_BUDGET_US, "rows": rows}, out, indent=1)
    over = [row for row in rows if row["misplaced"]]
    for row in over:
        print(
            f"cost_bench: {row['method']} {row['case']}: {row['misplaced']} on the loop took longer than the budget",
            file=ERR,
        )
    return 1 if args.check and over else 0


__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
