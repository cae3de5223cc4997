"""Issue 13, item 6: memory stays bounded under arbitrary valid inputs.

Every cache the service keeps (bot plans, classified plays, rulesets, tokens) must have a bound,
because a client chooses the keys: each ruleset it sends, and a straights ladder or a match length
makes as many distinct rulesets as it likes, is another entry for a cache keyed by rules. This test
is such a client. It knows only the proto: it asks the service which presets and option values
exist (``ListPresets``, and the valid values ``DescribeRuleset`` names when refusing one), then sends
12,000 requests with random rulesets (a random preset with random valid overrides, explicit ladders
and match lengths included) and random bot levels: ``DescribeRuleset``, ``Deal``, ``LegalMoves`` by
token and by position, ``SplitHand``, ``NameCards``, ``BotMove`` (every level; pro with a small
budget). After a warm-up the RSS of the server and its worker processes (heavy calls run there)
may grow by at most 50 MB.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from fuzz.corpus import LEVELS, SERVICE_PATH, OptionDomain, discover_options
from fuzz.server import ServerUnderTest
from google.protobuf.message import Message

pytestmark = pytest.mark.timeout(600)

REQUESTS = 12_000
WARMUP = 2_000
GROWTH_MB = 50
CALLERS = 8
SEED = 6

M = TypeVar("M", bound=Message)


@dataclass
class Load:
    """What the callers sent and what came back."""

    limit: int
    sent: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    by_rpc: Counter[str] = field(default_factory=Counter)
    fingerprints: set[str] = field(default_factory=set)
    levels: Counter[str] = field(default_factory=Counter)

    @property
    def full(self) -> bool:
        return self.sent >= self.limit


class Caller:
    """Typed unary calls on an aio channel; every answer is counted, errors included."""

    def __init__(self, channel: grpc.aio.Channel, load: Load) -> None:
        self.channel = channel
        self.load = load

    async def __call__(self, method: str, request: Message, reply: type[M]) -> M | None:
        self.load.sent += 1
        self.load.by_rpc[method] += 1
        stub = self.channel.unary_unary(
            SERVICE_PATH + method,
            request_serializer=lambda message: message.SerializeToString(),
            response_deserializer=reply.FromString,
        )
        try:
            answer: M = await stub(request, timeout=30)
        except grpc.aio.AioRpcError as error:
            self.load.codes[error.code().name] += 1
            return None
        self.load.codes["OK"] += 1
        return answer


async def one_table(call: Caller, domain: OptionDomain, rng: random.Random) -> None:
    """A random ruleset's life: dealt, described, judged, split, named, and asked for the opening
    move by a pro bot and a bot of another level. Bots keep plans per ruleset, a cache this test
    is about, so every table gets a bot, and the calls per ruleset are few: the more rulesets, the
    plainer an unbounded cache shows."""
    load = call.load
    ruleset = domain.random_ruleset(rng, overrides=rng.randint(2, 6))
    if "match" in domain.templates and rng.random() < 0.8:  # deals:N, target:T: a ruleset per number
        ruleset.options["match"] = domain.random_value("match", rng, numbered=True)
    dealt = await call("Deal", api.DealRequest(ruleset=ruleset, view_seat=0), api.DealResponse)
    if dealt is None:
        return  # options that exclude each other: a refusal, and a fresh ruleset
    load.fingerprints.add(dealt.table.ruleset_fingerprint)
    if dealt.table.over:
        return  # a dragon ends a deal before any move
    if rng.random() < 0.5:
        await call("DescribeRuleset", api.DescribeRulesetRequest(ruleset=ruleset), api.DescribeRulesetResponse)
    token, hand = dealt.state_token, dealt.view.hand.text.split()
    game = pb.Game(state_token=token)
    legal = await call("LegalMoves", api.LegalMovesRequest(game=game), api.LegalMovesResponse)
    table = rng.choice(legal.plays).cards.text if legal is not None and legal.plays else ""
    if rng.random() < 0.5:
        subset = " ".join(rng.sample(hand, rng.randint(1, len(hand))))
        position = api.HandPosition(ruleset=ruleset, hand=subset, table=table if rng.random() < 0.5 else "")
        await call("LegalMoves", api.LegalMovesRequest(position=position), api.LegalMovesResponse)
    else:
        await call("SplitHand", api.SplitHandRequest(ruleset=ruleset, hand=" ".join(hand)), api.SplitHandResponse)
    cards = " ".join(rng.sample(hand, rng.randint(1, min(5, len(hand)))))
    await call("NameCards", api.NameCardsRequest(cards=cards, ruleset=ruleset, table=table), api.NameCardsResponse)
    for level in ("pro", rng.choice(LEVELS[:-1])):
        if load.full:
            return
        load.levels[level] += 1
        request = api.BotMoveRequest(game=game, level=level, seed=rng.getrandbits(64))
        if level == "pro":
            request.simulations = rng.randint(1, 2)
        await call("BotMove", request, api.BotMoveResponse)


async def drive(target: str, domain: OptionDomain, load: Load, seed: int) -> None:
    """``CALLERS`` concurrent callers playing random tables until ``load.limit`` requests."""
    async with grpc.aio.insecure_channel(target) as channel:
        call = Caller(channel, load)

        async def caller(index: int) -> None:
            rng = random.Random(f"{seed}:{index}")
            while not load.full:
                await one_table(call, domain, rng)

        await asyncio.gather(*(caller(i) for i in range(CALLERS)))


def settled_rss_kb(server: ServerUnderTest) -> int:
    """The server's RSS once nothing is in flight."""
    time.sleep(0.5)
    return server.rss_kb()


def test_rss_growth_stays_under_50_mb_with_random_rulesets_and_bots(tmp_path: Path) -> None:
    with ServerUnderTest("aio", tmp_path, rss_cap_mb=2048) as server:
        server.wait_ready()
        with grpc.insecure_channel(server.target) as channel:
            domain = discover_options(channel)
        load = Load(limit=WARMUP)
        asyncio.run(drive(server.target, domain, load, SEED))
        baseline_kb = settled_rss_kb(server)
        load.limit = REQUESTS
        asyncio.run(drive(server.target, domain, load, SEED + 1))
        end_kb = settled_rss_kb(server)
        alive = server.alive()
    growth_mb = (end_kb - baseline_kb) / 1024
    figures = (
        f"{load.sent} requests, {len(load.fingerprints)} distinct rulesets, statuses {dict(load.codes)}, "
        f"levels {dict(load.levels)}, per RPC {dict(load.by_rpc)}; RSS {baseline_kb / 1024:.0f} MB after "
        f"{WARMUP} requests, {end_kb / 1024:.0f} MB at the end"
    )
    assert alive, f"the server died: {figures}"
    assert set(load.codes) <= {"OK", "INVALID_ARGUMENT"}, figures
    assert load.codes["OK"] > load.sent // 2, f"mostly refused, so the caches were hardly used: {figures}"
    assert len(load.fingerprints) > 1000, f"too few distinct rulesets to fill a cache: {figures}"
    assert growth_mb < GROWTH_MB, f"RSS grew {growth_mb:.1f} MB (bound {GROWTH_MB} MB): {figures}"
