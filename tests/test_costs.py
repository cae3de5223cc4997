"""Where a call runs (service/costs.py): ordinary calls on the serving loop, calls whose cost bound
is large in the heavy-call pool; and a server whose pool is full still answers the ordinary calls.

The routing decision is checked, never a time (the times are cost_bench's, docs/PERFORMANCE.md)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.codec.rpcs import UNARY_RPCS
from bigtwo.engine import PRESET_NAMES, Deal, DealCode, Ruleset, deal_from_code, mask_text, tables_for
from bigtwo.engine.generate import all_plays
from bigtwo.service.core import CallInfo, Core
from bigtwo.service.costs import (
    ALWAYS_ON_THE_LOOP,
    BOUNDED,
    LOOP_BUDGET_US,
    Where,
    place,
    plays_bound,
    turns_before_a_person,
)
from bigtwo.service.errors import InvalidArgument
from bigtwo.service.limits import LIMITS
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from service_support import KEY_A, ServerProcess, details

CLASSIC = pb.Ruleset(preset="classic")
ONE_SUIT = "3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S"
"""13 cards with about 1,300 plays (every five of them is a flush): a pathological hand."""
FOURS_18 = "3D 3C 3H 3S 4D 4C 4H 4S 5D 5C 5H 5S 6D 6C 6H 6S 7D 7S"
RUN_OF_PAIRS_18 = "3D 3S 4D 4S 5D 5H 5S 6D 6S 7D 7S 8D 8S 9D 9S TD JD AS"
ORDINARY_13 = "3D 5C 6H 8S 9D TC JH QS KD AC 2H 4S 7C"
"""An ordinary hand: a few pairs' worth of plays, no five-card hand."""


def make_core() -> Core:
    return Core(TokenCodec(KeyRing([KEY_A.encode()])))


def placed(method: str, request: Any, core: Core | None = None) -> Any:
    return place(method, request, core or make_core(), CallInfo())


def token_at(core: Core, players: int, seed: int, moves: int = 0) -> pb.Game:
    """A host's state token of a real deal after its first ``moves`` moves (weakest play each)."""
    rules = Ruleset.from_mapping({"preset": "classic", "players": str(players)})
    deal = Deal.start(rules, deal_from_code(DealCode(seed), rules))
    played = []
    for _ in range(moves):
        move = deal.legal_moves()[0]
        played.append(str(move))
        deal.do(move)
    log = pb.GameLog(
        ruleset=pb.Ruleset(preset="classic", options={"players": str(players)}),
        deal_code=str(DealCode(seed)),
        moves=played,
    )
    return pb.Game(state_token=core.replay_log(api.ReplayLogRequest(log=log), CallInfo()).state_token)


# -- the bound --------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_plays_bound_is_never_below_the_plays_listed(preset: str) -> None:
    tables = tables_for(Ruleset.from_mapping({"preset": preset}))
    rng = random.Random(preset)
    hands = [sum(1 << bit for bit in rng.sample(range(52), rng.choice((5, 13, 17, 18)))) for _ in range(150)]
    for text in (ONE_SUIT, FOURS_18, RUN_OF_PAIRS_18, ORDINARY_13):
        hands.append(sum(1 << b for b in range(52) if mask_text(1 << b) in text.split()))
    for hand in hands:
        assert plays_bound(hand, tables) >= len(all_plays(hand, tables)), mask_text(hand)


def test_every_call_is_bounded_or_always_cheap() -> None:
    """Each unary RPC of the proto is in one of the two tables (costs.py checks so at import, naming
    one missing); a call of the cheap table runs on the loop without a bound, whatever it asks."""
    assert {rpc.name for rpc in UNARY_RPCS} == set(BOUNDED) | ALWAYS_ON_THE_LOOP
    for spec in UNARY_RPCS:
        if spec.name in ALWAYS_ON_THE_LOOP:
            assert placed(spec.name, spec.request()).where is Where.LOOP, spec.name


# -- ordinary calls run on the loop, large bounds in the pool -------------------------------------------


def test_ordinary_hands_are_listed_hinted_and_split_on_the_loop() -> None:
    core = make_core()
    position = api.LegalMovesRequest(position=api.HandPosition(ruleset=CLASSIC, hand=ORDINARY_13))
    assert placed("LegalMoves", position).where is Where.LOOP
    assert placed("SplitHand", api.SplitHandRequest(ruleset=CLASSIC, hand=ORDINARY_13)).where is Where.LOOP
    for seed in range(1, 9):  # the first seat of real 4-player deals, by token and by log
        game = token_at(core, 4, seed)
        for method, request in (
            ("LegalMoves", api.LegalMovesRequest(game=game)),
            ("NextHint", api.NextHintRequest(game=game)),
            ("TimeoutMove", api.TimeoutMoveRequest(game=game)),
            ("BotMove", api.BotMoveRequest(game=game, level="random")),
        ):
            placement = placed(method, request, core)
            # bound_us is the cost bound computed from the request's counts before any work (no clock
            # is read): the placement rule, not a timing.
            assert placement.where is Where.LOOP and placement.bound_us <= LOOP_BUDGET_US, (method, seed, placement)
    code = str(DealCode(3))
    by_log = api.LegalMovesRequest(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=code)))
    assert placed("LegalMoves", by_log).where is Where.LOOP


@pytest.mark.parametrize("hand", [ONE_SUIT, FOURS_18, RUN_OF_PAIRS_18])
def test_pathological_hands_go_to_the_pool(hand: str) -> None:
    position = api.LegalMovesRequest(position=api.HandPosition(ruleset=CLASSIC, hand=hand))
    assert placed("LegalMoves", position).where is Where.POOL
    assert placed("SplitHand", api.SplitHandRequest(ruleset=CLASSIC, hand=hand)).where is Where.POOL


def test_searching_bots_large_audits_and_long_matches_go_to_the_pool() -> None:
    core = make_core()
    game = token_at(core, 4, 5, moves=2)
    assert placed("BotMove", api.BotMoveRequest(game=game, level="pro"), core).where is Where.POOL
    assert placed("TimeoutMove", api.TimeoutMoveRequest(game=game, bot_level="Pro"), core).where is Where.POOL
    # The 3♦ holder of a 3-player deal holds 18 cards: good's plan search is large there.
    three = token_at(core, 3, 5)
    assert placed("BotMove", api.BotMoveRequest(game=three, level="good"), core).where is Where.POOL
    deals = [pb.DealResult(winner=i % 4, scores=[3, -1, -1, -1]) for i in range(LIMITS.match_deals)]
    assert placed("SettleMatch", api.SettleMatchRequest(ruleset=CLASSIC, deals=deals)).where is Where.POOL
    assert placed("SettleMatch", api.SettleMatchRequest(ruleset=CLASSIC, deals=deals[:8])).where is Where.LOOP
    assert placed("AuditLog", api.AuditLogRequest(replay_toml="x" * 100_000)).where is Where.POOL


def test_play_bots_is_bounded_by_the_moves_before_a_person_acts() -> None:
    classic = Ruleset.from_mapping({"preset": "classic"})
    hong_kong = Ruleset.from_mapping({"preset": "hong-kong"})  # auto-pass: a seat may be skipped
    assert turns_before_a_person(classic, 0b0111, 4, 64) == 3
    assert turns_before_a_person(classic, 0b1111, 4, 64) == 64  # bots only
    assert turns_before_a_person(hong_kong, 0b0111, 4, 64) == 64
    core = make_core()
    host = token_at(core, 4, 2)
    everyone = [api.BotSeat(seat=seat, level="random", seed=seat) for seat in range(4)]
    placement = placed("PlayBots", api.PlayBotsRequest(game=host, bots=everyone), core)
    assert placement.where is Where.POOL and "64 moves" in placement.fact


def test_a_pro_bot_is_placed_without_loading_its_game() -> None:
    broken = pb.Game(state_token=b"not a token")
    assert placed("BotMove", api.BotMoveRequest(game=broken, level="pro")).where is Where.POOL


def test_placing_refuses_what_the_handler_refuses_in_the_same_words() -> None:
    core = make_core()
    broken = api.LegalMovesRequest(game=pb.Game(state_token=b"not a token"))
    with pytest.raises(InvalidArgument) as by_place:
        placed("LegalMoves", broken, core)
    with pytest.raises(InvalidArgument) as by_handler:
        core.legal_moves(broken, CallInfo())
    assert str(by_place.value) == str(by_handler.value)


def test_the_handler_answers_from_the_game_loaded_to_place_it() -> None:
    core = make_core()
    request = api.NextHintRequest(game=token_at(core, 4, 9, moves=1))
    info = CallInfo()
    placement = place("NextHint", request, core, info)
    assert placement.where is Where.LOOP and placement.game is not None
    info.loaded = (request.game, placement.game)
    answer = core.next_hint(request, info)
    assert info.loaded is None, "the handler took the loaded game"
    assert answer == core.next_hint(request, CallInfo())


# -- a server whose pool is full answers the ordinary calls ---------------------------------------------


@pytest.mark.slow
def test_ordinary_calls_are_answered_while_the_pool_sheds(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--heavy-workers", "1", "--heavy-waiting", "0", "--no-call-log", metrics=False)
    try:
        core = make_core()
        games = [token_at(core, 4, seed) for seed in range(1, 6)]

        async def main() -> tuple[list[Any], list[Any]]:
            async with grpc.aio.insecure_channel(server.target) as channel:
                stub = rpc.BigTwoServiceStub(channel)  # type: ignore[no-untyped-call]
                searches = [
                    stub.BotMove(api.BotMoveRequest(game=games[0], level="pro", seed=s, max_ms=1500), timeout=60)
                    for s in range(4)
                ]
                await asyncio.sleep(0.2)
                ordinary = []
                for game in games * 4:
                    ordinary.append(await stub.LegalMoves(api.LegalMovesRequest(game=game), timeout=30))
                    ordinary.append(await stub.NextHint(api.NextHintRequest(game=game), timeout=30))
                return list(await asyncio.gather(*searches, return_exceptions=True)), ordinary

        searched, ordinary = asyncio.run(main())
        shed = [error for error in searched if isinstance(error, grpc.RpcError)]
        assert shed, "four searches at once with one worker and no waiting room: some are shed"
        assert all(details(error)["reason"] == "HEAVY_CALLS_BUSY" for error in shed)
        assert len(ordinary) == 40
        assert all(answer.plays for answer in ordinary[0::2]) and all(answer.cycle_length for answer in ordinary[1::2])
    finally:
        server.stop()
