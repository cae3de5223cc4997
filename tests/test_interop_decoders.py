"""Every answer reads the same in every stock protobuf runtime (issue 20).

A real ``bigtwo serve`` on 127.0.0.1 answers a corpus of calls: every RPC, every kind of event,
streamed and unary, under every preset (a refusal, a resend, a stream opened from a token mid-deal,
a dragon, automatic passes and a face-up card among them). Each answer's bytes are decoded by
Python's protobuf and by protobufjs as ``@grpc/proto-loader`` resolves it (tests/interop/decode.js,
installed by ``make node-deps``; one node process for the corpus), and both must give the answer
built field by field: for moves, from the engine's deal through :mod:`bigtwo.service.convert`
(the plain protobuf path, not :mod:`bigtwo.service.wire`'s); for the other calls, the same request
answered by the service's core in this process. Each answer must also be protobuf's own encoding:
re-serializing what Python parsed gives the same bytes, and every field is written once, in order
(:func:`bigtwo.service.wire.check_fields`). An error's ``grpc-status-details-bin`` decodes in node
with the few lines docs/API.md shows.

Under CI=true missing node modules fail the test; elsewhere it is skipped.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.engine import PRESET_NAMES, Deal, DealCode, Play, Refusal, deal_from_code, explicit_deal
from bigtwo.service import convert as cv
from bigtwo.service import wire
from bigtwo.service.core import CallInfo
from bigtwo.service.servicer import UNARY, ServiceCore
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from service_support import KEY_A, ServerProcess, reference_table

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "tests" / "interop"
NODE_MODULES = ROOT / ".tools" / "interop" / "node_modules"
"""Where `make node-deps` installs the pinned decoders (the test installs nothing)."""
SERVICE = "/bigtwo.v1.BigTwoService/"
RULESETS = [pb.Ruleset(preset=name) for name in PRESET_NAMES] + [
    pb.Ruleset(preset="classic", options={"players": "3", "auto_pass": "on"}),  # a face-up card, automatic passes
    pb.Ruleset(preset="taiwan", options={"players": "2"}),
]
ISSUE_CODE = "0000003NQK8N1"
ISSUE_CASE = f"issue 20: classic, {ISSUE_CODE}, 3D"
DRAGON = [" ".join(rank + suit for rank in "3456789TJQKA2") for suit in "SHCD"]
"""Explicit hands where seat 0 shows a dragon (hong-kong: dragon on)."""


@dataclass
class Answer:
    """One answer as the server sent it, and the message it must read as."""

    what: str
    method: str
    data: bytes
    expected: Message


def node() -> str:
    path = shutil.which("node")
    modules = NODE_MODULES / "@grpc" / "proto-loader"
    if path is None or not modules.is_dir():
        message = "node or .tools/interop/node_modules is missing: run `make node-deps`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


# -- the answer built field by field ----------------------------------------------------------------


def judged(deal: Deal, seat: int, text: str, *, apply: bool) -> tuple[pb.MoveOutcome, tuple[Any, ...]]:
    """A move judged by the engine: its outcome as a message and the events it made."""
    try:
        play: Play | None = deal.verify_text(seat, text)
    except Refusal as refusal:
        return pb.MoveOutcome(accepted=False, refusal=cv.refusal_to_pb(refusal)), ()
    events = deal.do_text(seat, text) if apply else ()
    if play is None:
        return pb.MoveOutcome(accepted=True, is_pass=True), events
    return pb.MoveOutcome(accepted=True, play=cv.play_to_pb(play, deal.ruleset)), events


# -- the corpus ---------------------------------------------------------------------------------------


TABLE_SEALING = frozenset({"Deal", "ReplayLog"})
"""Calls that start a table: their tokens seal random bytes drawn then, so no other process foretells them."""


class Corpus:
    """Calls to a real server, each answer kept with the message it must read as."""

    def __init__(self, channel: grpc.Channel, core: ServiceCore) -> None:
        self.channel = channel
        self.core = core
        self.answers: list[Answer] = []
        self.rng = random.Random(20)

    def raw(self, method: str, request: Message) -> bytes:
        call: Any = self.channel.unary_unary(
            SERVICE + method, request_serializer=lambda m: m.SerializeToString(), response_deserializer=bytes
        )
        return bytes(call(request, timeout=30))

    def unary(self, method: str, request: Message, what: str = "", *, drawn_name: bool = False) -> Any:
        """A call whose expected answer is the core's, built as messages in this process. With
        ``drawn_name`` (explicit hands: their deal's name is drawn at random when dealt, so neither
        process can foretell the other's) the name and the token that carries it are the server's."""
        response_type, name = UNARY[method][1], UNARY[method][2]
        data = self.raw(method, request)
        expected = getattr(self.core, name)(request, CallInfo())
        if drawn_name:
            answer = response_type.FromString(data)
            assert answer.table.deal_id.startswith("d-") and answer.table.deal_id != expected.table.deal_id
            expected.table.deal_id, expected.state_token = answer.table.deal_id, answer.state_token
        if method in TABLE_SEALING:
            # A new table's tokens carry the random bytes it was dealt with (issue 33): the server's.
            answer = response_type.FromString(data)
            expected.state_token = answer.state_token
            if method == "Deal":
                expected.seat_token = answer.seat_token
        self.answers.append(Answer(what or method, method, data, expected))
        return response_type.FromString(data)

    def stream(self, requests: list[api.PlayStreamRequest]) -> list[bytes]:
        call: Any = self.channel.stream_stream(
            SERVICE + "PlayStream", request_serializer=lambda m: m.SerializeToString(), response_deserializer=bytes
        )
        return [bytes(answer) for answer in call(iter(requests), timeout=30)]

    # -- a deal by ApplyMove, then by a stream opened from a token ----------------------------------

    def deal_by_apply(self, rules: pb.Ruleset, code: str, moves: int) -> tuple[bytes, Deal, str, bytes, list[str]]:
        """Deal, then ``moves`` moves (or the whole deal) by ApplyMove: a refusal first, a resend,
        a seat's view every third move. Returns the last token, the deal and its id, and the token
        and the moves after the tenth move."""
        ruleset = cv.ruleset_from(rules, "ruleset")
        dealt = self.unary("Deal", api.DealRequest(ruleset=rules, deal_code=code))
        self.unary("Deal", api.DealRequest(ruleset=rules, deal_code=code, view_seat=1), "Deal view_seat")
        deal = Deal.start(ruleset, deal_from_code(DealCode.parse(code), ruleset))
        deal_id, token = dealt.table.deal_id, dealt.state_token
        texts: list[str] = []
        refused = resent = False
        middle = b""
        while not deal.over and len(texts) < moves:
            view_seat = deal.to_act if deal.moves_made % 3 == 1 else None
            if not refused:  # the leader may not pass
                seat, text, refused = deal.to_act, "pass", True
            else:
                move = self.rng.choice(deal.legal_moves())
                seat, text = move.seat, str(move)
            request = api.ApplyMoveRequest(
                game=pb.Game(state_token=token), move=pb.Move(index=deal.moves_made, seat=seat, text=text)
            )
            if view_seat is not None:
                request.view_seat = view_seat
            outcome, events = judged(deal, seat, text, apply=True)
            data = self.raw("ApplyMove", request)
            parsed = api.ApplyMoveResponse.FromString(data)
            expected = api.ApplyMoveResponse(
                outcome=outcome,
                events=[cv.event_to_pb(event, ruleset, view_seat) for event in events],
                state_token=parsed.state_token,
                table=reference_table(deal, deal_id, code),
                seat_token=parsed.seat_token,
            )
            if view_seat is not None:
                expected.view.CopyFrom(cv.seat_view(deal, view_seat))
                assert parsed.seat_token
            self.answers.append(Answer(f"ApplyMove {text!r}", "ApplyMove", data, expected))
            if outcome.accepted:
                token = parsed.state_token
                texts.append(text)
                if len(texts) == 10:
                    middle = token
                if not resent and len(texts) > 3:  # a resend is answered with the same bytes
                    assert self.raw("ApplyMove", request) == data
                    resent = True
            if deal.moves_made % 7 == 0 and not deal.over:
                move = deal.legal_moves()[0]
                self.unary(
                    "ValidateMove",
                    api.ValidateMoveRequest(
                        game=pb.Game(state_token=token), move=pb.Move(seat=move.seat, text=str(move))
                    ),
                )
        return token, deal, deal_id, middle, texts[:10]

    def stream_from(self, game: pb.Game, deal: Deal, deal_id: str | None, code: str, view_seat: int | None) -> bytes:
        """Open a stream on ``game`` (``deal`` is its state: changed here) and play the deal to its
        end: some moves checked first (validate_only), a refused one now and then, a token with each
        answer. ``deal_id`` None: a log of explicit hands, dealt anew under a name drawn when the
        stream opens, which every later answer must repeat. Returns the last token."""
        ruleset = deal.ruleset
        opening = api.StreamOpen(game=game, state_tokens=True)
        if view_seat is not None:
            opening.view_seat = view_seat
        requests = [api.PlayStreamRequest(open=opening)]
        opened = api.StreamOpened(
            deal_code=code if view_seat is None or deal.over else "",
            table=reference_table(deal, deal_id or "", code),
            events=cv.events_to_pb(deal.events, ruleset, view_seat),
        )
        if view_seat is not None:
            opened.view.CopyFrom(cv.seat_view(deal, view_seat))
        expected: list[Any] = [opened]
        while not deal.over:
            move = self.rng.choice(deal.legal_moves())
            tries = [(str(move), False)]
            if deal.moves_made % 3 == 0:
                tries.insert(0, (str(move), True))
            if deal.moves_made % 5 == 2:
                tries.insert(0, ("2S 2S", False))  # a card twice: refused, nothing applied
            for text, validate_only in tries:
                index = deal.moves_made
                outcome, events = judged(deal, move.seat, text, apply=not validate_only)
                stream_move = api.StreamMove(move=pb.Move(index=index, seat=move.seat, text=text))
                stream_move.validate_only = validate_only
                requests.append(api.PlayStreamRequest(move=stream_move))
                result = api.StreamMoveResult(
                    index=index,
                    outcome=outcome,
                    events=[cv.event_to_pb(event, ruleset, view_seat) for event in events],
                    table=reference_table(deal, deal_id or "", code),
                )
                if view_seat is not None:
                    result.view.CopyFrom(cv.seat_view(deal, view_seat))
                expected.append(result)
        answers = self.stream(requests)
        assert len(answers) == len(expected)
        token = b""
        for data, want in zip(answers, expected, strict=True):
            parsed = api.PlayStreamResponse.FromString(data)
            if deal_id is None:
                deal_id = parsed.opened.table.deal_id
                assert deal_id.startswith("d-")
            want.table.deal_id = deal_id
            if isinstance(want, api.StreamOpened):
                want.state_token, want.seat_token = parsed.opened.state_token, parsed.opened.seat_token
                response = api.PlayStreamResponse(opened=want)
                what = f"PlayStream opened from {game.WhichOneof('game')}"
            else:
                want.state_token, want.seat_token = parsed.move_result.state_token, parsed.move_result.seat_token
                assert bool(want.seat_token) == (view_seat is not None)  # tokens asked: the seat's too
                response = api.PlayStreamResponse(move_result=want)
                what = f"PlayStream move {want.index}"
            assert want.state_token
            token = want.state_token
            self.answers.append(Answer(what, "PlayStream", data, response))
        return token

    # -- the other calls ------------------------------------------------------------------------------

    def other_calls(self, rules: pb.Ruleset, code: str, token: bytes, texts: list[str], over: bytes) -> None:
        """Every other RPC on the deal (``token`` mid-deal, ``over`` once it is over)."""
        players = cv.ruleset_from(rules, "ruleset").players
        log = pb.GameLog(ruleset=rules, deal_code=code, moves=texts)
        game = pb.Game(state_token=token)
        snap = self.core.codec.decode(token)
        deal = Deal.from_state(snap.ruleset, snap.state)
        hand = cv.cards_text(deal.hands[deal.to_act])
        self.unary("DescribeRuleset", api.DescribeRulesetRequest(ruleset=rules))
        self.unary("LegalMoves", api.LegalMovesRequest(game=game))
        self.unary("LegalMoves", api.LegalMovesRequest(position=api.HandPosition(ruleset=rules, hand=hand)))
        self.unary("NextHint", api.NextHintRequest(game=game))
        self.unary("TimeoutMove", api.TimeoutMoveRequest(game=game))
        self.unary("TimeoutMove", api.TimeoutMoveRequest(game=game, bot_level="beginner"))
        self.unary("SplitHand", api.SplitHandRequest(ruleset=rules, hand=hand))
        self.unary("NameCards", api.NameCardsRequest(cards=hand.split()[0], ruleset=rules, table="2S"))
        self.unary("NameCards", api.NameCardsRequest(cards=hand.split()[-1], game=game, seat=deal.to_act))
        self.unary("BotMove", api.BotMoveRequest(game=game, level="good", seed=3))
        bots = [api.BotSeat(seat=seat, level="beginner", seed=seat) for seat in range(players) if seat != 1]
        self.unary("PlayBots", api.PlayBotsRequest(game=game, bots=bots))
        self.unary("ReplayLog", api.ReplayLogRequest(log=log, view_seat=0))
        self.unary("ScoreDeal", api.ScoreDealRequest(game=pb.Game(state_token=over)))
        counts = api.CardCounts(ruleset=rules, cards_left=[0, *range(3, 3 + players - 1)])
        self.unary("ScoreDeal", api.ScoreDealRequest(counts=counts))
        scores = [sum(range(1, players)), *(-n for n in range(1, players))]
        self.unary("SettleMatch", api.SettleMatchRequest(ruleset=rules, deals=[pb.DealResult(winner=0, scores=scores)]))
        self.unary("AuditLog", api.AuditLogRequest(game_log=log, want_steps=True, view_seat=1))

    def issue_case(self) -> None:
        """Issue 20's report: classic, deal code 0000003NQK8N1, play 3D by ApplyMove."""
        rules = pb.Ruleset(preset="classic")
        dealt = api.DealResponse.FromString(self.raw("Deal", api.DealRequest(ruleset=rules, deal_code=ISSUE_CODE)))
        ruleset = cv.ruleset_from(rules, "ruleset")
        deal = Deal.start(ruleset, deal_from_code(DealCode.parse(ISSUE_CODE), ruleset))
        seat = deal.to_act
        outcome, events = judged(deal, seat, "3D", apply=True)
        request = api.ApplyMoveRequest(
            game=pb.Game(state_token=dealt.state_token), move=pb.Move(index=0, seat=seat, text="3D")
        )
        data = self.raw("ApplyMove", request)
        parsed = api.ApplyMoveResponse.FromString(data)
        expected = api.ApplyMoveResponse(
            outcome=outcome,
            events=[cv.event_to_pb(event, ruleset, None) for event in events],
            state_token=parsed.state_token,
            table=reference_table(deal, dealt.table.deal_id, ISSUE_CODE),
        )
        self.answers.append(Answer(ISSUE_CASE, "ApplyMove", data, expected))

    def error(self) -> tuple[bytes, status_pb2.Status]:
        """A refused call's ``grpc-status-details-bin`` (a tampered token: BadRequest and ErrorInfo)."""
        dealt = api.DealResponse.FromString(self.raw("Deal", api.DealRequest(deal_code="0000003NQK8N1")))
        tampered = dealt.state_token[:-1] + bytes((dealt.state_token[-1] ^ 1,))
        with pytest.raises(grpc.RpcError) as caught:
            self.raw("LegalMoves", api.LegalMovesRequest(game=pb.Game(state_token=tampered)))
        metadata: Any = caught.value.trailing_metadata()
        trailers = {key: value for key, value in metadata}
        data = bytes(trailers["grpc-status-details-bin"])
        return data, status_pb2.Status.FromString(data)


@dataclass
class Run:
    answers: list[Answer]
    error: tuple[bytes, status_pb2.Status]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    node()
    server = ServerProcess(tmp_path_factory.mktemp("interop"), metrics=False)
    channel = grpc.insecure_channel(server.target)
    try:
        built = Corpus(channel, ServiceCore(TokenCodec(KeyRing([KEY_A.encode()]))))
        built.issue_case()
        built.unary("ListPresets", api.ListPresetsRequest())
        for number, rules in enumerate(RULESETS):
            ruleset = cv.ruleset_from(rules, "ruleset")
            code = str(DealCode(built.rng.getrandbits(60)))
            # Half the deals are played by ApplyMove to their end, half go on on a stream opened
            # from the token mid-deal (whose opening tells the deal so far).
            token, deal, deal_id, middle, texts = built.deal_by_apply(rules, code, 1000 if number % 2 else 24)
            view_seat = None if number % 3 == 0 else number % ruleset.players
            over = built.stream_from(pb.Game(state_token=token), deal.clone(), deal_id, code, view_seat)
            built.other_calls(rules, code, middle, texts, over)
            fresh = Deal.start(ruleset, deal_from_code(DealCode.parse(code), ruleset))
            from_log = pb.Game(log=pb.GameLog(ruleset=rules, deal_code=code))
            built.stream_from(from_log, fresh, deal_id, code, 0 if view_seat is None else None)
        rules = pb.Ruleset(preset="hong-kong")
        request = api.DealRequest(ruleset=rules, explicit_deal=pb.ExplicitDeal(hands=DRAGON))
        dealt = built.unary("Deal", request, "Deal dragon", drawn_name=True)
        dragon = Deal.start(cv.ruleset_from(rules, "ruleset"), explicit_deal(DRAGON, cv.ruleset_from(rules, "ruleset")))
        explicit = pb.Game(log=pb.GameLog(ruleset=rules, explicit_deal=pb.ExplicitDeal(hands=DRAGON)))
        built.stream_from(explicit, dragon.clone(), None, "", 1)
        built.stream_from(pb.Game(state_token=dealt.state_token), dragon, dealt.table.deal_id, "", None)
        yield Run(built.answers, built.error())
    finally:
        channel.close()
        server.stop()


@pytest.fixture(scope="module")
def node_decoded(corpus: Run) -> list[Any]:
    """Every answer and the error's details decoded by one node process (tests/interop/decode.js)."""
    items: list[dict[str, str]] = [
        {"method": answer.method, "data": base64.b64encode(answer.data).decode()} for answer in corpus.answers
    ]
    items.append({"status": base64.b64encode(corpus.error[0]).decode()})
    done = subprocess.run(
        [node(), str(INTEROP / "decode.js")],
        input=json.dumps({"proto_root": str(ROOT / "proto"), "items": items}),
        capture_output=True,
        text=True,
        cwd=INTEROP,
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
        timeout=60,
        check=True,
    )
    decoded: list[Any] = json.loads(done.stdout)
    assert len(decoded) == len(items)
    return decoded


# -- protobufjs' view of a message ------------------------------------------------------------------


_LONGS = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED64,
}


def js_value(field: Any, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return js_object(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None
        known = enum.values_by_number.get(value)
        return known.name if known is not None else value
    if field.type in _LONGS:
        return str(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def js_object(message: Message) -> dict[str, Any]:
    """What protobufjs' ``toObject`` gives for ``message`` with proto-loader's options as
    docs/API.md sets them (keepCase, longs and enums as strings, defaults, oneofs): every field of
    no oneof with its value or default (null for a message), members of a oneof (proto3
    ``optional`` fields are one-member oneofs named ``_field``) only when set, and each set
    oneof's name holding its member's name."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        oneof = field.containing_oneof
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            entry = field.message_type.fields_by_name["value"]
            out[field.name] = {str(key): js_value(entry, item) for key, item in value.items()}
        elif field.is_repeated:
            out[field.name] = [js_value(field, item) for item in value]
        elif oneof is not None:
            if message.HasField(field.name):
                out[field.name] = js_value(field, value)
                out[oneof.name] = field.name
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            out[field.name] = js_object(value) if message.HasField(field.name) else None
        else:
            out[field.name] = js_value(field, value)
    return out


def response_type(method: str) -> Any:
    return api.PlayStreamResponse if method == "PlayStream" else UNARY[method][1]


# -- the tests --------------------------------------------------------------------------------------


def test_the_corpus_covers_every_rpc_event_and_preset(corpus: Run) -> None:
    assert {answer.method for answer in corpus.answers} == {*UNARY, "PlayStream"}
    events: set[str] = set()
    presets: set[str] = set()

    def walk(message: Message) -> None:
        if isinstance(message, pb.Event):
            events.add(str(message.WhichOneof("event")))
        if isinstance(message, pb.Ruleset):
            presets.add(message.preset)
        for field, value in message.ListFields():
            entry = field.message_type is not None and field.message_type.GetOptions().map_entry
            if field.type == FieldDescriptor.TYPE_MESSAGE and not entry:
                for item in value if field.is_repeated else [value]:
                    walk(item)

    for answer in corpus.answers:
        walk(answer.expected)
    assert events == {field.name for field in pb.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
    assert presets >= set(PRESET_NAMES)
    automatic = [a for a in corpus.answers for e in getattr(a.expected, "events", []) if e.passed.automatic]
    assert automatic, "automatic passes are in the corpus"
    whats = {answer.what for answer in corpus.answers}
    assert {"PlayStream opened from state_token", "PlayStream opened from log"} <= whats


def test_python_reads_each_answer_as_the_message_built_field_by_field(corpus: Run) -> None:
    for answer in corpus.answers:
        assert response_type(answer.method).FromString(answer.data) == answer.expected, answer.what


def test_each_answer_is_protobufs_own_encoding(corpus: Run) -> None:
    """Every field once and in order, so that re-serializing the parsed answer gives its bytes."""
    for answer in corpus.answers:
        kind = response_type(answer.method)
        wire.check_fields(kind.DESCRIPTOR, answer.data)
        assert kind.FromString(answer.data).SerializeToString(deterministic=True) == answer.data, answer.what


def test_protobufjs_reads_each_answer_as_the_message_built_field_by_field(corpus: Run, node_decoded: list[Any]) -> None:
    for answer, decoded in zip(corpus.answers, node_decoded, strict=False):
        assert decoded == js_object(answer.expected), answer.what


def test_protobufjs_reads_the_play_of_issue_20s_report(corpus: Run, node_decoded: list[Any]) -> None:
    """Once read as ``{"seat":0,"play":null,"move_index":0}``: the play was lost."""
    assert corpus.answers[0].what == ISSUE_CASE
    played = node_decoded[0]["events"][0]["cards_played"]
    assert played["play"]["cards"] == {"text": "3D", "mask": "1"} and played["play"]["kind"] == "KIND_SINGLE"


def test_protobufjs_reads_the_error_details_as_docs_api_says(corpus: Run, node_decoded: list[Any]) -> None:
    status = corpus.error[1]
    decoded = node_decoded[-1]
    assert decoded["code"] == status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert decoded["message"] == status.message
    info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    for detail in status.details:
        detail.Unpack(info if detail.Is(info.DESCRIPTOR) else bad)
    by_type = {detail["type_url"]: detail for detail in decoded["details"]}
    error_info = by_type["type.googleapis.com/google.rpc.ErrorInfo"]
    assert (error_info["reason"], error_info["domain"], error_info["metadata"]) == (
        info.reason,
        info.domain,
        dict(info.metadata),
    )
    assert info.reason == "TOKEN_BAD_SIGNATURE"
    violations = by_type["type.googleapis.com/google.rpc.BadRequest"]["field_violations"]
    assert violations == [{"field": v.field, "description": v.description} for v in bad.field_violations]
    assert violations[0]["field"] == "game.state_token"
