"""The servicer in process (a grpc.aio server in this process, tests/aio_harness.py): every RPC, the
error model, tokens, retries, per-seat views."""

from __future__ import annotations

import cProfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from aio_harness import serve, stop_all
from bigtwo.engine import Deal, DealCode, Move, Ruleset, deal_from_code, preset
from bigtwo.service import tokens
from bigtwo.service.core import CallInfo
from bigtwo.service.errors import InvalidArgument
from bigtwo.service.limits import LIMITS
from bigtwo.service.servicer import Hosting, ServiceCore
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.rpc import error_details_pb2, status_pb2
from service_support import CODE, KEY_A, KEY_B

SERVICE = api.DESCRIPTOR.services_by_name["BigTwoService"]
CLASSIC = pb.Ruleset(preset="classic")


def make_core(*keys: str) -> ServiceCore:
    return ServiceCore(TokenCodec(KeyRing([k.encode() for k in (keys or (KEY_A,))])))


@pytest.fixture(autouse=True)
def _servers_stopped() -> Iterator[None]:
    """Every in-process server a test started is stopped after it."""
    yield
    stop_all()


@pytest.fixture
def server() -> Any:
    return serve(Hosting(make_core(), log_calls=False))


class Result:
    def __init__(self, response: Any, trailing: Any, code: grpc.StatusCode, message: str) -> None:
        self.response, self.code, self.message = response, code, message
        self.fields: list[str] = []
        self.reason = ""
        for key, value in trailing or ():
            if key == "grpc-status-details-bin":
                status = status_pb2.Status.FromString(value)
                for detail in status.details:
                    if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                        request = error_details_pb2.BadRequest()
                        detail.Unpack(request)
                        self.fields += [v.field for v in request.field_violations]
                    elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                        info = error_details_pb2.ErrorInfo()
                        detail.Unpack(info)
                        self.reason = info.reason


def call(server: Any, name: str, request: Any) -> Result:
    rpc = server.invoke_unary_unary(SERVICE.methods_by_name[name], (), request, None)
    response, trailing, code, message = rpc.termination()
    return Result(response, trailing, code, message)


def ok(server: Any, name: str, request: Any) -> Any:
    result = call(server, name, request)
    assert result.code is grpc.StatusCode.OK, (result.code, result.message)
    return result.response


def new_deal(server: Any, **kwargs: Any) -> api.DealResponse:
    return ok(server, "Deal", api.DealRequest(ruleset=CLASSIC, deal_code=CODE, **kwargs))


def token_game(token: bytes) -> pb.Game:
    return pb.Game(state_token=token)


def engine_deal(code: str = CODE, rules: Ruleset | None = None) -> Deal:
    rules = rules or preset("classic")
    return Deal.start(rules, deal_from_code(DealCode.parse(code), rules))


# -- rules in words ------------------------------------------------------------------------------


def test_list_presets_and_describe(server: Any) -> None:
    presets = ok(server, "ListPresets", api.ListPresetsRequest()).presets
    assert [p.name for p in presets] == ["classic", "web", "hong-kong", "hong-kong-strict", "taiwan", "pusoy-dos"]
    assert all(p.description and p.fingerprint for p in presets)
    reply = ok(
        server,
        "DescribeRuleset",
        api.DescribeRulesetRequest(ruleset=pb.Ruleset(preset="hong-kong", options={"players": "3"})),
    )
    assert reply.fingerprint == Ruleset.from_mapping({"preset": "hong-kong", "players": 3}).fingerprint
    assert reply.overrides["players"] == "3"
    assert any("Dragon" in line for line in reply.description)


def test_bad_ruleset_names_the_option(server: Any) -> None:
    result = call(
        server, "DescribeRuleset", api.DescribeRulesetRequest(ruleset=pb.Ruleset(options={"flush": "purple"}))
    )
    assert result.code is grpc.StatusCode.INVALID_ARGUMENT
    assert result.fields == ['ruleset.options["flush"]']
    assert "valid values" in result.message
    result = call(server, "DescribeRuleset", api.DescribeRulesetRequest(ruleset=pb.Ruleset(preset="nope")))
    assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == ["ruleset.preset"]


# -- dealing and views ---------------------------------------------------------------------------


def test_deal_from_code_shows_only_the_viewing_seat(server: Any) -> None:
    reply = new_deal(server, view_seat=2)
    engine = engine_deal()
    # An answer for one seat names the deal opaquely: no deal code while the deal is in play.
    assert reply.deal_code == "" and reply.table.deal_code == ""
    assert reply.table.deal_id.startswith("d-") and CODE not in reply.table.deal_id
    assert reply.view.seat == 2 and reply.view.hand.mask == engine.hands[2]
    started = reply.events[0].deal_started
    assert [h.mask for h in started.hands] == [0, 0, engine.hands[2], 0]
    assert list(started.hand_sizes) == [13, 13, 13, 13]
    shown = {text for card_set in (reply.view.hand, *started.hands) for text in card_set.text.split()}
    for seat in (0, 1, 3):  # no other seat's card appears anywhere
        assert not shown & {str(card) for card in engine.hand(seat)}
    hidden = new_deal(server)
    assert all(h.mask == 0 for h in hidden.events[0].deal_started.hands)
    assert hidden.deal_code == CODE, "the table host (no view_seat) gets the deal code"
    assert hidden.table.deal_id == reply.table.deal_id and hidden.table.deal_code == ""


def test_fresh_and_explicit_deals(server: Any) -> None:
    first = ok(server, "Deal", api.DealRequest(ruleset=CLASSIC))
    second = ok(server, "Deal", api.DealRequest(ruleset=CLASSIC))
    assert first.deal_code != second.deal_code
    DealCode.parse(first.deal_code)
    hands = ["3D 4D 5D", "3C 4C 5C", "3H 4H 5H", "3S 4S 5S"]
    explicit = ok(server, "Deal", api.DealRequest(ruleset=CLASSIC, explicit_deal=pb.ExplicitDeal(hands=hands)))
    assert explicit.deal_code == "" and explicit.table.deal_id.startswith("d-")
    assert explicit.table.opening_card == "3D" and explicit.table.to_act == 0
    shared = call(
        server, "Deal", api.DealRequest(ruleset=CLASSIC, explicit_deal=pb.ExplicitDeal(hands=["3D", "3D", "4D", "5D"]))
    )
    assert shared.code is grpc.StatusCode.INVALID_ARGUMENT and shared.fields == ["explicit_deal.hands"]
    bad_code = call(server, "Deal", api.DealRequest(ruleset=CLASSIC, deal_code="0000003NQK8N2"))
    assert bad_code.code is grpc.StatusCode.INVALID_ARGUMENT and bad_code.fields == ["deal_code"]


# -- moves ---------------------------------------------------------------------------------------


def apply(server: Any, token: bytes, index: int, seat: int, text: str, **kwargs: Any) -> Result:
    move = pb.Move(index=index, seat=seat, text=text)
    return call(server, "ApplyMove", api.ApplyMoveRequest(game=token_game(token), move=move, **kwargs))


def test_refusal_is_an_ok_answer_with_reason_and_sentence(server: Any) -> None:
    reply = new_deal(server)
    seat = reply.table.to_act
    result = apply(server, reply.state_token, 0, seat, "pass")
    assert result.code is grpc.StatusCode.OK
    outcome = result.response.outcome
    assert not outcome.accepted and outcome.refusal.reason == pb.REASON_CANNOT_PASS_LEADING
    assert outcome.refusal.reason_id == "cannot-pass-leading" and outcome.refusal.message == "You lead: play any hand"
    assert result.response.table.moves_made == 0
    other = apply(server, reply.state_token, 0, (seat + 1) % 4, "3D").response.outcome
    assert other.refusal.reason == pb.REASON_NOT_YOUR_TURN
    bad = apply(server, reply.state_token, 0, seat, "ZZ").response.outcome
    assert bad.refusal.reason == pb.REASON_BAD_CARD
    missing = apply(server, reply.state_token, 0, seat, "4D 5D 6D").response.outcome  # a non-combination / not held
    assert not missing.accepted


def test_whole_deal_by_token_matches_the_engine(server: Any) -> None:
    reply = new_deal(server)
    engine = engine_deal()
    token = reply.state_token
    sizes = set()
    while not engine.over:
        move = engine.legal_moves()[0]
        result = apply(server, token, engine.moves_made, move.seat, str(move))
        assert result.code is grpc.StatusCode.OK and result.response.outcome.accepted
        engine.do(move)
        table = result.response.table
        assert table.moves_made == engine.moves_made and table.to_act == engine.to_act
        assert list(table.cards_left) == list(engine.cards_left())
        token = result.response.state_token
        sizes.add(len(token))
    assert table.over and list(table.scores) == list(engine.scores)
    assert any(e.HasField("deal_ended") for e in result.response.events)
    # The state is fixed in size; the public history grows by a byte a move and a byte a card played.
    assert max(sizes) - min(sizes) <= tokens.MAX_HISTORY_BYTES and max(sizes) <= LIMITS.token_bytes
    over = apply(server, token, engine.moves_made, 0, "3D").response.outcome
    assert over.refusal.reason == pb.REASON_GAME_OVER


def test_retry_is_answered_identically_and_never_applied_twice(server: Any) -> None:
    reply = new_deal(server)
    seat = reply.table.to_act
    first = apply(server, reply.state_token, 0, seat, "3D")
    assert first.response.outcome.accepted
    # the answer was lost: the client retries from the old token -> the same bytes
    again = apply(server, reply.state_token, 0, seat, "3D")
    assert again.response.SerializeToString() == first.response.SerializeToString()
    # the client already holds the new token and resends move 0 -> the same answer, nothing applied
    resent = apply(server, first.response.state_token, 0, seat, "3D")
    assert resent.code is grpc.StatusCode.OK
    assert resent.response.SerializeToString() == first.response.SerializeToString()
    assert resent.response.table.moves_made == 1
    # a different move under an index already used is a conflict
    conflict = apply(server, first.response.state_token, 0, seat, "3D 3S")
    assert conflict.code is grpc.StatusCode.FAILED_PRECONDITION and conflict.reason == "MOVE_ALREADY_MADE"
    ahead = apply(server, first.response.state_token, 5, (seat + 1) % 4, "pass")
    assert ahead.code is grpc.StatusCode.FAILED_PRECONDITION and ahead.reason == "WRONG_MOVE_INDEX"
    missing = call(
        server,
        "ApplyMove",
        api.ApplyMoveRequest(game=token_game(reply.state_token), move=pb.Move(seat=seat, text="3D")),
    )
    assert missing.code is grpc.StatusCode.INVALID_ARGUMENT and missing.fields == ["move.index"]


def test_retry_against_a_log(server: Any) -> None:
    reply = new_deal(server)
    seat = reply.table.to_act
    first = apply(server, reply.state_token, 0, seat, "3D").response
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["3D"])
    request = api.ApplyMoveRequest(game=pb.Game(log=log), move=pb.Move(index=0, seat=seat, text="3D"))
    resent = ok(server, "ApplyMove", request)
    assert ok(server, "ApplyMove", request).SerializeToString() == resent.SerializeToString(), "a log's retry"
    # The same answer but its token: a dealt table's tokens carry the seal Deal drew for it (its own
    # randomness, issue 33), which a log does not hold.
    assert resent.state_token and resent.state_token != first.state_token
    resent.ClearField("state_token")
    first.ClearField("state_token")
    assert resent.SerializeToString() == first.SerializeToString()


def test_log_and_token_agree(server: Any) -> None:
    engine = engine_deal()
    texts = []
    for _ in range(9):
        move = engine.legal_moves()[-1]
        texts.append(str(move))
        engine.do(move)
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=texts)
    replay = ok(server, "ReplayLog", api.ReplayLogRequest(log=log))
    assert replay.moves_applied == 9 and not replay.refused
    via_log = ok(server, "LegalMoves", api.LegalMovesRequest(game=pb.Game(log=log)))
    via_token = ok(server, "LegalMoves", api.LegalMovesRequest(game=token_game(replay.state_token)))
    assert via_log == via_token and via_log.seat == engine.to_act
    assert len(via_log.plays) == len(engine.legal_plays())


def test_log_errors_name_the_move(server: Any) -> None:
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["pass"])
    result = call(server, "LegalMoves", api.LegalMovesRequest(game=pb.Game(log=log)))
    assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == ["game.log.moves[0]"]
    assert "cannot-pass-leading" in result.message
    long_log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["pass"] * 5000)
    assert call(server, "LegalMoves", api.LegalMovesRequest(game=pb.Game(log=long_log))).code is (
        grpc.StatusCode.RESOURCE_EXHAUSTED
    )
    no_cards = pb.GameLog(ruleset=CLASSIC)
    result = call(server, "LegalMoves", api.LegalMovesRequest(game=pb.Game(log=no_cards)))
    assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == ["game.log.deal_code"]
    assert call(server, "LegalMoves", api.LegalMovesRequest()).code is grpc.StatusCode.INVALID_ARGUMENT


# -- tokens --------------------------------------------------------------------------------------


def test_tampered_foreign_and_rotated_tokens(server: Any) -> None:
    token = new_deal(server).state_token
    for position in (0, 3, 10, len(token) // 2, len(token) - 1):
        altered = bytearray(token)
        altered[position] ^= 0x01
        result = apply(server, bytes(altered), 0, 0, "3D")
        assert result.code is grpc.StatusCode.INVALID_ARGUMENT, position
        assert result.fields == ["game.state_token"] and result.reason.startswith("TOKEN_")
    for junk in (b"", b"x", b"\0" * 5000):
        assert apply(server, junk, 0, 0, "3D").code is grpc.StatusCode.INVALID_ARGUMENT
    foreign = make_core(KEY_B).deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE), CallInfo()).state_token
    result = apply(server, foreign, 0, 0, "3D")
    assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.reason == "TOKEN_UNKNOWN_KEY"
    # rotation: B signs, A still verifies; tokens B issues verify on a ring that holds B
    rotated = make_core(KEY_B, KEY_A)
    seat = engine_deal().to_act
    answer = rotated.apply_move(
        api.ApplyMoveRequest(game=token_game(token), move=pb.Move(index=0, seat=seat, text="3D")), CallInfo()
    )
    assert answer.outcome.accepted
    assert apply(server, answer.state_token, 1, (seat + 1) % 4, "pass").reason == "TOKEN_UNKNOWN_KEY"
    assert make_core(KEY_B).codec.decode(answer.state_token).state.moves_made == 1


def test_token_cost_does_not_grow(server: Any) -> None:
    core = make_core()
    engine = engine_deal()
    token = core.deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE), CallInfo()).state_token
    requests = {}
    while not engine.over and engine.moves_made < 40:
        move = engine.legal_moves()[-1]
        request = api.ApplyMoveRequest(
            game=token_game(token), move=pb.Move(index=engine.moves_made, seat=move.seat, text=str(move))
        )
        requests[engine.moves_made] = request
        token = core.apply_move(request, CallInfo()).state_token
        engine.do(move)

    def cost(request: api.ApplyMoveRequest) -> int:
        """Python calls made to answer once (a count, the same on any machine, under any load;
        the time per move is `make bench`'s)."""
        core.apply_move(request, CallInfo())  # warm: caches filled as in a long-running server
        profile = cProfile.Profile()
        profile.runcall(core.apply_move, request, CallInfo())
        return sum(int(row.callcount) for row in profile.getstats())

    # The deal's last move also settles it; the move before it is the latest plain one.
    early, late = cost(requests[3]), cost(requests[max(requests) - 1])
    assert late <= early + early // 5, (early, late)


def test_issued_tokens_answer_as_a_replica_that_verifies_them() -> None:
    """A token read from the issuing codec's memory gives the same answers, byte for byte, as the
    full verification on a replica that never saw it, retries included; altered bytes never match."""
    issuer = make_core()
    other = ServiceCore(TokenCodec(KeyRing([KEY_A.encode()]), remember=0))
    engine = engine_deal()
    token = issuer.deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE), CallInfo()).state_token
    while not engine.over and engine.moves_made < 30:
        assert issuer.codec.issued is not None and issuer.codec.issued.get(token) is not None
        move = engine.legal_moves()[0]
        request = api.ApplyMoveRequest(
            game=token_game(token), move=pb.Move(index=engine.moves_made, seat=move.seat, text=str(move))
        )
        answer = issuer.apply_move_answer(request, CallInfo())
        assert answer == other.apply_move_answer(request, CallInfo())
        token = api.ApplyMoveResponse.FromString(answer).state_token
        engine.do(move)
        # the client already holds the new token and resends the move: the same answer from both
        resent = api.ApplyMoveRequest(game=token_game(token), move=request.move)
        assert issuer.apply_move_answer(resent, CallInfo()) == other.apply_move_answer(resent, CallInfo())
        altered = bytearray(token)
        altered[len(altered) // 2] ^= 1
        with pytest.raises(InvalidArgument, match="altered"):
            issuer.codec.decode(bytes(altered))


def test_issued_tokens_are_forgotten_after_two_generations() -> None:
    codec = TokenCodec(KeyRing([KEY_A.encode()]), remember=2)
    core = ServiceCore(codec)
    tokens = [
        core.deal(api.DealRequest(ruleset=CLASSIC, deal_code=str(DealCode(seed))), CallInfo()).state_token
        for seed in range(1, 6)
    ]
    assert codec.issued is not None
    assert [codec.issued.get(token) is not None for token in tokens] == [False, False, True, True, True]
    # forgotten is not refused: the full verification still reads it
    assert codec.decode(tokens[0]).state.moves_made == 0


# -- helpers for a front end ---------------------------------------------------------------------


def test_hints_timeout_split_name_score_settle(server: Any) -> None:
    reply = new_deal(server)
    game = token_game(reply.state_token)
    hint = ok(server, "NextHint", api.NextHintRequest(game=game))
    assert hint.cycle_length > 0 and "3D" in hint.play.cards.text
    following = ok(server, "NextHint", api.NextHintRequest(game=game, after=hint.play.cards.text))
    assert following.play.cards.text != hint.play.cards.text or hint.cycle_length == 1
    timed_out = ok(server, "TimeoutMove", api.TimeoutMoveRequest(game=game)).move
    assert timed_out.text == "3D" and timed_out.index == 0 and timed_out.seat == reply.table.to_act
    split = ok(server, "SplitHand", api.SplitHandRequest(ruleset=CLASSIC, hand="3D 3S 4H 5C 6D 7S 9H 9C 9S KD KH"))
    assert sum(len(p.cards.text.split()) for p in split.plays) == 11
    assert {p.kind for p in split.plays} == {pb.KIND_STRAIGHT, pb.KIND_FULL_HOUSE, pb.KIND_SINGLE}
    assert len(split.plays) == 3
    named = ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="9S 9D"))
    assert named.name and named.kind == pb.KIND_PAIR and named.playable
    beaten = ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="9S 9D", table="KS KD"))
    assert not beaten.playable and beaten.refusal.reason == pb.REASON_DOES_NOT_BEAT
    readout = ok(server, "NameCards", api.NameCardsRequest(game=game, seat=reply.table.to_act, cards="3D"))
    assert readout.playable and "ending now" in readout.ending_now
    counts = api.CardCounts(ruleset=CLASSIC, cards_left=[0, 3, 10, 13])
    assert list(ok(server, "ScoreDeal", api.ScoreDealRequest(counts=counts)).scores) == [0, 3, 20, 39]
    not_over = call(server, "ScoreDeal", api.ScoreDealRequest(game=game))
    assert not_over.code is grpc.StatusCode.FAILED_PRECONDITION
    deals = [pb.DealResult(winner=0, scores=[0, 3, 20, 39]), pb.DealResult(winner=1, scores=[5, 0, 1, 2])]
    match = ok(server, "SettleMatch", api.SettleMatchRequest(ruleset=CLASSIC, deals=deals))
    assert list(match.totals) == [5, 3, 21, 41] and list(match.winners) == [1] and not match.over
    assert match.next_context.deal_number == 3 and match.next_context.previous_winner == 1


def test_replay_log_stops_at_the_first_refusal(server: Any) -> None:
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["3D", "pass", "2S 2H"])
    reply = ok(server, "ReplayLog", api.ReplayLogRequest(log=log, view_seat=1))
    assert reply.refused and reply.refused_at in (1, 2) and reply.moves_applied == reply.refused_at
    started = reply.events[0].deal_started
    assert sum(1 for h in started.hands if h.mask) == 1 and started.hands[1].mask


# -- streams -------------------------------------------------------------------------------------


def test_stream_open_moves_and_events(server: Any) -> None:
    rpc = server.invoke_stream_stream(SERVICE.methods_by_name["PlayStream"], (), None)
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
    rpc.send_request(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log), view_seat=0)))
    opened = rpc.take_response().opened
    assert opened.deal_code == "" and opened.view.seat == 0 and opened.state_token
    engine = engine_deal()
    for _ in range(6):
        move = engine.legal_moves()[0]
        request = api.StreamMove(move=pb.Move(index=engine.moves_made, seat=move.seat, text=str(move)))
        rpc.send_request(api.PlayStreamRequest(move=request))
        result = rpc.take_response().move_result
        engine.do(move)
        assert result.outcome.accepted and result.table.moves_made == engine.moves_made
        assert result.view.hand.mask == engine.hands[0] and not result.state_token
    # the last move resent with its index: the same answer again, nothing applied twice
    rpc.send_request(api.PlayStreamRequest(move=request))
    again = rpc.take_response().move_result
    assert again == result and again.table.moves_made == engine.moves_made
    rpc.send_request(
        api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=engine.moves_made, seat=9, text="3D")))
    )
    rpc.requests_closed()
    _, code, _ = rpc.termination()
    assert code is grpc.StatusCode.INVALID_ARGUMENT


# -- one place for errors ------------------------------------------------------------------------


def test_undecodable_and_bugs_never_leak() -> None:
    class BrokenCore(ServiceCore):
        def list_presets(self, request: api.ListPresetsRequest, info: CallInfo) -> api.ListPresetsResponse:
            raise KeyError("a bug")

    server = serve(Hosting(BrokenCore(TokenCodec(KeyRing([KEY_A.encode()]))), log_calls=False))
    garbage = call(server, "ApplyMove", b"\xff\xff\xff")
    assert garbage.code is grpc.StatusCode.INVALID_ARGUMENT and garbage.reason == "UNDECODABLE", garbage.message
    bug = call(server, "ListPresets", api.ListPresetsRequest())
    assert bug.code is grpc.StatusCode.INTERNAL and "a bug" not in bug.message


def test_move_parse_helpers_agree_with_engine() -> None:
    assert str(Move.parse(0, "3d 3s")) == "3D 3S"


# -- BotMove -------------------------------------------------------------------------------------

BOT_PRESETS = [
    pb.Ruleset(preset="classic"),
    pb.Ruleset(preset="hong-kong"),
    pb.Ruleset(preset="taiwan"),
    pb.Ruleset(preset="pusoy-dos"),
    pb.Ruleset(preset="web", options={"players": "3"}),
    pb.Ruleset(preset="classic", options={"players": "2"}),
]
LEVELS = ("random", "beginner", "good", "great", "pro")


def bot_request(game: pb.Game, level: str, seed: int = 7, **kwargs: Any) -> api.BotMoveRequest:
    if level == "pro":
        kwargs.setdefault("simulations", 24)  # a small search keeps the test fast
    return api.BotMoveRequest(game=game, level=level, seed=seed, **kwargs)


def play_some(server: Any, rules: pb.Ruleset, moves: int, level: str = "good") -> tuple[pb.Game, int]:
    """A game ``moves`` moves in (chosen by a bot over the RPC), as its token; and its moves_made."""
    reply = ok(server, "Deal", api.DealRequest(ruleset=rules, deal_code=CODE))
    token, table = reply.state_token, reply.table
    for number in range(moves):
        if table.over:
            break
        chosen = ok(server, "BotMove", api.BotMoveRequest(game=token_game(token), level=level, seed=number)).move
        applied = ok(server, "ApplyMove", api.ApplyMoveRequest(game=token_game(token), move=chosen))
        assert applied.outcome.accepted, (chosen, applied.outcome)
        token, table = applied.state_token, applied.table
    return token_game(token), table.moves_made


@pytest.mark.parametrize("rules", BOT_PRESETS, ids=lambda r: f"{r.preset}{dict(r.options)}")
def test_every_bot_level_plays_an_accepted_move_under_presets(server: Any, rules: pb.Ruleset) -> None:
    for moves in (0, 5):
        game, made = play_some(server, rules, moves)
        table = ok(server, "LegalMoves", api.LegalMovesRequest(game=game))
        for level in LEVELS:
            reply = ok(server, "BotMove", bot_request(game, level))
            assert reply.level == level
            assert reply.move.index == made and reply.move.seat == table.seat
            judged = ok(server, "ValidateMove", api.ValidateMoveRequest(game=game, move=reply.move)).outcome
            assert judged.accepted, (level, reply.move, judged.refusal)
            assert reply.name == ("" if judged.is_pass else judged.play.name)


def test_bot_move_is_deterministic_for_a_seed_and_validates_its_input(server: Any) -> None:
    game, _ = play_some(server, CLASSIC, 3)
    for level in LEVELS:
        first = ok(server, "BotMove", bot_request(game, level, seed=11))
        assert ok(server, "BotMove", bot_request(game, level, seed=11)) == first
    seen = {ok(server, "BotMove", bot_request(game, "random", seed=seed)).move.text for seed in range(12)}
    assert len(seen) > 1, "the seed matters for the random bot"
    unknown = call(server, "BotMove", api.BotMoveRequest(game=game, level="grandmaster"))
    assert unknown.code is grpc.StatusCode.INVALID_ARGUMENT and unknown.fields == ["level"]
    assert all(level in unknown.message for level in LEVELS)
    too_big = call(server, "BotMove", api.BotMoveRequest(game=game, level="pro", simulations=10**6))
    assert too_big.code is grpc.StatusCode.INVALID_ARGUMENT and too_big.fields == ["simulations"]
    # a game given as its log: the opening move holds the opening card
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
    opening = ok(server, "BotMove", bot_request(pb.Game(log=log), "great")).move
    assert opening.index == 0 and "3D" in opening.text.split()


def engine_moves(count: int = 10_000, pick: Any = lambda deal: deal.legal_moves()[0]) -> tuple[Deal, list[str]]:
    """The classic deal of CODE after ``count`` moves chosen by ``pick`` (or to its end), and the moves."""
    engine, moves = engine_deal(), []
    while not engine.over and len(moves) < count:
        move = pick(engine)
        engine.do(move)
        moves.append(str(move))
    return engine, moves


def test_bot_move_on_a_finished_deal_is_failed_precondition(server: Any) -> None:
    _, moves = engine_moves()
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=moves)
    result = call(server, "BotMove", api.BotMoveRequest(game=pb.Game(log=log), level="good"))
    assert result.code is grpc.StatusCode.FAILED_PRECONDITION and result.reason == "DEAL_OVER"


def _permuted_hands(code: str, rules: Ruleset, moves: list[str], seed: int) -> list[str]:
    """The deal's hands with the other seats' unplayed cards reshuffled among them (counts kept):
    the seat to act after ``moves`` keeps its hand, and the public history stays the same."""
    import random

    from bigtwo.engine import mask_text

    dealt = deal_from_code(DealCode.parse(code), rules)
    deal = Deal.start(rules, dealt)
    for text in moves:
        deal.do_text(deal.to_act, text)
    me = deal.to_act
    others = [seat for seat in range(rules.players) if seat != me]
    pool = [bit for seat in others for bit in range(52) if deal.hands[seat] >> bit & 1]
    random.Random(seed).shuffle(pool)
    hands = list(dealt.hands)
    for seat in others:
        played = dealt.hands[seat] & ~deal.hands[seat]
        count = deal.hands[seat].bit_count()
        hands[seat] = played | sum(1 << bit for bit in pool[:count])
        pool = pool[count:]
    assert hands != list(dealt.hands), "the hidden cards did move"
    assert hands[me] == dealt.hands[me]
    return [mask_text(hand) for hand in hands]


def test_bot_move_does_not_depend_on_hidden_hands(server: Any) -> None:
    """Two explicit deals: the same hand for the seat to act and the same public history, the other
    seats' unplayed cards permuted among them. Every level answers the same move."""
    rules = preset("classic")
    _, moves = engine_moves(9, lambda deal: deal.legal_moves()[-1 if deal.moves_made % 3 else 0])
    original = [str(hand) for hand in deal_from_code(DealCode.parse(CODE), rules).hand_texts()]
    checked = 0
    for permutation in range(3):
        permuted = _permuted_hands(CODE, rules, moves, permutation)
        games = [
            pb.Game(log=pb.GameLog(ruleset=CLASSIC, explicit_deal=pb.ExplicitDeal(hands=hands), moves=moves))
            for hands in (original, permuted)
        ]
        tables = [ok(server, "LegalMoves", api.LegalMovesRequest(game=g)) for g in games]
        assert tables[0].seat == tables[1].seat
        public = [ok(server, "ReplayLog", api.ReplayLogRequest(log=g.log)).table for g in games]
        for table in public:
            table.ClearField("deal_id")
        assert public[0] == public[1], "same public history"
        for level in LEVELS:
            for seed in (1, 2):
                answers = [ok(server, "BotMove", bot_request(g, level, seed=seed)).move for g in games]
                assert answers[0] == answers[1], (level, seed, permutation)
                checked += 1
    assert checked == 3 * len(LEVELS) * 2


def test_timeout_move_with_a_bot_level_is_that_bots_move(server: Any) -> None:
    import random

    from bigtwo.engine import observe
    from bigtwo.engine.bots import bot_for

    game, _ = play_some(server, CLASSIC, 4)
    hk_rule = ok(server, "TimeoutMove", api.TimeoutMoveRequest(game=game)).move
    for level in LEVELS:
        move = ok(server, "TimeoutMove", api.TimeoutMoveRequest(game=game, bot_level=level)).move
        judged = ok(server, "ValidateMove", api.ValidateMoveRequest(game=game, move=move)).outcome
        assert judged.accepted and move.index == hk_rule.index and move.seat == hk_rule.seat
    # exactly the engine bot's move with seed 0, on the seat's own observation
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["3D", "pass", "pass"])
    engine = engine_deal()
    for text in log.moves:
        engine.do_text(engine.to_act, text)
    for level in ("good", "great"):
        expected = bot_for(level).choose(observe(engine, engine.to_act), engine.ruleset, random.Random(0))
        move = ok(server, "TimeoutMove", api.TimeoutMoveRequest(game=pb.Game(log=log), bot_level=level)).move
        assert (move.seat, move.text) == (expected.seat, str(expected))
    bad = call(server, "TimeoutMove", api.TimeoutMoveRequest(game=game, bot_level="expert"))
    assert bad.code is grpc.StatusCode.INVALID_ARGUMENT and bad.fields == ["bot_level"]


def test_bot_moves_are_counted() -> None:
    from prometheus_client import REGISTRY

    hosting = Hosting(make_core(), log_calls=False)
    server = serve(hosting)

    def count() -> float:
        return REGISTRY.get_sample_value("bigtwo_bot_moves_total", {"method": "BotMove", "level": "great"}) or 0.0

    before = count()
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
    ok(server, "BotMove", api.BotMoveRequest(game=pb.Game(log=log), level="great"))
    assert count() == before + 1


# -- NameCards: bad and repeated cards are answers -----------------------------------------------


def test_name_cards_bad_and_repeated_cards_are_refusals_with_ok_status(server: Any) -> None:
    repeated = ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="3D 3D"))
    assert not repeated.playable and repeated.refusal.reason_id == "not-in-hand"
    bad = ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="3X", table="KS"))
    assert not bad.playable and bad.refusal.reason_id == "bad-card"
    # ruleset order: bad-card / not-in-hand, then wrong-size, own reason, does-not-beat
    assert (
        ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="3D 3D 4D", table="KS")).refusal.reason_id
        == "not-in-hand"
    )
    assert (
        ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="3D 4D", table="KS")).refusal.reason_id
        == "wrong-size"
    )
    assert (
        ok(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="3D 4D")).refusal.reason_id
        == "not-a-combination"
    )
    # a game: RULES.md's order for the seat (not-your-turn before bad-card / not-in-hand)
    game = pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE))
    engine = engine_deal()
    to_act, other = engine.to_act, (engine.to_act + 1) % 4
    own = [str(card) for card in engine.hand(to_act)]
    assert (
        ok(server, "NameCards", api.NameCardsRequest(game=game, seat=other, cards="3X")).refusal.reason_id
        == "not-your-turn"
    )
    twice = ok(server, "NameCards", api.NameCardsRequest(game=game, seat=to_act, cards=f"{own[0]} {own[0]}"))
    assert twice.refusal.reason_id == "not-in-hand" and "ending now" in twice.ending_now
    assert (
        ok(server, "NameCards", api.NameCardsRequest(game=game, seat=to_act, cards="3X")).refusal.reason_id
        == "bad-card"
    )
    # card text that is an input field, not a move, is still INVALID_ARGUMENT on its field
    table = call(server, "NameCards", api.NameCardsRequest(ruleset=CLASSIC, cards="3D", table="KS KS"))
    assert table.code is grpc.StatusCode.INVALID_ARGUMENT and table.fields == ["table"]
    position = api.LegalMovesRequest(position=api.HandPosition(ruleset=CLASSIC, hand="3D 3D 4C"))
    hand = call(server, "LegalMoves", position)
    assert hand.code is grpc.StatusCode.INVALID_ARGUMENT and hand.fields == ["position.hand"]
    split = call(server, "SplitHand", api.SplitHandRequest(ruleset=CLASSIC, hand="5H 5H"))
    assert split.code is grpc.StatusCode.INVALID_ARGUMENT and split.fields == ["hand"]


# -- AuditLog ------------------------------------------------------------------------------------

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture
def golden_server() -> Any:
    """A service whose signing key is the one the golden files were signed with."""
    key = (GOLDEN / "test-signing-key").read_text().strip()
    return serve(Hosting(make_core(key), log_calls=False))


def audit(server: Any, **kwargs: Any) -> api.AuditLogResponse:
    return ok(server, "AuditLog", api.AuditLogRequest(**kwargs))


def test_audit_golden_files_are_valid(golden_server: Any) -> None:
    for path in sorted(GOLDEN.glob("*.toml")):
        text = path.read_text()
        signed = "signature = " in text
        reply = audit(golden_server, replay_toml=text, require_signature=signed)
        assert reply.kind == api.VERDICT_KIND_VALID, (path.name, reply.problems)
        assert reply.signature == ("valid" if signed else "unsigned")
        assert reply.deals_checked >= 1 and reply.actions_checked > 0 and not reply.problems
        assert any(event.HasField("deal_started") for event in reply.events)
        assert not reply.steps, "steps only when asked"
    match = audit(golden_server, replay_toml=(GOLDEN / "match-4-deals.toml").read_text())
    assert match.deals_checked == 4 and len(match.totals) == 4 and any(match.totals)


def test_audit_tampered_files_get_the_right_verdict(golden_server: Any, server: Any) -> None:
    text = (GOLDEN / "match-4-deals.toml").read_text()
    illegal = audit(golden_server, replay_toml=text.replace('"p2 pass"', '"p2 2S"', 1))
    assert illegal.kind == api.VERDICT_KIND_ILLEGAL_MOVE
    first = illegal.problems[0]
    assert first.kind == api.VERDICT_KIND_ILLEGAL_MOVE and first.reason_id == "not-in-hand"
    assert first.deal_number == 1 and first.HasField("action_index") and first.HasField("move_index")
    assert first.line > 0
    forged = text.replace('signature = "hmac-sha256:1', 'signature = "hmac-sha256:2')
    bad = audit(golden_server, replay_toml=forged)
    assert bad.kind == api.VERDICT_KIND_BAD_SIGNATURE and bad.signature == "bad"
    foreign = audit(server, replay_toml=text)  # signed with another key than this service's
    assert foreign.kind == api.VERDICT_KIND_BAD_SIGNATURE and foreign.signature == "bad"
    unsigned = (GOLDEN / "classic-4p.toml").read_text()
    required = audit(golden_server, replay_toml=unsigned, require_signature=True)
    assert required.kind == api.VERDICT_KIND_BAD_SIGNATURE and required.signature == "unsigned"
    broken = audit(golden_server, replay_toml="[format\nversion = 1")
    assert broken.kind == api.VERDICT_KIND_FORMAT_ERROR and not broken.events
    assert broken.problems[0].kind == api.VERDICT_KIND_FORMAT_ERROR


def test_audit_steps_carry_no_hidden_hands(golden_server: Any) -> None:
    text = (GOLDEN / "classic-4p.toml").read_text()
    public = audit(golden_server, replay_toml=text, want_steps=True)
    assert public.kind == api.VERDICT_KIND_VALID and len(public.steps) == public.actions_checked + public.deals_checked
    assert all(not step.hand.text and not step.hand.mask for step in public.steps)
    for event in public.events:
        if event.HasField("deal_started"):
            assert all(not hand.mask for hand in event.deal_started.hands)
    first = public.steps[0]
    assert not first.HasField("actor") and not first.HasField("action_index") and first.text.startswith("deal")
    assert list(public.steps[-1].totals) == list(public.totals) and public.steps[-1].deal_over
    seat = 2
    seen = audit(golden_server, replay_toml=text, want_steps=True, view_seat=seat)
    dealt = 0
    for step in seen.steps:
        if not step.HasField("action_index"):  # a deal starts: the seat's dealt hand
            dealt = step.hand.mask
            assert dealt
        assert step.hand.mask & ~dealt == 0, "only the viewing seat's own cards"
        assert step.hand.mask.bit_count() == step.cards_left[seat]
    started = next(e.deal_started for e in seen.events if e.HasField("deal_started"))
    assert [bool(hand.mask) for hand in started.hands] == [s == seat for s in range(4)]


def test_audit_a_game_log_and_limits(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, moves = engine_moves(6)
    log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=moves)
    valid = audit(server, game_log=log)
    assert valid.kind == api.VERDICT_KIND_VALID and valid.signature == "unsigned" and valid.deals_checked == 1
    refused = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=[*moves, "pass" if engine.leading else "3D"])
    illegal = audit(server, game_log=refused)
    assert illegal.kind == api.VERDICT_KIND_ILLEGAL_MOVE and illegal.problems[0].move_index == len(moves)
    no_cards = call(
        server, "AuditLog", api.AuditLogRequest(game_log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["3X"]))
    )
    assert no_cards.code is grpc.StatusCode.INVALID_ARGUMENT and no_cards.fields == ["game_log.moves[0]"]
    bad_rules = call(
        server, "AuditLog", api.AuditLogRequest(game_log=pb.GameLog(ruleset=pb.Ruleset(preset="x"), deal_code=CODE))
    )
    assert bad_rules.code is grpc.StatusCode.INVALID_ARGUMENT and bad_rules.fields == ["game_log.ruleset.preset"]
    assert call(server, "AuditLog", api.AuditLogRequest()).code is grpc.StatusCode.INVALID_ARGUMENT
    import dataclasses

    from bigtwo.service.limits import LIMITS

    def limited(**limits: int) -> Any:
        codec = TokenCodec(KeyRing([KEY_A.encode()]))
        core = ServiceCore(codec, limits=dataclasses.replace(LIMITS, **limits))
        return serve(Hosting(core, log_calls=False))

    text = (GOLDEN / "match-4-deals.toml").read_text()
    few_steps = limited(audit_steps=100)
    steps = call(few_steps, "AuditLog", api.AuditLogRequest(replay_toml=text, want_steps=True))
    assert steps.code is grpc.StatusCode.RESOURCE_EXHAUSTED and steps.reason == "AUDIT_TOO_LARGE"
    assert audit(few_steps, replay_toml=text).deals_checked == 4, "without steps it fits"
    too_many = call(limited(audit_actions=100), "AuditLog", api.AuditLogRequest(replay_toml=text))
    assert too_many.code is grpc.StatusCode.RESOURCE_EXHAUSTED


# -- hostile values: one reason per mistake, short quotes, named fields ---------------------------


def test_a_resent_index_with_another_move_has_one_reason_on_both_paths(server: Any) -> None:
    """The same mistake (index moves_made - 1, a move other than the one made) is MOVE_ALREADY_MADE
    on ApplyMove and on a stream that sends no tokens (and so keeps no state before the move)."""
    engine = engine_deal()
    first = engine.legal_moves()[0]
    dealt = new_deal(server)
    applied = ok(
        server,
        "ApplyMove",
        api.ApplyMoveRequest(
            game=token_game(dealt.state_token), move=pb.Move(index=0, seat=first.seat, text=str(first))
        ),
    )
    engine.do(first)
    other = next(m for m in engine_deal().legal_moves() if str(m) != str(first))
    mistake = pb.Move(index=0, seat=other.seat, text=str(other))
    unary = call(server, "ApplyMove", api.ApplyMoveRequest(game=token_game(applied.state_token), move=mistake))
    assert unary.code is grpc.StatusCode.FAILED_PRECONDITION and unary.reason == "MOVE_ALREADY_MADE"
    rpc = server.invoke_stream_stream(SERVICE.methods_by_name["PlayStream"], (), None)
    rpc.send_request(
        api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE))))
    )
    rpc.take_response()
    rpc.send_request(
        api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=0, seat=first.seat, text=str(first))))
    )
    assert rpc.take_response().move_result.outcome.accepted
    rpc.send_request(api.PlayStreamRequest(move=api.StreamMove(move=mistake)))
    rpc.requests_closed()
    trailing, code, _ = rpc.termination()
    assert code is grpc.StatusCode.FAILED_PRECONDITION
    assert Result(None, trailing, code, "").reason == "MOVE_ALREADY_MADE"


def test_long_bad_values_are_quoted_short(server: Any) -> None:
    """A 20 kB bad value comes back as a short prefix: the error's trailer stays far below the
    16 KiB metadata limit of stock clients, which would otherwise report RESOURCE_EXHAUSTED."""
    huge = "x" * 20_000
    requests = [
        ("DescribeRuleset", api.DescribeRulesetRequest(ruleset=pb.Ruleset(preset=huge))),
        ("DescribeRuleset", api.DescribeRulesetRequest(ruleset=pb.Ruleset(options={huge[:60]: huge[:1000]}))),
        ("BotMove", api.BotMoveRequest(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE)), level=huge)),
        ("Deal", api.DealRequest(ruleset=CLASSIC, deal_code=huge[:60])),
        (
            "LegalMoves",
            api.LegalMovesRequest(game=pb.Game(log=pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=["pass " * 50]))),
        ),
    ]
    for name, request in requests:
        rpc = server.invoke_unary_unary(SERVICE.methods_by_name[name], (), request, None)
        _, trailing, code, message = rpc.termination()
        assert code is grpc.StatusCode.INVALID_ARGUMENT, (name, code)
        size = len(message) + sum(len(key) + len(value) for key, value in trailing or ())
        assert size < 2_000, (name, size)


def test_match_scores_out_of_range_name_their_field(server: Any) -> None:
    deal = pb.DealResult(deal_number=1, winner=0, scores=[2_000_000_000, -1, -1, -1])
    many = [pb.DealResult(deal_number=i + 1, winner=0, scores=[2_000_000, -1, -1, -1]) for i in range(3)]
    for deals, field in (([deal], "deals[0].scores[0]"), (many, "deals[0].scores[0]")):
        result = call(server, "SettleMatch", api.SettleMatchRequest(ruleset=CLASSIC, deals=deals))
        assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == [field], result.message


def test_a_hand_has_at_most_eighteen_cards(server: Any) -> None:
    every_card = " ".join(f"{rank}{suit}" for rank in "3456789TJQKA2" for suit in "DCHS")
    for name, request, field in (
        (
            "LegalMoves",
            api.LegalMovesRequest(position=api.HandPosition(ruleset=CLASSIC, hand=every_card)),
            "position.hand",
        ),
        ("SplitHand", api.SplitHandRequest(ruleset=CLASSIC, hand=every_card), "hand"),
    ):
        result = call(server, name, request)
        assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == [field], (name, result.message)
