"""A real ``bigtwo serve`` on 127.0.0.1 in subprocesses: whole deals over unary calls and over the
stream, one deal alternating between two server processes, bad input of every kind, health,
reflection, metrics, SIGTERM while a stream is open, a taken port, bearer auth, the vectors runner."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bigtwo.engine import Deal, DealCode, deal_from_code, preset
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from service_support import CODE, KEY_A, ServerProcess, details, free_port

pytestmark = pytest.mark.timeout(120)
CLASSIC = pb.Ruleset(preset="classic")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    tmp = tmp_path_factory.mktemp("servers")
    started: list[ServerProcess] = []
    try:
        # Two processes of the one mode (aio) sharing a key: a game moves between them (stateless).
        started.append(ServerProcess(tmp, wait=False))
        started.append(ServerProcess(tmp, metrics=False, wait=False))
        for server in started:
            server.wait_ready()
        yield started[0], started[1]
    finally:
        for server in started:
            server.stop()


@pytest.fixture(scope="module")
def stubs(servers: tuple[ServerProcess, ServerProcess]) -> Iterator[tuple[Any, Any]]:
    channels = [grpc.insecure_channel(server.target) for server in servers]
    yield tuple(rpc.BigTwoServiceStub(channel) for channel in channels)  # type: ignore[misc]
    for channel in channels:
        channel.close()


def engine_deal() -> Deal:
    rules = preset("classic")
    return Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))


def test_whole_deal_alternating_between_two_processes(stubs: tuple[Any, Any]) -> None:
    """Stateless proof: even moves go to the first process, odd ones to the second."""
    reply = stubs[0].Deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE))
    token, engine = reply.state_token, engine_deal()
    while not engine.over:
        move = engine.legal_moves()[0]
        stub = stubs[engine.moves_made % 2]
        answer = stub.ApplyMove(
            api.ApplyMoveRequest(
                game=pb.Game(state_token=token), move=pb.Move(index=engine.moves_made, seat=move.seat, text=str(move))
            )
        )
        assert answer.outcome.accepted
        engine.do(move)
        token = answer.state_token
        # a lost answer retried on the other process is answered identically
        if engine.moves_made == 7:
            again = stubs[engine.moves_made % 2].ApplyMove(
                api.ApplyMoveRequest(
                    game=pb.Game(state_token=token), move=pb.Move(index=6, seat=move.seat, text=str(move))
                )
            )
            assert again == answer
    assert answer.table.over and list(answer.table.scores) == list(engine.scores)
    score = stubs[1].ScoreDeal(api.ScoreDealRequest(game=pb.Game(state_token=token)))
    assert list(score.scores) == list(engine.scores)


def feed(requests: queue.Queue[Any]) -> Iterator[Any]:
    while (item := requests.get()) is not None:
        yield item


def test_whole_deal_over_the_stream(stubs: tuple[Any, Any]) -> None:
    for stub in stubs:
        engine = engine_deal()
        requests: queue.Queue[Any] = queue.Queue()

        log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
        requests.put(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log), view_seat=1)))
        responses = stub.PlayStream(feed(requests))
        opened = next(responses).opened
        assert opened.view.hand.mask == engine.hands[1]
        assert [h.mask for h in opened.events[0].deal_started.hands] == [0, engine.hands[1], 0, 0]
        events = 0
        while not engine.over:
            move = engine.legal_moves()[-1] if engine.moves_made % 3 else engine.legal_moves()[0]
            requests.put(
                api.PlayStreamRequest(
                    move=api.StreamMove(move=pb.Move(index=engine.moves_made, seat=move.seat, text=str(move)))
                )
            )
            result = next(responses).move_result
            engine.do(move)
            assert result.outcome.accepted and result.table.moves_made == engine.moves_made
            assert result.view.hand.mask == engine.hands[1]
            events += len(result.events)
        assert result.table.over and any(e.HasField("deal_ended") for e in result.events)
        requests.put(None)
        assert list(responses) == []
        assert events >= engine.moves_made


def test_bad_input_gets_clear_statuses(stubs: tuple[Any, Any], servers: tuple[ServerProcess, ServerProcess]) -> None:
    for stub, server in zip(stubs, servers, strict=True):
        token = stub.Deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE)).state_token
        seat = engine_deal().to_act
        tampered = bytearray(token)
        tampered[20] ^= 0x40
        with pytest.raises(grpc.RpcError) as caught:
            stub.ApplyMove(
                api.ApplyMoveRequest(
                    game=pb.Game(state_token=bytes(tampered)), move=pb.Move(index=0, seat=seat, text="3D")
                )
            )
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert details(caught.value) == {
            "fields": ["game.state_token"],
            "reason": "TOKEN_BAD_SIGNATURE",
            "metadata": {},
        }
        with pytest.raises(grpc.RpcError) as caught:
            stub.ApplyMove(
                api.ApplyMoveRequest(game=pb.Game(state_token=token), move=pb.Move(index=3, seat=seat, text="3D"))
            )
        assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert details(caught.value)["reason"] == "WRONG_MOVE_INDEX"
        bad_card = stub.ApplyMove(
            api.ApplyMoveRequest(game=pb.Game(state_token=token), move=pb.Move(index=0, seat=seat, text="3X"))
        )
        assert bad_card.outcome.refusal.reason == pb.REASON_BAD_CARD
        with pytest.raises(grpc.RpcError) as caught:
            stub.LegalMoves(api.LegalMovesRequest(position=api.HandPosition(ruleset=CLASSIC, hand="3D 9Q")))
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert details(caught.value)["fields"] == ["position.hand"]
        huge = api.SplitHandRequest(ruleset=CLASSIC, hand="3D " * 700_000)
        with pytest.raises(grpc.RpcError) as caught:
            stub.SplitHand(huge)
        assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        with pytest.raises(grpc.RpcError) as caught:
            stub.SplitHand(api.SplitHandRequest(ruleset=CLASSIC, hand="3D " * 1000))
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        channel = grpc.insecure_channel(server.target)
        for method in ("ApplyMove", "Deal", "ListPresets"):
            raw = channel.unary_unary(f"/bigtwo.v1.BigTwoService/{method}")
            with pytest.raises(grpc.RpcError) as caught:
                raw(b"\xff\xfe garbage \x00\x01", timeout=10)
            assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT, method
        raw_stream = channel.stream_stream("/bigtwo.v1.BigTwoService/PlayStream")
        with pytest.raises(grpc.RpcError) as caught:
            list(raw_stream(iter([b"\xff\xff\xff\xff"]), timeout=10))
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        moves_first = channel.stream_stream(
            "/bigtwo.v1.BigTwoService/PlayStream", request_serializer=api.PlayStreamRequest.SerializeToString
        )
        with pytest.raises(grpc.RpcError) as caught:
            list(moves_first(iter([api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=0)))]), timeout=10))
        assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        channel.close()
        log = server.log()
        assert "Traceback" not in log and '"code": "INTERNAL"' not in log and '"code": "UNKNOWN"' not in log


def test_call_logs_are_json_without_hidden_hands(
    servers: tuple[ServerProcess, ServerProcess], stubs: tuple[Any, Any]
) -> None:
    dealt = stubs[0].Deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE), metadata=(("x-request-id", "req-12345"),))
    calls: list[dict[str, Any]] = []
    for _ in range(300):  # the call's log line follows its answer: wait for it, bounded
        lines = [json.loads(line) for line in servers[0].log().splitlines() if line.startswith("{")]
        calls = [line for line in lines if line.get("request_id") == "req-12345" and line.get("event") == "rpc"]
        if calls:
            break
        time.sleep(0.1)
    mine = [line for line in calls if line.get("request_id") == "req-12345"]
    assert mine and mine[0]["method"] == "Deal" and mine[0]["code"] == "OK"
    assert mine[0]["deal"] == dealt.table.deal_id and CODE not in servers[0].log(), "logs name deals opaquely"
    assert "duration_ms" in mine[0]
    hand = " ".join(str(card) for card in engine_deal().hand(0))
    assert hand not in servers[0].log()


def test_health_reflection_and_metrics(servers: tuple[ServerProcess, ServerProcess], stubs: tuple[Any, Any]) -> None:
    server = servers[0]
    channel = grpc.insecure_channel(server.target)
    health = health_pb2_grpc.HealthStub(channel)
    for name in ("", "bigtwo.v1.BigTwoService"):
        assert (
            health.Check(health_pb2.HealthCheckRequest(service=name)).status == health_pb2.HealthCheckResponse.SERVING
        )
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = list(reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
    names = {service.name for service in replies[0].list_services_response.service}
    assert {"bigtwo.v1.BigTwoService", "grpc.health.v1.Health"} <= names
    symbol = list(
        reflection.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol="bigtwo.v1.BigTwoService")])
        )
    )
    assert symbol[0].file_descriptor_response.file_descriptor_proto
    channel.close()
    stubs[0].ApplyMove(
        api.ApplyMoveRequest(
            game=pb.Game(state_token=stubs[0].Deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE)).state_token),
            move=pb.Move(index=0, seat=0, text="pass"),
        )
    )
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).read().decode()
    assert 'bigtwo_rpc_calls_total{code="OK",method="Deal",protocol="grpc"}' in text
    assert "bigtwo_rpc_duration_seconds_bucket" in text
    assert 'bigtwo_moves_total{reason="' in text
    assert 'bigtwo_deals_started_total{preset="classic"}' in text
    assert "bigtwo_open_streams" in text


def test_sigterm_drains_an_open_stream_and_auth(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--auth-token", "s3cret-bearer-0123456789", metrics=False)
    try:
        channel = grpc.insecure_channel(server.target)
        stub = rpc.BigTwoServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.ListPresets(api.ListPresetsRequest())
        assert caught.value.code() is grpc.StatusCode.UNAUTHENTICATED
        auth = (("authorization", "Bearer s3cret-bearer-0123456789"),)
        assert stub.ListPresets(api.ListPresetsRequest(), metadata=auth).presets
        for doubled in ((*auth, ("authorization", "Bearer wrong")), (("authorization", "Bearer wrong"), *auth)):
            with pytest.raises(grpc.RpcError) as caught:
                stub.ListPresets(api.ListPresetsRequest(), metadata=doubled)
            assert caught.value.code() is grpc.StatusCode.UNAUTHENTICATED, "two credentials: neither decides"
        requests: queue.Queue[Any] = queue.Queue()

        def feed() -> Iterator[Any]:
            while (item := requests.get()) is not None:
                yield item

        log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE)
        requests.put(api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(log=log))))
        responses = stub.PlayStream(feed(), metadata=auth)
        assert next(responses).opened.deal_code == CODE
        engine = engine_deal()
        server.terminate()  # SIGTERM while the stream is open
        time.sleep(0.5)
        for _ in range(3):  # the stream goes on within the grace period
            move = engine.legal_moves()[0]
            requests.put(
                api.PlayStreamRequest(
                    move=api.StreamMove(move=pb.Move(index=engine.moves_made, seat=move.seat, text=str(move)))
                )
            )
            assert next(responses).move_result.outcome.accepted
            engine.do(move)
        requests.put(None)
        assert list(responses) == []
        channel.close()
        assert server.process.wait(timeout=10) == 0
        log = server.log()
        assert '"draining"' in log and '"stopped"' in log and "Traceback" not in log
    finally:
        server.stop()


def test_a_taken_port_fails_loudly(servers: tuple[ServerProcess, ServerProcess], tmp_path: Path) -> None:
    taken = servers[0].port
    command = [sys.executable, "-m", "bigtwo.cli.main", "serve", "--port", str(taken), "--metrics-port", "0"]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        env={**dict(__import__("os").environ), "BIGTWO_TOKEN_KEYS": KEY_A, "BIGTWO_HOME": str(tmp_path)},
    )
    assert proc.returncode == 1
    assert "already in use" in proc.stderr and str(taken) in proc.stderr and "Traceback" not in proc.stderr


def test_vectors_through_the_service(servers: tuple[ServerProcess, ServerProcess]) -> None:
    command = [
        sys.executable,
        "-m",
        "bigtwo.cli.main",
        "vectors",
        str(ROOT / "tests" / "vectors"),
        "--target",
        servers[0].target,
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed")


def test_dev_key_is_made_once(tmp_path: Path) -> None:
    env = {"BIGTWO_TOKEN_KEYS": ""}
    first = ServerProcess(tmp_path, metrics=False, keys="", env=env)
    try:
        assert "development signing key" in first.log()
    finally:
        first.stop()
    key_file = tmp_path / "home" / "dev-signing-key"
    secret = key_file.read_text()
    second = ServerProcess(tmp_path, metrics=False, keys="", env=env)
    second.stop()
    assert key_file.read_text() == secret and oct(key_file.stat().st_mode)[-3:] == "600"


def test_workers_share_the_port_and_metrics(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--workers", "2")
    try:
        channels = [
            grpc.insecure_channel(server.target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(4)
        ]
        for channel in channels:
            assert rpc.BigTwoServiceStub(channel).ListPresets(api.ListPresetsRequest()).presets
        deadline = time.monotonic() + 60
        while True:
            text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).read().decode()
            line = next(
                (
                    x
                    for x in text.splitlines()
                    if x.startswith('bigtwo_rpc_calls_total{code="OK",method="ListPresets",protocol="grpc"}')
                ),
                "",
            )
            if (line and float(line.split()[-1]) >= 4) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert float(line.split()[-1]) >= 4
        for channel in channels:
            channel.close()
        for _ in range(300):  # bounded: on a loaded machine the second worker may still be starting
            pids = {json.loads(x)["pid"] for x in server.log().splitlines() if '"serving"' in x}
            if len(pids) == 2:
                break
            time.sleep(0.2)
        assert len(pids) == 2
    finally:
        assert server.stop() == 0


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.mark.skipif(__import__("shutil").which("openssl") is None, reason="openssl is not installed")
def test_mutual_tls(tmp_path: Path) -> None:
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=bigtwo test CA",
        cwd=tmp_path,
    )
    (tmp_path / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client"):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=tmp_path,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "2",
            "-extfile",
            "san.cnf",
            cwd=tmp_path,
        )
    server = ServerProcess(
        tmp_path,
        "--tls-cert",
        str(tmp_path / "server.pem"),
        "--tls-key",
        str(tmp_path / "server.key"),
        "--tls-client-ca",
        str(tmp_path / "ca.pem"),
        metrics=False,
        wait=False,
    )
    try:
        ca = (tmp_path / "ca.pem").read_bytes()
        good = grpc.ssl_channel_credentials(
            ca, (tmp_path / "client.key").read_bytes(), (tmp_path / "client.pem").read_bytes()
        )
        channel = grpc.secure_channel(server.target, good)
        grpc.channel_ready_future(channel).result(timeout=30)
        assert rpc.BigTwoServiceStub(channel).ListPresets(api.ListPresetsRequest(), timeout=10).presets
        channel.close()
        no_client_cert = grpc.secure_channel(server.target, grpc.ssl_channel_credentials(ca))
        with pytest.raises(grpc.RpcError) as caught:
            rpc.BigTwoServiceStub(no_client_cert).ListPresets(api.ListPresetsRequest(), timeout=5)
        assert caught.value.code() is grpc.StatusCode.UNAVAILABLE
        no_client_cert.close()
        assert '"mutual_tls": true' in server.log()
    finally:
        server.stop()


def test_bot_move_and_audit_log_on_real_servers(
    stubs: tuple[Any, Any], servers: tuple[ServerProcess, ServerProcess]
) -> None:
    """BotMove plays a whole deal on both processes (off the event loop); AuditLog checks
    the deal's log and a replay file signed with the servers' key."""
    from bigtwo.engine.replay import dumps, loads, sign

    levels = ["great", "random", "pro", "good"]
    for stub in stubs:
        reply = stub.Deal(api.DealRequest(ruleset=CLASSIC, deal_code=CODE))
        token, table, moves = reply.state_token, reply.table, []
        while not table.over:
            level = levels[table.to_act]
            request = api.BotMoveRequest(game=pb.Game(state_token=token), level=level, seed=len(moves))
            if level == "pro":
                request.simulations = 40
            chosen = stub.BotMove(request, timeout=30)
            assert chosen.level == level and chosen.move.index == table.moves_made
            applied = stub.ApplyMove(api.ApplyMoveRequest(game=pb.Game(state_token=token), move=chosen.move))
            assert applied.outcome.accepted
            token, table = applied.state_token, applied.table
            moves.append(chosen.move.text)
        with pytest.raises(grpc.RpcError) as caught:
            stub.BotMove(api.BotMoveRequest(game=pb.Game(state_token=token), level="great"))
        assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.RpcError) as caught:
            stub.BotMove(api.BotMoveRequest(game=pb.Game(state_token=token), level="wizard"))
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT and "valid levels" in caught.value.details()
        log = pb.GameLog(ruleset=CLASSIC, deal_code=CODE, moves=moves)
        verdict = stub.AuditLog(api.AuditLogRequest(game_log=log, want_steps=True, view_seat=0))
        assert verdict.kind == api.VERDICT_KIND_VALID and verdict.signature == "unsigned"
        assert verdict.steps[-1].deal_over and verdict.steps[-1].winner == table.winner
        text = (ROOT / "tests" / "golden" / "match-4-deals.toml").read_text()
        signed = dumps(sign(loads(text), KEY_A.encode()))
        verdict = stub.AuditLog(api.AuditLogRequest(replay_toml=signed, require_signature=True))
        assert verdict.kind == api.VERDICT_KIND_VALID and verdict.signature == "valid", verdict.problems
        assert verdict.deals_checked == 4
        tampered = stub.AuditLog(api.AuditLogRequest(replay_toml=signed.replace('"p2 pass"', '"p2 2S"', 1)))
        assert tampered.kind == api.VERDICT_KIND_ILLEGAL_MOVE
    for server in servers:
        log = server.log()
        assert "Traceback" not in log and '"code": "INTERNAL"' not in log
        assert '"method": "BotMove"' in log and '"method": "AuditLog"' in log


@pytest.mark.parametrize("token", ["", "   ", "short"])
def test_an_unusable_auth_token_is_refused_at_start(tmp_path: Path, token: str) -> None:
    """An empty --auth-token (or BIGTWO_AUTH_TOKEN='') must not turn authentication off silently."""
    port = str(free_port())
    command = [sys.executable, "-m", "bigtwo.cli.main", "serve", "--port", port, "--metrics-port", "0"]
    env = {**os.environ, "BIGTWO_TOKEN_KEYS": KEY_A, "BIGTWO_HOME": str(tmp_path)}
    by_flag = subprocess.run([*command, "--auth-token", token], env=env, capture_output=True, text=True, timeout=60)
    assert by_flag.returncode == 2 and "--auth-token" in by_flag.stdout + by_flag.stderr
    by_env = subprocess.run(
        command, env={**env, "BIGTWO_AUTH_TOKEN": token}, capture_output=True, text=True, timeout=60
    )
    assert by_env.returncode == 2 and "--auth-token" in by_env.stdout + by_env.stderr
