"""The one memo type of the project: :class:`BoundedCache`, a dictionary of at most ``capacity`` entries.

Every memo (classified plays, move texts, rule tables, token snapshots, encoded messages) is one of
these, so each is bounded the same way and reports the same statistics, whoever fills it: a server
fed hostile inputs cannot grow a memo past its capacity.

The policy is deliberately simple: a hit writes nothing (an LRU's recency list would touch two more
entries, cold in a loaded server's CPU caches, on every lookup); a miss stores its value; a store into
a full cache first empties it, so the working set of the moment refills it. :func:`cache_stats` lists
every live cache for the service's metrics.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

_LIVE: weakref.WeakSet[BoundedCache[object, object]] = weakref.WeakSet()


@dataclass(frozen=True, slots=True)
class CacheStats:
    """One cache's figures: ``owner`` names the code that fills it (``engine.combos.plays``)."""

    owner: str
    capacity: int
    entries: int
    misses: int
    """Values computed and stored (every lookup that found nothing and then stored)."""
    clears: int
    """Times the cache was full and emptied to make room."""


class BoundedCache(Generic[K, V]):
    """A memo of at most ``capacity`` entries, owned by ``owner``.

    ``get`` is the dictionary's own lookup (no Python frame per hit); ``put`` stores, emptying the
    cache first when it is full::

        value = cache.get(key)
        if value is None:
            value = cache.put(key, compute(key))
    """

    __slots__ = ("__weakref__", "_entries", "capacity", "clears", "get", "misses", "owner")

    def __init__(self, owner: str, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a cache holds at least one entry, not {capacity}")
        self.owner = owner
        self.capacity = capacity
        self.misses = 0
        self.clears = 0
        self._entries: dict[K, V] = {}
        self.get: Callable[[K], V | None] = self._entries.get
        _LIVE.add(self)  # type: ignore[arg-type]

    def put(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` and return it."""
        entries = self._entries
        if len(entries) >= self.capacity:
            entries.clear()
            self.clears += 1
        self.misses += 1
        entries[key] = value
        return value

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        """The value under ``key``, computed and stored on a miss."""
        value = self._entries.get(key)
        if value is None:
            value = self.put(key, compute(key))
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def stats(self) -> CacheStats:
        return CacheStats(self.owner, self.capacity, len(self._entries), self.misses, self.clears)


class IdentityCache(Generic[K, V]):
    """A memo keyed by object identity, for values that hash slowly (rulesets hold ladders of
    frozensets). The object is kept with its value, so its id is not reused while it is cached."""

    __slots__ = ("_cache", "_compute")

    def __init__(self, owner: str, compute: Callable[[K], V], capacity: int) -> None:
        self._compute = compute
        self._cache: BoundedCache[int, tuple[K, V]] = BoundedCache(owner, capacity)

    def __call__(self, obj: K) -> V:
        entry = self._cache.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        value = self._compute(obj)
        self._cache.put(id(obj), (obj, value))
        return value

    def stats(self) -> CacheStats:
        return self._cache.stats()


def cache_stats() -> Iterator[CacheStats]:
    """The figures of every live cache, by owner (several caches of one owner are summed)."""
    totals: dict[str, CacheStats] = {}
    for cache in list(_LIVE):
        one = cache.stats()
        seen = totals.get(one.owner)
        totals[one.owner] = (
            one
            if seen is None
            else CacheStats(
                one.owner,
                seen.capacity + one.capacity,
                seen.entries + one.entries,
                seen.misses + one.misses,
                seen.clears + one.clears,
            )
        )
    return iter(sorted(totals.values(), key=lambda stats: stats.owner))


def clear_caches() -> None:
    """Empty every live cache: what a benchmark of a call's cold cost (a hand, a ruleset, a token
    never seen before) runs before each timing (``bigtwo.tools.cost_bench``)."""
    for cache in list(_LIVE):
        cache.clear()


__all__ = ["BoundedCache", "CacheStats", "IdentityCache", "cache_stats", "clear_caches"]
