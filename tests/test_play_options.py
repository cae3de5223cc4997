"""Shareable means identical, readable tables, without a terminal: the share line gives
back the same rules and cards for every preset and option; ``--ruleset FILE`` wherever ``bigtwo
play`` and ``bigtwo deal`` take a preset; ``--deals 0``, bad seats and ``--resume`` with other
options refused in one sentence; one seat numbering (p1..pN) and distinct names in files, the
terminal replay and the HTML page; a replay file read back into a writer action by action; the
HTML page ending with the match result; the tournament naming the chart it writes."""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from bigtwo.cli import play_person, play_screen, play_setup
from bigtwo.cli.arguments import ruleset_from_args
from bigtwo.cli.errors import UsageError
from bigtwo.cli.main import build_parser
from bigtwo.cli.main import main as cli_main
from bigtwo.client.replay_files import read_replay
from bigtwo.engine import PRESET_NAMES, Deal, DealCode, Reason, Refusal, Ruleset, deal_from_code, preset
from bigtwo.engine.replay import ReplayWriter, SeatInfo, audit_log, dumps, loads
from bigtwo.engine.replay.html import match_result_text, render_html
from bigtwo.engine.replay.names import distinct_names, seat_label, seat_labels

GOLDEN = Path(__file__).parent / "golden"
CODE = "0000003NQK8N1"


def parse(*argv: str) -> argparse.Namespace:
    return build_parser(list(argv)).parse_args(list(argv))


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        parse(*argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


# -- shareable means identical ----------------------------------------------------------------------


OPTION_SETS = [
    [],
    ["-o", "players=3"],
    ["-o", "players=2", "-o", "cards-each=17", "-o", "flush=rank-first"],
    ["-o", "suit_order=CDHS", "-o", "twos-double=on", "-o", "match=target:50"],
    ["-o", "straights=A2345/5,23456/6,34567/7"],
    ["--deals", "3", "-o", "auto-pass=on"],
]


@pytest.mark.parametrize("name", PRESET_NAMES)
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: " ".join(o) or "none")
def test_the_share_line_gives_the_same_rules_and_cards(name: str, options: list[str]) -> None:
    args = parse("play", "--preset", name, *options)
    rules = ruleset_from_args(args)
    line = play_setup.share_command(rules, CODE, seat=1, bots=["good", "great", "pro"][: rules.players - 1])
    words = shlex.split(line)
    assert words[:2] == ["bigtwo", "play"]
    again = parse(*words[1:])
    shared = ruleset_from_args(again)
    assert shared == rules and shared.fingerprint == rules.fingerprint
    assert again.deal_code == CODE and again.seat == 1


def test_the_share_line_of_a_ruleset_file_needs_no_file(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('preset = "hong-kong"\nsuit_order = "CDHS"\nmatch = "deals:3"\n', encoding="utf-8")
    rules = ruleset_from_args(parse("play", "--ruleset", str(path)))
    line = play_setup.share_command(rules, CODE)
    assert "house.toml" not in line and "--preset hong-kong" in line
    assert ruleset_from_args(parse(*shlex.split(line)[1:])) == rules


# -- --ruleset FILE -------------------------------------------------------------------------------


def test_deal_takes_a_ruleset_file_as_toml_or_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = preset("classic").with_options(players=3, flush="rank-first")
    (tmp_path / "r.toml").write_text(rules.to_toml(), encoding="utf-8")
    (tmp_path / "r.json").write_text(json.dumps(rules.to_mapping()), encoding="utf-8")
    for name in ("r.toml", "r.json"):
        assert cli_main(["deal", "--ruleset", str(tmp_path / name), "--deal-code", CODE, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["ruleset_fingerprint"] == rules.fingerprint and data["players"] == 3
    on_top = ruleset_from_args(parse("deal", "--ruleset", str(tmp_path / "r.toml"), "-o", "flush=none"))
    assert on_top == rules.with_options(flush="none")


def test_bad_ruleset_files_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.toml").write_text('preset = "classic"\nflush = "sideways"\n', encoding="utf-8")
    (tmp_path / "rules.yaml").write_text("preset: classic\n", encoding="utf-8")
    assert "no such file" in usage_error(capsys, "play", "--ruleset", str(tmp_path / "missing.toml"))
    assert "flush" in usage_error(capsys, "deal", "--ruleset", str(tmp_path / "bad.toml"))
    assert ".toml or .json" in usage_error(capsys, "play", "--ruleset", str(tmp_path / "rules.yaml"))
    (tmp_path / "ok.json").write_text('{"preset": "web"}', encoding="utf-8")
    with pytest.raises(UsageError, match="not both"):
        ruleset_from_args(parse("play", "--ruleset", str(tmp_path / "ok.json"), "--preset", "classic"))


# -- refusals in one sentence -----------------------------------------------------------------------


def test_deals_zero_and_bad_seats_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert "a match is at least 1 deal" in usage_error(capsys, "play", "--deals", "0")
    assert "whole number" in usage_error(capsys, "play", "--deals", "two")
    for seat in ("0", "p5", "seat1"):
        assert "seats are p1, p2, p3 and p4" in usage_error(capsys, "play", "--seat", seat)
    assert parse("play", "--seat", "p3").seat == 2 and parse("play", "--seat", "4").seat == 3
    with pytest.raises(UsageError, match="this table seats p1-p3"):
        play_setup.setup_from_args(parse("play", "--seat", "p4", "-o", "players=3"))
    with pytest.raises(UsageError, match="not both"):
        ruleset_from_args(parse("play", "--deals", "2", "-o", "match=open"))
    assert "folder" in usage_error(capsys, "play", "--replay-out", "/nonexistent-folder/game.toml")


def test_the_match_length_is_said_in_words() -> None:
    def said(**options: str) -> str:
        return play_setup.match_length(preset("classic").with_options(**options))

    assert said() == "a match of 8 deals; the lowest total wins"
    assert said(match="deals:1") == "a match of 1 deal; the lowest total wins"
    assert said(match="open", settlement="zero-sum").startswith("an open match (it goes on until you quit)")
    assert said(match="target:100").startswith("a match to 100 points")
    assert play_setup.match_length(preset("taiwan")) == "a single deal; the most deals won wins"


def test_resume_takes_everything_from_its_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="leave out --preset, --bots"):
        play_setup.setup_from_replay(parse("play", "--resume", "x.toml", "--preset", "web", "--bots", "pro"))
    with pytest.raises(UsageError, match="no such file"):
        play_setup.setup_from_replay(parse("play", "--resume", str(tmp_path / "missing.toml")))
    over = tmp_path / "over.toml"
    over.write_text((GOLDEN / "classic-4p.toml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(UsageError, match="is over; nothing to resume"):
        play_setup.setup_from_replay(parse("play", "--resume", str(over)))
    writer = ReplayWriter(preset("classic"))
    writer.start_deal(CODE)
    writer.play_text(0, "3D")
    edited = tmp_path / "edited.toml"
    edited.write_text(dumps(writer.log()).replace('"p1 3D",', '"p1 3D 3S",'), encoding="utf-8")
    with pytest.raises(UsageError, match="does not check out"):
        play_setup.setup_from_replay(parse("play", "--resume", str(edited)))
    web = play_setup.setup_from_replay(parse("play", "--resume", str(GOLDEN / "web.toml")))
    with pytest.raises(UsageError, match="p2 is a bot of level '1', which the service does not offer"):
        play_setup.check_levels(web, play_setup.own_levels(), "web.toml")


def test_an_unfinished_file_of_one_person_and_bots_resumes(tmp_path: Path) -> None:
    rules = preset("classic")
    names = distinct_names(["Ann", "good bot", "good bot", "pro bot"])
    seats = [SeatInfo(names[0])] + [SeatInfo(n, "bot", n.split()[0]) for n in names[1:]]
    writer = ReplayWriter(rules, seats)
    writer.start_deal(CODE)
    writer.play_text(0, "3D")
    path = tmp_path / "unfinished.toml"
    path.write_text(dumps(writer.log()), encoding="utf-8")
    setup = play_setup.setup_from_replay(parse("play", "--resume", str(path)))
    assert setup.me == 0 and setup.levels == (None, "good", "good", "pro")
    assert setup.names == ("Ann", "good bot (p2)", "good bot (p3)", "pro bot") and setup.replay_out == path


# -- names and numbering ----------------------------------------------------------------------------


def test_names_are_distinct_and_shown_with_one_numbering() -> None:
    assert distinct_names(["You", "good bot", "good bot", "great bot"]) == (
        "You",
        "good bot (p2)",
        "good bot (p3)",
        "great bot",
    )
    assert distinct_names(["a (p1)", "a (p1)"]) == ("a (p1)", "a (p1) (p2)")
    assert seat_labels(["You", "good bot (p2)", "p3", ""]) == ("p1 You", "p2 good bot", "p3", "p4")
    assert seat_label(1, "good bot (p3)") == "p2 good bot (p3)"


def test_play_writes_distinct_names_into_its_file() -> None:
    setup = play_setup.setup_from_args(parse("play", "--seat", "p2"))
    assert setup.names == ("good bot (p1)", "You", "good bot (p3)", "good bot (p4)") and setup.me == 1


def test_refusals_on_screen_name_seats_as_the_screen_does() -> None:
    """The engine's sentences for a move out of turn or after the deal name seats p1..pN; the
    terminal says them from the reason and the table, with the seats' names."""
    rules = preset("classic")
    deal = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    other = (deal.to_act + 1) % rules.players
    with pytest.raises(Refusal) as out_of_turn:
        deal.do_text(other, "pass")
    assert f"It is p{deal.to_act + 1}'s turn" in out_of_turn.value.message  # what the engine (and the service) says
    assert "seat" not in out_of_turn.value.message
    stream = io.StringIO()
    say = play_screen.Out("never", stream)
    labels = seat_labels(["good bot", "good bot", "You", "great bot"])
    screen = play_screen.Screen(say, labels, me=2)
    person = play_person.Person(2, say, screen=screen, reader=lambda _: "quit")
    table = SimpleNamespace(to_act=deal.to_act, over=False, winner=None)
    refusal = SimpleNamespace(reason=out_of_turn.value.reason, message=out_of_turn.value.message)
    with pytest.raises(play_person.QuitGame):
        person(SimpleNamespace(refusal=refusal, table=table))
    shown = stream.getvalue()
    assert f"It is {labels[deal.to_act]}'s turn" in shown and "seat " not in shown, shown
    over = SimpleNamespace(reason=Reason.GAME_OVER, message="The deal is over: seat 3 went out")
    done = SimpleNamespace(to_act=0, over=True, winner=3)
    assert play_person.refusal_sentence(over, done, screen.who) == "The deal is over: p4 great bot went out"
    plain = SimpleNamespace(reason=Reason.DOES_NOT_BEAT, message="Pair 9 does not beat Pair K")
    assert play_person.refusal_sentence(plain, done, screen.who) == "Pair 9 does not beat Pair K"


def test_enter_after_the_hint_to_pass_passes() -> None:
    """When the hint finds nothing that beats the table it says pass; Enter then passes."""
    stream = io.StringIO()
    say = play_screen.Out("never", stream)
    lines = iter(["hint", ""])
    person = play_person.Person(0, say, reader=lambda _: next(lines))
    client = SimpleNamespace(next_hint=lambda game, selection: SimpleNamespace(play=None))
    refusal = SimpleNamespace(reason=Reason.DOES_NOT_BEAT, message="Pair 9 does not beat Pair K")
    turn = SimpleNamespace(refusal=refusal, table=None, client=client, game=None)
    assert person(turn) == "pass"
    assert "Hint: nothing beats the table; pass." in stream.getvalue()


# -- the writer reads a log back --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.toml")))
def test_a_writer_read_back_from_a_log_writes_the_same_file(name: str) -> None:
    log = read_replay(GOLDEN / name)
    again = ReplayWriter.from_log(log).log()
    assert again.chain == log.chain and [d.chain for d in again.deals] == [d.chain for d in log.deals]


def test_a_log_the_engine_does_not_give_is_not_read_back() -> None:
    writer = ReplayWriter(preset("classic"))
    writer.start_deal(CODE)
    writer.play_text(0, "3D")
    text = dumps(writer.log())
    refused_yet_legal = loads(text.replace('"p1 3D",', '"p1 3D refused does-not-beat",'))
    with pytest.raises(ValueError, match="written as refused, yet the rules allow it"):
        ReplayWriter.from_log(refused_yet_legal)
    illegal = loads(text.replace('"p1 3D",', '"p1 4H",'))
    with pytest.raises(ValueError, match="refused by the rules"):
        ReplayWriter.from_log(illegal)


# -- replays on screen and in HTML ----------------------------------------------------------------


def _unfinished_log_with_a_bad_attempt() -> str:
    seats = [SeatInfo("You"), SeatInfo("good bot", "bot", "good"), SeatInfo("good bot", "bot", "good")]
    writer = ReplayWriter(preset("classic").with_options(players=3), seats)
    writer.start_deal(CODE)
    leader = writer.deal.to_act
    with pytest.raises(ValueError):
        writer.play_text(leader, "zz")
    return dumps(writer.log())


def test_the_terminal_replay_shows_what_was_typed_and_who(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(_unfinished_log_with_a_bad_attempt(), encoding="utf-8")
    assert cli_main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tried “zz”: refused bad-card" in out and "tried :" not in out
    assert "p2 good bot" in out and "deal unfinished" in out and "no deal finished yet" in out
    assert cli_main(["replay", str(GOLDEN / "classic-4p.toml")]) == 0
    out = capsys.readouterr().out
    assert "penalty: left × rate × multiplier" in " ".join(out.replace("│", " ").split())  # as bigtwo play says


def test_play_and_replay_show_the_same_settlement_columns() -> None:
    """``bigtwo play`` after a deal and ``bigtwo replay`` show one settlement card: same columns,
    same winner row, same legend."""
    from bigtwo.cli import render_terminal
    from bigtwo.cli.settlement_rows import COLUMNS, LEGEND
    from bigtwo.engine import settle
    from rich.console import Console

    rules = preset("classic")
    card = settle(rules, [0, 3, 10, 13])
    stream = io.StringIO()
    screen = play_screen.Screen(play_screen.Out("never", stream), seat_labels(["You", "a", "b", "c"]), me=0)
    standing = SimpleNamespace(totals=card.scores, over=True)
    screen.settlement(SimpleNamespace(number=1, settlement=card, standing=standing))
    played = stream.getvalue()
    header = next(line for line in played.splitlines() if line.strip().startswith("seat"))
    assert header.split() == list(COLUMNS)
    assert "★" in played and "wins" in played and LEGEND in " ".join(played.split())
    assert "Match totals: p1 " in played and "so far" not in played  # the match is over

    from bigtwo.engine.replay.model import DealResult

    console = Console(file=io.StringIO(), width=200, color_system=None)
    log = SimpleNamespace(seat_name=lambda seat: ["You", "a", "b", "c"][seat])
    result = DealResult(card.winner, card.seats)
    console.print(render_terminal._settlement_card(log, 1, result))  # type: ignore[arg-type]
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert all(column in shown.splitlines()[2] for column in COLUMNS), shown
    for row in played.splitlines():
        if "★" in row:
            assert row.split()[-1] in shown and "wins" in shown


def test_the_html_page_ends_with_the_match_result() -> None:
    for name in ("classic-4p.toml", "match-4-deals.toml"):
        log = read_replay(GOLDEN / name)
        banner, over = match_result_text(log)
        assert log.result is not None and over == log.result.over
        assert banner.startswith("Match over after" if over else "Match not over")
        page = render_html(log, audit_log(log))
        assert 'id="match-result"' in page and "steps.length - 1" in page and "Settlement card:" in page
    unfinished = loads(_unfinished_log_with_a_bad_attempt())
    banner, over = match_result_text(unfinished)
    assert not over and "no deal finished yet; deal 1 unfinished" in banner
    page = render_html(unfinished, audit_log(unfinished))
    data = json.loads(page.split('<script id="replay-data" type="application/json">')[1].split("</script>")[0])
    assert data["seats"] == ["p1 You", "p2 good bot", "p3 good bot"]


# -- every file written is named ------------------------------------------------------------------


def test_the_tournament_names_its_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "chart.png"
    argv = ["tournament", "--deals", "1", "--levels", "random,beginner", "--no-progress", "--plot", str(chart)]
    assert cli_main(argv) == 0
    assert f"Chart written to {chart}" in capsys.readouterr().out and chart.stat().st_size > 0
    assert cli_main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["deals"] == 1 and f"Chart written to {chart}" in captured.err


def test_without_matplotlib_the_tournament_says_how_to_get_its_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails, as when not installed
    monkeypatch.chdir(tmp_path)
    assert cli_main(["tournament", "--deals", "1", "--levels", "random,beginner", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "No chart: matplotlib is not installed" in out and "pip install -e '.[plot]'" in out
    assert not list(tmp_path.iterdir())


def test_the_audit_names_its_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    assert cli_main(["audit", str(GOLDEN / "classic-4p.toml"), "--json", str(report), "--quiet"]) == 0
    assert f"JSON report written to {report}" in capsys.readouterr().out
    assert json.loads(report.read_text())["files"] == 1
    assert cli_main(["audit", str(GOLDEN / "classic-4p.toml"), "--json", "-", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["files"] == 1 and "JSON report written to standard output" in captured.err


def test_ruleset_equality_is_what_share_compares() -> None:
    assert Ruleset.from_mapping({"preset": "web"}) == preset("web")


def test_the_table_says_1_card_not_1_cards() -> None:
    stream = io.StringIO()
    screen = play_screen.Screen(play_screen.Out("never", stream), seat_labels(["You", "a", "b", "c"]), me=0)
    table = SimpleNamespace(
        deal_number=1, moves_made=9, cards_left=(1, 2, 13, 0), table=None, over=False, to_act=0,
        leader=0, passed_seats=(), opening_card=None, last_player=None,
    )  # fmt: skip
    screen.table(table)
    shown = stream.getvalue()
    assert " 1 card " in shown and " 2 cards" in shown and "1 cards" not in shown, shown


def test_tournament_help_speaks_to_a_person() -> None:
    """``bigtwo tournament --help`` says what the command does, not the module's developer notes."""
    parser = build_parser()
    helped = io.StringIO()
    with pytest.raises(SystemExit):
        sys_stdout, sys.stdout = sys.stdout, helped
        try:
            parser.parse_args(["tournament", "--help"])
        finally:
            sys.stdout = sys_stdout
    text = helped.getvalue()
    assert "duplicate deals" in text and "Example: bigtwo tournament" in text
    assert ":mod:" not in text and "docstring" not in text and "bigtwo.tools" not in text


def test_a_hint_the_stopped_service_did_not_answer_is_asked_again_once_it_is_back() -> None:
    """``bigtwo play``'s own server dies while the person asks for a hint: the command starts it
    again and asks the table for the same turn, and the hint is sent again unprompted (not dropped)."""
    import grpc
    from bigtwo.client.client import BigTwoUnavailable

    rules = preset("classic")
    deal = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    answers: list[object] = [BigTwoUnavailable(grpc.StatusCode.UNAVAILABLE, "connection refused")]
    hinted: list[int] = []

    def next_hint(game: object, selection: int) -> object:
        hinted.append(selection)
        answer = answers.pop(0) if answers else SimpleNamespace(play=None, cycle_length=0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    lines = iter(["hint", "quit"])
    stream = io.StringIO()
    say = play_screen.Out("never", stream)
    person = play_person.Person(deal.to_act, say, reader=lambda _: next(lines))
    turn = SimpleNamespace(refusal=None, client=SimpleNamespace(next_hint=next_hint), game=None, table=None)
    person.show_table = lambda turn: None  # type: ignore[method-assign]
    with pytest.raises(BigTwoUnavailable):
        person(turn)
    assert person.pending == "hint"
    with pytest.raises(play_person.QuitGame):
        person(turn)  # the same turn, asked again after the restart: the hint goes first, then "quit" is read
    assert len(hinted) == 2 and person.pending == ""
