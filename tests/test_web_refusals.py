"""Issue 32, item 3: every malformed request to the browser port is answered in its own protocol
(Connect error JSON with Connect's HTTP status; gRPC-Web and gRPC trailers-only, ``grpc-status`` in
the headers) with a code of docs/SERVICE.md's error model, and is logged and counted as a call with
its ``protocol`` label. Sent from outside with raw HTTP/1.1 (``http.client``) and raw HTTP/2 (the
stock ``h2`` package), 127.0.0.1 only, each read bounded in time."""

from __future__ import annotations

import base64
import http.client
import inspect
import json
import socket
import struct
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import pytest
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.rpc import error_details_pb2
from service_support import ServerProcess, free_port

pytestmark = pytest.mark.timeout(180)

SERVICE = "/bigtwo.v1.BigTwoService/"
NAME_CARDS = SERVICE + "NameCards"
STREAM = SERVICE + "PlayStream"
REQUEST = api.NameCardsRequest(ruleset=pb.Ruleset(preset="classic"), cards="9S 9H").SerializeToString()
READ_SECONDS = 10.0
MODEL = {"OK", "INVALID_ARGUMENT", "UNIMPLEMENTED", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"}
"""The codes these requests may get (docs/SERVICE.md's table)."""
GRPC_CODES = {
    0: "OK",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    2: "UNKNOWN",
}
CONNECT_HTTP = {"invalid_argument": 400, "unimplemented": 501, "resource_exhausted": 429, "deadline_exceeded": 504}
"""Connect's HTTP status for each code (the Connect protocol's table)."""

GRPC_WEB = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
CONNECT_JSON = {"content-type": "application/json", "connect-protocol-version": "1"}
CONNECT_STREAM = {"content-type": "application/connect+proto", "connect-protocol-version": "1"}
GRPC = {"content-type": "application/grpc", "te": "trailers"}


def frame(data: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + struct.pack(">I", len(data)) + data


@dataclass(frozen=True)
class Answer:
    """What came back, read by the protocol's own rules: the status code's name and the HTTP status."""

    code: str
    http_status: int
    message: str


def read_answer(protocol: str, status: int, headers: dict[str, str], body: bytes, trailers: dict[str, str]) -> Answer:
    if protocol == "connect-unary":
        if status == 200:
            return Answer("OK", status, "")
        assert headers.get("content-type") == "application/json", (status, headers, body[:200])
        error = json.loads(body)
        return Answer(error["code"].upper(), status, error.get("message", ""))
    if protocol == "connect-stream":
        assert status == 200, (status, body[:200])
        offset = 0
        while offset + 5 <= len(body):  # the end-of-stream message (flag 0x02) carries the error
            flags, length = body[offset], struct.unpack(">I", body[offset + 1 : offset + 5])[0]
            if flags & 0x02:
                end = json.loads(body[offset + 5 : offset + 5 + length])
                error = end.get("error")
                return Answer(
                    error["code"].upper() if error else "OK", status, error.get("message", "") if error else ""
                )
            offset += 5 + length
        raise AssertionError(f"no end-of-stream message in {body[:200]!r}")
    assert status == 200, (protocol, status, headers, body[:200])
    found = headers.get("grpc-status") or trailers.get("grpc-status")
    message = headers.get("grpc-message") or trailers.get("grpc-message", "")
    if found is None and protocol == "grpc-web":
        offset = 0
        while offset + 5 <= len(body):  # the trailer frame (flag 0x80)
            flags, length = body[offset], struct.unpack(">I", body[offset + 1 : offset + 5])[0]
            if flags & 0x80:
                lines = body[offset + 5 : offset + 5 + length].decode().split("\r\n")
                fields = dict(line.split(":", 1) for line in lines if ":" in line)
                found, message = fields.get("grpc-status", "").strip(), fields.get("grpc-message", "").strip()
            offset += 5 + length
    assert found is not None and found.isdigit(), (protocol, headers, trailers, body[:200])
    return Answer(GRPC_CODES.get(int(found), f"STATUS_{found}"), status, message)


def http1(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=READ_SECONDS)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def http2(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None, authority: str | None = None
) -> tuple[int, dict[str, str], bytes, dict[str, str]]:
    """One request on a fresh HTTP/2 connection (prior knowledge), read until its stream ends."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=READ_SECONDS)
    try:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        conn.initiate_connection()
        stream = conn.get_next_available_stream_id()
        pseudo = [
            (":method", method),
            (":path", path),
            (":scheme", "http"),
            (":authority", authority or f"127.0.0.1:{port}"),
        ]
        conn.send_headers(stream, pseudo + list(headers.items()), end_stream=not body)
        if body:
            conn.send_data(stream, body, end_stream=True)
        sock.sendall(conn.data_to_send())
        status, answer_headers, data, trailers = 0, {}, b"", {}
        deadline = time.monotonic() + READ_SECONDS
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            ended = False
            for event in conn.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived):
                    answer_headers = dict(event.headers)
                    status = int(answer_headers[":status"])
                elif isinstance(event, h2.events.DataReceived):
                    data += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.TrailersReceived):
                    trailers = dict(event.headers)
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset, h2.events.ConnectionTerminated)):
                    ended = True
            sock.sendall(conn.data_to_send())
            if ended:
                break
        return status, answer_headers, data, trailers
    finally:
        sock.close()


# (name, transport, protocol the answer is read in, HTTP method, path, headers, body, code)
SHAPES = [
    (
        "grpc-web compressed flag, no grpc-encoding",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        GRPC_WEB,
        frame(REQUEST, 1),
        "INVALID_ARGUMENT",
    ),
    (
        "grpc-web gzip flagged, not gzip",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {**GRPC_WEB, "grpc-encoding": "gzip"},
        frame(REQUEST, 1),
        "INVALID_ARGUMENT",
    ),
    (
        "grpc-web unknown grpc-encoding",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {**GRPC_WEB, "grpc-encoding": "br"},
        frame(REQUEST, 1),
        "UNIMPLEMENTED",
    ),
    (
        "grpc-web envelope flags 0x02",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        GRPC_WEB,
        frame(REQUEST, 2),
        "INVALID_ARGUMENT",
    ),
    ("grpc-web truncated frame", 1, "grpc-web", "POST", NAME_CARDS, GRPC_WEB, frame(REQUEST)[:-3], "INVALID_ARGUMENT"),
    ("grpc-web 3-byte body", 1, "grpc-web", "POST", NAME_CARDS, GRPC_WEB, b"\x00\x00\x00", "INVALID_ARGUMENT"),
    (
        "grpc-web length over the limit",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        GRPC_WEB,
        b"\x00\xff\xff\xff\xff" + REQUEST,
        "RESOURCE_EXHAUSTED",
    ),
    ("grpc-web two messages, unary", 1, "grpc-web", "POST", NAME_CARDS, GRPC_WEB, frame(REQUEST) * 2, "UNIMPLEMENTED"),
    ("grpc-web no message, unary", 1, "grpc-web", "POST", NAME_CARDS, GRPC_WEB, b"", "UNIMPLEMENTED"),
    (
        "grpc-web bad grpc-timeout",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {**GRPC_WEB, "grpc-timeout": "1X"},
        frame(REQUEST),
        "INVALID_ARGUMENT",
    ),
    (
        "grpc-web grpc-timeout too long",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {**GRPC_WEB, "grpc-timeout": "999999999S"},
        frame(REQUEST),
        "INVALID_ARGUMENT",
    ),
    ("grpc-web unknown method", 1, "grpc-web", "POST", SERVICE + "Nope", GRPC_WEB, frame(REQUEST), "UNIMPLEMENTED"),
    ("grpc-web unknown service", 1, "grpc-web", "POST", "/foo.Bar/Baz", GRPC_WEB, frame(REQUEST), "UNIMPLEMENTED"),
    ("grpc-web GET", 1, "grpc-web", "GET", NAME_CARDS, GRPC_WEB, None, "UNIMPLEMENTED"),
    ("grpc-web PUT", 1, "grpc-web", "PUT", NAME_CARDS, GRPC_WEB, frame(REQUEST), "UNIMPLEMENTED"),
    (
        "grpc-web-text",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {"content-type": "application/grpc-web-text"},
        b"AAAAAAA=",
        "UNIMPLEMENTED",
    ),
    (
        "grpc-web unknown codec",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {"content-type": "application/grpc-web+xml"},
        frame(REQUEST),
        "UNIMPLEMENTED",
    ),
    (
        "grpc-web+json bad JSON",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {"content-type": "application/grpc-web+json"},
        frame(b"{no"),
        "INVALID_ARGUMENT",
    ),
    (
        "grpc-web bad base64 in a -bin header",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {**GRPC_WEB, "x-thing-bin": "!!!"},
        frame(REQUEST),
        "OK",
    ),
    ("grpc over HTTP/1.1", 1, "grpc", "POST", NAME_CARDS, GRPC, frame(REQUEST), "UNIMPLEMENTED"),
    ("grpc unknown method, HTTP/2", 2, "grpc", "POST", SERVICE + "Nope", GRPC, frame(REQUEST), "UNIMPLEMENTED"),
    ("connect bad JSON", 1, "connect-unary", "POST", NAME_CARDS, CONNECT_JSON, b"{no", "INVALID_ARGUMENT"),
    (
        "connect text/plain",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {"content-type": "text/plain"},
        b"x",
        "UNIMPLEMENTED",
    ),
    ("connect no content-type", 1, "connect-unary", "POST", NAME_CARDS, {}, b"x", "UNIMPLEMENTED"),
    (
        "connect stream content type on a unary method",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        CONNECT_STREAM,
        frame(REQUEST),
        "UNIMPLEMENTED",
    ),
    ("connect unknown method", 1, "connect-unary", "POST", SERVICE + "Nope", CONNECT_JSON, b"{}", "UNIMPLEMENTED"),
    ("connect GET", 1, "connect-unary", "GET", NAME_CARDS + "?encoding=json&message=%7B%7D", {}, None, "UNIMPLEMENTED"),
    ("connect DELETE", 1, "connect-unary", "DELETE", NAME_CARDS, CONNECT_JSON, None, "UNIMPLEMENTED"),
    (
        "connect timeout not digits",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {**CONNECT_JSON, "connect-timeout-ms": "-5"},
        b"{}",
        "INVALID_ARGUMENT",
    ),
    (
        "connect timeout over 10 digits",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {**CONNECT_JSON, "connect-timeout-ms": "12345678901"},
        b"{}",
        "INVALID_ARGUMENT",
    ),
    (
        "connect protocol version 2",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {**CONNECT_JSON, "connect-protocol-version": "2"},
        b"{}",
        "INVALID_ARGUMENT",
    ),
    (
        "connect unknown content-encoding",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {**CONNECT_JSON, "content-encoding": "br"},
        b"{}",
        "UNIMPLEMENTED",
    ),
    (
        "connect gzip that is not",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {**CONNECT_JSON, "content-encoding": "gzip"},
        b"no",
        "INVALID_ARGUMENT",
    ),
    (
        "connect deadline of 0 ms",
        1,
        "connect-unary",
        "POST",
        NAME_CARDS,
        {**CONNECT_JSON, "connect-timeout-ms": "0"},
        b"{}",
        "DEADLINE_EXCEEDED",
    ),
    (
        "POST to the table's path",
        1,
        "connect-unary",
        "POST",
        "/",
        {"content-type": "text/plain"},
        b"x",
        "UNIMPLEMENTED",
    ),
    (
        "grpc-web deadline of 0",
        1,
        "grpc-web",
        "POST",
        NAME_CARDS,
        {**GRPC_WEB, "grpc-timeout": "0m"},
        frame(REQUEST),
        "DEADLINE_EXCEEDED",
    ),
    (
        "connect stream compressed flag",
        2,
        "connect-stream",
        "POST",
        STREAM,
        CONNECT_STREAM,
        frame(b"", 1),
        "INVALID_ARGUMENT",
    ),
    (
        "connect stream envelope flags 0x04",
        2,
        "connect-stream",
        "POST",
        STREAM,
        CONNECT_STREAM,
        frame(b"", 4),
        "INVALID_ARGUMENT",
    ),
    (
        "connect stream truncated frame",
        2,
        "connect-stream",
        "POST",
        STREAM,
        CONNECT_STREAM,
        frame(b"\x0a\x00")[:-1],
        "INVALID_ARGUMENT",
    ),
    (
        "connect stream unknown encoding",
        2,
        "connect-stream",
        "POST",
        STREAM,
        {**CONNECT_STREAM, "connect-content-encoding": "br"},
        frame(b""),
        "UNIMPLEMENTED",
    ),
    ("grpc-web stream compressed flag", 2, "grpc-web", "POST", STREAM, GRPC_WEB, frame(b"", 1), "INVALID_ARGUMENT"),
    (
        "grpc-web stream truncated frame",
        2,
        "grpc-web",
        "POST",
        STREAM,
        GRPC_WEB,
        frame(b"\x0a\x00")[:-1],
        "INVALID_ARGUMENT",
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, int]]:
    web_port = free_port()
    process = ServerProcess(tmp_path_factory.mktemp("refusals"), "--web-port", str(web_port))
    try:
        yield process, web_port
    finally:
        process.terminate()


def send(
    port: int, transport: int, protocol: str, method: str, path: str, headers: dict[str, str], body: bytes | None
) -> Answer:
    if transport == 1:
        status, answer_headers, data = http1(port, method, path, headers, body)
        return read_answer(protocol, status, answer_headers, data, {})
    return read_answer(protocol, *http2(port, method, path, headers, body))


@pytest.mark.parametrize(
    ("name", "transport", "protocol", "method", "path", "headers", "body", "code"), SHAPES, ids=[s[0] for s in SHAPES]
)
def test_each_malformed_request_gets_its_protocols_error_in_the_model(
    server: tuple[ServerProcess, int],
    name: str,
    transport: int,
    protocol: str,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None,
    code: str,
) -> None:
    answer = send(server[1], transport, protocol, method, path, headers, body)
    assert answer.code == code, answer
    assert answer.code in MODEL
    if protocol == "connect-unary" and code != "OK":
        assert answer.http_status == CONNECT_HTTP[code.lower()], answer  # Connect's own status for the code
    if code != "OK":
        assert answer.message, answer


def _calls(metrics_port: int) -> dict[tuple[str, str, str], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=READ_SECONDS) as response:
        text = response.read().decode()
    found: dict[tuple[str, str, str], float] = {}
    for line in text.splitlines():
        if line.startswith("bigtwo_rpc_calls_total{"):
            labels = dict(part.split("=", 1) for part in line[line.index("{") + 1 : line.index("}")].split(","))
            key = (labels["method"].strip('"'), labels["code"].strip('"'), labels["protocol"].strip('"'))
            found[key] = float(line.rsplit(" ", 1)[1])
    return found


def test_refusals_are_counted_with_their_protocol_and_logged(server: tuple[ServerProcess, int]) -> None:
    """The runtime's refusals are calls like any other: a log line each (``via``, the code, the
    reason in words) and ``bigtwo_rpc_calls_total`` by method, code and protocol; a path naming no
    method counts as ``(unknown)``, never as a label the client made up; no error in the log."""
    process, port = server
    before = _calls(process.metrics_port)
    sent = [
        ("NameCards", "INVALID_ARGUMENT", "grpc_web", (1, "grpc-web", "POST", NAME_CARDS, GRPC_WEB, frame(REQUEST, 1))),
        ("NameCards", "UNIMPLEMENTED", "grpc", (1, "grpc", "POST", NAME_CARDS, GRPC, frame(REQUEST))),
        (
            "NameCards",
            "UNIMPLEMENTED",
            "connect",
            (1, "connect-unary", "POST", NAME_CARDS, {"content-type": "text/plain"}, b"x"),
        ),
        ("(unknown)", "UNIMPLEMENTED", "connect", (1, "connect-unary", "POST", "/made.Up/Name", CONNECT_JSON, b"{}")),
        (
            "PlayStream",
            "INVALID_ARGUMENT",
            "connect",
            (2, "connect-stream", "POST", STREAM, CONNECT_STREAM, frame(b"", 1)),
        ),
    ]
    for _, _, _, request in sent:
        send(port, *request)
    after = _calls(process.metrics_port)
    for method, code, protocol, _ in sent:
        key = (method, code, protocol)
        assert after.get(key, 0) - before.get(key, 0) >= 1, (key, after.get(key), before.get(key))
    assert not [
        key
        for key in after
        if key[0] not in ("(unknown)", *api.DESCRIPTOR.services_by_name["BigTwoService"].methods_by_name)
    ]
    log = process.log()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    refused = [line for line in lines if line.get("event") == "rpc" and line.get("code") == "UNIMPLEMENTED"]
    assert any(line.get("via") == "grpc" and "HTTP/2" in line.get("error", "") for line in refused), refused[-5:]
    assert any(line.get("method") == "(unknown)" for line in refused)
    assert not [line for line in lines if line.get("level") in ("error", "critical")], log[-2000:]
    assert "Traceback" not in log


def test_the_server_still_answers_after_every_shape(server: tuple[ServerProcess, int], tmp_path: Path) -> None:
    """No shape above leaves the port unable to answer an ordinary call."""
    status, _, body = http1(
        server[1], "POST", NAME_CARDS, CONNECT_JSON, b'{"ruleset":{"preset":"classic"},"cards":"9S 9H"}'
    )
    assert status == 200 and json.loads(body)["name"] == "Pair 9"


def test_a_call_from_a_foreign_host_is_refused_in_its_protocol_counted_and_logged(
    server: tuple[ServerProcess, int],
) -> None:
    """DNS rebinding: a call naming a ``Host`` (``:authority``) the port does not answer is
    ``PERMISSION_DENIED`` with ``ErrorInfo`` ``HOST_NOT_ALLOWED``, in its own protocol (Connect
    error JSON with Connect's 403; gRPC-Web trailers-only), logged and counted with its protocol;
    the handler never runs. A file of the table is refused ``421`` (plain text)."""
    process, port = server
    before = _calls(process.metrics_port)
    foreign = "evil.example"
    status, headers, body = http1(port, "POST", NAME_CARDS, {**CONNECT_JSON, "Host": foreign}, b"{}")
    answer = read_answer("connect-unary", status, headers, body, {})
    assert (answer.code, answer.http_status) == ("PERMISSION_DENIED", 403), answer
    detail = json.loads(body)["details"][0]
    assert detail["type"] == "google.rpc.ErrorInfo", detail
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(detail["value"] + "=="))
    assert info.reason == "HOST_NOT_ALLOWED", info
    answer = read_answer("grpc-web", *http2(port, "POST", NAME_CARDS, GRPC_WEB, frame(REQUEST), authority=foreign))
    assert answer.code == "PERMISSION_DENIED" and "evil.example" in urllib.parse.unquote(answer.message), answer
    answer = read_answer("grpc-web", *http2(port, "POST", STREAM, GRPC_WEB, frame(b""), authority=foreign))
    assert answer.code == "PERMISSION_DENIED", answer
    assert http1(port, "GET", "/", {"Host": foreign}, None)[0] == 421
    assert http1(port, "POST", NAME_CARDS, {**CONNECT_JSON, "Host": f"127.0.0.1:{port}"}, b"{}")[0] != 403
    after = _calls(process.metrics_port)
    for key, count in (
        (("NameCards", "PERMISSION_DENIED", "connect"), 1),
        (("NameCards", "PERMISSION_DENIED", "grpc_web"), 1),
        (("PlayStream", "PERMISSION_DENIED", "grpc_web"), 1),
    ):
        assert after.get(key, 0) - before.get(key, 0) == count, (key, after.get(key), before.get(key))
    lines = [json.loads(line) for line in process.log().splitlines() if line.startswith("{")]
    refused = [line for line in lines if line.get("event") == "rpc" and line.get("code") == "PERMISSION_DENIED"]
    assert {line.get("via") for line in refused} >= {"connect", "grpc-web"}, refused
    assert all("evil.example" in line.get("error", "") for line in refused), refused


def test_the_runtime_privates_the_port_overrides_keep_their_shape() -> None:
    """service/web_refusals.py overrides two private methods of connectrpc's ASGI application and
    builds three of its private classes (the runtime has no public hook for its early refusals):
    a release that renames or reshapes any of them must fail here, not answer a refusal outside the
    error model in production."""
    from bigtwo.service.web_refusals import ErrorModelApplication
    from connectrpc._protocol import HTTPError
    from connectrpc._protocol_grpc import GRPCServerProtocol, GRPCWebServerProtocol
    from connectrpc._server_async import _ResponseSender
    from connectrpc.server import ConnectASGIApplication

    def parameters(function: Callable[..., object]) -> list[str]:
        return list(inspect.signature(function).parameters)

    overridden = {
        "_handle_request": ["self", "scope", "receive", "send", "endpoints"],
        "_handle_error": ["self", "exc", "ctx", "protocol", "send"],
    }
    for name, expected in overridden.items():
        assert parameters(getattr(ConnectASGIApplication, name)) == expected, name
        assert parameters(getattr(ErrorModelApplication, name)) == expected, name
        assert inspect.iscoroutinefunction(getattr(ConnectASGIApplication, name)), name
    assert parameters(_ResponseSender) == ["send"]
    for protocol in (GRPCServerProtocol(), GRPCWebServerProtocol()):
        assert parameters(protocol.trailers_only_headers) == ["ctx", "exc"]
    error = HTTPError(http.HTTPStatus.NOT_FOUND, [])
    assert error.status is http.HTTPStatus.NOT_FOUND and list(error.headers) == []
