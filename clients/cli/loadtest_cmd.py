"""``bigtwo loadtest``: the argparse subcommand. Registering it imports nothing heavy; the handler
imports grpc, the engine, rich and matplotlib when it runs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EPILOG = """\
examples:
  bigtwo loadtest --target 127.0.0.1:50051 --target 127.0.0.1:50052 --duration 20 --concurrency 64
  bigtwo loadtest --spawn 3 --duration 10 --rate 1500 --json --plot latency.png
  bigtwo loadtest --spawn 1 --compare-noop --duration 8
  bigtwo loadtest --spawn 3 --kill-after 5 --duration 12 --rate 1000

Every target must be one of yours: the load generator is meant for 127.0.0.1 and your own replicas.

A run that sends far fewer moves than asked for fails (exit 1, the shortfall in the report): fewer
than --min-requests, or without it, fewer than a quarter of --rate × --duration (of one move per
game at once per 4 s without --rate), or a generator process that ended without reporting. Ctrl-C
stops the run within a second and prints the report of what was measured so far (exit 130).
"""

MARGIN = 0.25
"""The share of the offered load below which a run fails: a wide margin, so a loaded machine that
answers slowly passes and a run that froze or lost its generators does not."""


def _targets(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        out += [part.strip() for part in value.split(",") if part.strip()]
    return out


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "loadtest",
        help="play many real deals against replicas and report moves/s, refusals, errors and latency",
        description=(
            "Play N concurrent real deals (random legal moves, a share refused, a share malformed) over "
            "PlayStream or ApplyMove against a list of targets, several connections per target, and report "
            "moves/s, refusals, errors by status and p50/p95/p99 latency (table, --json, --plot PNG)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .arguments import (
        add_ruleset_arguments,
        non_negative_float,
        non_negative_int,
        non_negative_seconds,
        one_of,
        png_file,
        positive_int,
        positive_seconds,
        share,
        target,
    )

    add = parser.add_argument
    add("--target", type=target, action="append", default=[], help="HOST:PORT of a replica; repeat or comma-separate")
    add(
        "--timeout",
        type=positive_seconds,
        default=5.0,
        help="seconds each --target gets to accept a connection before the run is called off",
    )
    add(
        "--spawn",
        type=non_negative_int,
        default=0,
        help="start N local replicas on 127.0.0.1 free ports and target them",
    )
    add(
        "--server-mode",
        type=one_of(("aio",)),
        choices=("aio",),
        default="aio",
        help="mode of spawned replicas (one since issue 34: aio)",
    )
    add("--noop", action="store_true", help="spawned replicas are no-op servers (canned answers, no engine)")
    add("--compare-noop", action="store_true", help="then run the same load against as many no-op replicas")
    add(
        "--mode",
        type=one_of(("stream", "unary")),
        choices=("stream", "unary"),
        default="stream",
        help="PlayStream per game or ApplyMove per move",
    )
    add("--concurrency", "-c", type=positive_int, default=32, help="games played at once (default 32)")
    add("--games", type=non_negative_int, default=0, help="games to start, each played to its end (0: no bound)")
    add("--moves", type=non_negative_int, default=0, help="stop after this many judged moves (0: no bound)")
    add(
        "--duration",
        type=non_negative_seconds,
        default=10.0,
        help="stop after this many seconds (0: no bound; default 10)",
    )
    add("--ramp-seconds", type=non_negative_seconds, default=0.0, help="start the games evenly over this many seconds")
    add("--rate", type=non_negative_float, default=0.0, help="target moves/s over all games (0: as fast as answered)")
    add("--refused-share", type=share, default=0.05, help="share of moves sent to be refused (default 0.05)")
    add("--malformed-share", type=share, default=0.0, help="extra malformed requests per move (default 0)")
    add("--channels", type=positive_int, default=2, help="connections per target (default 2)")
    add("--processes", type=positive_int, default=1, help="load generator processes (default 1)")
    add(
        "--source",
        type=one_of(("engine", "service")),
        choices=("engine", "service"),
        default="engine",
        help="legal moves from the local engine or LegalMoves",
    )
    add_ruleset_arguments(parser)
    add("--seed", type=int, default=1, help="seed of the deal codes and move choices")
    add("--call-timeout", type=positive_seconds, default=10.0, help="seconds per call before DEADLINE_EXCEEDED")
    add("--auth-token", default="", help="bearer token, when the service asks for one")
    add(
        "--kill-after",
        type=non_negative_seconds,
        default=0.0,
        help="with --spawn >= 2: SIGKILL one replica after S seconds",
    )
    add(
        "--min-requests",
        type=non_negative_int,
        default=0,
        help="exit 1 when fewer moves were judged (default: a quarter of --rate × --duration)",
    )
    add("--json", action="store_true", help="print the report as one JSON object")
    add("--plot", type=png_file, default="", help="write a PNG latency plot here (needs matplotlib, the 'plot' extra)")
    add("--no-progress", action="store_true", help="no live progress line")
    parser.set_defaults(func=loadtest_main)
    return parser


def loadtest_main(args: argparse.Namespace) -> int:
    from bigtwo.client.client import check_reachable
    from bigtwo.tools.loadtest.runner import Replicas

    from .arguments import ruleset_from_args
    from .errors import EXIT_INTERRUPTED

    targets = _targets(args.target)
    if args.noop and not args.spawn:
        args.spawn = 1
    _check_bounds(args, targets)
    rules = ruleset_from_args(args)
    for given in targets:  # a dead target calls the run off at once, instead of every game failing
        check_reachable(given, timeout=args.timeout)
    replicas = Replicas(args.spawn, noop=args.noop, mode=args.server_mode) if args.spawn else None
    try:
        data = _measure(args, rules, replicas.targets if replicas else targets, replicas)
    finally:
        if replicas:
            replicas.stop()
    _print_report(args, data)
    if data.get("interrupted"):
        return EXIT_INTERRUPTED
    if data.get("shortfall"):
        print(f"bigtwo loadtest: {data['shortfall']}", file=sys.stderr)
        return 1
    return 1 if data["errors"] else 0


def expected_moves(args: argparse.Namespace, seconds: float) -> tuple[int, str]:
    """The fewest judged moves this run may make, and how that floor was set (0: no floor). The
    offered load is --rate over the run's --duration; without a rate, one move per game at once and
    second; the floor is a quarter of it (``MARGIN``), or --min-requests when given."""
    if args.min_requests:
        return args.min_requests, "--min-requests"
    if not args.duration or args.moves or args.games:
        return 0, ""  # bounded by moves or games: the run's own bound says what was asked
    busy = max(0.0, min(seconds, args.duration) - args.ramp_seconds / 2)
    if args.rate:
        return int(MARGIN * args.rate * busy), f"a quarter of --rate {args.rate:g}/s over {busy:.1f} s"
    return int(MARGIN * args.concurrency * busy), f"a quarter of one move per game and second over {busy:.1f} s"


def shortfall(args: argparse.Namespace, moves: int, seconds: float, interrupted: bool) -> str:
    """Why the run made too few moves, in words ('' when it did not, or Ctrl-C cut it short)."""
    floor, basis = expected_moves(args, seconds)
    if interrupted or moves >= floor:
        return ""
    return f"the run judged {moves} moves, fewer than the {floor} expected ({basis}); it sent far less than asked."


def _check_bounds(args: argparse.Namespace, targets: list[str]) -> None:
    """Refuse a run with no targets or two kinds of them, a kill with nothing to kill, no bound."""
    from .errors import UsageError

    if args.spawn and targets:
        raise UsageError("give --target or --spawn, not both.")
    if not args.spawn and not targets:
        raise UsageError("give --target HOST:PORT (repeatable) or --spawn N.")
    if args.kill_after and args.spawn < 2:
        raise UsageError("--kill-after needs --spawn 2 or more.")
    if not (args.games or args.moves or args.duration):
        raise UsageError("bound the run with --games, --moves or --duration.")


def _config(args: argparse.Namespace, rules: Any, targets: list[str], verify: bool) -> Any:
    """The load generator's configuration for ``targets``."""
    from bigtwo.tools.loadtest.generator import LoadConfig

    # The API's Ruleset.options: every option that differs from the preset, as text.
    options = {
        key: ",".join(str(item) for item in value) if isinstance(value, (list, tuple)) else str(value)
        for key, value in rules.overrides().items()
    }
    return LoadConfig(
        targets=targets,
        mode=args.mode,
        concurrency=max(1, args.concurrency),
        games=args.games,
        moves=args.moves,
        duration=args.duration,
        ramp_seconds=args.ramp_seconds,
        rate=args.rate,
        refused_share=args.refused_share,
        malformed_share=args.malformed_share,
        channels=max(1, args.channels),
        preset=rules.preset,
        options=options,
        seed=args.seed,
        source=args.source,
        verify=verify,
        call_timeout=args.call_timeout,
        auth_token=args.auth_token,
    )


def _measure(args: argparse.Namespace, rules: Any, targets: list[str], replicas: Any) -> dict[str, Any]:
    """Run the load (killing a replica on time with ``--kill-after``, then the no-op comparison with
    ``--compare-noop``); the report's figures, and the plot written with ``--plot``."""
    import threading
    import time
    from pathlib import Path

    from bigtwo.tools.loadtest.report import recovery, summary
    from bigtwo.tools.loadtest.runner import run_load

    progress = not args.no_progress and sys.stderr.isatty()
    killed: list[float] = []
    timer = None
    if args.kill_after and replicas:

        def kill() -> None:
            killed.append(time.monotonic())
            replicas.kill(0)

        timer = threading.Timer(args.kill_after, kill)
        timer.daemon = True
    from bigtwo.tools.loadtest.runner import GeneratorLost

    from .errors import CommandError

    try:
        result = run_load(
            _config(args, rules, targets, verify=not args.noop), args.processes, progress=progress, before=timer
        )
    except GeneratorLost as lost:
        raise CommandError(f"{lost}; the run's figures are incomplete.") from lost
    finally:
        if timer:
            timer.cancel()
    extra: dict[str, Any] = {"processes": args.processes, "server": "noop" if args.noop else "real"}
    if result.interrupted:
        extra["interrupted"] = True
    elif problem := shortfall(args, result.moves, result.seconds, result.interrupted):
        extra["shortfall"] = problem
    if replicas:
        extra["spawned_replicas"] = args.spawn
    if killed:
        extra["recovery"] = recovery(result, killed[0])
    if args.compare_noop and not result.interrupted:
        if replicas:
            replicas.stop()
        extra.update(_noop_comparison(args, rules, args.spawn or len(targets), result, progress))
    data: dict[str, Any] = summary(result, extra)
    if args.plot:
        from bigtwo.tools.loadtest.plot import latency_plot

        title = f"{args.mode}, {len(targets)} target(s), {args.concurrency} games"
        latency_plot(result, Path(args.plot), title, killed[0] if killed else None)
        data["plot"] = args.plot
    return data


def _noop_comparison(args: argparse.Namespace, rules: Any, count: int, result: Any, progress: bool) -> dict[str, Any]:
    """The same load against ``count`` no-op replicas: their figures and the ratio to them."""
    from bigtwo.tools.loadtest.report import summary
    from bigtwo.tools.loadtest.runner import Replicas, run_load

    replicas = Replicas(count, noop=True, mode=args.server_mode)
    try:
        noop = run_load(_config(args, rules, replicas.targets, verify=False), args.processes, progress=progress)
    finally:
        replicas.stop()
    noop_summary = summary(noop)
    return {
        "noop": {k: noop_summary[k] for k in ("moves", "moves_per_s", "latency_ms")},
        "ratio_to_noop": round(result.moves / result.seconds / max(noop.moves / noop.seconds, 1e-9), 3),
    }


def _print_report(args: argparse.Namespace, data: dict[str, Any]) -> None:
    import json
    from pathlib import Path

    from bigtwo.tools.loadtest.report import table

    if args.json:
        print(json.dumps(data))
    else:
        from rich.console import Console

        Console().print(table(data))
    if args.plot:  # every file written is named; on stderr with --json (stdout is one JSON object)
        print(f"Plot written to {Path(args.plot).resolve()}", file=sys.stderr if args.json else sys.stdout)
