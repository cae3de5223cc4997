"""Debian's Prometheus against local ``bigtwo serve`` replicas, on 127.0.0.1 only: a Prometheus
process with its data in a temporary folder (:class:`Prometheus`), the shipped alert rules with
short ``for:`` durations (:func:`quick_rules`), the dashboard's queries as Prometheus takes them
(:func:`dashboard_queries`) and a short mixed load of streams and unary calls (:class:`Load`).
Used by tests/test_prometheus_live.py and tests/tools/dashboard_screenshot.py."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import yaml
from bigtwo.engine import Deal, DealCode, deal_from_code, preset
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb
from service_support import free_port

OBSERVABILITY = Path(__file__).resolve().parents[1] / "deploy" / "observability"


def quick_rules(target: Path, seconds: str = "1s") -> Path:
    """The shipped alert rules with every ``for:`` cut to ``seconds`` (a test cannot wait minutes)."""
    document = yaml.safe_load((OBSERVABILITY / "alerts.yml").read_text())
    for group in document["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = seconds
    target.write_text(yaml.safe_dump(document, sort_keys=False))
    return target


def dashboard_queries(rate_interval: str) -> dict[str, str]:
    """Each dashboard panel's queries, keyed "panel/refId", with Grafana's variables filled in
    (every replica; ``$__rate_interval`` as given)."""
    dashboard = json.loads((OBSERVABILITY / "grafana-dashboard.json").read_text())
    out = {}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = target["expr"].replace("$instance", ".*").replace("$__rate_interval", rate_interval)
            out[f"{panel['title']}/{target['refId']}"] = expr
    return out


class Prometheus:
    """``prometheus`` scraping ``targets`` (job ``bigtwo``) every ``interval``, evaluating ``rules``
    as often; its data and log in ``folder``. :meth:`stop` always ends it."""

    def __init__(self, folder: Path, targets: list[str], rules: Path, interval: str = "1s") -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            raise FileNotFoundError("prometheus is missing: run `make prometheus`")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = {
            "global": {"scrape_interval": interval, "scrape_timeout": interval, "evaluation_interval": interval},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": "bigtwo", "static_configs": [{"targets": targets}]}],
        }
        config_path = folder / "prometheus.yml"
        config_path.write_text(yaml.safe_dump(config))
        self.log_path = folder / "prometheus.log"
        self.log_file = self.log_path.open("w")
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited {self.process.returncode}: {self.log_path.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:  # loopback only
                    if response.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"prometheus not ready: {self.log_path.read_text()}")
            time.sleep(0.2)

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as response:  # loopback only
            body = json.loads(response.read())
        if body.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's samples (each ``{"metric": {...}, "value": [time, "text"]}``)."""
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", data
        return list(data["result"])

    def firing(self, alertname: str) -> list[dict[str, str]]:
        """The labels of each firing alert named ``alertname``."""
        return [
            alert["labels"]
            for alert in self.api("alerts")["alerts"]
            if alert["labels"]["alertname"] == alertname and alert["state"] == "firing"
        ]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_file.close()


def _deal(code: str) -> Deal:
    rules = preset("classic")
    return Deal.start(rules, deal_from_code(DealCode.parse(code), rules))


class Load:
    """Games played against ``targets`` by one thread each until :meth:`stop`: whole deals over
    PlayStream with a refused move now and then and a stream ended by a malformed move every few
    games, plus unary Deal, LegalMoves and ApplyMove calls. Bounded by ``seconds`` in any case."""

    def __init__(self, targets: list[str], seconds: float, seed: int = 1) -> None:
        self.stopping = threading.Event()
        self.deadline = time.monotonic() + seconds
        self.games = 0
        self.errors: list[str] = []
        self.threads = [
            threading.Thread(target=self._run, args=(target, random.Random(seed + n)), daemon=True)
            for n, target in enumerate(targets)
        ]
        for thread in self.threads:
            thread.start()

    def _going(self) -> bool:
        return not self.stopping.is_set() and time.monotonic() < self.deadline

    def _run(self, target: str, rng: random.Random) -> None:
        with grpc.insecure_channel(target) as channel:
            stub = rpc.BigTwoServiceStub(channel)
            number = 0
            while self._going():
                number += 1
                try:
                    self._game(stub, str(DealCode(rng.randrange(1 << 40))), rng, malformed=number % 4 == 0)
                    self.games += 1
                except grpc.RpcError as error:
                    if error.code() is not grpc.StatusCode.UNAVAILABLE:  # a replica stopped meanwhile
                        self.errors.append(f"{target}: {error.code().name} {error.details()}")
                    time.sleep(0.1)

    def _game(self, stub: Any, code: str, rng: random.Random, *, malformed: bool) -> None:
        ruleset = pb.Ruleset(preset="classic")
        dealt = stub.Deal(api.DealRequest(ruleset=ruleset, deal_code=code), timeout=5)
        stub.LegalMoves(api.LegalMovesRequest(game=pb.Game(state_token=dealt.state_token)), timeout=5)
        deal = _deal(code)
        first = deal.legal_moves()[0]
        stub.ApplyMove(
            api.ApplyMoveRequest(
                game=pb.Game(state_token=dealt.state_token),
                move=pb.Move(index=0, seat=first.seat, text=str(first)),
            ),
            timeout=5,
        )
        messages: list[api.PlayStreamRequest] = []
        game = pb.Game(log=pb.GameLog(ruleset=ruleset, deal_code=code))
        messages.append(api.PlayStreamRequest(open=api.StreamOpen(game=game)))
        cut = rng.randrange(5, 30) if malformed else -1
        while not deal.over and len(messages) != cut:
            move = rng.choice(deal.legal_moves())
            if rng.random() < 0.1:  # the wrong seat: refused, not-your-turn
                other = (move.seat + 1) % deal.players
                messages.append(_move(deal.moves_made, other, str(move)))
            messages.append(_move(deal.moves_made, move.seat, str(move)))
            deal.do(move)
        if malformed:
            messages.append(_move(deal.moves_made, 9, "3D"))
        try:
            for _ in stub.PlayStream(iter(messages), timeout=10):
                pass
        except grpc.RpcError as error:
            if not (malformed and error.code() is grpc.StatusCode.INVALID_ARGUMENT):
                raise

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=15)


def _move(index: int, seat: int, text: str) -> api.PlayStreamRequest:
    return api.PlayStreamRequest(move=api.StreamMove(move=pb.Move(index=index, seat=seat, text=text)))
