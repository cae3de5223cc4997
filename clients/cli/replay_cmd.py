"""The ``bigtwo replay`` subcommand (registered by :mod:`bigtwo.cli.main`); ``bigtwo audit`` is
:mod:`bigtwo.cli.audit_cmd`, which reads its key files with :func:`load_key`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bigtwo.client.replay_files import read_replay
from bigtwo.engine.replay.audit import audit_log
from bigtwo.engine.replay.format import ReplayFormatError


def load_key(path: str | Path) -> bytes:
    """A signing key file: its bytes, trailing whitespace (a final newline) removed."""
    from .errors import UsageError

    key = Path(path).read_bytes().rstrip()
    if not key:
        raise UsageError(f"--key {path}: the key file is empty; give the file the replays were signed with.")
    return key


def add_parsers(sub: Any) -> None:
    from .arguments import output_file, positive_int, readable_file

    replay = sub.add_parser(
        "replay",
        help="show a replay file trick by trick (or write it as an HTML page)",
        description="Re-run a replay file through the engine and show it trick by trick, with refusals, "
        "settlement cards and match totals. Exit status 1 when the file does not check out.",
    )
    replay.add_argument("file", type=readable_file, help="a bigtwo-replay/1 TOML file")
    replay.add_argument(
        "--html", type=output_file, metavar="OUT.html", help="write one self-contained HTML page instead"
    )
    replay.add_argument(
        "--key", type=readable_file, metavar="FILE", help="signing key file to verify the signature with"
    )
    replay.add_argument("--width", type=positive_int, default=None, help="terminal width (default: detected)")
    replay.set_defaults(func=cmd_replay)


# -- bigtwo replay ---------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .errors import UsageError

    console = Console(width=args.width) if args.width else Console()
    try:
        log = read_replay(args.file)
    except ReplayFormatError as exc:
        raise UsageError(f"{args.file} is not a replay file bigtwo can read: {exc}") from None
    key = load_key(args.key) if args.key else None
    verdict = audit_log(log, key)
    if args.html:
        from bigtwo.engine.replay.html import render_html

        Path(args.html).write_text(
            render_html(log, verdict, title=f"Big Two replay · {Path(args.file).name}"), encoding="utf-8"
        )
        console.print(f"wrote {args.html} ({len(verdict.steps)} steps); {verdict.summary()}", highlight=False)
    else:
        from .render_terminal import render

        render(log, verdict, console)
    return 0 if verdict.ok else 1
