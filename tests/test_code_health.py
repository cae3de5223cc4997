"""The code keeps its shape: the checks of ``make lint``, run by ``make test`` (CI runs only the tests).

* ruff over the product code and the tests, with its complexity bound (C901, at most 15 per function);
* the one-way layer contracts of pyproject.toml ``[tool.importlinter]`` (``lint-imports``), and proof that
  they can fail: the real import graph with one forbidden import added breaks exactly the contract
  that forbids it;
* mypy --strict over every package under its import name (tests/tools/package_links.py links them);
* no product file longer than ``MAX_LINES`` (a failure), and every one longer than ``LOOK_LINES`` listed as
  a warning: size is a signal, a reason to look at whether the file is two things, not a bound to squeeze
  code under.

Every cache goes to a temporary folder (ruff and lint-imports run with ``--no-cache``, mypy with
``--cache-dir``), so a run writes nothing into the repository.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import tomllib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grimp
import pytest
from importlinter.application.app_config import settings
from importlinter.application.ports.building import GraphBuilder
from importlinter.application.use_cases import create_report, lint_imports, read_user_options
from importlinter.configuration import configure
from tools.package_links import link_tree, package_dirs

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PYPROJECT = ROOT / "pyproject.toml"

LINTED = ["engine", "service", "clients", "proto/bigtwo/codec", "tests"]
"""What ``make lint`` hands to ruff."""

PRODUCT = ["engine", "service", "clients", "proto/bigtwo/codec"]
"""The product's source folders; the generated proto/bigtwo/v1 is not ours to shorten."""

MAX_LINES = 800
"""Over this, a product file fails: it is two things, split it by concern."""

LOOK_LINES = 500
"""Over this, a product file is listed as a warning (``pytest -ra`` shows it): a reason to look, not to squeeze."""
MAX_COMPLEXITY = 15


def _run(args: list[str], timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


# -- ruff ------------------------------------------------------------------------------------------


def test_ruff_passes() -> None:
    proc = _run([str(BIN / "ruff"), "check", "--no-cache", "--output-format", "concise", *LINTED], timeout=120)
    assert proc.returncode == 0, f"ruff check found problems:\n{proc.stdout}{proc.stderr}"


def test_complexity_bound_is_configured() -> None:
    lint = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C90" in lint["select"]
    assert lint["mccabe"]["max-complexity"] == MAX_COMPLEXITY


def _branchy_function(branches: int) -> str:
    """A function whose cyclomatic complexity is ``branches + 1``."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches))
    return f"def branchy(x: int) -> int:\n{body}    return -1\n"


@pytest.mark.parametrize(("branches", "flagged"), [(MAX_COMPLEXITY - 1, False), (MAX_COMPLEXITY, True)])
def test_complexity_bound_fails_one_past_it(tmp_path: Path, branches: int, flagged: bool) -> None:
    source = tmp_path / "branchy.py"
    source.write_text(_branchy_function(branches), encoding="utf-8")
    proc = _run(
        [
            str(BIN / "ruff"),
            "check",
            "--no-cache",
            "--config",
            str(PYPROJECT),
            "--output-format",
            "concise",
            str(source),
        ],
        timeout=60,
    )
    assert ("C901" in proc.stdout) is flagged, proc.stdout + proc.stderr
    assert (proc.returncode != 0) is flagged, proc.stdout + proc.stderr


# -- import layers ---------------------------------------------------------------------------------


def test_import_contracts_kept() -> None:
    proc = _run([str(BIN / "lint-imports"), "--no-cache"], timeout=120)
    assert proc.returncode == 0, f"lint-imports found a broken contract:\n{proc.stdout}{proc.stderr}"
    assert "0 broken" in proc.stdout, proc.stdout


def _contract_names() -> dict[str, str]:
    """Each contract's name by a short key, so the cases below name what they expect to break."""
    contracts = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    names: dict[str, str] = {}
    for contract in contracts:
        if contract["type"] == "layers":
            names["layers"] = contract["name"]
        elif contract["type"] == "protected":
            names["protected replay"] = contract["name"]
        else:
            names[f"forbidden from {contract['source_modules'][0]}"] = contract["name"]
    return names


@dataclass(frozen=True)
class ForbiddenImport:
    importer: str
    imported: str
    breaks: frozenset[str]
    """The keys (``_contract_names``) of the contracts it must break, and no others."""


FORBIDDEN = [
    # The codec imports the engine, so an engine that reaches grpc takes the codec with it.
    ForbiddenImport(
        "bigtwo.engine", "grpc", frozenset({"forbidden from bigtwo.engine", "forbidden from bigtwo.codec"})
    ),
    ForbiddenImport("bigtwo.engine", "bigtwo.v1", frozenset({"layers"})),
    ForbiddenImport("bigtwo.engine.cache", "bigtwo.engine.replay", frozenset({"protected replay"})),
    ForbiddenImport("bigtwo.codec", "grpc", frozenset({"forbidden from bigtwo.codec"})),
    ForbiddenImport("bigtwo.service", "bigtwo.client", frozenset({"layers"})),
    ForbiddenImport("bigtwo.service", "rich", frozenset({"forbidden from bigtwo.service"})),
    ForbiddenImport("bigtwo.tools", "bigtwo.client", frozenset({"forbidden from bigtwo.tools"})),
]


class _GraphWithExtraImport(GraphBuilder):
    """Hands import-linter a copy of the real graph, with one import added unless ``extra`` is None."""

    def __init__(self, graph: grimp.ImportGraph, extra: ForbiddenImport | None) -> None:
        self._graph = graph
        self._extra = extra

    def build(
        self,
        root_package_names: list[str],
        cache_dir: str | None,
        include_external_packages: bool = False,
        exclude_type_checking_imports: bool = False,
    ) -> grimp.ImportGraph:
        graph = copy.deepcopy(self._graph)
        if self._extra is not None:
            graph.add_import(importer=self._extra.importer, imported=self._extra.imported)
        return graph


@pytest.fixture(scope="module")
def import_graph() -> Iterator[grimp.ImportGraph]:
    configure()
    options = read_user_options(str(PYPROJECT))
    roots = options.session_options["root_packages"]
    graph = grimp.build_graph(*roots, include_external_packages=True, cache_dir=None)
    # The command's entry point registers the built-in contract types (layers, forbidden, protected)
    # that create_report below looks up; on the unchanged graph its verdict is test_import_contracts_kept's.
    settings.configure(GRAPH_BUILDER=_GraphWithExtraImport(graph, None))
    lint_imports(str(PYPROJECT), cache_dir=None, no_logo=True)
    yield graph
    configure()


@pytest.mark.parametrize("extra", FORBIDDEN, ids=lambda f: f"{f.importer}->{f.imported}")
def test_a_forbidden_import_breaks_its_contract(import_graph: grimp.ImportGraph, extra: ForbiddenImport) -> None:
    assert extra.importer in import_graph.modules, f"{extra.importer} moved: pick another importer"
    names = _contract_names()
    settings.configure(GRAPH_BUILDER=_GraphWithExtraImport(import_graph, extra))
    try:
        report = create_report(read_user_options(str(PYPROJECT)), cache_dir=None)
    finally:
        configure()
    broken = {contract.name for contract, check in report.get_contracts_and_checks() if not check.kept}
    assert broken == {names[key] for key in extra.breaks}


# -- types -----------------------------------------------------------------------------------------


def test_mypy_strict_every_package(tmp_path_factory: pytest.TempPathFactory) -> None:
    links = tmp_path_factory.mktemp("typecheck")
    cache = tmp_path_factory.mktemp("mypy-cache")
    names = link_tree(links)
    assert set(names) == set(package_dirs())
    env = {**os.environ, "MYPYPATH": str(links)}
    packages = [arg for name in names for arg in ("-p", name)]
    proc = _run([str(BIN / "mypy"), "--strict", "--cache-dir", str(cache), *packages], timeout=600, env=env)
    # Paths read as import names (bigtwo/engine/...), not as the temporary folder of links.
    found = (proc.stdout + proc.stderr).replace(f"{links}{os.sep}", "")
    assert proc.returncode == 0, f"mypy --strict found errors:\n{found}"


# -- size ------------------------------------------------------------------------------------------


def _product_files() -> list[Path]:
    return sorted(path for folder in PRODUCT for path in (ROOT / folder).rglob("*.py"))


class LongFileWarning(UserWarning):
    """A product file over ``LOOK_LINES``: worth a look at whether it does two jobs."""


def _product_lengths() -> dict[Path, int]:
    files = _product_files()
    assert len(files) > 20, "the product's folders moved: update PRODUCT"
    return {path.relative_to(ROOT): len(path.read_text(encoding="utf-8").splitlines()) for path in files}


def _over(lengths: dict[Path, int], bound: int) -> list[str]:
    return [f"{path}: {length} lines" for path, length in sorted(lengths.items()) if length > bound]


def test_no_product_file_over_the_line_bound() -> None:
    too_long = _over(_product_lengths(), MAX_LINES)
    assert not too_long, f"files over {MAX_LINES} lines (split them by concern):\n" + "\n".join(too_long)


def test_long_product_files_are_listed() -> None:
    lengths = _product_lengths()
    worth_a_look = [line for line in _over(lengths, LOOK_LINES) if line not in _over(lengths, MAX_LINES)]
    if worth_a_look:
        warnings.warn(
            LongFileWarning(
                f"files over {LOOK_LINES} lines (a reason to look, not a failure):\n" + "\n".join(worth_a_look)
            ),
            stacklevel=1,
        )


def test_line_bounds_are_ordered() -> None:
    assert 0 < LOOK_LINES < MAX_LINES
    lengths = {Path("short.py"): LOOK_LINES, Path("look.py"): LOOK_LINES + 1, Path("long.py"): MAX_LINES + 1}
    assert _over(lengths, LOOK_LINES) == [f"long.py: {MAX_LINES + 1} lines", f"look.py: {LOOK_LINES + 1} lines"]
    assert _over(lengths, MAX_LINES) == [f"long.py: {MAX_LINES + 1} lines"]
