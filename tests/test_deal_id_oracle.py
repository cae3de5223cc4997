"""No deal name is an oracle (issue 33, item 2): the explicit-hand attack, from outside.

A seat that knows all but a few cards of an explicit-hand deal once recovered the rest by asking the
service to deal each candidate completion and comparing the names it got back with the name of its
own deal: the name was a keyed digest of the hands alone, and ``Deal`` and ``ReplayLog`` compute it
for any hands. The attacker here is a client with only the proto and a channel to a real server on
127.0.0.1. It holds the opening seat's view of a four-seat explicit deal and is told every card but two of each
other seat's (6 unknown, 90 completions, the true one among them), then asks for every completion
through both calls. No completion may be named as its deal is, and the true hands dealt again must
get a name of their own.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import grpc
import pytest
from bigtwo.engine import Deal, DealCode, Ruleset, deal_from_code, mask_text
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from service_support import ServerProcess

SERVICE = "/bigtwo.v1.BigTwoService/"
UNKNOWN_PER_SEAT = 2


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[grpc.Channel]:
    server = ServerProcess(tmp_path_factory.mktemp("oracle"), "--no-call-log", metrics=False)
    opened = grpc.insecure_channel(server.target)
    try:
        yield opened
    finally:
        opened.close()
        server.stop()


def _call(channel: grpc.Channel, name: str, request: object, answer: type) -> object:
    method = channel.unary_unary(
        SERVICE + name, request_serializer=lambda m: m.SerializeToString(), response_deserializer=answer.FromString
    )
    return method(request, timeout=30)


def _completions(true_hands: list[int], me: int, rng: random.Random) -> Iterator[list[int]]:
    """Every split of the hidden cards among the other three seats that fits what seat ``me`` is
    told (the true one among them): each other seat's hand less ``UNKNOWN_PER_SEAT`` cards."""
    others = [seat for seat in range(len(true_hands)) if seat != me]
    hidden: list[int] = []
    known = list(true_hands)
    for seat in others:
        cards = [1 << bit for bit in range(64) if true_hands[seat] >> bit & 1]
        unknown = rng.sample(cards, UNKNOWN_PER_SEAT)
        hidden.extend(unknown)
        known[seat] &= ~sum(unknown)
    for first in itertools.combinations(hidden, UNKNOWN_PER_SEAT):
        rest = [card for card in hidden if card not in first]
        for second in itertools.combinations(rest, UNKNOWN_PER_SEAT):
            third = [card for card in rest if card not in second]
            candidate = list(known)
            for seat, extra in zip(others, (first, second, third), strict=True):
                candidate[seat] |= sum(extra)
            yield candidate


def test_candidate_hands_do_not_reveal_the_deal(channel: grpc.Channel) -> None:
    rules = Ruleset.from_mapping({"preset": "classic"})
    rng = random.Random(33)
    truth = Deal.start(rules, deal_from_code(DealCode(rng.getrandbits(60)), rules))
    hands = [truth.hands[seat] for seat in range(rules.players)]
    ruleset = pb.Ruleset(preset=rules.preset)

    def dealt(candidate: list[int], **extra: object) -> api.DealResponse:
        request = api.DealRequest(ruleset=ruleset, **extra)  # type: ignore[arg-type]
        request.explicit_deal.hands.extend(mask_text(hand) for hand in candidate)
        answer = _call(channel, "Deal", request, api.DealResponse)
        assert isinstance(answer, api.DealResponse)
        return answer

    me = truth.to_act  # the seat that opens: its token acts at once
    victim = dealt(hands, view_seat=me)
    target = victim.table.deal_id
    assert target.startswith("d-")
    # The same deal keeps its name: the seat's next answer, from its own token, names it as before.
    resumed = _call(
        channel,
        "ApplyMove",
        api.ApplyMoveRequest(
            game=pb.Game(state_token=victim.seat_token),
            move=pb.Move(index=0, seat=me, text=str(truth.legal_moves()[0])),
            view_seat=me,
        ),
        api.ApplyMoveResponse,
    )
    assert isinstance(resumed, api.ApplyMoveResponse)
    assert resumed.outcome.accepted and resumed.table.deal_id == target

    candidates = list(_completions(hands, me, rng))
    assert len(candidates) == 90 and hands in candidates
    names: set[str] = set()
    for candidate in candidates:
        by_deal = dealt(candidate).table.deal_id
        log = pb.GameLog(ruleset=ruleset)
        log.explicit_deal.hands.extend(mask_text(hand) for hand in candidate)
        replayed = _call(channel, "ReplayLog", api.ReplayLogRequest(log=log), api.ReplayLogResponse)
        assert isinstance(replayed, api.ReplayLogResponse)
        names.update((by_deal, replayed.table.deal_id))
    assert target not in names, "a candidate deal was named as the seat's deal: the name is an oracle"
    assert len(names) == 2 * len(candidates), "two deals of the same cards shared a name"
