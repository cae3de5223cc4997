"""The load generator: many real deals at once from one asyncio loop (grpc.aio), optionally in
several processes.

Each game deals a deal code from a seeded generator, keeps a local engine ``Deal`` (the player's
side of the table: it knows its own cards and the public moves) to pick random legal moves (or asks
the service's ``LegalMoves``), and sends them over one ``PlayStream`` per game (``stream``) or one
``ApplyMove`` by state token per move (``unary``). The *service* judges: every answer is compared
with the local engine (accepted or refused as expected, same moves made, same winner and scores).

A share of moves is sent to be refused (a pass when leading, a card the seat does not hold, another
seat's turn) and a share of extra requests is malformed (seat out of range, no index, text over the
limit, bytes that are no message): the service must answer those with INVALID_ARGUMENT. Malformed
requests go as unary calls beside the stream (a malformed stream message ends the stream, by design).

Balancing: a gRPC channel is one HTTP/2 connection, and every call on it goes to the process that
accepted that connection. Kernels balance *connections* (SO_REUSEPORT, kube-proxy), not calls, so
the generator opens ``channels`` separate connections per target (``grpc.use_local_subchannel_pool``
stops gRPC from sharing one connection between channels with the same target) and spreads games over
them round-robin. A call failing with UNAVAILABLE marks its channel down for a moment and is retried
on the next channel; the retried call carries the same state (token, or the log for a stream that
is re-opened), so nothing is lost or applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc
from bigtwo.engine import Deal, DealCode, Refusal, Ruleset, deal_from_code, mask_text
from bigtwo.engine.generate import CARD_MASK
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from .channels import Pacer, Pool

MODES = ("stream", "unary")
SOURCES = ("engine", "service")
MALFORMED_KINDS = ("seat", "index", "text", "garbage")
CORE_ERROR = "Internal error from Core"
"""What grpc.aio raises on a stream whose connection broke under it (not a status from the server)."""
GARBAGE = b"\x0a\xff\xff\xff\xff\x0f\x01"  # field 1, length 2^32-1: truncated, no message


@dataclass
class LoadConfig:
    targets: list[str]
    mode: str = "stream"
    concurrency: int = 16
    games: int = 0
    """Stop after this many games have been started (0: no bound); they are played to the end."""
    moves: int = 0
    """Stop once this many moves were judged (0: no bound)."""
    duration: float = 10.0
    """Stop after this many seconds (0: no bound); games still open are abandoned."""
    ramp_seconds: float = 0.0
    rate: float = 0.0
    """Target moves per second over all games (0: as fast as the service answers)."""
    refused_share: float = 0.0
    malformed_share: float = 0.0
    channels: int = 2
    """Connections per target."""
    preset: str = "classic"
    options: dict[str, str] = field(default_factory=dict)
    """Rule options over the preset, as the API's ``Ruleset.options`` (``--ruleset``, ``-o``)."""
    seed: int = 1
    source: str = "engine"
    verify: bool = True
    """Compare every answer with the local engine (off against a no-op server)."""
    call_timeout: float = 10.0
    retries: int = 6
    auth_token: str = ""
    keep_games: bool = False
    """Keep each finished game's moves and result (the fault tests replay them)."""
    first_game: int = 0
    """Game numbers start here (processes take disjoint ranges)."""


@dataclass
class GameRecord:
    number: int
    code: str
    moves: list[str]
    seats: list[int]
    winner: int
    scores: list[int]
    retries: int
    targets: list[str]


@dataclass
class LoadResult:
    config: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    moves: int = 0
    accepted: int = 0
    refused: int = 0
    malformed: int = 0
    malformed_rejected: int = 0
    games_started: int = 0
    games_finished: int = 0
    games_abandoned: int = 0
    games_failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    retried: Counter[str] = field(default_factory=Counter)
    calls_by_target: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    """Seconds per judged move (accepted or refused), as the client saw them."""
    times: list[float] = field(default_factory=list)
    """When each of those moves was answered (monotonic clock)."""
    retry_times: list[float] = field(default_factory=list)
    started_at: float = 0.0
    games: list[GameRecord] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)
    """The first few unexpected errors in full (status, details, where)."""
    interrupted: bool = False
    """Stopped early by Ctrl-C: the figures are those measured until then."""

    def merge(self, other: LoadResult) -> None:
        for name in (
            "moves",
            "accepted",
            "refused",
            "malformed",
            "malformed_rejected",
            "games_started",
            "games_finished",
            "games_abandoned",
            "games_failed",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.update(other.errors)
        self.retried.update(other.retried)
        self.calls_by_target.update(other.calls_by_target)
        self.latencies.extend(other.latencies)
        self.times.extend(other.times)
        self.retry_times.extend(other.retry_times)
        self.games.extend(other.games)
        self.error_samples.extend(other.error_samples[: max(0, 10 - len(self.error_samples))])
        self.interrupted = self.interrupted or other.interrupted
        ends = [r.started_at + r.seconds for r in (self, other) if r.started_at]
        self.started_at = min(r.started_at for r in (self, other) if r.started_at)
        self.seconds = max(ends) - self.started_at  # from the first start to the last end

    def snapshot(self) -> tuple[int, int, int, int, int, int]:
        return (
            self.moves,
            self.refused,
            sum(self.errors.values()),
            self.games_finished,
            sum(self.retried.values()),
            self.games_started - self.games_finished - self.games_abandoned - self.games_failed,
        )


class GameFailed(Exception):
    """A game ended by an error that is not retried (counted in errors)."""


# -- one game --------------------------------------------------------------------------------------


@dataclass
class GameState:
    number: int
    rng: random.Random
    code: DealCode
    deal: Deal
    slot: int
    moves: list[str] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    token: bytes = b""
    retries: int = 0
    targets: list[str] = field(default_factory=list)


def refused_move(deal: Deal, rng: random.Random) -> tuple[int, str]:
    """A move the rules refuse: a pass when leading, a card the seat does not hold, another seat's turn."""
    seat = deal.to_act
    options: list[tuple[int, str]] = []
    if deal.leading:
        options.append((seat, "pass"))
    other = (seat + 1) % deal.players
    if deal.hands[other]:
        low = deal.hands[other] & -deal.hands[other]
        options.append((seat, mask_text(low)))  # not-in-hand
        options.append((other, mask_text(low)))  # not-your-turn
    for seat_choice, text in rng.sample(options, len(options)):
        try:
            deal.verify_text(seat_choice, text)
        except Refusal:
            return seat_choice, text
    raise AssertionError("no refused move found")  # pragma: no cover - a live deal always has one


def random_legal(deal: Deal, rng: random.Random) -> str:
    plays = deal.legal_encoded()
    can_pass = deal.table is not None
    pick = rng.randrange(len(plays) + (1 if can_pass else 0))
    if pick == len(plays):
        return "pass"
    return mask_text(plays[pick] & CARD_MASK)


class Generator:
    def __init__(
        self,
        cfg: LoadConfig,
        result: LoadResult,
        on_tick: Callable[[LoadResult], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self.cfg = cfg
        self.on_tick = on_tick
        self.stop = stop
        """Asked at each tick: True interrupts the run (a generator process told to stop)."""
        self.tasks: list[asyncio.Future[Any]] = []
        self.result = result
        self.rules: Ruleset = Ruleset.from_mapping({**cfg.options, "preset": cfg.preset})
        self.ruleset_pb = pb.Ruleset(preset=cfg.preset, options=cfg.options)
        self.pool = Pool(cfg.targets, cfg.channels)
        self.pacer = Pacer(cfg.rate)
        self.metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {cfg.auth_token}"),) if cfg.auth_token else ()
        )
        self.next_game = cfg.first_game
        self.stopping = False
        self.deadline = 0.0

    # -- bounds --

    def should_stop(self) -> bool:
        if self.stopping:
            return True
        cfg = self.cfg
        if (cfg.moves and self.result.moves >= cfg.moves) or (self.deadline and time.monotonic() >= self.deadline):
            self.stopping = True
        return self.stopping

    def claim_game(self) -> int | None:
        cfg = self.cfg
        if self.should_stop():
            return None
        if cfg.games and self.result.games_started >= cfg.games:
            return None
        number = self.next_game
        self.next_game += 1
        self.result.games_started += 1
        return number

    # -- bookkeeping --

    def _judged(self, started: float, accepted: bool) -> None:
        now = time.monotonic()
        result = self.result
        result.latencies.append(now - started)
        result.times.append(now)
        result.moves += 1
        if accepted:
            result.accepted += 1
        else:
            result.refused += 1

    def _retry(self, game: GameState, error: grpc.aio.AioRpcError) -> bool:
        """True when the call is retried on another channel."""
        code = error.code()
        if code is not grpc.StatusCode.UNAVAILABLE or game.retries >= self.cfg.retries * 4:
            return False
        self.result.retried[code.name] += 1
        self.result.retry_times.append(time.monotonic())
        self.pool.mark_down(game.slot)
        game.retries += 1
        game.slot = self.pool.pick(game.slot + 1)
        return True

    def _mismatch(self, what: str) -> GameFailed:
        self.result.errors["MISMATCH"] += 1
        return GameFailed(what)

    # -- unary calls with retries --

    async def _unary(self, game: GameState, method: str, request: Any) -> Any:
        attempt = 0
        while True:
            slot = self.pool.slots[game.slot]
            self.result.calls_by_target[slot.target] += 1
            try:
                return await getattr(slot.stub, method)(
                    request, timeout=self.cfg.call_timeout, metadata=self.metadata or None
                )
            except grpc.aio.AioRpcError as error:
                attempt += 1
                if attempt <= self.cfg.retries and self._retry(game, error):
                    await asyncio.sleep(0 if attempt == 1 else min(0.5, 0.025 * 2**attempt))
                    continue
                raise

    def _log(self, game: GameState) -> pb.Game:
        return pb.Game(log=pb.GameLog(ruleset=self.ruleset_pb, deal_code=str(game.code), moves=game.moves))

    def _game_ref(self, game: GameState) -> pb.Game:
        return pb.Game(state_token=game.token) if game.token else self._log(game)

    async def _choose(self, game: GameState) -> tuple[int, str, bool]:
        """(seat, text, expected accepted) for the next move."""
        deal, rng = game.deal, game.rng
        if self.cfg.refused_share and rng.random() < self.cfg.refused_share:
            seat, text = refused_move(deal, rng)
            return seat, text, False
        if self.cfg.source == "service":
            reply = await self._unary(game, "LegalMoves", api.LegalMovesRequest(game=self._game_ref(game)))
            texts = [play.cards.text for play in reply.plays] + (["pass"] if reply.can_pass else [])
            if self.cfg.verify and (len(texts) != len(deal.legal_encoded()) + (deal.table is not None)):
                raise self._mismatch("LegalMoves differs from the engine")
            return deal.to_act, rng.choice(texts), True
        return deal.to_act, random_legal(deal, rng), True

    async def _malformed(self, game: GameState) -> None:
        """One malformed request beside the game: the service must say INVALID_ARGUMENT."""
        kind = game.rng.choice(MALFORMED_KINDS)
        deal = game.deal
        move = pb.Move(index=deal.moves_made, seat=deal.to_act, text="pass")
        if kind == "seat":
            move.seat = deal.players + 3
        elif kind == "index":
            move.ClearField("index")
        elif kind == "text":
            move.text = "3D " * 120
        request = api.ApplyMoveRequest(game=self._game_ref(game), move=move)
        self.result.malformed += 1
        slot = self.pool.slots[game.slot]
        try:
            if kind == "garbage":
                await slot.raw_apply(GARBAGE, timeout=self.cfg.call_timeout, metadata=self.metadata or None)
            else:
                await slot.stub.ApplyMove(request, timeout=self.cfg.call_timeout, metadata=self.metadata or None)
        except grpc.aio.AioRpcError as error:
            if error.code() is grpc.StatusCode.INVALID_ARGUMENT:
                self.result.malformed_rejected += 1
            elif error.code() is grpc.StatusCode.UNAVAILABLE:
                self.result.retried["UNAVAILABLE"] += 1  # not retried: it was garbage anyway
                self.result.retry_times.append(time.monotonic())
                self.pool.mark_down(game.slot)
            else:
                self.result.errors[f"malformed:{error.code().name}"] += 1
            return
        if self.cfg.verify:
            self.result.errors["MALFORMED_ACCEPTED"] += 1

    def _settle(self, game: GameState, seat: int, text: str, expected: bool, accepted: bool, table: Any) -> None:
        """Compare the service's answer with the engine's, then make the move locally."""
        deal = game.deal
        if self.cfg.verify and accepted != expected:
            raise self._mismatch(f"move {deal.moves_made}: accepted={accepted}, expected {expected}")
        if expected:
            deal.do_text(seat, text)
            game.moves.append(text)
            game.seats.append(seat)
        if not self.cfg.verify:
            return
        if table.moves_made != deal.moves_made or table.over != deal.over:
            raise self._mismatch(f"table after move {deal.moves_made} differs")
        if table.over and (table.winner != deal.winner or list(table.scores) != list(deal.scores)):
            raise self._mismatch("result differs")

    # -- the two transports --

    async def _play_unary(self, game: GameState) -> None:
        cfg = self.cfg
        dealt = await self._unary(game, "Deal", api.DealRequest(ruleset=self.ruleset_pb, deal_code=str(game.code)))
        game.token = dealt.state_token
        while not game.deal.over:
            if self.should_stop():
                raise asyncio.CancelledError
            if cfg.malformed_share and game.rng.random() < cfg.malformed_share:
                await self._malformed(game)
            seat, text, expected = await self._choose(game)
            await self.pacer.wait()
            request = api.ApplyMoveRequest(
                game=pb.Game(state_token=game.token),
                move=pb.Move(index=game.deal.moves_made, seat=seat, text=text),
            )
            started = time.monotonic()
            reply = await self._unary(game, "ApplyMove", request)
            self._judged(started, reply.outcome.accepted)
            self._settle(game, seat, text, expected, reply.outcome.accepted, reply.table)
            game.token = reply.state_token

    async def _open_stream(self, game: GameState) -> Any:
        while True:
            slot = self.pool.slots[game.slot]
            self.result.calls_by_target[slot.target] += 1
            game.targets.append(slot.target)
            call = slot.stub.PlayStream(metadata=self.metadata or None)
            try:
                opening = api.StreamOpen(game=self._log(game))
                await call.write(api.PlayStreamRequest(open=opening))
                reply = await asyncio.wait_for(call.read(), self.cfg.call_timeout)
                if reply is grpc.aio.EOF:
                    await self._stream_status(call)
                if self.cfg.verify and reply.opened.table.moves_made != game.deal.moves_made:
                    raise self._mismatch("re-opened stream holds another number of moves")
                return call
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as failure:
                error = await self._stream_failure(call, failure)
                call.cancel()
                if self._retry(game, error):
                    await asyncio.sleep(0.01)
                    continue
                raise error from None

    @staticmethod
    async def _stream_failure(call: Any, failure: BaseException) -> grpc.aio.AioRpcError:
        """The status that ended a stream. A write on a stream whose connection just died raises
        INTERNAL ("Internal error from Core") or InvalidStateError in grpc.aio; the call's own final
        status says what happened (UNAVAILABLE when the replica went away)."""
        if isinstance(failure, grpc.aio.AioRpcError) and failure.code() is not grpc.StatusCode.INTERNAL:
            return failure
        if isinstance(failure, grpc.aio.AioRpcError) and failure.details() != CORE_ERROR:
            return failure  # a real INTERNAL from the service
        try:
            code = await asyncio.wait_for(call.code(), 2.0)
            details = await call.details()
        except (TimeoutError, asyncio.CancelledError):
            code, details = grpc.StatusCode.UNAVAILABLE, f"stream broken: {failure}"
        if code is grpc.StatusCode.OK or (code is grpc.StatusCode.INTERNAL and details == CORE_ERROR):
            code = grpc.StatusCode.UNAVAILABLE  # the client's own transport failure, not the server's
        return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)

    async def _stream_status(self, call: Any) -> None:
        code = await call.code()
        raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), await call.details())

    async def _play_stream(self, game: GameState) -> None:
        cfg = self.cfg
        call = await self._open_stream(game)
        try:
            while not game.deal.over:
                if self.should_stop():
                    raise asyncio.CancelledError
                if cfg.malformed_share and game.rng.random() < cfg.malformed_share:
                    await self._malformed(game)
                seat, text, expected = await self._choose(game)
                await self.pacer.wait()
                request = api.PlayStreamRequest(
                    move=api.StreamMove(move=pb.Move(index=game.deal.moves_made, seat=seat, text=text))
                )
                started = time.monotonic()
                try:
                    await call.write(request)
                    reply = await asyncio.wait_for(call.read(), cfg.call_timeout)
                    if reply is grpc.aio.EOF:
                        await self._stream_status(call)
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as failure:
                    error = await self._stream_failure(call, failure)
                    call.cancel()
                    if not self._retry(game, error):
                        raise error from None
                    call = await self._open_stream(game)  # the log of accepted moves; then resend
                    continue
                result = reply.move_result
                self._judged(started, result.outcome.accepted)
                self._settle(game, seat, text, expected, result.outcome.accepted, result.table)
            # The deal is over and checked: a replica dying now loses nothing.
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError, TimeoutError):
                await call.done_writing()
                await asyncio.wait_for(call.code(), cfg.call_timeout)
        finally:
            if not call.done():
                call.cancel()

    # -- the workers --

    async def play_one(self, number: int, slot: int) -> None:
        rng = random.Random(self.cfg.seed * 1_000_003 + number)
        code = DealCode.from_entropy(rng.randbytes(16))
        deal = Deal.start(self.rules, deal_from_code(code, self.rules))
        game = GameState(number, rng, code, deal, self.pool.pick(slot))
        try:
            if self.cfg.mode == "unary":
                await self._play_unary(game)
            else:
                await self._play_stream(game)
        except asyncio.CancelledError:
            self.result.games_abandoned += 1
            return
        except GameFailed:
            self.result.games_failed += 1
            return
        except grpc.aio.AioRpcError as error:
            self.result.errors[error.code().name] += 1
            self.result.games_failed += 1
            if len(self.result.error_samples) < 10:
                where = f"game {number} move {deal.moves_made} on {self.pool.slots[game.slot].target}"
                self.result.error_samples.append(f"{error.code().name}: {error.details()} ({where})")
            return
        except TimeoutError:
            self.result.errors["DEADLINE_EXCEEDED"] += 1
            self.result.games_failed += 1
            return
        self.result.games_finished += 1
        if self.cfg.keep_games:
            self.result.games.append(
                GameRecord(
                    number,
                    str(code),
                    list(game.moves),
                    list(game.seats),
                    deal.winner,
                    list(deal.scores),
                    game.retries,
                    game.targets,
                )
            )

    async def worker(self, index: int) -> None:
        cfg = self.cfg
        if cfg.ramp_seconds and cfg.concurrency > 1:
            await asyncio.sleep(cfg.ramp_seconds * index / cfg.concurrency)
        slot = index
        while (number := self.claim_game()) is not None:
            await self.play_one(number, slot)
            slot += cfg.concurrency

    async def run(self) -> LoadResult:
        cfg = self.cfg
        result = self.result
        result.config = asdict(cfg)
        result.started_at = result.started_at or time.monotonic()  # a caller may start the clock first
        if cfg.duration:
            self.deadline = result.started_at + cfg.duration
        ticker = asyncio.ensure_future(self._tick()) if self.on_tick or self.stop else None
        self.tasks = [asyncio.ensure_future(self.worker(i)) for i in range(cfg.concurrency)]
        loop = asyncio.get_running_loop()
        try:  # Ctrl-C ends the run now, with the figures so far (only the main thread gets signals)
            loop.add_signal_handler(signal.SIGINT, self.interrupt)
            handles_sigint = True
        except (RuntimeError, ValueError, NotImplementedError):
            handles_sigint = False
        try:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        finally:
            if handles_sigint:
                loop.remove_signal_handler(signal.SIGINT)
            result.seconds = time.monotonic() - result.started_at
            if ticker:
                ticker.cancel()
            await self.pool.close()
        if self.on_tick:
            self.on_tick(result)
        return result

    def interrupt(self) -> None:
        """Stop at once: no game is started again, and those in flight are abandoned, their calls
        cancelled (a game checks the bound only between moves, and a call may wait its timeout)."""
        self.result.interrupted = self.stopping = True
        for task in self.tasks:
            task.cancel()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.25)
            if self.on_tick:
                self.on_tick(self.result)
            if self.stop and self.stop() and not self.result.interrupted:
                self.interrupt()


async def run_async(
    cfg: LoadConfig,
    result: LoadResult | None = None,
    on_tick: Callable[[LoadResult], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> LoadResult:
    return await Generator(cfg, result or LoadResult(), on_tick, stop).run()


def run(
    cfg: LoadConfig,
    result: LoadResult | None = None,
    on_tick: Callable[[LoadResult], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> LoadResult:
    """Run a load in this process (uvloop when available); Ctrl-C (or ``stop()`` turning True)
    ends it early with the figures measured so far (``result.interrupted``)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        return asyncio.run(run_async(cfg, result, on_tick, stop))
    return uvloop.run(run_async(cfg, result, on_tick, stop))
