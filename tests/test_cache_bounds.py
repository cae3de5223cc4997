"""Every cache has a bound (issue 13, item 6): a caller chooses the keys (any ruleset, any hand), so
no memo may grow with them."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

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


# The engine's own bounds (the bots' splits, classified plays, rule tables) are tested in
# tests/test_cache.py, with the one memo type they all use.
