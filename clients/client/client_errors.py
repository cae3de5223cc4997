"""The client's exceptions: one class per gRPC status a caller handles differently, carrying the
rich details the service attaches (google.rpc.BadRequest, google.rpc.ErrorInfo), and what a
connection failure's text means.

A refused move is not an error (it is an answer, :class:`~bigtwo.client.results.Outcome`); these
are calls that failed. :mod:`bigtwo.cli.errors` turns them into sentences for the command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import grpc
from google.rpc import error_details_pb2, status_pb2


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One malformed field of a request: its path (``move.text``) and what is wrong with it."""

    field: str
    description: str


class BigTwoError(Exception):
    """A call that failed: the gRPC status code, its message and the rich details the service
    attached (google.rpc.BadRequest field violations, google.rpc.ErrorInfo reason and metadata)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        violations: Sequence[FieldViolation] = (),
        reason: str = "",
        metadata: dict[str, str] | None = None,
        target: str = "",
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.violations = tuple(violations)
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.target = target
        self.retry_delay = retry_delay
        """Seconds, from the status's google.rpc.RetryInfo: the server refused the call for load (a
        shed) and says when to send it again; None for any other failure."""

    @property
    def shed(self) -> bool:
        """Whether the call was refused for load, not for what it asked: worth sending again after
        :attr:`retry_delay` (the client does, within the call's deadline)."""
        return self.retry_delay is not None


class BigTwoInvalidArgument(BigTwoError):
    """A malformed request; ``violations`` names the fields."""


class BigTwoFailedPrecondition(BigTwoError):
    """E.g. a move whose index does not fit the game (``reason`` MOVE_ALREADY_MADE / WRONG_MOVE_INDEX)."""

    @property
    def moves_made(self) -> int | None:
        value = self.metadata.get("moves_made")
        return int(value) if value is not None else None


class BigTwoUnauthenticated(BigTwoError):
    """A missing or wrong bearer token."""


class BigTwoResourceExhausted(BigTwoError):
    """A request over the limits (``reason`` LOG_TOO_LONG...: never retried), or a server refusing
    for load (``shed``, with a ``retry_delay``: retried within the call's deadline)."""


class BigTwoUnavailable(BigTwoError):
    """No target answered, after every retry."""


class BigTwoDeadlineExceeded(BigTwoError):
    """The call's deadline passed."""


class BigTwoInternal(BigTwoError):
    """A bug in the service; the message carries the request id its log shows."""


_ERRORS: dict[grpc.StatusCode, type[BigTwoError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: BigTwoInvalidArgument,
    grpc.StatusCode.FAILED_PRECONDITION: BigTwoFailedPrecondition,
    grpc.StatusCode.UNAUTHENTICATED: BigTwoUnauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: BigTwoResourceExhausted,
    grpc.StatusCode.UNAVAILABLE: BigTwoUnavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: BigTwoDeadlineExceeded,
    grpc.StatusCode.INTERNAL: BigTwoInternal,
}

_TOKEN_REFUSALS = frozenset({"TOKEN_UNKNOWN_KEY", "TOKEN_BAD_SIGNATURE"})


def _status_details(
    trailing: Iterable[tuple[str, str | bytes]] | None,
) -> tuple[list[FieldViolation], str, dict[str, str], float | None]:
    """The field violations, reason, metadata and retry delay (seconds, from a RetryInfo) packed
    in ``grpc-status-details-bin``."""
    violations: list[FieldViolation] = []
    reason, metadata = "", {}
    retry_delay: float | None = None
    for key, value in trailing or ():
        if key != "grpc-status-details-bin":
            continue
        for detail in status_pb2.Status.FromString(value).details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations += [FieldViolation(v.field, v.description) for v in bad.field_violations]
            elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, metadata = info.reason, dict(info.metadata)
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry = error_details_pb2.RetryInfo()
                detail.Unpack(retry)
                retry_delay = max(0.0, retry.retry_delay.ToNanoseconds() / 1e9)
    return violations, reason, metadata, retry_delay


def error_from_rpc(error: BaseException, target: str = "") -> BigTwoError:
    """A typed exception for a failed call (sync ``grpc.RpcError`` or ``grpc.aio.AioRpcError``).

    Both kinds carry ``code()``, ``details()`` and ``trailing_metadata()`` without sharing a base
    class that declares them, so they are looked up; an error without them is ``UNKNOWN``."""
    code_of, details_of = getattr(error, "code", None), getattr(error, "details", None)
    trailing_of = getattr(error, "trailing_metadata", None)
    code: grpc.StatusCode = code_of() if callable(code_of) else grpc.StatusCode.UNKNOWN
    message: str = (details_of() if callable(details_of) else str(error)) or ""
    violations, reason, metadata, retry_delay = _status_details(trailing_of() if callable(trailing_of) else None)
    if code is grpc.StatusCode.UNAVAILABLE and not reason:
        reason = connection_failure(message)[0]
    cls = _ERRORS.get(code, BigTwoError)
    return cls(
        code, message, violations=violations, reason=reason, metadata=metadata, target=target, retry_delay=retry_delay
    )


def token_refused(error: BigTwoError) -> bool:
    """Whether a replica refused a state token as foreign (keys rotated, another deployment): the
    same call with the game's log instead is then answered."""
    return isinstance(error, BigTwoInvalidArgument) and error.reason in _TOKEN_REFUSALS


# -- connection failures -------------------------------------------------------------------------

_CONNECTION_FAILURES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # (words of gRPC's failure text, lower case; the reason; what it means, in words)
    (("connection refused",), "CONNECTION_REFUSED", "nothing is listening there (connection refused)"),
    (
        ("domain name not found", "errors resolving", "dns resolution failed", "name or service not known"),
        "NAME_NOT_RESOLVED",
        "the host name does not resolve",
    ),
    (("wrong_version_number",), "TLS_NOT_SPOKEN", "the TLS handshake failed: the server does not speak TLS"),
    (
        ("certificate_verify_failed", "certificate verify failed"),
        "TLS_CERTIFICATE_REJECTED",
        "the TLS handshake failed: the server's certificate is not trusted",
    ),
    (("handshake", "ssl_error", "tsi_"), "TLS_HANDSHAKE_FAILED", "the TLS handshake failed"),
    (
        ("http1", "failed parsing http/2", "expected settings frame"),
        "NOT_GRPC",
        "the server there is not a gRPC server (it answered HTTP/1)",
    ),
    (
        ("socket closed", "connection reset", "end of tcp stream", "connection closed", "goaway"),
        "CONNECTION_CLOSED",
        "the server there closed the connection at once",
    ),
    (
        ("before receiving settings", "timed out"),
        "NO_ANSWER",
        "the server there accepted the connection but never answered as a gRPC server",
    ),
    (
        ("network is unreachable", "no route to host", "host is unreachable"),
        "NO_ROUTE",
        "there is no route to that host",
    ),
)

FAIL_AT_ONCE = frozenset(
    {"CONNECTION_REFUSED", "NAME_NOT_RESOLVED", "TLS_NOT_SPOKEN", "TLS_CERTIFICATE_REJECTED", "NOT_GRPC", "NO_ROUTE"}
)
"""Failures that waiting does not mend: an impatient wait gives up at the first one. Others (a
connection accepted but not answered: a server that listens before it serves) are waited out."""


def connection_failure(details: str) -> tuple[str, str]:
    """What a connection failure's text (gRPC's ``details()`` of an UNAVAILABLE call) means: a
    reason (``CONNECTION_REFUSED``, ``NAME_NOT_RESOLVED``, ``TLS_NOT_SPOKEN``,
    ``TLS_CERTIFICATE_REJECTED``, ``TLS_HANDSHAKE_FAILED``, ``NOT_GRPC``, ``CONNECTION_CLOSED``,
    ``NO_ANSWER``, ``NO_ROUTE``, else ``UNAVAILABLE``) and the same in words, for people."""
    text = details.lower()
    for words, reason, meaning in _CONNECTION_FAILURES:
        if any(word in text for word in words):
            return reason, meaning
    return "UNAVAILABLE", f"it does not answer ({details.strip() or 'unavailable'})"


def unavailable(meaning: str, reason: str, target: str) -> BigTwoUnavailable:
    """The error of a target that cannot be reached, said in words (see :func:`connection_failure`)."""
    return BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, meaning, reason=reason, target=target)


__all__ = [
    "FAIL_AT_ONCE",
    "BigTwoDeadlineExceeded",
    "BigTwoError",
    "BigTwoFailedPrecondition",
    "BigTwoInternal",
    "BigTwoInvalidArgument",
    "BigTwoResourceExhausted",
    "BigTwoUnauthenticated",
    "BigTwoUnavailable",
    "FieldViolation",
    "connection_failure",
    "error_from_rpc",
    "token_refused",
    "unavailable",
]
