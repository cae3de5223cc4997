"""Issue 31's "Done when", end to end on 127.0.0.1: three replicas take a short burst of mixed load
(streams and unary calls, refused and malformed moves, from the load generator), then 200 games at
once through the project's own client (``bigtwo.client``, asyncio, round-robin over the three), each
asking ``LegalMoves`` every turn as a front end does; one replica is SIGKILLed mid-way.

Every game must finish, with nothing applied twice: each answer's move count is the one before plus
one (indices contiguous), and each game's final log, replayed by the engine, gives the table the
service announced (over, winner, scores). The retries and errors are counted and printed.

Bounded: each front end plays the legal play with the most cards (deals of ~15-25 moves), so the
200 deals make ~8,000 calls; about a minute on a busy two-core machine.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from bigtwo.client import AsyncBigTwoClient
from bigtwo.client.client import BigTwoError, TableView
from bigtwo.engine import Deal, DealCode, deal_from_code, mask_text, preset
from bigtwo.tools.loadtest.generator import LoadConfig, run
from service_support import ServerProcess, replicas

pytestmark = pytest.mark.timeout(240)

GAMES = 200
KILL_AFTER_MOVES = GAMES * 6
"""The replica dies once the games have made this many moves in all: every game is in play."""
RULES = preset("classic")


@pytest.fixture
def three(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    with replicas(tmp_path, 3, "--no-call-log") as servers:
        yield servers


@dataclass
class Tally:
    moves: int = 0
    legal_asks: int = 0
    finished: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    killed_at: float = 0.0
    kill: asyncio.Event = field(default_factory=asyncio.Event)


Finished = tuple[str, tuple[str, ...], TableView]
"""A game's deal code, its final log and the last table the service announced."""


async def front_end(client: AsyncBigTwoClient, number: int, tally: Tally) -> Finished:
    """One table: deal, then each turn ask LegalMoves and play the play with the most cards (or
    pass); the deal code, the final log and the last table seen."""
    code = str(DealCode(10_000 + number))
    dealt = await client.deal(RULES, deal_code=code)
    game, table = dealt.game, dealt.table
    while not table.over:
        legal = await client.legal_moves(game)
        tally.legal_asks += 1
        play = max(legal.plays, key=lambda p: (p.mask.bit_count(), -p.mask), default=None)
        before = game.moves_made
        result = await client.apply_move(game, mask_text(play.mask) if play else "pass", seat=table.to_act)
        assert result.outcome.accepted, (code, before, result.outcome)
        assert result.table.moves_made == before + 1 == result.game.moves_made, (code, before, result.table)
        game, table = result.game, result.table
        tally.moves += 1
        if tally.moves >= KILL_AFTER_MOVES:
            tally.kill.set()
    tally.finished += 1
    return code, game.moves, table


async def play_all(targets: list[str], victim: ServerProcess) -> tuple[list[Finished | None], Tally, dict[str, int]]:
    tally = Tally()

    async def killer() -> None:
        await tally.kill.wait()
        victim.process.kill()  # SIGKILL: no drain, connections cut mid-call
        tally.killed_at = time.monotonic()

    async with AsyncBigTwoClient(targets, timeout=20.0, seed=31) as client:
        await client.wait_ready(60)
        kill = asyncio.ensure_future(killer())

        async def guarded(number: int) -> Finished | None:
            try:
                return await front_end(client, number, tally)
            except BigTwoError as error:
                tally.failed[f"{type(error).__name__}: {error}"[:160]] += 1
                return None

        results = await asyncio.gather(*(guarded(n) for n in range(GAMES)))
        kill.cancel()
        counts = {
            "calls": client.calls_made,
            "retries": client.retries_made,
            "shed_retries": client.shed_retries,
            "cancelled_retries": client.cancelled_retries,
        }
    return list(results), tally, counts


def test_two_hundred_games_survive_a_burst_and_a_killed_replica(three: list[ServerProcess]) -> None:
    targets = [server.target for server in three]
    started = time.monotonic()
    burst = {}
    for mode in ("stream", "unary"):
        result = run(
            LoadConfig(
                targets=targets,
                mode=mode,
                concurrency=24,
                duration=2.0,
                refused_share=0.1,
                malformed_share=0.05,
                source="service" if mode == "unary" else "engine",  # LegalMoves too, as front ends ask
            )
        )
        burst[mode] = {
            "moves": result.moves,
            "refused": result.refused,
            "malformed": result.malformed,
            "malformed_rejected": result.malformed_rejected,
            "errors": dict(result.errors),
            "retried": dict(result.retried),
        }
        assert result.moves > 0 and result.refused > 0 and result.malformed_rejected == result.malformed
        assert "MISMATCH" not in result.errors and "MALFORMED_ACCEPTED" not in result.errors, burst

    results, tally, counts = asyncio.run(play_all(targets, three[0]))
    figures = {
        "burst": burst,
        "games_finished": tally.finished,
        "moves": tally.moves,
        "legal_moves_asked": tally.legal_asks,
        "failed": dict(tally.failed),
        "client": counts,
        "replica_killed": bool(tally.killed_at),
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(figures))
    assert tally.killed_at, f"the replica was not killed mid-way: {figures}"
    assert tally.finished == GAMES and not tally.failed, figures
    assert three[0].process.poll() is not None, "the killed replica is gone"
    assert counts["retries"] > 0, f"calls to the killed replica were retried elsewhere: {figures}"
    for outcome in results:
        assert outcome is not None
        code, moves, table = outcome
        deal = Deal.start(RULES, deal_from_code(DealCode.parse(code), RULES))
        for text in moves:  # the log replays: every move legal, each applied once, in order
            deal.do_text(deal.to_act, text)
        assert (deal.over, deal.moves_made) == (True, len(moves)), code
        assert (table.winner, list(table.scores)) == (deal.winner, list(deal.scores)), code
