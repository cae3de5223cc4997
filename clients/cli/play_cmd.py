"""``bigtwo play``: Big Two in the terminal against the service; ``bigtwo deal``: look at a deal.

``bigtwo play`` starts its own service on 127.0.0.1 (a free port) unless ``--target`` names one,
seats you and bots at chosen levels, and plays the match deal by deal: your hand sorted by rank,
suit or plays (SplitHand), a readout line for every selection (NameCards: what it forms, whether it
can be played now and why not), ``hint`` (NextHint cycle), ``pass``, the table (every seat's card
count, who is to act, who opened the trick, what is on the table, last-card markers), WEB's "ending
now" penalty, the settlement card after each deal, the match table at the end, the command that
deals the same cards to someone else, and a replay file. Colour when the output is a terminal,
plain text when piped.

Seats are ``p1`` .. ``pN`` on the screen, in files and in messages (the API's seat 0 is ``p1``).

No match is lost. The service keeps nothing, so the match is the client's: calls that find a
target unavailable go to the next one after a bounded backoff (:mod:`bigtwo.client.client`), a
server this command started is started again if it dies, and when the service cannot be reached,
on Ctrl-C and on ``quit`` the unfinished match is written to its replay file with the command that
goes on with it, ``bigtwo play --resume FILE`` (:meth:`Table.restore <bigtwo.client.table.Table.restore>`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bigtwo.engine import (
    BadCardError,
    Card,
    CardsPlayed,
    DealEnded,
    DragonRevealed,
    LastCard,
    Passed,
    Reason,
    Refusal,
    Ruleset,
    TrickEnded,
    cards_of,
    parse_mask,
    tables_for,
)
from bigtwo.engine.replay.names import distinct_names, how_to_win, seat_labels, seat_ref
from bigtwo.engine.rules import MatchKind, Settlement

from .arguments import add_ruleset_arguments, ruleset_from_args
from .errors import UsageError

LEVELS = ("random", "beginner", "good", "great", "pro")
SORTS = ("rank", "suit", "plays")
DEFAULT_BOTS = "good"
OWN_SERVER_RESTARTS = 3
"""How many times ``bigtwo play`` starts its own server again after it died, in one match."""

LEGEND_TABLE = (
    "← to act: whose turn it is. Opened the trick: that seat played first in this trick; the trick ends "
    "when every other seat passes, and the seat that played last wins it and opens the next one."
)
LEGEND_ENDING_NOW = "ending now N: what this deal would score for you if another seat went out now."
LEGEND_SETTLEMENT = (
    "left: cards left · 2s: twos among them · rate: points per card at that count · ×: multiplier "
    "(doubles per 2 held under twos-double) · penalty: left × rate × multiplier · score: this deal's score"
)
HELP = f"""\
Type the cards to play, e.g. 3d 3s (or 3♦ 3♠, 10h, ♠A). A selection that cannot be played is
read out with the reason, and nothing is sent. Other commands:
  hint  (h)        select the next play of the hint cycle; Enter plays the selection
  <Enter>          play the current selection (e.g. the hint)
  ?3d 3s           read out a selection without playing it
  pass  (p)        pass
  sort [rank|suit|plays]   sort your hand (no word: the next sort)
  table (t)        show the table again
  help             this text
  quit  (q)        stop here; the match so far is saved, and bigtwo play --resume FILE goes on with it
Seats are p1..pN in play order.
{LEGEND_TABLE}
{LEGEND_ENDING_NOW}
Settlement card: {LEGEND_SETTLEMENT}"""


class QuitGame(Exception):
    """The person typed quit (or closed the input)."""


# -- output ---------------------------------------------------------------------------------------


class Out:
    """Rich when colour is on, plain text otherwise (``[b]`` style markup stripped, ``\\[`` read
    as a bracket in both: see :func:`escape`)."""

    _MARKUP = re.compile(r"(?<!\\)\[/?[a-z #0-9_]*\]")

    def __init__(self, color: str, stream: IO[str] | None = None) -> None:
        self.stream = stream
        use = sys.stdout.isatty() if color == "auto" else color == "always"
        if use and os.environ.get("NO_COLOR"):
            use = False
        self.console: Any = None
        if use:
            from rich.console import Console

            self.console = Console(highlight=False, force_terminal=True, file=stream)

    def __call__(self, text: str = "") -> None:
        if self.console is not None:
            self.console.print(text)
        else:
            print(self._MARKUP.sub("", text).replace("\\[", "["), flush=True, file=self.stream)


def pretty(mask: int) -> str:
    return " ".join(card.pretty for card in cards_of(mask))


def escape(text: str) -> str:
    """A name or message shown through :class:`Out`, its brackets not read as markup."""
    return text.replace("[", "\\[")


# -- the service: given, or our own subprocess --------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OwnServer:
    """``bigtwo serve`` on 127.0.0.1 and a free port in a subprocess; always stopped.

    It runs in a session of its own, so Ctrl-C at the terminal reaches the game (which writes its
    replay) and not the server. It gets a token key made for this game (nothing is written under
    the home folder), so a server started again after a crash reads the tokens of the one before.
    """

    def __init__(self) -> None:
        self.port = _free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.restarts = 0
        self._key = secrets.token_hex(32)
        self._log = tempfile.NamedTemporaryFile(prefix="bigtwo-play-server-", suffix=".log", delete=False)  # noqa: SIM115
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "BIGTWO_TOKEN_KEYS": self._key}
        env.pop("BIGTWO_TOKEN_KEYS_FILE", None)
        command = [sys.executable, "-m", "bigtwo.cli.main", "serve", "--port", str(self.port)]
        command += ["--metrics-port", "0", "--no-call-log", "--grace", "1"]
        self.process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def restart(self) -> bool:
        """Start the server again on the same port if it died (at most :data:`OWN_SERVER_RESTARTS`
        times); False when it still runs or may not be restarted."""
        if self.alive or self.restarts >= OWN_SERVER_RESTARTS:
            return False
        self.restarts += 1
        self.start()
        return True

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._log.close()
        with contextlib.suppress(OSError):
            os.unlink(self._log.name)

    def __enter__(self) -> OwnServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def own_server(quiet: bool = True) -> Iterator[str]:
    """``bigtwo serve`` on 127.0.0.1 and a free port in a subprocess; always stopped."""
    with OwnServer() as server:
        yield server.target


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


# -- rulesets -------------------------------------------------------------------------------------


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


# -- bigtwo deal ----------------------------------------------------------------------------------


def deal_main(args: argparse.Namespace) -> int:
    from bigtwo.engine import Deal, DealCode, deal_from_code

    rules = ruleset_from_args(args)
    if args.target:
        with connected(args) as client:
            dealt = client.deal(rules, deal_code=args.deal_code or None)
            code = dealt.deal_code
    else:
        code = args.deal_code or str(DealCode.from_entropy(os.urandom(16)))
    try:
        dealt_cards = deal_from_code(DealCode.parse(code), rules)
    except ValueError as exc:
        print(f"bigtwo deal: {exc}", file=sys.stderr)
        return 2
    deal = Deal.start(rules, dealt_cards)
    hands = [deal.hands[seat] for seat in range(rules.players)]
    if args.target:  # the service's answer and the engine's must agree
        assert tuple(dealt.table.cards_left) == tuple(h.bit_count() for h in hands)
    opening = Card.from_index(deal.opening_card) if deal.opening_card >= 0 else None
    face_up = dealt_cards.face_up_card
    if args.json:
        out = {
            "deal_code": code,
            "preset": rules.preset,
            "ruleset_fingerprint": rules.fingerprint,
            "players": rules.players,
            "leader": deal.leader,
            "opening_card": str(opening) if opening else "",
            "hands": [" ".join(str(c) for c in cards_of(h)) for h in hands],
            "face_up_card": str(Card.from_index(face_up)) if face_up >= 0 else "",
            "over": deal.over,
        }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    say = Out(args.color)
    say(f"[b]Deal {code}[/b] · {rules.preset} · rules {rules.fingerprint}")
    for seat, hand in enumerate(hands):
        mark = "  ← plays first" if seat == deal.leader else ""
        say(f"  {seat_ref(seat)}: {pretty(hand)}{mark}")
    if opening:
        say(f"The first play must include {opening.pretty}.")
    if face_up >= 0:
        say(f"Face-up card: {Card.from_index(face_up).pretty} ({seat_ref(dealt_cards.face_up_seat)})")
    say(f"Play it: {share_command(rules, code)}")
    return 0


# -- bigtwo play: the screen ----------------------------------------------------------------------


@dataclass
class Screen:
    """Everything ``bigtwo play`` prints about the table: one seat numbering (p1..pN), each seat
    by its label (``p2 good bot``), "You" for the person; each term explained the first time."""

    say: Out
    labels: Sequence[str]
    me: int
    explained: set[str] = field(default_factory=set)

    def who(self, seat: int) -> str:
        return "You" if seat == self.me else escape(self.labels[seat])

    def row(self, seat: int) -> str:
        return escape(f"{seat_ref(seat)} You" if seat == self.me else self.labels[seat])

    def explain_once(self, term: str, text: str) -> None:
        if term not in self.explained:
            self.explained.add(term)
            self.say(f"[dim]({text})[/dim]")

    def table(self, table: Any) -> None:
        say = self.say
        say("")
        say(f"[b]Deal {table.deal_number}[/b] · move {table.moves_made + 1}")
        for seat, left in enumerate(table.cards_left):
            marks = []
            if seat == table.to_act and not table.over:
                marks.append("[yellow]← to act[/yellow]")
            if seat == table.leader and table.table is not None and not table.over:
                marks.append("opened the trick")
            if left == 1:
                marks.append("[red]⚑ last card[/red]")
            if seat in table.passed_seats:
                marks.append("passed")
            say(f"  {self.row(seat):<20} {left:>2} cards  {'  '.join(marks)}")
        if table.table is not None:
            by = f" by {self.who(table.last_player)}" if table.last_player is not None else ""
            say(f"On the table: [b]{pretty(table.table.mask)}[/b]  {table.table.name}{by}")
        elif not table.over:
            opening = f" (must include {table.opening_card.pretty})" if table.opening_card else ""
            say(f"On the table: nothing; {self.who(table.to_act)} to open a trick with any play{opening}")
        self.explain_once("table", LEGEND_TABLE)

    def events(self, events: Sequence[Any], play_name: str = "") -> None:
        say, me = self.say, self.me
        for event in events:
            if isinstance(event, CardsPlayed):
                verb = "play" if event.seat == me else "plays"
                say(f"{self.who(event.seat)} {verb} [b]{pretty(event.mask)}[/b]  {play_name}")
            elif isinstance(event, Passed):
                verb = "pass" if event.seat == me else "passes"
                say(f"{self.who(event.seat)} {verb}" + (" (auto)" if event.automatic else ""))
            elif isinstance(event, TrickEnded):
                verbs = "win the trick and open" if event.winner == me else "wins the trick and opens"
                say(f"[dim]— {self.who(event.winner)} {verbs} the next[/dim]")
            elif isinstance(event, LastCard):
                say(f"[red]⚑ {self.who(event.seat)}: last card![/red]")
            elif isinstance(event, DragonRevealed):
                say(f"{self.who(event.seat)} show{'' if event.seat == me else 's'} a dragon: {pretty(event.hand)}")
            elif isinstance(event, DealEnded):
                verb = "went out and won" if not event.by_dragon else "won with a dragon"
                say(f"[b]{self.who(event.winner)} {verb} the deal.[/b]")

    def settlement(self, outcome: Any) -> None:
        say, s = self.say, outcome.settlement
        say("")
        say(f"[b]Settlement · deal {outcome.number}[/b]")
        say(f"  {'seat':<20} {'left':>4} {'2s':>3} {'rate':>4} {'×':>3} {'penalty':>7} {'score':>6}")
        for line in s.seats:
            tag = "  winner" if line.seat == s.winner else ""
            say(
                f"  {self.row(line.seat):<20} {line.cards_left:>4} {line.twos_left:>3} {line.rate:>4} "
                f"{line.multiplier:>3} {line.penalty:>7} {line.score:>6}{tag}"
            )
        self.explain_once("settlement", LEGEND_SETTLEMENT)
        collected = sum(line.penalty for line in s.seats)
        say(f"  Winner: {self.who(s.winner)}; the others' penalties total {collected}")
        totals = outcome.standing.totals
        say(f"  Match totals so far: {', '.join(f'{seat_ref(i)} {t}' for i, t in enumerate(totals))}")

    def match_table(self, table: Any, *, stopped: bool) -> None:
        standing = table.standing
        if standing is None or not table.deals:
            self.say("No deal finished.")
            return
        say = self.say
        say("")
        state = " · over" if standing.over else (" · stopped" if stopped else "")
        say(f"[b]Match table[/b] · {len(table.deals)} deal(s){state}")
        header = "  " + f"{'seat':<20}" + "".join(f"{'d' + str(d.number):>5}" for d in table.deals)
        say(header + f"{'total':>7} {'won':>4}")
        for seat in range(len(standing.totals)):
            row = "".join(f"{d.settlement.scores[seat]:>5}" for d in table.deals)
            win = ("  ★ winner" if standing.over else "  ★ leading") if seat in standing.winners else ""
            say(f"  {self.row(seat):<20}{row}{standing.totals[seat]:>7} {standing.deals_won[seat]:>4}{win}")


# -- bigtwo play: the person's seat ---------------------------------------------------------------


@dataclass
class Person:
    """The person's seat: prompts on the terminal; a Table seat source."""

    seat: int
    say: Out
    sort: str = "rank"
    selection: int = 0
    screen: Screen | None = None
    reader: Callable[[str], str] = input

    def ask(self, prompt: str) -> str:
        try:
            return str(self.reader(prompt))
        except EOFError:
            raise QuitGame() from None

    def sorted_hand(self, turn: Any) -> str:
        hand = turn.hand
        tables = tables_for(turn.ruleset)
        cards = cards_of(hand)
        if self.sort == "suit":
            cards = tuple(sorted(cards, key=lambda c: (tables.suit_strength[c.suit], c.rank)))
            return " ".join(c.pretty for c in cards)
        if self.sort == "plays":
            plays = turn.client.split_hand(turn.ruleset, hand)
            return "  ".join("\\[" + pretty(p.mask) + "]" if p.size > 1 else pretty(p.mask) for p in plays)
        cards = tuple(sorted(cards, key=lambda c: tables.strength[c.index]))
        return " ".join(c.pretty for c in cards)

    def show_table(self, turn: Any) -> None:
        screen = self.screen or Screen(self.say, [seat_ref(s) for s in range(turn.ruleset.players)], self.seat)
        screen.table(turn.table)
        readout = turn.client.name_cards("", game=turn.game, seat=self.seat)
        self.say(f"Your hand ({self.sort}): [b]{self.sorted_hand(turn)}[/b]")
        if readout.ending_now:
            self.say(f"[dim]{readout.ending_now}[/dim]")
            screen.explain_once("ending now", LEGEND_ENDING_NOW)

    def refusal(self, refusal: Any, turn: Any) -> str:
        """A refusal in the screen's words: ``p2 good bot``, never the API's 0-based seat."""
        who = self.screen.who if self.screen is not None else seat_ref
        return escape(refusal_sentence(refusal, turn.table, who))

    def readout(self, turn: Any, mask: int) -> Any:
        readout = turn.client.name_cards(mask, game=turn.game, seat=self.seat)
        name = readout.name or pretty(mask) or "nothing selected"
        if readout.playable:
            self.say(f"[green]✓ {name}: can be played[/green]")
        else:
            why = self.refusal(readout.refusal, turn) if readout.refusal else "cannot be played"
            reason = f" ({readout.refusal.reason.value})" if readout.refusal else ""
            self.say(f"[red]✗ {name}: {why}{reason}[/red]")
        return readout

    def __call__(self, turn: Any) -> str:
        if turn.refusal is not None:
            self.say(f"[red]✗ refused: {self.refusal(turn.refusal, turn)} ({turn.refusal.reason.value})[/red]")
        else:
            self.selection = 0
            self.show_table(turn)
        while True:
            line = self.ask("your move> ").strip()
            word = line.lower()
            if word in ("quit", "q", "exit"):
                raise QuitGame()
            if word in ("help", "?"):
                self.say(escape(HELP))
            elif word in ("pass", "p"):
                return "pass"
            elif word in ("table", "t"):
                self.show_table(turn)
            elif word == "sort" or word.startswith("sort "):
                choice = word[4:].strip()
                if choice and choice not in SORTS:
                    self.say(
                        f"[red]✗ sort {escape(choice)}: sorts are {', '.join(SORTS)}[/red]  (sort alone: the next one)"
                    )
                    continue
                self.sort = choice or SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
                self.say(f"Your hand ({self.sort}): [b]{self.sorted_hand(turn)}[/b]")
            elif word in ("hint", "h"):
                hint = turn.client.next_hint(turn.game, self.selection)
                if hint.play is None:
                    self.say("Hint: nothing beats the table; pass.")
                    continue
                self.selection = hint.play.mask
                self.say(f"Hint ({hint.cycle_length} in the cycle): [b]{pretty(hint.play.mask)}[/b]  {hint.play.name}")
                self.say("Press Enter to play it, h for the next one.")
            elif not line:
                if self.selection:
                    return _text(self.selection)
                self.show_table(turn)
            else:
                only_read = line.startswith("?")
                try:
                    mask = parse_mask(line.lstrip("?"))
                except (BadCardError, Refusal) as exc:
                    self.say(
                        f"[red]✗ {escape(str(exc))}[/red]  (cards look like 3d 10h ♠A; type help for the commands)"
                    )
                    continue
                if not mask:
                    self.say("[red]✗ no cards given[/red]  (cards look like 3d 10h ♠A; type help for the commands)")
                    continue
                self.selection = mask
                readout = self.readout(turn, mask)
                if readout.playable and not only_read:
                    return _text(mask)


def refusal_sentence(refusal: Any, table: Any, who: Callable[[int], str]) -> str:
    """The sentence of a refusal (a :class:`bigtwo.client.client.RefusalInfo`) for the terminal.

    The engine's sentences for two reasons name seats as the API numbers them (``seat 1``, from
    0), while the screen shows ``p1``..``pN``. For those the sentence is made here from the
    reason and the table the service returned with it (whose turn it is, who went out), with
    ``who`` naming a seat as the screen does; every other sentence names no seat and is kept."""
    if refusal.reason is Reason.NOT_YOUR_TURN and table is not None and not table.over:
        return f"It is {who(table.to_act)}'s turn"
    if refusal.reason is Reason.GAME_OVER and table is not None and table.winner is not None:
        return f"The deal is over: {who(table.winner)} went out"
    return str(refusal.message)


def _text(mask: int) -> str:
    return " ".join(str(card) for card in cards_of(mask))


def bot_levels(spec: str, count: int) -> list[str]:
    levels = [item.strip().lower() for item in spec.split(",") if item.strip()] or [DEFAULT_BOTS]
    for level in levels:
        if level not in LEVELS:
            raise UsageError(f"--bots: {level!r} is not a bot level; the levels are {', '.join(LEVELS)}.")
    while len(levels) < count:
        levels.append(levels[-1])
    return levels[:count]


# -- bigtwo play: who sits where --------------------------------------------------------------------


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
    levels = tuple(None if seat == me else next(bots) for seat in range(rules.players))
    person = args.name or "You"
    names = distinct_names([person if level is None else f"{level} bot" for level in levels])
    return Setup(rules, names, levels, me, None, args.replay_out)


def setup_from_replay(args: argparse.Namespace) -> Setup:
    """The match a replay file records, checked (:func:`audit_log`) before it is played on."""
    from bigtwo.engine.replay import ReplayFormatError, audit_log, read_replay

    given = [flag for name, flag in _RESUME_CONFLICTS if getattr(args, name, None)]
    if given:
        raise UsageError(
            f"--resume goes on with the match as {args.resume} records it (rules, seats, deals); "
            f"leave out {', '.join(given)}."
        )
    path = Path(args.resume)
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
    people = [seat for seat, info in enumerate(log.seats) if info.kind != "bot"]
    if len(people) != 1:
        raise UsageError(f"{path} seats {len(people)} people; bigtwo play resumes a match of one person and bots.")
    levels: list[str | None] = []
    for seat, info in enumerate(log.seats):
        if info.kind != "bot":
            levels.append(None)
        elif str(info.level) in LEVELS:
            levels.append(str(info.level))
        else:
            raise UsageError(
                f"{path}: {seat_ref(seat)} is a bot of level {info.level!r}; bigtwo play knows {', '.join(LEVELS)}."
            )
    if any(action.kind.value in ("left", "taken") for deal in log.deals for action in deal.actions):
        raise UsageError(f"{path} has seats left or taken over; bigtwo play cannot resume it.")
    names = tuple(info.name for info in log.seats)
    return Setup(log.ruleset, names, tuple(levels), people[0], log, args.replay_out or path)


# -- bigtwo play: the match -----------------------------------------------------------------------


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

    say = screen.say
    shown = len(table.deals)
    bots = [level for level in setup.levels if level is not None]
    while True:
        try:
            if table.unsettled:
                table.settle()
            elif table.in_deal:
                table.step()
            elif table.over:
                break
            else:
                given = args.deal_code if not table.deals and table.current is None else ""
                dealt = table.start_deal(given or None)
                say("")
                of = f" of {setup.rules.match.amount}" if setup.rules.match.kind is MatchKind.DEALS else ""
                code = f" · code [b]{dealt.deal_code}[/b] (as you gave it)" if given else ""
                say(f"[b]Deal {dealt.table.deal_number}{of}[/b]{code}")
                screen.events(dealt.events)
        except BigTwoUnavailable:
            if server is None or not server.restart():
                raise
            say("[yellow]The game's own server stopped; it is started again and the match goes on.[/yellow]")
            table.client.wait_ready(timeout=30)
            continue
        while shown < len(table.deals):
            outcome = table.deals[shown]
            shown += 1
            screen.settlement(outcome)
            if outcome.deal_code:
                shared = share_command(setup.rules, outcome.deal_code, seat=setup.me, bots=bots)
                say(f"  Same cards for someone else: {escape(shared)}")


def play_main(args: argparse.Namespace) -> int:
    from bigtwo.client.client import BigTwoError, BigTwoUnavailable
    from bigtwo.client.table import Seat, Table, bot_seat

    setup = setup_from_replay(args) if args.resume else setup_from_args(args)
    rules, me = setup.rules, setup.me
    say = Out(args.color)
    labels = seat_labels(setup.names)
    screen = Screen(say, labels, me)
    person = Person(me, say, sort=args.sort, screen=screen)
    seats: list[Seat] = []
    for seat, level in enumerate(setup.levels):
        if level is None:
            seats.append(Seat(setup.names[seat], person))
        else:
            seats.append(bot_seat(level, name=setup.names[seat], seed=args.seed + seat))

    say(
        f"[b]Big Two[/b] · {rules.preset} · {rules.players} players · {match_length(rules)} · "
        f"you are {seat_ref(me)} · type help"
    )
    say("Seats: " + ", ".join(screen.row(seat) for seat in range(rules.players)))

    stop = ""
    failure = ""
    table: Any = None
    try:
        with session(args) as (client, server):
            table = Table(
                client,
                rules,
                seats,
                on_move=lambda _, result: screen.events(
                    result.events, result.outcome.play.name if result.outcome.play else ""
                ),
            )
            if setup.log is not None:
                table.restore(setup.log)
                finished = len(table.deals)
                where = f"after deal {finished}"
                if table.in_deal:
                    where = f"deal {table.table.deal_number}, move {table.table.moves_made + 1}"
                say(f"Resumed {args.resume}: {finished} deal(s) finished; going on at {where}.")
            try:
                play_deals(table, screen, setup, args, server)
            except QuitGame:
                stop = "quit"
            except KeyboardInterrupt:
                stop = "interrupt"
            except BigTwoUnavailable as exc:
                stop = "lost"
                target = exc.target or args.target or "the game's own server"
                failure = f"bigtwo play: cannot reach the service at {target} (tried again and gave up): {exc.message}"
            except BigTwoError:
                raise
            except Exception:  # anything else: the match is saved, then the error goes on to be reported
                rescue(table, setup, args)
                raise
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
    deal = sub.add_parser(
        "deal",
        help="deal a deal code under a ruleset: hands and leader (--json)",
        description="Deal a deal code (or a fresh one) under a ruleset and print every hand and the leader. "
        "Dealt by the local engine, or by the service with --target.",
    )
    add_ruleset_arguments(deal)
    deal.add_argument("--deal-code", default="", help="the deal code (default: a fresh one)")
    deal.add_argument("--json", action="store_true", help="one JSON object for scripts")
    deal.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_connection_arguments(deal)
    deal.set_defaults(func=deal_main)

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
        f"levels: {', '.join(LEVELS)}; default {DEFAULT_BOTS})",
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


__all__ = ["OwnServer", "add_parsers", "deal_main", "own_server", "play_main", "share_command"]
