"""The ``bigtwo`` command: argparse subcommands, each with its own ``--help``.

Subcommand modules register themselves with ``add_parser(subparsers)`` and set ``func`` (the
handler, returning the exit status) on their parser.
"""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from bigtwo.client import bench_cmd, tournament_cmd, vectors_cmd
from bigtwo.client.replay import commands as replay_commands
from bigtwo.service import bench as service_bench
from bigtwo.service import server as service_server


def _version() -> str:
    try:
        return version("bigtwo")
    except PackageNotFoundError:
        return "unknown"


def _cmd_version(args: argparse.Namespace) -> int:
    print(_version())
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    print("bigtwo run: not implemented yet")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bigtwo", description="Big Two rules engine and service.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    version_parser = sub.add_parser(
        "version", help="print the package version", description="Print the package version."
    )
    version_parser.set_defaults(func=_cmd_version)
    run_parser = sub.add_parser("run", help="run the service (not implemented yet)", description="Run the service.")
    run_parser.set_defaults(func=_cmd_run)
    vectors_cmd.add_parser(sub)
    service_bench.add_bench_subject(bench_cmd.add_parser(sub))
    tournament_cmd.add_parser(sub)
    replay_commands.add_parsers(sub)
    service_server.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    return int(func(args))


if __name__ == "__main__":
    raise SystemExit(main())
