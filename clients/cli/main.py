"""The ``bigtwo`` command: argparse subcommands, each with its own ``--help``.

Subcommand modules register themselves with ``add_parser(subparsers)`` and set ``func`` (the
handler, returning the exit status) on their parser.

Start-up stays fast: :data:`COMMANDS` lists each command's name and one-line help, and the loader
that imports its module and calls its ``add_parser``. Only the command being run is loaded (so
``bigtwo deal`` never imports matplotlib, and ``bigtwo --help`` imports nothing heavy); the others
appear in the listing as light placeholders. To add a command, add one :class:`Command` line
below (its loader imports the module inside the function). ``build_parser()`` without arguments
loads every command (tests, documentation).

Errors: :func:`main` is the command's one error boundary. Whatever a command raises ends in one or
two sentences on stderr and an exit status (2: usage, 1: failure), by
:func:`bigtwo.cli.errors.handle`; ``--debug`` anywhere on the line shows the traceback too.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .arguments import Parser
from .errors import handle


def _version() -> str:
    try:
        return version("bigtwo")
    except PackageNotFoundError:
        return "unknown"


def _cmd_version(args: argparse.Namespace) -> int:
    print(_version())
    return 0


def _add_version(sub: Any) -> None:
    parser = sub.add_parser("version", help="print the package version", description="Print the package version.")
    parser.set_defaults(func=_cmd_version)


def _add_run(sub: Any) -> None:
    from . import run_cmd

    run_cmd.add_parser(sub)


def _add_vectors(sub: Any) -> None:
    from . import vectors_cmd

    vectors_cmd.add_parser(sub)


def _add_bench(sub: Any) -> None:
    from bigtwo.tools import service_bench

    from . import bench_cmd

    service_bench.add_bench_subject(bench_cmd.add_parser(sub))


def _add_tournament(sub: Any) -> None:
    from . import tournament_cmd

    tournament_cmd.add_parser(sub)


def _add_replay(sub: Any) -> None:
    from . import replay_cmd as replay_commands

    replay_commands.add_parsers(sub)


def _add_audit(sub: Any) -> None:
    from . import audit_cmd

    audit_cmd.add_parser(sub)


def _add_serve(sub: Any) -> None:
    from . import serve_cmd as service_server

    service_server.add_parser(sub)


def _add_play(sub: Any) -> None:
    from . import play_cmd

    play_cmd.add_parsers(sub)


def _add_health(sub: Any) -> None:
    from . import health_cmd

    health_cmd.add_parser(sub)


def _add_loadtest(sub: Any) -> None:
    from . import loadtest_cmd as loadtest_command

    loadtest_command.add_parser(sub)


@dataclass(frozen=True)
class Command:
    """One registration: the command names it adds (with their one-line help) and its loader."""

    helps: tuple[tuple[str, str], ...]
    load: Callable[[Any], None]


COMMANDS: tuple[Command, ...] = (
    Command((("version", "print the package version"),), _add_version),
    Command((("run", "start the service on 127.0.0.1:50051 and say what to type next"),), _add_run),
    Command(
        (
            ("deal", "deal a deal code under a ruleset: hands and leader (--json)"),
            ("play", "play Big Two in the terminal against the service, with bots"),
        ),
        _add_play,
    ),
    Command((("vectors", "judge rule-vector files against the engine"),), _add_vectors),
    Command((("bench", "measure speed figures (bench engine)"),), _add_bench),
    Command((("tournament", "bot levels against each other on duplicate deals"),), _add_tournament),
    Command((("replay", "show a replay file trick by trick (or write it as an HTML page)"),), _add_replay),
    Command((("audit", "check replay files, archives or folders of them, locally or on Dask"),), _add_audit),
    Command((("serve", "run the stateless gRPC rules service"),), _add_serve),
    Command((("health", "check a server with the gRPC health checking protocol"),), _add_health),
    Command((("loadtest", "play many real deals against replicas: moves/s, errors, latency"),), _add_loadtest),
)


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is no option), if any."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the command it names is loaded (the rest are placeholders)."""
    parser = Parser(prog="bigtwo", description="Big Two rules engine and service.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None if argv is None else _command_in(argv)
    for command in COMMANDS:
        names = [name for name, _ in command.helps]
        if argv is None or wanted in names:
            command.load(sub)
            continue
        for name, help_text in command.helps:
            sub.add_parser(name, help=help_text, description=help_text)
    return parser


def _take_debug(argv: list[str]) -> bool:
    """Remove every ``--debug`` before a ``--`` from ``argv``; whether there was one. Taken out
    before parsing so that it works wherever it stands (``bigtwo --debug deal``, ``bigtwo deal
    --debug``) and even when the parser cannot be built (a bad environment variable)."""
    end = argv.index("--") if "--" in argv else len(argv)
    found = "--debug" in argv[:end]
    argv[:end] = [word for word in argv[:end] if word != "--debug"]
    return found


def _closed_channel_poller(args: threading.ExceptHookArgs) -> bool:
    """Whether a thread died as gRPC's connectivity poller does when its channel is closed while
    it waits (grpc/grpc#18995): the channel was ours, closed on purpose after the command's answer."""
    if not isinstance(args.exc_value, ValueError) or "Channel closed" not in str(args.exc_value):
        return False
    frames = traceback.extract_tb(args.exc_traceback)
    return any(frame.name == "_poll_connectivity" for frame in frames)


def _quiet_closed_channel_pollers() -> None:
    """The command speaks in sentences: a closed channel's poller thread must not print a traceback
    after a sentence that already said what happened. Every other thread error is printed as before."""
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if not _closed_channel_poller(args):
            previous(args)

    threading.excepthook = hook


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` names; its exit status. The command's error boundary."""
    from . import _interrupted_while_starting

    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:  # started: Ctrl-C is the boundary's
        signal.signal(signal.SIGINT, signal.default_int_handler)
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _take_debug(argv)
    # gRPC's C core logs connection failures on stderr by itself; the command says them in words.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    _quiet_closed_channel_pollers()
    command = _command_in(argv)
    prog = f"bigtwo {command}" if command else "bigtwo"
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            status = 0
        else:
            status = int(func(args))
        sys.stdout.flush()  # a closed pipe shows here, inside the boundary, rather than at exit
        return status
    except BaseException as error:  # the one boundary: everything ends in words
        return handle(error, prog, debug=debug)


if __name__ == "__main__":
    raise SystemExit(main())
