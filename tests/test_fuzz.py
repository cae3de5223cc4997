"""The seeded subset of the project's own fuzzer (``make fuzz`` runs the full one), and the hostile
requests issue 13 names, one at a time.

The fuzzer (``tests/fuzz``) is a client that knows only the proto: it starts ``bigtwo serve`` (its
one mode, aio), learns valid requests from the server's answers and sends 2,000 generated ones
(random and mutated bytes, hostile messages, hostile replay texts, stream conversations). Each RPC
is its own test, so a finding fails the RPC it is in and no other; the server's life, its log and
its memory are tests of their own.

A finding still being fixed is named once in :data:`KNOWN`: its generator is left out of the
subset (so it cannot hide the other RPCs' results, or exhaust the server for them) and its own
case below is a strict xfail, which turns into a failure the moment the fix lands, as a reminder
to remove the entry.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from fuzz.corpus import DECK, SERVICE_PATH
from fuzz.fuzz_service import MODES, RPCS, Case, FuzzConfig, ModeReport, Result, call_once, run, symptom_of
from fuzz.server import ServerUnderTest, free_port
from fuzz.web import WEB_PROTOCOLS, _connect_answer, send_web
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

pytestmark = pytest.mark.timeout(300)

SEED = 13
REQUESTS = 2000
PEAK_MB = 50
WEB_SHARE = 0.25
"""Share of the unary cases sent to the browser port (Connect and gRPC-Web) instead of gRPC."""
"""Issue 13: a hostile request of up to the message limit may cost the server at most 50 MB."""

KNOWN: dict[str, str] = {}
"""Case-name prefix -> the finding, for hostile generators whose finding is being fixed."""

XFAIL: dict[tuple[str, str], str] = {}
"""(mode, RPC or check) -> a finding still present in the subset, named."""


def _marked(mode: str, name: str) -> object:
    reason = XFAIL.get((mode, name))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(mode, name, marks=marks, id=f"{mode}-{name}")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], ModeReport]:
    """The subset's report per server mode, run once per module on first use."""
    done: dict[str, ModeReport] = {}

    def report(mode: str) -> ModeReport:
        if mode not in done:
            config = FuzzConfig(
                requests=REQUESTS, seed=SEED, modes=(mode,), seconds=150, skip=tuple(KNOWN), web_share=WEB_SHARE
            )
            done[mode] = run(config, tmp_path_factory.mktemp(f"fuzz-{mode}"), log=False)[0]
        return done[mode]

    return report


@pytest.mark.parametrize(("mode", "rpc"), [_marked(mode, rpc) for mode in MODES for rpc in RPCS])
def test_every_answer_is_within_the_error_model(reports: Callable[[str], ModeReport], mode: str, rpc: str) -> None:
    """No UNKNOWN or INTERNAL, no status outside the error model, no hang, no answer a stock
    client rejects, for any generated request of this RPC."""
    report = reports(mode)
    assert report.statuses[rpc], f"the subset sent nothing to {rpc}"
    failures = report.failures_of(rpc=rpc)
    assert not failures, "\n".join(failure.describe() for failure in failures[:5])


@pytest.mark.parametrize(("mode", "check"), [_marked(mode, "server") for mode in MODES])
def test_server_stays_up_and_logs_no_error(reports: Callable[[str], ModeReport], mode: str, check: str) -> None:
    report = reports(mode)
    failures = [f for f in report.failures if f.rpc == "*" and not f.symptom.startswith("RSS")]
    assert not failures, "\n".join(failure.describe() for failure in failures[:5])
    assert report.requests == REQUESTS, f"stopped after {report.requests} requests"


@pytest.mark.parametrize(("mode", "check"), [_marked(mode, "rss") for mode in MODES])
def test_rss_stays_bounded(reports: Callable[[str], ModeReport], mode: str, check: str) -> None:
    report = reports(mode)
    failures = report.failures_of(symptom="RSS")
    assert not failures, report.summary()


@pytest.mark.parametrize("mode", MODES)
def test_the_browser_port_is_fuzzed_in_both_protocols(reports: Callable[[str], ModeReport], mode: str) -> None:
    """A share of the cases went to ``--web-port`` as Connect and as gRPC-Web, and were answered
    both ways (their failures, if any, are in the per-RPC test above)."""
    statuses = reports(mode).web_statuses
    assert sorted(statuses) == ["connect", "grpc-web"]
    for protocol, counter in statuses.items():
        assert counter["OK"] and counter["INVALID_ARGUMENT"], (protocol, counter)


def test_the_web_judge_reads_both_protocols_and_flags_what_is_outside_the_model(tmp_path: Path) -> None:
    """The fuzzer's browser-port client reads answers and errors of both protocols, and an answer
    outside the error model (a bare HTTP error) is a finding."""
    port = free_port()
    with ServerUnderTest("aio", tmp_path, rss_cap_mb=1024, extra_args=("--web-port", str(port))) as server:
        server.wait_ready()
        base = f"http://127.0.0.1:{port}"
        presets = api.ListPresetsRequest().SerializeToString()
        for protocol in WEB_PROTOCOLS:
            answer = send_web(base, SERVICE_PATH + "ListPresets", presets, protocol, **WEB_CALL)
            assert answer.code == "OK" and answer.reply is not None
            assert api.ListPresetsResponse.FromString(answer.reply).presets
            refused = send_web(base, SERVICE_PATH + "Deal", b"\xff\xff\xff", protocol, **WEB_CALL)
            assert refused.code == "INVALID_ARGUMENT" and refused.details, refused
        # A path that names no method is answered in the model now (service/web_refusals.py)...
        missing = send_web(base, "/no.such.Service/Nothing", presets, "connect", **WEB_CALL)
        assert missing.code == "UNIMPLEMENTED" and missing.details, missing
    # ... and a bare HTTP error, as the port gave before, is read as one and judged a finding.
    bare = _connect_answer(404, b"", 0)
    assert bare.code == "HTTP_404"
    case = Case(0, "ListPresets", "once", "", [presets], False, 10.0, "connect")
    symptom = symptom_of(Result(case, bare.code, bare.details, 0.01, 0))
    assert symptom == f"status {bare.code} outside the error model"


WEB_CALL = {"deadline": 10.0, "margin": 5.0, "request_id": "fuzz-judge"}

# --- the hostile requests of issue 13, one by one --------------------------------------------------


def _audit(text: str) -> api.AuditLogRequest:
    return api.AuditLogRequest(replay_toml=text)


def _named_fields(trailer: bytes) -> list[str]:
    """The field paths of the BadRequest in a rich status (``grpc-status-details-bin``)."""
    fields: list[str] = []
    for detail in status_pb2.Status.FromString(trailer).details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            request = error_details_pb2.BadRequest()
            detail.Unpack(request)
            fields += [violation.field for violation in request.field_violations if violation.field]
    return fields


def _plain(result: Result) -> str | None:
    """Why an error detail is not a plain sentence (Python's own text in it), or None."""
    for sign in ("sys.set_int_max_str_digits", "Traceback", "Error(", "object at 0x"):
        if sign in result.details:
            return f"the answer quotes Python's own text: {result.details[:200]!r}"
    return None


KNOWN_CASES: dict[str, tuple[str, Message]] = {
    "replay-dotted-keys": ("AuditLog", _audit("a" + ".a" * 100_000 + " = 1")),
    "replay-dotted-keys-lines": ("AuditLog", _audit("".join(f"k{i}" + ".a" * 1990 + " = 1\n" for i in range(250)))),
    "replay-nested-arrays": ("AuditLog", _audit("a = " + "[" * 1000 + "]" * 1000)),
    "replay-nested-tables": ("AuditLog", _audit("a = " + "{a=" * 400 + "1" + "}" * 400)),
    "replay-nested-arrays-lines": (
        "AuditLog",
        _audit("".join(f"a{i} = " + "[" * 1000 + "]" * 1000 + "\n" for i in range(500))),
    ),
    "replay-huge-integer": ("AuditLog", _audit("x = " + "9" * 100_000)),
    "replay-many-tables": ("AuditLog", _audit("".join(f"[t{i}]\n" for i in range(60_000)))),
    "replay-many-keys": ("AuditLog", _audit("".join(f"k{i} = {i}\n" for i in range(60_000)))),
    "describe-20kB-preset": ("DescribeRuleset", api.DescribeRulesetRequest(ruleset=pb.Ruleset(preset="x" * 20_000))),
    "describe-20kB-option": (
        "DescribeRuleset",
        api.DescribeRulesetRequest(ruleset=pb.Ruleset(options={"flush": "é" * 10_000})),
    ),
    "deal-20kB-code": ("Deal", api.DealRequest(deal_code="7" * 20_000)),
    "legal-moves-52-card-position": (
        "LegalMoves",
        api.LegalMovesRequest(position=api.HandPosition(ruleset=pb.Ruleset(), hand=" ".join(DECK))),
    ),
    "split-hand-52-cards": ("SplitHand", api.SplitHandRequest(hand=" ".join(DECK))),
    "name-cards-52-cards": ("NameCards", api.NameCardsRequest(cards=" ".join(DECK), ruleset=pb.Ruleset())),
    "bot-max-budget": ("BotMove", api.BotMoveRequest(level="pro", simulations=2**32 - 1, max_ms=2**32 - 1)),
    "settle-match-int32-overflow": (
        "SettleMatch",
        api.SettleMatchRequest(
            deals=[pb.DealResult(deal_number=i + 1, winner=0, scores=[2**31 - 1, 0, 0, 0]) for i in range(3)]
        ),
    ),
}
"""Requests that broke the service in issue 13's review, and their kin."""

EXTRA_CHECKS: dict[str, str] = {
    "replay-huge-integer": "plain",
    "settle-match-int32-overflow": "field",
}


@pytest.fixture(scope="module")
def lone_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], ServerUnderTest]]:
    """One aio server for the known cases, started again if a case took it down."""
    folder = tmp_path_factory.mktemp("known")
    holder: list[ServerUnderTest] = []

    def get() -> ServerUnderTest:
        if not holder or not holder[-1].alive():
            if holder:
                holder[-1].stop()
            server = ServerUnderTest("aio", folder / str(len(holder)), rss_cap_mb=1024)
            server.wait_ready()
            holder.append(server)
        return holder[-1]

    yield get
    for server in holder:
        server.stop()


def _trailer(target: str, rpc: str, payload: bytes) -> bytes:
    with grpc.insecure_channel(target) as channel:
        try:
            channel.unary_unary(f"/bigtwo.v1.BigTwoService/{rpc}")(payload, timeout=10)
        except grpc.RpcError as error:
            for key, value in error.trailing_metadata() or ():
                if key == "grpc-status-details-bin":
                    return bytes(value)
    return b""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[name])] if name in KNOWN else [])
        for name in KNOWN_CASES
    ],
)
def test_known_hostile_request(lone_server: Callable[[], ServerUnderTest], name: str) -> None:
    """Answered within the error model and the deadline, with at most 50 MB of server memory."""
    server = lone_server()
    rpc, message = KNOWN_CASES[name]
    payload = message.SerializeToString()
    time.sleep(0.2)
    before = server.rss_kb()
    server.watch.peak_kb = before
    result = call_once(server.target, rpc, payload)
    time.sleep(0.2)
    assert server.alive(), f"{name}: the server died ({result.code} {result.details[:200]!r})"
    problem = symptom_of(result)
    assert problem is None, f"{name}: {problem}: {result.code} {result.details[:300]!r}"
    rise_mb = (server.watch.peak_kb - before) / 1024
    assert rise_mb <= PEAK_MB, f"{name}: the server's RSS rose {rise_mb:.0f} MB answering it"
    check = EXTRA_CHECKS.get(name)
    if check == "plain":
        assert _plain(result) is None, _plain(result)
    elif check == "field":
        assert result.code == "INVALID_ARGUMENT", f"{name}: {result.code} {result.details!r}"
        assert _named_fields(_trailer(server.target, rpc, payload)), f"{name}: no field named in {result.details!r}"


# --- a stream that ends in an error leaves nothing behind -------------------------------------------

STREAMS = 3000
STREAM_LEAK_MB = 9
"""Over 3,000 streams: 3 kB a stream. Above the allocator's ups and downs of a few MB across the
server's processes, below what a stream's kept state would add up to."""


@pytest.mark.parametrize(("mode", "check"), [_marked(mode, "stream-errors") for mode in MODES])
def test_streams_ending_in_errors_do_not_grow_memory(tmp_path: Path, mode: str, check: str) -> None:
    """PlayStreams that end with INVALID_ARGUMENT or FAILED_PRECONDITION (garbage, a move before
    the open) must release what they held: a client can open them as fast as it likes."""
    garbage = [b"\xff\xff"]
    early_move = [api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=0, text="pass"))).SerializeToString()]
    with ServerUnderTest(mode, tmp_path, rss_cap_mb=1024) as server:
        server.wait_ready()
        with grpc.insecure_channel(server.target) as channel:
            stream = channel.stream_stream("/bigtwo.v1.BigTwoService/PlayStream")

            def conversation(i: int) -> str:
                try:
                    for _ in stream(iter(garbage if i % 2 else early_move), timeout=10):
                        pass
                except grpc.RpcError as error:
                    return str(error.code().name)
                return "OK"

            with ThreadPoolExecutor(max_workers=4) as callers:
                codes = set(callers.map(conversation, range(300)))
                time.sleep(0.3)
                before = server.rss_kb()
                codes |= set(callers.map(conversation, range(STREAMS)))
                time.sleep(0.3)
                growth_mb = (server.rss_kb() - before) / 1024
    assert codes == {"INVALID_ARGUMENT", "FAILED_PRECONDITION"}, codes
    assert growth_mb <= STREAM_LEAK_MB, (
        f"{mode}: RSS grew {growth_mb:.1f} MB over {STREAMS} streams ending in errors "
        f"({growth_mb * 1024 / STREAMS:.1f} kB a stream)"
    )
