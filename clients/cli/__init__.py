"""The ``bigtwo`` command: the one composition root of the project (:mod:`bigtwo.cli.main` dispatches;
one module per subcommand). It alone may import both the server (``bigtwo serve``/``run``) and the
client (``bigtwo play``, ``deal``, ``health``); the import contracts in pyproject.toml hold that."""

import signal as _signal
import sys as _sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C before :func:`bigtwo.cli.main.main` is running (while its imports load, about a
    second on a busy machine): a sentence and the usual status, not a traceback from an import."""
    _sys.stderr.write("bigtwo: interrupted.\n")
    raise SystemExit(130)


# Only as the console script: a program that imports the package keeps its own Ctrl-C.
if _sys.argv[0].rsplit("/", 1)[-1] == "bigtwo" and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted_while_starting)
