"""Sending a unary fuzz case to the server's browser port, as a browser's library would.

The same request bytes the gRPC caller sends go to ``--web-port`` as Connect (binary,
``application/proto``) or as gRPC-Web (binary, length-prefixed frames), chosen per case. What comes
back is read with the standard library only, from the protocols' own specifications, and turned
into a status name the fuzzer judges like a gRPC one:

* Connect: HTTP 200 with the reply's bytes, or an error body ``{"code": "invalid_argument", ...}``
  (a non-JSON error body, e.g. a bare HTTP 404 or 500, is reported as ``HTTP_<status>``, outside the
  error model);
* gRPC-Web: the status from the ``grpc-status`` header (trailers-only) or from the trailer frame
  (flag ``0x80``) that must end the body; a data frame must parse as the reply.

Stream conversations (PlayStream) go as Connect over HTTP/2, through the Connect project's own
client (``connectrpc``) with a codec that passes the fuzzer's bytes through untouched.

Each conversation gets a connection of its own, closed after it, so that many connections come
and go under the fuzzer (the server's memory bound covers them).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import struct
import urllib.parse
from dataclasses import dataclass

import grpc
from connectrpc.client import ConnectClientSync
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.protocol import ProtocolType
from pyqwest import HTTPVersion, SyncClient, SyncHTTPTransport

WEB_PROTOCOLS = ("connect", "grpc-web")
STATUS_NAMES = {status.value[0]: status.name for status in grpc.StatusCode}
"""gRPC's numeric codes as names (``3`` -> ``INVALID_ARGUMENT``)."""


@dataclass(frozen=True)
class WebAnswer:
    """What the browser port said: a gRPC status name (``OK``, ``HANG``, ``UNDECODABLE``,
    ``HTTP_404``...), its message, the reply's bytes when there was one, and the size of the
    answer's headers and trailers (a browser library caps them as a gRPC client does)."""

    code: str
    details: str
    reply: bytes | None = None
    header_bytes: int = 0


def connect_code_name(code: str) -> str:
    """Connect's code (``invalid_argument``, ``canceled``) as gRPC's name."""
    return "CANCELLED" if code == "canceled" else code.upper()


def send_web(
    base: str, path: str, payload: bytes, protocol: str, *, deadline: float, margin: float, request_id: str
) -> WebAnswer:
    """One unary call of ``payload`` to ``base + path`` over ``protocol``; never raises for what
    the server answers (a timeout past ``deadline + margin`` is ``HANG``)."""
    milliseconds = max(1, int(deadline * 1000))
    if protocol == "connect":
        headers = {"content-type": "application/proto", "connect-protocol-version": "1"}
        headers["connect-timeout-ms"] = str(milliseconds)
        body = payload
    else:
        headers = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
        headers["grpc-timeout"] = f"{milliseconds}m"
        body = b"\x00" + struct.pack(">I", len(payload)) + payload
    headers["x-request-id"] = request_id
    address = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=deadline + margin)
    try:
        # The server may answer before reading the whole body (a bound it checks as the body
        # comes in) and close: its answer waits to be read, as a browser reads it.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        status, answer_headers, data = response.status, response.headers, response.read()
    except TimeoutError:
        return WebAnswer("HANG", "no answer within the deadline and margin")
    except (http.client.HTTPException, OSError) as error:
        return WebAnswer("UNAVAILABLE", f"{type(error).__name__}: {error}")
    finally:
        connection.close()
    header_bytes = sum(len(key) + len(value) for key, value in answer_headers.items())
    if protocol == "connect":
        return _connect_answer(status, data, header_bytes)
    header_status, header_message = answer_headers.get("grpc-status"), answer_headers.get("grpc-message", "")
    return _grpc_web_answer(status, header_status, str(header_message), data, header_bytes)


def _connect_answer(status: int, data: bytes, header_bytes: int) -> WebAnswer:
    if status == 200:
        return WebAnswer("OK", "", data, header_bytes)
    try:
        error = json.loads(data)
        code, message = str(error["code"]), str(error.get("message", ""))
    except (ValueError, KeyError, TypeError):
        return WebAnswer(f"HTTP_{status}", data[:300].decode("utf-8", errors="replace"), None, header_bytes)
    return WebAnswer(connect_code_name(code), message, None, header_bytes)


def _grpc_web_answer(
    status: int, header_status: str | None, header_message: str, data: bytes, header_bytes: int
) -> WebAnswer:
    if status != 200:
        return WebAnswer(f"HTTP_{status}", data[:300].decode("utf-8", errors="replace"), None, header_bytes)
    if header_status is not None:  # trailers-only: the status came in the headers
        name = STATUS_NAMES.get(int(header_status), "") if header_status.isdigit() else ""
        return WebAnswer(name or f"STATUS_{header_status[:20]}", header_message, None, header_bytes)
    reply: bytes | None = None
    offset = 0
    while offset + 5 <= len(data):
        flag, length = data[offset], struct.unpack(">I", data[offset + 1 : offset + 5])[0]
        frame = data[offset + 5 : offset + 5 + length]
        if len(frame) != length:
            break
        offset += 5 + length
        if not flag & 0x80:
            reply = frame
            continue
        trailers = dict(
            line.split(":", 1) for line in frame.decode("utf-8", errors="replace").split("\r\n") if ":" in line
        )
        code = trailers.get("grpc-status", "").strip()
        name = STATUS_NAMES.get(int(code), f"STATUS_{code}") if code.isdigit() else "UNDECODABLE"
        return WebAnswer(name, trailers.get("grpc-message", "").strip(), reply, header_bytes + length)
    return WebAnswer("UNDECODABLE", "the body ends without a trailer frame", None, header_bytes)


class PassThrough:
    """A codec that sends the fuzzer's request bytes as they are and hands back the answers' bytes,
    so nothing on the client side cleans a hostile message up."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: bytes) -> bytes:
        return message

    def decode(self, data: bytes | bytearray, message_class: type[object]) -> bytes:
        return bytes(data)


def stream_client(base: str) -> ConnectClientSync:
    """A Connect client of the browser port over HTTP/2 (what bidirectional streams need)."""
    return ConnectClientSync(
        base,
        codec=PassThrough(),
        protocol=ProtocolType.CONNECT,
        http_client=SyncClient(SyncHTTPTransport(http_version=HTTPVersion.HTTP2)),
        send_compression=None,
    )


@dataclass(frozen=True)
class WebConversation:
    """A stream conversation's end on the browser port: a gRPC status name, its message and the
    answers' bytes received before it."""

    code: str
    details: str
    replies: list[bytes]


def send_web_stream(
    base: str,
    service: str,
    rpc: str,
    messages: list[bytes],
    *,
    deadline: float,
    request_id: str,
    cancel_after_first: bool = False,
) -> WebConversation:
    """One bidirectional conversation of ``messages`` on a connection of its own, closed after it;
    never raises for what the server answers (a transport failure is ``UNAVAILABLE`` with its
    text)."""
    client = stream_client(base)
    method = MethodInfo(
        name=rpc,
        service_name=service,
        input=bytes,
        output=bytes,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=StreamType.BIDI_STREAM,
    )
    replies: list[bytes] = []
    answers = client.execute_bidi_stream(
        request=iter(messages),
        method=method,
        headers={"x-request-id": request_id},
        timeout_ms=max(1, int(deadline * 1000)),
    )
    try:
        for reply in answers:
            replies.append(reply)
            if cancel_after_first:
                return WebConversation("CANCELLED", "cancelled by the fuzzer", replies)
    except ConnectError as error:
        code = "CANCELLED" if error.code.name == "CANCELED" else error.code.name
        return WebConversation(code, error.message, replies)
    except Exception as error:  # a broken transport is a finding, named by its text
        return WebConversation("UNAVAILABLE", f"{type(error).__name__}: {error}", replies)
    finally:
        close = getattr(answers, "close", None)
        if close is not None:
            close()
        client.close()
    return WebConversation("OK", "", replies)
