"""The browser port's idle-connection bound: a connection with no call in flight for
``WebLimits.idle_seconds`` is closed by the server itself.

Why here and not in the HTTP server: hyper (under Granian 2.8.7) times out an idle HTTP/1.1
connection (its header read timeout starts when it waits for the next request) but has no idle
timeout for HTTP/2. Granian's HTTP/2 settings bound streams, windows, headers and a keep-alive
ping, and a ping only finds a peer that is gone: a client that answers pings and opens no stream
holds its connection, and its place under ``WebLimits.connections``, for ever. Granian owns the
accepted sockets (its Rust threads accept and parse), but they are descriptors of this process, so
the port sees them from outside the HTTP stack:

* :class:`ConnectionActivity` counts each connection's calls in flight and remembers when its last
  one ended, keyed by the peer's address and port (the ASGI scope's ``client``, which is the
  socket's ``getpeername()``); :class:`~bigtwo.service.web_server.EdgeGuard` records every request;
* :class:`IdleReaper` looks every few seconds at this process's sockets connected to the port
  (``/proc/self/fd``, each a duplicate descriptor, whose local port says it is the browser port's)
  and shuts down (``shutdown(SHUT_RDWR)``, a TCP FIN) each one with no call in flight and none for
  ``idle_seconds`` (for one that never made a call, since the reaper first saw it). hyper then reads
  the end of the stream and ends the connection, which frees its place.

What it costs and what it cannot do: a sweep reads one ``/proc`` entry per descriptor of the process
and duplicates each socket for a moment (a few ms with a thousand connections, off the event loop).
It sends no GOAWAY (hyper owns the framing; a write beside it could split one of its frames): an
idle HTTP/2 client sees the connection close, as after a proxy's idle timeout, and opens another.
Frames that are not calls (PING, SETTINGS, WINDOW_UPDATE) do not count as activity, so a client
cannot keep a connection by pinging. A call that reaches hyper in the instant between the sweep's
check and the shutdown is lost with the connection (its client sees a reset, as with any idle
close). Linux only (``/proc``); elsewhere the reaper says so once and does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .telemetry import logger

Peer = tuple[str, int]
"""A connection, by its client's address and port."""

FD_FOLDER = "/proc/self/fd"
SWEEPS_PER_IDLE = 4
"""Sweeps per ``idle_seconds``: a connection is closed between ``idle_seconds`` and that plus a
quarter of it (at most :data:`LONGEST_SWEEP_SECONDS` more)."""
LONGEST_SWEEP_SECONDS = 5.0
SHORTEST_SWEEP_SECONDS = 0.1


@dataclass(slots=True)
class ConnectionActivity:
    """Calls in flight, and when the last one ended, per connection of the port."""

    in_flight: dict[Peer, int] = field(default_factory=dict)
    last_active: dict[Peer, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic

    def begin(self, peer: Peer) -> None:
        self.in_flight[peer] = self.in_flight.get(peer, 0) + 1

    def end(self, peer: Peer) -> None:
        left = self.in_flight.get(peer, 1) - 1
        if left > 0:
            self.in_flight[peer] = left
        else:
            self.in_flight.pop(peer, None)
        self.last_active[peer] = self.clock()

    def idle(self, alive: list[Peer], seconds: float) -> list[Peer]:
        """Of the connections ``alive`` now, those with no call in flight and none for ``seconds``
        (a connection first seen now starts its count now); connections gone are forgotten."""
        now = self.clock()
        idle = []
        for peer in alive:
            if peer in self.in_flight:
                continue
            since = self.last_active.setdefault(peer, now)
            if now - since >= seconds:
                idle.append(peer)
        living = set(alive)
        for peer in [peer for peer in self.last_active if peer not in living and peer not in self.in_flight]:
            del self.last_active[peer]
        return idle


def peer_of(address: object) -> Peer | None:
    """A connection's key from an ASGI ``client`` or a ``getpeername()`` (IPv6: its first two)."""
    if isinstance(address, (tuple, list)) and len(address) >= 2:
        return str(address[0]), int(address[1])
    return None


def port_connections(port: int) -> dict[Peer, socket.socket]:
    """Duplicates of this process's sockets connected to local ``port``, by peer (the caller closes
    them). A descriptor closed or reused while it is read is skipped or is another connection of
    the port: a duplicate is checked by its own addresses, never by the number it had."""
    found: dict[Peer, socket.socket] = {}
    for entry in os.scandir(FD_FOLDER):
        try:
            if not os.readlink(entry.path).startswith("socket:"):
                continue
            duplicate = os.dup(int(entry.name))
        except (OSError, ValueError):
            continue
        try:
            sock = socket.socket(fileno=duplicate)
        except OSError:
            os.close(duplicate)
            continue
        keep = False
        try:
            inet = sock.family in (socket.AF_INET, socket.AF_INET6)  # a Unix socket's name is a str
            if inet and sock.type == socket.SOCK_STREAM and sock.getsockname()[1] == port:
                peer = peer_of(sock.getpeername())  # the listening socket has none: OSError
                if peer is not None and peer not in found:
                    found[peer] = sock
                    keep = True
        except OSError:
            pass
        finally:
            if not keep:
                sock.close()
    return found


class IdleReaper:
    """Closes the port's connections idle for ``idle_seconds`` (see the module's docstring)."""

    def __init__(self, activity: ConnectionActivity, port: int, idle_seconds: float) -> None:
        self.activity = activity
        self.port = port
        self.idle_seconds = idle_seconds
        self.interval = max(SHORTEST_SWEEP_SECONDS, min(LONGEST_SWEEP_SECONDS, idle_seconds / SWEEPS_PER_IDLE))
        self.closed = 0
        """Connections closed for idleness since the port started."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if not os.path.isdir(FD_FOLDER):
            logger().warning("web idle connections not closed", reason=f"no {FD_FOLDER} here (not Linux)")
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name="bigtwo-web-idle")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.sweep()
            except OSError as error:  # /proc unreadable for a moment (descriptors exhausted, say)
                logger().warning("web idle sweep failed", error=str(error))

    async def sweep(self) -> int:
        """One look at the port's connections; the number closed."""
        connections = await asyncio.to_thread(port_connections, self.port)
        try:
            idle = self.activity.idle(list(connections), self.idle_seconds)
            for peer in idle:
                with contextlib.suppress(OSError):  # it closed on its own meanwhile
                    connections[peer].shutdown(socket.SHUT_RDWR)
        finally:
            for sock in connections.values():
                sock.close()
        if idle:
            self.closed += len(idle)
            logger().info(
                "web idle connections closed", closed=len(idle), idle_seconds=self.idle_seconds, total=self.closed
            )
        return len(idle)


__all__ = ["ConnectionActivity", "IdleReaper", "Peer", "peer_of", "port_connections"]
