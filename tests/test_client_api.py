"""The client's shape, without a server: the sync and asyncio clients expose the same methods with
the same signatures, both made from the one table of RPCs, and that table agrees with the service's
proto; requests are built as the proto says (the score of bare counts, a token refused as foreign
sent again with the log)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import grpc
import pytest
from bigtwo.client import calls
from bigtwo.client.aio_client import AsyncBigTwoClient, AsyncPlayStream
from bigtwo.client.client import GameRef, RetryPolicy
from bigtwo.client.client_errors import BigTwoInvalidArgument
from bigtwo.client.sync_client import BigTwoClient, PlayStream
from bigtwo.engine import Move, preset, settle_with_winner
from bigtwo.v1 import service_pb2 as api
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from service_support import CODE

RULES = preset("classic")
_AIO_NAMES = {"__aenter__": "__enter__", "__aexit__": "__exit__"}


def public_methods(cls: type) -> dict[str, Any]:
    """Public methods (and the context-manager protocol) of ``cls``, by their sync names."""
    out = {}
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_") or name in _AIO_NAMES or name in ("__enter__", "__exit__"):
            out[_AIO_NAMES.get(name, name)] = member
    return out


def shape(function: Any) -> tuple[list[tuple[str, Any, Any]], str]:
    """Parameters (name, kind, default) and the return annotation's text, with ``Async`` dropped
    (``AsyncPlayStream`` answers where ``PlayStream`` does, ``AsyncIterator`` where ``Iterator``)."""
    signature = inspect.signature(function)
    parameters = [(p.name, p.kind, p.default) for p in signature.parameters.values()]
    returns = signature.return_annotation
    text = returns if isinstance(returns, str) else getattr(returns, "__name__", str(returns))
    return parameters, text.replace("Async", "")


@pytest.mark.parametrize(("sync", "aio"), [(BigTwoClient, AsyncBigTwoClient), (PlayStream, AsyncPlayStream)])
def test_sync_and_asyncio_expose_the_same_methods_with_the_same_signatures(sync: type, aio: type) -> None:
    ours, theirs = public_methods(sync), public_methods(aio)
    assert sorted(ours) == sorted(theirs)
    for name, method in ours.items():
        assert shape(method) == shape(theirs[name]), name
        assert not inspect.iscoroutinefunction(method), name
        assert inspect.iscoroutinefunction(theirs[name]) or inspect.isasyncgenfunction(theirs[name]), name


def test_both_clients_are_made_from_the_one_table() -> None:
    for cls in (BigTwoClient, AsyncBigTwoClient):
        made = {name for name, m in public_methods(cls).items() if getattr(m, "__wrapped__", None) is not None}
        assert made == set(calls.UNARY_METHODS), cls
        for name, build in calls.UNARY_METHODS.items():
            method = getattr(cls, name)
            assert method.__wrapped__ is build and method.__doc__ == build.__doc__, name
            assert method.__qualname__ == f"{cls.__name__}.{name}"
    assert set(_SAMPLE_ARGS) == set(calls.UNARY_METHODS), "every builder is sampled here"
    used = {calls.UNARY_METHODS[name](*args).rpc.name for name, args in _SAMPLE_ARGS.items()}
    unbuilt = sorted({rpc.name for rpc in calls.UNARY_RPCS} - used)
    assert not unbuilt, f"no builder in bigtwo.client.calls sends {unbuilt}: write one, or list it in NOT_OFFERED"


def test_the_rpc_table_agrees_with_the_proto() -> None:
    """The table is read from the descriptor (bigtwo.codec.rpcs); this checks that reading against
    the generated classes, so a wrong lookup there cannot pass unseen."""
    service = api.DESCRIPTOR.services_by_name["BigTwoService"]
    assert service.full_name == calls.SERVICE
    for rpc in calls.RPCS:
        method = service.methods_by_name[rpc.name]
        assert rpc.request is getattr(api, method.input_type.name) and rpc.response is getattr(
            api, method.output_type.name
        )
        assert rpc.streaming == method.client_streaming == method.server_streaming
        assert rpc.idempotent != rpc.streaming, "unary calls are resent; the stream resumes instead"
        assert rpc.path == f"/{service.full_name}/{method.name}"
    offered = {rpc.name for rpc in calls.RPCS}
    assert offered | calls.NOT_OFFERED == set(service.methods_by_name) and not offered & calls.NOT_OFFERED


GAME = GameRef(RULES, deal_code=CODE, moves=("3D",), token=b"a token")
_SAMPLE_ARGS: dict[str, tuple[Any, ...]] = {
    "list_presets": (),
    "bot_levels": (),
    "describe_ruleset": (RULES,),
    "deal": (RULES,),
    "apply_move": (GAME, Move.parse(1, "pass")),
    "validate_move": (GAME, Move.parse(1, "pass")),
    "legal_moves": (GAME,),
    "next_hint": (GAME,),
    "timeout_move": (GAME,),
    "bot_move": (GAME, "good"),
    "split_hand": (RULES, "3D 3S"),
    "name_cards": ("3D",),
    "score_deal": (GAME,),
    "score_counts": (RULES, [0, 3, 5, 13], [0, 0, 1, 2]),
    "settle_match": (RULES, []),
    "replay_log": (GAME,),
}


def test_score_counts_sends_the_counts_and_reads_the_settlement() -> None:
    """The shipped bug: score_counts built its counts from the wrong generated module."""
    call = calls.score_counts(RULES, [0, 3, 5, 13], [0, 0, 1, 2])
    assert call.rpc is calls.offered("ScoreDeal") and isinstance(call.request, api.ScoreDealRequest)
    assert list(call.request.counts.cards_left) == [0, 3, 5, 13] and list(call.request.counts.twos_left) == [0, 0, 1, 2]
    expected = settle_with_winner(RULES, 0, [0, 3, 5, 13], [0, 0, 1, 2])
    answer = api.ScoreDealResponse(winner=expected.winner, scores=list(expected.scores))
    for line in expected.seats:
        answer.seats.add(
            seat=line.seat,
            cards_left=line.cards_left,
            twos_left=line.twos_left,
            rate=line.rate,
            multiplier=line.multiplier,
            penalty=line.penalty,
            score=line.score,
        )
    assert call.convert(answer) == expected


class _TokenRefused(grpc.RpcError):
    """INVALID_ARGUMENT with the ErrorInfo a replica gives a token of another deployment."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.INVALID_ARGUMENT

    def details(self) -> str:
        return "the state token was made with a key this service does not hold"

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        status = status_pb2.Status(code=3, message=self.details())
        status.details.add().Pack(error_details_pb2.ErrorInfo(reason="TOKEN_UNKNOWN_KEY"))
        return (("grpc-status-details-bin", status.SerializeToString()),)


def _fake_legal_moves(sent: list[api.LegalMovesRequest]) -> Any:
    def legal_moves(request: api.LegalMovesRequest, **kwargs: Any) -> Message:
        sent.append(request)
        if request.game.HasField("state_token"):
            raise _TokenRefused()
        return api.LegalMovesResponse(seat=1, can_pass=True)

    return legal_moves


def test_a_token_refused_as_foreign_is_sent_again_with_the_log_by_both_clients() -> None:
    sync_sent: list[api.LegalMovesRequest] = []
    with BigTwoClient("127.0.0.1:1", retry=RetryPolicy(attempts=1)) as client:
        client._endpoints[0].methods["LegalMoves"] = _fake_legal_moves(sync_sent)
        assert client.legal_moves(GAME).can_pass
        with pytest.raises(BigTwoInvalidArgument) as refused:  # no log to fall back on
            client.legal_moves(GameRef(RULES, token=b"a token"))
        assert refused.value.reason == "TOKEN_UNKNOWN_KEY"

    async def aio() -> list[api.LegalMovesRequest]:
        sent: list[api.LegalMovesRequest] = []
        fake = _fake_legal_moves(sent)

        async def legal_moves(request: api.LegalMovesRequest, **kwargs: Any) -> Message:
            try:
                return fake(request, **kwargs)  # type: ignore[no-any-return]
            except _TokenRefused as refused:
                trailing = grpc.aio.Metadata(*refused.trailing_metadata())
                raise grpc.aio.AioRpcError(refused.code(), grpc.aio.Metadata(), trailing, refused.details()) from None

        async with AsyncBigTwoClient("127.0.0.1:1", retry=RetryPolicy(attempts=1)) as client:
            client._endpoints[0].methods["LegalMoves"] = legal_moves
            assert (await client.legal_moves(GAME)).seat == 1
        return sent

    for sent in (sync_sent[:2], asyncio.run(aio())):
        assert [r.game.WhichOneof("game") for r in sent] == ["state_token", "log"]
        assert sent[1].game.log.deal_code == CODE and list(sent[1].game.log.moves) == ["3D"]


def test_the_one_retry_mechanism_sends_again_only_what_it_is_told_and_while_attempts_are_left() -> None:
    """Unary calls and streams share :func:`retrying` (sync) and :func:`retrying_async`."""
    import random

    from bigtwo.client.client_errors import BigTwoUnavailable, unavailable
    from bigtwo.client.transport import retrying, retrying_async

    policy = RetryPolicy(attempts=3, initial_backoff=0.0001, max_backoff=0.0002)

    def failing(errors: list[Exception]) -> Any:
        tried: list[int] = []

        def attempt(number: int) -> int:
            tried.append(number)
            if errors:
                raise errors.pop(0)
            return number

        return attempt, tried

    def gone() -> BigTwoUnavailable:
        return unavailable("nothing is listening there", "CONNECTION_REFUSED", "127.0.0.1:1")

    def broken(error: Any) -> bool:
        return isinstance(error, BigTwoUnavailable)

    attempt, tried = failing([gone(), gone()])
    assert retrying(policy, random.Random(1), broken, attempt) == 2 and tried == [0, 1, 2]
    attempt, tried = failing([gone(), gone(), gone()])
    with pytest.raises(BigTwoUnavailable):
        retrying(policy, random.Random(1), broken, attempt)
    assert tried == [0, 1, 2], "three attempts in all, then the last error"
    attempt, tried = failing([BigTwoInvalidArgument(grpc.StatusCode.INVALID_ARGUMENT, "bad")])
    with pytest.raises(BigTwoInvalidArgument):
        retrying(policy, random.Random(1), broken, attempt)
    assert tried == [0], "an answer is not sent again"

    async def aio() -> tuple[int, list[int]]:
        attempt, tried = failing([gone()])

        async def async_attempt(number: int) -> int:
            return attempt(number)  # type: ignore[no-any-return]

        return await retrying_async(policy, random.Random(1), broken, async_attempt), tried

    assert asyncio.run(aio()) == (1, [0, 1])
    assert all(0.00005 <= policy.delay(n, random.Random(n)) <= 0.0002 for n in range(5)), "jitter within bounds"


def test_the_packages_public_names_are_those_of_their_modules() -> None:
    """bigtwo.client declares its public names once (``_HOME_OF``), each fetched on first use from
    the module it names; each is a name of that module's ``__all__``, so the lists cannot drift."""
    import importlib

    import bigtwo.client as package

    assert package.__all__ == sorted(package._HOME_OF)
    for name in package.__all__:
        home = importlib.import_module(f"bigtwo.client.{package._HOME_OF[name]}")
        assert name in home.__all__, f"bigtwo.client.{name}: not in {home.__name__}.__all__"
        assert getattr(package, name) is getattr(home, name), name
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        package.nope  # noqa: B018
