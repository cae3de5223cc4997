"""``bigtwo play`` driven in a real terminal (pexpect): a whole deal to its settlement (with its own
server, and with --target), a refused selection showing its reason; ``bigtwo deal --json``;
``bigtwo run``'s banner and Ctrl-C; ``--help`` of every command; a fast start."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pexpect
import pytest
from bigtwo.cli.main import COMMANDS
from bigtwo.client.replay_files import read_replay
from bigtwo.engine.replay import audit_log
from client_support import BIGTWO, Server
from service_support import CODE, free_port, holding_make_run_ports

pytestmark = pytest.mark.timeout(120)
PROMPT = "your move> "


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("play"))
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


def spawn(*args: str, log: Path) -> pexpect.spawn:
    child = pexpect.spawn(BIGTWO, list(args), encoding="utf-8", timeout=120, dimensions=(60, 160))
    child.logfile_read = log.open("w")
    return child


def play_by_hints(child: pexpect.spawn, *, enter_passes: list[int] | None = None) -> int:
    """Each turn: ask for a hint and press Enter to play it, or pass when nothing beats the table
    (with ``enter_passes``: press Enter then too, and count there the passes it made)."""
    turns = 0
    child.expect(PROMPT)
    while True:
        child.sendline("hint")
        found = child.expect([r"Hint \(\d+ in the cycle\): ", "nothing beats the table"])
        child.expect(PROMPT)
        if found == 1 and enter_passes is not None:
            child.sendline("")
            assert child.expect(["You pass", PROMPT]) == 0, "Enter after the hint to pass did not pass"
            enter_passes.append(turns)
        else:
            child.sendline("" if found == 0 else "pass")
        turns += 1
        if child.expect([PROMPT, "Settlement"], timeout=60) == 1:
            return turns


def test_a_whole_deal_to_its_settlement_with_its_own_server(tmp_path: Path) -> None:
    replay = tmp_path / "game.toml"
    child = spawn(
        "play",
        "--deal-code",
        CODE,
        "--deals",
        "1",
        "--bots",
        "good,great,beginner",
        "--color",
        "never",
        "--replay-out",
        str(replay),
        log=tmp_path / "terminal.log",
    )
    child.expect(f"code {CODE}")
    turns = play_by_hints(child)
    child.expect("Match table")
    child.expect("winner")
    child.expect("Replay written to")
    child.expect(f"Deal code\\(s\\) to share: {CODE}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and turns >= 3
    screen = (tmp_path / "terminal.log").read_text()
    for shown in ("p1 You", "← to act", "On the table", "Your hand (rank)", "ending now", "penalty"):
        assert shown in screen
    log = read_replay(replay)
    assert audit_log(log).kind.value == "valid" and log.deals[0].code == CODE and log.deals[0].result is not None


def test_enter_after_the_hint_to_pass_passes(server: Server, tmp_path: Path) -> None:
    child = spawn(
        "play",
        "--target",
        server.target,
        "--deal-code",
        CODE,
        "--deals",
        "1",
        "--color",
        "never",
        "--replay-out",
        str(tmp_path / "r.toml"),
        log=tmp_path / "terminal.log",
    )
    enter_passes: list[int] = []
    play_by_hints(child, enter_passes=enter_passes)
    child.expect("Replay written to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and enter_passes
    assert "Press Enter to pass." in (tmp_path / "terminal.log").read_text()


def test_a_refused_selection_shows_its_reason_and_commands_work(server: Server, tmp_path: Path) -> None:
    child = spawn(
        "play",
        "--target",
        server.target,
        "--deal-code",
        CODE,
        "--deals",
        "1",
        "--color",
        "never",
        "--replay-out",
        str(tmp_path / "r.toml"),
        log=tmp_path / "terminal.log",
    )
    child.expect(PROMPT)
    child.sendline("4h 6h")  # seat 0 leads and must include 3D; 4H 6H is no hand either
    child.expect(r"✗ 4♥ 6♥: (.*)\((.*)\)")
    assert child.match.group(2) == "must-include-opening-card"
    child.expect(PROMPT)
    child.sendline("?3♦ 3s")  # read out only, unicode accepted
    child.expect("✓ Pair 3: can be played")
    child.expect(PROMPT)
    child.sendline("zz")
    child.expect("✗ .*is not a card")
    child.expect(PROMPT)
    child.sendline("pass")  # the leader cannot pass: sent, refused by the service, asked again
    child.expect(r"refused: .*\(cannot-pass-leading\)")
    child.expect(PROMPT)
    child.sendline("sort plays")
    child.expect(r"Your hand \(plays\): \[")
    child.expect(PROMPT)
    child.sendline("sort suit")
    child.expect(r"Your hand \(suit\)")
    child.expect(PROMPT)
    child.sendline("help")
    child.expect("hint cycle")
    child.expect(PROMPT)
    child.sendline("3d")
    child.expect("You play 3♦")
    child.expect(PROMPT)
    child.sendline("quit")
    child.expect("Stopping the match")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = (tmp_path / "r.toml").read_text()
    assert "p1 pass refused cannot-pass-leading" in text and '"p1 3D"' in text


def test_deal_json_locally_and_through_the_service(server: Server) -> None:
    local = subprocess.run([BIGTWO, "deal", "--deal-code", CODE, "--json"], capture_output=True, text=True, check=True)
    remote = subprocess.run(
        [BIGTWO, "deal", "--deal-code", CODE, "--json", "--target", server.target],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(local.stdout)
    assert data == json.loads(remote.stdout)
    assert data["deal_code"] == CODE and data["leader"] == 0 and data["opening_card"] == "3D"
    assert [len(hand.split()) for hand in data["hands"]] == [13, 13, 13, 13]
    three = json.loads(
        subprocess.run([BIGTWO, "deal", "-o", "players=3", "--json"], capture_output=True, text=True).stdout
    )
    assert sorted(len(hand.split()) for hand in three["hands"]) == [17, 17, 18]  # + the face-up 52nd card
    assert three["face_up_card"]


@pytest.fixture
def make_run_beside() -> Iterator[list[int]]:
    """``make run``'s ports held, as a developer's ``make run`` holds them beside ``make test``."""
    with holding_make_run_ports() as held:
        yield held


def test_run_prints_the_next_command_and_stops_on_ctrl_c(tmp_path: Path, make_run_beside: list[int]) -> None:
    port = free_port()
    child = pexpect.spawn(
        BIGTWO,
        ["run", "--port", str(port), "--metrics-port", "0", "--web-port", "0", "--grace", "1"],
        encoding="utf-8",
        timeout=120,  # a loaded machine may take long to start a server
        env={"BIGTWO_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    # The first line is a sentence for a person, not the server's JSON log (its development key warning).
    child.expect("\r\n")
    assert child.before == f"Starting the Big Two rules service on 127.0.0.1:{port} ...", child.before
    child.expect(f"bigtwo play --target 127.0.0.1:{port}")
    child.expect('"serving"|serving')
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    # Stopped by the interrupt: a clean exit, the conventional 130, or the signal itself.
    assert child.exitstatus in (0, 130) or child.signalstatus == signal.SIGINT


def test_run_on_port_0_names_the_port_it_bound(tmp_path: Path, make_run_beside: list[int]) -> None:
    """``--port 0`` lets the system choose a free port; the banner names that one, not 0."""
    from bigtwo.cli.health_cmd import check

    child = pexpect.spawn(
        BIGTWO,
        ["run", "--port", "0", "--metrics-port", "0", "--web-port", "0", "--grace", "1"],
        encoding="utf-8",
        timeout=120,  # a loaded machine may take long to start a server
        env={"BIGTWO_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    try:
        child.expect(r"Big Two rules service on 127\.0\.0\.1:(\d+) ")
        port = int(child.match.group(1))
        child.expect(f"bigtwo play --target 127.0.0.1:{port}")
        child.expect('"serving"|serving')
        assert port != 0 and check(f"127.0.0.1:{port}", timeout=10) == "SERVING"
        child.sendintr()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def command_names() -> list[str]:
    return [name for command in COMMANDS for name, _ in command.helps]


def test_help_of_every_command() -> None:
    """``bigtwo --help`` lists every command and each one's ``--help`` works (three at a time:
    each is an interpreter starting)."""
    names = command_names()

    def helped(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([BIGTWO, *argv], capture_output=True, text=True, timeout=60)

    with ThreadPoolExecutor(max_workers=3) as pool:
        top, *helps = pool.map(helped, [["--help"], *([name, "--help"] for name in names)])
    assert top.returncode == 0, top.stderr
    for name, done in zip(names, helps, strict=True):
        assert re.search(rf"^\s+{name}\b", top.stdout, re.M), name
        assert done.returncode == 0, (name, done.stderr)
        assert f"usage: bigtwo {name}" in done.stdout
    play = helps[names.index("play")].stdout
    for flag in ("--preset", "--option", "--bots", "--deal-code", "--sort", "--replay-out", "--target", "--token"):
        assert flag in play


def test_the_command_starts_without_heavy_imports() -> None:
    probe = (
        "import sys, time; t = time.perf_counter(); from bigtwo.cli.main import main; main(['version']); "
        "print(sorted(m for m in ('grpc', 'matplotlib', 'rich', 'bigtwo.engine') if m in sys.modules)); "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[1] == "[]", out
    subprocess.run([BIGTWO, "--help"], capture_output=True, check=True)
