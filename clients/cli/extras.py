"""Which extra of the ``bigtwo`` distribution brings which third-party module, and the sentence a
command ends in when it meets one that is not installed.

``pip install bigtwo`` is the engine alone (standard library only); the rest comes by need:
``client`` (gRPC and protobuf), ``server``, ``web`` (the browser port), ``cli`` (the whole command),
``plot``, ``distributed``, ``load`` and ``dev`` (pyproject.toml, README "Installs"). A command that
imports a module of an extra not installed raises :class:`ModuleNotFoundError`; the command's error
boundary (:func:`bigtwo.cli.errors.explain`) turns it into :func:`missing_extra`'s sentence.

The table names, for each top-level module, the smallest extra that brings it;
tests/test_installs.py checks it against pyproject.toml's extras and against every module the
shipped packages import.
"""

from __future__ import annotations

from collections.abc import Mapping

EXTRA_OF_MODULE: Mapping[str, str] = {
    # client: the generated API, the codec and the client library
    "grpc": "client",
    "google": "client",  # google.protobuf (protobuf), google.rpc (grpcio-status's googleapis-common-protos)
    "grpc_status": "client",
    # server: bigtwo serve
    "grpc_health": "server",
    "grpc_reflection": "server",
    "structlog": "server",
    "prometheus_client": "server",
    "uvloop": "server",
    "cryptography": "server",
    # web: the browser port (bigtwo serve --web-port, bigtwo run)
    "connectrpc": "web",
    "granian": "web",
    "starlette": "web",
    "protobuf": "web",  # protobuf-py, connectrpc's well-known types (from protobuf.wkt import Any)
    # cli: the terminal output of the command
    "rich": "cli",
    # the rest, each its own extra
    "matplotlib": "plot",
    "dask": "distributed",
    "distributed": "distributed",
    "fsspec": "distributed",
    "locust": "load",
    "redis": "ledger",  # the spent-token ledger (bigtwo serve --token-ledger)
    "numpy": "learned",  # the learned bot level's forward pass
    "torch": "train",  # training it (python -m bigtwo.tools.learn)
}


def install_hint(extra: str) -> str:
    """The command that adds ``extra``, for an installed package and for a checkout."""
    return f"pip install 'bigtwo[{extra}]' (in a checkout: pip install -e '.[{extra}]')"


def extra_for(module: str | None) -> str | None:
    """The extra that brings ``module`` (a dotted name, as :attr:`ModuleNotFoundError.name`), if any."""
    if not module:
        return None
    return EXTRA_OF_MODULE.get(module.split(".", 1)[0])


NESTED: tuple[str, ...] = ("client", "server", "cli")
"""Extras that hold the one before them (pyproject.toml): a command is advised the whole of what it
runs on, not the one package it happened to import first."""

COMMAND_EXTRA: Mapping[str, str] = {"serve": "server", "health": "server"}
"""What each command runs on, among :data:`NESTED`: the server's own commands need no terminal
output; every other command is the ``cli`` extra (bigtwo play starts a server of its own)."""


def missing_extra(error: ModuleNotFoundError, command: str | None = None) -> str | None:
    """The sentence for a module of an extra that is not installed, for ``command`` (the subcommand
    run; None: the module's own extra); None for any other module (a missing module of bigtwo's own
    or of the standard library is a bug, not an install to add)."""
    extra = extra_for(error.name)
    if extra is None:
        return None
    if extra in NESTED and command is not None:
        extra = max(extra, COMMAND_EXTRA.get(command, "cli"), key=NESTED.index)
    return (
        f"this needs the '{extra}' extra, which is not installed (no module named '{error.name}'). "
        f"Add it with {install_hint(extra)}."
    )


__all__ = ["COMMAND_EXTRA", "EXTRA_OF_MODULE", "NESTED", "extra_for", "install_hint", "missing_extra"]
