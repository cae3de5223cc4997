"""What a person writes is read or refused in a sentence that shows the right form (issue 35): a
ruleset file as a preset plus an ``options`` table, an unknown replay key (each valid key once, the
list whole), and the audit's failures with their file names whole at 80 columns."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from bigtwo.engine import Ruleset, RulesetError
from bigtwo.engine.replay import ReplayFormatError, loads
from client_support import BIGTWO

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


def test_a_ruleset_with_an_options_table_reads_as_the_flat_form() -> None:
    flat = Ruleset.from_toml('preset = "hong-kong"\nplayers = 3\npenalty = "flat"\n')
    nested_toml = Ruleset.from_toml('preset = "hong-kong"\n[options]\nplayers = 3\npenalty = "flat"\n')
    nested_json = Ruleset.from_json(json.dumps({"preset": "hong-kong", "options": {"players": 3, "penalty": "flat"}}))
    assert flat.fingerprint == nested_toml.fingerprint == nested_json.fingerprint
    assert flat.fingerprint != Ruleset.from_toml('preset = "hong-kong"\n').fingerprint


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('preset = "classic"\n[options]\npreset = "web"\n', "the preset goes beside [options]"),
        ('preset = "classic"\npenalty = "flat"\n[options]\npenalty = "harsh"\n', "penalty given both"),
        ('preset = "classic"\noptions = "flat"\n', "'options' is a table"),
    ],
)
def test_a_misplaced_options_table_is_refused_with_the_form_to_use(text: str, says: str) -> None:
    with pytest.raises(RulesetError) as refused:
        Ruleset.from_toml(text)
    assert says in str(refused.value)


def test_an_unknown_replay_key_lists_each_valid_key_once_and_whole() -> None:
    text = (GOLDEN / "classic-4p.toml").read_text().replace("[ruleset]", '[ruleset]\nsuit-ordr = "DCHS"', 1)
    with pytest.raises(ReplayFormatError) as refused:
        loads(text)
    message = refused.value.message
    assert "…" not in message and "(- or _ alike)" in message
    assert message.count("suit_order") == 1 and "suit-order" not in message
    assert "next_has_one_card" in message and "match" in message.rsplit(":", 1)[-1]


def test_the_audit_shows_a_long_file_name_whole_at_80_columns(tmp_path: Path) -> None:
    name = "a-replay-file-whose-name-goes-on-well-past-eighty-columns-of-a-small-terminal-window.toml"
    (tmp_path / name).write_text("garbage = = =\n")
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    done = subprocess.run([BIGTWO, "audit", str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert str(tmp_path / name) in done.stdout, done.stdout
    assert "1 file, 0 deals" in done.stdout  # counted in words: not "1 files"


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_in_a_tournament_keeps_the_deals_played_so_far(jobs: int) -> None:
    """Ctrl-C (a KeyboardInterrupt where the progress is told, here after the third deal) ends the
    tournament at once with its figures over the deals finished; ``bigtwo tournament`` prints them."""
    from bigtwo.engine import preset
    from bigtwo.tools.tournament import TournamentInterrupted, run_tournament

    done: list[int] = []

    def progress(n: int) -> None:
        done.append(n)
        if len(done) == 3:
            raise KeyboardInterrupt

    with pytest.raises(TournamentInterrupted) as stopped:
        run_tournament(preset("classic"), ["good", "random"], 50, seed=7, jobs=jobs, progress=progress)
    result = stopped.value.result
    assert result.deals == 3 and all(len(result.points[level]) == 3 for level in ("good", "random"))
    assert result.summary("good")["mean"] == result.summary("good")["mean"]  # a number, not NaN


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the command's CPU time in /proc")
def test_ctrl_c_in_an_audit_says_what_was_audited_so_far(tmp_path: Path) -> None:
    import signal
    import time

    copies = 400  # enough replays that the audit is still running when interrupted (tens of seconds)
    for copy in range(copies):
        for source in sorted(GOLDEN.glob("*.toml")):
            (tmp_path / f"{source.stem}-{copy}.toml").write_bytes(source.read_bytes())
    command = [BIGTWO, "audit", str(tmp_path)]
    audit = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while _cpu_seconds(audit.pid) < 2.5 and audit.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # past its start (imports, listing): auditing
        audit.send_signal(signal.SIGINT)
        out, err = audit.communicate(timeout=60)
    finally:
        if audit.poll() is None:
            audit.kill()
            audit.communicate()
    if audit.returncode == 0:  # the whole folder was audited before the interrupt: nothing to check
        pytest.skip("the audit finished before the interrupt")
    assert audit.returncode == 130, out + err
    assert "Traceback" not in err, err
    total = copies * len(list(GOLDEN.glob("*.toml")))
    assert f"of {total} files: the counts above are over those" in " ".join(out.split()), out


@pytest.mark.parametrize("delay", [0.8, 1.6])
def test_ctrl_c_while_the_command_starts_is_a_sentence_not_a_traceback(delay: float) -> None:
    """An interrupt that lands while the command's modules load (about a second here) or once it
    runs ends with "interrupted." and status 130, never a traceback out of an import."""
    import signal
    import time

    command = subprocess.Popen(
        [BIGTWO, "tournament", "--deals", "100000", "--no-plot", "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(delay)
        command.send_signal(signal.SIGINT)
        _, err = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            command.kill()
            command.communicate()
    assert command.returncode == 130 and "Traceback" not in err, err
    assert "interrupted" in err.lower(), err
