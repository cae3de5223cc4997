"""The service ``bigtwo play`` and ``bigtwo deal`` talk to: the one ``--target`` names, or a
``bigtwo serve`` of their own on 127.0.0.1 and a free port, started again if it dies."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
from collections.abc import Iterator
from typing import Any, Self

from bigtwo.tools.local_server import LocalServer

OWN_SERVER_RESTARTS = 3
"""How many times ``bigtwo play`` starts its own server again after it died, in one match."""


class OwnServer(LocalServer):
    """``bigtwo serve`` on 127.0.0.1 and a free port in a subprocess; always stopped.

    It runs in a session of its own, so Ctrl-C at the terminal reaches the game (which writes its
    replay) and not the server. It gets a token key made for this game (nothing is written under
    the home folder), so a server started again after a crash reads the tokens of the one before.
    Its log is a temporary file, removed when it stops. The client waits for it to answer.
    """

    def __init__(self) -> None:
        super().__init__("--no-call-log", grace=1, keys=secrets.token_hex(32), own_session=True, start=False)
        self.restarts = 0

    def restart(self) -> bool:
        """Start the server again on the same port if it died (at most :data:`OWN_SERVER_RESTARTS`
        times); False when it still runs or may not be restarted."""
        if self.alive() or self.restarts >= OWN_SERVER_RESTARTS:
            return False
        self.restarts += 1
        self.start()
        return True

    def __enter__(self) -> Self:
        self.start()
        return self


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    from .arguments import pem_certificates, pem_private_key, positive_seconds, target

    add = parser.add_argument
    add(
        "--target",
        type=target,
        default="",
        help="the service, host:port[,host:port...] (default: start one on a free port)",
    )
    add("--tls", action="store_true", help="connect with TLS")
    add("--ca", type=pem_certificates, default="", help="PEM CA bundle to trust (TLS)")
    add("--cert", type=pem_certificates, default="", help="PEM client certificate (mutual TLS)")
    add("--key", type=pem_private_key, default="", help="PEM client key (mutual TLS)")
    add("--server-name", default="", help="name to check on the server's certificate")
    add("--token", default=os.environ.get("BIGTWO_AUTH_TOKEN", ""), help="bearer token (env BIGTWO_AUTH_TOKEN)")
    add(
        "--timeout",
        type=positive_seconds,
        default=5.0,
        help="seconds to connect to --target, and the deadline of each call (default %(default)s)",
    )


def make_client(args: argparse.Namespace, target: str) -> Any:
    from bigtwo.client.client import BigTwoClient

    return BigTwoClient(
        target,
        timeout=args.timeout,
        tls=args.tls,
        ca_file=args.ca,
        cert_file=args.cert,
        key_file=args.key,
        server_name=args.server_name,
        token=args.token,
    )


@contextlib.contextmanager
def session(args: argparse.Namespace) -> Iterator[tuple[Any, OwnServer | None]]:
    """The client, and the server this command started (None with ``--target``)."""
    with contextlib.ExitStack() as stack:
        server = None if args.target else stack.enter_context(OwnServer())
        client = stack.enter_context(make_client(args, args.target or (server.target if server else "")))
        if args.target:  # fails at its first refused connection, within --timeout
            client.wait_ready(timeout=args.timeout, patient=False)
        else:  # our own server may still be starting
            client.wait_ready(timeout=30)
        yield client, server


@contextlib.contextmanager
def connected(args: argparse.Namespace) -> Iterator[Any]:
    with session(args) as (client, _):
        yield client
