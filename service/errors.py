"""The service's error model, mapped to gRPC statuses in ONE place (:func:`to_rpc_status`).

Handlers raise :class:`ServiceError` subclasses (or let an engine ``ValueError`` escape, which is a
malformed request, or the codec's :class:`~bigtwo.codec.errors.CodecFieldError`, which names its
field and is answered as :func:`bad_field` would be); the call wrapper in :mod:`bigtwo.service.servicer`
turns whatever escaped into a rich status with :func:`to_rpc_status`. A rule refusal is never an
error: it is an OK answer.
"""

from __future__ import annotations

import collections
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import grpc
from bigtwo.codec.errors import CodecFieldError
from bigtwo.engine import DealCodeError, DealError, EventLogError, Refusal, RulesetError
from bigtwo.engine.bots.learned import LearnedUnavailable
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from .telemetry import count_shed

DOMAIN = "bigtwo.v1"


@dataclass(frozen=True, slots=True)
class Violation:
    """One field of the request that is wrong: its path (``game.log.moves[3]``) and why."""

    field: str
    description: str


class ServiceError(Exception):
    """An error answer. ``reason`` (UPPER_SNAKE) goes into a google.rpc.ErrorInfo when set."""

    code: grpc.StatusCode = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(
        self,
        message: str,
        *,
        violations: Sequence[Violation] = (),
        reason: str = "",
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.violations = tuple(violations)
        self.reason = reason
        self.metadata = dict(metadata or {})


class InvalidArgument(ServiceError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class PermissionDenied(ServiceError):
    """The request is well formed, but its state token does not allow it (a seat-bound token
    acting or asking for another seat)."""

    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(ServiceError):
    """A request over a limit (a longer log, a larger audit than one call may ask): sending it again
    gets the same answer, so it carries the retry pushback that tells gRPC clients not to retry."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Shed(ResourceExhausted):
    """Refused for load, not for what it asks (the heavy-call pool full, the browser port at its cap
    of calls, a worker lost): the same request is worth sending again shortly, here or to another
    replica. Its status carries a ``google.rpc.RetryInfo`` with ``retry_after`` seconds and gRPC's
    retry pushback (``grpc-retry-pushback-ms``) with the same delay, which stock gRPC clients with
    the published retry policy (``bigtwo/service/service_config.json``) honour."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        retry_after: float,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message, reason=reason, metadata=metadata)
        self.retry_after = retry_after


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED


class Unavailable(ServiceError):
    """A store the answer depends on cannot be reached (the spent-token ledger in fail-closed mode,
    :mod:`bigtwo.service.ledger`): nothing was applied, and the same request may succeed later."""

    code = grpc.StatusCode.UNAVAILABLE


class Unimplemented(ServiceError):
    """A request the server does not speak: on the browser port, a method, HTTP method, content
    type, compression or HTTP version it does not serve (:mod:`bigtwo.service.web_refusals`)."""

    code = grpc.StatusCode.UNIMPLEMENTED


def bad_field(path: str, description: str, *, reason: str = "") -> InvalidArgument:
    """An INVALID_ARGUMENT naming one field."""
    message = f"{path}: {description}" if path else description
    return InvalidArgument(message, violations=[Violation(path, description)], reason=reason)


@contextmanager
def at_field(path: str) -> Iterator[None]:
    """Inside this block, an engine ``ValueError`` (unknown option, bad deal code, ...) becomes an
    INVALID_ARGUMENT on ``path``. Refusals pass through: they are answers, not errors; so do the
    codec's field errors, which name their own field."""
    try:
        yield
    except (ServiceError, CodecFieldError):
        raise
    except Refusal:
        raise
    except ValueError as exc:
        raise bad_field(path, str(exc)) from None


_ENGINE_INPUT_ERRORS = (RulesetError, DealCodeError, DealError, EventLogError, ValueError)
_TOO_LARGE_ERRORS = (RecursionError, MemoryError, OverflowError)
"""Inputs that are too deep or too large for the work they ask: every limit is checked before that
work (:mod:`bigtwo.service.limits`), so reaching one of these means a limit is missing; still, the
caller asked too much, it is no bug of the service's answering it so."""

MESSAGE_CHARS = 300
"""Longest status message or detail text sent: with the few violations an answer carries, the
trailer stays far below the 16 KiB metadata limit of stock gRPC clients, whatever the request held."""
METADATA_CHARS = 100


def _cut(text: str, length: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"
"""gRPC's retry pushback (the A6 retry design): trailing metadata a client's retry policy reads, the
milliseconds to wait before the next attempt, or a negative value for "do not retry"."""
NO_RETRY_PUSHBACK = "-1"
SHED_JITTER = 0.5
"""A shed's delay is spread over ``[retry_after, retry_after * (1 + SHED_JITTER))``: stock gRPC
clients wait exactly the pushback, so clients shed together would otherwise come back together."""


def _retry_delay(seconds: float) -> duration_pb2.Duration:
    spread = seconds * (1.0 + SHED_JITTER * random.random())
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(spread * 1e9))
    return delay


def status_of(proto: status_pb2.Status) -> grpc.Status:
    """The gRPC status of ``proto`` (a ``google.rpc.Status``), its trailing metadata with the details
    and, for RESOURCE_EXHAUSTED, gRPC's retry pushback: the RetryInfo's delay in milliseconds for a
    shed, ``-1`` (do not retry) for a request over a limit. Also used for a status mapped in a worker
    process (:mod:`bigtwo.service.offload`), so both ways of running a call answer alike."""
    status: grpc.Status = rpc_status.to_status(proto)
    if proto.code != code_pb2.RESOURCE_EXHAUSTED:
        return status
    pushback = NO_RETRY_PUSHBACK
    for detail in proto.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            pushback = str(max(0, info.retry_delay.ToMilliseconds()))
    metadata = (*status.trailing_metadata, (RETRY_PUSHBACK_KEY, pushback))
    return _Status(status.code, status.details, metadata)


class _Status(collections.namedtuple("_Status", ("code", "details", "trailing_metadata")), grpc.Status):
    """A ``grpc.Status`` value, as ``rpc_status.to_status`` makes one, with more trailing metadata."""


def _pack(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)  # type: ignore[arg-type]
    return packed


def to_rpc_status(exc: BaseException, request_id: str = "") -> tuple[grpc.Status, grpc.StatusCode]:
    """The ONE mapping from anything a handler raised to the status the client sees.

    ServiceError -> its code with BadRequest / ErrorInfo details (a :class:`Shed` also a RetryInfo,
    and is counted in ``bigtwo_shed_total``); RESOURCE_EXHAUSTED carries gRPC's retry pushback
    (:func:`status_of`); an engine ValueError that escaped
    a :func:`field` block -> INVALID_ARGUMENT; anything else is a bug -> INTERNAL with a request
    id and no detail (the caller logs the traceback)."""
    if isinstance(exc, CodecFieldError):
        exc = bad_field(exc.path, exc.reason)
    if isinstance(exc, ServiceError):
        code, message = exc.code, exc.message
        details: list[any_pb2.Any] = []
        if exc.violations:
            request = error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=_cut(v.field, METADATA_CHARS), description=_cut(v.description)
                    )
                    for v in exc.violations[:4]
                ]
            )
            details.append(_pack(request))
        if exc.reason:
            metadata = {_cut(k, METADATA_CHARS): _cut(v, METADATA_CHARS) for k, v in list(exc.metadata.items())[:8]}
            details.append(_pack(error_details_pb2.ErrorInfo(reason=exc.reason, domain=DOMAIN, metadata=metadata)))
        if isinstance(exc, Shed):
            details.append(_pack(error_details_pb2.RetryInfo(retry_delay=_retry_delay(exc.retry_after))))
            count_shed(exc.reason)
    elif isinstance(exc, LearnedUnavailable):
        # A server installed without its server extra's numpy: the level is known, it cannot play here.
        code, message = grpc.StatusCode.UNIMPLEMENTED, str(exc)
        details = [_pack(error_details_pb2.ErrorInfo(reason="BOT_LEVEL_NOT_INSTALLED", domain=DOMAIN))]
    elif isinstance(exc, _ENGINE_INPUT_ERRORS):
        code, message = grpc.StatusCode.INVALID_ARGUMENT, str(exc)
        details = [
            _pack(
                error_details_pb2.BadRequest(
                    field_violations=[error_details_pb2.BadRequest.FieldViolation(field="", description=_cut(message))]
                )
            )
        ]
    elif isinstance(exc, _TOO_LARGE_ERRORS):
        code = grpc.StatusCode.RESOURCE_EXHAUSTED
        message = "the request is too large or too deeply nested for the service to work on"
        details = [_pack(error_details_pb2.ErrorInfo(reason="REQUEST_TOO_COMPLEX", domain=DOMAIN))]
    else:
        code = grpc.StatusCode.INTERNAL
        message = f"internal error (request id {request_id})" if request_id else "internal error"
        details = []
    proto = status_pb2.Status(code=getattr(code_pb2, code.name), message=_cut(message), details=details)
    return status_of(proto), code
