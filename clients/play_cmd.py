"""``bigtwo play``: Big Two in the terminal against the service; ``bigtwo deal``: look at a deal.

``bigtwo play`` starts its own service on 127.0.0.1 (a free port) unless ``--target`` names one,
seats you and bots at chosen levels, and plays the match deal by deal: your hand sorted by rank,
suit or plays (SplitHand), a readout line for every selection (NameCards: what it forms, whether it
can be played now and why not), ``hint`` (NextHint cycle), ``pass``, the table (every seat's card
count, who leads, what is on the table, last-card markers), WEB's "ending now" penalty, the
settlement card after each deal, the match table at the end, the deal code to share, and a replay
file written at the end. Colour when the output is a terminal, plain text when piped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bigtwo.engine import (
    PRESET_NAMES,
    BadCardError,
    Card,
    CardsPlayed,
    DealEnded,
    DragonRevealed,
    LastCard,
    Passed,
    Refusal,
    Ruleset,
    RulesetError,
    TrickEnded,
    cards_of,
    parse_mask,
    tables_for,
)

LEVELS = ("random", "beginner", "good", "great", "pro")
SORTS = ("rank", "suit", "plays")
HELP = """\
Type the cards to play, e.g. 3d 3s (or 3♦ 3♠, 10h, ♠A). A selection that cannot be played is
read out with the reason, and nothing is sent. Other commands:
  hint  (h)        select the next play of the hint cycle; Enter plays the selection
  <Enter>          play the current selection (e.g. the hint)
  ?3d 3s           read out a selection without playing it
  pass  (p)        pass
  sort [rank|suit|plays]   sort your hand (no word: the next sort)
  table (t)        show the table again
  help             this text
  quit  (q)        stop the match (the replay file is still written)"""


class QuitGame(Exception):
    """The person typed quit (or closed the input)."""


# -- output ---------------------------------------------------------------------------------------


class Out:
    """Rich when colour is on, plain text otherwise (``[b]`` style markup stripped)."""

    _MARKUP = re.compile(r"\[/?[a-z #0-9_]*\]")

    def __init__(self, color: str) -> None:
        use = sys.stdout.isatty() if color == "auto" else color == "always"
        if use and os.environ.get("NO_COLOR"):
            use = False
        self.console: Any = None
        if use:
            from rich.console import Console

            self.console = Console(highlight=False, force_terminal=True)

    def __call__(self, text: str = "") -> None:
        if self.console is not None:
            self.console.print(text)
        else:
            print(self._MARKUP.sub("", text), flush=True)


def pretty(mask: int) -> str:
    return " ".join(card.pretty for card in cards_of(mask))


# -- the service: given, or our own subprocess --------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def own_server(quiet: bool = True) -> Iterator[str]:
    """``bigtwo serve`` on 127.0.0.1 and a free port in a subprocess; always stopped."""
    port = _free_port()
    log = tempfile.NamedTemporaryFile(prefix="bigtwo-play-server-", suffix=".log", delete=False)  # noqa: SIM115
    command = [
        sys.executable,
        "-m",
        "bigtwo.client.cli",
        "serve",
        "--port",
        str(port),
        "--metrics-port",
        "0",
        "--no-call-log",
        "--grace",
        "1",
    ]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--target", default="", help="the service, host:port[,host:port...] (default: start one on a free port)")
    add("--tls", action="store_true", help="connect with TLS")
    add("--ca", default="", help="PEM CA bundle to trust (TLS)")
    add("--cert", default="", help="PEM client certificate (mutual TLS)")
    add("--key", default="", help="PEM client key (mutual TLS)")
    add("--server-name", default="", help="name to check on the server's certificate")
    add("--token", default=os.environ.get("BIGTWO_AUTH_TOKEN", ""), help="bearer token (env BIGTWO_AUTH_TOKEN)")
    add("--timeout", type=float, default=5.0, help="deadline of each call in seconds (default %(default)s)")


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
def connected(args: argparse.Namespace) -> Iterator[Any]:
    with contextlib.ExitStack() as stack:
        target = args.target or stack.enter_context(own_server())
        client = stack.enter_context(make_client(args, target))
        client.wait_ready(timeout=30)
        yield client


# -- rulesets -------------------------------------------------------------------------------------


def add_ruleset_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default="classic", choices=PRESET_NAMES, help="the rules (default %(default)s)")
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override an option of RULES.md, e.g. -o flush=rank-first -o players=3 (repeatable)",
    )


def ruleset_from_args(args: argparse.Namespace) -> Ruleset:
    mapping: dict[str, Any] = {"preset": args.preset}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--option {item!r}: write NAME=VALUE, e.g. flush=rank-first")
        mapping[name.strip().replace("-", "_")] = value.strip()
    if getattr(args, "deals", None):
        mapping["match"] = f"deals:{args.deals}"
    try:
        return Ruleset.from_mapping(mapping)
    except (RulesetError, ValueError) as exc:
        raise SystemExit(f"bigtwo: {exc}") from None


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
        mark = "  ← leads" if seat == deal.leader else ""
        say(f"  seat {seat}: {pretty(hand)}{mark}")
    if opening:
        say(f"The first play must include {opening.pretty}.")
    if face_up >= 0:
        say(f"Face-up card: {Card.from_index(face_up).pretty} (seat {dealt_cards.face_up_seat})")
    say(f"Play it: bigtwo play --deal-code {code} --preset {rules.preset}")
    return 0


# -- bigtwo play ----------------------------------------------------------------------------------


@dataclass
class Person:
    """The person's seat: prompts on the terminal; a Table seat source."""

    seat: int
    say: Out
    sort: str = "rank"
    selection: int = 0
    names: list[str] = field(default_factory=list)
    reader: Any = input

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
            return "  ".join("[" + pretty(p.mask) + "]" if p.size > 1 else pretty(p.mask) for p in plays)
        cards = tuple(sorted(cards, key=lambda c: tables.strength[c.index]))
        return " ".join(c.pretty for c in cards)

    def show_table(self, turn: Any) -> None:
        show_table(self.say, turn.table, self.names, self.seat)
        readout = turn.client.name_cards("", game=turn.game, seat=self.seat)
        self.say(f"Your hand ({self.sort}): [b]{self.sorted_hand(turn)}[/b]")
        if readout.ending_now:
            self.say(f"[dim]{readout.ending_now}[/dim]")

    def readout(self, turn: Any, mask: int) -> Any:
        readout = turn.client.name_cards(mask, game=turn.game, seat=self.seat)
        name = readout.name or pretty(mask) or "nothing selected"
        if readout.playable:
            self.say(f"[green]✓ {name}: can be played[/green]")
        else:
            why = readout.refusal.message if readout.refusal else "cannot be played"
            reason = f" ({readout.refusal.reason.value})" if readout.refusal else ""
            self.say(f"[red]✗ {name}: {why}{reason}[/red]")
        return readout

    def __call__(self, turn: Any) -> str:
        if turn.refusal is not None:
            self.say(f"[red]✗ refused: {turn.refusal.message} ({turn.refusal.reason.value})[/red]")
        else:
            self.selection = 0
            self.show_table(turn)
        while True:
            line = self.ask("your move> ").strip()
            word = line.lower()
            if word in ("quit", "q", "exit"):
                raise QuitGame()
            if word in ("help", "?"):
                self.say(HELP)
            elif word in ("pass", "p"):
                return "pass"
            elif word in ("table", "t"):
                self.show_table(turn)
            elif word.startswith("sort"):
                choice = word[4:].strip()
                self.sort = choice if choice in SORTS else SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
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
                    self.say(f"[red]✗ {exc}[/red]  (type help)")
                    continue
                self.selection = mask
                readout = self.readout(turn, mask)
                if readout.playable and not only_read:
                    return _text(mask)


def _text(mask: int) -> str:
    return " ".join(str(card) for card in cards_of(mask))


def show_table(say: Out, table: Any, names: Sequence[str], me: int) -> None:
    say("")
    say(f"[b]Deal {table.deal_number}[/b] · move {table.moves_made + 1}")
    for seat, left in enumerate(table.cards_left):
        marks = []
        if seat == table.to_act and not table.over:
            marks.append("[yellow]← to act[/yellow]")
        if seat == table.leader and not table.over:
            marks.append("leads the trick")
        if left == 1:
            marks.append("[red]⚑ last card[/red]")
        if seat in table.passed_seats:
            marks.append("passed")
        who = "You" if seat == me else names[seat]
        say(f"  seat {seat} {who:<12} {left:>2} cards  {'  '.join(marks)}")
    if table.table is not None:
        by = f" by seat {table.last_player}" if table.last_player is not None else ""
        say(f"On the table: [b]{pretty(table.table.mask)}[/b]  {table.table.name}{by}")
    elif not table.over:
        opening = f" (must include {table.opening_card.pretty})" if table.opening_card else ""
        say(f"On the table: nothing; seat {table.to_act} leads{opening}")


def narrate(say: Out, names: Sequence[str], me: int, result: Any) -> None:
    def who(seat: int) -> str:
        return "You" if seat == me else f"seat {seat} ({names[seat]})"

    for event in result.events:
        if isinstance(event, CardsPlayed):
            name = result.outcome.play.name if result.outcome.play else ""
            verb = "play" if event.seat == me else "plays"
            say(f"{who(event.seat)} {verb} [b]{pretty(event.mask)}[/b]  {name}")
        elif isinstance(event, Passed):
            verb = "pass" if event.seat == me else "passes"
            say(f"{who(event.seat)} {verb}" + (" (auto)" if event.automatic else ""))
        elif isinstance(event, TrickEnded):
            say(f"[dim]— trick to {who(event.winner)}, who leads[/dim]")
        elif isinstance(event, LastCard):
            say(f"[red]⚑ {who(event.seat)}: last card![/red]")
        elif isinstance(event, DragonRevealed):
            say(f"{who(event.seat)} shows a dragon: {pretty(event.hand)}")
        elif isinstance(event, DealEnded):
            say(f"[b]{who(event.winner)} went out and won the deal.[/b]")


def settlement_card(say: Out, outcome: Any, names: Sequence[str], me: int) -> None:
    s = outcome.settlement
    say("")
    say(f"[b]Settlement · deal {outcome.number}[/b]" + (f" · code {outcome.deal_code}" if outcome.deal_code else ""))
    say(f"  {'seat':<18} {'left':>4} {'2s':>3} {'rate':>4} {'×':>3} {'penalty':>7} {'score':>6}")
    for line in s.seats:
        who = ("You" if line.seat == me else names[line.seat])[:12]
        tag = "  winner" if line.seat == s.winner else ""
        say(
            f"  {line.seat} {who:<16} {line.cards_left:>4} {line.twos_left:>3} {line.rate:>4} "
            f"{line.multiplier:>3} {line.penalty:>7} {line.score:>6}{tag}"
        )
    collected = sum(line.penalty for line in s.seats)
    say(f"  Winner: seat {s.winner}; the others pay {collected} in all; deal score {s.seats[s.winner].score}")
    totals = outcome.standing.totals
    say(f"  Match totals so far: {', '.join(f'seat {i}: {t}' for i, t in enumerate(totals))}")


def match_table(say: Out, table: Any, names: Sequence[str], me: int) -> None:
    standing = table.standing
    if standing is None:
        say("No deal finished.")
        return
    say("")
    say(f"[b]Match table[/b] · {len(table.deals)} deal(s)" + (" · over" if standing.over else " · stopped"))
    header = "  " + f"{'seat':<18}" + "".join(f"{'d' + str(d.number):>5}" for d in table.deals)
    say(header + f"{'total':>7} {'won':>4}")
    for seat in range(len(standing.totals)):
        who = ("You" if seat == me else names[seat])[:12]
        row = "".join(f"{d.settlement.scores[seat]:>5}" for d in table.deals)
        win = "  ★ winner" if seat in standing.winners else ""
        say(f"  {seat} {who:<16}{row}{standing.totals[seat]:>7} {standing.deals_won[seat]:>4}{win}")


def bot_levels(spec: str, count: int) -> list[str]:
    levels = [item.strip().lower() for item in spec.split(",") if item.strip()] or ["good"]
    for level in levels:
        if level not in LEVELS:
            raise SystemExit(f"--bots: unknown level {level!r}; levels: {', '.join(LEVELS)}")
    while len(levels) < count:
        levels.append(levels[-1])
    return levels[:count]


def play_main(args: argparse.Namespace) -> int:
    from bigtwo.client.client import BigTwoError
    from bigtwo.client.table import Seat, Table, bot_seat

    rules = ruleset_from_args(args)
    say = Out(args.color)
    me = args.seat
    if not 0 <= me < rules.players:
        raise SystemExit(f"--seat {me}: seats are 0-{rules.players - 1}")
    levels = bot_levels(args.bots, rules.players - 1)
    names: list[str] = []
    seats: list[Seat] = []
    person = Person(me, say, sort=args.sort)
    bots = iter(levels)
    for seat in range(rules.players):
        if seat == me:
            seats.append(Seat(args.name, person))
            names.append(args.name)
        else:
            level = next(bots)
            seats.append(bot_seat(level, name=f"{level} bot", seed=args.seed + seat))
            names.append(f"{level} bot")
    person.names = names

    def on_move(table: Any, result: Any) -> None:
        narrate(say, names, me, result)

    say(f"[b]Big Two[/b] · {rules.preset} · {rules.players} players · match {args_match(rules)} · type help")
    try:
        with connected(args) as client:
            table = Table(client, rules, seats, on_move=on_move)
            first_code = args.deal_code or None
            try:
                while not table.over:
                    code = first_code if not table.deals else None
                    dealt = table.start_deal(code)
                    say("")
                    say(
                        f"[b]Deal {dealt.table.deal_number}[/b] · code [b]{dealt.deal_code}[/b] (share it: "
                        f"bigtwo play --deal-code {dealt.deal_code} --preset {rules.preset})"
                    )
                    while not table.table.over:
                        table.step()
                    settlement_card(say, table.deals[-1], names, me)
            except QuitGame:
                say("Stopping the match.")
                table.stop()
            match_table(say, table, names, me)
            path = Path(
                args.replay_out or f"bigtwo-replay-{table.deals[0].deal_code if table.deals else 'unfinished'}.toml"
            )
            if table.writer._deals:
                table.write_replay(path)
                say(f"Replay written to {path} (bigtwo replay {path}; bigtwo audit {path})")
            codes = [d.deal_code for d in table.deals if d.deal_code]
            if codes:
                say(f"Deal code(s) to share: {' '.join(codes)}")
    except BigTwoError as exc:
        print(f"bigtwo play: the service answered {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbigtwo play: interrupted", file=sys.stderr)
        return 130
    return 0


def args_match(rules: Ruleset) -> str:
    return str(rules.to_mapping().get("match", ""))


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
        "unless --target is given). Type help at the prompt for the commands.",
    )
    add_ruleset_arguments(play)
    play.add_argument(
        "--bots",
        default="good",
        help="bot levels for the other seats in order, e.g. good,great,pro (one level fills every seat; "
        f"levels: {', '.join(LEVELS)}; default %(default)s)",
    )
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    play.add_argument("--name", default="You", help="your name in the replay file")
    play.add_argument("--deal-code", default="", help="replay someone's deal: the first deal uses this code")
    play.add_argument("--deals", type=int, default=0, help="play N deals (sets the match option to deals:N)")
    play.add_argument("--sort", choices=SORTS, default="rank", help="how your hand is sorted (default rank)")
    play.add_argument("--seed", type=int, default=0, help="the bots' random seed (default 0)")
    play.add_argument("--replay-out", default="", help="replay file (default ./bigtwo-replay-<code>.toml)")
    play.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_connection_arguments(play)
    play.set_defaults(func=play_main)


__all__ = ["add_parsers", "deal_main", "own_server", "play_main"]
