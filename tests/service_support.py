"""Helpers for the service tests: a server subprocess that is always stopped (on free ports:
bigtwo.tools.local_server, the one home of both, re-exported here), rich status details."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from bigtwo.engine import Deal
from bigtwo.service import convert as cv
from bigtwo.tools.local_server import LocalServer, free_port
from bigtwo.v1 import types_pb2 as pb
from google.rpc import error_details_pb2
from grpc_status import rpc_status

KEY_A = "test-key-a-" + "a" * 40
KEY_B = "test-key-b-" + "b" * 40
CODE = "0000003NQK8N1"


MAKE_RUN_PORTS = (50051, 9464, 8080)
"""What ``make run`` holds while a developer runs ``make test`` beside it: gRPC, metrics, browser."""


@contextlib.contextmanager
def holding_make_run_ports() -> Iterator[list[int]]:
    """Listen on ``make run``'s ports (those free now; a busy one is already held by someone) for
    the duration, so that a test or doc block that binds or assumes a default port fails here as it
    would beside ``make run``. Yields the ports this call holds."""
    held: list[socket.socket] = []
    try:
        for port in MAKE_RUN_PORTS:
            sock = socket.socket()
            try:
                sock.bind(("127.0.0.1", port))
                sock.listen(1)
            except OSError:
                sock.close()
                continue
            held.append(sock)
        yield [sock.getsockname()[1] for sock in held]
    finally:
        for sock in held:
            sock.close()


class ServerProcess(LocalServer):
    """``bigtwo serve`` for a test (:class:`~bigtwo.tools.local_server.LocalServer`): token key
    ``keys``, its home and its log in ``tmp``, /metrics on a free port with ``metrics``, a 5 s grace;
    with ``wait``, started when its health says SERVING. :meth:`stop` always ends it."""

    def __init__(
        self,
        tmp: Path,
        *args: str,
        keys: str = KEY_A,
        metrics: bool = True,
        env: dict[str, str] | None = None,
        wait: bool = True,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        port = free_port()
        super().__init__(
            *args,
            port=port,
            metrics=metrics,
            grace=5,
            keys=keys,
            home=tmp / "home",
            env=env,
            log=tmp / f"server-{port}.log",
            preexec_fn=preexec_fn,
            wait=wait,
        )


@contextlib.contextmanager
def replicas(tmp: Path, count: int, *args: str, metrics: bool = False, **ready: Any) -> Iterator[list[ServerProcess]]:
    """``count`` servers started side by side (a loaded machine starts them together), each waited
    for (``ready``: :meth:`ServerProcess.wait_ready`'s options, TLS credentials say), all stopped at
    the end, whatever the outcome."""
    servers = [ServerProcess(tmp, *args, metrics=metrics, wait=False) for _ in range(count)]
    try:
        for server in servers:
            server.wait_ready(**ready)
        yield servers
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.stop()


def details(error: grpc.RpcError) -> dict[str, Any]:
    """The rich status of a failed call: field violations and ErrorInfo reason."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    out: dict[str, Any] = {"fields": [], "reason": "", "metadata": {}}
    if status is None:
        return out
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            request = error_details_pb2.BadRequest()
            detail.Unpack(request)
            out["fields"] += [violation.field for violation in request.field_violations]
        elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            out["reason"] = info.reason
            out["metadata"] = dict(info.metadata)
    return out


def children_of(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc: the suite runs on Linux)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces; the parent pid is the 2nd field after it.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def reference_table(deal: Deal, deal_id: str, deal_code: str = "") -> pb.TableState:
    """The public table written field by field from the deal's state: the specification the fast
    writer (service/wire.py) is checked against; ``deal_code`` is shown once the deal is over."""
    out = pb.TableState(
        players=deal.players,
        moves_made=deal.moves_made,
        to_act=deal.to_act,
        leader=deal.leader,
        cards_left=[hand.bit_count() for hand in deal.hands],
        played=cv.card_set(deal.played),
        passed_seats=[seat for seat in range(deal.players) if deal.passed >> seat & 1],
        deal_number=deal.deal_number,
        deal_id=deal_id,
        ruleset_fingerprint=deal.ruleset.fingerprint,
    )
    if deal.opening_card >= 0:
        out.opening_card = cv.card_name(deal.opening_card)
    if deal.table is not None:
        out.table.CopyFrom(cv.play_to_pb(deal.table, deal.ruleset))
    if deal.last_player >= 0:
        out.last_player = deal.last_player
    if deal.winner >= 0:
        out.over, out.winner, out.deal_code = True, deal.winner, deal_code
        out.scores.extend(deal.scores)
    return out
