"""Fuzz the browser port at the HTTP/2 frame level (``make fuzz``; a seeded subset in ``make test``).

    python tests/fuzz/h2_frames.py --attacks 400 --seed 1 --seconds 240

It starts ``bigtwo serve --web-port`` itself (:class:`fuzz.server.ServerUnderTest`) and sends
seeded attacks, each on connections of its own, built from raw frames with the stock ``h2``
family (``hyperframe`` frames, ``hpack`` header blocks; no project code on the client side):

* ``rapid_reset``: streams opened and reset at once, in bursts (CVE-2023-44487);
* ``continuation_flood``: a HEADERS frame without END_HEADERS and CONTINUATION frames that never end
  it (CVE-2024-27316 and kin), with garbage or an endless stream of valid header fields;
* ``settings_flood`` and ``ping_flood``: frames each of which the server must acknowledge, sent
  faster than they are read, with extreme and invalid values;
* ``window``: a zero initial window (the answer can never be sent), WINDOW_UPDATE floods of
  increment 1, a window pushed past 2^31-1, and a zero increment;
* ``slow_body``: a call's body dribbled a byte at a time, or stopped half way and left;
* ``half_closed``: streams the client ends at once (empty requests), and streams it never ends
  nor reads (a PlayStream left open, answers unread);
* ``frame_salad``: frames of random types, flags, stream ids and payloads after a valid preface.

Each attack is bounded in frames, bytes and seconds. The run fails (exit 1) on the gRPC fuzzer's
rules: the server no longer answers an ordinary call (Connect over HTTP/1.1 and over HTTP/2) within
its deadline after an attack (a hang), the server dies, it logs an error or a traceback, or its RSS
grows past the bound once the attacks' connections are closed. What the server did to each attack
(GOAWAY and its code, a reset, a close, nothing) is reported per kind: the findings.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import random
import socket
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import hpack
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

if __package__ in (None, ""):  # run as a script: make the package ``fuzz`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.server import ServerUnderTest, free_port

HOST = "127.0.0.1"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SERVICE = "/bigtwo.v1.BigTwoService/"
NAME_CARDS_JSON = b'{"ruleset":{"preset":"classic"},"cards":"9S 9H"}'
NAME_CARDS_PROTO = b"\n\t\n\x07classic\x12\x059S 9H"
"""NameCardsRequest{ruleset: {preset: classic}, cards: "9S 9H"} in protobuf binary."""
CANCEL = 0x8
BODY_SECONDS = 2
CALL_SECONDS = 4
SERVER_ARGS = ("--web-limit", f"body_seconds={BODY_SECONDS}", "--web-limit", f"call_seconds={CALL_SECONDS}")
"""The fuzzed server's body and deadline bounds, cut from 30 s and an hour so that an abandoned body
and a silent stream are ended by the server within one attack (and each such ending is checked)."""
ATTACK_SECONDS = 8.0
"""No attack runs longer than this (its connections are closed at the end of it)."""
PROBE_SECONDS = 10.0
"""An ordinary call after an attack must be answered within this: else the server hangs."""
GOAWAY_NAMES = {
    0: "NO_ERROR",
    1: "PROTOCOL_ERROR",
    2: "INTERNAL_ERROR",
    3: "FLOW_CONTROL_ERROR",
    4: "SETTINGS_TIMEOUT",
    6: "FRAME_SIZE_ERROR",
    7: "REFUSED_STREAM",
    9: "COMPRESSION_ERROR",
    11: "ENHANCE_YOUR_CALM",
}


# -- a raw HTTP/2 connection ------------------------------------------------------------------------


class RawH2:
    """One client connection that sends whatever frames it is given and reads what comes back,
    never blocking past ``deadline``."""

    def __init__(self, port: int, deadline: float) -> None:
        self.deadline = deadline
        self.sock = socket.create_connection((HOST, port), timeout=max(0.1, deadline - time.monotonic()))
        self.encoder = hpack.Encoder()
        self.buffer = b""
        self.seen: Counter[str] = Counter()
        """What the server sent: frame types, ``GOAWAY:<code>``, ``closed``."""
        self.closed = False
        self.port = port

    def send(self, *frames: Frame | bytes) -> bool:
        """Send frames (or raw bytes); False once the server has closed the connection."""
        data = b"".join(frame if isinstance(frame, bytes) else frame.serialize() for frame in frames)
        try:
            self.sock.settimeout(max(0.05, self.deadline - time.monotonic()))
            self.sock.sendall(data)
        except OSError:
            self.closed = True
            self.seen["closed"] += 1
        return not self.closed

    def start(self, settings: dict[int, int] | None = None) -> None:
        self.send(PREFACE, SettingsFrame(0, settings=settings or {}))

    def headers(self, stream: int, path: str, content_type: str, end_stream: bool, **extra: str) -> HeadersFrame:
        fields = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", f"{HOST}:{self.port}"),
            (":path", path),
            ("content-type", content_type),
            *extra.items(),
        ]
        frame = HeadersFrame(stream, data=self.encoder.encode(fields))
        frame.flags.add("END_HEADERS")
        if end_stream:
            frame.flags.add("END_STREAM")
        return frame

    def read(self, seconds: float, ack: bool = True) -> None:
        """Read for up to ``seconds`` (never past the deadline), acknowledging SETTINGS and PING
        when ``ack``; stops early when the server closes."""
        until = min(self.deadline, time.monotonic() + seconds)
        while not self.closed and time.monotonic() < until:
            self.sock.settimeout(max(0.01, until - time.monotonic()))
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                self.seen["closed"] += 1
                return
            self.buffer += chunk
            for frame in self._frames():
                self._note(frame, ack)

    def _frames(self) -> Iterator[Frame]:
        while len(self.buffer) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
            if len(self.buffer) < 9 + length:
                return
            with contextlib.suppress(Exception):  # a frame hyperframe cannot read is only counted
                frame.parse_body(memoryview(self.buffer[9 : 9 + length]))
            self.buffer = self.buffer[9 + length :]
            yield frame

    def _note(self, frame: Frame, ack: bool) -> None:
        kind = type(frame).__name__.removesuffix("Frame")
        self.seen[kind] += 1
        if isinstance(frame, GoAwayFrame):
            self.seen[f"GOAWAY:{GOAWAY_NAMES.get(frame.error_code, frame.error_code)}"] += 1
        elif isinstance(frame, RstStreamFrame):
            self.seen[f"RST:{GOAWAY_NAMES.get(frame.error_code, frame.error_code)}"] += 1
        elif ack and isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.send(SettingsFrame(0, flags=["ACK"]))
        elif ack and isinstance(frame, PingFrame) and "ACK" not in frame.flags:
            self.send(PingFrame(0, opaque_data=frame.opaque_data, flags=["ACK"]))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def read_until_answered(h2: RawH2, seconds: float) -> None:
    """Read until the server answers a stream (HEADERS), resets it or closes, for at most ``seconds``."""
    until = min(h2.deadline, time.monotonic() + seconds)
    while not h2.closed and time.monotonic() < until and not (h2.seen["Headers"] or h2.seen["RstStream"]):
        h2.read(min(0.2, until - time.monotonic()))


def envelope(message: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + len(message).to_bytes(4, "big") + message


# -- the attacks ------------------------------------------------------------------------------------


@dataclass
class Attack:
    """One attack as sent, and what the server did to it."""

    index: int
    kind: str
    variant: str
    frames: int = 0
    seconds: float = 0.0
    seen: Counter[str] = field(default_factory=Counter)

    @property
    def reaction(self) -> str:
        goaway = sorted(key for key in self.seen if key.startswith("GOAWAY:"))
        if goaway:
            return ",".join(goaway)
        resets = ",".join(sorted(key for key in self.seen if key.startswith("RST:")))
        if self.seen["Headers"] or self.seen["Data"]:  # a reset after an answer ends an unread request
            return f"answered, then {resets}" if resets else "answered"
        if resets:
            return resets
        if self.seen["closed"]:
            return "closed"
        return "nothing (connection kept)"


def rapid_reset(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    streams = int(rng.randint(200, 3000) * scale) or 1
    burst = rng.choice((1, 10, 100, 500))
    h2.start()
    sent = 0
    for stream in range(1, 2 * streams, 2):
        if not h2.send(
            h2.headers(stream, SERVICE + "NameCards", "application/proto", False), RstStreamFrame(stream, CANCEL)
        ):
            break
        sent += 2
        if sent % (2 * burst) == 0:
            h2.read(0.0)
        if time.monotonic() > h2.deadline:
            break
    h2.read(0.5)
    return f"{streams} streams, bursts of {burst}", sent


def continuation_flood(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    h2.start()
    frames = int(rng.randint(500, 20000) * scale) or 1
    valid = rng.random() < 0.5
    first = HeadersFrame(1, data=h2.encoder.encode([(":method", "POST"), (":path", SERVICE + "NameCards")]))
    h2.send(first)
    sent = 1
    for n in range(frames):
        if valid:  # an endless list of real header fields: the decoder's table and the list grow
            fragment = h2.encoder.encode([(f"x-flood-{n % 97}", "v" * rng.randint(1, 200))])
        else:
            fragment = rng.randbytes(rng.randint(1, 1024))
        if not h2.send(ContinuationFrame(1, data=fragment)):
            break
        sent += 1
        if n % 200 == 0:
            h2.read(0.0)
        if time.monotonic() > h2.deadline:
            break
    h2.read(0.5)
    return f"{frames} CONTINUATION ({'header fields' if valid else 'garbage'})", sent


def settings_flood(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    h2.start()
    frames = int(rng.randint(1000, 30000) * scale) or 1
    extreme = rng.random() < 0.3
    sent = 0
    for _ in range(frames):
        if extreme:  # values at and past the limits RFC 9113 sets (past them: a connection error)
            settings = {
                rng.choice((1, 2, 3, 4, 5, 6, 8, 9, 0x77)): rng.choice((0, 1, 2**14 - 1, 2**24, 2**31, 2**32 - 1))
            }
        else:
            settings = {SettingsFrame.HEADER_TABLE_SIZE: rng.randint(0, 65536)}
        if not h2.send(SettingsFrame(0, settings=settings)):
            break
        sent += 1
        if time.monotonic() > h2.deadline:
            break
    h2.read(0.5, ack=False)
    return f"{frames} SETTINGS, unread ({'extreme values' if extreme else 'table sizes'})", sent


def ping_flood(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    h2.start()
    frames = int(rng.randint(1000, 50000) * scale) or 1
    sent = 0
    for n in range(frames):
        if not h2.send(PingFrame(0, opaque_data=n.to_bytes(8, "big"))):
            break
        sent += 1
        if time.monotonic() > h2.deadline:
            break
    h2.read(0.5, ack=False)
    return f"{frames} PING, unread", sent


def window(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    variant = rng.choice(("zero window", "update flood", "overflow", "zero increment"))
    h2.start({SettingsFrame.INITIAL_WINDOW_SIZE: 0} if variant == "zero window" else None)
    sent = 1
    if variant == "zero window":  # several calls whose answers can never be sent, left open
        for stream in range(1, 2 * rng.randint(1, 50), 2):
            h2.send(
                h2.headers(stream, SERVICE + "NameCards", "application/json", False),
                DataFrame(stream, NAME_CARDS_JSON, flags=["END_STREAM"]),
            )
            sent += 2
        h2.read(min(3.0, h2.deadline - time.monotonic()))
    elif variant == "update flood":
        h2.send(h2.headers(1, SERVICE + "NameCards", "application/json", True))
        frames = int(rng.randint(1000, 40000) * scale) or 1
        for _ in range(frames):
            if not h2.send(WindowUpdateFrame(rng.choice((0, 1)), window_increment=1)):
                break
            sent += 1
            if time.monotonic() > h2.deadline:
                break
        h2.read(0.5)
    else:
        h2.send(h2.headers(1, SERVICE + "NameCards", "application/json", False))
        increment = 0 if variant == "zero increment" else 2**31 - 1
        for _ in range(2):
            h2.send(WindowUpdateFrame(rng.choice((0, 1)), window_increment=increment))
            sent += 1
        h2.read(1.0)
    return variant, sent


def slow_body(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    h2.start()
    body = envelope(NAME_CARDS_PROTO)
    stop = rng.choice((len(body), len(body) // 2, 1))
    gap = rng.choice((0.05, 0.2, 0.5))
    h2.send(
        h2.headers(1, SERVICE + "NameCards", "application/grpc-web+proto", False, **{"content-length": str(len(body))})
    )
    sent = 1
    for offset in range(stop):
        if not h2.send(DataFrame(1, body[offset : offset + 1])):
            break
        sent += 1
        h2.read(gap)
        if time.monotonic() > h2.deadline:
            break
    if stop == len(body):
        h2.send(DataFrame(1, b"", flags=["END_STREAM"]))
    # An abandoned body is the server's to end: within the fuzzed server's body_seconds (SERVER_ARGS).
    read_until_answered(h2, 1.0 if stop == len(body) else BODY_SECONDS + 2)
    return f"{stop} of {len(body)} bytes, one each {gap} s", sent


def half_closed(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    variant = rng.choice(("ended at once", "left open and silent"))
    h2.start({SettingsFrame.INITIAL_WINDOW_SIZE: rng.choice((0, 1, 65535))})
    streams = int(rng.randint(5, 90) * scale) or 1
    sent = 0
    for stream in range(1, 2 * streams, 2):
        if variant == "ended at once":
            path = SERVICE + rng.choice(("PlayStream", "NameCards", "Deal"))
            sent += h2.send(
                h2.headers(stream, path, rng.choice(("application/connect+proto", "application/grpc-web+proto")), True)
            )
        else:  # no message and no end: the stream waits for its open until the call's deadline cap
            sent += h2.send(h2.headers(stream, SERVICE + "PlayStream", "application/connect+proto", False))
    if variant == "ended at once":
        h2.read(min(2.0, h2.deadline - time.monotonic()), ack=rng.random() < 0.5)
    else:  # silent streams are the server's to end: at the fuzzed server's call_seconds (SERVER_ARGS)
        read_until_answered(h2, CALL_SECONDS + 2)
    return f"{variant}, {streams} streams", sent


FRAME_TYPES = (*range(11), 0x77)
"""Every frame type RFC 9113 names, and one it does not (to be ignored)."""


def frame_salad(h2: RawH2, rng: random.Random, scale: float) -> tuple[str, int]:
    h2.start()
    frames = int(rng.randint(10, 400) * scale) or 1
    sent = 0
    for _ in range(frames):
        payload = rng.randbytes(rng.choice((0, 1, 4, 5, 8, 9, 64, 1000)))
        kind = rng.choice(FRAME_TYPES)
        stream = rng.choice((0, 1, 2, 3, 2**31 - 1, rng.randint(0, 2**31 - 1)))
        header = len(payload).to_bytes(3, "big") + bytes([kind, rng.randint(0, 255)]) + stream.to_bytes(4, "big")
        if not h2.send(header + payload):
            break
        sent += 1
    h2.read(0.5)
    return f"{frames} random frames", sent


ATTACKS: dict[str, Callable[[RawH2, random.Random, float], tuple[str, int]]] = {
    "rapid_reset": rapid_reset,
    "continuation_flood": continuation_flood,
    "settings_flood": settings_flood,
    "ping_flood": ping_flood,
    "window": window,
    "slow_body": slow_body,
    "half_closed": half_closed,
    "frame_salad": frame_salad,
}


# -- the probe and the run --------------------------------------------------------------------------


def probe(port: int) -> str:
    """An ordinary call over HTTP/1.1 and one over HTTP/2; "" when both are answered, else why not."""
    try:
        connection = http.client.HTTPConnection(HOST, port, timeout=PROBE_SECONDS)
        connection.request("POST", SERVICE + "NameCards", NAME_CARDS_JSON, {"content-type": "application/json"})
        response = connection.getresponse()
        if response.status != 200 or b"Pair 9" not in response.read():
            return f"HTTP/1.1 call answered {response.status}"
        connection.close()
    except OSError as error:
        return f"HTTP/1.1 call: {type(error).__name__}: {error}"
    h2 = RawH2(port, time.monotonic() + PROBE_SECONDS)
    try:
        h2.start()
        h2.send(
            h2.headers(1, SERVICE + "NameCards", "application/json", False),
            DataFrame(1, NAME_CARDS_JSON, flags=["END_STREAM"]),
        )
        while not h2.closed and time.monotonic() < h2.deadline and not h2.seen["Data"]:
            h2.read(0.2)
        return "" if h2.seen["Data"] else f"HTTP/2 call not answered: {dict(h2.seen)}"
    except OSError as error:
        return f"HTTP/2 call: {type(error).__name__}: {error}"
    finally:
        h2.close()


@dataclass
class FrameFuzzReport:
    attacks: list[Attack] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    rss_baseline_kb: int = 0
    rss_end_kb: int = 0
    rss_peak_kb: int = 0
    seconds: float = 0.0

    @property
    def rss_growth_mb(self) -> float:
        return (self.rss_end_kb - self.rss_baseline_kb) / 1024

    def summary(self) -> str:
        reactions: dict[str, Counter[str]] = defaultdict(Counter)
        frames: Counter[str] = Counter()
        for attack in self.attacks:
            reactions[attack.kind][attack.reaction] += 1
            frames[attack.kind] += attack.frames
        lines = [f"== HTTP/2 frame fuzz: {len(self.attacks)} attacks in {self.seconds:.1f} s"]
        for kind, counter in sorted(reactions.items()):
            told = ", ".join(f"{reaction} {count}" for reaction, count in counter.most_common())
            lines.append(f"{kind:<20} {sum(counter.values()):>4} attacks, {frames[kind]:>8} frames: {told}")
        lines.append(
            f"RSS: baseline {self.rss_baseline_kb / 1024:.0f} MB, peak {self.rss_peak_kb / 1024:.0f} MB, "
            f"end {self.rss_end_kb / 1024:.0f} MB (growth {self.rss_growth_mb:+.1f} MB)"
        )
        lines += [f"FAILURE: {failure}" for failure in self.failures] or ["no failures"]
        return "\n".join(lines)


@dataclass(frozen=True)
class FrameFuzzConfig:
    attacks: int = 60
    seed: int = 1
    seconds: float = 120
    scale: float = 0.25
    """Multiplies each attack's frame count (the seeded subset of make test sends a quarter)."""
    warmup: int = 8
    rss_growth_mb: float = 30
    mode: str = "aio"


def run(config: FrameFuzzConfig, workdir: Path) -> FrameFuzzReport:
    report = FrameFuzzReport()
    web_port = free_port()
    started = time.monotonic()
    kinds = sorted(ATTACKS)
    with ServerUnderTest(
        config.mode, workdir, rss_cap_mb=2048, extra_args=("--web-port", str(web_port), *SERVER_ARGS)
    ) as server:
        server.wait_ready()
        if why := probe(web_port):
            report.failures.append(f"before any attack: {why}")
            return report
        for index in range(config.attacks):
            if time.monotonic() - started > config.seconds or not server.alive():
                break
            if index == min(config.warmup, config.attacks - 1):
                time.sleep(1.0)
                report.rss_baseline_kb = server.rss_kb()
                server.watch.peak_kb = report.rss_baseline_kb
            rng = random.Random(f"{config.seed}:{index}")
            kind = kinds[index % len(kinds)] if index < len(kinds) else rng.choice(kinds)
            attack = Attack(index, kind, "")
            h2 = RawH2(web_port, time.monotonic() + ATTACK_SECONDS)
            began = time.monotonic()
            try:
                attack.variant, attack.frames = ATTACKS[kind](h2, rng, config.scale)
            except OSError as error:  # the server may close at any point: that is a reaction, not a failure
                attack.variant = f"{type(error).__name__}"
            finally:
                attack.seen = h2.seen
                h2.close()
            attack.seconds = time.monotonic() - began
            report.attacks.append(attack)
            if why := probe(web_port):
                report.failures.append(f"attack {index} ({kind}: {attack.variant}) left the port unanswering: {why}")
                break
        time.sleep(2.0)  # the attacks' connections are closed: what they held must be let go
        report.rss_end_kb = server.rss_kb()
        report.rss_peak_kb = server.watch.peak_kb
        if not server.alive():
            report.failures.append(f"the server died:\n{server.log_tail(15)}")
        elif report.rss_baseline_kb and report.rss_growth_mb > config.rss_growth_mb:
            report.failures.append(f"RSS grew {report.rss_growth_mb:.1f} MB (bound {config.rss_growth_mb:g} MB)")
        code = server.stop()  # SIGTERM: the drain after the attacks is checked too
        if code != 0:
            report.failures.append(f"the server did not stop cleanly at SIGTERM (exit {code})")
        report.failures += logged_errors(server.log_path.read_text(errors="replace"))
    report.seconds = time.monotonic() - started
    return report


def logged_errors(log: str) -> list[str]:
    """The server's error lines and tracebacks (an attack may be refused, never crash anything)."""
    found = []
    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            if "Traceback" in line or "Error" in line:
                found.append(f"server printed: {line[:300]}")
            continue
        if isinstance(entry, dict) and entry.get("level") in ("error", "critical"):
            found.append(f"server logged an error: {line[:400]}")
    return found[:20]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--attacks", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=240, help="no attack starts after this")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies each attack's frame count")
    parser.add_argument("--rss-growth-mb", type=float, default=50)
    parser.add_argument("--mode", choices=("aio",), default="aio")  # the one server mode (issue 34)
    parser.add_argument("--workdir", type=Path, help="keep the server's log here")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bigtwo-h2-fuzz-"))
    failed = False
    for mode in (args.mode,):
        config = FrameFuzzConfig(
            attacks=args.attacks,
            seed=args.seed,
            seconds=args.seconds,
            scale=args.scale,
            rss_growth_mb=args.rss_growth_mb,
            mode=mode,
            warmup=max(8, args.attacks // 10),
        )
        folder = workdir / mode
        folder.mkdir(parents=True, exist_ok=True)
        report = run(config, folder)
        print(f"[{mode}] " + report.summary(), flush=True)
        failed = failed or bool(report.failures)
    if failed:
        print(f"server logs kept in {workdir}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
