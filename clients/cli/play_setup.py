"""Who sits where in ``bigtwo play``: the match from the command line or from a replay file to
resume, and the commands that give the same cards to someone else."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bigtwo.engine import Ruleset
from bigtwo.engine.replay.names import distinct_names, how_to_win, seat_ref
from bigtwo.engine.rules import MatchKind, Settlement

from .arguments import ruleset_from_args
from .errors import UsageError

if TYPE_CHECKING:  # the client is imported when the command connects
    from bigtwo.client.results import BotLevels

DEFAULT_BOTS = "good"
"""The service's default level (ListPresetsResponse.default_bot_level); the levels themselves are the
service's, checked once connected (:func:`check_levels`)."""


def seat_number(text: str) -> int:
    """``--seat p2`` or ``--seat 2``: the engine's seat (0-based) of a seat named p1..p4."""
    word = text.strip().lower()
    digits = word[1:] if word.startswith("p") else word
    if not digits.isdigit() or not 1 <= int(digits) <= 4:
        raise argparse.ArgumentTypeError(f"{text!r}: seats are p1, p2, p3 and p4 (or 1-4) in play order")
    return int(digits) - 1


def writable_file(text: str) -> Path:
    """An output file whose folder exists (checked before the match starts, not after it)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name, e.g. {path / 'game.toml'}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: the folder {path.parent} does not exist")
    return path


def option_arguments(rules: Ruleset) -> list[str]:
    """``--preset P -o name=value ...``: the command-line words that give exactly ``rules``
    (every option that differs from its preset, match length and players included)."""
    words = ["--preset", rules.preset]
    for key, value in rules.overrides().items():
        text = ",".join(str(item) for item in value) if isinstance(value, (list, tuple)) else str(value)
        words += ["-o", f"{key.replace('_', '-')}={text}"]
    return words


def share_command(rules: Ruleset, code: str, *, seat: int = 0, bots: Sequence[str] = ()) -> str:
    """The command that deals ``code`` under the same rules to someone else, at the same seat
    (the cards a seat gets follow from the code and the rules) against the same bot levels."""
    words = ["bigtwo", "play", "--deal-code", code, *option_arguments(rules)]
    if bots and any(level != DEFAULT_BOTS for level in bots):
        words += ["--bots", ",".join(bots)]
    if seat:
        words += ["--seat", seat_ref(seat)]
    return shlex.join(words)


def match_length(rules: Ruleset) -> str:
    """The match's length and who wins it, in words (announced at the start)."""
    length = rules.match
    if length.kind is MatchKind.DEALS:
        text = f"a match of {length.amount} deal{'s' if length.amount != 1 else ''}"
    elif length.kind is MatchKind.TARGET:
        sign = "−" if rules.settlement is Settlement.ZERO_SUM else ""
        text = f"a match to {sign}{length.amount} points (it ends when a total reaches {sign}{length.amount})"
    elif length.kind is MatchKind.SINGLE:
        text = "a single deal"
    else:
        text = "an open match (it goes on until you quit)"
    return f"{text}; {how_to_win(rules)}"


def bot_levels(spec: str, count: int) -> list[str]:
    """``--bots``: one level for each bot seat (one fills them all); their names are checked against
    the service's once connected (:func:`check_levels`)."""
    levels = [item.strip().lower() for item in spec.split(",") if item.strip()] or [DEFAULT_BOTS]
    if len(levels) == 1:  # one level fills every bot seat
        return levels * count
    if len(levels) != count:
        raise UsageError(
            f"--bots: this table has {count} bot seat{'s' if count != 1 else ''} and {len(levels)} levels were "
            f"given; give {count} (e.g. --bots {','.join((levels * count)[:count])}) or one level for every seat."
        )
    return levels


@dataclass
class Setup:
    """A match to play: its rules, who sits where (``levels[seat]`` is None for the person), and,
    when resumed, the replay log it goes on from."""

    rules: Ruleset
    names: tuple[str, ...]
    levels: tuple[str | None, ...]
    me: int
    log: Any = None
    replay_out: Path | None = None


_RESUME_CONFLICTS = (
    ("preset", "--preset"),
    ("ruleset", "--ruleset"),
    ("option", "-o/--option"),
    ("deals", "--deals"),
    ("bots", "--bots"),
    ("seat", "--seat"),
    ("name", "--name"),
    ("deal_code", "--deal-code"),
)


def setup_from_args(args: argparse.Namespace) -> Setup:
    rules = ruleset_from_args(args)
    me = 0 if args.seat is None else args.seat
    if me >= rules.players:
        raise UsageError(f"--seat {seat_ref(me)}: this table seats p1-p{rules.players}; choose one of those.")
    bots = iter(bot_levels(args.bots or DEFAULT_BOTS, rules.players - 1))
    if args.deal_code:  # a mistyped code is refused here, before any server starts
        from bigtwo.engine import DealCode, deal_from_code

        try:
            deal_from_code(DealCode.parse(args.deal_code), rules)
        except ValueError as error:
            raise UsageError(f"--deal-code: {error}") from None
    levels = tuple(None if seat == me else next(bots) for seat in range(rules.players))
    person = args.name or "You"
    names = distinct_names([person if level is None else f"{level} bot" for level in levels])
    return Setup(rules, names, levels, me, None, args.replay_out)


def setup_from_replay(args: argparse.Namespace) -> Setup:
    """The match a replay file records, checked (:func:`audit_log`) before it is played on."""
    given = [flag for name, flag in _RESUME_CONFLICTS if getattr(args, name, None)]
    if given:
        raise UsageError(
            f"--resume goes on with the match as {args.resume} records it (rules, seats, deals); "
            f"leave out {', '.join(given)}."
        )
    path = Path(args.resume)
    log = _resumable_log(path)
    people = [seat for seat, info in enumerate(log.seats) if info.kind != "bot"]
    if len(people) != 1:
        raise UsageError(f"{path} seats {len(people)} people; bigtwo play resumes a match of one person and bots.")
    levels = _bot_levels_of(log, path)
    if any(action.kind.value in ("left", "taken") for deal in log.deals for action in deal.actions):
        raise UsageError(f"{path} has seats left or taken over; bigtwo play cannot resume it.")
    names = tuple(info.name for info in log.seats)
    return Setup(log.ruleset, names, levels, people[0], log, args.replay_out or path)


def _resumable_log(path: Path) -> Any:
    """The replay log in ``path``, read and audited; a match not over."""
    from bigtwo.client.replay_files import read_replay
    from bigtwo.engine.replay import ReplayFormatError, audit_log

    try:
        log = read_replay(path)
    except FileNotFoundError:
        raise UsageError(f"--resume {path}: no such file.") from None
    except OSError as exc:
        raise UsageError(f"--resume {path}: cannot be read ({exc.strerror}).") from None
    except ReplayFormatError as exc:
        raise UsageError(f"--resume {path}: {exc}") from None
    verdict = audit_log(log, views=False)
    if not verdict.ok:
        raise UsageError(f"--resume {path} does not check out ({verdict.summary()}); see bigtwo audit {path}.")
    if log.result is not None and log.result.over:
        raise UsageError(f"the match in {path} is over; nothing to resume (bigtwo replay {path} shows it).")
    return log


def _bot_levels_of(log: Any, path: Path) -> tuple[str | None, ...]:
    """Each seat's bot level as the log records it (None for the person); checked against the
    service's levels once connected (:func:`check_levels`)."""
    return tuple(None if info.kind != "bot" else str(info.level) for info in log.seats)


def own_levels() -> BotLevels:
    """The levels a server started by this command offers: this install's registry
    (``bigtwo.engine.bots.REGISTRY``), which that server reports (ListPresets) as it is."""
    from bigtwo.client.results import BotLevels
    from bigtwo.engine.bots import DEFAULT_LEVEL, REGISTRY

    return BotLevels(tuple((level.name, level.description) for level in REGISTRY), DEFAULT_LEVEL)


def check_levels(setup: Setup, known: BotLevels, where: str) -> None:
    """Every bot seat's level is one the service offers (``known``: its registry, from ListPresets);
    else a UsageError naming the seat and listing the service's levels with a line about each."""
    for seat, level in enumerate(setup.levels):
        if level is not None and level not in known.names:
            listed = "; ".join(f"{name}: {line}" for name, line in known.levels)
            raise UsageError(
                f"{where}: {seat_ref(seat)} is a bot of level {level!r}, which the service does not offer. "
                f"Its levels: {listed}"
            )
