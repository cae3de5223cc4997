"""Fuzz a running Big Two server from outside, knowing only its proto (``make fuzz``).

    python tests/fuzz/fuzz_service.py --requests 60000 --seed 1 --mode both --seconds 360

For each server mode it starts ``bigtwo serve`` itself (fresh signing key, a home in a temporary
folder), waits for health, learns valid requests from the server's answers (:mod:`fuzz.corpus`),
then sends generated requests to every RPC of ``bigtwo.v1.BigTwoService``, the 15 unary ones and
PlayStream, each with a deadline and from several concurrent callers:

* random bytes, and valid requests mutated at the byte level (:mod:`fuzz.mutate`), sent as raw
  bytes so nothing on the client side cleans them up;
* messages filled from the proto's descriptors with hostile values;
* hostile but well-formed requests (:mod:`fuzz.hostile`): huge and odd strings, out-of-range seats
  and indices, real and tampered state tokens, edited logs, impossible deals, 52-card hands,
  maximal bot budgets, huge match totals, replay texts built to hurt a TOML reader;
* PlayStream conversations: edited, opened twice, moves before the open, resends, floods;
* calls the client gives up on (a tiny deadline, a stream cancelled after its first answer), so the
  server's handling of abandoned work is exercised too;
* with ``--web-share`` (a quarter by default) unary cases go to the server's browser port instead,
  as Connect or gRPC-Web (:mod:`fuzz.web`), judged the same way (a bare HTTP error is a status
  outside the error model); PlayStream conversations go as Connect over HTTP/2.

A run fails (exit 1, with each finding's RPC, request bytes in a file and as hex, status and time)
on: UNKNOWN or INTERNAL; any status outside the documented error model; a call that gets no
answer within its deadline (a hang); an answer a stock gRPC client rejects (trailing metadata over
the 8 KiB soft limit, which the client refuses at random between 8 and 16 KiB, or over 16 KiB, where
it always reports RESOURCE_EXHAUSTED instead of the real status; an answer over 4 MiB); an answer
that does not parse; an error logged by the server; the server dying; and the server's RSS growing
by more than a bound after a warm-up, or peaking far above it. It stops by itself: after the given
number of requests or seconds, whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc

if __package__ in (None, ""):  # run as a script: make the package ``fuzz`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.corpus import SERVICE_PATH, STREAM_RPCS, UNARY_RPCS, Corpus, build_corpus, check_rpc_table
from fuzz.hostile import Hostile
from fuzz.mutate import Pools, mutate_bytes, random_bytes, random_message
from fuzz.server import ServerUnderTest, free_port
from fuzz.web import WEB_PROTOCOLS, send_web, send_web_stream

T = TypeVar("T")
RPCS: tuple[str, ...] = (*UNARY_RPCS, *STREAM_RPCS)
MODES = ("aio",)
"""The server's modes: one since issue 34 (the sync mode was removed); reports still name it."""
DOCUMENTED = frozenset({"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED"})
"""The statuses docs/SERVICE.md's error model gives when the server asks for no bearer token
(PERMISSION_DENIED: a seat's own token used for another seat)."""
CLIENT_REJECTS = re.compile(r"metadata size exceeds|CLIENT: Received message larger than max", re.IGNORECASE)
"""What a stock client says when it refuses an answer itself."""
SOFT_METADATA_LIMIT = 8192
"""gRPC's default soft limit on received metadata: above it a stock client refuses at random."""
MAX_CASE_BYTES = 2 << 20
"""No request is longer (twice the server's message limit: enough to test the limit itself)."""
SHORT_CODES = {
    "INVALID_ARGUMENT": "INVALID",
    "FAILED_PRECONDITION": "PRECOND",
    "PERMISSION_DENIED": "DENIED",
    "RESOURCE_EXHAUSTED": "EXHAUSTED",
    "DEADLINE_EXCEEDED": "DEADLINE",
}
INTERNALS = re.compile(r"Traceback|File \"|sys\.set_int_max_str_digits|object at 0x|\w+Error\(", re.IGNORECASE)
"""Signs of Python's own text in an error detail (reported as a note, not a failure)."""


@dataclass(frozen=True)
class FuzzConfig:
    """One fuzz run; the defaults are the seeded subset that ``make test`` runs."""

    requests: int = 2000
    """Requests per server mode."""
    seed: int = 1
    modes: tuple[str, ...] = ("aio",)
    seconds: float = 300
    """Per mode, after the corpus is built: no new request is sent after this."""
    concurrency: int = 8
    deadline: float = 10.0
    """Each call's gRPC deadline; no answer by then is a hang."""
    margin: float = 5.0
    """Extra time the client waits past the deadline before it calls the call lost."""
    warmup: int = 0
    """Requests before the RSS baseline (0: a tenth of the run, at least 200)."""
    rss_growth_mb: float = 50
    """Largest allowed RSS growth from the baseline to the end of the run."""
    rss_peak_mb: float = 400
    """Largest allowed RSS peak above the baseline while the run goes on."""
    rss_cap_mb: int = 2048
    """The server is killed above this RSS (a finding, and a guard for the shared machine)."""
    slow_seconds: float = 1.0
    """Calls slower than this are listed among the slowest (a note, not a failure)."""
    heavy_every: int = 500
    """Every this many BotMove cases, one asks for the largest pro budget."""
    skip: tuple[str, ...] = ()
    """Case names (prefixes, e.g. ``replay:dotted-keys``) not to send: known findings being fixed."""
    only: tuple[str, ...] = ()
    """When set, only these RPCs are attacked."""
    progress_seconds: float = 10
    quiet: bool = False
    web_share: float = 0.0
    """Share of the unary cases sent to the browser port (``--web-port``) as Connect or gRPC-Web
    instead of gRPC (:mod:`fuzz.web`); 0: the port is not opened."""


@dataclass
class Case:
    """One generated request (or stream conversation)."""

    index: int
    rpc: str
    kind: str
    """random, mutated, structured, hostile, short-deadline, cancel."""
    name: str
    """What a hostile generator tried (``replay:dotted-keys``), else empty."""
    messages: list[bytes]
    stream: bool
    deadline: float
    web: str = ""
    """Sent to the browser port over this protocol (``connect``, ``grpc-web``); empty: gRPC."""

    @property
    def label(self) -> str:
        label = f"{self.kind}:{self.name}" if self.name else self.kind
        return f"{label}@{self.web}" if self.web else label


@dataclass
class Result:
    case: Case
    code: str
    """A status name, or HANG (no answer within deadline + margin), or UNDECODABLE."""
    details: str
    elapsed: float
    trailer_bytes: int
    replies: int = 0
    rss_jump_kb: int = 0
    """The server's RSS change from the call's start to its end (other calls overlap it)."""
    rss_after_kb: int = 0


@dataclass
class Failure:
    """One reason the run fails: a case's answer, or the server's state (``rpc`` ``*``)."""

    symptom: str
    rpc: str = "*"
    label: str = "*"
    index: int = -1
    code: str = ""
    details: str = ""
    elapsed: float = 0.0
    file: Path | None = None
    head_hex: str = ""
    server_error: str = ""

    def describe(self) -> str:
        where = f"request bytes in {self.file}" if self.file else "no request bytes"
        lines = [
            f"{self.symptom}: {self.rpc} case {self.index} ({self.label}): {self.code} after {self.elapsed:.3f} s",
            f"    details: {self.details[:300]!r}",
            f"    {where}; first bytes: {self.head_hex}",
        ]
        if self.server_error:
            lines.append(f"    server log: {self.server_error[:400]}")
        return "\n".join(lines)


@dataclass
class ModeReport:
    """What one server mode did under the fuzzer."""

    mode: str
    requests: int = 0
    seconds: float = 0.0
    corpus_seconds: float = 0.0
    stopped_by_time: bool = False
    statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    web_statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    """The statuses of the cases sent to the browser port, by protocol (also in ``statuses``)."""
    kinds: Counter[str] = field(default_factory=Counter)
    max_ms: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    server_cpu: float = 0.0
    """CPU seconds of the server and its workers while the requests were sent."""
    client_cpu: float = 0.0
    """CPU seconds of this process meanwhile (generating, sending, judging)."""
    rss_start_kb: int = 0
    rss_baseline_kb: int = 0
    rss_end_kb: int = 0
    rss_peak_kb: int = 0
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    slowest: list[Result] = field(default_factory=list)
    rss_jumps: list[Result] = field(default_factory=list)
    """The calls during which the server's RSS rose most (a lead when the RSS check fails)."""
    workdir: Path | None = None

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def rss_growth_mb(self) -> float:
        return (self.rss_end_kb - self.rss_baseline_kb) / 1024

    @property
    def rss_peak_growth_mb(self) -> float:
        return (self.rss_peak_kb - self.rss_baseline_kb) / 1024

    def failures_of(self, rpc: str | None = None, symptom: str | None = None) -> list[Failure]:
        return [
            f
            for f in self.failures
            if (rpc is None or f.rpc == rpc) and (symptom is None or f.symptom.startswith(symptom))
        ]

    def summary(self) -> str:
        codes = sorted({code for counter in self.statuses.values() for code in counter})
        names = [SHORT_CODES.get(code, code[:10]) for code in codes]
        lines = [
            f"== {self.mode}: {self.requests} requests in {self.seconds:.1f} s ({self.rate:.0f} req/s)"
            f"{' (stopped by --seconds)' if self.stopped_by_time else ''}; corpus {self.corpus_seconds:.1f} s",
            f"{'RPC':<16} {'sent':>6} " + " ".join(f"{name:>10}" for name in names) + "   max ms",
        ]
        for rpc in RPCS:
            counter = self.statuses.get(rpc, Counter())
            cells = " ".join(f"{counter.get(code, 0):>10}" for code in codes)
            lines.append(f"{rpc:<16} {sum(counter.values()):>6} {cells} {self.max_ms.get(rpc, 0):8.0f}")
        if self.requests:
            lines.append(
                f"CPU: server {self.server_cpu:.1f} s ({self.server_cpu / self.requests * 1000:.2f} ms a request), "
                f"fuzzer {self.client_cpu:.1f} s"
            )
        lines.append("kinds: " + ", ".join(f"{kind} {count}" for kind, count in sorted(self.kinds.items())))
        for protocol, counter in sorted(self.web_statuses.items()):
            lines.append(
                f"browser port, {protocol}: {sum(counter.values())} sent; "
                + ", ".join(f"{code} {count}" for code, count in counter.most_common())
            )
        lines.append(
            f"RSS: start {self.rss_start_kb / 1024:.0f} MB, after warm-up {self.rss_baseline_kb / 1024:.0f} MB, "
            f"end {self.rss_end_kb / 1024:.0f} MB (growth {self.rss_growth_mb:+.1f} MB), "
            f"peak {self.rss_peak_kb / 1024:.0f} MB ({self.rss_peak_growth_mb:+.1f} MB over the baseline)"
        )
        if self.slowest:
            lines.append("slowest calls:")
            for result in self.slowest[:8]:
                lines.append(
                    f"    {result.elapsed:7.3f} s  {result.case.rpc} case {result.case.index} "
                    f"({result.case.label}) {result.code}"
                )
        if self.rss_jumps:
            lines.append("largest RSS rises during one call (other calls overlap):")
            for result in self.rss_jumps[:8]:
                lines.append(
                    f"    {result.rss_jump_kb / 1024:+7.1f} MB  {result.case.rpc} case {result.case.index} "
                    f"({result.case.label}) {result.code} in {result.elapsed:.3f} s"
                )
        for note in self.notes[:10]:
            lines.append(f"note: {note}")
        if self.failures:
            groups: dict[tuple[str, str, str], list[Failure]] = defaultdict(list)
            for failure in self.failures:
                groups[(failure.symptom, failure.rpc, failure.label.split("-")[0])].append(failure)
            lines.append(f"FAILURES: {len(self.failures)} in {len(groups)} groups")
            for (symptom, rpc, label), members in groups.items():
                lines.append(f"-- {len(members)} x {symptom} / {rpc} / {label}")
                for failure in members[:2]:
                    lines.append(failure.describe())
        else:
            lines.append("no failures")
        return "\n".join(lines)


# --- generating cases -------------------------------------------------------------------------------


class CaseMaker:
    """Turns a case index into a request, the same one for the same seed and corpus."""

    def __init__(self, corpus: Corpus, config: FuzzConfig) -> None:
        self.corpus = corpus
        self.config = config
        self.hostile = Hostile(corpus)
        self.pools: Pools = self.hostile.pools()
        self.all_valid = [request for requests in corpus.requests.values() for request in requests]
        self.rpcs = tuple(rpc for rpc in RPCS if not config.only or rpc in config.only)

    def make(self, index: int) -> Case:
        for attempt in range(20):
            rng = random.Random(f"{self.config.seed}:{index}:{attempt}")
            case = self._make(index, rng)
            case.messages = [message[:MAX_CASE_BYTES] for message in case.messages]
            if not any(case.label.startswith(skip) or case.name.startswith(skip) for skip in self.config.skip):
                return case
        return Case(index, "ListPresets", "skipped", "", [b""], False, self.config.deadline)

    def _make(self, index: int, rng: random.Random) -> Case:
        rpc = self.rpcs[index % len(self.rpcs)]
        deadline = self.config.deadline
        stream = rpc in STREAM_RPCS
        roll = rng.random()
        valid = self.corpus.requests.get(rpc, []) or [b""]
        request_type = (STREAM_RPCS if stream else UNARY_RPCS)[rpc][0]
        name = ""
        if roll < 0.12:
            kind = "random"
            messages = [random_bytes(rng) for _ in range(rng.randint(1, 4) if stream else 1)]
        elif roll < 0.42:
            kind = "mutated"
            if stream:
                conversation = rng.choice(self.corpus.streams)
                messages = [mutate_bytes(m, rng, self.all_valid) if rng.random() < 0.5 else m for m in conversation]
            else:
                messages = [mutate_bytes(rng.choice(valid), rng, self.all_valid)]
        elif roll < 0.60:
            kind = "structured"
            count = rng.randint(1, 6) if stream else 1
            messages = [random_message(request_type, rng, self.pools).SerializeToString() for _ in range(count)]
        else:
            kind = "hostile"
            if stream:
                messages, name = self.hostile.stream(rng)
            else:
                heavy = rpc == "BotMove" and (index // len(self.rpcs)) % self.config.heavy_every == 7
                message, name = self.hostile.build(rpc, rng, heavy=heavy)
                messages = [message.SerializeToString()]
        if rng.random() < 0.02:
            kind, deadline = "short-deadline", rng.choice((0.001, 0.005, 0.02))
        elif stream and rng.random() < 0.05:
            kind = "cancel"
        web = ""
        if self.config.web_share and rng.random() < self.config.web_share:
            web = "connect" if stream else rng.choice(WEB_PROTOCOLS)
        return Case(index, rpc, kind, name, messages, stream, deadline, web)


# --- calling ---------------------------------------------------------------------------------------


def _trailer_bytes(metadata: Sequence[tuple[str, str | bytes]] | None, details: str) -> int:
    size = len(details.encode("utf-8", errors="replace"))
    for key, value in metadata or ():
        size += len(key) + len(value)
    return size


class Caller:
    """Sends cases with the raw bytes codec (no client-side validation): unary calls over an aio
    channel, stream conversations over a sync one (see :meth:`_stream_sync`)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        sync_channel: grpc.Channel,
        config: FuzzConfig,
        mode: str,
        web_base: str = "",
    ) -> None:
        self.config = config
        self.mode = mode
        self.web_base = web_base
        self.unary = {rpc: channel.unary_unary(SERVICE_PATH + rpc) for rpc in UNARY_RPCS}
        self.sync_streams = {rpc: sync_channel.stream_stream(SERVICE_PATH + rpc) for rpc in STREAM_RPCS}
        self.executor = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="fuzz-stream")

    def metadata(self, case: Case) -> tuple[tuple[str, str], ...]:
        return (("x-request-id", f"fuzz-{self.mode}-{case.index}"),)

    async def send(self, case: Case) -> Result:
        started = time.perf_counter()
        try:
            if case.web:
                return await asyncio.wait_for(self._web(case, started), case.deadline + self.config.margin + 1)
            if case.stream:
                return await asyncio.wait_for(self._stream(case, started), case.deadline + self.config.margin)
            return await asyncio.wait_for(self._unary(case, started), case.deadline + self.config.margin)
        except TimeoutError:
            return Result(case, "HANG", "no answer within the deadline and margin", time.perf_counter() - started, 0)

    async def _unary(self, case: Case, started: float) -> Result:
        call = self.unary[case.rpc](case.messages[0], timeout=case.deadline, metadata=self.metadata(case))
        try:
            reply: bytes = await call
        except grpc.aio.AioRpcError as error:
            details = error.details() or ""
            elapsed = time.perf_counter() - started
            return Result(case, error.code().name, details, elapsed, _trailer_bytes(error.trailing_metadata(), details))
        elapsed = time.perf_counter() - started
        trailer = _trailer_bytes(await call.trailing_metadata(), await call.details() or "")
        try:
            UNARY_RPCS[case.rpc][1].FromString(reply)
        except Exception as exc:  # any decode failure of the answer is the finding
            return Result(case, "UNDECODABLE", f"{type(exc).__name__}: {exc}", elapsed, trailer)
        return Result(case, "OK", "", elapsed, trailer, replies=1)

    async def _in_thread(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` on a thread of the pool (a blocking client), awaited."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, functools.partial(call, *args, **kwargs))

    async def _web(self, case: Case, started: float) -> Result:
        if case.stream:
            return await self._web_stream(case, started)
        answer = await self._in_thread(
            send_web,
            self.web_base,
            SERVICE_PATH + case.rpc,
            case.messages[0],
            case.web,
            deadline=case.deadline,
            margin=self.config.margin,
            request_id=self.metadata(case)[0][1],
        )
        elapsed = time.perf_counter() - started
        if answer.code == "OK" and answer.reply is None:
            return Result(case, "UNDECODABLE", "an OK answer without a reply", elapsed, answer.header_bytes)
        if answer.reply is not None and answer.code == "OK":
            try:
                UNARY_RPCS[case.rpc][1].FromString(answer.reply)
            except Exception as exc:  # any decode failure of the answer is the finding
                return Result(case, "UNDECODABLE", f"{type(exc).__name__}: {exc}", elapsed, answer.header_bytes)
            return Result(case, "OK", "", elapsed, answer.header_bytes, replies=1)
        return Result(case, answer.code, answer.details, elapsed, answer.header_bytes)

    async def _web_stream(self, case: Case, started: float) -> Result:
        assert self.web_base, "a browser-port case needs the browser port"
        ended = await self._in_thread(
            send_web_stream,
            self.web_base,
            SERVICE_PATH.strip("/"),
            case.rpc,
            case.messages,
            deadline=case.deadline,
            request_id=self.metadata(case)[0][1],
            cancel_after_first=case.kind == "cancel",
        )
        elapsed = time.perf_counter() - started
        reply_type = STREAM_RPCS[case.rpc][1]
        for reply in ended.replies:
            try:
                reply_type.FromString(reply)
            except Exception as exc:  # any decode failure of an answer is the finding
                return Result(case, "UNDECODABLE", f"{type(exc).__name__}: {exc}", elapsed, 0, len(ended.replies))
        return Result(case, ended.code, ended.details, elapsed, 0, len(ended.replies))

    async def _stream(self, case: Case, started: float) -> Result:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._stream_sync, case, started)

    def _stream_sync(self, case: Case, started: float) -> Result:
        """One conversation on the sync API, on a thread of the pool.

        The aio client turns a write that races the server's early end of a stream into a local
        INTERNAL ("Internal error from Core") in place of the status the server sent; the sync
        client stops feeding its request iterator once the call ends and reports the server's
        status, so pipelined conversations (moves sent without waiting for answers) are judged by
        what the server said."""
        call = self.sync_streams[case.rpc](iter(case.messages), timeout=case.deadline, metadata=self.metadata(case))
        reply_type = STREAM_RPCS[case.rpc][1]
        replies = 0
        try:
            for reply in call:
                try:
                    reply_type.FromString(reply)
                except Exception as exc:  # any decode failure of an answer is the finding
                    call.cancel()
                    elapsed = time.perf_counter() - started
                    return Result(case, "UNDECODABLE", f"{type(exc).__name__}: {exc}", elapsed, 0, replies)
                replies += 1
                if case.kind == "cancel":
                    call.cancel()
                    break
        except grpc.RpcError as error:
            details = error.details() or ""
            elapsed = time.perf_counter() - started
            trailer = _trailer_bytes(error.trailing_metadata(), details)
            return Result(case, error.code().name, details, elapsed, trailer, replies)
        elapsed = time.perf_counter() - started
        if case.kind == "cancel" and replies:
            return Result(case, "CANCELLED", "cancelled by the fuzzer", elapsed, 0, replies)
        details = call.details() or ""
        return Result(
            case, call.code().name, details, elapsed, _trailer_bytes(call.trailing_metadata(), details), replies
        )


def call_once(target: str, rpc: str, payload: bytes, deadline: float = 10.0, margin: float = 5.0) -> Result:
    """One unary call of raw request bytes on a fresh sync channel, judged like a fuzz case (for a
    single known hostile request, or to replay a reproduction file)."""
    case = Case(-1, rpc, "once", "", [payload], False, deadline)
    started = time.perf_counter()
    with grpc.insecure_channel(target) as channel:
        method = channel.unary_unary(SERVICE_PATH + rpc)
        future = method.future(payload, timeout=deadline)
        try:
            reply: bytes = future.result(timeout=deadline + margin)
        except grpc.FutureTimeoutError:
            future.cancel()
            return Result(case, "HANG", "no answer within the deadline and margin", time.perf_counter() - started, 0)
        except grpc.RpcError as error:
            details = error.details() or ""
            elapsed = time.perf_counter() - started
            return Result(case, error.code().name, details, elapsed, _trailer_bytes(error.trailing_metadata(), details))
        elapsed = time.perf_counter() - started
        trailer = _trailer_bytes(future.trailing_metadata(), future.details() or "")
    try:
        UNARY_RPCS[rpc][1].FromString(reply)
    except Exception as exc:  # any decode failure of the answer is the finding
        return Result(case, "UNDECODABLE", f"{type(exc).__name__}: {exc}", elapsed, trailer)
    return Result(case, "OK", "", elapsed, trailer, replies=1)


def symptom_of(result: Result) -> str | None:
    """Why a result fails the run, or None when it is an acceptable answer."""
    code, case = result.code, result.case
    if code in ("UNKNOWN", "INTERNAL"):
        return f"status {code}"
    if code == "HANG":
        return "hang: no answer within the deadline and margin"
    if code == "DEADLINE_EXCEEDED":
        return None if case.kind == "short-deadline" else "hang: deadline exceeded"
    if code == "CANCELLED" and case.kind == "cancel":
        return None
    if code == "UNDECODABLE":
        return "answer does not parse as the reply message"
    if code == "RESOURCE_EXHAUSTED" and CLIENT_REJECTS.search(result.details):
        return "a stock client rejects the answer (metadata or message too large)"
    if result.trailer_bytes > SOFT_METADATA_LIMIT:
        return f"trailer of {result.trailer_bytes} bytes, over the stock client's 8 KiB soft limit"
    if code not in DOCUMENTED:
        return f"status {code} outside the error model"
    return None


# --- running one mode -----------------------------------------------------------------------------


class ModeRun:
    def __init__(self, config: FuzzConfig, mode: str, workdir: Path, log: bool) -> None:
        self.config = config
        self.mode = mode
        self.workdir = workdir
        self.log = log
        self.report = ModeReport(mode=mode, workdir=workdir)
        self.repro = workdir / "repro"

    def run(self) -> ModeReport:
        report = self.report
        web_port = free_port() if self.config.web_share else 0
        extra = ("--web-port", str(web_port)) if web_port else ()
        with ServerUnderTest(self.mode, self.workdir, rss_cap_mb=self.config.rss_cap_mb, extra_args=extra) as server:
            server.wait_ready()
            report.rss_start_kb = server.rss_kb()
            started = time.perf_counter()
            with grpc.insecure_channel(server.target) as channel:
                corpus = build_corpus(channel, self.config.seed, progress=self.print)
            report.corpus_seconds = time.perf_counter() - started
            maker = CaseMaker(corpus, self.config)
            asyncio.run(self._fuzz(server, maker, f"http://127.0.0.1:{web_port}" if web_port else ""))
            self._finish(server)
        return report

    async def _fuzz(self, server: ServerUnderTest, maker: CaseMaker, web_base: str) -> None:
        config, report = self.config, self.report
        warmup = config.warmup or max(200, config.requests // 10)
        warmup = min(warmup, config.requests)
        started = time.perf_counter()
        stop_at = started + config.seconds
        server_cpu, client_cpu = server.cpu_seconds(), time.process_time()
        async with grpc.aio.insecure_channel(server.target) as channel:
            sync_channel = grpc.insecure_channel(server.target)
            caller = Caller(channel, sync_channel, config, self.mode, web_base)
            progress = asyncio.create_task(self._progress(server, started))
            try:
                await self._phase(server, maker, caller, range(0, warmup), stop_at)
                await asyncio.sleep(0.5)
                report.rss_baseline_kb = server.rss_kb()
                server.watch.peak_kb = report.rss_baseline_kb
                if server.alive() and time.perf_counter() < stop_at:
                    await self._phase(server, maker, caller, range(warmup, config.requests), stop_at)
            finally:
                progress.cancel()
                caller.executor.shutdown(wait=True)
                sync_channel.close()
        report.seconds = time.perf_counter() - started
        report.server_cpu = server.cpu_seconds() - server_cpu
        report.client_cpu = time.process_time() - client_cpu

    async def _phase(
        self, server: ServerUnderTest, maker: CaseMaker, caller: Caller, indices: range, stop_at: float
    ) -> None:
        queue = iter(indices)

        async def worker() -> None:
            for index in queue:
                if time.perf_counter() > stop_at:
                    self.report.stopped_by_time = True
                    return
                if not server.alive():
                    return
                case = maker.make(index)
                before = server.watch.last_kb
                result = await caller.send(case)
                result.rss_after_kb = server.watch.last_kb
                result.rss_jump_kb = result.rss_after_kb - before
                self._record(result, server)

        await asyncio.gather(*(worker() for _ in range(self.config.concurrency)))

    def print(self, text: str) -> None:
        if self.log:
            print(text, flush=True)

    async def _progress(self, server: ServerUnderTest, started: float) -> None:
        while True:
            await asyncio.sleep(self.config.progress_seconds)
            report = self.report
            elapsed = time.perf_counter() - started
            codes: Counter[str] = Counter()
            for counter in report.statuses.values():
                codes.update(counter)
            self.print(
                f"[{self.mode}] {report.requests}/{self.config.requests} in {elapsed:.0f} s "
                f"({report.requests / max(elapsed, 1e-9):.0f} req/s), RSS {server.watch.last_kb / 1024:.0f} MB "
                f"(peak {server.watch.peak_kb / 1024:.0f}), failures {len(report.failures)}; "
                + ", ".join(f"{code} {count}" for code, count in codes.most_common())
            )

    def _record(self, result: Result, server: ServerUnderTest) -> None:
        report, case = self.report, result.case
        report.requests += 1
        report.statuses[case.rpc][result.code] += 1
        if case.web:
            report.web_statuses[case.web][result.code] += 1
        report.kinds[case.kind] += 1
        report.max_ms[case.rpc] = max(report.max_ms[case.rpc], result.elapsed * 1000)
        if result.elapsed > self.config.slow_seconds and case.kind != "short-deadline":
            report.slowest.append(result)
            report.slowest.sort(key=lambda r: -r.elapsed)
            del report.slowest[20:]
            self._save(case)
        if result.rss_jump_kb > 4096:
            # calls in flight together see the same rise: keep the longest of them, the likelier cause
            same = [r for r in report.rss_jumps if r.rss_after_kb == result.rss_after_kb]
            if not same or same[0].elapsed < result.elapsed:
                report.rss_jumps = [r for r in report.rss_jumps if r not in same] + [result]
                report.rss_jumps.sort(key=lambda r: -r.rss_jump_kb)
                del report.rss_jumps[20:]
                self._save(case)
        if result.code not in ("OK",) and INTERNALS.search(result.details) and len(report.notes) < 50:
            report.notes.append(f"{case.rpc} ({case.label}) answers with Python's own text: {result.details[:160]!r}")
        symptom = symptom_of(result)
        if symptom is None:
            return
        if not server.alive() and result.code in ("UNAVAILABLE", "HANG", "CANCELLED", "UNKNOWN"):
            symptom = "server died"
            if report.failures_of(symptom="server died"):
                return
        if len(report.failures) >= 200:
            return
        path = self._save(case)
        head = case.messages[0][:60].hex() if case.messages else ""
        report.failures.append(
            Failure(symptom, case.rpc, case.label, case.index, result.code, result.details, result.elapsed, path, head)
        )

    def _save(self, case: Case) -> Path:
        self.repro.mkdir(parents=True, exist_ok=True)
        over = f".{case.web}" if case.web else ""
        if case.stream:
            path = self.repro / f"{self.mode}-{case.index}-{case.rpc}{over}.stream.txt"
            path.write_text("".join(message.hex() + "\n" for message in case.messages))
        else:
            path = self.repro / f"{self.mode}-{case.index}-{case.rpc}{over}.bin"
            path.write_bytes(case.messages[0])
        return path

    def _finish(self, server: ServerUnderTest) -> None:
        report, config = self.report, self.config
        time.sleep(1.0)
        report.rss_end_kb = server.rss_kb() or server.watch.last_kb
        report.rss_peak_kb = server.watch.peak_kb
        if server.watch.killed_at_kb:
            reached = server.watch.killed_at_kb / 1024
            cap = f"server RSS reached {reached:.0f} MB: killed at the {config.rss_cap_mb} MB cap"
            report.failures.append(Failure(cap, details=self._rss_leads()))
        elif not server.alive():
            died = report.failures_of(symptom="server died")
            if died:
                died[0].server_error = server.log_tail(15)
            else:
                report.failures.append(Failure("server died", details=server.log_tail(15)))
        elif report.rss_baseline_kb:
            growth, peak = report.rss_growth_mb, report.rss_peak_growth_mb
            if growth > config.rss_growth_mb:
                symptom = f"RSS grew {growth:.1f} MB after the warm-up (bound {config.rss_growth_mb:g} MB)"
                report.failures.append(Failure(symptom, details=self._rss_leads()))
            if peak > config.rss_peak_mb:
                symptom = f"RSS peaked {peak:.1f} MB over the baseline (bound {config.rss_peak_mb:g} MB)"
                report.failures.append(Failure(symptom, details=self._rss_leads()))
        self._server_errors(server)

    def _rss_leads(self) -> str:
        """The calls during which the RSS rose most: where to look first."""
        return "largest rises: " + ", ".join(
            f"{r.case.rpc} case {r.case.index} ({r.case.label}) {r.rss_jump_kb / 1024:+.0f} MB"
            for r in self.report.rss_jumps[:5]
        )

    def _server_errors(self, server: ServerUnderTest) -> None:
        """Attach the server's logged error to each failure of its request id; logged errors that
        no failure explains are failures of their own."""
        by_request: dict[str, str] = {}
        unexplained: list[str] = []
        for line in server.log().splitlines():
            if '"error"' not in line and "Traceback" not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                unexplained.append(line)
                continue
            if entry.get("level") not in ("error", "critical"):
                continue
            exception = str(entry.get("exception", "")).strip().splitlines()
            text = exception[-1] if exception else str(entry.get("event", ""))
            request_id = str(entry.get("request_id", ""))
            if request_id:
                by_request[request_id] = f"{entry.get('method', '')}: {text}"
            else:
                unexplained.append(f"{entry.get('event', '')}: {text}")
        for failure in self.report.failures:
            found = by_request.pop(f"fuzz-{self.mode}-{failure.index}", "")
            if found:
                failure.server_error = found
        for request_id, text in list(by_request.items())[:20]:
            self.report.failures.append(Failure("server logged an error", label=request_id, details=text))
        for text in unexplained[:20]:
            self.report.failures.append(Failure("server logged an error", details=text))


def run(config: FuzzConfig, workdir: Path | None = None, log: bool = True) -> list[ModeReport]:
    """Fuzz each mode of ``config`` against a fresh server; the reports, failures included."""
    check_rpc_table()
    reports = []
    for mode in config.modes:
        base = workdir or Path(tempfile.mkdtemp(prefix=f"bigtwo-fuzz-{mode}-"))
        folder = base / mode
        folder.mkdir(parents=True, exist_ok=True)
        report = ModeRun(config, mode, folder, log).run()
        if log:
            print(report.summary(), flush=True)
        reports.append(report)
    return reports


async def _send_alone(target: str, case: Case, config: FuzzConfig, mode: str, web_base: str = "") -> Result:
    async with grpc.aio.insecure_channel(target) as channel:
        with grpc.insecure_channel(target) as sync_channel:
            caller = Caller(channel, sync_channel, config, mode, web_base)
            try:
                return await caller.send(case)
            finally:
                caller.executor.shutdown(wait=True)


def replay(path: Path, modes: Sequence[str], deadline: float) -> int:
    """Send a saved reproduction to a fresh server of each mode; 1 when it still fails."""
    parts = path.name.split(".")[0].split("-")
    rpc = parts[-1]
    if rpc not in RPCS:
        raise SystemExit(f"{path.name}: no RPC named in the file name (MODE-INDEX-RPC.bin)")
    stream = path.name.endswith(".stream.txt")
    messages = [bytes.fromhex(line) for line in path.read_text().split()] if stream else [path.read_bytes()]
    web = next((protocol for protocol in WEB_PROTOCOLS if f".{protocol}." in path.name), "")
    case = Case(-1, rpc, "replay", path.name, messages, stream, deadline, web)
    config = FuzzConfig(deadline=deadline, concurrency=1, web_share=1.0 if web else 0.0)
    web_port = free_port() if web else 0
    failed = 0
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="bigtwo-fuzz-replay-") as folder:
            extra = ("--web-port", str(web_port)) if web else ()
            with ServerUnderTest(mode, Path(folder), extra_args=extra) as server:
                server.wait_ready()
                web_base = f"http://127.0.0.1:{web_port}" if web else ""
                result = asyncio.run(_send_alone(server.target, case, config, mode, web_base))
                alive = server.alive()
            symptom = symptom_of(result) or ("server died" if not alive else None)
            print(f"[{mode}] {rpc}: {result.code} in {result.elapsed:.3f} s: {result.details[:300]!r}")
            print(f"[{mode}] {symptom or 'acceptable answer'}")
            failed += symptom is not None
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=2000, help="requests per server mode")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mode", choices=MODES, default="aio")
    parser.add_argument("--seconds", type=float, default=300, help="time bound per mode (after the corpus)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--deadline", type=float, default=10.0, help="each call's deadline in seconds")
    parser.add_argument("--rss-growth-mb", type=float, default=50)
    parser.add_argument("--rss-peak-mb", type=float, default=400)
    parser.add_argument("--rss-cap-mb", type=int, default=2048)
    parser.add_argument("--skip", action="append", default=[], help="case name prefix not to send (repeatable)")
    parser.add_argument("--only", action="append", default=[], choices=RPCS, help="attack only this RPC (repeatable)")
    parser.add_argument("--workdir", type=Path, help="keep server logs and reproductions here")
    parser.add_argument(
        "--web-share",
        type=float,
        default=0.25,
        help="share of unary cases sent to the browser port as Connect or gRPC-Web (0: gRPC only)",
    )
    parser.add_argument(
        "--min-requests", type=int, default=0, help="fail when a mode sent fewer (stopped by --seconds or a crash)"
    )
    parser.add_argument(
        "--replay",
        type=Path,
        help="send one saved reproduction (MODE-INDEX-RPC.bin or .stream.txt) to a fresh server of each mode and "
        "judge the answer (tokens in it were sealed with another run's key: they are refused now)",
    )
    args = parser.parse_args(argv)
    modes = (args.mode,)
    if args.replay:
        return replay(args.replay, modes, args.deadline)
    config = FuzzConfig(
        requests=args.requests,
        seed=args.seed,
        modes=modes,
        seconds=args.seconds,
        concurrency=args.concurrency,
        deadline=args.deadline,
        rss_growth_mb=args.rss_growth_mb,
        rss_peak_mb=args.rss_peak_mb,
        rss_cap_mb=args.rss_cap_mb,
        skip=tuple(args.skip),
        only=tuple(args.only),
        web_share=args.web_share,
    )
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bigtwo-fuzz-"))
    reports = run(config, workdir)
    for report in reports:
        if report.requests < args.min_requests:
            symptom = f"only {report.requests} requests sent ({args.min_requests} required) in {report.seconds:.0f} s"
            report.failures.append(Failure(symptom))
            print(f"FAILURE [{report.mode}]: {symptom}")
    total = sum(report.requests for report in reports)
    seconds = sum(report.seconds for report in reports)
    failures = sum(len(report.failures) for report in reports)
    print(
        f"== total: {total} requests in {seconds:.1f} s ({total / max(seconds, 1e-9):.0f} req/s) over "
        f"{len(reports)} mode(s); peak RSS "
        + ", ".join(f"{r.mode} {r.rss_peak_kb / 1024:.0f} MB (growth {r.rss_growth_mb:+.1f} MB)" for r in reports)
        + f"; {failures} failure(s)"
    )
    if failures:
        print(f"reproductions and server logs kept in {workdir}")
        return 1
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
