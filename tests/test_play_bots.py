"""PlayBots and DealRequest.bot_seats in process (tests/aio_harness.py): a person plays a whole deal against
bots holding only a seat token, no answer shows another seat's cards, the bots' moves are fixed at
deal time (levels and randomness sealed in the token: the same token always gets the same moves, a
seat token cannot choose them) and are BotMove's, every refusal names its field or reason, and the
bot seats travel in the seat token's viewer byte (tokens issued before them still read)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from aio_harness import serve, stop_all
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, mask_text
from bigtwo.service import tokens
from bigtwo.service.bot_turns import bot_decision_seed
from bigtwo.service.core import CallInfo
from bigtwo.service.costs import place
from bigtwo.service.errors import InvalidArgument
from bigtwo.service.limits import LIMITS, Limits
from bigtwo.service.servicer import UNARY, Hosting, ServiceCore
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from service_support import CODE, KEY_A

SERVICE = api.DESCRIPTOR.services_by_name["BigTwoService"]
RULESETS = [
    Ruleset.from_mapping({"preset": "classic"}),
    Ruleset.from_mapping({"preset": "hong-kong", "players": "3"}),
    Ruleset.from_mapping({"preset": "taiwan", "players": "2"}),
]


def make_core() -> ServiceCore:
    return ServiceCore(TokenCodec(KeyRing([KEY_A.encode()])))


def make_server() -> Any:
    return serve(Hosting(make_core(), log_calls=False))


@pytest.fixture(autouse=True)
def _servers_stopped() -> Iterator[None]:
    """Every in-process server a test started is stopped after it."""
    yield
    stop_all()


@pytest.fixture
def server() -> Any:
    return make_server()


class Result:
    def __init__(self, response: Any, trailing: Any, code: grpc.StatusCode, message: str) -> None:
        self.response, self.code, self.message = response, code, message
        self.fields: list[str] = []
        self.reason = ""
        for key, value in trailing or ():
            if key == "grpc-status-details-bin":
                for detail in status_pb2.Status.FromString(value).details:
                    if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                        bad = error_details_pb2.BadRequest()
                        detail.Unpack(bad)
                        self.fields += [v.field for v in bad.field_violations]
                    elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                        info = error_details_pb2.ErrorInfo()
                        detail.Unpack(info)
                        self.reason = info.reason


def call(server: Any, name: str, request: Any) -> Result:
    rpc = server.invoke_unary_unary(SERVICE.methods_by_name[name], (), request, None)
    return Result(*rpc.termination())


def ok(server: Any, name: str, request: Any) -> Any:
    result = call(server, name, request)
    assert result.code is grpc.StatusCode.OK, (result.code, result.message)
    return result.response


def options(rules: Ruleset) -> pb.Ruleset:
    return pb.Ruleset(preset=rules.preset, options={"players": str(rules.players)})


def card_masks(message: Message) -> Iterator[int]:
    """Every CardSet's mask anywhere in ``message``."""
    if isinstance(message, pb.CardSet):
        yield message.mask
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for part in (value,) if isinstance(value, Message) else value:
            if isinstance(part, Message):
                yield from card_masks(part)


def assert_shows_no_other_hand(answer: Message, truth: Deal, person: int) -> None:
    """No CardSet of ``answer`` holds a card another seat still holds, and its bytes hold no other
    hand as a mask (little-endian, the varint protobuf writes) or as text."""
    hidden = 0
    for seat, hand in enumerate(truth.hands):
        if seat != person:
            hidden |= hand
    masks = list(card_masks(answer))
    view = getattr(answer, "view", None)
    if view is not None and view.seat == person and view.hand.text:
        assert view.hand.mask == truth.hands[person] and view.hand.mask in masks, "the walk sees the view's hand"
    for mask in masks:
        assert mask & hidden == 0, f"a CardSet shows {mask_text(mask & hidden)}, held by another seat"
    blob = answer.SerializeToString()
    for seat, hand in enumerate(truth.hands):
        if seat == person or hand.bit_count() < 3:
            continue
        assert hand.to_bytes(8, "little") not in blob and mask_text(hand).encode() not in blob
        assert pb.CardSet(mask=hand).SerializeToString()[1:] not in blob, "another seat's hand as a varint"


def play_against_bots(server: Any, rules: Ruleset, code: DealCode, seed: int) -> tuple[Deal, list[bytes]]:
    """A person plays a whole deal against bots holding only its seat token: PlayBots for the bots,
    ApplyMove for the person. Returns the engine's deal and every bot move's bytes, in order."""
    truth = Deal.start(rules, deal_from_code(code, rules))
    person = (truth.to_act + 1) % rules.players  # the bots open, so PlayBots acts first
    others = [seat for seat in range(rules.players) if seat != person]
    levels = ["random", "beginner", "good"]
    dealt = ok(
        server,
        "Deal",
        api.DealRequest(
            ruleset=options(rules),
            deal_code=str(code),
            view_seat=person,
            bot_seats=others,
            bot_levels=[api.SeatBotLevel(seat=seat, level=levels[n % 3]) for n, seat in enumerate(others)],
        ),
    )
    assert dealt.state_token == b"" and dealt.seat_token, "the seat token is the whole game"
    assert dealt.deal_code == "" and dealt.view.seat == person
    assert_shows_no_other_hand(dealt, truth, person)
    person_rng = random.Random(seed)
    token = dealt.seat_token
    bot_moves: list[bytes] = []
    while True:
        played = ok(server, "PlayBots", api.PlayBotsRequest(game=pb.Game(state_token=token)))
        again = ok(server, "PlayBots", api.PlayBotsRequest(game=pb.Game(state_token=token)))
        assert again == played, "the same seat token, the same bot moves"
        assert len(played.moves) <= LIMITS.play_bots_moves
        for bot in played.moves:
            assert bot.move.seat != person and bot.move.index == truth.moves_made
            truth.do_text(bot.move.seat, bot.move.text)
            bot_moves.append(bot.SerializeToString())
        assert played.state_token == b"" and played.seat_token and played.view.seat == person
        if not played.table.over:
            assert_shows_no_other_hand(played, truth, person)
        token = played.seat_token
        if truth.over:
            assert played.table.over
            break
        assert played.table.to_act == person == truth.to_act and played.view.to_act
        again = ok(server, "PlayBots", api.PlayBotsRequest(game=pb.Game(state_token=token)))
        assert not again.moves and again.table == played.table, "the person to act: no bot moves"
        move = person_rng.choice(truth.legal_moves())
        applied = ok(
            server,
            "ApplyMove",
            api.ApplyMoveRequest(
                game=pb.Game(state_token=token), move=pb.Move(index=truth.moves_made, seat=person, text=str(move))
            ),
        )
        assert applied.outcome.accepted
        truth.do(move)
        if not truth.over:
            assert_shows_no_other_hand(applied, truth, person)
        token = applied.seat_token
        if truth.over:
            break
    scored = ok(server, "ScoreDeal", api.ScoreDealRequest(game=pb.Game(state_token=token)))
    settlement = truth.settlement()
    assert settlement is not None and list(scored.scores) == list(settlement.scores)
    return truth, bot_moves


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: f"{r.preset}-{r.players}p")
def test_a_person_plays_a_whole_deal_against_bots_with_the_seat_token_only(server: Any, rules: Ruleset) -> None:
    for seed in range(3):
        truth, bot_moves = play_against_bots(server, rules, DealCode(random.Random(seed).getrandbits(60)), seed)
        assert truth.over and bot_moves


def test_the_bots_moves_are_fixed_by_the_deal_not_the_caller() -> None:
    """Each PlayBots from one token answers the same (play_against_bots asks twice at every step);
    the bots' randomness is drawn per deal, so deals of one code differ; a replica sharing the keys
    plays a token's bots the same way."""
    code = DealCode.parse(CODE)
    rules = RULESETS[0]
    plays = {tuple(play_against_bots(make_server(), rules, code, 5)[1]) for _ in range(4)}
    assert len(plays) > 1, "each deal draws its bots' randomness afresh"
    person = (Deal.start(rules, deal_from_code(code, rules)).to_act + 1) % 4
    others = [seat for seat in range(4) if seat != person]
    request = api.DealRequest(ruleset=options(rules), deal_code=CODE, view_seat=person, bot_seats=others)
    request.bot_levels.extend(api.SeatBotLevel(seat=seat, level="random") for seat in others)
    token = ok(make_server(), "Deal", request).seat_token
    game = pb.Game(state_token=token)
    answers = {ok(make_server(), "PlayBots", api.PlayBotsRequest(game=game)).SerializeToString() for _ in range(3)}
    assert len(answers) == 1, "another replica with the same keys: the same moves"


def test_each_decision_is_botmoves_with_the_documented_seed(server: Any) -> None:
    """With the host's token every listed seat is played; each move is the one BotMove chooses with
    seed ``bot_decision_seed(seed, index)`` for the game before it."""
    rules = RULESETS[0]
    dealt = ok(server, "Deal", api.DealRequest(ruleset=options(rules), deal_code=CODE))
    bots = [api.BotSeat(seat=seat, level="good", seed=1000 + seat) for seat in range(rules.players)]
    token = dealt.state_token
    over = False
    while not over:
        played = ok(server, "PlayBots", api.PlayBotsRequest(game=pb.Game(state_token=token), bots=bots))
        assert 0 < len(played.moves) <= LIMITS.play_bots_moves and not played.seat_token
        assert not played.HasField("view"), "the host's token asks for no seat's view"
        for event in played.events:
            assert not event.HasField("deal_started")
        replay = token
        for bot in played.moves[:3]:
            seed = bot_decision_seed(1000 + bot.move.seat, bot.move.index)
            chosen = ok(
                server, "BotMove", api.BotMoveRequest(game=pb.Game(state_token=replay), level="good", seed=seed)
            )
            assert chosen.move == bot.move and chosen.name == bot.name and bot.level == "good"
            applied = ok(server, "ApplyMove", api.ApplyMoveRequest(game=pb.Game(state_token=replay), move=bot.move))
            replay = applied.state_token
        token, over = played.state_token, played.table.over
    assert bot_decision_seed(1, 2) != bot_decision_seed(2, 1) and bot_decision_seed(0, 0) == bot_decision_seed(0, 0)


def test_the_host_lists_the_seats_played_and_the_call_is_counted() -> None:
    core = make_core()
    rules = RULESETS[0]
    dealt = core.deal(api.DealRequest(ruleset=options(rules), deal_code=CODE), CallInfo())
    truth = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    human = (truth.to_act + 2) % 4
    bots = [api.BotSeat(seat=seat, level="random", seed=seat) for seat in range(4) if seat != human]
    info = CallInfo()
    played = core.play_bots(api.PlayBotsRequest(game=pb.Game(state_token=dealt.state_token), bots=bots), info)
    assert len(played.moves) >= 2 and played.table.to_act == human and not played.table.over
    assert info.bot_levels == ["random"] * len(played.moves)
    assert info.moves == [("accepted", "")] * len(played.moves) and info.deal_id


def test_partial_bot_seats_keep_a_host_token_and_tokens_keep_the_mask(server: Any) -> None:
    rules = RULESETS[0]
    truth = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    person, bot = (truth.to_act + 1) % 4, truth.to_act
    dealt = ok(
        server, "Deal", api.DealRequest(ruleset=options(rules), deal_code=CODE, view_seat=person, bot_seats=[bot])
    )
    assert dealt.state_token and dealt.seat_token, "other seats are the host's: it keeps its token"
    codec = TokenCodec(KeyRing([KEY_A.encode()]), remember=0)
    snap = codec.decode(dealt.seat_token)
    assert (snap.viewer, snap.bots) == (person, 1 << bot)
    played = ok(server, "PlayBots", api.PlayBotsRequest(game=pb.Game(state_token=dealt.seat_token)))
    assert [(m.move.seat, m.level) for m in played.moves] == [(bot, "good")], "an unlisted bot seat plays good"
    assert played.table.to_act == person
    assert codec.decode(played.seat_token).bots == 1 << bot
    move = pb.Move(index=1, seat=person, text="pass")
    applied = ok(server, "ApplyMove", api.ApplyMoveRequest(game=pb.Game(state_token=played.seat_token), move=move))
    assert (codec.decode(applied.seat_token).viewer, codec.decode(applied.seat_token).bots) == (person, 1 << bot)
    # The bot seat is the service's to play, never the seat token's to move.
    host_move = pb.Move(index=0, seat=bot, text=str(truth.legal_moves()[0]))
    refused = call(
        server, "ApplyMove", api.ApplyMoveRequest(game=pb.Game(state_token=dealt.seat_token), move=host_move)
    )
    assert refused.code is grpc.StatusCode.PERMISSION_DENIED and refused.reason == "TOKEN_BOUND_TO_SEAT"


def test_refusals(server: Any) -> None:
    rules = RULESETS[0]
    truth = Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))
    person = (truth.to_act + 1) % 4
    deal = api.DealRequest(ruleset=options(rules), deal_code=CODE)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"bot_seats": [1]}, "bot_seats"),
        ({"view_seat": person, "bot_seats": [person]}, "bot_seats[0]"),
        ({"view_seat": person, "bot_seats": [(person + 1) % 4, 4]}, "bot_seats[1]"),
        ({"view_seat": person, "bot_seats": [(person + 1) % 4, (person + 1) % 4]}, "bot_seats[1]"),
    ]
    for fields, path in cases:
        request = api.DealRequest()
        request.CopyFrom(deal)
        for name, value in fields.items():
            if name == "bot_seats":
                request.bot_seats.extend(value)
            else:
                setattr(request, name, value)
        result = call(server, "Deal", request)
        assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == [path], (fields, result.message)
    plain = ok(server, "Deal", api.DealRequest(ruleset=options(rules), deal_code=CODE, view_seat=person))
    no_bots = call(server, "PlayBots", api.PlayBotsRequest(game=pb.Game(state_token=plain.seat_token)))
    assert no_bots.code is grpc.StatusCode.PERMISSION_DENIED and no_bots.reason == "TOKEN_BOUND_TO_SEAT"
    assert "names no bot seats" in no_bots.message
    bot = truth.to_act
    with_bot = ok(
        server, "Deal", api.DealRequest(ruleset=options(rules), deal_code=CODE, view_seat=person, bot_seats=[bot])
    )
    game = pb.Game(state_token=with_bot.seat_token)
    # A seat token's bots play as the deal fixed them: asking for any level or seed is refused.
    for entry in (
        api.BotSeat(seat=bot, level="pro"),
        api.BotSeat(seat=bot, seed=7),
        api.BotSeat(seat=person, level="good"),
        api.BotSeat(seat=9, level="wizard"),
    ):
        fixed = call(server, "PlayBots", api.PlayBotsRequest(game=game, bots=[entry]))
        assert fixed.code is grpc.StatusCode.INVALID_ARGUMENT and fixed.reason == "BOTS_FIXED_AT_DEAL", entry
        assert fixed.fields == ["bots"], entry
    # The host's token: the levels and seeds it asks for, checked as before.
    host_game = pb.Game(state_token=with_bot.state_token)
    bad_level = call(
        server, "PlayBots", api.PlayBotsRequest(game=host_game, bots=[api.BotSeat(seat=bot, level="wizard")])
    )
    assert bad_level.code is grpc.StatusCode.INVALID_ARGUMENT and bad_level.fields == ["bots[0].level"]
    twice = [api.BotSeat(seat=bot, level="good"), api.BotSeat(seat=bot, level="pro")]
    repeated = call(server, "PlayBots", api.PlayBotsRequest(game=host_game, bots=twice))
    assert repeated.code is grpc.StatusCode.INVALID_ARGUMENT and repeated.fields == ["bots[1].seat"]
    out_of_range = call(
        server, "PlayBots", api.PlayBotsRequest(game=host_game, bots=[api.BotSeat(seat=9, level="good")])
    )
    assert out_of_range.code is grpc.StatusCode.INVALID_ARGUMENT and out_of_range.fields == ["bots[0].seat"]
    # DealRequest.bot_levels: with view_seat, for a bot seat or view_seat, once each, a known level.
    level_cases: list[tuple[dict[str, Any], list[api.SeatBotLevel], str]] = [
        ({}, [api.SeatBotLevel(seat=bot, level="good")], "bot_levels"),
        ({"view_seat": person}, [api.SeatBotLevel(seat=bot, level="good")], "bot_levels[0].seat"),
        (
            {"view_seat": person, "bot_seats": [bot]},
            [api.SeatBotLevel(seat=bot, level="wizard")],
            "bot_levels[0].level",
        ),
        (
            {"view_seat": person, "bot_seats": [bot]},
            [api.SeatBotLevel(seat=bot), api.SeatBotLevel(seat=bot, level="pro")],
            "bot_levels[1].seat",
        ),
    ]
    for fields, levels, path in level_cases:
        request = api.DealRequest(ruleset=options(rules), deal_code=CODE, bot_levels=levels, **fields)
        result = call(server, "Deal", request)
        assert result.code is grpc.StatusCode.INVALID_ARGUMENT and result.fields == [path], (fields, result.message)
    # The person to act: nothing to play, the same game back.
    host = ok(server, "Deal", api.DealRequest(ruleset=options(rules), deal_code=CODE))
    idle = ok(
        server,
        "PlayBots",
        api.PlayBotsRequest(game=pb.Game(state_token=host.state_token), bots=[api.BotSeat(seat=person, level="good")]),
    )
    assert not idle.moves and not idle.events and idle.table.to_act == truth.to_act and idle.state_token


def _viewer_offset(codec: TokenCodec, token: bytes) -> tuple[bytes, int]:
    """A token's sealed body and the offset of its viewer byte (the last byte of the identity part)."""
    body = codec.keys.open(token)
    assert body is not None
    overrides = int.from_bytes(body[9:11], "little")
    return body, 11 + overrides + 11


def test_the_viewer_byte_carries_the_bots_and_old_tokens_still_read() -> None:
    core = make_core()
    codec = TokenCodec(KeyRing([KEY_A.encode()]), remember=0)
    rules = RULESETS[1]  # three seats: masks up to 7
    old_style = core.deal(api.DealRequest(ruleset=options(rules), deal_code=CODE, view_seat=2), CallInfo())
    body, at = _viewer_offset(codec, old_style.seat_token)
    assert body[at] == 2, "a seat token without bot seats is written as before bot seats existed"
    assert (codec.decode(old_style.seat_token).viewer, codec.decode(old_style.seat_token).bots) == (2, 0)
    host_body, host_at = _viewer_offset(codec, old_style.state_token)
    assert host_body[host_at] == 0xFF and codec.decode(old_style.state_token).bots == 0
    with_bots = core.deal(
        api.DealRequest(ruleset=options(rules), deal_code=CODE, view_seat=2, bot_seats=[0, 1]), CallInfo()
    )
    body, at = _viewer_offset(codec, with_bots.seat_token)
    assert body[at] == 2 | 0b011 << tokens.VIEWER_SEAT_BITS
    forged = {
        "the seat is its own bot": 2 | 0b100 << 3,
        "a bot seat the deal has not": 2 | 0b1000 << 3,
        "a seat the deal has not": 3,
        "a seat the deal has not, with bots": 5 | 1 << 3,
    }
    for why, byte in forged.items():
        token = codec.keys.seal(body[:at] + bytes((byte,)) + body[at + 1 :])
        with pytest.raises(InvalidArgument) as caught:
            codec.decode(token)
        assert caught.value.reason == "TOKEN_MALFORMED", why
    for viewer, bots in ((-1, 1), (0, 1), (1, 8)):
        with pytest.raises(ValueError):
            tokens.check_viewer(viewer, bots, 3)
    assert tokens.viewer_byte(3, 15) == 123 and tokens.viewer_byte(-1, 0) == -1


def test_a_call_stops_at_the_move_limit_and_runs_off_the_event_loop() -> None:
    core = ServiceCore(TokenCodec(KeyRing([KEY_A.encode()])), limits=Limits(play_bots_moves=2))
    dealt = core.deal(api.DealRequest(ruleset=options(RULESETS[0]), deal_code=CODE), CallInfo())
    bots = [api.BotSeat(seat=seat, level="random", seed=seat) for seat in range(4)]
    token = dealt.state_token
    for _ in range(3):
        played = core.play_bots(api.PlayBotsRequest(game=pb.Game(state_token=token), bots=bots), CallInfo())
        assert len(played.moves) == 2 and not played.table.over, "cut at the limit, a bot still to act"
        token = played.state_token
    request = api.PlayBotsRequest(game=pb.Game(state_token=token), bots=bots)
    assert place("PlayBots", request, core, CallInfo()).fact.startswith("2 moves"), "bots only: the move limit"
    assert UNARY["PlayBots"][2] == "play_bots"
