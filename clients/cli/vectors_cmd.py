"""``bigtwo vectors PATH... [--target HOST:PORT]``: judge rule-vector files (shared/vectors/README.md).

PATHs are vector files or folders (searched recursively for ``*.json``). One line is printed per
failing case (its id, what was expected, what was got) and the last line is exactly
``N passed, N failed``. Exit status: 0 when every case passes, 1 when any case fails, 2 when a
file cannot be read or parsed (the file is named) or a path does not exist.

The judging lives in :func:`run_vector_files`, which takes the judge as a callable so that the
same runner can send the cases to a service instead of the local engine.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from bigtwo.engine.vectors import CaseResult, check_case

Case = Mapping[str, Any]
Judge = Callable[[Case], CaseResult]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNREADABLE = 2


class VectorFileError(Exception):
    """A vector path that does not exist, or a file that cannot be read or is not a vector file."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = Path(path)
        self.message = message


@dataclass(frozen=True, slots=True)
class VectorFile:
    path: Path
    cases: tuple[Case, ...]


def find_vector_files(paths: Iterable[str | Path]) -> list[Path]:
    """The ``*.json`` files named by ``paths``: files as given, folders searched recursively
    (sorted, so that runs are reproducible). A missing path or an empty folder is an error."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.json") if p.is_file())
            if not files:
                raise VectorFileError(path, "no *.json vector files in this folder")
            found.extend(files)
        elif path.is_file():
            found.append(path)
        else:
            raise VectorFileError(path, "no such file or folder")
    return found


def load_vector_file(path: Path) -> VectorFile:
    """Read one vector file: a JSON object ``{"cases": [CASE, ...]}`` where each case is an object."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VectorFileError(path, f"cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VectorFileError(path, f"not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise VectorFileError(path, 'not a vector file: expected a JSON object {"cases": [...]}')
    cases = data["cases"]
    for index, case in enumerate(cases):
        if not isinstance(case, dict):
            raise VectorFileError(path, f"case {index} is not a JSON object")
    return VectorFile(path, tuple(cases))


def load_vector_files(paths: Iterable[str | Path]) -> list[VectorFile]:
    """Every vector file under ``paths``, all read before any case is judged."""
    return [load_vector_file(path) for path in find_vector_files(paths)]


def _safe_judge(judge: Judge, case: Case) -> CaseResult:
    # A judge that breaks (a bug, a refused call) fails the case instead of the whole run; a
    # service gone stops the run (CommandError: bigtwo.cli.errors).
    from .errors import CommandError

    try:
        return judge(case)
    except CommandError:
        raise
    except Exception as exc:
        return CaseResult(str(case.get("id", "?")), False, "a verdict", f"error {type(exc).__name__}: {exc}")


def judge_files(
    files: Iterable[VectorFile],
    judge: Judge = check_case,
    on_failure: Callable[[CaseResult, Path], None] | None = None,
) -> tuple[int, int]:
    """Judge every case of ``files`` with ``judge``; ``(passed, failed)``, as :func:`run_vector_files`."""
    passed = failed = 0
    for vector_file in files:
        for case in vector_file.cases:
            result = _safe_judge(judge, case)
            if result.passed:
                passed += 1
            else:
                failed += 1
                if on_failure is not None:
                    on_failure(result, vector_file.path)
    return passed, failed


def run_vector_files(
    paths: Iterable[str | Path],
    judge: Judge = check_case,
    on_failure: Callable[[CaseResult, Path], None] | None = None,
) -> tuple[int, int]:
    """Judge every case of every vector file under ``paths`` with ``judge`` (a case -> CaseResult
    callable: the local engine by default, a service client later). Returns ``(passed, failed)``;
    ``on_failure`` is called with each failing result and the file it came from.

    Raises :class:`VectorFileError` before judging anything when a path is missing or a file
    cannot be read or parsed."""
    return judge_files(load_vector_files(paths), judge, on_failure)


def failure_line(result: CaseResult) -> str:
    return f"FAIL {result.case_id}: expected {result.expected}; got {result.got}"


def summary_line(passed: int, failed: int) -> str:
    return f"{passed} passed, {failed} failed"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from .arguments import positive_seconds, target

    parser: argparse.ArgumentParser = sub.add_parser(
        "vectors",
        help="judge rule-vector files against the engine",
        description=(
            "Judge rule-vector files (shared/vectors/README.md format). Prints one line per failing "
            "case and ends with 'N passed, N failed'. Exit 0: all passed; 1: some failed, or the service "
            "cannot be reached; 2: a path is missing or a file cannot be read or parsed."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="vector files or folders (searched for *.json)")
    parser.add_argument(
        "--target",
        type=target,
        metavar="HOST:PORT",
        help="judge the cases through a running service (bigtwo serve) instead of the local engine",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=5.0,
        help="with --target: seconds to connect, and the deadline of each call",
    )
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    return main_vectors(args.paths, target=args.target, timeout=args.timeout)


class _StopOnLostService:
    """The service judge, stopping the whole run at the first case it could not send.

    :class:`~bigtwo.tools.vectors_judge.ServiceJudge` answers a failed call with a failing
    result (``got`` = ``error CODE: details``), which is right for a call the service refused but
    not for a service gone: every following case would fail the same way, one line each."""

    def __init__(self, judge: Judge, target: str) -> None:
        self.judge = judge
        self.target = target

    def __call__(self, case: Case) -> CaseResult:
        result = self.judge(case)
        if result.passed:
            return result
        if result.got.startswith("error UNAVAILABLE"):
            from bigtwo.client.client import connection_failure

            from .errors import unreachable

            reason, why = connection_failure(result.got)
            raise unreachable(self.target, reason, f"{why} (at case {result.case_id})")
        if result.got.startswith("error UNIMPLEMENTED"):
            from .errors import ServiceRefused

            raise ServiceRefused(
                f"the server at {self.target} is not a Big Two service (it does not know the calls the "
                "cases need). Check --target."
            )
        return result


def main_vectors(
    paths: Sequence[str], *, target: str | None = None, timeout: float = 5.0, out: TextIO | None = None
) -> int:
    """Judge ``paths``; the exit status. Unreadable files raise :class:`~bigtwo.cli.errors.UsageError`
    and a service that cannot be reached :class:`~bigtwo.cli.errors.ServiceUnreachable` (both
    before any case is judged, or at the first case that could not be sent)."""
    from .errors import UsageError

    out = out if out is not None else sys.stdout
    try:
        files = load_vector_files(paths)  # every file read before the service is asked anything
    except VectorFileError as exc:
        raise UsageError(str(exc)) from None
    judge: Judge = check_case
    service_judge = None
    if target is not None:
        from bigtwo.client.client import check_reachable
        from bigtwo.tools.vectors_judge import ServiceJudge

        check_reachable(target, timeout=timeout)
        service_judge = ServiceJudge(target, timeout=timeout)
        judge = _StopOnLostService(service_judge, target)
    printer = _Printer(out)
    try:
        passed, failed = judge_files(files, judge, lambda result, _path: printer.failure(result))
    finally:
        if service_judge is not None:
            service_judge.close()
    printer.summary(passed, failed)
    return EXIT_FAILED if failed else EXIT_OK


class _Printer:
    """Plain lines, or rich colour when stdout is a terminal. The text is the same either way."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.console: Any = None
        if out.isatty():
            from rich.console import Console

            self.console = Console(file=out, highlight=False)

    def failure(self, result: CaseResult) -> None:
        if self.console is not None:
            from rich.text import Text

            line = Text()
            line.append("FAIL ", style="bold red")
            line.append(result.case_id, style="bold")
            line.append(f": expected {result.expected}; got {result.got}")
            self.console.print(line, soft_wrap=True)
        else:
            print(failure_line(result), file=self.out, flush=True)

    def summary(self, passed: int, failed: int) -> None:
        text = summary_line(passed, failed)
        if self.console is not None:
            self.console.print(text, style="bold red" if failed else "bold green", soft_wrap=True)
        else:
            print(text, file=self.out, flush=True)
