"""``bigtwo run`` (``make run``): the service on 127.0.0.1:50051 in the foreground, with a banner
telling a newcomer what to type next. Ctrl-C or SIGTERM stops it (in-flight calls get ``--grace``
seconds). Every ``bigtwo serve`` flag works here too."""

from __future__ import annotations

import argparse
from typing import Any

RUN_WEB_PORT = 8080
"""``bigtwo run``'s browser port unless --web-port or BIGTWO_WEB_PORT says otherwise."""

BANNER = """\
Big Two rules service on {host}:{port} (gRPC, bigtwo.v1.BigTwoService){metrics}
{web}
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
    from bigtwo.service.server import BoundPorts

    from . import serve_cmd as server
    from .arguments import port_free
    from .errors import CommandError

    if args.port and not port_free(args.host, args.port):
        raise CommandError(
            f"{args.host}:{args.port} is already in use (is a service already running?). "
            f"Try: bigtwo run --port {args.port + 1}"
        )
    metrics = f"; metrics on http://{args.host}:{args.metrics_port}/metrics" if args.metrics_port else ""
    # A person's first line, before the server's own JSON log (its key warning comes first of all).
    print(f"Starting the Big Two rules service on {args.host}:{args.port or 'a free port'} ...", flush=True)

    def banner(ports: BoundPorts) -> None:  # the ports bound: a port given as 0 is the one chosen
        web = (
            f"Play in a browser: http://{args.host}:{ports.web}/ (Connect and gRPC-Web on the same port)\n"
            if ports.web is not None
            else ""
        )
        print(BANNER.format(host=args.host, port=ports.grpc, metrics=metrics, web=web), flush=True)

    return server.serve_main(args, on_bound=banner)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from . import serve_cmd as server

    parser: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="start the service on 127.0.0.1:50051 and say what to type next",
        description="Start the Big Two service in the foreground (what make run does) and print the next "
        "command to type. Takes every flag of bigtwo serve; the browser table is on --web-port "
        f"(default {RUN_WEB_PORT} here; 0 for any free port).",
    )
    server.add_arguments(parser)
    if parser.get_default("web_port") is None:  # a newcomer gets the browser table too
        parser.set_defaults(web_port=RUN_WEB_PORT)
    parser.set_defaults(func=run_main)
    return parser
