"""The service's RPCs, read from their one source: the generated descriptor of
``bigtwo.v1.BigTwoService`` (proto/bigtwo/v1/service.proto).

Each RPC's name, snake_case method name, request and response classes and streaming kind come from
the descriptor; no module lists the RPCs by hand. What differs per RPC is written where it belongs
(the core's handler, the cost bound, the client's builder, the fuzzer's requests) in a table keyed
by these names, which :func:`check_covers` holds to this list: an RPC added to the proto without its
entry in one of them fails at import with a sentence naming the RPC and the table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bigtwo.v1 import service_pb2 as api
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

_SERVICE = api.DESCRIPTOR.services_by_name["BigTwoService"]
SERVICE_NAME: str = _SERVICE.full_name
"""``bigtwo.v1.BigTwoService``: the first part of every RPC's path."""


def snake_case(name: str) -> str:
    """``SettleMatch`` -> ``settle_match``: the Python name of an RPC's method."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True, slots=True)
class RpcSpec:
    """One RPC as the descriptor declares it."""

    name: str
    """As in the proto and on the wire: ``SettleMatch``."""
    method: str
    """Its snake_case name: ``settle_match``."""
    request: type[Message]
    response: type[Message]
    client_streaming: bool
    server_streaming: bool

    @property
    def streaming(self) -> bool:
        return self.client_streaming or self.server_streaming

    @property
    def path(self) -> str:
        """The gRPC path: ``/bigtwo.v1.BigTwoService/SettleMatch``."""
        return f"/{SERVICE_NAME}/{self.name}"


RPCS: tuple[RpcSpec, ...] = tuple(
    RpcSpec(
        method.name,
        snake_case(method.name),
        GetMessageClass(method.input_type),
        GetMessageClass(method.output_type),
        method.client_streaming,
        method.server_streaming,
    )
    for method in _SERVICE.methods
)
"""Every RPC of the service, in the proto's order."""
UNARY_RPCS: tuple[RpcSpec, ...] = tuple(rpc for rpc in RPCS if not rpc.streaming)
STREAM_RPCS: tuple[RpcSpec, ...] = tuple(rpc for rpc in RPCS if rpc.streaming)
BY_NAME: Mapping[str, RpcSpec] = {rpc.name: rpc for rpc in RPCS}


class RpcTableError(RuntimeError):
    """A table of per-RPC behaviour that does not match the service's RPCs."""


def check_covers(table: Iterable[str], what: str, rpcs: Iterable[RpcSpec] = RPCS) -> None:
    """Raise :class:`RpcTableError` unless ``table`` (RPC names) holds exactly the names of ``rpcs``:
    the sentence names ``what`` lacks an entry for, and what it names that is no such RPC."""
    names = [rpc.name for rpc in rpcs]
    keys = set(table)
    missing = [name for name in names if name not in keys]
    unknown = sorted(keys.difference(names))
    problems = []
    if missing:
        problems.append(f"no entry for {', '.join(missing)}")
    if unknown:
        problems.append(f"{', '.join(unknown)} named, which {SERVICE_NAME} does not have as such")
    if problems:
        raise RpcTableError(f"{what}: {'; '.join(problems)} (the RPCs are those of service.proto)")


def check_known(names: Iterable[str], what: str) -> None:
    """Raise :class:`RpcTableError` if ``names`` holds a name that is no RPC of the service."""
    unknown = sorted(set(names).difference(BY_NAME))
    if unknown:
        raise RpcTableError(f"{what}: {', '.join(unknown)} named, which {SERVICE_NAME} does not have")


__all__ = [
    "BY_NAME",
    "RPCS",
    "SERVICE_NAME",
    "STREAM_RPCS",
    "UNARY_RPCS",
    "RpcSpec",
    "RpcTableError",
    "check_covers",
    "check_known",
    "snake_case",
]
