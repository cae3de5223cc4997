"""The seeded subset of the browser port's HTTP/2 frame-level fuzzer (``make fuzz`` runs the full one,
``tests/fuzz/h2_frames.py``): rapid reset, CONTINUATION, SETTINGS and PING floods, window abuse,
slow bodies, half-closed streams and random frames, each attack bounded in frames and seconds, at a
quarter of the full run's sizes. The rules are the gRPC fuzzer's: after every attack the port still
answers an ordinary call over HTTP/1.1 and HTTP/2; the server stays up, logs no error or traceback
(its SIGTERM included) and keeps its RSS within the bound once the attacks' connections close."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest
from fuzz.h2_frames import ATTACKS, FrameFuzzConfig, FrameFuzzReport, RawH2, logged_errors, probe, rapid_reset, run
from fuzz.server import ServerUnderTest, free_port

pytestmark = pytest.mark.timeout(240)

SUBSET = FrameFuzzConfig(attacks=40, seed=32, seconds=120, scale=0.25, warmup=8, rss_growth_mb=30)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> FrameFuzzReport:
    return run(SUBSET, tmp_path_factory.mktemp("h2-fuzz"))


def test_every_attack_leaves_the_port_answering_and_the_server_clean(report: FrameFuzzReport) -> None:
    assert not report.failures, report.summary()
    assert len(report.attacks) == SUBSET.attacks, report.summary()


def test_every_kind_of_attack_was_sent(report: FrameFuzzReport) -> None:
    sent = Counter(attack.kind for attack in report.attacks)
    assert set(sent) == set(ATTACKS), sent
    assert all(attack.frames > 0 for attack in report.attacks), report.summary()


def test_the_abusive_connections_are_ended_by_the_server(report: FrameFuzzReport) -> None:
    """What must not be served: resets past the server's bound end the connection (GOAWAY or a
    close), as do CONTINUATION frames that never end a header block and frames of random shape."""
    for kind in ("rapid_reset", "continuation_flood", "frame_salad"):
        reactions = [attack.reaction for attack in report.attacks if attack.kind == kind]
        assert reactions and all(r.startswith(("GOAWAY", "closed")) for r in reactions), (kind, reactions)


def test_abandoned_bodies_and_silent_streams_are_ended_by_the_server(report: FrameFuzzReport) -> None:
    """A body stopped half way and a stream that never sends its first message are the server's to
    end, at its body and deadline bounds (cut for the fuzzed server: ``SERVER_ARGS``)."""
    waiting = [a for a in report.attacks if a.kind == "slow_body" and _abandoned(a.variant)]
    waiting += [a for a in report.attacks if a.variant.startswith("left open and silent")]
    assert waiting, report.summary()
    assert all(attack.reaction.startswith(("answered", "RST:")) for attack in waiting), [
        (a.kind, a.variant, a.reaction, dict(a.seen)) for a in waiting
    ]


def _abandoned(variant: str) -> bool:
    """``"11 of 23 bytes, ..."``: the body stopped before its end."""
    sent, _, total = variant.split(" ", 3)[:3]
    return sent != total


def test_the_judge_fails_a_run_whose_server_stops_answering(tmp_path: Path) -> None:
    """The probe reports a port that answers nothing, and the log check reports an error line and a
    traceback: the rules can fail."""
    assert probe(free_port()).startswith("HTTP/1.1 call")
    assert logged_errors('{"level": "error", "event": "rpc"}\nTraceback (most recent call last):')
    assert not logged_errors('{"level": "info", "event": "rpc"}')


def test_a_rapid_reset_burst_is_ended_with_goaway(tmp_path: Path) -> None:
    """One attack alone, against a fresh server: a seeded burst of streams opened and reset at once."""
    port = free_port()
    with ServerUnderTest("aio", tmp_path, rss_cap_mb=1024, extra_args=("--web-port", str(port))) as server:
        server.wait_ready()
        h2 = RawH2(port, time.monotonic() + 8)
        try:
            rapid_reset(h2, random.Random(0), 1000 / 3000)
        finally:
            h2.close()
        assert any(key.startswith("GOAWAY") for key in h2.seen) or h2.seen["closed"], h2.seen
        assert probe(port) == ""
