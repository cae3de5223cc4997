"""Which target a call goes to: round-robin over the targets that are up, skipping one marked down.

A target whose call failed with ``UNAVAILABLE`` (connection refused, the replica draining or gone)
is marked down for a short time that grows with each failure in a row and is jittered, so clients
that saw one replica die do not all probe it at the same instant: :data:`FIRST_DOWN_SECONDS`, then
twice as long each time, at most :data:`MAX_DOWN_SECONDS`, each scaled by a random factor in
``[1 - DOWN_JITTER, 1]``. Meanwhile first attempts and retries go to the others. When the time is
up the next call that comes to it in turn is sent: if it fails it is marked down again for longer,
if it is answered the target is up at once. When every target is down, the one down longest is
tried (a call is never refused here). Skipping a target never sends anything twice: a call is
sent again only when its attempt failed, and a move carries its index.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass

FIRST_DOWN_SECONDS = 0.5
"""How long a target is skipped after its first failure in a row."""
MAX_DOWN_SECONDS = 8.0
"""The longest it is skipped at once (a dead replica is tried about this often by each client)."""
DOWN_JITTER = 0.5
"""Each time down is scaled by a random factor in ``[1 - DOWN_JITTER, 1]``."""


@dataclass(slots=True)
class _Down:
    since: float
    """When the current run of failures began (the one down longest is tried when all are down)."""
    until: float
    """Skipped until then."""
    failures: int
    """Failures in a row (each one seen after the last time down ran out)."""


class TargetRing:
    """The targets' order and their down marks; safe across threads (one lock, held briefly)."""

    def __init__(self, count: int, rng: random.Random) -> None:
        if count < 1:
            raise ValueError("at least one target")
        self.count = count
        self._rng = rng
        self._down: dict[int, _Down] = {}
        self._lock = threading.Lock()
        self._turn = 0
        self.skipped = 0
        """Times a target was passed over because it was down (a call went to another)."""
        self.marked_down = 0
        """Times a target was marked down (after a failure once its time down had run out)."""

    def next_start(self) -> int:
        """The position of the next call in the round-robin (before skipping)."""
        with self._lock:
            turn = self._turn
            self._turn += 1
            return turn

    def pick(self, position: int) -> int:
        """The target for an attempt at ``position`` (a call's start plus its attempt number): the
        first target from there that is not down; when all are, the one down longest."""
        now = time.monotonic()
        with self._lock:
            if not self._down:
                return position % self.count
            for step in range(self.count):
                index = (position + step) % self.count
                mark = self._down.get(index)
                if mark is None or mark.until <= now:
                    self.skipped += step
                    return index
            self.skipped += self.count - 1
            return min(self._down, key=lambda index: self._down[index].since)

    def failed(self, index: int) -> None:
        """A call to target ``index`` failed UNAVAILABLE: mark it down (a failure while it is already
        down, from a call sent before the mark, does not lengthen it)."""
        now = time.monotonic()
        with self._lock:
            mark = self._down.get(index)
            if mark is not None and mark.until > now:
                return
            failures = 1 if mark is None else mark.failures + 1
            seconds = min(MAX_DOWN_SECONDS, FIRST_DOWN_SECONDS * 2 ** (failures - 1))
            seconds *= 1.0 - DOWN_JITTER * self._rng.random()
            self._down[index] = _Down(now if mark is None else mark.since, now + seconds, failures)
            self.marked_down += 1

    def answered(self, index: int) -> None:
        """A call to target ``index`` was answered (with any status but UNAVAILABLE): it is up."""
        if index in self._down:
            with self._lock:
                self._down.pop(index, None)

    def down(self) -> list[int]:
        """The targets down now."""
        now = time.monotonic()
        with self._lock:
            return sorted(index for index, mark in self._down.items() if mark.until > now)


__all__ = ["DOWN_JITTER", "FIRST_DOWN_SECONDS", "MAX_DOWN_SECONDS", "TargetRing"]
