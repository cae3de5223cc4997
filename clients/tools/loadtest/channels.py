"""The load generator's connections and pacing: ``channels`` gRPC connections per target, so that
the kernel's balancing of connections spreads the calls over replicas (see
:mod:`bigtwo.tools.loadtest.generator`), and send times spaced to a target rate."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import grpc
from bigtwo.v1 import service_pb2_grpc as rpc

APPLY_METHOD = "/bigtwo.v1.BigTwoService/ApplyMove"


# -- channels --------------------------------------------------------------------------------------


@dataclass
class Slot:
    target: str
    channel: grpc.aio.Channel
    stub: Any
    raw_apply: Any
    down_until: float = 0.0


class Pool:
    """``channels`` connections to each target, interleaved so that slot i+1 is another target."""

    def __init__(self, targets: list[str], channels: int, max_message_bytes: int = 4 << 20) -> None:
        options = [
            ("grpc.use_local_subchannel_pool", 1),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.enable_retries", 0),
            ("grpc.initial_reconnect_backoff_ms", 200),
            ("grpc.max_reconnect_backoff_ms", 1000),
        ]
        self.slots: list[Slot] = []
        for _ in range(max(1, channels)):
            for target in targets:
                channel = grpc.aio.insecure_channel(target, options=options)
                self.slots.append(
                    Slot(target, channel, rpc.BigTwoServiceStub(channel), channel.unary_unary(APPLY_METHOD))
                )

    def pick(self, start: int) -> int:
        """The first slot from ``start`` (round-robin) not marked down; ``start`` when all are."""
        now = time.monotonic()
        count = len(self.slots)
        for step in range(count):
            index = (start + step) % count
            if self.slots[index].down_until <= now:
                return index
        return start % count

    def mark_down(self, index: int, seconds: float = 1.0) -> None:
        self.slots[index % len(self.slots)].down_until = time.monotonic() + seconds

    async def close(self) -> None:
        for slot in self.slots:
            await slot.channel.close()


# -- pacing ----------------------------------------------------------------------------------------


class Pacer:
    """Hands out send times ``1/rate`` apart; a late caller does not earn a burst (at most 50 ms)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        self.next = max(self.next, now - 0.05)
        delay = self.next - now
        self.next += self.interval
        if delay > 0:
            await asyncio.sleep(delay)
