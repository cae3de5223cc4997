"""The one memo type (engine/cache.py): a :class:`BoundedCache` never holds more than its capacity
whatever keys callers choose, counts what it computes and clears, and reports by owner; an
:class:`IdentityCache` never answers for a different object that reuses a dead one's id. Every
memo of the engine is one of these: no module keeps a dictionary or a functools cache of its own."""

from __future__ import annotations

import ast
import dataclasses
import gc
import random
from pathlib import Path

import pytest
from bigtwo.engine import Ruleset, classify_mask, preset, tables_for
from bigtwo.engine.bots import plan
from bigtwo.engine.cache import BoundedCache, CacheStats, IdentityCache, cache_stats
from bigtwo.engine.generate import CARD_MASK, all_plays
from bigtwo.engine.rules import MatchKind, MatchLength

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"


def stats_of(owner: str) -> CacheStats:
    return next(stats for stats in cache_stats() if stats.owner == owner)


# -- BoundedCache ---------------------------------------------------------------------------------


def test_a_bounded_cache_never_holds_more_than_its_capacity() -> None:
    cache = BoundedCache[int, str]("test.bounded", 10)
    for key in range(1000):
        assert cache.get(key) is None
        assert cache.put(key, str(key)) == str(key)
        assert len(cache) <= 10
    stats = cache.stats()
    assert stats == CacheStats("test.bounded", 10, len(cache), 1000, 99)
    assert cache.get(999) == "999" and 999 in cache


def test_a_hit_is_the_dictionary_lookup_and_writes_nothing() -> None:
    cache = BoundedCache[str, int]("test.hits", 4)
    cache.put("a", 1)
    assert cache.get("a") == 1 and cache.get("a") == 1
    assert cache.stats().misses == 1  # hits are not counted: a hit costs one dictionary probe
    assert type(cache.get).__name__ == "builtin_function_or_method"


def test_get_or_compute_computes_once_per_key() -> None:
    cache = BoundedCache[int, int]("test.compute", 8)
    calls: list[int] = []

    def square(key: int) -> int:
        calls.append(key)
        return key * key

    assert [cache.get_or_compute(k, square) for k in (3, 3, 4, 3)] == [9, 9, 16, 9]
    assert calls == [3, 4]


def test_clear_empties_and_a_capacity_below_one_is_refused() -> None:
    cache = BoundedCache[int, int]("test.clear", 2)
    cache.put(1, 1)
    cache.clear()
    assert len(cache) == 0 and cache.get(1) is None
    with pytest.raises(ValueError):
        BoundedCache[int, int]("test.none", 0)


def test_stats_are_summed_by_owner_and_dead_caches_leave() -> None:
    first = BoundedCache[int, int]("test.owner", 3)
    second = BoundedCache[int, int]("test.owner", 5)
    for key in range(4):
        first.put(key, key)
        second.put(key, key)
    assert stats_of("test.owner") == CacheStats("test.owner", 8, 1 + 4, 8, 1)
    owners = [stats.owner for stats in cache_stats()]
    assert owners == sorted(owners) and len(owners) == len(set(owners))
    del first, second
    gc.collect()
    assert "test.owner" not in {stats.owner for stats in cache_stats()}


# -- IdentityCache --------------------------------------------------------------------------------


class Thing:
    """Hashable by identity only, like an object whose value hashes slowly."""

    def __init__(self, value: int) -> None:
        self.value = value


def test_an_identity_cache_computes_once_per_object() -> None:
    calls: list[int] = []

    def compute(thing: Thing) -> int:
        calls.append(thing.value)
        return thing.value * 10

    cache = IdentityCache[Thing, int]("test.identity", compute, 4)
    one, two = Thing(1), Thing(2)
    assert [cache(one), cache(one), cache(two), cache(one)] == [10, 10, 20, 10]
    assert calls == [1, 2]
    assert cache.stats().owner == "test.identity" and cache.stats().misses == 2


def test_an_identity_cache_keeps_its_objects_alive_so_no_id_is_reused() -> None:
    cache = IdentityCache[Thing, int]("test.identity.alive", lambda thing: thing.value, 1000)
    ids = set()
    for value in range(500):
        thing = Thing(value)
        assert cache(thing) == value
        ids.add(id(thing))
        del thing  # still held by the cache: the next object cannot take its id
    assert len(ids) == 500


def test_an_identity_cache_never_answers_for_another_object_with_a_reused_id() -> None:
    cache = IdentityCache[Thing, int]("test.identity.reuse", lambda thing: thing.value, 1)
    answers = [cache(Thing(value)) for value in range(200)]  # capacity 1: each store drops the last
    assert answers == list(range(200))
    assert cache.stats().entries == 1


# -- the engine's caches --------------------------------------------------------------------------


def test_the_engines_caches_report_by_owner() -> None:
    tables = tables_for(Ruleset())
    classify_mask(1, tables)
    plan.split(0b1111, tables)
    owners = {stats.owner for stats in cache_stats()}
    assert {"engine.tables.rule_tables", "engine.combos.plays", "engine.bots.plan.splits"} <= owners
    assert all(stats.entries <= stats.capacity for stats in cache_stats())


def test_the_split_cache_is_bounded_whatever_the_rulesets(monkeypatch: pytest.MonkeyPatch) -> None:
    small = BoundedCache[int, tuple[object, tuple[tuple[int, ...], int]]]("test.splits", 50)
    monkeypatch.setattr(plan, "_SPLITS", small)
    rng = random.Random(3)
    for n in range(10):
        tables = tables_for(Ruleset.from_mapping({"match": f"deals:{n + 1}"}))
        for _ in range(30):
            hand = sum(1 << card for card in rng.sample(range(52), 7))
            assert plan.split(hand, tables) == plan._split(hand, tables)
            assert len(small) <= 50
    assert small.stats().clears > 0


def test_a_split_asked_twice_comes_from_the_cache_and_other_rules_miss() -> None:
    tables = tables_for(Ruleset())
    other = tables_for(Ruleset.from_mapping({"preset": "taiwan"}))
    hand = sum(1 << card for card in range(0, 26, 2))
    first = plan.split(hand, tables)
    assert plan.split(hand, tables) is first
    assert plan.split(hand, other) == plan._split(hand, other)
    assert plan.split(hand, tables) == first


def test_the_classified_plays_memo_is_bounded() -> None:
    tables = tables_for(Ruleset.from_mapping({"match": "deals:4321"}))
    small = BoundedCache[int, object]("test.plays", 40)
    kept = tables.known_plays
    object.__setattr__(tables, "known_plays", small)  # the tables are frozen; the test swaps the memo
    try:
        hand = sum(1 << card for card in range(18))
        masks = [encoded & CARD_MASK for encoded in all_plays(hand, tables)]
        assert len(masks) > 40
        for mask in masks:
            assert classify_mask(mask, tables).mask == mask
            assert len(small) <= 40
        assert small.stats().clears == (len(masks) - 1) // 40
    finally:
        object.__setattr__(tables, "known_plays", kept)


def test_rule_tables_are_shared_by_equal_rulesets() -> None:
    one = dataclasses.replace(preset("hong-kong"), match=MatchLength(MatchKind.DEALS, 3))
    two = dataclasses.replace(preset("hong-kong"), match=MatchLength(MatchKind.DEALS, 3))
    assert one is not two and tables_for(one) is tables_for(two)


# -- one memo type --------------------------------------------------------------------------------


FUNCTOOLS_MEMOS = {"cache", "lru_cache", "cached_property"}
DICT_MAKERS = {"dict", "defaultdict", "OrderedDict"}


def functools_memos(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            found += [f"functools.{alias.name}" for alias in node.names if alias.name in FUNCTOOLS_MEMOS]
        elif isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "functools":
            found += [f"functools.{node.attr}"] if node.attr in FUNCTOOLS_MEMOS else []
    return found


def module_dicts(tree: ast.Module) -> set[str]:
    """Names bound at module level to a dictionary."""
    out = set()
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        target = node.target if isinstance(node, ast.AnnAssign) else target
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        is_dict = isinstance(value, (ast.Dict, ast.DictComp)) or (
            isinstance(value, ast.Call) and getattr(value.func, "id", "") in DICT_MAKERS
        )
        if isinstance(target, ast.Name) and is_dict:
            out.add(target.id)
    return out


def written_in_functions(tree: ast.Module, names: set[str]) -> list[str]:
    """Which of ``names`` some function writes into: ``d[k] = v``, ``d.setdefault(...)``, ``d.update(...)``."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                found += [node.value.id] if getattr(node.value, "id", None) in names else []  # type: ignore[attr-defined]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"setdefault", "update"}
            ):
                found += [node.func.value.id] if getattr(node.func.value, "id", None) in names else []  # type: ignore[attr-defined]
    return found


def module_level_memos(tree: ast.Module) -> list[str]:
    """Memos a module keeps outside engine/cache.py: functools caches anywhere, and module-level
    dictionaries that a function writes into. Lookup tables built at import are not memos."""
    return functools_memos(tree) + written_in_functions(tree, module_dicts(tree))


def test_the_scan_finds_a_memo() -> None:
    source = "import functools\nfrom functools import lru_cache\n_SEEN = {}\ndef f(k):\n    _SEEN[k] = 1\n"
    assert module_level_memos(ast.parse(source)) == ["functools.lru_cache", "_SEEN"]
    assert module_level_memos(ast.parse("TABLE = {1: 2}\ndef f(k):\n    return TABLE[k]\n")) == []


def test_no_engine_module_keeps_a_memo_of_its_own() -> None:
    offenders = {}
    for path in sorted(ENGINE.rglob("*.py")):
        if path == ENGINE / "cache.py":
            continue
        found = module_level_memos(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"memos outside engine/cache.py (use BoundedCache): {offenders}"
