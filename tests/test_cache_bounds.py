"""Every cache has a bound (issue 13, item 6): a caller chooses the keys (any ruleset, any hand), so
no memo may grow with them. The bounds themselves are lowered here so that the tests fill them."""

from __future__ import annotations

import importlib
import pkgutil
import random
from typing import Any

import pytest
from bigtwo.engine import Ruleset, classify_mask, tables_for
from bigtwo.engine import combos as combos_module
from bigtwo.engine.bots import plan
from bigtwo.engine.generate import CARD_MASK, all_plays

PACKAGES = ("bigtwo.engine", "bigtwo.service", "bigtwo.engine.replay")


def modules() -> list[Any]:
    out = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        out.append(package)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            if info.name.endswith(("bench", ".commands", "render_html", "render_terminal")):
                continue  # commands and benchmarks, not the service's code
            out.append(importlib.import_module(info.name))
    return out


def test_no_functools_cache_is_unbounded() -> None:
    for module in modules():
        for attr, value in vars(module).items():
            info = getattr(value, "cache_info", None)
            if callable(info) and getattr(value, "__module__", "") == module.__name__:
                assert info().maxsize is not None, f"{module.__name__}.{attr} caches without a bound"


def rulesets(count: int) -> list[Ruleset]:
    """``count`` distinct rulesets, as a caller makes them: the match length counts up."""
    return [Ruleset.from_mapping({"match": f"deals:{n + 1}"}) for n in range(count)]


def test_the_bots_split_cache_is_bounded_whatever_the_rulesets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan, "SPLITS_KEPT", 50)
    monkeypatch.setattr(plan, "RULESETS_KEPT", 3)
    plan._forget()
    rng = random.Random(3)
    for rules in rulesets(10):
        tables = tables_for(rules)
        for _ in range(30):
            hand = sum(1 << card for card in rng.sample(range(52), 7))
            assert plan.split(hand, tables) == plan._split(hand, tables)
            assert len(plan._SPLITS) <= 3
            assert sum(len(cache) for _, cache in plan._SPLITS.values()) <= 50
    plan._forget()


def test_a_split_asked_twice_comes_from_the_cache() -> None:
    plan._forget()
    tables = tables_for(Ruleset())
    hand = sum(1 << card for card in range(0, 26, 2))
    first = plan.split(hand, tables)
    assert plan.split(hand, tables) is first


def test_the_classified_plays_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(combos_module, "KNOWN_PLAYS_LIMIT", 40)
    tables = tables_for(Ruleset.from_mapping({"match": "deals:4321"}))
    tables.known_plays.clear()
    hand = sum(1 << card for card in range(18))
    masks = [encoded & CARD_MASK for encoded in all_plays(hand, tables)]
    assert len(masks) > 40
    for mask in masks:
        assert classify_mask(mask, tables).mask == mask
    assert len(tables.known_plays) == 40
    tables.known_plays.clear()
