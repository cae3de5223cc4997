"""``bigtwo run`` (``make run``): the service on 127.0.0.1:50051 in the foreground, with a banner
telling a newcomer what to type next. Ctrl-C or SIGTERM stops it (in-flight calls get ``--grace``
seconds). Every ``bigtwo serve`` flag works here too."""

from __future__ import annotations

import argparse
from typing import Any

BANNER = """\
Big Two rules service on {host}:{port} (gRPC, bigtwo.v1.BigTwoService){metrics}

  In another terminal, in this folder, activate the environment once:
      source .venv/bin/activate
  then play a game against bots:
      bigtwo play --target {host}:{port}
  or deal a hand and look at it:
      bigtwo deal --target {host}:{port}
  From Python: see examples/ and docs/CLIENT.md.

Ctrl-C stops the service. Its log follows (one JSON line per call).
"""


def run_main(args: argparse.Namespace) -> int:
    from . import serve_cmd as server
    from .arguments import port_free
    from .errors import CommandError

    if args.port and not port_free(args.host, args.port):
        raise CommandError(
            f"{args.host}:{args.port} is already in use (is a service already running?). "
            f"Try: bigtwo run --port {args.port + 1}"
        )
    metrics = f"; metrics on http://{args.host}:{args.metrics_port}/metrics" if args.metrics_port else ""

    def banner(port: int) -> None:  # the port bound: with --port 0, the one the system chose
        print(BANNER.format(host=args.host, port=port, metrics=metrics), flush=True)

    return server.serve_main(args, on_bound=banner)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from . import serve_cmd as server

    parser: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="start the service on 127.0.0.1:50051 and say what to type next",
        description="Start the Big Two service in the foreground (what make run does) and print the next "
        "command to type. Takes every flag of bigtwo serve.",
    )
    server.add_arguments(parser)
    parser.set_defaults(func=run_main)
    return parser
