"""Every shell block of README.md and docs/*.md runs as written from a fresh clone, or says why not.

A newcomer copies these blocks first, so a block that fails as written costs more than a missing
one. A shell block is a fenced block whose language is ``sh``, ``bash``, ``shell`` or ``console``
(in a ``console`` block the commands are the lines after ``$ ``). Every fence must name a language,
so that no command hides in an unlabelled block. The HTML comment right above a shell block
(invisible once rendered) classifies it:

``<!-- doc-test: run -->``
    run as written;
``<!-- doc-test: run with-server -->``
    run with the service already on 127.0.0.1:50051 (``bigtwo serve``, what ``make run`` leaves
    running in another terminal), as the text around such a block says; like ``make run``, one
    service serves every such block;
``<!-- doc-test: skip: REASON -->``
    not run, for the reason given (needs Docker, a cluster or npm, installs software, runs for
    minutes).

A block without the comment fails the test, so a new block is either tried or excused.

How a block runs, and why:

* ``bash -euo pipefail``, so a failing step fails the block instead of being hidden by the next;
* in an empty temporary folder that stands for the clone's root: the repository's top-level
  entries are linked into it (``examples/``, ``tests/vectors``, ``.venv`` resolve), and whatever
  the block writes lands in the temporary folder;
* HOME (and the XDG folders) in a temporary folder, the environment's ``bin`` first on PATH (what
  ``source .venv/bin/activate`` leaves, the README's one way of invoking the commands), no
  ``BIGTWO_*`` variable of the caller's;
* stdin empty: an interactive ``bigtwo play`` deals, prompts, reads the end of its input, saves the
  match and exits 0;
* the documented fixed ports (gRPC 50051-50053 and 50061-50063, metrics 9464-9466 and 9471-9473,
  browser 8080-8081) moved to free ones in the block's text, so a block never meets another test;
* a ``run`` block beside ``make run``: it may not name ``make run``'s ports (gRPC 50051, metrics
  9464, browser 8080), and it runs while the test holds them, with no default moved, so a block that
  would bind or call them (``bigtwo serve`` without ``--port``) fails here as it would for a reader
  whose ``make run`` is still serving; a ``with-server`` block gets the defaults it relies on
  (``BIGTWO_PORT``, ``BIGTWO_METRICS_PORT``, ``BIGTWO_HEALTH_TARGET``) pointed at the test's service;
* a time limit, and its own process group: whatever the block leaves running is stopped, and a
  block that does not stop the servers it starts fails.

Identical blocks (README and docs/DEPLOY.md share the multi-replica one) run once.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from markdown_it import MarkdownIt
from service_support import MAKE_RUN_PORTS, free_port, holding_make_run_ports

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SHELL_LANGUAGES = frozenset({"sh", "bash", "shell", "console"})
MARKER = re.compile(r"<!--\s*doc-test:\s*(?P<body>.*?)\s*-->", re.DOTALL)
RUN, RUN_WITH_SERVER, SKIP = "run", "run with-server", "skip"

GRPC_PORTS = (50051, 50052, 50053)
METRICS_PORTS = (9464, 9465, 9466)
WEB_PORTS = (8080, 8081)
REPLICA_GRPC_PORTS = (50061, 50062, 50063)
REPLICA_METRICS_PORTS = (9471, 9472, 9473)
"""The replicas a reader starts beside ``make run`` (the README's three-replica block)."""
PORT_RUNS = (GRPC_PORTS, METRICS_PORTS, WEB_PORTS, REPLICA_GRPC_PORTS, REPLICA_METRICS_PORTS)
"""The fixed ports the docs show, in runs a block counts along (``$((50061 + i))``); a run block may
use no other 127.0.0.1 port."""
DOCUMENTED_PORTS = frozenset(port for run in PORT_RUNS for port in run)

BLOCK_SECONDS = 90.0
"""A block's time limit: generous, since the suite shares a small machine with other work."""
SERVER_START_SECONDS = 120.0
STRAGGLER_SECONDS = 10.0
"""How long a block's processes may take to exit after the block ends (a drain, a worker's exit)."""


@dataclass(frozen=True)
class Block:
    """One fenced shell block and its classification."""

    doc: str
    line: int
    language: str
    text: str
    verdict: str | None
    reason: str

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def script(self) -> str:
        """The commands: the block itself, or a console block's ``$ `` lines (with continuations)."""
        if self.language != "console":
            return self.text
        commands: list[str] = []
        continued = False
        for line in self.text.splitlines():
            if line.startswith("$ ") or continued:
                commands.append(line.removeprefix("$ ") if not continued else line)
                continued = line.endswith("\\")
        return "\n".join(commands) + "\n"


@dataclass(frozen=True)
class Problem:
    where: str
    what: str


def parse_marker(comment: str) -> tuple[str | None, str]:
    """(verdict, reason) of a doc-test comment; (None, why) when it is malformed."""
    match = MARKER.search(comment)
    if not match:
        return None, "no doc-test comment"
    body = " ".join(match["body"].split())
    if body in (RUN, RUN_WITH_SERVER):
        return body, ""
    if body.startswith("skip:") and body.removeprefix("skip:").strip():
        return SKIP, body.removeprefix("skip:").strip()
    return None, f"unknown doc-test comment {body!r} (run | run with-server | skip: REASON)"


def language(info: str) -> str:
    words = info.split()
    return words[0] if words else ""


def scan(path: Path, root: Path = ROOT) -> tuple[list[Block], list[Problem]]:
    """The shell blocks of one Markdown file, and what is wrong with its fences and markers."""
    doc = path.relative_to(root).as_posix()
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    blocks: list[Block] = []
    problems: list[Problem] = []
    for index, token in enumerate(tokens):
        if token.type == "html_block" and "doc-test:" in token.content:
            after = tokens[index + 1] if index + 1 < len(tokens) else None
            line = token.map[0] + 1 if token.map else 0
            if after is None or after.type != "fence" or language(after.info) not in SHELL_LANGUAGES:
                problems.append(Problem(f"{doc}:{line}", "a doc-test comment not right above a shell block"))
        if token.type not in ("fence", "code_block"):
            continue
        line = token.map[0] + 1 if token.map else 0
        if token.type == "code_block":
            problems.append(Problem(f"{doc}:{line}", "an indented code block: fence it and name its language"))
            continue
        name = language(token.info)
        if not name:
            problems.append(Problem(f"{doc}:{line}", "a fence without a language (```sh, ```text, ```python ...)"))
            continue
        if name not in SHELL_LANGUAGES:
            continue
        before = tokens[index - 1] if index else None
        if before is not None and before.type == "html_block" and "doc-test:" in before.content:
            verdict, reason = parse_marker(before.content)
            if verdict is None:
                problems.append(Problem(f"{doc}:{line}", reason))
        else:
            verdict, reason = None, ""
            problems.append(
                Problem(
                    f"{doc}:{line}",
                    "an unclassified shell block: put <!-- doc-test: run -->, <!-- doc-test: run with-server --> "
                    "or <!-- doc-test: skip: REASON --> right above it",
                )
            )
        blocks.append(Block(doc, line, name, token.content, verdict, reason))
    return blocks, problems


def all_blocks() -> tuple[list[Block], list[Problem]]:
    blocks: list[Block] = []
    problems: list[Problem] = []
    for path in DOCS:
        found, wrong = scan(path)
        blocks += found
        problems += wrong
    return blocks, problems


def runnable_blocks() -> list[Block]:
    """The blocks to run, each distinct (verdict, text) once, first place first."""
    seen: set[tuple[str | None, str]] = set()
    out = []
    for block in all_blocks()[0]:
        if block.verdict in (RUN, RUN_WITH_SERVER) and (block.verdict, block.text) not in seen:
            seen.add((block.verdict, block.text))
            out.append(block)
    return out


# -- running a block ----------------------------------------------------------------------------------


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_run(count: int) -> int:
    """The first of ``count`` consecutive free ports (``$((50051 + i))`` in a block needs a run)."""
    for _ in range(100):
        first = free_port()
        if first + count <= 65536 and all(port_free(first + k) for k in range(1, count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports")


@dataclass(frozen=True)
class Service:
    """The running service a with-server block talks to (its gRPC and metrics ports)."""

    port: int
    metrics_port: int


def port_map(service: Service | None = None) -> dict[int, int]:
    """Free ports for the documented ones; 50051 and 9464 are the given service's, if any."""
    mapping: dict[int, int] = {}
    for run in PORT_RUNS:
        first = free_run(len(run))
        mapping.update({port: first + k for k, port in enumerate(run)})
    if service is not None:
        mapping.update({GRPC_PORTS[0]: service.port, METRICS_PORTS[0]: service.metrics_port})
    return mapping


def remap(text: str, mapping: dict[int, int]) -> str:
    pattern = re.compile(r"(?<![\d.])(" + "|".join(str(port) for port in mapping) + r")(?!\d)")
    return pattern.sub(lambda match: str(mapping[int(match[1])]), text)


def top_level_entries() -> list[Path]:
    """What a fresh clone has at its root: the top-level entries git tracks (every entry but .git
    outside a git checkout), so that a block cannot lean on a file left lying in the working tree."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True, timeout=30
        ).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return [entry for entry in ROOT.iterdir() if entry.name not in (".git", ".venv")]
    names = {path.split("/", 1)[0] for path in listed.split("\0") if path}
    return [ROOT / name for name in sorted(names) if (ROOT / name).exists()]


def clone_root(folder: Path) -> Path:
    """A folder standing for the clone's root: the repository's top-level entries linked in, and
    ``.venv`` pointing at the environment running the tests."""
    folder.mkdir()
    for entry in top_level_entries():
        (folder / entry.name).symlink_to(entry)
    (folder / ".venv").symlink_to(Path(sys.prefix))
    return folder


def block_env(tmp: Path, mapping: dict[int, int], defaults_moved: bool = True) -> dict[str, str]:
    """The block's environment; ``defaults_moved`` points the default ports at the mapped ones
    (the test's service for a with-server block), otherwise they stay ``make run``'s."""
    home = tmp / "home"
    home.mkdir()
    venv_bin = Path(sys.prefix) / "bin"
    env = {
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "MPLCONFIGDIR": str(home / ".matplotlib"),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "COLUMNS": "100",
    }
    if defaults_moved:
        env["BIGTWO_PORT"] = str(mapping[GRPC_PORTS[0]])
        env["BIGTWO_METRICS_PORT"] = str(mapping[METRICS_PORTS[0]])
        env["BIGTWO_HEALTH_TARGET"] = f"127.0.0.1:{mapping[GRPC_PORTS[0]]}"
    return env


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_group(pgid: int, seconds: float) -> bool:
    """Wait up to ``seconds`` for a process group to empty, then kill what is left; whether it
    emptied by itself."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return True
        time.sleep(0.1)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return False
        time.sleep(1.0)
    return False


@contextmanager
def serving(folder: Path, env: dict[str, str]) -> Iterator[None]:
    """``bigtwo serve`` as the docs start it (its defaults moved by the environment), until ready."""
    log = (folder.parent / "service.log").open("w")
    process = subprocess.Popen(
        ["bigtwo", "serve"],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{env['BIGTWO_PORT']}")
        ready = grpc.channel_ready_future(channel)
        deadline = time.monotonic() + SERVER_START_SECONDS
        try:
            while True:
                if process.poll() is not None:
                    log.flush()
                    raise RuntimeError(f"bigtwo serve exited {process.returncode}: {log.name}")
                try:
                    ready.result(timeout=0.5)
                    break
                except grpc.FutureTimeoutError:
                    if time.monotonic() > deadline:
                        raise
        finally:
            ready.cancel()
            channel.close()
        yield
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        end_group(process.pid, STRAGGLER_SECONDS)
        log.close()


def run_block(
    block: Block, tmp: Path, service: Service | None = None, stragglers: float = STRAGGLER_SECONDS
) -> tuple[subprocess.CompletedProcess[str], bool, str, bool]:
    """(the finished block, whether it ran out of time, its script, whether it stopped what it started).

    A with-server block needs ``service``."""
    assert (block.verdict == RUN_WITH_SERVER) == (service is not None)
    mapping = port_map(service)
    script = remap(block.script(), mapping)
    folder = clone_root(tmp / "clone")
    env = block_env(tmp, mapping, defaults_moved=service is not None)
    out_path, err_path = tmp / "block.out", tmp / "block.err"
    # Files, not pipes: a server the block leaves running would hold a pipe open past the block's end.
    with out_path.open("w") as out, err_path.open("w") as err:
        process = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            process.wait(timeout=BLOCK_SECONDS)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            timed_out = True
        tidy = end_group(process.pid, stragglers)
    finished = subprocess.CompletedProcess(
        process.args, process.returncode, out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
    )
    return finished, timed_out, script, tidy


# -- the tests ----------------------------------------------------------------------------------------


def test_every_shell_block_is_classified_and_every_fence_names_its_language() -> None:
    blocks, problems = all_blocks()
    assert not problems, "\n".join(f"{p.where}: {p.what}" for p in problems)
    assert {b.verdict for b in blocks} == {RUN, RUN_WITH_SERVER, SKIP}
    assert all(b.reason for b in blocks if b.verdict == SKIP)


def test_the_classifier_catches_an_unmarked_block_a_bare_fence_and_a_stray_marker(tmp_path: Path) -> None:
    text = (
        "<!-- doc-test: run -->\n```sh\ntrue\n```\n\n"
        "```bash\nfalse\n```\n\n"
        "```\nbigtwo deal\n```\n\n"
        "<!-- doc-test: skip: -->\n```sh\ntrue\n```\n\n"
        "<!-- doc-test: run -->\n```python\nprint()\n```\n"
    )
    probe = tmp_path / "probe.md"
    probe.write_text(text)
    blocks, problems = scan(probe, root=tmp_path)
    whats = [p.what for p in problems]
    assert [b.verdict for b in blocks] == [RUN, None, None]
    assert any("unclassified" in w for w in whats)
    assert any("without a language" in w for w in whats)
    assert any("unknown doc-test comment" in w for w in whats)
    assert any("not right above a shell block" in w for w in whats)


def test_the_docs_invoke_the_commands_one_way() -> None:
    """The README says once to activate the environment; no page spells out ``.venv/bin/...``."""
    readme = (ROOT / "README.md").read_text()
    assert "source .venv/bin/activate" in readme
    for path in DOCS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in re.finditer(r"\.venv/bin/(\S*)", line):
                assert match[1].startswith("activate"), f"{path.name}:{number}: {line.strip()}"


def test_run_blocks_use_only_the_documented_ports() -> None:
    for block in runnable_blocks():
        ports = {int(p) for p in re.findall(r"127\.0\.0\.1:(\d+)", block.text)}
        assert ports <= DOCUMENTED_PORTS, f"{block.where}: fixed ports {ports}"


def test_a_block_a_reader_runs_beside_make_run_names_none_of_its_ports() -> None:
    """``make run`` holds 50051, 9464 and 8080: a ``run`` block naming one would meet it (a replica
    that cannot bind, or a load test of the reader's own service that looks like success)."""
    pattern = re.compile(r"(?<![\d.])(" + "|".join(str(port) for port in MAKE_RUN_PORTS) + r")(?!\d)")
    for block in runnable_blocks():
        if block.verdict == RUN:
            assert not pattern.search(block.text), f"{block.where}: names make run's port {pattern.search(block.text)}"


def test_a_block_fails_on_any_failing_step_and_on_what_it_leaves_running(tmp_path: Path) -> None:
    def run(text: str, folder: str) -> tuple[int, bool]:
        (tmp_path / folder).mkdir()
        block = Block("probe.md", 1, "sh", text, RUN, "")
        finished, timed_out, _, tidy = run_block(block, tmp_path / folder, stragglers=0.5)
        assert not timed_out
        return finished.returncode, tidy

    assert run("false\ntrue\n", "a") == (1, True)
    assert run("false | true\n", "b") == (1, True)
    assert run("echo $UNSET_VARIABLE\n", "c")[0] != 0
    assert run("sleep 60 &\n", "d") == (0, False)
    assert run("sleep 60 &\nkill %1 && wait\n", "e") == (0, True)
    assert run('test "$HOME" != ~root && test -x .venv/bin/bigtwo && test -d tests/vectors\n', "f") == (0, True)


@pytest.fixture(scope="module")
def shared_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service for every with-server block, as one ``make run`` serves every command a reader
    types (the service keeps no state between calls), started by the first block that needs it."""
    tmp = tmp_path_factory.mktemp("doc-service")
    mapping = port_map()
    env = block_env(tmp, mapping)
    with serving(clone_root(tmp / "clone"), env):
        yield Service(mapping[GRPC_PORTS[0]], mapping[METRICS_PORTS[0]])


@pytest.mark.slow
@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda block: block.where)
def test_block_runs_as_written(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    service = request.getfixturevalue("shared_service") if block.verdict == RUN_WITH_SERVER else None
    with holding_make_run_ports():  # a reader's make run, still serving in the other terminal
        finished, timed_out, script, tidy = run_block(block, tmp_path, service)
    shown = f"{block.where} ({block.verdict}), run as:\n{script}"
    output = f"--- stdout\n{finished.stdout[-4000:]}\n--- stderr\n{finished.stderr[-4000:]}"
    assert not timed_out, f"{shown}\ndid not finish within {BLOCK_SECONDS:.0f} s\n{output}"
    assert finished.returncode == 0, f"{shown}\nexit status {finished.returncode}\n{output}"
    assert "Traceback (most recent call last)" not in finished.stderr + finished.stdout, f"{shown}\n{output}"
    assert tidy, f"{shown}\nleft processes running: a block stops the servers it starts\n{output}"
    left = untracked_leftovers(tmp_path / "clone")
    assert not left, f"{shown}\nleaves {left} in the clone, which git status would show: .gitignore them"


def untracked_leftovers(folder: Path) -> list[str]:
    """What a block wrote in the clone's root that ``git status`` would list (not ignored)."""
    written = [entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir() if not entry.is_symlink()]
    left = []
    for name in written:
        ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", "--", name], timeout=30)
        if ignored.returncode != 0:
            left.append(name)
    return sorted(left)


def test_the_leftover_check_sees_an_unignored_file(tmp_path: Path) -> None:
    (tmp_path / "match.toml").write_text("")
    (tmp_path / "replays").mkdir()
    (tmp_path / "stray-notes.txt").write_text("")
    (tmp_path / "README.md").symlink_to(ROOT / "README.md")
    assert untracked_leftovers(tmp_path) == ["stray-notes.txt"]
