"""The ``bigtwo loadtest`` scenario from Locust workers, for loads larger than one machine makes.

Each Locust user plays whole real deals: random legal moves picked by the local engine, a share
sent to be refused, a share of malformed requests beside the game (which must be answered
INVALID_ARGUMENT), over ApplyMove by state token (``BIGTWO_MODE=unary``, the default) or one
PlayStream per deal (``BIGTWO_MODE=stream``). Every answer is checked against the engine: a move
accepted or refused unexpectedly, or a final result that differs, is a Locust failure.

gRPC under Locust: Locust runs users as gevent greenlets, and gRPC's C core blocks the whole
process unless told about gevent, so ``grpc.experimental.gevent.init_gevent()`` runs first, before
any channel exists. Install with ``pip install -e '.[load]'``.

    # one machine, headless, 50 users for 60 s against three local replicas
    BIGTWO_TARGETS=127.0.0.1:50051,127.0.0.1:50052,127.0.0.1:50053 \\
      locust -f deploy/locust/locustfile.py --headless -u 50 -r 10 -t 60s
    # distributed: one master, N workers (each worker one process; run as many as cores)
    locust -f deploy/locust/locustfile.py --master --expect-workers 4
    BIGTWO_TARGETS=... locust -f deploy/locust/locustfile.py --worker --master-host MASTER_ADDRESS

Environment: BIGTWO_TARGETS (comma-separated HOST:PORT or dns:///NAME:PORT; default: Locust's --host,
else 127.0.0.1:50051), BIGTWO_MODE (unary|stream), BIGTWO_PRESET (classic), BIGTWO_REFUSED_SHARE
(0.05), BIGTWO_MALFORMED_SHARE (0.0), BIGTWO_CHANNELS (connections per target per user, 1),
BIGTWO_AUTH_TOKEN, BIGTWO_TLS_CA (a PEM CA file: connect with TLS and verify the server against it),
BIGTWO_SERVER_NAME (the name the certificate must hold, when it is not the target's host),
BIGTWO_SEED (repeatable deals; default: fresh entropy). Each user opens its own connections, so
users spread over replicas the way real front ends do (the kernel balances connections, not calls).
A target naming several addresses (a headless Service's DNS name: one address per ready pod) is
balanced per call (the round_robin policy).

Distributed runs: each user's generator is seeded from (BIGTWO_SEED, the worker's index, the user's
number). The master numbers its workers 0..N-1, so no two users anywhere play the same deals; a
seed from the process id would not do, since containers' processes often share one (pid 1).

gRPC's gevent threads: under gevent every wait of gRPC's sync API for its completion queue runs in
the hub's thread pool (10 threads unless told), and a channel with a stream open keeps one of those
threads for as long as the stream is open, waiting for its next event. With more users in a worker
than threads, the open streams of users that were themselves waiting for a thread (a malformed
request sent beside the stream is a blocking call) held every thread: the worker froze with no
request sent (issue 31; ``tests/test_locust_distributed.py`` reproduces it). Each user therefore
widens the pool by the most threads it can hold at once (:data:`THREADS_PER_USER`).

A run that sends nothing fails: the master (or a local run) exits 1, with the reason logged, when
the run made fewer requests than ``--min-requests`` (BIGTWO_MIN_REQUESTS), or than
BIGTWO_MIN_RATE_PER_USER (default 1) per user and second after the ramp when no count is given,
when no request was answered in the last BIGTWO_STALL_SECONDS (default 10, at most half the run),
or when a worker went missing or sent no request in that window (:class:`RunGuard`).
"""

from __future__ import annotations

import grpc.experimental.gevent as grpc_gevent

grpc_gevent.init_gevent()  # before any other grpc use

import itertools  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import grpc  # noqa: E402
from bigtwo.engine import Deal, DealCode, deal_from_code, preset  # noqa: E402
from bigtwo.tools.loadtest.generator import GARBAGE, random_legal, refused_move  # noqa: E402
from bigtwo.v1 import service_pb2 as api  # noqa: E402
from bigtwo.v1 import service_pb2_grpc as rpc  # noqa: E402
from bigtwo.v1 import types_pb2 as pb  # noqa: E402
from locust import User, between, events, task  # noqa: E402
from locust.runners import STATE_MISSING, MasterRunner, WorkerRunner  # noqa: E402

MODE = os.environ.get("BIGTWO_MODE", "unary")
PRESET = os.environ.get("BIGTWO_PRESET", "classic")
REFUSED_SHARE = float(os.environ.get("BIGTWO_REFUSED_SHARE", "0.05"))
MALFORMED_SHARE = float(os.environ.get("BIGTWO_MALFORMED_SHARE", "0.0"))
CHANNELS = int(os.environ.get("BIGTWO_CHANNELS", "1"))
AUTH = os.environ.get("BIGTWO_AUTH_TOKEN", "")
TLS_CA = os.environ.get("BIGTWO_TLS_CA", "")
SERVER_NAME = os.environ.get("BIGTWO_SERVER_NAME", "")
SEED = os.environ.get("BIGTWO_SEED", "")
# One address: the same as pick_first. Several (a headless Service): a connection to each, calls spread.
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
MIN_RATE_PER_USER = float(os.environ.get("BIGTWO_MIN_RATE_PER_USER", "1"))
STALL_SECONDS = float(os.environ.get("BIGTWO_STALL_SECONDS", "10"))
TIMEOUT = 10.0
THREADS_BASE = 10
"""gevent's own default: gRPC's callback loop and name lookups take their threads from it too."""
THREADS_PER_USER = 3
"""The most gRPC completion-queue waits one user holds at once: the open stream's channel, one
blocking call beside it, and the channel of the stream it just cancelled until that call ends."""
_LOG = logging.getLogger("bigtwo.locust")
_user_numbers = itertools.count()
_live_users = 0


def _widen_thread_pool(users: int) -> None:
    """Let gRPC's waits of ``users`` users all hold a thread of the hub's pool at once (never
    shrinks; an idle thread costs a stack and nothing else)."""
    pool = gevent.get_hub().threadpool
    wanted = THREADS_BASE + THREADS_PER_USER * users
    if pool.maxsize < wanted:
        pool.maxsize = wanted


class Mismatch(Exception):
    """The service answered differently from the engine."""


class _Feed:
    """The request side of a bidirectional stream (gevent-friendly: Locust patches queue)."""

    def __init__(self) -> None:
        self.items: queue.Queue[Any] = queue.Queue()

    def __iter__(self) -> Iterator[Any]:
        while (item := self.items.get()) is not None:
            yield item


class BigTwoUser(User):
    wait_time = between(0.0, 0.05)

    def on_start(self) -> None:
        global _live_users
        _live_users += 1
        _widen_thread_pool(_live_users)
        raw = os.environ.get("BIGTWO_TARGETS") or self.host or "127.0.0.1:50051"
        self.targets = [t.strip().removeprefix("http://") for t in raw.split(",") if t.strip()]
        self.channels = [self._channel(target) for _ in range(CHANNELS) for target in self.targets]
        self.stubs = [rpc.BigTwoServiceStub(channel) for channel in self.channels]
        self.raw_apply: list[grpc.UnaryUnaryMultiCallable[bytes, bytes]] = [
            channel.unary_unary("/bigtwo.v1.BigTwoService/ApplyMove") for channel in self.channels
        ]
        self.number = next(_user_numbers)
        self.rng = self._generator()
        self.rules = preset(PRESET)
        self.metadata = (("authorization", f"Bearer {AUTH}"),) if AUTH else None
        self.turn = self.number

    def _channel(self, target: str) -> grpc.Channel:
        options: list[tuple[str, Any]] = [
            ("grpc.use_local_subchannel_pool", 1),
            ("grpc.enable_retries", 0),
            ("grpc.service_config", ROUND_ROBIN),
        ]
        if not TLS_CA:
            return grpc.insecure_channel(target, options=options)
        with open(TLS_CA, "rb") as file:
            credentials = grpc.ssl_channel_credentials(root_certificates=file.read())
        if SERVER_NAME:
            options.append(("grpc.ssl_target_name_override", SERVER_NAME))
        return grpc.secure_channel(target, credentials, options=options)

    def _generator(self) -> random.Random:
        """This user's deals and moves: from (BIGTWO_SEED, worker index, user number) when a seed is
        given, so a run repeats; else from fresh entropy. A local run is worker 0."""
        if not SEED:
            return random.Random(os.urandom(16))
        worker = getattr(self.environment.runner, "worker_index", 0)
        return random.Random(f"{SEED}/{worker}/{self.number}")

    def on_stop(self) -> None:
        global _live_users
        _live_users -= 1
        for channel in self.channels:
            channel.close()

    # -- reporting -----------------------------------------------------------------------------------

    def _record(self, name: str, started: float, exception: BaseException | None = None, length: int = 0) -> None:
        self.environment.events.request.fire(
            request_type="grpc",
            name=name,
            response_time=(time.perf_counter() - started) * 1000,
            response_length=length,
            exception=exception,
            context={},
        )

    def _slot(self) -> int:
        self.turn += 1
        return self.turn % len(self.stubs)

    # -- the scenario ------------------------------------------------------------------------------

    def _next_move(self, deal: Deal) -> tuple[int, str, bool]:
        if REFUSED_SHARE and self.rng.random() < REFUSED_SHARE:
            seat, text = refused_move(deal, self.rng)
            return seat, text, False
        return deal.to_act, random_legal(deal, self.rng), True

    def _malformed(self, deal: Deal) -> None:
        slot = self._slot()
        started = time.perf_counter()
        kind = self.rng.choice(("seat", "garbage"))
        try:
            if kind == "garbage":
                self.raw_apply[slot](GARBAGE, timeout=TIMEOUT, metadata=self.metadata)
            else:
                move = pb.Move(index=deal.moves_made, seat=deal.players + 3, text="pass")
                self.stubs[slot].ApplyMove(api.ApplyMoveRequest(move=move), timeout=TIMEOUT, metadata=self.metadata)
        except grpc.RpcError as error:
            expected = error.code() is grpc.StatusCode.INVALID_ARGUMENT
            self._record("malformed", started, None if expected else error)
            return
        self._record("malformed", started, Mismatch("a malformed request was answered OK"))

    def _check(self, deal: Deal, accepted: bool, expected: bool, table: Any) -> None:
        if accepted != expected:
            raise Mismatch(f"move {deal.moves_made}: accepted={accepted}, expected {expected}")
        if table.moves_made != deal.moves_made or table.over != deal.over:
            raise Mismatch("table differs from the engine")
        if table.over and (table.winner != deal.winner or list(table.scores) != list(deal.scores)):
            raise Mismatch("result differs from the engine")

    @task
    def play_a_deal(self) -> None:
        code = DealCode.from_entropy(self.rng.randbytes(16))
        deal = Deal.start(self.rules, deal_from_code(code, self.rules))
        ruleset = pb.Ruleset(preset=PRESET)
        if MODE == "stream":
            self._play_stream(deal, str(code), ruleset)
        else:
            self._play_unary(deal, str(code), ruleset)

    def _play_unary(self, deal: Deal, code: str, ruleset: pb.Ruleset) -> None:
        started = time.perf_counter()
        try:
            dealt = self.stubs[self._slot()].Deal(
                api.DealRequest(ruleset=ruleset, deal_code=code), timeout=TIMEOUT, metadata=self.metadata
            )
        except grpc.RpcError as error:
            self._record("Deal", started, error)
            return
        self._record("Deal", started)
        token = dealt.state_token
        while not deal.over:
            if MALFORMED_SHARE and self.rng.random() < MALFORMED_SHARE:
                self._malformed(deal)
            seat, text, expected = self._next_move(deal)
            request = api.ApplyMoveRequest(
                game=pb.Game(state_token=token), move=pb.Move(index=deal.moves_made, seat=seat, text=text)
            )
            started = time.perf_counter()
            try:
                reply = self.stubs[self._slot()].ApplyMove(request, timeout=TIMEOUT, metadata=self.metadata)
                if expected:
                    deal.do_text(seat, text)
                self._check(deal, reply.outcome.accepted, expected, reply.table)
            except (grpc.RpcError, Mismatch) as error:
                self._record("ApplyMove", started, error)
                return
            self._record("ApplyMove" if expected else "ApplyMove (refused)", started, length=reply.ByteSize())
            token = reply.state_token

    def _play_stream(self, deal: Deal, code: str, ruleset: pb.Ruleset) -> None:
        feed = _Feed()
        log = pb.GameLog(ruleset=ruleset, deal_code=code)
        feed.items.put(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
        started = time.perf_counter()
        responses = self.stubs[self._slot()].PlayStream(iter(feed), timeout=600, metadata=self.metadata)
        try:
            next(responses)
            self._record("PlayStream open", started)
            while not deal.over:
                if MALFORMED_SHARE and self.rng.random() < MALFORMED_SHARE:
                    self._malformed(deal)
                seat, text, expected = self._next_move(deal)
                started = time.perf_counter()
                feed.items.put(
                    api.PlayStreamRequest(
                        move=api.StreamMove(move=pb.Move(index=deal.moves_made, seat=seat, text=text))
                    )
                )
                try:
                    result = next(responses).move_result
                    if expected:
                        deal.do_text(seat, text)
                    self._check(deal, result.outcome.accepted, expected, result.table)
                except (grpc.RpcError, Mismatch, StopIteration) as error:
                    self._record("PlayStream move", started, error)
                    return
                self._record("PlayStream move" if expected else "PlayStream move (refused)", started)
        except grpc.RpcError as error:
            self._record("PlayStream open", started, error)
        finally:
            feed.items.put(None)
            responses.cancel()


# -- a run that sends nothing fails ----------------------------------------------------------------


class RunGuard:
    """On the master (or a local run): samples the request count each second and, per worker, the
    last report that carried requests; at the end, sets exit code 1 and logs why when the run made
    far fewer requests than expected, stalled, or lost a worker."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment
        self.started = 0.0
        self.ended = 0.0
        self.last_growth = 0.0
        self.seen = 0
        self.users = 0
        self.workers: dict[str, float] = {}
        """Worker id -> when its last report with requests arrived (0: none yet)."""
        self.sampler: Any = None

    def on_test_start(self, **_: Any) -> None:
        self.started = self.last_growth = time.monotonic()
        self.sampler = gevent.spawn(self._sample)

    def _sample(self) -> None:
        while True:
            gevent.sleep(1.0)
            self._observe()

    def _observe(self) -> None:
        runner = self.environment.runner
        self.users = max(self.users, int(getattr(runner, "user_count", 0) or 0))
        count = self.environment.stats.total.num_requests
        if count > self.seen:
            self.seen, self.last_growth = count, time.monotonic()

    def on_worker_connect(self, client_id: str, **_: Any) -> None:
        self.workers.setdefault(client_id, 0.0)

    def on_worker_report(self, client_id: str, data: dict[str, Any], **_: Any) -> None:
        self.workers.setdefault(client_id, 0.0)
        if data.get("stats_total", {}).get("num_requests", 0):
            self.workers[client_id] = time.monotonic()

    def on_test_stop(self, **_: Any) -> None:
        if self.started and not self.ended:
            self._observe()
            self.ended = time.monotonic()
            if self.sampler is not None:
                self.sampler.kill(block=False)

    def problems(self) -> list[str]:
        """Why this run must not pass (empty: it may)."""
        if not self.started:
            return []
        self.on_test_stop()
        options = self.environment.parsed_options
        seconds = self.ended - self.started
        users = max(self.users, int(getattr(options, "num_users", 0) or 0))
        rate = float(getattr(options, "spawn_rate", 0) or 0) or float(users or 1)
        ramp = users / rate
        asked = int(getattr(options, "min_requests", 0) or 0)
        expected = asked or int(MIN_RATE_PER_USER * users * max(0.0, seconds - ramp))
        made = self.environment.stats.total.num_requests
        out = []
        if made < expected:
            basis = "--min-requests" if asked else f"{MIN_RATE_PER_USER:g}/s per user for {seconds - ramp:.0f} s"
            out.append(f"the run made {made} requests, fewer than the {expected} expected ({basis})")
        window = min(STALL_SECONDS, seconds / 2)
        if made and self.ended - self.last_growth > window:
            out.append(f"no request answered in the last {self.ended - self.last_growth:.1f} s of the run")
        runner = self.environment.runner
        if isinstance(runner, MasterRunner):
            for client_id, last in sorted(self.workers.items()):
                client = runner.clients.get(client_id)
                if client is not None and client.state == STATE_MISSING:
                    out.append(f"worker {client_id} stopped sending heartbeats")
                elif not last:
                    out.append(f"worker {client_id} reported no request")
                elif self.ended - last > max(window, 6.0):  # workers report every 3 s
                    out.append(f"worker {client_id} reported no request in the last {self.ended - last:.1f} s")
        return out

    def on_quitting(self, environment: Any, **_: Any) -> None:
        problems = self.problems()
        for problem in problems:
            _LOG.error("run failed: %s", problem)
        if problems and environment.process_exit_code in (None, 0):
            environment.process_exit_code = 1


@events.init_command_line_parser.add_listener
def _arguments(parser: Any) -> None:
    parser.add_argument(
        "--min-requests",
        type=int,
        env_var="BIGTWO_MIN_REQUESTS",
        default=0,
        help="exit 1 when the run made fewer requests (0: BIGTWO_MIN_RATE_PER_USER per user-second)",
    )


@events.init.add_listener
def _guard(environment: Any, **_: Any) -> None:
    if isinstance(environment.runner, WorkerRunner):
        return  # the master judges the run from every worker's reports
    guard = RunGuard(environment)
    environment.events.test_start.add_listener(guard.on_test_start)
    environment.events.test_stop.add_listener(guard.on_test_stop)
    environment.events.worker_connect.add_listener(guard.on_worker_connect)
    environment.events.worker_report.add_listener(guard.on_worker_report)
    environment.events.quitting.add_listener(guard.on_quitting)
