"""deploy/observability: every metric the alert rules and the Grafana dashboard use is one a running
``bigtwo serve`` exports (scraped over HTTP after a few real calls); plus ``bigtwo health``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from service_support import CODE, ServerProcess, free_port

OBSERVABILITY = Path(__file__).resolve().parents[1] / "deploy" / "observability"

_PROMQL_WORDS = (  # functions and aggregations, keywords and modifiers
    """
    rate irate increase delta idelta deriv sum avg min max count count_values stddev stdvar topk bottomk
    quantile histogram_quantile clamp_min clamp_max clamp abs ceil floor round exp ln log2 log10 sqrt
    label_replace label_join vector scalar time timestamp absent absent_over_time changes resets sort
    sort_desc avg_over_time min_over_time max_over_time sum_over_time count_over_time last_over_time
    quantile_over_time predict_linear holt_winters day_of_week hour minute month year
    by without on ignoring group_left group_right and or unless bool offset inf nan
    """
)
PROMQL_WORDS = set(_PROMQL_WORDS.split())
PROMETHEUS_BUILTIN = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
"""Series Prometheus itself writes for every target (not the service's to export)."""


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (a light tokenizer, enough for these files)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    text = re.sub(r"\{[^}]*\}", " ", text)  # label matchers
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)  # label lists
    text = re.sub(r"\[[^\]]*\]", " ", text)  # ranges
    text = re.sub(r"\$\{?\w+\}?", " ", text)  # Grafana variables
    text = re.sub(r"\boffset\s+\w+", " ", text)
    text = re.sub(r"(?<![\w.])\d+(\.\d+)?(e[+-]?\d+)?", " ", text)  # numbers
    names = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text))
    return {name for name in names if name.lower() not in PROMQL_WORDS}


def alert_expressions() -> dict[str, str]:
    rules = yaml.safe_load((OBSERVABILITY / "alerts.yml").read_text())
    out = {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert {"alert", "expr", "labels", "annotations"} <= set(rule), rule
            assert rule["labels"]["severity"] in {"page", "ticket"}
            assert rule["annotations"]["summary"]
            out[rule["alert"]] = rule["expr"]
    return out


def dashboard_expressions() -> dict[str, str]:
    dashboard = json.loads((OBSERVABILITY / "grafana-dashboard.json").read_text())
    out = {}
    ids = set()
    for panel in dashboard["panels"]:
        assert panel["id"] not in ids
        ids.add(panel["id"])
        for target in panel["targets"]:
            out[f"{panel['title']}/{target['refId']}"] = target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            out[f"variable {variable['name']}"] = re.sub(r"label_values\((\w+),.*", r"\1", variable["query"])
    return out


def exported_series(text: str) -> set[str]:
    """Every series name a scrape exposes, with each histogram's and counter's family names."""
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()[:4]
            names.add(name)
            if kind == "histogram":
                names.update({f"{name}_bucket", f"{name}_sum", f"{name}_count"})
            elif kind == "counter":
                names.update({name if name.endswith("_total") else f"{name}_total", f"{name}_created"})
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def test_the_expression_parser() -> None:
    expr = 'histogram_quantile(0.99, sum by (le, method) (rate(foo_bucket{method!="PlayStream"}[5m]))) > 0.05'
    assert metric_names(expr) == {"foo_bucket"}
    assert metric_names('sum(rate(a_total{x=~"b|c"}[5m] offset 1h)) / clamp_min(b_count, 1e-9)') == {
        "a_total",
        "b_count",
    }
    assert metric_names('up{job="bigtwo"} == 0') == {"up"}
    assert metric_names('rate(process_cpu_seconds_total{instance=~"$instance"}[$__rate_interval])') == {
        "process_cpu_seconds_total"
    }


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, set[str]]]:
    server = ServerProcess(tmp_path_factory.mktemp("observability"))
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = rpc.BigTwoServiceStub(channel)
            game = pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE))
            stub.ListPresets(api.ListPresetsRequest())
            dealt = stub.Deal(api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE))
            legal = stub.LegalMoves(api.LegalMovesRequest(game=game))
            first = legal.plays[0].cards.text
            stub.ApplyMove(
                api.ApplyMoveRequest(
                    game=pb.Game(state_token=dealt.state_token), move=pb.Move(index=0, seat=legal.seat, text="pass")
                )
            )  # refused: cannot pass leading
            stub.ApplyMove(
                api.ApplyMoveRequest(
                    game=pb.Game(state_token=dealt.state_token), move=pb.Move(index=0, seat=legal.seat, text=first)
                )
            )
            with pytest.raises(grpc.RpcError):
                stub.ApplyMove(api.ApplyMoveRequest(game=game, move=pb.Move(index=0, seat=9, text="3D")))
            call = stub.PlayStream(iter([api.PlayStreamRequest(open=api.StreamOpen(game=game))]))
            list(call)
        url = f"http://127.0.0.1:{server.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:  # loopback only
            text = response.read().decode()
        yield server, exported_series(text)
    finally:
        server.stop()


def test_every_alert_and_dashboard_metric_is_exported(scraped: tuple[ServerProcess, set[str]]) -> None:
    _, exported = scraped
    assert {"bigtwo_rpc_calls_total", "bigtwo_rpc_duration_seconds_bucket", "bigtwo_moves_total"} <= exported
    used: dict[str, set[str]] = {}
    for where, expr in {**alert_expressions(), **dashboard_expressions()}.items():
        for name in metric_names(expr):
            used.setdefault(name, set()).add(where)
    missing = {name: sorted(places) for name, places in used.items() if name not in exported | PROMETHEUS_BUILTIN}
    assert not missing, f"metrics the service does not export: {missing}"
    service_metrics = {name for name in used if name.startswith("bigtwo_")}
    assert len(service_metrics) >= 6, service_metrics


def test_alerts_cover_errors_latency_and_refusals() -> None:
    alerts = alert_expressions()
    joined = " ".join(alerts.values())
    assert "bigtwo_rpc_duration_seconds_bucket" in joined
    assert 'result="refused"' in joined
    assert "INTERNAL" in joined
    assert {"BigTwoServerErrors", "BigTwoHighLatency", "BigTwoRefusalSpike"} <= set(alerts)
    for expr in alerts.values():
        assert expr.count("(") == expr.count(")"), expr


def test_bigtwo_health_exit_status(scraped: tuple[ServerProcess, set[str]]) -> None:
    server, _ = scraped
    command = [sys.executable, "-m", "bigtwo.cli.main", "health", "--target", server.target]

    def run(*extra: str) -> Any:
        return subprocess.run([*command, *extra], capture_output=True, text=True, timeout=30)

    ok = run()
    assert ok.returncode == 0 and "SERVING" in ok.stdout
    assert run("--service", "bigtwo.v1.BigTwoService", "--quiet").returncode == 0
    unknown = run("--service", "no.such.Service")
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr

    nobody = subprocess.run(
        [*command[:-1], f"127.0.0.1:{free_port()}", "--timeout", "0.5"], capture_output=True, text=True, timeout=30
    )
    assert nobody.returncode == 1


def test_each_log_line_is_one_write_so_workers_never_interleave(monkeypatch: pytest.MonkeyPatch) -> None:
    # Worker processes share stdout; with unbuffered output (PYTHONUNBUFFERED=1, as in the image)
    # a line written in two parts could be cut by another worker's line.
    import structlog
    from bigtwo.service import telemetry

    class Recorder:
        def __init__(self) -> None:
            self.writes: list[str] = []

        def write(self, text: str) -> int:
            self.writes.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    recorder = Recorder()
    monkeypatch.setattr(sys, "stdout", recorder)
    try:
        telemetry.configure_logging("info")
        telemetry.logger().info("rpc", method="ListPresets", code="OK")
        telemetry.logger().info("rpc", method="Deal", code="OK")
    finally:
        structlog.reset_defaults()
    assert len(recorder.writes) == 2
    for text in recorder.writes:
        assert text.endswith("\n") and text.count("\n") == 1
        assert json.loads(text)["event"] == "rpc"


def test_cache_figures_follow_the_caches() -> None:
    # The collector reads cache_stats() at each scrape: a cache filled past its capacity shows its
    # entries, misses and clears under its owner's name, in the registry /metrics serves.
    from bigtwo.engine.cache import BoundedCache
    from bigtwo.service import telemetry, tokens
    from prometheus_client import REGISTRY, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    cache: BoundedCache[int, int] = BoundedCache("tests.observability.figures", 3)
    for key in range(5):
        cache.put(key, key)
    samples = {
        (sample.name, sample.labels.get("cache")): sample.value
        for family in text_string_to_metric_families(generate_latest(REGISTRY).decode())
        for sample in family.samples
    }
    owner = "tests.observability.figures"
    assert samples[("bigtwo_cache_entries", owner)] == 2
    assert samples[("bigtwo_cache_capacity", owner)] == 3
    assert samples[("bigtwo_cache_misses_total", owner)] == 5
    assert samples[("bigtwo_cache_clears_total", owner)] == 1
    assert samples[("bigtwo_cache_capacity", "service.tokens.identities")] == tokens._IDENTITIES.capacity
    assert telemetry.CACHES in REGISTRY._collector_to_names


# -- counted as it happens, at zero from the start, the drain -------------------------------------------------


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a /metrics page, by name and labels (prometheus-client's own parser)."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:  # loopback only
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    """The sample of ``name`` with exactly ``labels``; KeyError when the series does not exist."""
    return samples[(name, frozenset(labels.items()))]


def total(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)


def call_lines(server: ServerProcess, method: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == "rpc" and line.get("method") == method]


def health_status(target: str) -> str:
    from bigtwo.cli.health_cmd import check

    return check(target, timeout=2.0)


def open_stream(stub: Any) -> tuple[Any, Any]:
    """A PlayStream on the classic deal CODE: (the queue its requests are put on, its answers)."""
    import queue

    requests: queue.Queue[Any] = queue.Queue()

    def feed() -> Iterator[Any]:
        while (item := requests.get()) is not None:
            yield item

    game = pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE))
    requests.put(api.PlayStreamRequest(open=api.StreamOpen(game=game)))
    answers = stub.PlayStream(feed())
    assert next(answers).opened.deal_code == CODE
    return requests, answers


def play_moves(requests: Any, answers: Any, deal: Any, count: int) -> None:
    for _ in range(count):
        move = deal.legal_moves()[0]
        requests.put(
            api.PlayStreamRequest(
                move=api.StreamMove(move=pb.Move(index=deal.moves_made, seat=move.seat, text=str(move)))
            )
        )
        assert next(answers).move_result.outcome.accepted
        deal.do(move)


def engine_deal() -> Any:
    from bigtwo.engine import Deal, DealCode, deal_from_code, preset

    rules = preset("classic")
    return Deal.start(rules, deal_from_code(DealCode.parse(CODE), rules))


def test_moves_counted_as_judged_and_health_not_serving_from_the_drain(tmp_path: Path) -> None:
    web_port = free_port()
    server = ServerProcess(tmp_path, "--web-port", str(web_port))
    try:
        fresh = scrape(server.metrics_port)
        # Every series an alert or a panel reads exists at zero before any call.
        # Each protocol's series (grpc; grpc_web and connect as the browser port is on) exists too.
        for method in ("ApplyMove", "PlayStream", "Deal"):
            for code in ("OK", "INTERNAL", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "UNAVAILABLE", "UNIMPLEMENTED"):
                for protocol in ("grpc", "grpc_web", "connect"):
                    assert value(fresh, "bigtwo_rpc_calls_total", method=method, code=code, protocol=protocol) == 0
        for result in ("accepted", "refused", "malformed"):
            assert value(fresh, "bigtwo_moves_total", result=result, reason="") == 0
        assert value(fresh, "bigtwo_moves_total", result="refused", reason="cannot-pass-leading") == 0
        assert value(fresh, "bigtwo_move_duration_seconds_count", method="PlayStream") == 0
        assert value(fresh, "bigtwo_deals_started_total", preset="classic") == 0
        assert value(fresh, "bigtwo_serving") == 1

        channel = grpc.insecure_channel(server.target)
        stub = rpc.BigTwoServiceStub(channel)
        # A stream ended by a malformed move: one malformed move message, one INVALID_ARGUMENT call.
        requests, answers = open_stream(stub)
        requests.put(api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=0, seat=9, text="3D"))))
        with pytest.raises(grpc.RpcError) as malformed:
            next(answers)
        assert malformed.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        requests.put(None)
        # A stream kept open: its moves are counted while it lasts.
        requests, answers = open_stream(stub)
        deal = engine_deal()
        play_moves(requests, answers, deal, 3)
        during = scrape(server.metrics_port)
        assert value(during, "bigtwo_moves_total", result="accepted", reason="") == 3
        assert value(during, "bigtwo_moves_total", result="malformed", reason="") == 1
        assert value(during, "bigtwo_move_duration_seconds_count", method="PlayStream") == 4
        assert value(during, "bigtwo_deals_started_total", preset="classic") == 2
        stream_calls = {"method": "PlayStream", "protocol": "grpc"}
        assert value(during, "bigtwo_rpc_calls_total", code="INVALID_ARGUMENT", **stream_calls) == 1
        assert value(during, "bigtwo_rpc_calls_total", code="OK", **stream_calls) == 0, "still open"
        assert value(during, "bigtwo_open_streams") == 1
        assert value(during, "bigtwo_event_loop_lag_seconds_count") > 0
        # Every memo's figures, read at the scrape: the moves just answered filled the outcome parts.
        assert value(fresh, "bigtwo_cache_entries", cache="service.wire.small_events") == 0
        assert value(during, "bigtwo_cache_capacity", cache="service.wire.outcomes") == 8192
        assert value(during, "bigtwo_cache_entries", cache="service.wire.outcomes") >= 1
        assert value(during, "bigtwo_cache_misses_total", cache="service.wire.outcomes") >= 1
        assert value(during, "bigtwo_cache_clears_total", cache="service.wire.outcomes") == 0

        server.terminate()
        for _ in range(200):  # bounded: the drain is logged once health says NOT_SERVING
            if '"draining"' in server.log() or server.process.poll() is not None:
                break
            time.sleep(0.05)
        assert '"draining"' in server.log()
        assert health_status(server.target) == "NOT_SERVING"
        with grpc.insecure_channel(server.target) as other, pytest.raises(grpc.RpcError) as refused:
            rpc.BigTwoServiceStub(other).ListPresets(api.ListPresetsRequest(), timeout=5)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        # The browser port drains with it: the same refusal, counted the same way.
        web_call = urllib.request.Request(
            f"http://127.0.0.1:{web_port}/bigtwo.v1.BigTwoService/ListPresets",
            data=b"{}",
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as web_refused:
            urllib.request.urlopen(web_call, timeout=5)
        assert web_refused.value.code == 503 and b'"unavailable"' in web_refused.value.read()
        draining = scrape(server.metrics_port)
        assert value(draining, "bigtwo_serving") == 0
        for protocol in ("grpc", "connect"):  # one refusal on each port, each counted by its protocol
            labels = {"method": "ListPresets", "code": "UNAVAILABLE", "protocol": protocol}
            assert value(draining, "bigtwo_rpc_calls_total", **labels) == 1, protocol
        play_moves(requests, answers, deal, 1)  # the open stream goes on
        requests.put(None)
        assert list(answers) == []
        channel.close()
        assert server.process.wait(timeout=20) == 0
        codes = [line["code"] for line in call_lines(server, "PlayStream")]
        assert codes == ["INVALID_ARGUMENT", "OK"]
    finally:
        server.stop()


def test_a_stream_cut_at_shutdown_is_not_ok(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--grace", "0.5")
    try:
        channel = grpc.insecure_channel(server.target)
        requests, answers = open_stream(rpc.BigTwoServiceStub(channel))
        play_moves(requests, answers, engine_deal(), 2)
        server.terminate()
        assert server.process.wait(timeout=20) == 0  # the grace passed with the stream open: it was cut
        with pytest.raises(grpc.RpcError):
            next(answers)
        requests.put(None)
        channel.close()
        (line,) = call_lines(server, "PlayStream")
        assert line["code"] == "CANCELLED" and line["moves"] == 2
    finally:
        server.stop()


def test_workers_export_each_process_cpu_and_memory(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, "--workers", "2")
    try:
        for _ in range(200):  # bounded: both workers have started serving
            samples = scrape(server.metrics_port)
            if value(samples, "bigtwo_serving") == 2:
                break
            time.sleep(0.05)
        processes = {dict(labels)["process"] for name, labels in samples if name == "process_cpu_seconds_total"}
        assert processes == {"main", "worker-1", "worker-2"}
        assert total(samples, "process_resident_memory_bytes", process="worker-1") > 0
        assert value(samples, "bigtwo_serving") == 2
        assert total(samples, "bigtwo_rpc_calls_total", method="ApplyMove", code="INTERNAL") == 0
    finally:
        server.stop()


def test_bigtwo_health_wait_asks_again_until_serving(tmp_path: Path) -> None:
    """``--wait`` keeps asking a port nobody serves yet, and answers once a server starts there;
    when none ever does, the exit status and sentence are those of one question."""

    port = free_port()
    command = [sys.executable, "-m", "bigtwo.cli.main", "health", "--target", f"127.0.0.1:{port}", "--timeout", "0.5"]
    once = subprocess.run(command, capture_output=True, text=True, timeout=60)
    gave_up = subprocess.run([*command, "--wait", "0.5"], capture_output=True, text=True, timeout=60)
    assert once.returncode == gave_up.returncode == 1 and gave_up.stderr == once.stderr
    assert "cannot reach the service" in gave_up.stderr
    waiting = subprocess.Popen([*command, "--wait", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server = None
    try:
        with pytest.raises(subprocess.TimeoutExpired):  # nothing serves the port: it keeps asking
            waiting.wait(timeout=2)
        server = ServerProcess(tmp_path, "--port", str(port), metrics=False, wait=False)  # the last --port counts
        out, err = waiting.communicate(timeout=150)
        assert waiting.returncode == 0, err
        assert f"127.0.0.1:{port} (server): SERVING" in out
    finally:
        waiting.kill()
        waiting.wait()
        if server is not None:
            server.stop()
