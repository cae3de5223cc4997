"""Every mistake a newcomer makes with the ``bigtwo`` command ends in one or two sentences on
stderr naming what to change, exit status 2 (usage) or 1 (failure), and never a traceback.

One table, one row per mistake, every subcommand: each row runs the installed ``bigtwo`` in a
subprocess (``HOME`` and ``BIGTWO_HOME`` in a temporary folder, no ``BIGTWO_*`` variable but the
row's own) against servers on 127.0.0.1 made for the purpose: nothing listening, a socket that
never answers, an HTTP/1 server, a gRPC server that is no Big Two service (plain and TLS), and a
real ``bigtwo serve`` that asks for a bearer token.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from client_support import BIGTWO, Server, make_pki
from grpc_health.v1 import health, health_pb2_grpc
from service_support import free_port

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden" / "classic-4p.toml"
VECTORS = TESTS / "vectors"
TOKEN = "cli-errors-token-" + "t" * 20
GUARD_SECONDS = 120
"""Only against a hang: a row that takes this long fails (no row's speed is asserted)."""


@dataclass(frozen=True)
class Row:
    """``bigtwo ARGV`` (``{name}`` filled from the places below) must exit ``status`` with every
    word of ``says`` on stderr; with ``closed_stdout`` its standard output is a pipe nobody reads."""

    name: str
    argv: tuple[str, ...]
    status: int
    says: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    closed_stdout: bool = False
    stdout_lacks: tuple[str, ...] = ()


def row(name: str, argv: str, status: int, *says: str, **extra: object) -> Row:
    return Row(name, tuple(argv.split()), status, says, **extra)  # type: ignore[arg-type]


USAGE, FAILURE = 2, 1
UNREACHABLE = ("cannot reach the service at 127.0.0.1:", "make run")

ROWS = [
    # -- the command itself -----------------------------------------------------------------------
    row("unknown-command", "nosuch", USAGE, "invalid choice", "nosuch", "bigtwo --help"),
    row("unknown-flag", "version --colour", USAGE, "--colour"),
    # -- bigtwo deal ------------------------------------------------------------------------------
    row("deal-dead-target", "deal --json --target {dead}", FAILURE, *UNREACHABLE, "connection refused"),
    row("deal-port-out-of-range", "deal --target 127.0.0.1:99999", USAGE, "--target", "99999"),
    row("deal-target-without-port", "deal --target localhost", USAGE, "--target", "HOST:PORT"),
    row("deal-timeout-not-a-number", "deal --timeout soon", USAGE, "--timeout", "soon"),
    row("deal-timeout-negative", "deal --timeout -1", USAGE, "--timeout"),
    row("deal-unknown-preset", "deal --preset nosuch", USAGE, "--preset", "nosuch"),
    row("deal-bad-option", "deal -o flush=sideways", USAGE, "flush", "sideways"),
    row("deal-bad-deal-code", "deal --deal-code nonsense", USAGE, "nonsense"),
    row("deal-key-in-missing-folder", "deal --tls --key {tmp}/missing/client.key", USAGE, "--key", "missing"),
    row("deal-ca-not-pem", "deal --tls --ca {garbage_pem}", USAGE, "--ca", "PEM"),
    row("deal-ruleset-garbage", "deal --ruleset {garbage_json}", USAGE, "--ruleset", "garbage.json"),
    row("deal-ruleset-not-toml-or-json", "deal --ruleset {garbage_pem}", USAGE, "--ruleset", ".toml or .json"),
    row("deal-preset-and-ruleset", "deal --preset web --ruleset {ruleset_toml}", USAGE, "--preset", "--ruleset"),
    row("deal-option-without-value", "deal -o players", USAGE, "--option", "NAME=VALUE"),
    row(
        "deal-closed-pipe",
        "deal --json --deal-code 0000003NQK8N1",
        FAILURE,
        "output was closed",
        closed_stdout=True,
    ),
    row("deal-silent-server", "deal --target {silent} --timeout 1", FAILURE, "cannot reach the service at {silent}"),
    row("deal-tls-to-plaintext", "deal --tls --target {plain_grpc}", FAILURE, "does not speak TLS", "leave out"),
    row("deal-plaintext-to-tls", "deal --target {tls_grpc}", FAILURE, "closed the connection", "--tls"),
    row("deal-untrusted-certificate", "deal --tls --target {tls_grpc}", FAILURE, "not trusted", "--ca"),
    row("deal-http1-server", "deal --target {http}", FAILURE, "not a gRPC server", "Check the address"),
    row("deal-not-big-two", "deal --target {plain_grpc}", FAILURE, "not a Big Two service", "{plain_grpc}"),
    row("deal-no-bearer-token", "deal --target {live}", USAGE, "bearer token", "--token"),
    row(
        "deal-code-refused-by-service",
        "deal --target {live} --deal-code nonsense",
        USAGE,
        "refused the request",
        "nonsense",
        env={"BIGTWO_AUTH_TOKEN": TOKEN},
    ),
    # -- bigtwo play ------------------------------------------------------------------------------
    row("play-dead-target", "play --target {dead}", FAILURE, *UNREACHABLE),
    row("play-silent-server", "play --target {silent} --timeout 1", FAILURE, "cannot reach the service at {silent}"),
    row("play-bad-seat", "play --seat p9", USAGE, "--seat", "p9"),
    row("play-deals-zero", "play --deals 0", USAGE, "--deals"),
    row("play-replay-out-missing-folder", "play --replay-out {tmp}/missing/game.toml", USAGE, "--replay-out"),
    row("play-resume-garbage", "play --resume {garbage_toml}", USAGE, "--resume", "garbage.toml"),
    row("play-unknown-bot-level", "play --bots genius", USAGE, "genius"),
    row("play-more-levels-than-bots", "play --bots good,great,pro,random", USAGE, "3 bot seats", "4 levels"),
    row("play-fewer-levels-than-bots", "play --bots good,great", USAGE, "3 bot seats", "2 levels", "one level"),
    # refused before any server is started or reached (a dead --target would say so otherwise)
    row("play-mistyped-deal-code", "play --target {dead} --deal-code 0000003NQK8N2", USAGE, "--deal-code", "mistyped"),
    row("play-seat-beyond-the-table", "play --seat p4 -o players=3", USAGE, "--seat p4", "p1-p3"),
    row("play-deals-and-match", "play --deals 2 -o match=open", USAGE, "--deals", "not both"),
    row("play-resume-with-rules", "play --resume {garbage_toml} --preset web", USAGE, "--resume", "leave out --preset"),
    row("play-ruleset-missing", "play --ruleset {tmp}/missing.toml", USAGE, "--ruleset", "missing.toml"),
    # -- bigtwo vectors ---------------------------------------------------------------------------
    row("vectors-missing-path", "vectors {tmp}/missing.json", USAGE, "missing.json"),
    row("vectors-garbage-file", "vectors {garbage_json}", USAGE, "garbage.json", "JSON"),
    row(
        "vectors-dead-target",
        "vectors {vectors} --target {dead}",
        FAILURE,
        *UNREACHABLE,
        stdout_lacks=("FAIL",),
    ),
    row(
        "vectors-not-big-two",
        "vectors {vectors} --target {plain_grpc}",
        FAILURE,
        "not a Big Two service",
        stdout_lacks=("FAIL",),
    ),
    row("vectors-timeout-zero", "vectors {vectors} --timeout 0", USAGE, "--timeout"),
    # -- bigtwo bench -----------------------------------------------------------------------------
    row("bench-runs-zero", "bench engine --runs 0", USAGE, "--runs"),
    row("bench-unknown-subject", "bench nosuch", USAGE, "nosuch"),
    # -- bigtwo tournament ------------------------------------------------------------------------
    row("tournament-unknown-preset", "tournament --preset nosuch", USAGE, "--preset", "nosuch"),
    row("tournament-unknown-level", "tournament --levels good,genius", USAGE, "--levels", "genius"),
    row("tournament-deals-zero", "tournament --deals 0", USAGE, "--deals"),
    row("tournament-plot-missing-folder", "tournament --plot {tmp}/missing/chart.png", USAGE, "--plot", "missing"),
    row("tournament-bad-option", "tournament -o flush=sideways --no-plot --deals 1", USAGE, "flush", "sideways"),
    row("tournament-option-without-value", "tournament --option players", USAGE, "--option", "NAME=VALUE"),
    row("tournament-ruleset-garbage", "tournament --ruleset {garbage_json}", USAGE, "--ruleset", "garbage.json"),
    row("tournament-preset-and-ruleset", "tournament --preset web --ruleset {ruleset_toml}", USAGE, "not both"),
    row("tournament-dask-bad-target", "tournament --dask local:x", USAGE, "--dask", "local:N"),
    row("tournament-dask-and-jobs", "tournament --dask local:2 --jobs 2", USAGE, "--dask", "--jobs"),
    row(
        "tournament-plot-without-matplotlib",
        "tournament --deals 1 --plot {tmp}/chart.png",
        USAGE,
        "--plot",
        "matplotlib is not installed",
        "'.[plot]'",
        env={"PYTHONPATH": "{no_matplotlib}"},
    ),
    # -- bigtwo replay / audit --------------------------------------------------------------------
    row("replay-missing-file", "replay {tmp}/missing.toml", USAGE, "missing.toml"),
    row("replay-garbage-file", "replay {garbage_toml}", USAGE, "garbage.toml"),
    row("replay-html-missing-folder", "replay {golden} --html {tmp}/missing/out.html", USAGE, "--html", "missing"),
    row("replay-key-missing-folder", "replay {golden} --key {tmp}/missing/key", USAGE, "--key", "missing"),
    row("replay-key-empty", "replay {golden} --key {empty_key}", USAGE, "--key", "empty"),
    row("replay-width-zero", "replay {golden} --width 0", USAGE, "--width"),
    row("audit-missing-path", "audit {tmp}/missing", USAGE, "missing"),
    row("audit-empty-folder", "audit {empty_folder}", USAGE, "no replay files"),
    row("audit-json-missing-folder", "audit {golden} --json {tmp}/missing/report.json", USAGE, "--json", "missing"),
    row("audit-jobs-negative", "audit {golden} --jobs -1", USAGE, "--jobs"),
    row("audit-dask-bad-target", "audit {golden} --dask mars", USAGE, "--dask", "local:N", "tcp://HOST:PORT"),
    row("audit-dask-and-jobs", "audit {golden} --dask local:2 --jobs 2", USAGE, "--dask", "--jobs"),
    row("audit-url-without-its-package", "audit s3://replays/day", USAGE, "s3fs"),
    # -- bigtwo serve / run -----------------------------------------------------------------------
    row("serve-port-out-of-range", "serve --port 99999", USAGE, "--port", "99999"),
    row("serve-port-env-not-a-number", "serve", USAGE, "BIGTWO_PORT", "abc", env={"BIGTWO_PORT": "abc"}),
    row("serve-metrics-port-env", "serve", USAGE, "BIGTWO_METRICS_PORT", env={"BIGTWO_METRICS_PORT": "-1"}),
    row("serve-mode-env", "serve", USAGE, "BIGTWO_MODE", "fast", env={"BIGTWO_MODE": "fast"}),
    row("serve-mode-removed", "serve --mode sync", USAGE, "--mode", "one mode, asyncio", "SERVICE.md"),
    row("serve-threads-removed", "serve --threads 8", USAGE, "--threads", "one mode, asyncio"),
    row("serve-log-calls-env", "serve", USAGE, "BIGTWO_LOG_CALLS", env={"BIGTWO_LOG_CALLS": "maybe"}),
    row("serve-workers-zero", "serve --workers 0", USAGE, "--workers"),
    row("serve-log-level", "serve --log-level loud", USAGE, "--log-level", "loud"),
    row("serve-tls-cert-missing", "serve --tls-cert {tmp}/missing/cert.pem", USAGE, "--tls-cert", "missing"),
    row("serve-tls-cert-garbage", "serve --tls-cert {garbage_pem} --tls-key {garbage_pem}", USAGE, "--tls-cert"),
    row("serve-tls-cert-without-key", "serve --tls-cert {server_cert}", USAGE, "--tls-key"),
    row("serve-weak-auth-token", "serve --auth-token short", USAGE, "--auth-token", "16"),
    row("serve-token-keys-garbage", "serve --token-keys-file {garbage_pem}", USAGE, "--token-keys-file"),
    row("serve-port-in-use", "serve --metrics-port 0 --port {silent_port}", FAILURE, "already in use", "--port"),
    row("run-port-out-of-range", "run --port 70000", USAGE, "--port", "70000"),
    row("run-port-in-use", "run --metrics-port 0 --port {silent_port}", FAILURE, "already in use"),
    # -- bigtwo health ----------------------------------------------------------------------------
    row("health-dead-target", "health --target {dead}", FAILURE, *UNREACHABLE),
    row("health-plaintext-to-tls", "health --target {tls_grpc}", FAILURE, "closed the connection", "--tls-ca"),
    row("health-tls-ca-missing", "health --tls-ca {tmp}/missing.pem", USAGE, "--tls-ca", "missing.pem"),
    row("health-tls-ca-garbage", "health --tls-ca {garbage_pem}", USAGE, "--tls-ca", "PEM"),
    row("health-target-env", "health", USAGE, "BIGTWO_HEALTH_TARGET", env={"BIGTWO_HEALTH_TARGET": "nowhere"}),
    row("health-timeout-zero", "health --timeout 0", USAGE, "--timeout"),
    # -- bigtwo loadtest --------------------------------------------------------------------------
    row("loadtest-unknown-preset", "loadtest --preset nosuch --target {dead}", USAGE, "--preset", "nosuch"),
    row("loadtest-dead-target", "loadtest --target {dead} --duration 1", FAILURE, *UNREACHABLE),
    row("loadtest-no-target", "loadtest", USAGE, "--target", "--spawn"),
    row("loadtest-share-above-one", "loadtest --spawn 1 --refused-share 2", USAGE, "--refused-share"),
    row("loadtest-plot-missing-folder", "loadtest --target {dead} --plot {tmp}/missing/p.png", USAGE, "--plot"),
    row("loadtest-target-and-spawn", "loadtest --target {dead} --spawn 1", USAGE, "--target", "--spawn"),
    row("loadtest-ruleset-garbage", "loadtest --ruleset {garbage_toml} --target {dead}", USAGE, "--ruleset"),
    row("loadtest-bad-option", "loadtest -o flush=sideways --target {dead}", USAGE, "flush", "sideways"),
    row(
        "loadtest-plot-without-matplotlib",
        "loadtest --target {dead} --plot {tmp}/p.png",
        USAGE,
        "--plot",
        "matplotlib is not installed",
        env={"PYTHONPATH": "{no_matplotlib}"},
    ),
]


# -- the places the rows point at ----------------------------------------------------------------------


def _http1_server(sock: socket.socket) -> None:
    """Answers anything with an HTTP/1.1 error, as a web server on the wrong port would."""
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        with conn:
            try:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            except OSError:
                pass


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("cli-errors")
    (tmp / "garbage.toml").write_text("this is not = a replay [\n", encoding="utf-8")
    (tmp / "garbage.json").write_text("{not json", encoding="utf-8")
    (tmp / "garbage.pem").write_text("not a certificate\n", encoding="utf-8")
    (tmp / "empty.key").write_text("\n", encoding="utf-8")
    (tmp / "empty-folder").mkdir()
    (tmp / "house.toml").write_text('preset = "classic"\nplayers = 3\n', encoding="utf-8")
    stub = tmp / "no-matplotlib" / "matplotlib"  # first on PYTHONPATH: as if matplotlib were not installed
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'matplotlib'\")\n")
    pki = make_pki(tmp)

    other = grpc.server(futures.ThreadPoolExecutor(max_workers=2))  # a gRPC server, not a Big Two one
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), other)
    plain_port = other.add_insecure_port("127.0.0.1:0")
    tls = grpc.ssl_server_credentials([(pki.server_key.read_bytes(), pki.server_cert.read_bytes())])
    tls_port = other.add_secure_port("127.0.0.1:0", tls)
    other.start()

    silent = socket.create_server(("127.0.0.1", 0))  # accepts connections (the backlog), never answers
    http = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_http1_server, args=(http,), daemon=True).start()

    live = Server(tmp, "--auth-token", TOKEN)
    try:
        live.wait_ready()
        yield {
            "tmp": str(tmp),
            "golden": str(GOLDEN),
            "vectors": str(VECTORS),
            "garbage_toml": str(tmp / "garbage.toml"),
            "garbage_json": str(tmp / "garbage.json"),
            "garbage_pem": str(tmp / "garbage.pem"),
            "empty_key": str(tmp / "empty.key"),
            "empty_folder": str(tmp / "empty-folder"),
            "ruleset_toml": str(tmp / "house.toml"),
            "no_matplotlib": str(stub.parent),
            "server_cert": str(pki.server_cert),
            "dead": f"127.0.0.1:{free_port()}",
            "silent": f"127.0.0.1:{silent.getsockname()[1]}",
            "silent_port": str(silent.getsockname()[1]),
            "http": f"127.0.0.1:{http.getsockname()[1]}",
            "plain_grpc": f"127.0.0.1:{plain_port}",
            "tls_grpc": f"127.0.0.1:{tls_port}",
            "live": live.target,
        }
    finally:
        live.stop()
        other.stop(0)
        silent.close()
        http.close()


def _env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIGTWO_", "GRPC_"))}
    env.update(HOME=str(home), BIGTWO_HOME=str(home / ".bigtwo"), COLUMNS="100", **extra)
    return env


def run_bigtwo(argv: list[str], env: dict[str, str], *, closed_stdout: bool = False) -> tuple[int, str, str]:
    """``bigtwo ARGV``: exit status, stdout, stderr."""
    if not closed_stdout:
        done = subprocess.run(
            [BIGTWO, *argv], env=env, capture_output=True, text=True, timeout=GUARD_SECONDS, stdin=subprocess.DEVNULL
        )
        return done.returncode, done.stdout, done.stderr
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first byte: as `| head -1` after its line
    try:
        done = subprocess.run(
            [BIGTWO, *argv], env=env, stdout=writer, stderr=subprocess.PIPE, text=True, timeout=GUARD_SECONDS
        )
    finally:
        os.close(writer)
    return done.returncode, "", done.stderr


ROWS_AT_ONCE = 3
"""Rows run this many at a time: each is a subprocess that mostly waits (for its interpreter to
start, or for a server that never answers), and no row depends on another."""


@dataclass(frozen=True)
class Ran:
    """What a row's command did."""

    argv: list[str]
    status: int
    out: str
    err: str


@pytest.fixture(scope="module")
def ran(
    request: pytest.FixtureRequest, places: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Ran]:
    """Every row this session selected, run :data:`ROWS_AT_ONCE` at a time, each in a home
    folder of its own; the tests below judge one row each."""
    wanted = {
        item.callspec.params["case"].name
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_a_mistake_ends_in_a_sentence" and hasattr(item, "callspec")
    }
    homes = {case.name: tmp_path_factory.mktemp(f"row-{case.name}") for case in ROWS if case.name in wanted}

    def run(case: Row) -> Ran:
        argv = [word.format(**places) for word in case.argv]
        env = _env(homes[case.name], {name: value.format(**places) for name, value in case.env.items()})
        return Ran(argv, *run_bigtwo(argv, env, closed_stdout=case.closed_stdout))

    chosen = [case for case in ROWS if case.name in homes]
    with futures.ThreadPoolExecutor(max_workers=ROWS_AT_ONCE) as pool:
        return dict(zip([case.name for case in chosen], pool.map(run, chosen), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("case", ROWS, ids=[r.name for r in ROWS])
def test_a_mistake_ends_in_a_sentence(case: Row, places: dict[str, str], ran: dict[str, Ran]) -> None:
    argv, status, out, err = ran[case.name].argv, ran[case.name].status, ran[case.name].out, ran[case.name].err
    shown = f"bigtwo {' '.join(argv)}\nexit {status}\n--- stdout\n{out[-2000:]}\n--- stderr\n{err}"
    assert "Traceback" not in out + err, shown
    assert status == case.status, shown
    lines = [line for line in err.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, shown  # one or two sentences, nothing else (no usage block, no gRPC log)
    assert lines[0].startswith("bigtwo"), shown
    for word in case.says:
        assert word.format(**places) in err, f"{word!r} not said\n{shown}"
    for word in case.stdout_lacks:
        assert word not in out, shown


def test_the_table_covers_every_subcommand() -> None:
    from bigtwo.cli.main import COMMANDS

    names = {name for command in COMMANDS for name, _ in command.helps} - {"version"}
    covered = {case.argv[0] for case in ROWS}
    assert names <= covered, names - covered
    assert len(ROWS) >= 30


def test_debug_shows_the_traceback_as_well(places: dict[str, str], tmp_path: Path) -> None:
    for argv in (["--debug", "deal", "--target", places["dead"]], ["deal", "--target", places["dead"], "--debug"]):
        status, _, err = run_bigtwo(argv, _env(tmp_path, {}))
        assert status == FAILURE
        assert "Traceback" in err and "BigTwoUnavailable" in err
        assert err.rstrip().splitlines()[-1].startswith("bigtwo deal: cannot reach the service at")


def test_help_shows_defaults_and_no_markup() -> None:
    """Every subcommand's --help: no rich markup or docstring quoting, and every option whose
    default means something says it."""
    import argparse

    from bigtwo.cli.arguments import DefaultsHelpFormatter
    from bigtwo.cli.main import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        text = sub.format_help()
        for markup in ("[/", "[b]", "[bold", "``"):
            assert markup not in text, f"bigtwo {name} --help shows {markup!r}"
        formatter = sub._get_formatter()
        assert isinstance(formatter, DefaultsHelpFormatter), name
        for action in sub._actions:
            shown = formatter._get_help_string(action) or ""
            meaningful = action.option_strings and action.nargs != 0 and action.default not in (None, "", [], False)
            if meaningful and action.default is not argparse.SUPPRESS:
                assert "default" in shown.lower(), f"bigtwo {name} {action.option_strings[0]}: no default shown"


# -- the pieces, in process -------------------------------------------------------------------------


def test_vectors_stop_at_the_first_case_the_service_did_not_get() -> None:
    from bigtwo.cli.errors import ServiceUnreachable
    from bigtwo.cli.vectors_cmd import VectorFile, _StopOnLostService, judge_files
    from bigtwo.engine.vectors import CaseResult

    sent: list[str] = []

    def gone(case: dict[str, str]) -> CaseResult:
        sent.append(case["id"])
        return CaseResult(case["id"], False, "x", "error UNAVAILABLE: ipv4:127.0.0.1:9: Connection refused")

    files = [VectorFile(Path("a.json"), ({"id": "one"}, {"id": "two"}, {"id": "three"}))]
    with pytest.raises(ServiceUnreachable, match=r"nothing is listening there .*\(at case one\)"):
        judge_files(files, _StopOnLostService(gone, "127.0.0.1:9"))
    assert sent == ["one"]


@pytest.mark.parametrize(
    ("details", "reason"),
    [
        (
            "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Connection refused",
            "CONNECTION_REFUSED",
        ),
        ("Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: WRONG_VERSION_NUMBER", "TLS_NOT_SPOKEN"),
        ("Tls handshake failed: CERTIFICATE_VERIFY_FAILED: unable to get local issuer", "TLS_CERTIFICATE_REJECTED"),
        ("Trying to connect an http1.x server (HTTP status 400)", "NOT_GRPC"),
        ("last error: UNAVAILABLE: ipv4:127.0.0.1:5: Socket closed", "CONNECTION_CLOSED"),
        ("connection attempt timed out before receiving SETTINGS frame", "NO_ANSWER"),
        ("errors resolving nowhere:1: Domain name not found", "NAME_NOT_RESOLVED"),
        ("something new", "UNAVAILABLE"),
    ],
)
def test_connection_failures_are_named(details: str, reason: str) -> None:
    from bigtwo.client.client import connection_failure

    assert connection_failure(details)[0] == reason


def test_the_one_table_of_errors() -> None:
    from bigtwo.cli.errors import EXIT_INTERRUPTED, CommandError, UsageError, explain

    assert explain(ValueError("a bug")) is None
    assert explain(KeyboardInterrupt()).exit_status == EXIT_INTERRUPTED  # type: ignore[union-attr]
    refusal = explain(SystemExit("bigtwo play: --seat p4: this table seats p1-p3"))
    assert isinstance(refusal, UsageError) and refusal.message == "--seat p4: this table seats p1-p3"
    pipe = explain(BrokenPipeError())
    assert isinstance(pipe, CommandError) and "output was closed" in pipe.message
    missing = explain(FileNotFoundError(2, "No such file or directory", "/x/y.toml"))
    assert missing is not None and "/x/y.toml" in missing.message and missing.exit_status == 1


def test_a_default_from_the_environment_is_parsed_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from bigtwo.cli.arguments import Parser, env_default, port

    monkeypatch.setenv("BIGTWO_TEST_PORT", "abc")
    parser = Parser(prog="t")
    parser.add_argument("--port", type=port, default=env_default("BIGTWO_TEST_PORT", 1))
    assert parser.parse_args(["--port", "5"]).port == 5  # given on the line: the variable is not read
    with pytest.raises(SystemExit) as stop:
        parser.parse_args([])
    assert stop.value.code == 2


def test_a_closed_channels_poller_prints_no_traceback_other_thread_errors_still_do() -> None:
    """gRPC's connectivity poller thread may die with "Channel closed!" when the command closes its
    channel after answering (grpc/grpc#18995); the command's sentence must stay the only output,
    while any other thread's error still reaches the hook that prints it."""
    import threading

    from bigtwo.cli import main as cli_main

    def _poll_connectivity() -> None:  # the name of gRPC's poller function, which the filter reads
        raise ValueError("Cannot monitor channel state: Channel closed!")

    def elsewhere() -> None:
        raise ValueError("a real failure")

    printed: list[str] = []
    saved = threading.excepthook
    try:
        threading.excepthook = lambda args: printed.append(str(args.exc_value))
        cli_main._quiet_closed_channel_pollers()
        for target in (_poll_connectivity, elsewhere):
            thread = threading.Thread(target=target)
            thread.start()
            thread.join()
    finally:
        threading.excepthook = saved
    assert printed == ["a real failure"]
