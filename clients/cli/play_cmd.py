"""``bigtwo play``: Big Two in the terminal against the service.

``bigtwo play`` starts its own service on 127.0.0.1 (a free port) unless ``--target`` names one
(:mod:`.play_server`), seats you and bots at chosen levels (:mod:`.play_setup`), and plays the
match deal by deal: your seat at the prompt (:mod:`.play_person`), the table, the settlement card
after each deal and the match table at the end (:mod:`.play_screen`), the command that deals the
same cards to someone else, and a replay file. Colour when the output is a terminal, plain text
when piped.

No match is lost. The service keeps nothing, so the match is the client's: calls that find a
target unavailable go to the next one after a bounded backoff (:mod:`bigtwo.client.client`), a
server this command started is started again if it dies, and when the service cannot be reached,
on Ctrl-C and on ``quit`` the unfinished match is written to its replay file with the command that
goes on with it, ``bigtwo play --resume FILE`` (:meth:`Table.restore <bigtwo.client.table.Table.restore>`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from bigtwo.engine.replay.names import seat_labels, seat_ref
from bigtwo.engine.rules import MatchKind

from . import deal_cmd
from .arguments import add_ruleset_arguments
from .play_person import SORTS, Person, QuitGame
from .play_screen import Out, Screen, escape
from .play_server import OwnServer, add_connection_arguments, session
from .play_setup import (
    DEFAULT_BOTS,
    Setup,
    check_levels,
    match_length,
    own_levels,
    seat_number,
    setup_from_args,
    setup_from_replay,
    share_command,
    writable_file,
)


def resume_command(path: Path, args: argparse.Namespace) -> str:
    """``bigtwo play --resume FILE`` with the connection and seed this match used (never the
    bearer token: it is said to be needed, not shown)."""
    words = ["bigtwo", "play", "--resume", str(path)]
    if args.target:
        words += ["--target", args.target]
    if args.tls:
        words.append("--tls")
    for flag, value in (("--ca", args.ca), ("--cert", args.cert), ("--key", args.key)):
        if value:
            words += [flag, value]
    if args.server_name:
        words += ["--server-name", args.server_name]
    if args.seed:
        words += ["--seed", str(args.seed)]
    command = shlex.join(words)
    if args.token and args.token != os.environ.get("BIGTWO_AUTH_TOKEN", ""):
        command += "   (with your --token as before)"
    return command


def save_replay(table: Any, path: Path) -> Path:
    """Write the replay; when ``path`` cannot be written, a file in the temporary folder instead
    (the match is never lost for want of a folder)."""
    try:
        return Path(table.write_replay(path))
    except OSError as exc:
        print(f"bigtwo play: cannot write {path} ({exc.strerror}); writing to the temporary folder", file=sys.stderr)
        fallback = Path(tempfile.mkstemp(prefix="bigtwo-replay-", suffix=".toml")[1])
        return Path(table.write_replay(fallback))


def play_deals(table: Any, screen: Screen, setup: Setup, args: argparse.Namespace, server: OwnServer | None) -> None:
    """Deal and play until the match is over. A server this command started that dies is started
    again (the client's own retries cover a restart elsewhere and the loss of one of several
    targets); any other failure leaves the table as it was, its replay writable."""
    from bigtwo.client.client import BigTwoUnavailable

    shown = len(table.deals)
    while True:
        try:
            if not _advance(table, screen, setup, args):
                break
        except BigTwoUnavailable:
            if server is None or not server.restart():
                raise
            screen.say("[yellow]The game's own server stopped; it is started again and the match goes on.[/yellow]")
            table.client.wait_ready(timeout=30)
            continue
        shown = _show_settled(table, screen, setup, shown)


def _advance(table: Any, screen: Screen, setup: Setup, args: argparse.Namespace) -> bool:
    """One step of the match: settle a finished deal, one move, or the next deal; False when it is over."""
    if table.unsettled:
        table.settle()
    elif table.in_deal:
        table.step()
    elif table.over:
        return False
    else:
        given = args.deal_code if not table.deals and table.current is None else ""
        dealt = table.start_deal(given or None)
        screen.say("")
        of = f" of {setup.rules.match.amount}" if setup.rules.match.kind is MatchKind.DEALS else ""
        code = f" · code [b]{dealt.deal_code}[/b] (as you gave it)" if given else ""
        screen.say(f"[b]Deal {dealt.table.deal_number}{of}[/b]{code}")
        screen.events(dealt.events)
    return True


def _show_settled(table: Any, screen: Screen, setup: Setup, shown: int) -> int:
    """The settlement cards of the deals settled since the first ``shown``; how many are shown now."""
    bots = [level for level in setup.levels if level is not None]
    for outcome in table.deals[shown:]:
        screen.settlement(outcome)
        if outcome.deal_code:
            shared = share_command(setup.rules, outcome.deal_code, seat=setup.me, bots=bots)
            screen.say(f"  Same cards for someone else: {escape(shared)}")
    return len(table.deals)


def play_main(args: argparse.Namespace) -> int:
    from bigtwo.client.client import BigTwoError
    from bigtwo.client.table import Table

    setup = setup_from_replay(args) if args.resume else setup_from_args(args)
    where = args.resume or "--bots"
    if not args.target:  # the server we start is this install's: its registry, before it starts
        check_levels(setup, own_levels(), where)
    screen = Screen(Out(args.color), seat_labels(setup.names), setup.me)
    seats = _seats(setup, Person(setup.me, screen.say, sort=args.sort, screen=screen), args.seed)
    _greet(screen, setup)
    stop = ""
    failure = ""
    table: Any = None
    try:
        with session(args) as (client, server):
            check_levels(setup, client.bot_levels(), where)  # the levels of the service played against
            table = Table(client, setup.rules, seats, on_move=lambda _, result: _show_move(screen, result))
            if setup.log is not None:
                _resume(table, setup, screen, args)
            stop, failure = _play(table, screen, setup, args, server)
    except KeyboardInterrupt:
        stop = stop or "interrupt"
    except BigTwoError as exc:
        if table is None:
            raise
        stop = "lost"
        failure = f"bigtwo play: the service answered {exc}"
    if table is None:  # interrupted before the table existed: nothing to save
        print("\nbigtwo play: interrupted", file=sys.stderr)
        return 130
    return finish(table, screen, setup, args, stop, failure)


def _seats(setup: Setup, person: Person, seed: int) -> list[Any]:
    """The table's seats: the person at ``setup.me``, bots at their levels (each its own seed)."""
    from bigtwo.client.table import Seat, bot_seat

    return [
        Seat(setup.names[seat], person) if level is None else bot_seat(level, name=setup.names[seat], seed=seed + seat)
        for seat, level in enumerate(setup.levels)
    ]


def _greet(screen: Screen, setup: Setup) -> None:
    rules = setup.rules
    screen.say(
        f"[b]Big Two[/b] · {rules.preset} · {rules.players} players · {match_length(rules)} · "
        f"you are {seat_ref(setup.me)} · type help"
    )
    screen.say("Seats: " + ", ".join(screen.row(seat) for seat in range(rules.players)))


def _show_move(screen: Screen, result: Any) -> None:
    screen.events(result.events, result.outcome.play.name if result.outcome.play else "")


def _resume(table: Any, setup: Setup, screen: Screen, args: argparse.Namespace) -> None:
    """Play the resumed log's deals and moves again on ``table``, and say where the match goes on."""
    table.restore(setup.log)
    finished = len(table.deals)
    where = f"after deal {finished}"
    if table.in_deal:
        where = f"deal {table.table.deal_number}, move {table.table.moves_made + 1}"
    screen.say(f"Resumed {args.resume}: {finished} deal{'' if finished == 1 else 's'} finished; going on at {where}.")


def _play(
    table: Any, screen: Screen, setup: Setup, args: argparse.Namespace, server: OwnServer | None
) -> tuple[str, str]:
    """Play the match; how it stopped (``""`` at its end, ``quit``, ``interrupt`` or ``lost``) and
    the failure to report. Any other error is reported after the match so far is saved."""
    from bigtwo.client.client import BigTwoError, BigTwoUnavailable

    try:
        play_deals(table, screen, setup, args, server)
    except QuitGame:
        return "quit", ""
    except KeyboardInterrupt:
        return "interrupt", ""
    except BigTwoUnavailable as exc:
        target = exc.target or args.target or "the game's own server"
        return "lost", f"bigtwo play: cannot reach the service at {target} (tried again and gave up): {exc.message}"
    except BigTwoError:
        raise
    except Exception:  # anything else: the match is saved, then the error goes on to be reported
        rescue(table, setup, args)
        raise
    return "", ""


def rescue(table: Any, setup: Setup, args: argparse.Namespace) -> None:
    """Save the match before an unexpected error ends the command (it is reported after this)."""
    if table.writer.deals:
        path = save_replay(table, setup.replay_out or Path(f"bigtwo-replay-{table.writer.deals[0].code}.toml"))
        print(
            f"bigtwo play: the match so far is saved in {path}; go on with it: {resume_command(path, args)}",
            file=sys.stderr,
        )


def finish(table: Any, screen: Screen, setup: Setup, args: argparse.Namespace, stop: str, failure: str) -> int:
    """The end of ``bigtwo play``: the match table, the replay file named, and for a match that
    did not end, why and the command that goes on with it."""
    say = screen.say
    if failure:
        print(failure, file=sys.stderr)
    if stop == "quit":
        say("Stopping the match here.")
    elif stop == "interrupt":
        say("\nInterrupted (Ctrl-C): stopping the match here.")
    screen.match_table(table, stopped=bool(stop))
    if not table.writer.deals:
        if setup.log is not None and args.resume:
            say(f"{args.resume} is unchanged. Go on with it: [b]{escape(resume_command(Path(args.resume), args))}[/b]")
        else:
            say("No deal was dealt, so there is no replay to write.")
        return {"": 0, "quit": 0, "interrupt": 130}.get(stop, 1)
    first = table.writer.deals[0].code or "unfinished"
    path = save_replay(table, setup.replay_out or Path(f"bigtwo-replay-{first}.toml"))
    if stop:
        say(f"The match so far is saved in {path}.")
        say(f"Go on with it: [b]{escape(resume_command(path, args))}[/b]")
    else:
        say(f"Replay written to {path} (bigtwo replay {path}; bigtwo audit {path})")
    codes = [d.deal_code for d in table.deals if d.deal_code]
    if codes:
        say(f"Deal code(s) to share: {' '.join(codes)}")
    return {"": 0, "quit": 0, "interrupt": 130}.get(stop, 1)


def add_parsers(sub: Any) -> None:
    deal_cmd.add_parser(sub)

    play = sub.add_parser(
        "play",
        help="play Big Two in the terminal against the service, with bots",
        description="Play a match in the terminal against bots, judged by the service (started on a free port "
        "unless --target is given). Type help at the prompt for the commands. A match stopped by quit, "
        "Ctrl-C or a lost service is saved; bigtwo play --resume FILE goes on with it.",
    )
    add_ruleset_arguments(play, deals=True)
    play.add_argument(
        "--bots",
        default=None,
        help="bot levels for the other seats in order, e.g. good,great,pro (one level fills every seat; "
        f"default {DEFAULT_BOTS}); the levels are the service's: an unknown one is refused with their list",
    )
    play.add_argument("--seat", type=seat_number, default=None, help="your seat, p1-p4 in play order (default p1)")
    play.add_argument("--name", default=None, help="your name in the replay file (default You)")
    play.add_argument("--deal-code", default="", help="replay someone's deal: the first deal uses this code")
    play.add_argument("--sort", choices=SORTS, default="rank", help="how your hand is sorted (default rank)")
    play.add_argument("--seed", type=int, default=0, help="the bots' random seed (default 0)")
    play.add_argument(
        "--replay-out",
        type=writable_file,
        default=None,
        metavar="FILE",
        help="replay file (default ./bigtwo-replay-<first deal code>.toml; with --resume, the resumed file)",
    )
    play.add_argument(
        "--resume",
        default="",
        metavar="FILE",
        help="go on with the unfinished match a replay file holds (its rules, seats, deals and moves)",
    )
    play.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_connection_arguments(play)
    play.set_defaults(func=play_main)


__all__ = ["add_parsers", "play_deals", "play_main"]
