"""The ``bigtwo`` command's user-facing errors, and the one place where any error becomes words.

A newcomer's mistake (a flag value, an environment variable, a path, a file that is not what its
flag wants, a service that cannot be reached or is not a Big Two service, output closed early)
must end in one or two plain sentences that say what to change, and an exit status: 2 for a usage
mistake, 1 for a failure. Never a traceback: that is what ``--debug`` is for.

So commands do not print their own refusals. They raise :class:`UsageError` or
:class:`CommandError` (or one of its kinds below), or simply let the typed exceptions of the client,
the engine, the replay reader and the operating system through; :func:`explain` is the one table
that turns any of those into a :class:`CommandError`, and :func:`handle` (called by
``bigtwo.cli.main.main`` around the whole command) prints it. Argument parsing reports through
the same printer (:func:`report`).

This module imports nothing heavy: the exception classes it recognises are looked up only among
the modules already loaded (an exception of a module never imported cannot have been raised).
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Any, TextIO

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

START_ADVICE = "Start one with `make run` (or `bigtwo serve`), or check the address."


class CommandError(Exception):
    """A failure the user can act on; :attr:`message` is the whole text shown (one or two
    sentences, without the ``bigtwo COMMAND:`` prefix, which :func:`report` adds)."""

    exit_status = EXIT_FAILURE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(CommandError):
    """The command was given something it cannot use: a flag's value, an environment variable,
    a path, a file's contents. Exit status 2, as argparse's own refusals."""

    exit_status = EXIT_USAGE


class ServiceUnreachable(CommandError):
    """No connection to a service: ``why`` is what was seen (nothing listening, a TLS mismatch, a
    name that does not resolve, no answer in time), ``advice`` what to do about it."""

    def __init__(self, target: str, why: str, advice: str = START_ADVICE) -> None:
        where = f" at {target}" if target else ""
        super().__init__(f"cannot reach the service{where}: {why}. {advice}")
        self.target = target
        self.why = why


class ServiceRefused(CommandError):
    """The service answered, with an error the command does not handle itself."""


class Interrupted(CommandError):
    """Ctrl-C: the shell's convention, 128 + SIGINT."""

    exit_status = EXIT_INTERRUPTED


# -- what a connection failure means, and what to do about it ---------------------------------------

_ADVICE = {
    "TLS_NOT_SPOKEN": "It serves without TLS: leave out the TLS options (--tls, --ca).",
    "TLS_CERTIFICATE_REJECTED": "Give the CA that signed its certificate (--ca; --tls-ca for bigtwo health) "
    "and, for an IP address, the name on the certificate (--server-name).",
    "TLS_HANDSHAKE_FAILED": "Check the TLS options (--tls, --ca, --cert, --key, --server-name).",
    "CONNECTION_CLOSED": "If it serves with TLS, connect with TLS (--tls and --ca; --tls-ca for bigtwo health); "
    "otherwise check that the address is a Big Two service.",
    "NOT_GRPC": "Check the address: give the gRPC port of a Big Two service (50051 unless set otherwise).",
}


def unreachable(target: str, reason: str, why: str) -> ServiceUnreachable:
    """The sentence for a connection that failed with ``reason`` (a reason of
    :func:`bigtwo.client.client.connection_failure`)."""
    return ServiceUnreachable(target, why, _ADVICE.get(reason, START_ADVICE))


# -- the one table: any exception -> a CommandError (None: a bug) -----------------------------------


def _loaded(module: str, name: str) -> type[BaseException] | None:
    """The exception class ``module.name``, if that module has been imported."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _is(error: BaseException, module: str, name: str) -> bool:
    cls = _loaded(module, name)
    return cls is not None and isinstance(error, cls)


def _client_error(error: Any) -> CommandError:
    """A :class:`bigtwo.client.client.BigTwoError` in words."""
    from bigtwo.client import client

    target = error.target or ""
    where = f" at {target}" if target else ""
    code = error.code.name
    if isinstance(error, client.BigTwoUnavailable):
        reason, why = (error.reason, error.message) if error.reason else client.connection_failure(error.message)
        return unreachable(target, reason, why)
    if isinstance(error, client.BigTwoDeadlineExceeded):
        return ServiceRefused(
            f"the service{where} did not answer in time. Try again, or give it longer with --timeout SECONDS."
        )
    if isinstance(error, client.BigTwoUnauthenticated):
        return UsageError(
            f"the service{where} wants a bearer token ({error.message}). Give it with --token "
            "(or the environment variable BIGTWO_AUTH_TOKEN)."
        )
    if code == "UNIMPLEMENTED":
        return ServiceRefused(
            f"the server{where} is not a Big Two service (it does not know the call: {error.message}). "
            "Check the address."
        )
    if isinstance(error, client.BigTwoInvalidArgument):
        fields = "; ".join(f"{v.field}: {v.description}" for v in error.violations) or error.message
        return UsageError(f"the service{where} refused the request: {fields}")
    return ServiceRefused(f"the service{where} answered {code}: {error.message}")


def _rpc_error(error: Any) -> CommandError:
    """A bare ``grpc.RpcError`` (commands that use the generated stubs directly) in words."""
    from bigtwo.client import client

    return _client_error(client.error_from_rpc(error))


def _os_error(error: OSError) -> CommandError:
    if isinstance(error, BrokenPipeError):
        return CommandError(
            "the output was closed before all of it was written (the program reading it, such as head, "
            "stopped early); the rest was dropped."
        )
    path = error.filename
    what = error.strerror or str(error)
    if path is None:
        return CommandError(f"{what}.")
    if isinstance(error, FileNotFoundError):
        return CommandError(f"{path}: no such file or folder. Check the path (and that its folder exists).")
    if isinstance(error, PermissionError):
        return CommandError(f"{path}: permission denied. Choose a path you may read or write.")
    if isinstance(error, IsADirectoryError):
        return CommandError(f"{path} is a folder; give a file name.")
    return CommandError(f"{path}: {what}.")


def explain(error: BaseException, command: str | None = None) -> CommandError | None:
    """The user-facing form of ``error`` (raised by the subcommand ``command``, if known); None when
    it is not a user's mistake nor a failure the user can act on (a bug: :func:`handle` says so and
    points at ``--debug``)."""
    if isinstance(error, CommandError):
        return error
    if isinstance(error, KeyboardInterrupt):
        return Interrupted("interrupted.")
    if isinstance(error, SystemExit) and isinstance(error.code, str):
        # The older refusals of some commands: ``raise SystemExit("bigtwo play: ...")``.
        return UsageError(error.code.split(": ", 1)[1] if error.code.startswith("bigtwo") else error.code)
    if _is(error, "bigtwo.client.client", "BigTwoError"):
        return _client_error(error)
    if _is(error, "grpc", "RpcError") and callable(getattr(error, "code", None)):
        return _rpc_error(error)
    if _is(error, "bigtwo.engine.errors", "RulesetError") or _is(error, "bigtwo.engine.errors", "DealCodeError"):
        return UsageError(str(error))
    if _is(error, "bigtwo.engine.replay.format", "ReplayFormatError"):
        return UsageError(str(error))
    if _is(error, "bigtwo.service.keys", "KeyConfigError"):
        return UsageError(str(error))
    if _is(error, "bigtwo.tools.cluster", "DaskMissing"):
        return UsageError(str(error))  # --dask cannot be used here until the extra is installed
    if _is(error, "bigtwo.tools.cluster", "DaskUnreachable"):
        return CommandError(str(error))
    if isinstance(error, ModuleNotFoundError):
        from .extras import missing_extra  # an install to add, named (pip install 'bigtwo[EXTRA]')

        sentence = missing_extra(error, command)
        return CommandError(sentence) if sentence is not None else None
    if isinstance(error, OSError):
        return _os_error(error)
    return None


# -- printing ----------------------------------------------------------------------------------------


def report(error: CommandError, prog: str, stream: TextIO | None = None) -> None:
    """``PROG: MESSAGE`` on stderr (or ``stream``); a closed stderr is not an error of its own."""
    out = stream if stream is not None else sys.stderr
    with contextlib.suppress(OSError):
        print(f"{prog}: {error.message}", file=out, flush=True)


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so that the interpreter's last flush at exit
    does not fail a second time (the recipe of the ``signal`` module's documentation)."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def handle(error: BaseException, prog: str, *, debug: bool = False) -> int:
    """Print ``error`` as the user should see it; the exit status. The one handler of the command."""
    if isinstance(error, SystemExit) and not isinstance(error.code, str):
        return int(error.code or 0)
    if debug:
        traceback.print_exception(error)
    if isinstance(error, BrokenPipeError):
        _silence_stdout()
    known = explain(error, prog.split()[1] if " " in prog else None)
    if known is None:
        known = CommandError(
            f"unexpected error ({type(error).__name__}: {error}). This is a bug in bigtwo; "
            f"`{prog.replace('bigtwo', 'bigtwo --debug', 1)} ...` shows where it happened."
        )
    report(known, prog)
    return known.exit_status


__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "START_ADVICE",
    "CommandError",
    "Interrupted",
    "ServiceRefused",
    "ServiceUnreachable",
    "UsageError",
    "explain",
    "handle",
    "report",
    "unreachable",
]
