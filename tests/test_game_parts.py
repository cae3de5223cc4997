"""The game owns its transitions and the core is made of parts (issue 34, items 1 and 2):
:meth:`Game.play` is the one way a move changes a game and keeps what a token reads in step with
the deal; :meth:`Game.resend` answers the re-send of the last move; no field of a game is set from
outside it; and each of the core's parts (games, judge, tokens) is built and used alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bigtwo.engine import Deal, DealCode, Move, Refusal, deal_from_code, preset
from bigtwo.service import wire
from bigtwo.service.core import Core
from bigtwo.service.errors import FailedPrecondition
from bigtwo.service.game import CallInfo, Game, Played
from bigtwo.service.history import History
from bigtwo.service.judging import MoveJudge
from bigtwo.service.limits import LIMITS
from bigtwo.service.loading import GameLoader, GameTokens
from bigtwo.service.tokens import KeyRing, LastMove, TokenCodec, identity_of
from bigtwo.v1 import types_pb2 as pb
from service_support import CODE, KEY_A

ROOT = Path(__file__).resolve().parents[1]


def codec() -> TokenCodec:
    return TokenCodec(KeyRing([KEY_A.encode()]))


def new_game(code: str = CODE) -> Game:
    """A game built by hand, as a loader builds a new deal's (no loader, no codec)."""
    rules = preset("classic")
    deal_code = DealCode.parse(code)
    dealt = deal_from_code(deal_code, rules)
    deal = Deal.start(rules, dealt)
    return Game(rules, deal, identity_of(False, deal_code.seed), dealt.face_up_card, dealt.face_up_seat)


def first_legal(game: Game) -> Move:
    legal = game.deal.legal_moves()
    return legal[0]


def test_play_keeps_the_last_move_the_state_before_it_and_the_history() -> None:
    game = new_game()
    game.public_history()  # read once: from now on kept move by move
    for index in range(6):
        move = first_legal(game)
        before = game.deal.state()
        played = game.play(move.seat, str(move))
        assert isinstance(played, Played) and played.game is game and played.move_index == index
        assert played.move == game.last_move == LastMove(move.seat, move.mask, move.is_pass)
        assert played.events and played.events == game.deal.events[-len(played.events) :]
        previous = game.previous
        assert isinstance(previous, Deal) and previous.state() == before
        moves = History.unpack(game.public_history()).moves_made()
        assert len(moves) == index + 1 and moves[-1] == (move.seat, move.mask)
    # The history kept move by move is the one read afresh from the events.
    again = new_game()
    for event_move in History.unpack(game.public_history()).moves_made():
        seat, mask = event_move
        again.play(seat, Move.from_mask(seat, mask) if mask else Move.pass_(seat))
    assert again.public_history() == game.public_history()
    assert again.snapshot() == game.snapshot()


def test_a_refused_move_changes_nothing() -> None:
    game = new_game()
    move = first_legal(game)
    game.play(move.seat, str(move))
    snapshot = game.snapshot()
    with pytest.raises(Refusal):
        game.play((game.deal.to_act + 1) % game.deal.players, "pass")  # not that seat's turn
    with pytest.raises(Refusal):
        game.play(game.deal.to_act, "zz")  # no card
    assert game.snapshot() == snapshot


def test_text_and_a_parsed_move_play_alike() -> None:
    by_text, by_move = new_game(), new_game()
    for _ in range(8):
        move = first_legal(by_text)
        by_text.play(move.seat, str(move))
        by_move.play(move.seat, Move.parse(move.seat, str(move)))
    assert by_text.snapshot() == by_move.snapshot()


def test_resend_plays_the_last_move_again_on_the_game_before_it() -> None:
    game = new_game()
    for _ in range(3):
        move = first_legal(game)
        game.play(move.seat, str(move))
    snapshot = game.snapshot()
    last = game.last_move
    assert last is not None
    text = "pass" if last.is_pass else str(Move.from_mask(last.seat, last.mask))
    resent = game.resend(last.seat, text)
    assert resent is not None and resent.game is not game
    assert resent.move == last and resent.move_index == game.deal.moves_made - 1
    assert resent.game.snapshot() == snapshot  # the same token as the first answer's
    assert game.snapshot() == snapshot  # and the game itself is unchanged
    other = first_legal(game)
    assert game.resend(other.seat, str(other)) is None  # not the last move
    kept_none = new_game()
    move = first_legal(kept_none)
    kept_none.play(move.seat, str(move), keep_previous=False)
    assert kept_none.previous is None and kept_none.resend(move.seat, str(move)) is None


@pytest.mark.parametrize(
    "name",
    [
        "ruleset",
        "deal",
        "identity",
        "face_up_card",
        "face_up_seat",
        "previous",
        "last_move",
        "parts",
        "public_id",
        "viewer",
        "bots",
    ],
)
def test_no_field_of_a_game_is_set_from_outside(name: str) -> None:
    game = new_game()
    with pytest.raises(AttributeError):
        setattr(game, name, getattr(game, name))
    with pytest.raises(AttributeError):
        game.anything_new = 1  # type: ignore[attr-defined]


GAME_FIELD_WRITE = re.compile(
    r"\b\w+\.(_?(previous|last_move|packed|history|history_moves|loaded|loaded_history|writer|deal_writer"
    r"|public_id|viewer|bots|parts|face_up_card|face_up_seat))\s*(\+|-)?=[^=]"
)


def test_no_module_but_the_games_writes_a_games_fields() -> None:
    """Code health: only service/game.py assigns a game's fields (its own ``self``/``game``); a
    loader, a judge or a handler calls :meth:`Game.play` instead."""
    offenders = []
    for path in sorted((ROOT / "service").glob("*.py")):
        if path.name == "game.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = GAME_FIELD_WRITE.search(line)
            if match and re.search(r"\bgame\w*\.", line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


def test_the_game_loader_alone_starts_and_resumes_games() -> None:
    loader = GameLoader(codec())
    info = CallInfo()
    log = pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE, moves=[])
    started = loader.load(pb.Game(log=log), "game", info)
    assert info.deal_id == started.public_id != "" and started.deal.moves_made == 0
    move = first_legal(started)
    log.moves.append(str(move))
    replayed = loader.load(pb.Game(log=log), "game", CallInfo())
    assert replayed.deal.moves_made == 1 and replayed.last_move == LastMove(move.seat, move.mask, move.is_pass)
    token = GameTokens(loader.codec).token(replayed)
    resumed = loader.load(pb.Game(state_token=token), "game", CallInfo())
    assert resumed.snapshot() == replayed.snapshot() and resumed.public_id == replayed.public_id


def test_the_tokens_alone_write_what_the_codec_reads() -> None:
    tokens = GameTokens(codec())
    game = new_game()
    move = first_legal(game)
    game.play(move.seat, str(move))
    snap = tokens.codec.decode(tokens.token(game))
    assert snap.state == game.deal.state() and snap.last_move == game.last_move and snap.viewer == -1
    assert tokens.seat_token(game, None) == b""
    assert tokens.codec.decode(tokens.seat_token(game, 2)).viewer == 2


def test_the_judge_alone_validates_applies_and_refuses() -> None:
    judge = MoveJudge(LIMITS)
    game = new_game()
    move = first_legal(game)
    message = pb.Move(index=0, seat=move.seat, text=str(move))
    info = CallInfo()
    checked = judge.validate(game, message, "move", info, need_index=True)
    assert checked.accepted and game.deal.moves_made == 0
    applied = judge.apply(game, message, "move", info, need_index=True)
    assert applied.accepted and applied.game is game and game.deal.moves_made == 1
    again = judge.apply(game, message, "move", info, need_index=True)  # the answer was lost: resent
    assert again.outcome == applied.outcome and again.events == applied.events and game.deal.moves_made == 1
    assert [result for result, _ in info.moves] == ["validated", "accepted", "duplicate"]
    with pytest.raises(FailedPrecondition) as caught:
        judge.apply(game, pb.Move(index=5, seat=move.seat, text=str(move)), "move", info, need_index=True)
    assert caught.value.reason == "WRONG_MOVE_INDEX"
    answer = judge.answer(applied, None, wire.APPLY)
    assert answer and isinstance(answer, bytes)


def test_the_core_is_its_parts() -> None:
    core = Core(codec())
    assert isinstance(core.games, GameLoader) and isinstance(core.judge, MoveJudge)
    assert isinstance(core.tokens, GameTokens) and core.tokens.codec is core.codec is core.games.codec
    assert core.judge.limits is core.limits is core.games.limits
