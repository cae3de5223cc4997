"""The reference client against real servers in subprocesses on 127.0.0.1: whole deals over unary
calls and over the stream (sync and asyncio), typed errors, retried moves never applied twice,
SIGKILL and restart mid-deal with nothing lost or doubled, round-robin over two servers, TLS,
mutual TLS and bearer tokens, the Table helper and the examples."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.client import (
    AsyncBigTwoClient,
    BigTwoClient,
    BigTwoError,
    BigTwoFailedPrecondition,
    BigTwoInvalidArgument,
    BigTwoUnauthenticated,
    BigTwoUnavailable,
    RetryPolicy,
)
from bigtwo.client.client import GameRef
from bigtwo.client.table import Table, bot_seat, hint_seat, script_seat
from bigtwo.engine import DealEnded, Move, Reason, Ruleset, preset
from bigtwo.engine.replay import audit_log, loads
from client_support import Server, hint_or_pass, make_pki
from service_support import CODE, free_port

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[1]
RULES = preset("classic")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("client"))
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


def reference_deal(client: BigTwoClient) -> tuple[tuple[str, ...], tuple[int, ...]]:
    dealt = client.deal(RULES, deal_code=CODE)
    game, table = dealt.game, dealt.table
    while not table.over:
        result = client.apply_move(game, hint_or_pass(client, game), seat=table.to_act)
        assert result.accepted, result.outcome
        game, table = result.game, result.table
    return game.moves, table.scores


def test_whole_deal_over_unary_calls(server: Server) -> None:
    with BigTwoClient(server.target) as client:
        dealt = client.deal(RULES, deal_code=CODE, view_seat=0)
        assert dealt.deal_code == "", "an answer for one seat carries no deal code while the deal is in play"
        assert dealt.view is not None and len(dealt.view.cards) == 13
        assert dealt.events[0].hands[1] == 0  # other seats' hands stay hidden
        moves, scores = reference_deal(client)
        game = GameRef(RULES, deal_code=CODE, moves=moves)
        replayed = client.replay_log(game)
        assert not replayed.refused and replayed.table.over and replayed.table.scores == scores
        settlement = client.score_deal(replayed.game)
        assert settlement.scores == scores and settlement.seats[settlement.winner].cards_left == 0
        # The same game from the log alone (no token) answers the same.
        refused = client.validate_move(GameRef(RULES, deal_code=CODE, moves=moves), "pass", seat=0)
        assert not refused.accepted and refused.refusal is not None and refused.refusal.reason is Reason.GAME_OVER


def test_whole_deal_over_the_stream(server: Server) -> None:
    with BigTwoClient(server.target) as client:
        expected_moves, expected_scores = reference_deal(client)
        with client.play_stream(GameRef(RULES, deal_code=CODE), view_seat=2) as stream:
            assert stream.opened is not None and stream.opened.view is not None
            table = stream.opened.table
            while not table.over:
                result = stream.move(hint_or_pass(client, stream.game), seat=table.to_act)
                assert result.accepted
                table = result.table
            assert stream.game.moves == expected_moves and table.scores == expected_scores
            assert any(isinstance(e, DealEnded) for e in result.events)


def test_async_client_unary_and_stream(server: Server) -> None:
    async def unary() -> tuple[tuple[str, ...], tuple[int, ...]]:
        async with AsyncBigTwoClient(server.target) as client:
            dealt = await client.deal(RULES, deal_code=CODE)
            game, table = dealt.game, dealt.table
            while not table.over:
                hint = await client.next_hint(game)
                move = hint.play.text if hint.play else "pass"
                result = await client.apply_move(game, move, seat=table.to_act)
                game, table = result.game, result.table
            return game.moves, table.scores

    async def stream(moves: tuple[str, ...]) -> tuple[str, ...]:
        async with AsyncBigTwoClient(server.target) as client:
            playing = await client.play_stream(GameRef(RULES, deal_code=CODE))
            async with playing:
                assert playing.opened is not None
                table = playing.opened.table
                for text in moves:
                    result = await playing.move(Move.parse(table.to_act, text))
                    assert result.accepted
                    table = result.table
                assert table.over
            return playing.game.moves

    with BigTwoClient(server.target) as sync_client:
        expected = reference_deal(sync_client)
    assert asyncio.run(unary()) == expected
    assert asyncio.run(stream(expected[0])) == expected[0]


def test_typed_errors_and_move_indices(server: Server) -> None:
    with BigTwoClient(server.target) as client:
        with pytest.raises(BigTwoInvalidArgument) as bad:
            client.deal(RULES, deal_code="NOT-A-CODE")
        assert [v.field for v in bad.value.violations] == ["deal_code"]
        dealt = client.deal(RULES, deal_code=CODE)
        first = client.apply_move(dealt.game, "3D", seat=0)
        assert first.accepted
        # A retry whose answer was lost: the move sent again with its index, on the game after it.
        lost = GameRef(RULES, deal_code=CODE, token=first.game.token)
        again = client.apply_move(lost, "3D", seat=0)
        assert again.accepted and again.events == first.events and again.table == first.table
        # A different move with an index already used is refused, naming moves_made.
        with pytest.raises(BigTwoFailedPrecondition) as used:
            client.apply_move(lost, "3S", seat=0)
        assert used.value.reason == "MOVE_ALREADY_MADE" and used.value.moves_made == 1
        # A refusal is an answer, not an error.
        refused = client.apply_move(first.game, "pass", seat=0)
        assert not refused.accepted and refused.outcome.refusal.reason is Reason.NOT_YOUR_TURN
        assert refused.game.moves == first.game.moves


def test_killed_and_restarted_server_mid_deal_loses_and_doubles_nothing(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        server.wait_ready()
        policy = RetryPolicy(attempts=40, initial_backoff=0.05, max_backoff=0.5)
        with BigTwoClient(server.target, retry=policy, timeout=5) as client:
            expected_moves, expected_scores = reference_deal(client)
            dealt = client.deal(RULES, deal_code=CODE)
            game, table = dealt.game, dealt.table
            restarts = []

            def restart() -> None:
                time.sleep(0.8)
                server.start()
                restarts.append(time.monotonic())

            made = 0
            while not table.over:
                if made in (10, 30):  # SIGKILL mid-deal, restart on the same port while we keep calling
                    server.kill()
                    threading.Thread(target=restart).start()
                result = client.apply_move(game, hint_or_pass(client, game), seat=table.to_act)
                assert result.accepted and result.index == made
                game, table = result.game, result.table
                made += 1
            assert len(restarts) == 2 and client.retries_made > 0
            assert game.moves == expected_moves and table.scores == expected_scores

            # The stream: killed mid-deal, reopened from the last token, the pending move sent again.
            with client.play_stream(GameRef(RULES, deal_code=CODE)) as stream:
                assert stream.opened is not None
                to_act = stream.opened.table.to_act
                for index, text in enumerate(expected_moves):
                    if index == 20:
                        server.kill()
                        threading.Thread(target=restart).start()
                    result = stream.move(text, seat=to_act)
                    assert result.accepted and result.index == index
                    to_act = result.table.to_act
                assert stream.reopened >= 1 and result.table.scores == expected_scores
                assert stream.game.moves == expected_moves
    finally:
        server.stop()


def test_round_robin_over_two_servers_and_failover(tmp_path: Path) -> None:
    a, b = Server(tmp_path), Server(tmp_path)
    try:
        a.wait_ready()
        b.wait_ready()
        with BigTwoClient(f"{a.target},{b.target}", retry=RetryPolicy(attempts=6, initial_backoff=0.02)) as client:
            for _ in range(10):
                assert client.list_presets()
            # A server writes its call log line after answering: wait (bounded) until all ten are in.
            for _ in range(300):
                if a.calls("ListPresets") + b.calls("ListPresets") >= 10:
                    break
                time.sleep(0.1)
            assert a.calls("ListPresets") == 5 and b.calls("ListPresets") == 5
            moves, scores = reference_deal(client)  # a game's calls alternate between the replicas
            b.stop()
            assert reference_deal(client) == (moves, scores)  # every call lands on a
            assert client.retries_made > 0
    finally:
        a.stop()
        b.stop()


def test_tls_mutual_tls_and_bearer_tokens(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    no_retry = RetryPolicy(attempts=1)
    tls = Server(tmp_path, "--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    mtls = Server(
        tmp_path,
        "--tls-cert",
        str(pki.server_cert),
        "--tls-key",
        str(pki.server_key),
        "--tls-client-ca",
        str(pki.ca),
        "--auth-token",
        "s3cret-bearer-0123456789",
    )
    try:
        tls.wait_listening()  # TLS, the second with client certificates: a plaintext health check fails
        mtls.wait_listening()
        with BigTwoClient(tls.target, tls=True, ca_file=str(pki.ca)) as client:
            assert client.deal(RULES, deal_code=CODE).deal_code == CODE
        with BigTwoClient(tls.target, retry=no_retry, timeout=3) as plain, pytest.raises(BigTwoUnavailable):
            plain.list_presets()  # plaintext against a TLS port
        full = {"ca_file": str(pki.ca), "cert_file": str(pki.client_cert), "key_file": str(pki.client_key)}
        with BigTwoClient(mtls.target, token="s3cret-bearer-0123456789", **full) as client:
            assert client.list_presets()[0].name == "classic"
        with BigTwoClient(mtls.target, token="wrong", **full) as client, pytest.raises(BigTwoUnauthenticated):
            client.list_presets()
        with BigTwoClient(mtls.target, **full) as client, pytest.raises(BigTwoUnauthenticated):
            client.list_presets()
        with (
            BigTwoClient(
                mtls.target, tls=True, ca_file=str(pki.ca), token="s3cret-bearer-0123456789", retry=no_retry, timeout=3
            ) as c,
            pytest.raises(BigTwoUnavailable),
        ):
            c.list_presets()  # no client certificate
    finally:
        tls.stop()
        mtls.stop()


def test_table_runs_a_match_with_timeouts_refusals_and_a_replay_file(server: Server, tmp_path: Path) -> None:
    rules = Ruleset.from_mapping({"preset": "classic", "match": "deals:2"})
    moved: list[int] = []
    with BigTwoClient(server.target) as client:
        seats = [script_seat(["3D 3S", "pass", "3D"]), bot_seat("good"), bot_seat("great", seed=2), hint_seat()]
        table = Table(client, rules, seats, on_move=lambda t, r: moved.append(r.index))
        standing = table.play_match([CODE])
        assert standing.over and len(table.deals) == 2 and table.deals[0].deal_code == CODE
        totals = tuple(sum(d.settlement.scores[s] for d in table.deals) for s in range(4))
        assert standing.totals == totals and moved[0] == 0
        text = table.replay_text()
        assert "refused" in text  # "3D 3S" is no pair... and "pass" while leading is refused
        assert "timeout" in text  # the script ran out: the service's timeout move was played
        log = loads(text)
        assert audit_log(log).kind.value == "valid"
        path = table.write_replay(tmp_path / "match.toml")
        assert path.read_text() == text
    with BigTwoClient(server.target) as client:
        streamed = Table(client, rules, [bot_seat("good", seed=s) for s in range(4)], use_stream=True)
        outcome = streamed.play_deal(CODE)
        plain = Table(client, rules, [bot_seat("good", seed=s) for s in range(4)])
        assert plain.play_deal(CODE).moves == outcome.moves


@pytest.mark.parametrize(
    ("script", "expect"),
    [
        ("deal_and_play_unary.py", "wins; scores p1 "),
        ("play_over_stream.py", "wins; scores p1 "),
        ("replay_file.py", "audit: valid"),
        ("bot_match.py", "match totals p1 "),
    ],
)
def test_examples_run_against_a_real_server(server: Server, tmp_path: Path, script: str, expect: str) -> None:
    args = [sys.executable, str(ROOT / "examples" / script), "--target", server.target]
    if script == "replay_file.py":
        args += ["--out", str(tmp_path / "r.toml")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert expect in done.stdout
    # Seats as people number them, scores by seat: no "seat 0", no raw list.
    assert not re.search(r"\bseat \d|\[\d", done.stdout), done.stdout


@pytest.mark.parametrize("script", ["deal_and_play_unary.py", "play_over_stream.py", "replay_file.py", "bot_match.py"])
def test_an_example_against_a_dead_server_ends_in_a_sentence(tmp_path: Path, script: str) -> None:
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    args = [sys.executable, str(ROOT / "examples" / script), "--target", dead]
    if script == "replay_file.py":
        args += ["--out", str(tmp_path / "r.toml")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"No Big Two service answers at {dead}") and "--target" in done.stderr, done.stderr


# -- bots over the service, TW timeouts ----------------------------------------------------------


def test_bot_move_sync_async_and_a_table_of_service_bots(server: Server) -> None:
    from bigtwo.client import BigTwoInvalidArgument as Invalid

    game = GameRef(RULES, deal_code=CODE)
    with BigTwoClient(server.target) as client:
        choice = client.bot_move(game, "great", seed=3)
        assert choice.level == "great" and choice.move.seat == 0 and "3D" in str(choice.move).split()
        assert choice.name and client.bot_move(game, "great", seed=3) == choice
        assert client.validate_move(game, choice.move).accepted
        pro = client.bot_move(game, "pro", seed=1, simulations=30)
        assert client.validate_move(game, pro.move).accepted
        with pytest.raises(Invalid) as caught:
            client.bot_move(game, "grandmaster")
        assert caught.value.violations[0].field == "level"
        assert client.validate_move(game, client.timeout_move(game, bot_level="great")).accepted

    async def async_choice() -> tuple[str, str]:
        async with AsyncBigTwoClient(server.target) as client:
            choice = await client.bot_move(game, "great", seed=3)
            timed_out = await client.timeout_move(game, bot_level="good")
            return str(choice.move), str(timed_out)

    with BigTwoClient(server.target) as client:
        expected = (str(client.bot_move(game, "great", seed=3).move), str(client.timeout_move(game, bot_level="good")))
    assert asyncio.run(async_choice()) == expected

    # A table of bots served by the RPC, the TW policy for a seat that times out, and the local path.
    with BigTwoClient(server.target) as client:
        seats = [script_seat([]), bot_seat("good", seed=1), bot_seat("great", seed=2), bot_seat("random", seed=3)]
        table = Table(client, RULES, seats, timeout_bot="great")
        assert table.play_deal(CODE).table.over
        text = table.replay_text()
        assert "timeout" not in text.split("actions")[1] and "timed out: the great bot played" in text
        assert audit_log(loads(text)).kind.value == "valid"
        local = Table(client, RULES, [bot_seat("good", seed=s, local=True) for s in range(4)])
        assert local.play_deal(CODE).table.over


# -- retries: CANCELLED for unary calls, the async stream ----------------------------------------


class _Cancelled(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.CANCELLED

    def details(self) -> str:
        return "Cancelled"

    def trailing_metadata(self) -> None:
        return None


def test_unary_calls_are_sent_again_after_cancelled() -> None:
    """gRPC answers CANCELLED to a call that reaches a server at the instant it shuts down
    (grpc/grpc#41785): the client sends it again, like UNAVAILABLE."""
    from bigtwo.v1 import service_pb2 as api

    answers: list[Any] = [_Cancelled(), _Cancelled(), api.ListPresetsResponse()]

    class Stub:
        def ListPresets(self, request: Any, **kwargs: Any) -> Any:
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer

    policy = RetryPolicy(attempts=4, initial_backoff=0.001, max_backoff=0.002)
    with BigTwoClient("127.0.0.1:1,127.0.0.1:2", retry=policy) as client:
        for endpoint in client._endpoints:
            endpoint.methods["ListPresets"] = Stub().ListPresets
        assert client.list_presets() == []
        assert client.retries_made == 2 and client.cancelled_retries == 2
        answers[:] = [_Cancelled()] * 4
        with pytest.raises(BigTwoError) as caught:
            client.list_presets()
        assert caught.value.code is grpc.StatusCode.CANCELLED, "after every attempt it surfaces"

    async def aio() -> tuple[int, int]:
        calls = [0]

        async def list_presets(request: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] == 1:
                raise grpc.aio.AioRpcError(
                    grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(), "Cancelled"
                )
            return api.ListPresetsResponse()

        async with AsyncBigTwoClient("127.0.0.1:1", retry=policy) as client:
            client._endpoints[0].methods["ListPresets"] = list_presets
            await client.list_presets()
            return client.cancelled_retries, calls[0]

    assert asyncio.run(aio()) == (1, 2)


def test_async_stream_maps_a_broken_connection_to_unavailable() -> None:
    from bigtwo.client.client import AsyncPlayStream, BigTwoInternal
    from bigtwo.v1 import service_pb2 as api

    class Call:
        def __init__(self, error: BaseException) -> None:
            self.error = error

        async def write(self, request: Any) -> None:
            raise self.error

        async def read(self) -> Any:  # pragma: no cover - write fails first
            raise AssertionError

        def cancel(self) -> None:
            pass

    def broken(details: str) -> grpc.aio.AioRpcError:
        return grpc.aio.AioRpcError(grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(), details)

    async def exchange(error: BaseException) -> BaseException:
        async with AsyncBigTwoClient("127.0.0.1:1") as client:
            stream = AsyncPlayStream(client, GameRef(RULES, deal_code=CODE), None)
            stream._call = Call(error)
            try:
                await stream._exchange(api.PlayStreamRequest())
            except BigTwoError as raised:
                return raised
            raise AssertionError("no error")

    assert isinstance(asyncio.run(exchange(asyncio.InvalidStateError("RPC already finished."))), BigTwoUnavailable)
    assert isinstance(asyncio.run(exchange(broken("Internal error from Core"))), BigTwoUnavailable)
    assert isinstance(asyncio.run(exchange(broken("a real bug (request id 1)"))), BigTwoInternal)


def test_async_stream_open_retries_until_the_server_is_up(tmp_path: Path) -> None:
    from service_support import free_port

    port = free_port()
    started: list[Server] = []
    timer = threading.Timer(1.0, lambda: started.append(Server(tmp_path, port=port)))
    timer.start()

    async def play() -> tuple[int, bool]:
        policy = RetryPolicy(attempts=40, initial_backoff=0.1, max_backoff=0.5)
        async with AsyncBigTwoClient(f"127.0.0.1:{port}", retry=policy) as client:
            stream = await client.play_stream(GameRef(RULES, deal_code=CODE))
            async with stream:
                assert stream.opened is not None
                result = await stream.move(Move.parse(stream.opened.table.to_act, "3D"))
                return result.index, result.accepted

    try:
        assert asyncio.run(play()) == (0, True)
    finally:
        timer.join()
        for srv in started:
            srv.stop()


# -- the asyncio client answers every call the sync one does -------------------------------------


def test_async_client_answers_every_call_as_the_sync_one(server: Server) -> None:
    """Both clients are made from one table (tests/test_client_api.py checks their shape); here the
    calls the asyncio client once lacked answer against a real server as the sync client's do,
    and score_counts (which could not work) settles bare counts as the engine does."""
    from bigtwo.engine import settle_with_winner

    counts = ([0, 3, 5, 13], [0, 0, 1, 2])

    def sync_answers() -> list[Any]:
        with BigTwoClient(server.target) as client:
            client.wait_ready(5)
            dealt = client.deal(RULES, deal_code=CODE)
            return [
                client.describe_ruleset(RULES),
                client.legal_moves(dealt.game),
                client.split_hand(RULES, "3D 3S 4C 5H 6S 7D"),
                client.name_cards("3D", ruleset=RULES),
                client.score_counts(RULES, *counts),
                client.replay_log(GameRef(RULES, deal_code=CODE, moves=("3D", "pass"))),
                client.settle_match(RULES, [], empty_seats=()),
            ]

    async def async_answers() -> list[Any]:
        async with AsyncBigTwoClient(server.target) as client:
            await client.wait_ready(5)
            dealt = await client.deal(RULES, deal_code=CODE)
            return [
                await client.describe_ruleset(RULES),
                await client.legal_moves(dealt.game),
                await client.split_hand(RULES, "3D 3S 4C 5H 6S 7D"),
                await client.name_cards("3D", ruleset=RULES),
                await client.score_counts(RULES, *counts),
                await client.replay_log(GameRef(RULES, deal_code=CODE, moves=("3D", "pass"))),
                await client.settle_match(RULES, [], empty_seats=()),
            ]

    def untokened(answers: list[Any]) -> list[Any]:
        """ReplayLog starts a table whose token seals random bytes of its own: all else must agree."""
        replayed = answers[5]
        return [
            *answers[:5],
            dataclasses.replace(replayed, game=dataclasses.replace(replayed.game, token=b"")),
            *answers[6:],
        ]

    expected = sync_answers()
    assert expected[4] == settle_with_winner(RULES, 0, *counts)
    assert expected[5].moves_applied == 2 and expected[5].game.token
    assert untokened(asyncio.run(async_answers())) == untokened(expected)


def test_async_wait_ready_says_why_a_target_cannot_be_reached() -> None:
    from service_support import free_port

    async def refused() -> BigTwoUnavailable:
        async with AsyncBigTwoClient(f"127.0.0.1:{free_port()}") as client:
            with pytest.raises(BigTwoUnavailable) as caught:
                await client.wait_ready(10, patient=False)
            return caught.value

    error = asyncio.run(refused())
    assert error.reason == "CONNECTION_REFUSED" and "nothing is listening" in error.message
