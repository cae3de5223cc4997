"""Replay files (issue 4): golden files byte for byte, determinism across processes, round trips,
lenient import, precise errors, every kind of tampering, the writer, and the two commands."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from bigtwo.cli.main import main as cli_main
from bigtwo.client.replay_files import read_replay
from bigtwo.engine import Deal, DealCode, Move, Refusal, Ruleset, deal_from_code
from bigtwo.engine.replay import (
    GameLog,
    ReplayFormatError,
    ReplayWriter,
    SeatInfo,
    VerdictKind,
    audit_log,
    audit_text,
    dumps,
    game_log_from_deals,
    loads,
    seal,
)
from bigtwo.engine.replay.audit import SignatureStatus
from bigtwo.engine.replay.model import Action, ActionKind
from bigtwo.engine.replay.validate import validate_action, validate_log

GOLDEN = Path(__file__).parent / "golden"
MAKE_GOLDEN = GOLDEN / "make_golden.py"
GOLDEN_FILES = sorted(p.name for p in GOLDEN.glob("*.toml"))
KEY = (GOLDEN / "test-signing-key").read_bytes().rstrip()
SIGNED = {"hong-kong.toml", "dragon.toml", "match-4-deals.toml"}


def _golden_module():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_golden", MAKE_GOLDEN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(name: str) -> str:
    return (GOLDEN / name).read_bytes().decode("utf-8")


# -- golden files ---------------------------------------------------------------------------------


def test_golden_set_covers_the_issue() -> None:
    assert set(GOLDEN_FILES) == {
        "classic-4p.toml",
        "classic-3p.toml",
        "web.toml",
        "hong-kong.toml",
        "hong-kong-strict.toml",
        "taiwan-2p.toml",
        "pusoy-dos.toml",
        "dragon.toml",
        "match-4-deals.toml",
    }
    presets = {loads(_text(name)).ruleset.preset for name in GOLDEN_FILES}
    assert presets == {"classic", "web", "hong-kong", "hong-kong-strict", "taiwan", "pusoy-dos"}
    players = {loads(_text(name)).players for name in GOLDEN_FILES}
    assert players == {2, 3, 4}
    assert "by_dragon = true" in _text("dragon.toml")
    assert ' auto"' in _text("hong-kong.toml")
    match = loads(_text("match-4-deals.toml"))
    assert len(match.deals) == 4 and not any(a.refused for d in match.deals for a in d.actions)
    assert any(a.refused for d in loads(_text("classic-4p.toml")).deals for a in d.actions)


def test_golden_files_regenerate_byte_for_byte() -> None:
    built = _golden_module().build_all()
    assert sorted(built) == GOLDEN_FILES
    for name, text in built.items():
        assert text.encode("utf-8") == (GOLDEN / name).read_bytes(), f"{name} differs: run make_golden.py and review"


def test_two_processes_write_identical_bytes(tmp_path: Path) -> None:
    outs = []
    for hash_seed in ("1", "987654"):
        out = tmp_path / f"run-{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, str(MAKE_GOLDEN), str(out)], check=True, env=env, timeout=120)
        outs.append(out)
    for name in GOLDEN_FILES:
        first, second = ((o / name).read_bytes() for o in outs)
        assert first == second == (GOLDEN / name).read_bytes(), name


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_golden_file_audits_valid_and_round_trips(name: str) -> None:
    text = _text(name)
    log = loads(text)
    assert dumps(log) == text
    assert dumps(loads(dumps(log))) == text
    verdict = audit_log(log, KEY)
    assert verdict.kind is VerdictKind.VALID, verdict.summary()
    assert verdict.signature is (SignatureStatus.VALID if name in SIGNED else SignatureStatus.UNSIGNED)
    # the per-step views cover every action plus each deal's start; the events cover every deal
    assert len(verdict.steps) == sum(len(d.actions) + 1 for d in log.deals)
    assert sum(1 for e in verdict.events if type(e).__name__ == "DealStarted") == len(log.deals)
    # without the key a signed file still replays and says so
    assert audit_log(log).signature is (SignatureStatus.NOT_CHECKED if name in SIGNED else SignatureStatus.UNSIGNED)


def test_step_views_follow_the_game() -> None:
    log = loads(_text("hong-kong.toml"))
    verdict = audit_log(log, KEY)
    steps = verdict.steps
    first = steps[0]
    assert first.actor == -1 and sum(h.bit_count() for h in first.hands) == 52
    last_of_deal1 = [s for s in steps if s.deal_number == log.deals[0].number and s.deal_over][-1]
    assert last_of_deal1.deal_scores == log.deals[0].result.scores  # type: ignore[union-attr]
    assert steps[-1].totals == log.result.totals  # type: ignore[union-attr]
    assert any(s.refused for s in steps)
    assert max(s.trick for s in steps) > 3


# -- lenient import, precise errors ---------------------------------------------------------------


def test_lenient_import_reads_unicode_ten_comments_crlf() -> None:
    text = _text("classic-4p.toml")
    log = loads(text)
    first_play = log.deals[0].actions[0]
    lenient_first = first_play.text().replace("T", "10")
    for card in first_play.cards:
        lenient_first = lenient_first.replace(card, card[:-1] + {"D": "♦", "C": "♣", "H": "♥", "S": "♠"}[card[-1]])
    messy = text.replace(f'"{first_play.text()}",', f'"{lenient_first.upper()}",  # the opening play', 1)
    messy = messy.replace("[ruleset]", "# a comment line\n[ruleset]  # rules")
    assert messy != text
    parsed = loads(messy)
    assert dumps(parsed) == text
    assert audit_log(parsed).ok


def test_read_replay_accepts_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "crlf.toml"
    path.write_bytes(b"\xef\xbb\xbf" + _text("web.toml").replace("\n", "\r\n").encode())
    assert dumps(read_replay(path)) == _text("web.toml")


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ('"p1 pass",', '"p1 XQ",', "not a card"),
        ('"p1 pass",', '"p9 pass",', "not a seat"),
        ('"p1 pass",', '"pass",', "actor"),
        ('"p1 pass",', '"p1 pass refused because",', "not a refusal reason"),
        ('"p1 pass",', '"p1 pass auto sometimes",', "unexpected"),
        ('"p1 pass",', "42,", "must be a string"),
    ],
)
def test_action_errors_name_the_line(old: str, new: str, words: str) -> None:
    text = _text("classic-4p.toml")
    broken = text.replace(old, new, 1)
    with pytest.raises(ReplayFormatError) as info:
        loads(broken)
    assert info.value.line == _line_of(broken, new)
    assert words in str(info.value) and str(info.value).startswith(f"line {info.value.line}:")


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ('kind = "human"', 'kind = "alien"', "kind is"),
        ('format = "bigtwo-replay/1"', 'format = "bigtwo-replay/9"', "unknown format"),
        ('preset = "classic"', 'preset = "nowhere"', "preset"),
        ('match = "deals:2"', 'match = "sometimes"', "match"),
        ("number = 1", "nubmer = 1", "unknown key 'nubmer'"),
        ('winner = "p', 'winner = "x', "not a seat"),
        ("cards_left = [", "cards_left = [9, ", "entries"),
        ("over = true", "over = maybe", "TOML"),
    ],
)
def test_file_errors_name_the_line(old: str, new: str, words: str) -> None:
    text = _text("classic-4p.toml")
    assert old in text
    broken = text.replace(old, new, 1)
    with pytest.raises(ReplayFormatError) as info:
        loads(broken)
    assert words in str(info.value)
    assert info.value.line == _line_of(broken, new)


def test_bad_code_and_hands_errors() -> None:
    text = _text("classic-4p.toml")
    log = loads(text)
    code = log.deals[0].code
    broken = text.replace(code, code[:-1] + ("0" if code[-1] != "0" else "1"), 1)
    with pytest.raises(ReplayFormatError, match="check symbol") as info:
        loads(broken)
    assert info.value.line == _line_of(text, f'code = "{code}"')
    hand = log.deals[0].hands[1]
    broken = text.replace(hand, hand + " ZZ", 1)
    with pytest.raises(ReplayFormatError, match="p2's hand") as info:
        loads(broken)
    assert info.value.line == _line_of(text, hand)


def test_audit_text_reports_format_errors() -> None:
    verdict = audit_text("format = 1\n")
    assert verdict.kind is VerdictKind.FORMAT_ERROR and not verdict.ok
    assert verdict.first is not None and verdict.first.line == 1


# -- tampering ------------------------------------------------------------------------------------


def _audit(text: str, key: bytes | None = KEY) -> object:
    return audit_log(loads(text), key)


def test_edited_move_is_the_first_illegal_move() -> None:
    text = _text("match-4-deals.toml")
    log = loads(text)
    deal = log.deals[1]
    index = next(i for i, a in enumerate(deal.actions) if a.kind.value == "play" and i > 3)
    action = deal.actions[index]
    held = set(deal.hands[action.seat].split())
    stranger = next(c for h in deal.hands for c in h.split() if c not in held)
    edited = text.replace(f'"{action.text()}",', f'"p{action.seat + 1} {stranger}",', 1)
    assert edited.count("\n") == text.count("\n")
    verdict = audit_log(loads(edited), KEY)
    assert verdict.kind is VerdictKind.ILLEGAL_MOVE
    first = verdict.first
    assert first is not None
    assert (first.deal_number, first.index, first.reason) == (deal.number, index, "not-in-hand")
    assert first.line == _line_of(edited, f'"p{action.seat + 1} {stranger}",')
    assert VerdictKind.BROKEN_CHAIN in {p.kind for p in verdict.problems}
    assert len(verdict.steps) > 0  # views up to the illegal move
    bulk = audit_log(loads(edited), KEY, views=False)  # the bulk audit's fast path agrees
    assert [(p.kind, p.message, p.line, p.index) for p in bulk.problems] == [
        (p.kind, p.message, p.line, p.index) for p in verdict.problems
    ]
    assert not bulk.steps and bulk.first is not None and bulk.first.step == -1


def test_edited_move_that_stays_legal_breaks_the_result_or_chain() -> None:
    text = _text("match-4-deals.toml")
    log = loads(text)
    deal = log.deals[0]
    # swap a pass for a legal play somewhere: replay the deal to find one
    rules = log.ruleset
    engine = Deal.start(rules, deal_from_code(DealCode.parse(deal.code), rules))
    for action in deal.actions:
        if action.kind.value == "pass" and not action.auto:
            plays = [m for m in engine.legal_moves() if not m.is_pass]
            if plays:
                replacement = f"p{action.seat + 1} {plays[0]}"
                break
        engine.do(Move.parse(action.seat, action.move_text))
    else:  # pragma: no cover
        pytest.skip("no pass with a legal alternative")
    lines = text.split("\n")
    assert lines[action.line - 1].strip() == f'"{action.text()}",'
    lines[action.line - 1] = f'  "{replacement}",'
    verdict = audit_log(loads("\n".join(lines)), KEY)
    assert not verdict.ok
    assert verdict.kind in (VerdictKind.ILLEGAL_MOVE, VerdictKind.RESULT_MISMATCH, VerdictKind.BROKEN_CHAIN)


def test_edited_hands_and_edited_code_are_caught() -> None:
    text = _text("classic-4p.toml")
    log = loads(text)
    hands = log.deals[0].hands
    a, b = hands[0].split()[0], hands[1].split()[0]
    swapped = text.replace(hands[0], hands[0].replace(a, b), 1).replace(hands[1], hands[1].replace(b, a), 1)
    verdict = _audit(swapped)
    assert verdict.kind is VerdictKind.DEAL_CODE_MISMATCH  # type: ignore[attr-defined]
    other_code = str(DealCode(12345678))
    verdict = _audit(text.replace(log.deals[0].code, other_code, 1))
    assert verdict.kind is VerdictKind.DEAL_CODE_MISMATCH  # type: ignore[attr-defined]
    assert "deal code" in verdict.first.message  # type: ignore[attr-defined]


def test_explicit_hands_without_code_are_checked_as_a_deal() -> None:
    text = _text("dragon.toml")
    log = loads(text)
    hand = log.deals[0].hands[0]
    verdict = _audit(text.replace(hand, hand.replace("3D ", "3C "), 1))
    assert verdict.kind is VerdictKind.DEAL_CODE_MISMATCH  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("penalty = [", "penalty = [1"),  # a seat's penalty
        ('winner = "p', 'winner = "p'),  # placeholder replaced below
        ("totals = [", "totals = [100"),
        ("over = true", "over = false"),
        ("by_dragon = true\n", ""),
    ],
)
def test_edited_result_is_caught(old: str, new: str) -> None:
    name = "dragon.toml" if "dragon" in old else "match-4-deals.toml"
    text = _text(name)
    if old == 'winner = "p':
        log = loads(text)
        winner = log.deals[0].result.winner  # type: ignore[union-attr]
        old, new = f'winner = "p{winner + 1}"', f'winner = "p{(winner + 1) % 4 + 1}"'
    edited = text.replace(old, new, 1)
    assert edited != text
    verdict = _audit(edited)
    assert verdict.kind is VerdictKind.RESULT_MISMATCH, verdict.summary()  # type: ignore[attr-defined]
    assert verdict.first.line > 0  # type: ignore[attr-defined]


def test_refusal_and_auto_pass_records_are_checked() -> None:
    text = _text("hong-kong.toml")
    log = loads(text)
    refused = next(a for d in log.deals for a in d.actions if a.refused and a.refused != "bad-card")
    other = "does-not-beat" if refused.refused != "does-not-beat" else "wrong-size"
    verdict = _audit(text.replace(f'"{refused.text()}"', f'"{refused.text().replace(refused.refused, other)}"', 1))
    assert verdict.kind is VerdictKind.ILLEGAL_MOVE and verdict.first.reason == "wrong-refusal"  # type: ignore[attr-defined]
    auto = next(a for d in log.deals for a in d.actions if a.auto)
    lines = text.split("\n")
    position = next(i for i, line in enumerate(lines) if line.strip() == f'"{auto.text()}",')
    del lines[position]
    verdict = _audit("\n".join(lines))
    assert verdict.kind is VerdictKind.ILLEGAL_MOVE and verdict.first.reason == "auto-pass-missing"  # type: ignore[attr-defined]


def test_broken_chain_is_caught() -> None:
    text = _text("classic-4p.toml")
    # an edit that changes no rule: a name, a comment, the order of the story
    for edited in (
        text.replace('name = "Ann"', 'name = "Anna"', 1),
        text.replace('comment = "classic, 4 players"', 'comment = "friendly game"', 1),
        text.replace('chain = "', 'chain = "0', 1),
    ):
        verdict = _audit(edited)
        assert verdict.kind is VerdictKind.BROKEN_CHAIN, verdict.summary()  # type: ignore[attr-defined]
    log = loads(text)
    no_chain = GameLog(**{**{f: getattr(log, f) for f in log.__dataclass_fields__}, "chain": ""})
    assert audit_log(no_chain).kind is VerdictKind.BROKEN_CHAIN


def test_signatures() -> None:
    text = _text("match-4-deals.toml")
    assert _audit(text).signature is SignatureStatus.VALID  # type: ignore[attr-defined]
    wrong = audit_log(loads(text), b"another key")
    assert wrong.kind is VerdictKind.BAD_SIGNATURE and wrong.signature is SignatureStatus.BAD
    # an edit re-sealed by someone without the key: the chain is right again, the signature is not
    edited = loads(text.replace('name = "Ann"', 'name = "Mallory"', 1))
    resealed = seal(edited)
    forged = GameLog(
        **{**{f: getattr(resealed, f) for f in resealed.__dataclass_fields__}, "signature": loads(text).signature}
    )
    verdict = audit_log(loads(dumps(forged)), KEY)
    assert verdict.kind is VerdictKind.BAD_SIGNATURE
    assert audit_log(loads(dumps(forged))).signature is SignatureStatus.NOT_CHECKED
    # unsigned files replay and say so; a key holder may require signatures
    unsigned = loads(_text("web.toml"))
    assert audit_log(unsigned, KEY).ok and audit_log(unsigned, KEY).signature is SignatureStatus.UNSIGNED
    assert audit_log(unsigned, KEY, require_signature=True).kind is VerdictKind.BAD_SIGNATURE
    assert audit_log(loads(text.replace("hmac-sha256:", "rot13:", 1)), KEY).kind is VerdictKind.BAD_SIGNATURE


def test_signatures_survive_key_rotation() -> None:
    """A file signed before a rotation verifies with the new key ring (new key first, old kept)."""
    log = loads(_text("match-4-deals.toml"))
    assert audit_log(log, [b"the new signing key", KEY]).signature is SignatureStatus.VALID
    assert audit_log(log, [b"the new signing key"]).signature is SignatureStatus.BAD


def test_context_is_checked() -> None:
    text = _text("hong-kong.toml")
    log = loads(text)
    prev = log.deals[1].previous_winner
    assert prev is not None
    edited = text.replace(f'previous_winner = "p{prev + 1}"', f'previous_winner = "p{(prev + 1) % 4 + 1}"', 1)
    assert _audit(edited).kind is VerdictKind.CONTEXT_MISMATCH  # type: ignore[attr-defined]
    edited = text.replace("number = 2", "number = 5", 1)
    assert _audit(edited).kind is VerdictKind.CONTEXT_MISMATCH  # type: ignore[attr-defined]


def test_fingerprint_is_checked() -> None:
    text = _text("web.toml")
    log = loads(text)
    edited = text.replace(log.fingerprint, "0123456789abcdef", 1)
    assert _audit(edited).kind is VerdictKind.RULESET_MISMATCH  # type: ignore[attr-defined]
    # a changed rule with its old fingerprint
    edited = text.replace('fingerprint = "', 'suit_order = "CDHS"\nfingerprint = "', 1)
    assert _audit(edited).kind is VerdictKind.RULESET_MISMATCH  # type: ignore[attr-defined]


# -- writers --------------------------------------------------------------------------------------


def test_game_log_from_deals_matches_the_writer() -> None:
    rules = Ruleset.from_mapping({"preset": "classic", "match": "deals:2"})
    rng = random.Random(11)
    writer = ReplayWriter(rules)
    deals = []
    codes = [DealCode(101), DealCode(202)]
    for code in codes:
        deal = writer.start_deal(code)
        while not deal.over:
            writer.play(rng.choice(deal.legal_moves()))
        deals.append(deal)
    from_deals = game_log_from_deals(rules, deals, codes=codes, key=KEY)
    assert dumps(from_deals) == dumps(writer.log(KEY))
    assert audit_log(from_deals, KEY).ok


def test_writer_records_refusals_and_unfinished_deals() -> None:
    rules = Ruleset.from_mapping({"preset": "web"})
    writer = ReplayWriter(rules, [SeatInfo("A"), SeatInfo("B", "bot", "hard"), SeatInfo("C"), SeatInfo("D")])
    deal = writer.start_deal("0000000000000")  # a code with seed 0
    with pytest.raises(Refusal):
        writer.play(Move.pass_(deal.to_act))
    with pytest.raises(Refusal):
        writer.play_text(deal.to_act, "QX")
    writer.play(deal.legal_moves()[0])
    log = writer.log()
    text = dumps(log)
    assert "refused cannot-pass-leading" in text and "QX refused bad-card" in text and 'level = "hard"' in text
    again = loads(text)
    assert dumps(again) == text
    verdict = audit_log(again)
    assert verdict.ok, verdict.summary()
    assert log.result is None and log.deals[0].result is None


# -- commands -------------------------------------------------------------------------------------


def test_bigtwo_replay_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    status = cli_main(
        ["replay", str(GOLDEN / "hong-kong.toml"), "--key", str(GOLDEN / "test-signing-key"), "--width", "140"]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "Settlement" in out and "Trick" in out and "refused" in out and "Match totals" in out
    assert "signature valid" in out and "(auto)" in out


def test_bigtwo_replay_rejects_broken_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(_text("web.toml").replace('"p1 pass",', '"p1 ZZ",', 1))
    assert cli_main(["replay", str(path)]) == 2
    assert "line" in capsys.readouterr().err
    path.write_text(_text("web.toml").replace("score = [", "score = [1", 1))
    assert cli_main(["replay", str(path)]) == 1


def test_bigtwo_audit_folder_json_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    for name in GOLDEN_FILES:
        (folder / "sub" / name).write_bytes((GOLDEN / name).read_bytes())
    report = tmp_path / "report.json"
    key = str(GOLDEN / "test-signing-key")
    assert cli_main(["audit", str(folder), "--json", str(report), "--key", key]) == 0
    data = json.loads(report.read_text())
    assert data["files"] == len(GOLDEN_FILES) and data["failed"] == 0
    assert data["signatures"] == {"unsigned": len(GOLDEN_FILES) - len(SIGNED), "valid": len(SIGNED)}
    (folder / "tampered.toml").write_text(_text("web.toml").replace("totals = [", "totals = [7", 1))
    (folder / "garbage.toml").write_text("this is not toml at all = = =\n")
    assert cli_main(["audit", str(folder), "--jobs", "2", "--json", str(report), "--key", key]) == 1
    data = json.loads(report.read_text())
    assert data["failed"] == 2 and data["by_verdict"]["result-mismatch"] == 1
    assert data["by_verdict"]["format-error"] == 1
    bad = {r["path"].rsplit("/", 1)[-1]: r for r in data["results"] if not r["ok"]}
    assert bad["garbage.toml"]["line"] == 1
    out = capsys.readouterr().out
    assert "Audit summary" in out and "Failures" in out


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_fast_parser_agrees_with_tomllib(name: str) -> None:
    import tomllib

    from bigtwo.engine.replay.general import locate
    from bigtwo.engine.replay.layout import try_layout
    from bigtwo.engine.replay.reader import _Reader

    text = _text(name)
    fast = try_layout(text)
    assert fast is not None, "canonical files take the fast path"
    data, where = fast
    assert data == tomllib.loads(text)
    slow, fast_reader = _Reader(locate(text)), _Reader(where)
    log = loads(text)
    for d, deal in enumerate(log.deals):
        for a in range(len(deal.actions)):
            path = ("deals", d, "actions", a)
            assert fast_reader.line(path) == slow.line(path) == deal.actions[a].line
        assert fast_reader.line(("deals", d, "result")) == slow.line(("deals", d, "result"))


@pytest.mark.parametrize("name", ["hong-kong.toml", "dragon.toml", "taiwan-2p.toml"])
def test_proto_game_log_conversions(name: str) -> None:
    from bigtwo.codec.replay import game_log_from_pb, move_index, pb_from_game_log

    log = loads(_text(name))
    for index, record in enumerate(log.deals):
        message = pb_from_game_log(log, index)
        back = game_log_from_pb(message)
        assert audit_log(back).ok
        plain = [a for a in record.actions if a.kind.value in ("play", "pass") and not a.refused]
        assert [(a.seat, a.move_text, a.auto) for a in back.deals[0].actions] == [
            (a.seat, a.move_text, a.auto) for a in plain
        ]  # timeouts and seat changes are not in the proto log
        assert back.deals[0].result == record.result
        if len(message.moves) > 3:
            message.moves[3] = "2S 2H"  # almost surely refused
            verdict = audit_log(game_log_from_pb(message))
            if not verdict.ok:
                assert verdict.kind is VerdictKind.ILLEGAL_MOVE
                assert move_index(game_log_from_pb(message).deals[0], verdict.first.index) == 3  # type: ignore[union-attr]


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_every_golden_log_passes_the_validator(name: str) -> None:
    validate_log(loads(_text(name)))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"seat": 7}, "p8 is not a seat at this 4-player table"),
        ({"auto": True}, "only a pass can be automatic"),
        ({"refused": "too-rude"}, "'too-rude' is not a refusal reason"),
        ({"cards": ()}, "names no move"),
    ],
)
def test_audit_gives_a_log_built_out_of_shape_a_format_error(change: dict[str, object], words: str) -> None:
    log = loads(_text("classic-4p.toml"))
    deal = log.deals[0]
    play = next(i for i, action in enumerate(deal.actions) if action.kind is ActionKind.PLAY)
    edited = replace(deal.actions[play], canonical="", **change)  # type: ignore[arg-type]
    bad = replace(log, deals=(replace(deal, actions=(*deal.actions[:play], edited, *deal.actions[play + 1 :])),))
    with pytest.raises(ReplayFormatError, match=words):
        validate_log(bad)
    verdict = audit_log(bad)
    assert verdict.kind is VerdictKind.FORMAT_ERROR and words in verdict.problems[0].message
    assert verdict.problems[0].line == deal.actions[play].line > 0


def test_reader_and_validator_say_the_same_sentence() -> None:
    text = _text("classic-4p.toml").replace('"p1 pass"', '"p1 3D auto"', 1)
    with pytest.raises(ReplayFormatError) as read:
        loads(text)
    action = Action(0, ActionKind.PLAY, ("3D",), auto=True, line=read.value.line)
    with pytest.raises(ReplayFormatError) as checked:
        validate_action(action, 4)
    assert read.value.message == checked.value.message and read.value.line == checked.value.line
