"""``bigtwo tournament``: bot levels against each other on duplicate deals.

Seating. With ``k`` levels ``L[0..k-1]`` at an ``n``-seat table, every deal is played at ``k``
tables; at table ``t`` seat ``s`` is taken by level ``L[(t + s) % k]`` (the level list repeated
cyclically around the table, rotated by one per table). So every level sits in every seat exactly
once per deal with the same cards, which cancels the luck of the deal. When ``k < n`` a level can
fill more than one seat of a table (``great,good,random`` at 4 seats: ``great good random great``,
then ``good random great good``, then ``random great good random``).

Seating ``field`` (``--seating field``) measures each level the way an outside opponent is met:
alone against the last level, the field. Every deal is played once with the field in every seat,
then, for each other level and each seat, once with that level in that seat and the field in the
rest. A level's points are its seat's points at those tables, the field's are its points at the
all-field table, so a level's difference to the field is what putting it in a seat changed there,
seat for seat, the cards the same.

Points. A level's points for a deal are the mean, over every seat it held at that deal's tables,
of the seat's deal score under the ruleset: its penalty under ``penalty`` settlement (lower is
better), its zero-sum score under ``zero-sum`` (higher is better). Under ``penalty = none``
(``taiwan``) there is no score: the points are the win rate (1 for going out first, else 0;
higher is better).

Intervals. ``ci95`` is mean ± 1.96·sd/√n over the per-deal points (normal approximation, n =
deals). Differences between two levels (``--pairs``, and the table) are *paired* by deal: the
interval of the per-deal difference, which is much narrower because both levels played the same
cards.

Every deal starts fresh (deal 1 of a match: ``winner-leads`` presets open with the lowest card).
Deal codes come from ``--seed``; bots are seeded per deal, table and seat, so a run is
reproducible (except ``pro`` given ``--pro-ms``, which uses the clock).

Where the deals run changes nothing of that: in this process, in ``jobs`` local processes, or on a
Dask cluster (``dask``: batches of consecutive deals, handed out by :func:`bigtwo.tools.cluster.ordered_map`
and collected in deal order). A deal's points depend only on the seed, the deal's index and the
levels, and the results are put in deal order before anything is computed from them, so the points
per deal, the means and the intervals are the same, bit for bit, whatever ran them. Only the
decision times (``decide_ms``) are measured, not computed.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, observe
from bigtwo.engine.bots import Bot, Budget, bot_for
from bigtwo.engine.rules import Penalty, Settlement

if TYPE_CHECKING:
    import argparse

    from distributed import Client

    from .cluster import DaskTarget

# The most deals one Dask task plays. A deal of four levels takes a few ms to a few tens of ms, the
# scheduler's own cost is around a millisecond a task: 32 deals make that cost small, and are short
# enough that a lost worker's batches are cheap to redo and the progress bar moves.
DEALS_PER_BATCH = 32

BotFactory = Callable[[str, Budget | None], Bot]


def seat_levels(levels: Sequence[str], players: int, table: int) -> list[str]:
    """Who sits where at table ``table`` of a deal (see the module docstring)."""
    k = len(levels)
    return [levels[(table + seat) % k] for seat in range(players)]


class Seating(Enum):
    """How the levels share a deal's tables (see the module docstring)."""

    ROTATE = "rotate"
    FIELD = "field"


def add_seating_argument(parser: argparse.ArgumentParser, flag: str, help_text: str) -> None:
    """A command's choice of :class:`Seating` (rotate unless given)."""
    choices = [seating.value for seating in Seating]
    parser.add_argument(flag, choices=choices, default=Seating.ROTATE.value, help=help_text)


@dataclass(frozen=True, slots=True)
class Table:
    seats: tuple[str, ...]
    """The level in each seat."""
    counted: tuple[int, ...]
    """The seats whose points and decision times count for their level."""


def tables_of(levels: Sequence[str], players: int, seating: Seating) -> list[Table]:
    """Every table of one deal, in the order they are played."""
    if seating is Seating.ROTATE:
        every = tuple(range(players))
        return [Table(tuple(seat_levels(levels, players, t)), every) for t in range(len(levels))]
    field_level = levels[-1]
    tables = [Table((field_level,) * players, tuple(range(players)))]
    for level in levels[:-1]:
        for seat in range(players):
            seats = [field_level] * players
            seats[seat] = level
            tables.append(Table(tuple(seats), (seat,)))
    return tables


def deal_code(seed: int, index: int) -> DealCode:
    return DealCode(random.Random(f"bigtwo-tournament/{seed}/{index}").getrandbits(60))


def lower_is_better(ruleset: Ruleset) -> bool:
    return ruleset.penalty is not Penalty.NONE and ruleset.settlement is Settlement.PENALTY


def seat_points(ruleset: Ruleset, deal: Deal, seat: int) -> float:
    if ruleset.penalty is Penalty.NONE:
        return 1.0 if deal.winner == seat else 0.0
    return float(deal.scores[seat])


@dataclass(frozen=True, slots=True)
class Job:
    ruleset: Ruleset
    levels: tuple[str, ...]
    seed: int
    budget: Budget | None
    seating: Seating = Seating.ROTATE
    bot_factory: BotFactory = bot_for
    """Makes each seat's bot from its level name; an outside opponent (``bots_bench --against
    ppo``) passes one that knows its level too. A module-level function (or a partial of one), so
    the job pickles for Dask."""


@dataclass(slots=True)
class DealResult:
    index: int
    points: dict[str, float]
    decide_ms: dict[str, list[float]]


def play_table(job: Job, code: DealCode, seats: list[str], rng_prefix: str) -> tuple[list[float], list[list[float]]]:
    """Play one deal at one table; (points per seat, decision times in ms per seat)."""
    ruleset = job.ruleset
    deal = Deal.start(ruleset, deal_from_code(code, ruleset))
    bots = [job.bot_factory(level, job.budget) for level in seats]
    rngs = [random.Random(f"{rng_prefix}/{seat}") for seat in range(len(seats))]
    times: list[list[float]] = [[] for _ in seats]
    while not deal.over:
        seat = deal.to_act
        observation = observe(deal, seat, with_history=True)
        started = time.perf_counter()
        move = bots[seat].choose(observation, ruleset, rngs[seat])
        times[seat].append((time.perf_counter() - started) * 1000)
        deal.do(move)
    return [seat_points(ruleset, deal, seat) for seat in range(len(seats))], times


def run_deal(job: Job, index: int) -> DealResult:
    code = deal_code(job.seed, index)
    players = job.ruleset.players
    sums: dict[str, float] = {level: 0.0 for level in job.levels}
    counts: dict[str, int] = {level: 0 for level in job.levels}
    decide: dict[str, list[float]] = {level: [] for level in job.levels}
    for number, table in enumerate(tables_of(job.levels, players, job.seating)):
        seats = list(table.seats)
        points, times = play_table(job, code, seats, f"bigtwo-tournament/{job.seed}/{index}/{number}")
        for seat in table.counted:
            level = seats[seat]
            sums[level] += points[seat]
            counts[level] += 1
            decide[level].extend(times[seat])
    return DealResult(index, {level: sums[level] / counts[level] for level in job.levels if counts[level]}, decide)


_JOB: Job | None = None


def _init_worker(job: Job) -> None:
    global _JOB
    _JOB = job


def _worker(index: int) -> DealResult:
    assert _JOB is not None
    return run_deal(_JOB, index)


@dataclass(slots=True)
class TournamentResult:
    ruleset: Ruleset
    levels: tuple[str, ...]
    deals: int
    seating: Seating = Seating.ROTATE
    points: dict[str, list[float]] = field(default_factory=dict)
    """Per level, its points for each deal (deal order)."""
    decide_ms: dict[str, list[float]] = field(default_factory=dict)

    def summary(self, level: str) -> dict[str, Any]:
        values = self.points[level]
        mean, low, high = mean_ci(values)
        return {
            "mean": round(mean, 4),
            "ci95": [round(low, 4), round(high, 4)],
            "decide_ms_p95": round(p95(self.decide_ms[level]), 3),
        }

    def paired(self, a: str, b: str) -> tuple[float, float, float]:
        """Mean and 95% interval of (points of a - points of b), paired by deal."""
        return mean_ci([x - y for x, y in zip(self.points[a], self.points[b], strict=True)])

    def to_json(self, pairs: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "preset": self.ruleset.preset,
            "deals": self.deals,
            "seating": self.seating.value,
            "levels": {level: self.summary(level) for level in self.levels},
        }
        if pairs:
            rows = {}
            for i, a in enumerate(self.levels):
                for b in self.levels[i + 1 :]:
                    mean, low, high = self.paired(a, b)
                    rows[f"{a}-{b}"] = {"mean": round(mean, 4), "ci95": [round(low, 4), round(high, 4)]}
            out["pairs"] = rows
        return out


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    if not values:
        return 0.0, 0.0, 0.0
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100): a value that was measured, never an
    interpolation between two decisions."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))]


def p95(values: Sequence[float]) -> float:
    return percentile(values, 95)


def batch_size(deals: int, slots: int) -> int:
    """Deals per Dask task: about 8 tasks per worker slot (so a slow slot does not hold the end of
    the run), at most :data:`DEALS_PER_BATCH`."""
    return max(1, min(DEALS_PER_BATCH, deals // (8 * max(1, slots))))


def run_batch(work: tuple[Job, range]) -> list[DealResult]:
    """One Dask task: the deals ``indices`` of ``job``, in order."""
    job, indices = work
    return [run_deal(job, index) for index in indices]


def _deals_on(client: Client, job: Job, deals: int, progress: Callable[[int], None] | None) -> list[DealResult]:
    """Every deal on the cluster of ``client``, in deal order; ``progress(n)`` as each batch of
    ``n`` deals finishes there (a batch redone after a lost worker is counted once)."""
    from .cluster import ordered_map

    slots = max(1, sum(client.nthreads().values()))
    size = batch_size(deals, slots)
    batches = ((job, range(start, min(start + size, deals))) for start in range(0, deals, size))

    def done(batch: tuple[Job, range], answer: list[DealResult]) -> None:
        if progress is not None:
            progress(len(answer))

    # Two batches per slot in flight: a worker finds its next task waiting instead of idling for
    # a round trip to this client.
    return [result for answer in ordered_map(client, run_batch, batches, 2 * slots, done) for result in answer]


def run_tournament(
    ruleset: Ruleset,
    levels: Sequence[str],
    deals: int,
    seed: int,
    jobs: int = 1,
    budget: Budget | None = None,
    progress: Callable[[int], None] | None = None,
    dask: DaskTarget | None = None,
    client: Client | None = None,
    seating: Seating = Seating.ROTATE,
    bot_factory: BotFactory = bot_for,
) -> TournamentResult:
    """The tournament, in this process (``jobs`` 1), in ``jobs`` local processes, on the Dask
    cluster ``dask`` (started or joined here) or on the cluster of an open ``client``. The results
    are the same in every case (the module docstring says why). ``progress(n)``: ``n`` more deals done."""
    if (dask is not None or client is not None) and jobs > 1:
        raise ValueError("run on a Dask cluster or in local processes (jobs), not both")
    if seating is Seating.FIELD and len(levels) < 2:
        raise ValueError("seating field needs a level to measure and the field (the last level)")
    job = Job(ruleset, tuple(levels), seed, budget, seating, bot_factory)
    results: list[DealResult] = []
    try:
        _play_deals(job, deals, results, jobs, progress, dask, client)
    except KeyboardInterrupt:
        if not results:
            raise
        raise TournamentInterrupted(_result(ruleset, levels, results, seating)) from None
    return _result(ruleset, levels, results, seating)


class TournamentInterrupted(KeyboardInterrupt):
    """Ctrl-C during a tournament: ``result`` is over the deals finished by then."""

    def __init__(self, result: TournamentResult) -> None:
        super().__init__()
        self.result = result


def _result(ruleset: Ruleset, levels: Sequence[str], results: list[DealResult], seating: Seating) -> TournamentResult:
    results.sort(key=lambda r: r.index)
    out = TournamentResult(ruleset, tuple(levels), len(results), seating)
    for level in levels:
        out.points[level] = [r.points[level] for r in results]
        out.decide_ms[level] = [t for r in results for t in r.decide_ms[level]]
    return out


def _play_deals(
    job: Job,
    deals: int,
    results: list[DealResult],
    jobs: int,
    progress: Callable[[int], None] | None,
    dask: DaskTarget | None,
    client: Client | None,
) -> None:
    """Each deal's result appended to ``results`` as it finishes (so an interruption keeps them)."""
    if client is not None:
        results.extend(_deals_on(client, job, deals, progress))
    elif dask is not None:
        from .cluster import dask_client

        with dask_client(dask) as opened:
            results.extend(_deals_on(opened, job, deals, progress))
    elif jobs <= 1 or deals <= 1:
        for index in range(deals):
            results.append(run_deal(job, index))
            if progress:
                progress(1)
    else:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs, initializer=_init_worker, initargs=(job,)) as pool:
            for result in pool.imap_unordered(_worker, range(deals), chunksize=1):
                results.append(result)
                if progress:
                    progress(1)
