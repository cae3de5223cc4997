"""Installs by need (issue 34, item 5; README "Installs").

The wheel and a fresh virtual environment holding it alone are made by ``make bare-wheel`` (which
``make test`` runs first: tests/tools/bare_wheel.py, offline), never by a test; the wheel is read
here: which packages and files it holds. The bare environment plays a whole deal, writes and
audits its replay, with no third-party module loaded; its ``bigtwo
serve`` names the extra to install. The table of which extra brings which module
(:mod:`bigtwo.cli.extras`) is checked against pyproject.toml and against every module the shipped
packages import.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from importlib import metadata
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest
from bigtwo.cli.extras import EXTRA_OF_MODULE, NESTED, extra_for, missing_extra

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
LEFT_OUT: list[str] = PYPROJECT["tool"]["bigtwo"]["wheel"]["leave-out"]
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
BARE = ROOT / ".tools" / "bare-wheel"
"""What ``make bare-wheel`` made: dist/bigtwo-*.whl and venv/ holding it alone."""

pytestmark = pytest.mark.slow


# -- the sources, read statically -------------------------------------------------------------------


def module_files(package: str) -> Iterator[tuple[str, Path]]:
    """(dotted name, file) of every module under ``package``'s folder (package-dir), recursively."""
    folder = ROOT / PACKAGE_DIRS[package]
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(folder).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join((package, *parts)), path


def imports_of(path: Path, name: str) -> set[str]:
    """Every module ``path`` (the module ``name``) imports, anywhere in it, as absolute names."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def all_modules() -> dict[str, Path]:
    return {name: path for package in PACKAGE_DIRS for name, path in module_files(package)}


def shipped(name: str) -> bool:
    return not any(name == gone or name.startswith(gone + ".") for gone in LEFT_OUT)


def tools_the_command_reaches() -> set[str]:
    """The bigtwo.tools modules that bigtwo.cli imports, directly or through other tools."""
    modules = all_modules()
    seen: set[str] = set()
    todo = [name for name in modules if name.startswith("bigtwo.cli")]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(found for found in imports_of(modules[name], name) if found in modules and found not in seen)
    with_packages = {".".join(name.split(".")[:i]) for name in seen for i in range(2, name.count(".") + 2)}
    return {name for name in with_packages if name.startswith("bigtwo.tools")}


def test_the_wheel_leaves_out_exactly_the_tools_no_command_imports() -> None:
    tools = {name for name, _ in module_files("bigtwo.tools")}
    reached = tools_the_command_reaches()
    assert {name for name in tools if shipped(name)} == reached, (
        "every module of bigtwo.tools the bigtwo command imports ships; every other is named in "
        "pyproject.toml [tool.bigtwo.wheel] leave-out"
    )
    assert all(any(name == gone or name.startswith(gone + ".") for name in tools) for gone in LEFT_OUT), (
        "leave-out names no module that is gone"
    )


def third_party_imports(names: Iterator[str] | set[str]) -> dict[str, set[str]]:
    """Top-level third-party modules imported by the modules ``names``, and who imports each."""
    modules = all_modules()
    found: dict[str, set[str]] = {}
    for name in names:
        for imported in imports_of(modules[name], name):
            top = imported.split(".")[0]
            if top and top != "bigtwo" and top not in sys.stdlib_module_names and top != "__future__":
                found.setdefault(top, set()).add(name)
    return found


def test_the_engine_and_its_replay_format_import_the_standard_library_only() -> None:
    engine = {name for name, _ in module_files("bigtwo.engine")}
    assert "bigtwo.engine.replay.audit" in engine
    imports = third_party_imports(engine)
    # The learned bot level plays its network with numpy (the learned extra), imported only when
    # that level plays: tests/test_learned.py checks it is refused without numpy and the rest plays.
    assert imports.pop("numpy", set()) <= {"bigtwo.engine.bots.learned", "bigtwo.engine.bots.learned_features"}
    assert EXTRA_OF_MODULE["numpy"] == "learned"
    assert imports == {}


def test_every_third_party_module_the_wheel_imports_has_its_extra() -> None:
    names = {name for name in all_modules() if shipped(name) and not name.startswith("bigtwo.engine")}
    for module, importers in third_party_imports(names).items():
        assert module in EXTRA_OF_MODULE, f"{module} (imported by {sorted(importers)}) is in no extra's table"


def requirement_names(extra: str) -> set[str]:
    """The distributions ``extra`` installs by name, following the project's own extras (bigtwo[x])."""
    names: set[str] = set()
    for requirement in EXTRAS[extra]:
        match = re.match(r"([A-Za-z0-9._-]+)(?:\[([\w,-]+)\])?", requirement)
        assert match, requirement
        if match.group(1) == "bigtwo":
            for inner in (match.group(2) or "").split(","):
                names |= requirement_names(inner)
        else:
            names.add(normal(match.group(1)) + (f"[{match.group(2)}]" if match.group(2) else ""))
    return names


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_closure(names: set[str]) -> set[str]:
    """``names`` and, in the dev install, what they require in turn (their own extras left out): a
    module may come with a dependency of what the extra names (google.rpc with grpcio-status)."""
    found: set[str] = set()
    todo = list(names)
    while todo:
        name, _, extras = todo.pop().partition("[")
        wanted = set(extras.rstrip("]").split(",")) - {""}
        if name in found and not wanted:
            continue
        found.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            marker = re.search(r"extra == ['\"]([\w-]+)['\"]", requirement)
            if marker is None or marker.group(1) in wanted:
                match = re.match(r"[A-Za-z0-9._-]+", requirement)
                assert match, requirement
                todo.append(normal(match.group(0)))
    return found


def test_each_module_of_the_table_comes_with_its_extra() -> None:
    providers = packages_distributions()  # the dev install holds every extra
    for module, extra in EXTRA_OF_MODULE.items():
        assert extra in EXTRAS, f"{module}: no extra named {extra}"
        dists = {normal(dist) for dist in providers.get(module, [])}
        assert dists, f"{module}: no installed distribution provides it"
        brought = installed_closure(requirement_names(extra))
        assert dists & brought, f"{module} ({dists}) comes with none of {extra}'s {sorted(brought)}"
    for smaller, larger in itertools.pairwise(NESTED):
        assert requirement_names(smaller) <= requirement_names(larger), f"{larger} holds {smaller}"
    for extra in EXTRAS:
        assert requirement_names(extra) <= requirement_names("dev"), f"make test's dev install holds {extra}"
    assert PYPROJECT["project"]["dependencies"] == [], "the engine installs alone"


def test_the_packages_gates_ask_for_the_extras_of_the_table() -> None:
    from bigtwo.client import CLIENT_MODULES
    from bigtwo.service import SERVER_MODULES

    order = [*NESTED, "web"]
    for modules, extra in ((CLIENT_MODULES, "client"), (SERVER_MODULES, "server")):
        for module in modules:
            needed = extra_for(module)
            assert needed is not None and order.index(needed) <= order.index(extra), (module, needed, extra)
    assert {m for m, x in EXTRA_OF_MODULE.items() if x == "server"} <= set(SERVER_MODULES)


def test_a_missing_module_is_named_with_its_extra_and_the_command_gets_the_whole_of_what_it_runs_on() -> None:
    grpc_missing = ModuleNotFoundError("No module named 'grpc'", name="grpc")
    assert "pip install 'bigtwo[client]'" in (missing_extra(grpc_missing) or "")
    assert "pip install 'bigtwo[server]'" in (missing_extra(grpc_missing, "serve") or "")
    assert "pip install 'bigtwo[cli]'" in (missing_extra(grpc_missing, "play") or "")
    web = ModuleNotFoundError("No module named 'connectrpc'", name="connectrpc.code")
    assert "'web' extra" in (missing_extra(web, "run") or "")
    assert extra_for("google.rpc") == "client" and extra_for("matplotlib.pyplot") == "plot"
    assert missing_extra(ModuleNotFoundError("x", name="bigtwo.nothing")) is None, "our own: a bug"


# -- the built wheel ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel() -> Path:
    """The wheel ``make bare-wheel`` built, checked to be newer than every source it holds."""
    built = sorted((BARE / "dist").glob("bigtwo-*.whl"))
    assert built and (BARE / "venv" / "bin" / "python").exists(), (
        f"no bare wheel in {BARE}: make test builds it first; alone, run make bare-wheel"
    )
    made = built[0].stat().st_mtime
    newer = [
        path
        for name in ("pyproject.toml", "setup.py", *PACKAGE_DIRS.values())
        for path in ((ROOT / name).rglob("*.py") if (ROOT / name).is_dir() else [ROOT / name])
        if path.stat().st_mtime > made
    ]
    assert not newer, f"{newer[0]} is newer than the bare wheel: run make bare-wheel"
    return built[0]


def test_the_wheel_holds_the_packages_and_their_data_and_no_bench(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {n.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for n in names if n.endswith(".py")}
    expected = {name for name in all_modules() if shipped(name)}
    assert modules == expected
    # The one bench that ships is the one bigtwo bench service runs; no study, no PPO port.
    benches = {name for name in modules if name.endswith("_bench") or "study" in name or "ppo" in name}
    assert benches == {"bigtwo.tools.service_bench"}, sorted(benches)
    for data in (
        "bigtwo/engine/py.typed",
        "bigtwo/service/service_config.json",
        "bigtwo/service/table/index.html",
        "bigtwo/service/table/table.js",
        "bigtwo/v1/service.proto",
        "bigtwo/v1/service_pb2.pyi",
    ):
        assert data in names, data
    metadata = zipfile.ZipFile(wheel).read("bigtwo-0.1.0.dist-info/METADATA").decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires and all("; extra ==" in line for line in requires), "no requirement outside an extra"


def test_the_bare_wheel_plays_a_deal_with_no_third_party_package(wheel: Path, tmp_path: Path) -> None:
    venv = BARE / "venv"
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    listing = subprocess.run([*pip, "list", "--format=json"], check=True, capture_output=True, text=True).stdout
    assert {item["name"] for item in json.loads(listing)} <= {"bigtwo", "pip", "setuptools"}
    script = """
import json, random, sys
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code
from bigtwo.engine.replay import audit_text, dumps, game_log_from_deals
rules = Ruleset.from_mapping({"preset": "hong-kong"})
code = DealCode.parse("0000003NQK8N1")
deal = Deal.start(rules, deal_from_code(code, rules))
rng = random.Random(34)
while not deal.over:
    deal.do(rng.choice(deal.legal_moves()))
assert Deal.replay(rules, deal.events).state() == deal.state()
verdict = audit_text(dumps(game_log_from_deals(rules, [deal], codes=[code])))
outside = sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"bigtwo", "__main__"})
print(json.dumps({"winner": deal.winner, "events": len(deal.events), "verdict": verdict.kind.name, "outside": outside}))
"""
    run: dict[str, Any] = {"capture_output": True, "text": True, "timeout": 60, "cwd": tmp_path}
    played = json.loads(subprocess.run([str(python), "-c", script], check=True, **run).stdout)
    assert played["winner"] >= 0 and played["events"] > 4
    assert played["verdict"] == "VALID", played
    assert played["outside"] in ([], ["_distutils_hack"]), played  # setuptools' own .pth hook, not ours

    for package, extra in (("bigtwo.client", "client"), ("bigtwo.service.server", "server")):
        refused = subprocess.run([str(python), "-c", f"import {package}"], check=False, **run)
        assert refused.returncode == 1
        assert f"needs the '{extra}' extra" in refused.stderr and f"pip install 'bigtwo[{extra}]'" in refused.stderr

    serve = subprocess.run(
        [str(venv / "bin" / "bigtwo"), "serve"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert serve.returncode == 1, serve
    assert serve.stderr.startswith("bigtwo serve: this needs the 'server' extra"), serve.stderr
    assert "pip install 'bigtwo[server]'" in serve.stderr and "Traceback" not in serve.stderr
