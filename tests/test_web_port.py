"""The browser port (``bigtwo serve --web-port``): Connect and gRPC-Web, over HTTP/1.1 and HTTP/2, in
binary and JSON, answered by the gRPC port's handlers: the same answers, errors (status and details),
auth, metrics and logs as a gRPC call. Tested from outside with the Connect project's own Python
client (connectrpc over pyqwest) and stock gRPC, knowing only proto/ (the generated classes)."""

from __future__ import annotations

import gzip
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import h2.config
import h2.connection
import h2.events
import hyperframe.frame
import pytest
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from pyqwest import HTTPVersion, SyncClient, SyncHTTPTransport
from service_support import CODE, ServerProcess, free_port

SERVICE = "bigtwo.v1.BigTwoService"
CLASSIC = pb.Ruleset(preset="classic")
TOKEN = "web-port-test-token-0123456789"


class RawCodec:
    """Binary protobuf that hands back the answer's bytes as they came, to compare them exactly."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Any) -> bytes:
        return bytes(message.SerializeToString(deterministic=True))

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> bytes:
        return bytes(data)


def method(name: str, request: type[Any], response: type[Any], stream: StreamType = StreamType.UNARY) -> Any:
    return MethodInfo(
        name=name,
        service_name=SERVICE,
        input=request,
        output=response,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=stream,
    )


DEAL = method("Deal", api.DealRequest, api.DealResponse)
LEGAL = method("LegalMoves", api.LegalMovesRequest, api.LegalMovesResponse)
DESCRIBE = method("DescribeRuleset", api.DescribeRulesetRequest, api.DescribeRulesetResponse)
APPLY = method("ApplyMove", api.ApplyMoveRequest, api.ApplyMoveResponse)
STREAM = method("PlayStream", api.PlayStreamRequest, api.PlayStreamResponse, StreamType.BIDI_STREAM)

# (protocol, HTTP version, codec): every way a browser or a Connect client may call.
WAYS = [
    (ProtocolType.CONNECT, HTTPVersion.HTTP1, "binary"),
    (ProtocolType.CONNECT, HTTPVersion.HTTP1, "json"),
    (ProtocolType.CONNECT, HTTPVersion.HTTP2, "binary"),
    (ProtocolType.GRPC_WEB, HTTPVersion.HTTP1, "binary"),
    (ProtocolType.GRPC_WEB, HTTPVersion.HTTP2, "binary"),
    (ProtocolType.GRPC_WEB, HTTPVersion.HTTP1, "json"),
]


def version_name(version: Any) -> str:
    return "h2" if version == HTTPVersion.HTTP2 else "h1"


def way_id(way: tuple[ProtocolType, HTTPVersion, str]) -> str:
    protocol, version, codec = way
    return f"{protocol.name.lower()}-{version_name(version)}-{codec}"


class Web:
    """Connect clients of one server's browser port."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        # pyqwest's versions are not hashable: keyed by name
        self.http = {
            version_name(version): SyncClient(SyncHTTPTransport(http_version=version))
            for version in (HTTPVersion.HTTP1, HTTPVersion.HTTP2)
        }

    def client(self, protocol: ProtocolType, version: Any, codec: Any) -> ConnectClientSync:
        return ConnectClientSync(
            self.base,
            codec=codec,
            protocol=protocol,
            http_client=self.http[version_name(version)],
            send_compression=None,
        )

    def way(self, way: tuple[ProtocolType, HTTPVersion, str]) -> ConnectClientSync:
        protocol, version, codec = way
        chosen = google_protobuf_json_codec() if codec == "json" else google_protobuf_binary_codec()
        return self.client(protocol, version, chosen)

    def raw(self, protocol: ProtocolType, version: Any = HTTPVersion.HTTP1) -> ConnectClientSync:
        return self.client(protocol, version, RawCodec())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("web")
    process = ServerProcess(tmp, "--web-port", str(free_port()), "--web-origin", "https://cards.example")
    yield process
    process.stop()


def web_port(server: ServerProcess) -> int:
    args = server.process.args
    assert isinstance(args, list)
    return int(args[args.index("--web-port") + 1])


@pytest.fixture(scope="module")
def web(server: ServerProcess) -> Web:
    return Web(web_port(server))


@pytest.fixture(scope="module")
def channel(server: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as chan:
        yield chan


def native_raw(channel: grpc.Channel, name: str, request: Any) -> bytes:
    call = channel.unary_unary(f"/{SERVICE}/{name}", request_serializer=lambda m: m.SerializeToString())
    answer: bytes = call(request, timeout=30)
    return answer


def dealt(channel: grpc.Channel) -> api.DealResponse:
    request = api.DealRequest(ruleset=CLASSIC, deal_code=CODE, view_seat=0)
    return api.DealResponse.FromString(native_raw(channel, "Deal", request))


@pytest.mark.parametrize("way", WAYS, ids=way_id)
def test_every_way_reads_the_same_answers(web: Web, channel: grpc.Channel, way: Any) -> None:
    """A seat's deal, its legal moves and a ruleset read the same over every protocol, version and
    codec as over gRPC (tokens aside: each is freshly encrypted)."""
    client = web.way(way)
    request = api.DealRequest(ruleset=CLASSIC, deal_code=CODE, view_seat=0)
    over_web = client.execute_unary(request=request, method=DEAL)
    native = dealt(channel)
    for answer in (over_web, native):
        answer.ClearField("state_token")
        answer.ClearField("seat_token")
    assert over_web == native
    token = dealt(channel).state_token
    legal = api.LegalMovesRequest(game=pb.Game(state_token=token))
    assert client.execute_unary(request=legal, method=LEGAL) == api.LegalMovesResponse.FromString(
        native_raw(channel, "LegalMoves", legal)
    )
    describe = api.DescribeRulesetRequest(ruleset=pb.Ruleset(preset="hong-kong"))
    assert client.execute_unary(request=describe, method=DESCRIBE) == api.DescribeRulesetResponse.FromString(
        native_raw(channel, "DescribeRuleset", describe)
    )


@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB], ids=lambda p: p.name)
def test_binary_answers_are_the_grpc_ports_bytes(web: Web, channel: grpc.Channel, protocol: ProtocolType) -> None:
    """Encoded once, deterministically, on both ports: the same bytes, not just the same message."""
    token = dealt(channel).state_token
    legal = api.LegalMovesRequest(game=pb.Game(state_token=token))
    describe = api.DescribeRulesetRequest(ruleset=pb.Ruleset(preset="pusoy-dos"))
    client = web.raw(protocol)
    assert client.execute_unary(request=legal, method=LEGAL) == native_raw(channel, "LegalMoves", legal)
    assert client.execute_unary(request=describe, method=DESCRIBE) == native_raw(channel, "DescribeRuleset", describe)


@pytest.mark.parametrize("grpc_web", [False, True], ids=["connect", "grpc-web"])
def test_answers_go_uncompressed_whatever_the_client_accepts(web: Web, channel: grpc.Channel, grpc_web: bool) -> None:
    """An answer is a few hundred bytes, mostly ciphertext: gzip cost more CPU than it saved bytes,
    and the gRPC port does not compress either. A compressed request is still read."""
    legal = api.LegalMovesRequest(game=pb.Game(state_token=dealt(channel).state_token))
    packed = gzip.compress(legal.SerializeToString())
    if grpc_web:
        body = b"\x01" + len(packed).to_bytes(4, "big") + packed
        offer = {"content-type": "application/grpc-web+proto", "grpc-encoding": "gzip", "grpc-accept-encoding": "gzip"}
    else:
        body = packed
        offer = {"content-type": "application/proto", "content-encoding": "gzip", "accept-encoding": "gzip, br"}
    status, headers, answer = post(f"{web.base}/{SERVICE}/LegalMoves", body, offer)
    assert status == 200, answer[:200]
    native = native_raw(channel, "LegalMoves", legal)
    if grpc_web:
        assert headers.get("grpc-encoding", "identity") == "identity"
        size = int.from_bytes(answer[1:5], "big")
        assert answer[0] == 0 and answer[5 : 5 + size] == native
        trailers = answer[5 + size :]
        assert trailers[0] == 0x80 and b"grpc-status: 0" in trailers[5:]
    else:
        assert headers.get("content-encoding", "identity") == "identity"
        assert answer == native


def native_error(channel: grpc.Channel, name: str, request: Any) -> tuple[str, str, list[tuple[str, bytes]]]:
    with pytest.raises(grpc.RpcError) as caught:
        native_raw(channel, name, request)
    status = rpc_status.from_call(caught.value)  # type: ignore[arg-type]
    assert status is not None
    details = [(d.type_url.rsplit("/", 1)[-1], d.value) for d in status.details]
    return caught.value.code().name, status.message, details


def web_error(client: ConnectClientSync, info: Any, request: Any) -> tuple[str, str, list[tuple[str, bytes]]]:
    with pytest.raises(ConnectError) as caught:
        client.execute_unary(request=request, method=info)
    error = caught.value
    code = "CANCELLED" if error.code is Code.CANCELED else error.code.name
    return code, error.message, [(d.type_name, d.message_bytes) for d in error.details]


@pytest.mark.parametrize("way", WAYS, ids=way_id)
def test_errors_carry_the_same_status_and_details(web: Web, channel: grpc.Channel, way: Any) -> None:
    client = web.way(way)
    bad_code = api.DealRequest(ruleset=CLASSIC, deal_code="ZZZ")
    code, message, details = web_error(client, DEAL, bad_code)
    assert (code, message, details) == native_error(channel, "Deal", bad_code)
    assert code == "INVALID_ARGUMENT" and "deal_code" in message
    violations = error_details_pb2.BadRequest.FromString(dict(details)["google.rpc.BadRequest"]).field_violations
    assert [v.field for v in violations] == ["deal_code"]
    token = dealt(channel).state_token
    out_of_turn = api.ApplyMoveRequest(game=pb.Game(state_token=token[:-3] + b"xyz"), move=pb.Move(index=0, text="3D"))
    assert web_error(client, APPLY, out_of_turn) == native_error(channel, "ApplyMove", out_of_turn)


def post(url: str, body: bytes, headers: dict[str, str], method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body if method == "POST" else None, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b"{not json"),
        ("application/json", b"[" * 100_000),
        ("application/json", b'{"dealCode": 12}'),
        ("application/proto", b"\xff\xff\xff\xff"),
        ("application/grpc-web+proto", b"\x00\x00\x00\x00\x05\xff\xff\xff\xff\xff"),
        ("application/grpc-web+proto", b"\x00\xff\xff\xff\xff"),
        ("text/plain", b"hello"),
    ],
)
def test_hostile_bodies_are_refused_and_the_port_goes_on(
    web: Web, server: ServerProcess, content_type: str, body: bytes
) -> None:
    status, headers, answer = post(f"{web.base}/{SERVICE}/Deal", body, {"content-type": content_type})
    if content_type.startswith("application/grpc-web"):
        assert (status == 200 and headers.get("grpc-status") not in (None, "0", "2", "13")) or b"grpc-status:" in answer
        assert b"grpc-status:0" not in answer.replace(b" ", b"")
    else:  # a Connect error: a content type the port does not speak is UNIMPLEMENTED, Connect's 501
        assert 400 <= status < 500 or (status == 501 and b'"unimplemented"' in answer), (status, answer[:200])
    assert "Traceback" not in server.log()
    ok = web.way(WAYS[0]).execute_unary(request=api.DealRequest(ruleset=CLASSIC, deal_code=CODE), method=DEAL)
    assert ok.table.players == 4


def test_a_body_over_the_message_limit_is_refused(web: Web) -> None:
    body = b"\x00" * ((1 << 20) + 1024)
    status, _, answer = post(f"{web.base}/{SERVICE}/Deal", body, {"content-type": "application/proto"})
    assert (status in (400, 413, 429) and b"resource_exhausted" in answer) or status == 413


def test_a_game_over_a_connect_stream(web: Web) -> None:
    """PlayStream, bidirectional, over Connect on HTTP/2: a seat's view, moves accepted and refused."""
    client = web.client(ProtocolType.CONNECT, HTTPVersion.HTTP2, google_protobuf_binary_codec())
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
    opened_request = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log), view_seat=0))
    first = list(client.execute_bidi_stream(request=iter([opened_request]), method=STREAM))
    assert len(first) == 1 and first[0].opened.view.seat == 0
    leader = first[0].opened.table.to_act
    opening = first[0].opened.table.opening_card
    messages = [
        opened_request,
        api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=0, seat=leader, text="pass"))),
        api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=0, seat=leader, text=opening))),
    ]
    answers = list(client.execute_bidi_stream(request=iter(messages), method=STREAM))
    assert [a.WhichOneof("message") for a in answers] == ["opened", "move_result", "move_result"]
    refused, accepted = answers[1].move_result, answers[2].move_result
    assert not refused.outcome.accepted and refused.outcome.refusal.message
    assert accepted.outcome.accepted and accepted.table.moves_made == 1


def test_a_stream_error_ends_with_the_status(web: Web) -> None:
    client = web.client(ProtocolType.CONNECT, HTTPVersion.HTTP2, google_protobuf_binary_codec())
    bad = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(state_token=b"nonsense")))
    with pytest.raises(ConnectError) as caught:
        list(client.execute_bidi_stream(request=iter([bad]), method=STREAM))
    assert caught.value.code is Code.INVALID_ARGUMENT
    assert any(d.type_name == "google.rpc.ErrorInfo" for d in caught.value.details)


def metric(server: ServerProcess, line_start: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_web_calls_are_counted_and_logged_as_grpc_calls(web: Web, server: ServerProcess) -> None:
    series = 'bigtwo_rpc_calls_total{code="OK",method="DescribeRuleset",protocol="connect"}'
    before = metric(server, series)
    client = web.way(WAYS[1])
    for _ in range(3):
        client.execute_unary(request=api.DescribeRulesetRequest(ruleset=CLASSIC), method=DESCRIBE)
    assert metric(server, series) == before + 3
    headers = {"x-request-id": "web-request-42"}
    client.execute_unary(request=api.DescribeRulesetRequest(ruleset=CLASSIC), method=DESCRIBE, headers=headers)
    line = next(line for line in server.log().splitlines() if '"request_id": "web-request-42"' in line)
    assert '"via": "connect"' in line and '"method": "DescribeRuleset"' in line
    grpc_web = web.way(WAYS[3])
    request = api.DescribeRulesetRequest(ruleset=CLASSIC)
    grpc_web.execute_unary(request=request, method=DESCRIBE, headers={"x-request-id": "web-request-43"})
    line = next(line for line in server.log().splitlines() if '"request_id": "web-request-43"' in line)
    assert '"via": "grpc-web"' in line


def test_cors_answers_only_the_allowed_origins(web: Web) -> None:
    url = f"{web.base}/{SERVICE}/Deal"
    ask = {"access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization"}
    status, headers, _ = post(url, b"", {**ask, "origin": "https://cards.example"}, method="OPTIONS")
    assert status == 200 and headers["access-control-allow-origin"] == "https://cards.example"
    assert "authorization" in headers["access-control-allow-headers"].lower()
    status, headers, _ = post(url, b"", {**ask, "origin": "https://evil.example"}, method="OPTIONS")
    assert status == 400 and "access-control-allow-origin" not in headers


def test_the_table_is_served_at_the_root(web: Web) -> None:
    status, headers, page = post(f"{web.base}/", b"", {}, method="GET")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b"<title>" in page


def test_auth_on_the_browser_port(tmp_path: Path) -> None:
    """A server asking for a bearer token asks it on the browser port too, the same way."""
    port = free_port()
    process = ServerProcess(tmp_path, "--auth-token", TOKEN, "--web-port", str(port), metrics=False)
    try:
        client = Web(port).way(WAYS[0])
        request = api.DealRequest(ruleset=CLASSIC, deal_code=CODE)
        for headers in ({}, {"authorization": "Bearer wrong-token-0123456789"}):
            with pytest.raises(ConnectError) as caught:
                client.execute_unary(request=request, method=DEAL, headers=headers)
            assert caught.value.code is Code.UNAUTHENTICATED
        answer = client.execute_unary(request=request, method=DEAL, headers={"authorization": f"Bearer {TOKEN}"})
        assert answer.table.players == 4
    finally:
        assert process.stop() == 0
    assert '"web_port": ' + str(port) in process.log_path.read_text()


def finished_deal(channel: grpc.Channel) -> tuple[bytes, bytes, str]:
    """A classic deal played to its end by the host (the lowest legal play each turn): the seat
    token of seat 0 before the end, the one after it, and the deal code the last table shows."""
    deal = dealt(channel)
    token, seat_token = deal.state_token, deal.seat_token
    first_seat_token = seat_token
    table = deal.table
    while not table.over:
        legal = api.LegalMovesResponse.FromString(
            native_raw(channel, "LegalMoves", api.LegalMovesRequest(game=pb.Game(state_token=token)))
        )
        text = legal.plays[0].cards.text if legal.plays else "pass"
        move = pb.Move(index=table.moves_made, seat=table.to_act, text=text)
        answer = api.ApplyMoveResponse.FromString(
            native_raw(
                channel, "ApplyMove", api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move, view_seat=0)
            )
        )
        assert answer.outcome.accepted, answer.outcome
        token, seat_token, table = answer.state_token, answer.seat_token, answer.table
    return first_seat_token, seat_token, table.deal_code


def test_the_replay_link_of_a_finished_deal(web: Web, channel: grpc.Channel) -> None:
    """``/replay?token=`` draws the finished deal from a seat token; before the end it refuses (the
    page would show hidden hands), and a token that is no token is a 400 with the reason."""
    import base64

    early, final, code = finished_deal(channel)

    def link(token: bytes) -> str:
        return f"{web.base}/replay?token={base64.urlsafe_b64encode(token).decode().rstrip('=')}"

    status, headers, page = post(link(final), b"", {}, method="GET")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert code and code.encode() in page and b"Big Two replay" in page
    assert b'"verdict": "ok"' in page or b"verdict ok" in page or b'class="verdict ok"' in page
    status, _, text = post(link(early), b"", {}, method="GET")
    assert status == 409 and b"not over" in text
    status, _, text = post(f"{web.base}/replay?token=@@@", b"", {}, method="GET")
    assert status == 400 and b"base64" in text
    status, _, text = post(link(b"x" * 80), b"", {}, method="GET")
    assert status == 400 and b"token" in text


def test_one_http2_connection_serves_more_than_a_thousand_calls(web: Web) -> None:
    """No cap on the requests one connection serves: a server that closes a connection after N
    requests (Hypercorn, which served the port before Granian, did after 1,000) breaks an HTTP/2
    client in the middle of a call, which sees a broken pipe."""
    client = web.client(ProtocolType.CONNECT, HTTPVersion.HTTP2, google_protobuf_binary_codec())
    name = method("NameCards", api.NameCardsRequest, api.NameCardsResponse)
    request = api.NameCardsRequest(ruleset=CLASSIC, cards="3D 3S")
    for _ in range(1_100):
        assert client.execute_unary(request=request, method=name).name


def test_calls_past_the_in_flight_cap_are_refused_resource_exhausted(tmp_path: Path) -> None:
    """The browser port caps calls in flight as the gRPC port does (``--max-concurrent-rpcs``): with a
    cap of 1, an open stream makes the next call RESOURCE_EXHAUSTED (nothing started, safe to retry),
    and once the stream ends calls are answered again."""
    port = free_port()
    process = ServerProcess(tmp_path, "--max-concurrent-rpcs", "1", "--web-port", str(port), metrics=False)
    release = threading.Event()
    outcome: list[Any] = []

    def held_open() -> Iterator[api.PlayStreamRequest]:
        log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
        yield api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log), view_seat=0))
        release.wait(timeout=60)

    def stream() -> None:
        client = Web(port).client(ProtocolType.CONNECT, HTTPVersion.HTTP2, google_protobuf_binary_codec())
        try:
            outcome.extend(client.execute_bidi_stream(request=held_open(), method=STREAM))
        except ConnectError as error:  # pragma: no cover - reported by the assertion below
            outcome.append(error)

    holder = threading.Thread(target=stream, daemon=True)
    try:
        client = Web(port).way(WAYS[0])
        request = api.DescribeRulesetRequest(ruleset=CLASSIC)
        assert client.execute_unary(request=request, method=DESCRIBE).ruleset.preset == "classic"
        holder.start()
        refused = None
        for _ in range(200):  # until the stream has started on the server
            try:
                client.execute_unary(request=request, method=DESCRIBE)
            except ConnectError as error:
                refused = error
                break
            time.sleep(0.05)
        assert refused is not None and refused.code is Code.RESOURCE_EXHAUSTED, refused
        assert "1 calls at once" in refused.message
        infos = [
            error_details_pb2.ErrorInfo.FromString(detail.message_bytes)
            for detail in refused.details
            if detail.type_name == "google.rpc.ErrorInfo"
        ]
        assert [(info.reason, dict(info.metadata)) for info in infos] == [("CALLS_BUSY", {"max_calls": "1"})]
        release.set()
        holder.join(timeout=60)
        assert [answer.WhichOneof("message") for answer in outcome] == ["opened"]
        assert client.execute_unary(request=request, method=DESCRIBE).ruleset.preset == "classic"
    finally:
        release.set()
        assert process.stop() == 0


def _stream_headers(host: str, port: str) -> list[tuple[str, str]]:
    """A Connect PlayStream call's request headers."""
    return [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", f"{host}:{port}"),
        (":path", f"/{SERVICE}/PlayStream"),
        ("content-type", "application/connect+proto"),
        ("connect-protocol-version", "1"),
    ]


def _envelope(message: bytes) -> bytes:
    return b"\x00" + len(message).to_bytes(4, "big") + message


def test_data_after_a_refused_stream_leaves_the_http2_connection_serving(web: Web) -> None:
    """A client still sending on a stream the service has already refused (ended early) must not
    stop its HTTP/2 connection: a later stream on it is answered. (A regression test from before
    Granian: Hypercorn 0.18 raised KeyError in its reader for such late DATA and hung the
    connection; hyper resets the answered stream and serves on.)"""
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    host, port = web.base.removeprefix("http://").split(":")
    headers = _stream_headers(host, port)
    refused = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(state_token=b"not a token")))
    opened = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE))))
    with socket.create_connection((host, int(port)), timeout=10) as sock:

        def until_ended(stream_id: int) -> bytes:
            body = b""
            while True:
                data = sock.recv(65535)
                assert data, "the server closed the connection"
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.DataReceived) and event.stream_id == stream_id:
                        body += event.data
                        connection.acknowledge_received_data(event.flow_controlled_length, stream_id)
                    if isinstance(event, h2.events.StreamEnded) and event.stream_id == stream_id:
                        return body
                sock.sendall(connection.data_to_send())

        connection.initiate_connection()
        connection.send_headers(1, headers)
        connection.send_data(1, _envelope(refused.SerializeToString()))
        sock.sendall(connection.data_to_send())
        assert b"invalid_argument" in until_ended(1)
        # Late, after the end: written raw, as the server may have reset the stream already (hyper
        # does once it answered, and the h2 client then refuses to send on it).
        late = hyperframe.frame.DataFrame(1, data=_envelope(opened.SerializeToString()))
        late.flags.add("END_STREAM")
        sock.sendall(late.serialize())
        connection.send_headers(3, headers)
        connection.send_data(3, _envelope(opened.SerializeToString()), end_stream=True)
        sock.sendall(connection.data_to_send())
        answer = until_ended(3)  # a socket timeout here is the hang
    first = api.PlayStreamResponse.FromString(answer[5 : 5 + int.from_bytes(answer[1:5], "big")])
    assert first.opened.table.players == 4


def test_a_client_gone_mid_stream_is_a_cancelled_call_not_an_error(web: Web, server: ServerProcess) -> None:
    """A browser that goes away while its stream is open (its requests not ended) ends the call as
    a cancelled gRPC call does: counted CANCELLED, and no error in the server's log."""
    series = 'bigtwo_rpc_calls_total{code="CANCELLED",method="PlayStream",protocol="connect"}'
    before = metric(server, series)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    host, port = web.base.removeprefix("http://").split(":")
    opened = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE))))
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        connection.initiate_connection()
        connection.send_headers(1, _stream_headers(host, port))
        connection.send_data(1, _envelope(opened.SerializeToString()))  # the stream stays open
        sock.sendall(connection.data_to_send())
        answered = False
        while not answered:
            data = sock.recv(65535)
            assert data, "the server closed the connection"
            answered = any(isinstance(event, h2.events.DataReceived) for event in connection.receive_data(data))
    for _ in range(200):  # until the server has seen the client go
        if metric(server, series) > before:
            break
        time.sleep(0.05)
    assert metric(server, series) == before + 1
    assert "Client disconnected" not in server.log()


def test_a_stream_message_over_the_limit_is_resource_exhausted(web: Web) -> None:
    """A stream message over ``--max-message-bytes`` ends the stream RESOURCE_EXHAUSTED with
    ``ErrorInfo`` MESSAGE_TOO_LARGE (not INTERNAL), as a unary body over it is refused."""
    client = web.client(ProtocolType.CONNECT, HTTPVersion.HTTP2, google_protobuf_binary_codec())
    huge = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(state_token=b"x" * (1 << 20))))
    with pytest.raises(ConnectError) as caught:
        list(client.execute_bidi_stream(request=iter([huge]), method=STREAM))
    assert caught.value.code is Code.RESOURCE_EXHAUSTED
    infos = [
        error_details_pb2.ErrorInfo.FromString(detail.message_bytes)
        for detail in caught.value.details
        if detail.type_name == "google.rpc.ErrorInfo"
    ]
    assert [info.reason for info in infos] == ["MESSAGE_TOO_LARGE"]


def test_a_stream_refused_while_the_client_still_sends_ends_and_frees_its_connection(web: Web) -> None:
    """A stream refused at its first message while the client goes on sending (more messages than
    the HTTP server buffers) still ends on the server: the next stream on the same connection is
    answered, not left waiting. (A regression test from before Granian: under Hypercorn, whose queue
    held 10, the call's last send waited on its own full queue forever.)"""
    client = web.client(ProtocolType.CONNECT, HTTPVersion.HTTP2, google_protobuf_binary_codec())
    refused = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(state_token=b"not a token")))
    moves = [api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=i, text="pass"))) for i in range(30)]
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
    opened = api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log)))
    for _ in range(3):
        with pytest.raises(ConnectError) as caught:
            list(client.execute_bidi_stream(request=iter([refused, *moves]), method=STREAM, timeout_ms=20_000))
        assert caught.value.code is Code.INVALID_ARGUMENT
    answers = list(client.execute_bidi_stream(request=iter([opened]), method=STREAM, timeout_ms=20_000))
    assert answers[0].opened.table.players == 4
