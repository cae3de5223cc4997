"""A seat learns nothing: every byte a seat's device would receive, tried against the other hands.

A real server (a subprocess on 127.0.0.1) plays deals under every preset with 2, 3 and 4 players,
dealt from codes and from explicit hands. For each seat the test keeps the raw bytes of every answer
meant for it while the deal is in play: the stream opened with ``view_seat`` and state tokens (a
browser that holds its own game), and the unary ``Deal`` and ``ApplyMove`` answers with ``view_seat``,
tokens included. Then it attacks them as that seat would, knowing the public dealing algorithm
(docs/DEALING.md):

- deal-code lookup: every run of 13 deal-code symbols in the bytes that parses as a deal code, dealt
  and compared with the seat's own hand;
- the identity in any encoding: the deal code's text, its seed in either byte order or as a varint,
  the unsalted digest of the hands (as the service once named explicit deals) in hex or raw;
- the hidden hands themselves: every other seat's hand at every point of the deal, as a mask (little-
  and big-endian, varint) and as text.

Every attempt must fail. The ground truth comes from the engine, as the table host knows it.
"""

from __future__ import annotations

import hashlib
import random
import re
import struct
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from bigtwo.engine import PRESET_NAMES, CardsPlayed, Deal, DealCode, Passed, Ruleset, deal_from_code, mask_text
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from service_support import ServerProcess

SERVICE = "/bigtwo.v1.BigTwoService/"
CODE_RUN = re.compile(rb"[0-9A-Z]{13}")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _rulesets() -> Iterator[Ruleset]:
    for preset in PRESET_NAMES:
        for players in (2, 3, 4):
            try:
                yield Ruleset.from_mapping({"preset": preset, "players": str(players)})
            except ValueError:
                continue  # a preset that does not seat this many players


def _options(rules: Ruleset) -> pb.Ruleset:
    return pb.Ruleset(preset=rules.preset, options={"players": str(rules.players)})


class Seat:
    """Everything one seat's device received while the deal was in play, as raw bytes."""

    def __init__(self) -> None:
        self.received: list[bytes] = []

    def keep(self, answer: bytes, table: pb.TableState) -> None:
        if not table.over:
            self.received.append(answer)

    def blob(self) -> bytes:
        return b"\x00".join(self.received)


class Host:
    """The table host: plays one deal through the service and hands each seat its answers."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.unary = {
            name: channel.unary_unary(SERVICE + name, request_serializer=lambda m: m.SerializeToString())
            for name in ("Deal", "ApplyMove")
        }
        self.stream = channel.stream_stream(SERVICE + "PlayStream", request_serializer=lambda m: m.SerializeToString())

    def play(self, rules: Ruleset, code: DealCode, explicit: bool, rng: random.Random) -> tuple[Deal, list[Seat]]:
        truth = Deal.start(rules, deal_from_code(code, rules))
        request = api.DealRequest(ruleset=_options(rules))
        if explicit:
            request.explicit_deal.hands.extend(mask_text(hand) for hand in truth.hands)
        else:
            request.deal_code = str(code)
        seats = [Seat() for _ in range(rules.players)]
        for seat, view in enumerate(seats):
            answer = self.unary["Deal"](api.DealRequest(view_seat=seat, **_fields(request)), timeout=30)
            view.keep(answer, api.DealResponse.FromString(answer).table)
        host = api.DealResponse.FromString(self.unary["Deal"](request, timeout=30))
        token = host.state_token
        feeds: list[list[api.PlayStreamRequest]] = [[] for _ in seats]
        for seat in range(len(seats)):
            opening = api.StreamOpen(game=pb.Game(state_token=token), view_seat=seat, state_tokens=True)
            feeds[seat].append(api.PlayStreamRequest(open=opening))
        while not truth.over:
            move = rng.choice(truth.legal_moves())
            message = pb.Move(index=truth.moves_made, seat=move.seat, text=str(move))
            for seat, view in enumerate(seats):
                answer = self.unary["ApplyMove"](
                    api.ApplyMoveRequest(game=pb.Game(state_token=token), move=message, view_seat=seat), timeout=30
                )
                view.keep(answer, api.ApplyMoveResponse.FromString(answer).table)
                feeds[seat].append(api.PlayStreamRequest(move=api.StreamMove(move=message)))
            token = api.ApplyMoveResponse.FromString(answer).state_token
            truth.do(move)
        for seat, view in enumerate(seats):
            for answer in self.stream(iter(feeds[seat]), timeout=60):
                message = api.PlayStreamResponse.FromString(answer)
                part = message.opened if message.HasField("opened") else message.move_result
                view.keep(answer, part.table)
        return truth, seats


def _fields(request: api.DealRequest) -> dict[str, Any]:
    return {field.name: value for field, value in request.ListFields()}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    server = ServerProcess(tmp_path_factory.mktemp("hidden"), "--no-call-log", metrics=False)
    channel = grpc.insecure_channel(server.target)
    try:
        yield Host(channel)
    finally:
        channel.close()
        server.stop()


@pytest.mark.parametrize("rules", list(_rulesets()), ids=lambda r: f"{r.preset}-{r.players}p")
def test_no_seat_can_recover_another_hand(host: Host, rules: Ruleset) -> None:
    rng = random.Random(f"{rules.preset}-{rules.players}")
    for explicit in (False, True):
        code = DealCode(rng.getrandbits(60))
        truth, seats = host.play(rules, code, explicit, rng)
        dealt = deal_from_code(code, rules)
        start = Deal.start(rules, dealt)
        hands_digest = hashlib.sha256(b"".join(struct.pack("<Q", hand) for hand in dealt.hands)).digest()
        identity = [
            str(code).encode(),
            struct.pack("<Q", code.seed),
            struct.pack(">Q", code.seed),
            _varint(code.seed),
            hands_digest[:8],
            hands_digest[:8].hex().encode(),
        ]
        history = _hands_through(start, truth)
        for seat, view in enumerate(seats):
            blob = view.blob()
            assert view.received, "the seat received answers while the deal was in play"
            for secret in identity:
                assert secret not in blob, (rules.preset, rules.players, explicit, seat, secret)
            for run in CODE_RUN.findall(blob):
                try:
                    found = DealCode.parse(run.decode())
                except ValueError:
                    continue
                assert deal_from_code(found, rules).hands[seat] != start.hands[seat], "a deal code that deals us"
            for other, hand in history:
                if other == seat or hand.bit_count() < 5 or hand < 1 << 28:
                    continue
                for encoding in (struct.pack("<Q", hand), struct.pack(">Q", hand), _varint(hand)):
                    assert encoding not in blob, (rules.preset, rules.players, explicit, seat, other)
                assert mask_text(hand).encode() not in blob, (rules.preset, rules.players, explicit, seat, other)


def _hands_through(start: Deal, end: Deal) -> list[tuple[int, int]]:
    """(seat, hand) for every hand every seat held at any point of the deal ``end`` played."""
    hands = list(start.hands)
    out = set(enumerate(hands))
    for event in end.events:
        if isinstance(event, CardsPlayed):
            hands[event.seat] &= ~event.mask
            out.add((event.seat, hands[event.seat]))
    return sorted(out)


def test_the_deal_code_is_shown_once_the_deal_is_over(host: Host) -> None:
    rules = Ruleset.from_mapping({"preset": "classic"})
    rng = random.Random(7)
    code = DealCode(rng.getrandbits(60))
    truth, _ = host.play(rules, code, False, rng)
    request = api.DealRequest(ruleset=_options(rules), deal_code=str(code), view_seat=1)
    dealt = api.DealResponse.FromString(host.unary["Deal"](request, timeout=30))
    assert dealt.deal_code == "" and dealt.table.deal_code == ""
    token = dealt.state_token
    replay = Deal.start(rules, deal_from_code(code, rules))
    last = None
    moves = _moves_of(truth)
    for text in moves:
        message = pb.Move(index=replay.moves_made, seat=replay.to_act, text=text)
        request_move = api.ApplyMoveRequest(game=pb.Game(state_token=token), move=message, view_seat=1)
        last = api.ApplyMoveResponse.FromString(host.unary["ApplyMove"](request_move, timeout=30))
        assert last.outcome.accepted
        token = last.state_token
        replay.do_text(replay.to_act, text)
        if not replay.over:
            assert last.table.deal_code == ""
    assert last is not None and last.table.over and last.table.deal_code == str(code)


def _moves_of(deal: Deal) -> list[str]:
    """The deal's moves as a log writes them (automatic passes are the engine's, not moves)."""
    out = []
    for event in deal.events:
        if isinstance(event, CardsPlayed):
            out.append(mask_text(event.mask))
        elif isinstance(event, Passed) and not event.automatic:
            out.append("pass")
    return out


def test_a_seat_token_acts_and_asks_for_its_seat_only(host: Host) -> None:
    """A seat-bound token is safe in the seat's device: whatever it sends with it, the service
    answers only for that seat (another seat's move, hand or turn is PERMISSION_DENIED)."""
    rules = Ruleset.from_mapping({"preset": "classic"})
    code = DealCode(random.Random(11).getrandbits(60))
    truth = Deal.start(rules, deal_from_code(code, rules))
    mine = (truth.to_act + 1) % rules.players
    server_calls = _Calls(host)
    dealt = server_calls.ok("Deal", api.DealRequest(ruleset=_options(rules), deal_code=str(code), view_seat=mine))
    seat_token = dealt.seat_token
    assert seat_token and seat_token != dealt.state_token
    seat_game = pb.Game(state_token=seat_token)
    leader = truth.to_act
    refused = [
        ("LegalMoves", api.LegalMovesRequest(game=seat_game)),
        ("NextHint", api.NextHintRequest(game=seat_game)),
        ("TimeoutMove", api.TimeoutMoveRequest(game=seat_game)),
        ("BotMove", api.BotMoveRequest(game=seat_game, level="random")),
        ("PlayBots", api.PlayBotsRequest(game=seat_game)),  # a seat token dealt without bot seats
        ("NameCards", api.NameCardsRequest(game=seat_game, seat=leader, cards="3D")),
        ("ValidateMove", api.ValidateMoveRequest(game=seat_game, move=pb.Move(seat=leader, text="3D"))),
        ("ApplyMove", api.ApplyMoveRequest(game=seat_game, move=pb.Move(index=0, seat=leader, text="3D"))),
    ]
    for name, request in refused:
        assert server_calls.code(name, request) is grpc.StatusCode.PERMISSION_DENIED, name
    own_view = api.ApplyMoveRequest(game=seat_game, move=pb.Move(index=0, seat=mine, text="pass"), view_seat=leader)
    assert server_calls.code("ApplyMove", own_view) is grpc.StatusCode.PERMISSION_DENIED, "another seat's view"
    named = server_calls.ok("NameCards", api.NameCardsRequest(game=seat_game, seat=mine, cards="3D"))
    assert named.refusal.reason_id == "not-your-turn"
    # The host plays the leader's move; the seat then acts with a token bound to it.
    opening = truth.legal_moves()[0]
    host_answer = server_calls.ok(
        "ApplyMove",
        api.ApplyMoveRequest(
            game=pb.Game(state_token=dealt.state_token),
            move=pb.Move(index=0, seat=leader, text=str(opening)),
            view_seat=mine,
        ),
    )
    truth.do(opening)
    assert truth.to_act == mine and host_answer.seat_token
    seat_game = pb.Game(state_token=host_answer.seat_token)
    legal = server_calls.ok("LegalMoves", api.LegalMovesRequest(game=seat_game))
    assert legal.seat == mine and {p.cards.mask for p in legal.plays} == {p.mask for p in truth.legal_plays()}
    reply = truth.legal_moves()[0]
    answer = server_calls.ok(
        "ApplyMove", api.ApplyMoveRequest(game=seat_game, move=pb.Move(index=1, seat=mine, text=str(reply)))
    )
    assert answer.outcome.accepted and answer.view.seat == mine, "a seat token shows its own seat by default"
    assert answer.seat_token == answer.state_token, "answers to a seat token stay bound to the seat"
    truth.do(reply)
    after = pb.Game(state_token=answer.state_token)
    assert server_calls.code("LegalMoves", api.LegalMovesRequest(game=after)) is grpc.StatusCode.PERMISSION_DENIED
    stream = host.stream(
        iter(
            [
                api.PlayStreamRequest(open=api.StreamOpen(game=after)),
                api.PlayStreamRequest(
                    move=api.StreamMove(move=pb.Move(index=2, seat=truth.to_act, text=str(truth.legal_moves()[0])))
                ),
            ]
        ),
        timeout=30,
    )
    opened = api.PlayStreamResponse.FromString(next(stream)).opened
    assert opened.view.seat == mine and opened.deal_code == "" and opened.seat_token == opened.state_token
    with pytest.raises(grpc.RpcError) as caught:
        next(stream)
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED


class _Calls:
    """Unary calls through the host's channel, answers parsed."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def _call(self, name: str, request: Any) -> Any:
        method = self.host.channel.unary_unary(
            SERVICE + name,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=getattr(api, f"{name}Response").FromString,
        )
        return method(request, timeout=30)

    def ok(self, name: str, request: Any) -> Any:
        return self._call(name, request)

    def code(self, name: str, request: Any) -> grpc.StatusCode:
        try:
            self._call(name, request)
        except grpc.RpcError as error:
            return error.code()  # type: ignore[no-any-return]
        return grpc.StatusCode.OK
