"""The ``bigtwo`` command's argument parser and value types: every value is checked when it is
parsed, so a mistake is refused at once, in a sentence naming its flag (or its environment
variable), and never found later as a traceback or after an hour of work.

* :class:`Parser` is the parser of the command and of every subcommand: its help shows each
  option's default, and its refusals are one sentence printed by :func:`bigtwo.cli.errors.report`
  (exit status 2), not argparse's usage block.
* The types (``type=`` of ``add_argument``) raise :class:`argparse.ArgumentTypeError`, which
  argparse prefixes with the flag: ``argument --port: '99999' is not a port number (0-65535)``.
* :func:`env_default` gives an option its default from an environment variable *unparsed*:
  argparse parses a string default with the option's type only when the option is not given, so
  ``BIGTWO_PORT=abc bigtwo serve --port 5000`` works, and ``BIGTWO_PORT=abc bigtwo serve`` is
  refused naming ``BIGTWO_PORT``.

The rules flags (``--preset``, ``--ruleset FILE``, ``-o``, ``--deals``) are defined here once, for
every command that takes rules: :func:`add_ruleset_arguments` and :func:`ruleset_from_args`.

This module imports nothing heavy (the engine only inside the functions about rules).
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .errors import EXIT_USAGE, UsageError, report

# -- the parser ---------------------------------------------------------------------------------------


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """``argparse.ArgumentDefaultsHelpFormatter``, but quiet where a default says nothing (no value,
    an on/off flag) and where the help already tells it (its text mentions a default)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            not action.option_strings
            or action.nargs == 0
            or action.default is argparse.SUPPRESS
            or action.default is None
            or isinstance(action.default, bool)
            or (isinstance(action.default, (str, list, tuple)) and not action.default)
            or "default" in text.lower()
        ):
            return text
        return f"{text} (default %(default)s)"


class RawDescriptionDefaultsHelpFormatter(argparse.RawDescriptionHelpFormatter, DefaultsHelpFormatter):
    """A description kept as written (examples, tables) and the defaults shown."""


_FORMATTERS: dict[Any, type[argparse.HelpFormatter]] = {
    argparse.HelpFormatter: DefaultsHelpFormatter,
    argparse.RawDescriptionHelpFormatter: RawDescriptionDefaultsHelpFormatter,
    argparse.ArgumentDefaultsHelpFormatter: DefaultsHelpFormatter,
}


class Parser(argparse.ArgumentParser):
    """The parser of ``bigtwo`` and its subcommands (``add_subparsers`` makes its subparsers of the
    same class): defaults shown in ``--help``, ``--debug`` listed, refusals in one sentence."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        chosen = kwargs.get("formatter_class", argparse.HelpFormatter)
        kwargs["formatter_class"] = _FORMATTERS.get(chosen, chosen)
        super().__init__(*args, **kwargs)
        if self.add_help:
            # Taken out of the command line by bigtwo.cli.main.main before parsing, wherever it
            # stands; declared here so that every --help lists it.
            self.add_argument(
                "--debug",
                action="store_true",
                default=argparse.SUPPRESS,
                help="on an error, show the Python traceback as well",
            )

    def error(self, message: str) -> NoReturn:
        report(UsageError(f"{message}. See {self.prog} --help."), self.prog)
        raise SystemExit(EXIT_USAGE)


# -- values from the environment --------------------------------------------------------------------


class EnvText(str):
    """A default read from the environment variable :attr:`variable`, still to be parsed."""

    variable: str

    def __new__(cls, value: str, variable: str) -> EnvText:
        made = super().__new__(cls, value)
        made.variable = variable
        return made

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]
        return (str(self), self.variable)  # pickled along with a server's settings to its workers


def env_default(variable: str, fallback: Any) -> Any:
    """The option's default: the environment variable's text when it is set and not empty (parsed
    later by the option's type, and refused naming the variable), else ``fallback``."""
    value = os.environ.get(variable, "")
    return EnvText(value, variable) if value else fallback


def env_flag(variable: str, fallback: bool) -> bool:
    """An on/off setting from the environment (for ``store_true``/``store_false`` options, which
    have no type to parse it later): 1/true/yes/on or 0/false/no/off."""
    value = os.environ.get(variable, "").strip().lower()
    if not value:
        return fallback
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"the environment variable {variable}={value!r} is not on or off; set it to 1 or 0, or unset it.")


def refuse(text: str, why: str) -> NoReturn:
    """Refuse a value: ``'TEXT' WHY``, or, for a value from the environment, naming the variable."""
    if isinstance(text, EnvText):
        raise argparse.ArgumentTypeError(
            f"{text.variable}={str(text)!r} in the environment {why}; change or unset {text.variable}"
        )
    raise argparse.ArgumentTypeError(f"{text!r} {why}")


# -- numbers ------------------------------------------------------------------------------------------


def _whole(text: str, low: int, high: int | None, what: str) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        refuse(text, f"is not {what}")
    if value < low or (high is not None and value > high):
        refuse(text, f"is not {what}")
    return value


def _real(text: str, low: float, strict: bool, what: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        refuse(text, f"is not {what}")
    if value != value or value in (float("inf"), float("-inf")) or value < low or (strict and value == low):
        refuse(text, f"is not {what}")
    return value


def port(text: str) -> int:
    """A TCP port to listen on: 1-65535, or 0 (any free port, or none where the help says so)."""
    return _whole(text, 0, 65535, "a port number (0-65535)")


def web_origin(text: str) -> str:
    """An origin a browser sends (``https://cards.example``, ``http://localhost:5173``): a scheme, a
    host and maybe a port, nothing after; a page's URL or a path would never match one."""
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") or parts.query:
        refuse(
            text, "an origin: http:// or https://, a host and maybe a :port, nothing after (e.g. https://cards.example)"
        )
    return f"{parts.scheme}://{parts.netloc}"


def web_origins_from_env(variable: str) -> tuple[str, ...]:
    """The origins of a comma-separated environment variable, each checked as ``--web-origin`` is."""
    text = os.environ.get(variable, "")
    try:
        return tuple(web_origin(item) for item in text.split(",") if item.strip())
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"the environment variable {variable}: {exc}") from None


def positive_int(text: str) -> int:
    return _whole(text, 1, None, "a whole number of at least 1")


def non_negative_int(text: str) -> int:
    return _whole(text, 0, None, "a whole number of 0 or more")


def positive_seconds(text: str) -> float:
    return _real(text, 0.0, True, "a number of seconds above 0")


def non_negative_seconds(text: str) -> float:
    return _real(text, 0.0, False, "a number of seconds (0 or more)")


def positive_float(text: str) -> float:
    return _real(text, 0.0, True, "a number above 0")


def non_negative_float(text: str) -> float:
    return _real(text, 0.0, False, "a number of 0 or more")


def share(text: str) -> float:
    """A share between 0 and 1."""
    value = _real(text, 0.0, False, "a share between 0 and 1")
    if value > 1:
        refuse(text, "is not a share between 0 and 1")
    return value


# -- words --------------------------------------------------------------------------------------------


def one_of(choices: Sequence[str], *, fold: bool = False) -> Callable[[str], str]:
    """A value among ``choices`` (compared in lower case with ``fold``). Given as ``type=`` beside
    ``choices=``, it also checks a default from the environment, which argparse's ``choices`` never
    does."""

    def parse(text: str) -> str:
        value = str(text).strip().lower() if fold else str(text)
        if value not in choices:
            refuse(text, f"is not one of {', '.join(choices)}")
        return value

    parse.__name__ = "choice"
    return parse


LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
log_level = one_of(LOG_LEVELS, fold=True)


def preset_name(text: str) -> str:
    """The name of a ruleset preset (RULES.md)."""
    from bigtwo.engine import PRESET_NAMES

    if text not in PRESET_NAMES:
        refuse(text, f"is not a preset; the presets are {', '.join(PRESET_NAMES)}")
    return text


# -- rules ----------------------------------------------------------------------------------------------

DEFAULT_PRESET = "classic"


def ruleset_file(text: str) -> Any:
    """``--ruleset FILE``: a TOML (``.toml``) or JSON (``.json``) ruleset file (a preset and
    options), read at once so that a wrong file is refused naming it; a
    :class:`bigtwo.engine.Ruleset`."""
    from bigtwo.engine import Ruleset, RulesetError

    path = Path(text)
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        refuse(text, "is not a ruleset file: its name ends in .toml or .json")
    try:
        body = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        refuse(text, "does not exist (no such file)")
    except IsADirectoryError:
        refuse(text, "is a folder; give a .toml or .json ruleset file")
    except (OSError, UnicodeDecodeError) as exc:
        refuse(text, f"cannot be read ({getattr(exc, 'strerror', None) or exc})")
    try:
        return Ruleset.from_json(body) if suffix == ".json" else Ruleset.from_toml(body)
    except (RulesetError, ValueError) as exc:
        refuse(text, f"is not a ruleset: {exc}")


def option_setting(text: str) -> str:
    """``-o NAME=VALUE``: one option of RULES.md (its name and value are checked with the rest
    of the rules, by :func:`ruleset_from_args`)."""
    name, sep, _ = str(text).partition("=")
    if not sep or not name.strip():
        refuse(text, "is not NAME=VALUE (e.g. flush=rank-first)")
    return str(text)


def positive_deals(text: str) -> int:
    """``--deals N``: N is at least 1 (leaving it out plays the rules' own match length)."""
    try:
        value = int(str(text).strip())
    except ValueError:
        refuse(text, "is not a whole number of deals")
    if value < 1:
        refuse(
            text,
            "is no match: a match is at least 1 deal; leave --deals out to play the rules' own length "
            "(classic: 8 deals) or use -o match=open for a match that goes on until you quit",
        )
    return value


def add_ruleset_arguments(parser: argparse.ArgumentParser, *, deals: bool = False) -> None:
    """The rules of a command, the same wherever a command takes them: ``--preset NAME`` or
    ``--ruleset FILE``, then ``-o NAME=VALUE`` on top (and, with ``deals``, ``--deals N``).
    :func:`ruleset_from_args` makes the ruleset of what was given."""
    from bigtwo.engine import PRESET_NAMES

    parser.add_argument(
        "--preset",
        type=preset_name,
        default=None,
        metavar="NAME",
        help=f"the rules' preset: {', '.join(PRESET_NAMES)} (default {DEFAULT_PRESET})",
    )
    parser.add_argument(
        "--ruleset",
        type=ruleset_file,
        default=None,
        metavar="FILE",
        help="the rules from a .toml or .json ruleset file (a preset and options); instead of --preset",
    )
    parser.add_argument(
        "--option",
        "-o",
        type=option_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override an option of RULES.md, e.g. -o flush=rank-first -o players=3 (repeatable)",
    )
    if deals:
        parser.add_argument(
            "--deals",
            type=positive_deals,
            default=None,
            metavar="N",
            help="play N deals (sets the match option to deals:N; default: the rules' own match length)",
        )


def ruleset_from_args(args: argparse.Namespace) -> Any:
    """The :class:`bigtwo.engine.Ruleset` of :func:`add_ruleset_arguments`' flags: the preset (or
    the ruleset file), then every ``-o``, then ``--deals``. A mistake is a :class:`UsageError`."""
    from bigtwo.engine import Ruleset, RulesetError

    given = getattr(args, "ruleset", None)
    if given is not None and args.preset:
        raise UsageError("give the rules by --preset or by --ruleset FILE, not both.")
    mapping: dict[str, Any] = given.to_mapping() if given is not None else {"preset": args.preset or DEFAULT_PRESET}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--option {item!r}: write NAME=VALUE, e.g. flush=rank-first.")
        mapping[name.strip().replace("-", "_")] = value.strip()
    deals = getattr(args, "deals", None)
    if deals is not None:
        if any(item.partition("=")[0].strip() == "match" for item in args.option):
            raise UsageError("give the match length by --deals N or by -o match=..., not both.")
        mapping["match"] = f"deals:{deals}"
    try:
        return Ruleset.from_mapping(mapping)
    except (RulesetError, ValueError) as exc:
        raise UsageError(str(exc)) from None


_HOST_PORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\s\[\]]+):(?P<port>[^:]*)$")


def target(text: str) -> str:
    """``HOST:PORT`` of a service, or several comma-separated; gRPC's own forms (``dns:///...``,
    ``unix:...``, ``ipv4:...``) pass as they are. A port out of range is refused here: gRPC would
    quietly take it modulo 65536 and reach some other port."""
    for part in (item.strip() for item in str(text).split(",")):
        if not part:
            continue
        if "://" in part or part.startswith(("unix:", "unix-abstract:", "ipv4:", "ipv6:", "vsock:")):
            continue
        found = _HOST_PORT.match(part)
        if found is None:
            refuse(text, "is not HOST:PORT (e.g. 127.0.0.1:50051)")
        digits = found["port"]
        if not digits.isdigit() or not 1 <= int(digits) <= 65535:
            refuse(text, "does not end in a port number 1-65535 (HOST:PORT, e.g. 127.0.0.1:50051)")
    return str(text)


def port_free(host: str, number: int) -> bool:
    """Whether ``host:number`` can be listened on now (False: in use). An address that cannot be
    listened on at all (a name that does not resolve, another machine's address) is a usage error."""
    try:
        family = socket.getaddrinfo(host, number, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            # As servers bind: connections of a stopped one still in TIME_WAIT do not count.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, number))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return False
        raise UsageError(f"--host {host}: cannot listen there ({exc.strerror or exc}).") from None
    return True


# -- paths --------------------------------------------------------------------------------------------


def readable_file(text: str) -> str:
    """A file that exists and can be read ("" = none given)."""
    if not text:
        return str(text)
    path = Path(text)
    if path.is_dir():
        refuse(text, "is a folder; give a file")
    if not path.is_file():
        if path.parent != path and not path.parent.is_dir():
            refuse(text, f"does not exist (there is no folder {path.parent})")
        refuse(text, "does not exist")
    if not os.access(path, os.R_OK):
        refuse(text, "cannot be read (permission denied)")
    return str(text)


def pem_certificates(text: str) -> str:
    """A readable PEM file of one or more certificates (a chain, a CA bundle); "" = none given.
    Read at once: gRPC would only log a cryptic handshake error and fail every connection."""
    if not readable_file(text):
        return str(text)
    from cryptography import x509

    try:
        x509.load_pem_x509_certificates(Path(text).read_bytes())
    except ValueError:
        refuse(text, "is not a PEM certificate file (no readable -----BEGIN CERTIFICATE----- block)")
    return str(text)


def pem_private_key(text: str) -> str:
    """A readable PEM private key without a passphrase; "" = none given."""
    if not readable_file(text):
        return str(text)
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        load_pem_private_key(Path(text).read_bytes(), password=None)
    except (ValueError, TypeError):
        refuse(text, "is not a PEM private key without a passphrase")
    return str(text)


def output_file(text: str) -> str:
    """A file to write whose folder exists ("" = none given, "-" = standard output): checked
    before the work starts, not after it."""
    if not text or text == "-":
        return str(text)
    path = Path(text)
    if path.is_dir():
        refuse(text, f"is a folder; give a file name in it, e.g. {path / 'out'}")
    folder = path.parent
    if not folder.is_dir():
        refuse(text, f"cannot be written: there is no folder {folder}")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        refuse(text, "cannot be written (permission denied)")
    return str(text)


# -- charts ---------------------------------------------------------------------------------------------

PLOT_EXTRA = "pip install -e '.[plot]'"
"""How to get matplotlib, which draws the PNG charts and is an extra (``plot``), not a dependency."""


def plotting_missing() -> str:
    """Empty when matplotlib can be imported; else what is missing and how to get it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return f"matplotlib is not installed; install the charts' extra with {PLOT_EXTRA}"
    return ""


def png_file(text: str) -> str:
    """A PNG chart to write (:func:`output_file`), refused at once, before any work, when
    matplotlib is missing."""
    path = output_file(text)
    if path and path != "-":
        missing = plotting_missing()
        if missing:
            refuse(text, f"cannot be drawn: {missing}")
    return path


__all__ = [
    "DEFAULT_PRESET",
    "LOG_LEVELS",
    "PLOT_EXTRA",
    "DefaultsHelpFormatter",
    "EnvText",
    "Parser",
    "RawDescriptionDefaultsHelpFormatter",
    "add_ruleset_arguments",
    "env_default",
    "env_flag",
    "log_level",
    "non_negative_float",
    "non_negative_int",
    "non_negative_seconds",
    "one_of",
    "option_setting",
    "output_file",
    "pem_certificates",
    "pem_private_key",
    "plotting_missing",
    "png_file",
    "port",
    "port_free",
    "positive_deals",
    "positive_float",
    "positive_int",
    "positive_seconds",
    "preset_name",
    "readable_file",
    "refuse",
    "ruleset_file",
    "ruleset_from_args",
    "share",
    "target",
]
