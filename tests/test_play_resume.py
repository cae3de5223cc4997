"""No lost match: ``bigtwo play`` in a real terminal (pexpect) while its servers are
killed. With two targets and one SIGKILLed the game goes on; with the only server killed, or on
Ctrl-C, the unfinished match is written and the printed ``bigtwo play --resume FILE`` finishes it
with the same cards, and (the person playing the hints, the bots keyed by seed and position) the
same file as a match that never stopped; a server the game started itself is started again."""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from bigtwo.client import BigTwoClient
from bigtwo.client.replay_files import read_replay
from bigtwo.client.table import Seat, Table, bot_seat, hint_seat
from bigtwo.engine import Ruleset
from bigtwo.engine.replay import audit_log, dumps
from client_support import BIGTWO, Server
from service_support import CODE, children_of

pytestmark = pytest.mark.timeout(240)
PROMPT = "your move> "
RESUME = r"Go on with it: (bigtwo play --resume [^\r\n]*)\r\n"


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    made: list[Server] = []
    try:
        yield made
    finally:
        for server in made:
            server.stop()


def start(servers: list[Server], tmp: Path) -> Server:
    server = Server(tmp)
    servers.append(server)
    server.wait_ready()
    return server


def spawn(args: list[str], log: Path) -> pexpect.spawn:
    env = {**os.environ, "NO_COLOR": "1"}
    child = pexpect.spawn(BIGTWO, args, encoding="utf-8", timeout=60, dimensions=(60, 200), env=env, cwd=log.parent)
    child.logfile_read = log.open("a")
    return child


def turn(child: pexpect.spawn) -> bool:
    """At a prompt: play the first hint, or pass when nothing beats the table. True when the
    match is over after it (the match table is shown)."""
    child.sendline("hint")
    found = child.expect([r"Hint \(\d+ in the cycle\): ", "nothing beats the table"])
    child.expect(PROMPT)
    child.sendline("" if found == 0 else "pass")
    return child.expect([PROMPT, "Match table"], timeout=90) == 1


def play_out(child: pexpect.spawn) -> None:
    child.expect(PROMPT, timeout=90)
    while not turn(child):
        pass
    child.expect("Replay written to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def resumed(command: str, log: Path) -> pexpect.spawn:
    words = shlex.split(command)
    assert words[:3] == ["bigtwo", "play", "--resume"]
    return spawn(words[1:], log)


def reference(target: str, rules: Ruleset) -> str:
    """The replay of the same match played without a stop: the person's seat plays the hints as
    the terminal test does, the bots are bigtwo play's (names, levels, seeds)."""
    hints = hint_seat(name="You")
    seats = [Seat("You", hints.choose)]
    seats += [bot_seat("good", name=f"good bot (p{seat + 1})", seed=seat) for seat in (1, 2, 3)]
    with BigTwoClient(target, timeout=10) as client:
        table = Table(client, rules, seats)
        table.play_match([CODE])
        return dumps(table.replay_log())


def test_two_targets_one_killed_the_game_goes_on(servers: list[Server], tmp_path: Path) -> None:
    first, second = start(servers, tmp_path), start(servers, tmp_path)
    replay = tmp_path / "two.toml"
    args = ["play", "--target", f"{first.target},{second.target}", "--deal-code", CODE, "--deals", "1"]
    child = spawn([*args, "--replay-out", str(replay)], tmp_path / "terminal.log")
    child.expect(PROMPT)
    for _ in range(2):
        assert not turn(child)
    first.kill()
    while not turn(child):
        pass
    child.expect("Replay written to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    log = read_replay(replay)
    assert audit_log(log).ok and log.result is not None and log.result.over
    assert log.deals[0].code == CODE


def test_the_only_server_killed_then_resume_finishes_the_same_match(servers: list[Server], tmp_path: Path) -> None:
    server = start(servers, tmp_path)
    replay = tmp_path / "lost.toml"
    args = ["play", "--target", server.target, "--deal-code", CODE, "--deals", "1", "--replay-out", str(replay)]
    child = spawn(args, tmp_path / "terminal.log")
    child.expect(PROMPT)
    for _ in range(3):
        assert not turn(child)
    server.kill()
    child.sendline("hint")
    child.expect(f"cannot reach the service at {server.target}")
    child.expect(f"The match so far is saved in {replay}")
    child.expect(RESUME)
    command = child.match.group(1).strip()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert command == f"bigtwo play --resume {replay} --target {server.target}"
    saved = read_replay(replay)
    assert audit_log(saved).ok and saved.deals[0].result is None and saved.deals[0].actions
    assert [info.name for info in saved.seats] == ["You", "good bot (p2)", "good bot (p3)", "good bot (p4)"]

    server.start()
    server.wait_ready()
    child = resumed(command, tmp_path / "terminal.log")
    child.expect("Resumed .*: 0 deals finished; going on at deal 1")
    play_out(child)
    done = read_replay(replay)
    assert audit_log(done).ok and done.result is not None and done.result.over
    assert done.deals[0].code == CODE and done.deals[0].hands == saved.deals[0].hands
    assert done.deals[0].actions[: len(saved.deals[0].actions)] == saved.deals[0].actions
    assert replay.read_text() == reference(server.target, saved.ruleset)


def test_ctrl_c_saves_the_match_and_resume_finishes_it_on_its_own_server(tmp_path: Path) -> None:
    replay = tmp_path / "stopped.toml"
    child = spawn(["play", "--deal-code", CODE, "--deals", "1", "--replay-out", str(replay)], tmp_path / "t.log")
    child.expect("a match of 1 deal; the lowest total wins")
    child.expect(PROMPT)
    assert not turn(child)
    child.sendline("sort bogus")
    child.expect(r"sort bogus: sorts are rank, suit, plays")
    child.expect(PROMPT)
    child.sendintr()
    child.expect(r"Interrupted \(Ctrl-C\)")
    child.expect(RESUME)
    command = child.match.group(1).strip()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130 or child.signalstatus == signal.SIGINT
    assert command == f"bigtwo play --resume {replay}"
    saved = read_replay(replay)
    assert audit_log(saved).ok and saved.deals[0].result is None

    child = resumed(command, tmp_path / "t.log")
    play_out(child)
    done = read_replay(replay)
    assert audit_log(done).ok and done.result is not None and done.result.over
    assert done.deals[0].actions[: len(saved.deals[0].actions)] == saved.deals[0].actions


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the server's process in /proc")
def test_the_games_own_server_is_started_again_when_it_dies(tmp_path: Path) -> None:
    replay = tmp_path / "own.toml"
    child = spawn(["play", "--deal-code", CODE, "--deals", "1", "--replay-out", str(replay)], tmp_path / "t.log")
    child.expect(PROMPT)
    assert not turn(child)
    (server,) = children_of(child.pid)
    os.kill(server, signal.SIGKILL)
    child.sendline("hint")
    child.expect("started again and the match goes on", timeout=90)
    while not turn(child):
        pass
    child.expect("Replay written to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert audit_log(read_replay(replay)).ok


def test_a_log_the_service_refuses_is_reported_with_the_seats_named_p1_to_pn() -> None:
    """A restore the service does not accept ends in :class:`TableMismatch`; the engine's sentence
    for a move out of turn or after the deal (``seat 1``, numbered from 0) is said with the seats
    named as everywhere else, from the reason and the table the service answered with."""
    from types import SimpleNamespace

    from bigtwo.client.results import RefusalInfo
    from bigtwo.client.table import TableMismatch, refusal_in_seat_names, script_seat
    from bigtwo.engine import Deal, DealCode, Reason, Refusal, deal_from_code, preset
    from bigtwo.engine.replay import ReplayWriter

    rules = preset("classic")
    seats = [script_seat([], name=f"s{seat}") for seat in range(rules.players)]
    writer = ReplayWriter(rules, [seat.info for seat in seats])
    writer.start_deal(CODE)
    writer.play_text(0, "3D")
    log = writer.log()

    def refusing(refusal: RefusalInfo, table: SimpleNamespace) -> SimpleNamespace:
        answer = SimpleNamespace(refused=True, moves_applied=0, refused_at=0, refusal=refusal, table=table)
        return SimpleNamespace(replay_log=lambda game: answer)

    out_of_turn = RefusalInfo(Reason.NOT_YOUR_TURN, "It is seat 1's turn, not seat 0's")
    with pytest.raises(TableMismatch) as turn:
        Table(refusing(out_of_turn, SimpleNamespace(over=False, to_act=1, winner=None)), rules, seats).restore(log)  # type: ignore[arg-type]
    assert "the service refused move 1 of the log: It is p2's turn" in str(turn.value)
    assert "seat " not in str(turn.value)
    over = RefusalInfo(Reason.GAME_OVER, "The deal is over: seat 3 went out")
    with pytest.raises(TableMismatch) as done:
        Table(refusing(over, SimpleNamespace(over=True, to_act=0, winner=3)), rules, seats).restore(log)  # type: ignore[arg-type]
    assert str(done.value).endswith("The deal is over: p4 went out") and "seat " not in str(done.value)

    # The mirror's own refusal (the engine deal stands for the table): the same words.
    deal = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    with pytest.raises(Refusal) as engine:
        deal.do_text(deal.to_act + 1, "pass")
    # The engine's own words.
    assert engine.value.message == f"It is p{deal.to_act + 1}'s turn, not p{deal.to_act + 2}'s"
    said = refusal_in_seat_names(RefusalInfo(engine.value.reason, engine.value.message), deal)
    assert said == f"It is p{deal.to_act + 1}'s turn"
