"""A bot's move is a function of the game, never of the caller's wish (issue 33, item 1): the
replay-PlayBots attack, from outside.

A person alone with bots holds only a seat token and calls ``PlayBots``. Before, the caller chose
each bot's level and seed on every call, so replaying ``PlayBots`` from one token made the bots show
different cards each time: 120 calls in 0.6 s showed all 13 cards of at least one bot, none wrong.
Now the levels and the bots' randomness are sealed in the token when the deal is made. The attacker
here is a client with only the proto and a channel to a real ``bigtwo serve`` on 127.0.0.1: asking
for a level or a seed from the seat token is refused (``BOTS_FIXED_AT_DEAL``), and 120 plain calls
from the token answer byte for byte the same, so the bots show no card more than one call shows.

Under ``--token-ledger`` (a real ``redis-server``) the same replay is a retry and answers the same;
a TimeoutMove settles the turn (another move from that token is ``TOKEN_SPENT``); a move made on a
stream spends its state's token, so a token a retry gives back cannot fork what the stream plays;
and two tables dealt from one deal code have tokens of their own, so neither spends the other's.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code
from bigtwo.engine.bots import LEVELS
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from redis_support import REDIS_SERVER, RedisServer
from service_support import ServerProcess, details

SERVICE = "/bigtwo.v1.BigTwoService/"
ATTACK_CALLS = 120
RULES = Ruleset.from_mapping({"preset": "classic"})
CODE = DealCode(random.Random(33).getrandbits(60))
OPEN_CODE = DealCode(32)
"""An opening with nine legal plays (tests/test_token_ledger.py): two to fork between."""
ANSWERS = {
    "Deal": api.DealResponse,
    "PlayBots": api.PlayBotsResponse,
    "BotMove": api.BotMoveResponse,
    "TimeoutMove": api.TimeoutMoveResponse,
    "ApplyMove": api.ApplyMoveResponse,
}


class Client:
    """Knows the proto and a target, nothing else."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.insecure_channel(target)
        self.calls: dict[str, Callable[..., Any]] = {
            name: self.channel.unary_unary(
                SERVICE + name,
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=kind.FromString,
            )
            for name, kind in ANSWERS.items()
        }
        self.stream = self.channel.stream_stream(
            SERVICE + "PlayStream",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=api.PlayStreamResponse.FromString,
        )

    def __call__(self, name: str, request: Any) -> Any:
        return self.calls[name](request, timeout=30)

    def refused(self, name: str, request: Any) -> tuple[grpc.StatusCode, dict[str, Any]]:
        with pytest.raises(grpc.RpcError) as caught:
            self(name, request)
        return caught.value.code(), details(caught.value)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    server = ServerProcess(tmp_path_factory.mktemp("bots"), "--no-call-log", metrics=False)
    opened = Client(server.target)
    try:
        yield opened
    finally:
        opened.channel.close()
        server.stop()


def alone_with_bots(client: Client) -> tuple[api.DealResponse, int]:
    """A person dealt against three random-level bots (the level whose replays showed most), the
    bots to act first: the device's whole game is the seat token."""
    truth = Deal.start(RULES, deal_from_code(CODE, RULES))
    person = (truth.to_act + 1) % RULES.players
    bots = [seat for seat in range(RULES.players) if seat != person]
    request = api.DealRequest(
        ruleset=pb.Ruleset(preset=RULES.preset),
        deal_code=str(CODE),
        view_seat=person,
        bot_seats=bots,
        bot_levels=[api.SeatBotLevel(seat=seat, level="random") for seat in bots],
    )
    dealt = client("Deal", request)
    assert dealt.state_token == b"" and dealt.seat_token and dealt.deal_code == ""
    return dealt, person


def cards_shown(answer: api.PlayBotsResponse) -> set[tuple[int, str]]:
    """The (seat, card) pairs the bots' moves in an answer show."""
    return {(bot.move.seat, card) for bot in answer.moves if bot.move.text != "pass" for card in bot.move.text.split()}


def test_replaying_play_bots_from_a_seat_token_reveals_nothing_new(client: Client) -> None:
    dealt, person = alone_with_bots(client)
    game = pb.Game(state_token=dealt.seat_token)
    rng = random.Random(7)
    # The attack as it was: a level and seed of the caller's choosing for each bot, on every call.
    for _ in range(ATTACK_CALLS):
        bots = [
            api.BotSeat(seat=seat, level=rng.choice(["random", "beginner", "good"]), seed=rng.getrandbits(64))
            for seat in range(RULES.players)
            if seat != person
        ]
        code, why = client.refused("PlayBots", api.PlayBotsRequest(game=game, bots=bots))
        assert code is grpc.StatusCode.INVALID_ARGUMENT and why["reason"] == "BOTS_FIXED_AT_DEAL"
        assert why["fields"] == ["bots"]
    # The replay without asking: the same answer every time, so nothing beyond the first.
    answers = [client("PlayBots", api.PlayBotsRequest(game=game)) for _ in range(ATTACK_CALLS)]
    first = answers[0]
    assert first.moves, "the bots open"
    assert {answer.SerializeToString() for answer in answers} == {first.SerializeToString()}
    shown: set[tuple[int, str]] = set()
    for answer in answers:
        shown |= cards_shown(answer)
    assert shown == cards_shown(first) and len(shown) < 13, "no more cards than one call shows"

    # The seat's own turn: BotMove and TimeoutMove take no level, seed or budget from a seat token.
    mine = pb.Game(state_token=first.seat_token)
    assert first.table.to_act == person
    for request in (
        api.BotMoveRequest(game=mine, level="pro"),
        api.BotMoveRequest(game=mine, seed=3),
        api.BotMoveRequest(game=mine, max_ms=5),
        api.TimeoutMoveRequest(game=mine, bot_level="great"),
    ):
        name = "BotMove" if isinstance(request, api.BotMoveRequest) else "TimeoutMove"
        code, why = client.refused(name, request)
        assert code is grpc.StatusCode.INVALID_ARGUMENT and why["reason"] == "BOTS_FIXED_AT_DEAL", request
    suggestions = {client("BotMove", api.BotMoveRequest(game=mine)).SerializeToString() for _ in range(20)}
    assert len(suggestions) == 1, "the seat's own bot (level good, sealed randomness): one move"
    assert client("BotMove", api.BotMoveRequest(game=mine)).level == "good"


def test_the_levels_are_listed_by_the_service(client: Client) -> None:
    channel_call = client.channel.unary_unary(
        SERVICE + "ListPresets",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=api.ListPresetsResponse.FromString,
    )
    listed = channel_call(api.ListPresetsRequest(), timeout=30)
    names = [level.name for level in listed.bot_levels]
    assert names == list(LEVELS) and listed.default_bot_level == "good", "the engine's registry, in its order"
    assert all(level.description for level in listed.bot_levels)


# -- under the spent-token ledger ------------------------------------------------------------------


@pytest.fixture
def ledger_client(tmp_path: Path) -> Iterator[Client]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed: make redis")
    redis = RedisServer(tmp_path)
    server = None
    opened = None
    try:
        server = ServerProcess(tmp_path, "--no-call-log", "--token-ledger", redis.url, metrics=False)
        opened = Client(server.target)
        yield opened
    finally:
        if opened is not None:
            opened.channel.close()
        if server is not None:
            server.stop()
        redis.stop()


def _move(index: int, move: Any) -> pb.Move:
    return pb.Move(index=index, seat=move.seat, text=str(move))


def test_under_the_ledger_replays_retry_timeouts_settle_and_streams_spend(ledger_client: Client) -> None:
    client = ledger_client
    dealt, _person = alone_with_bots(client)
    game = pb.Game(state_token=dealt.seat_token)
    answers = {client("PlayBots", api.PlayBotsRequest(game=game)).SerializeToString() for _ in range(10)}
    assert len(answers) == 1, "a replayed PlayBots is a retry: the same answer"
    played = api.PlayBotsResponse.FromString(answers.pop())

    # TimeoutMove settles the seat's turn: only the move it gave may follow from that token.
    truth = Deal.start(RULES, deal_from_code(CODE, RULES))
    for bot in played.moves:
        truth.do_text(bot.move.seat, bot.move.text)
    mine = pb.Game(state_token=played.seat_token)
    timed_out = client("TimeoutMove", api.TimeoutMoveRequest(game=mine)).move
    other = next(move for move in truth.legal_moves() if str(move) != timed_out.text)
    code, why = client.refused("ApplyMove", api.ApplyMoveRequest(game=mine, move=_move(truth.moves_made, other)))
    assert code is grpc.StatusCode.FAILED_PRECONDITION and why["reason"] == "TOKEN_SPENT"
    assert client("ApplyMove", api.ApplyMoveRequest(game=mine, move=timed_out)).outcome.accepted

    # Two tables of one deal code: tokens of their own, so each plays its own first move.
    fresh = Deal.start(RULES, deal_from_code(OPEN_CODE, RULES))
    first, second = fresh.legal_moves()[:2]
    request = api.DealRequest(ruleset=pb.Ruleset(preset=RULES.preset), deal_code=str(OPEN_CODE))
    table_a, table_b = client("Deal", request), client("Deal", request)
    assert table_a.state_token != table_b.state_token
    for table, move in ((table_a, first), (table_b, second)):
        answer = client(
            "ApplyMove", api.ApplyMoveRequest(game=pb.Game(state_token=table.state_token), move=_move(0, move))
        )
        assert answer.outcome.accepted

    # A stream from a host's token: each move it applies spends that state's token.
    opened = pb.Game(state_token=client("Deal", request).state_token)
    after_first = fresh.clone()
    after_first.do(first)
    stream_second, fork_second = after_first.legal_moves()[:2]
    messages = [
        api.PlayStreamRequest(open=api.StreamOpen(game=opened)),
        api.PlayStreamRequest(move=api.StreamMove(move=_move(0, first))),
        api.PlayStreamRequest(move=api.StreamMove(move=_move(1, stream_second))),
    ]
    replies = list(client.stream(iter(messages), timeout=30))
    assert all(reply.move_result.outcome.accepted for reply in replies[1:])
    code, why = client.refused("ApplyMove", api.ApplyMoveRequest(game=opened, move=_move(0, second)))
    assert code is grpc.StatusCode.FAILED_PRECONDITION and why["reason"] == "TOKEN_SPENT"
    # The same first move is a retry, which hands back the next state's token; the stream spent it too.
    retried = client("ApplyMove", api.ApplyMoveRequest(game=opened, move=_move(0, first)))
    assert retried.outcome.accepted
    fork = api.ApplyMoveRequest(game=pb.Game(state_token=retried.state_token), move=_move(1, fork_second))
    code, why = client.refused("ApplyMove", fork)
    assert code is grpc.StatusCode.FAILED_PRECONDITION and why["reason"] == "TOKEN_SPENT"
