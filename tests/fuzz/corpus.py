"""Valid requests learned from the server's own answers: the seeds the fuzzer mutates.

A stranger's client knows the proto and what the service answers, nothing else; so does this
module. It asks ``ListPresets`` for the presets and their options, probes each option with a value
no ruleset has to read the valid values from the error the service sends back, deals real deals,
plays them with moves ``LegalMoves`` offers, and keeps every state token and log it saw. From those
it writes one or more valid requests for every RPC: a mutation of a valid request reaches deeper
into the service than random bytes ever do.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
from bigtwo.codec import rpcs
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

SERVICE_PATH = f"/{rpcs.SERVICE_NAME}/"
GOLDEN = Path(__file__).resolve().parent.parent / "golden"
"""Replay files the project ships (read as text, as any client could read a file)."""

RANKS = "3456789TJQKA2"
SUITS = "DCHS"
DECK = tuple(rank + suit for rank in RANKS for suit in SUITS)
LEVELS = ("random", "beginner", "good", "great", "pro")

M = TypeVar("M", bound=Message)


def call(channel: grpc.Channel, method: str, request: Message, reply: type[M], timeout: float = 30) -> M:
    """One unary call by method name, typed by the reply class (the generated stub is untyped)."""
    stub = channel.unary_unary(
        SERVICE_PATH + method,
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=reply.FromString,
    )
    answer: M = stub(request, timeout=timeout)
    return answer


# --- the rules' option values, as the service states them ---------------------------------------

_VALID_VALUES = re.compile(r"valid values: (.*)$")
_VALUE_WORD = re.compile(r"^[\w:-]+$")
_RUNG = re.compile(r"^[2-9TJQKA]{5}$")


@dataclass
class OptionDomain:
    """Every option name with the values the service accepts, learned from its answers."""

    presets: list[str]
    values: dict[str, list[str]]
    """Plain values per option (``flush`` -> suit-first, rank-first, none)."""
    templates: dict[str, list[str]] = field(default_factory=dict)
    """Values with a number in them (``match`` -> deals:N, target:T)."""
    rungs: list[str] = field(default_factory=list)
    """Straights the presets' ladders name (A2345, 23456, ...), for explicit ladders."""

    def random_value(self, name: str, rng: random.Random, numbered: bool = False) -> str:
        """A value the service should accept for ``name``; with ``numbered``, one with a number in it
        when the option has such values (``deals:417``), so each draw is most likely a new ruleset."""
        choices = list(self.values.get(name, ()))
        templates = self.templates.get(name, [])
        if name == "straights" and self.rungs and rng.random() < 0.3:
            return self.random_ladder(rng)
        if templates and (numbered or not choices or rng.random() < 0.4):
            template = rng.choice(templates)
            return re.sub(r"\b[NT]\b", lambda _: str(rng.choice((1, 2, 3, *[rng.randint(1, 1000)] * 5))), template)
        return rng.choice(choices)

    def random_ladder(self, rng: random.Random) -> str:
        """An explicit straights ladder: some of the known rungs, lowest first, each with its top
        rank as tie-break; each such ladder is another ruleset to the service's caches."""
        rungs = sorted(rng.sample(self.rungs, rng.randint(1, len(self.rungs))), key=self.rungs.index)
        return ",".join(f"{rung}/{rung[-1]}" for rung in rungs)

    def random_ruleset(self, rng: random.Random, overrides: int | None = None) -> pb.Ruleset:
        """A preset and a few valid overrides (each value valid alone; a combination may not be)."""
        ruleset = pb.Ruleset(preset=rng.choice(self.presets))
        names = sorted(set(self.values) | set(self.templates))
        count = rng.randint(0, 4) if overrides is None else overrides
        for name in rng.sample(names, min(count, len(names))):
            ruleset.options[name] = self.random_value(name, rng)
        return ruleset

    def valid_ruleset(self, rng: random.Random, accepts: Callable[[pb.Ruleset], bool], tries: int = 20) -> pb.Ruleset:
        """A random ruleset the service accepts (``accepts`` asks it), else the bare preset."""
        for _ in range(tries):
            ruleset = self.random_ruleset(rng)
            if accepts(ruleset):
                return ruleset
        return pb.Ruleset(preset=rng.choice(self.presets))


def accepted_by(channel: grpc.Channel) -> Callable[[pb.Ruleset], bool]:
    """Whether the service's DescribeRuleset accepts a ruleset (options may exclude each other)."""

    def accepts(ruleset: pb.Ruleset) -> bool:
        try:
            call(channel, "DescribeRuleset", api.DescribeRulesetRequest(ruleset=ruleset), api.DescribeRulesetResponse)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            return False
        return True

    return accepts


def _parse_valid_values(text: str) -> tuple[list[str], list[str]]:
    """The values an error lists after "valid values:" (prose, brackets and asides dropped)."""
    match = _VALID_VALUES.search(text)
    if match is None:
        return [], []
    listed = re.sub(r"\(.*?\)|\[.*?\]", "", match.group(1))
    plain: list[str] = []
    templates: list[str] = []
    for item in (part.strip() for part in listed.split(",")):
        if not _VALUE_WORD.match(item):
            continue
        (templates if re.search(r":[NT]$", item) else plain).append(item)
    return plain, templates


def discover_options(channel: grpc.Channel) -> OptionDomain:
    """Ask the service what its rulesets may hold: presets, options, valid values, straight rungs."""
    presets = call(channel, "ListPresets", api.ListPresetsRequest(), api.ListPresetsResponse).presets
    values: dict[str, set[str]] = {}
    templates: dict[str, list[str]] = {}
    rungs: list[str] = []
    for preset in presets:
        for name, value in preset.ruleset.options.items():
            values.setdefault(name, set()).add(value)
        for line in preset.description:
            if line.startswith("Straights:"):
                for word in re.split(r"[ <:,]+", line):
                    if _RUNG.match(word) and word not in rungs:
                        rungs.append(word)
    for name in sorted(values):
        probe = pb.Ruleset(preset=presets[0].name, options={name: "?"})
        try:
            call(channel, "DescribeRuleset", api.DescribeRulesetRequest(ruleset=probe), api.DescribeRulesetResponse)
        except grpc.RpcError as error:
            plain, found = _parse_valid_values(str(error.details() or ""))
            values[name].update(plain)
            templates[name] = found
    return OptionDomain(
        presets=[preset.name for preset in presets],
        values={name: sorted(found) for name, found in values.items()},
        templates={name: found for name, found in templates.items() if found},
        rungs=rungs,
    )


# --- games played through the API -----------------------------------------------------------------


@dataclass
class PlayedGame:
    """A deal played through the service: everything needed to write any request about it."""

    ruleset: pb.Ruleset
    deal_code: str
    """Empty for an explicit deal."""
    hands: list[str]
    """Each seat's hand as dealt (from views asked seat by seat)."""
    context: pb.DealContext
    players: int
    moves: list[str] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    """The seat of each move."""
    tokens: list[bytes] = field(default_factory=list)
    """tokens[i]: the state token after i moves."""
    other_tokens: list[bytes] = field(default_factory=list)
    """Every other token an answer carried (a seat's own token, for one), found by field name."""
    plays: list[str] = field(default_factory=list)
    """Card texts the service called legal at some point (for tables to beat and hints)."""
    over: bool = False
    result: pb.DealResult | None = None

    def log(self, moves: int | None = None) -> pb.GameLog:
        """The game's log after ``moves`` moves (all by default)."""
        count = len(self.moves) if moves is None else moves
        log = pb.GameLog(ruleset=self.ruleset, context=self.context, moves=self.moves[:count])
        if self.deal_code:
            log.deal_code = self.deal_code
        else:
            log.explicit_deal.hands.extend(self.hands)
        return log


def tokens_in(message: Message) -> list[bytes]:
    """Every non-empty bytes field named ``*token`` in ``message``, at any depth: tokens of kinds
    this fuzzer was written before (a seat's own token) are harvested all the same."""
    found: list[bytes] = []
    for descriptor, value in message.ListFields():
        if descriptor.type == descriptor.TYPE_MESSAGE:
            children = value if descriptor.is_repeated else [value]
            for child in children:
                if isinstance(child, Message):
                    found += tokens_in(child)
        elif descriptor.type == descriptor.TYPE_BYTES and descriptor.name.endswith("token"):
            found += [item for item in (value if descriptor.is_repeated else [value]) if item]
    return found


def _deal(
    channel: grpc.Channel, ruleset: pb.Ruleset, code: str, hands: Sequence[str], context: pb.DealContext
) -> tuple[api.DealResponse, str]:
    request = api.DealRequest(ruleset=ruleset, context=context)
    if hands:
        request.explicit_deal.hands.extend(hands)
    elif code:
        request.deal_code = code
    answer = call(channel, "Deal", request, api.DealResponse)
    return answer, answer.deal_code or code


def play_game(
    channel: grpc.Channel,
    ruleset: pb.Ruleset,
    rng: random.Random,
    *,
    code: str = "",
    hands: Sequence[str] = (),
    context: pb.DealContext | None = None,
    max_moves: int = 400,
) -> PlayedGame:
    """Deal (a fresh code, a given code or explicit hands) and play by random legal moves."""
    context = context or pb.DealContext(deal_number=1)
    answer, code = _deal(channel, ruleset, code, hands, context)
    players = answer.table.players
    seen: list[str] = list(hands)
    others: list[bytes] = []
    for seat in range(players):
        request = api.DealRequest(ruleset=ruleset, context=context, view_seat=seat)
        if hands:
            request.explicit_deal.hands.extend(hands)
        else:
            request.deal_code = code
        view = call(channel, "Deal", request, api.DealResponse)
        others += [token for token in tokens_in(view) if token != view.state_token]
        if not hands:
            seen.append(view.view.hand.text)
    game = PlayedGame(ruleset, "" if hands else code, seen, context, players, tokens=[answer.state_token])
    game.other_tokens = others
    table = answer.table
    while not table.over and len(game.moves) < max_moves:
        token = game.tokens[-1]
        legal = call(
            channel, "LegalMoves", api.LegalMovesRequest(game=pb.Game(state_token=token)), api.LegalMovesResponse
        )
        options = [play.cards.text for play in legal.plays]
        game.plays.extend(options[:3])
        text = "pass" if legal.can_pass and (not options or rng.random() < 0.35) else rng.choice(options)
        move = pb.Move(index=table.moves_made, seat=table.to_act, text=text)
        apply = api.ApplyMoveRequest(game=pb.Game(state_token=token), move=move)
        if rng.random() < 0.2:
            apply.view_seat = move.seat
        applied = call(channel, "ApplyMove", apply, api.ApplyMoveResponse)
        game.other_tokens += [found for found in tokens_in(applied) if found != applied.state_token]
        if not applied.outcome.accepted:
            raise RuntimeError(f"the service refused a move it listed as legal: {text!r}: {applied.outcome}")
        game.moves.append(text)
        game.seats.append(move.seat)
        game.tokens.append(applied.state_token)
        table = applied.table
    game.over = table.over
    if table.over:
        game.result = pb.DealResult(
            deal_number=table.deal_number or 1,
            winner=table.winner,
            scores=list(table.scores),
            cards_left=list(table.cards_left),
            deal_code=game.deal_code,
        )
    return game


# --- the corpus -------------------------------------------------------------------------------------


@dataclass
class Corpus:
    """What the fuzzer knows: the option domain, played games, and valid request bytes per RPC."""

    domain: OptionDomain
    games: list[PlayedGame]
    replay_texts: list[str]
    requests: dict[str, list[bytes]] = field(default_factory=dict)
    """Serialized valid requests by RPC name (PlayStream: single stream messages)."""
    streams: list[list[bytes]] = field(default_factory=list)
    """Whole valid stream conversations (open, then moves)."""

    @property
    def finished(self) -> list[PlayedGame]:
        return [game for game in self.games if game.over]

    @property
    def tokens(self) -> list[bytes]:
        """Every token the service handed out while the corpus was built."""
        return [token for game in self.games for token in game.tokens + game.other_tokens]

    @property
    def deal_codes(self) -> list[str]:
        return [game.deal_code for game in self.games if game.deal_code]


def golden_replay_texts() -> list[str]:
    """The replay files the project ships, plus a tiny one in case none is there."""
    texts = [path.read_text(encoding="utf-8") for path in sorted(GOLDEN.glob("*.toml"))]
    if not texts:
        texts.append('format = "bigtwo-replay/1"\n[ruleset]\npreset = "classic"\n')
    return texts


def build_corpus(channel: grpc.Channel, seed: int, progress: Callable[[str], None] = print) -> Corpus:
    """Play a dozen deals under every preset and 2, 3 and 4 players; write valid requests of every RPC."""
    rng = random.Random(f"corpus:{seed}")
    domain = discover_options(channel)
    games: list[PlayedGame] = []
    for preset in domain.presets:
        games.append(play_game(channel, pb.Ruleset(preset=preset), rng))
    for players in ("2", "3"):
        ruleset = pb.Ruleset(preset=rng.choice(domain.presets), options={"players": players})
        games.append(play_game(channel, ruleset, rng))
    # an explicit deal with the hands of a coded one, a later deal of a match, and unfinished games
    first = games[0]
    games.append(play_game(channel, first.ruleset, rng, hands=first.hands))
    later = pb.DealContext(deal_number=3, previous_winner=first.result.winner if first.result else 0)
    games.append(
        play_game(channel, pb.Ruleset(preset=domain.presets[min(2, len(domain.presets) - 1)]), rng, context=later)
    )
    accepts = accepted_by(channel)
    for _ in range(3):
        ruleset = domain.valid_ruleset(rng, accepts)
        games.append(play_game(channel, ruleset, rng, max_moves=rng.randint(1, 30)))
    progress(f"corpus: {len(games)} games, {sum(len(g.moves) for g in games)} moves, {len(domain.values)} options")
    corpus = Corpus(domain=domain, games=games, replay_texts=golden_replay_texts())
    corpus.requests = valid_requests(corpus, rng)
    corpus.streams = valid_streams(corpus, rng)
    return corpus


def valid_requests(corpus: Corpus, rng: random.Random) -> dict[str, list[bytes]]:
    """Valid requests of every unary RPC (and single stream messages) from the played games."""
    out: dict[str, list[Message]] = {rpc.name: [] for rpc in rpcs.RPCS}
    out["ListPresets"].append(api.ListPresetsRequest())
    for game in corpus.games:
        n = len(game.moves)
        stage = rng.randint(0, max(0, n - 1))
        token = game.tokens[stage]
        by_token = pb.Game(state_token=token)
        by_log = pb.Game(log=game.log(stage))
        hand = game.hands[0]
        out["DescribeRuleset"].append(api.DescribeRulesetRequest(ruleset=game.ruleset))
        deal = api.DealRequest(ruleset=game.ruleset, context=game.context, view_seat=rng.randrange(game.players))
        if game.deal_code:
            deal.deal_code = game.deal_code
        else:
            deal.explicit_deal.hands.extend(game.hands)
        out["Deal"].append(deal)
        out["Deal"].append(api.DealRequest(ruleset=game.ruleset))
        if stage < n:
            move = pb.Move(index=stage, seat=game.seats[stage], text=game.moves[stage])
            out["ValidateMove"].append(api.ValidateMoveRequest(game=by_log, move=move))
            out["ApplyMove"].append(api.ApplyMoveRequest(game=by_token, move=move, view_seat=move.seat))
            out["ApplyMove"].append(api.ApplyMoveRequest(game=by_log, move=move))
        for game_ref in (by_token, by_log):
            out["LegalMoves"].append(api.LegalMovesRequest(game=game_ref))
            out["NextHint"].append(api.NextHintRequest(game=game_ref, after=rng.choice(["", *game.plays[:5]])))
            out["TimeoutMove"].append(api.TimeoutMoveRequest(game=game_ref, bot_level=rng.choice(("", *LEVELS[:3]))))
            out["ReplayLog"].append(api.ReplayLogRequest(log=game.log(), view_seat=rng.randrange(game.players)))
        table = rng.choice(game.plays) if game.plays else ""
        position = api.HandPosition(ruleset=game.ruleset, hand=hand, table=table if rng.random() < 0.5 else "")
        out["LegalMoves"].append(api.LegalMovesRequest(position=position))
        out["SplitHand"].append(api.SplitHandRequest(ruleset=game.ruleset, hand=hand))
        cards = " ".join(hand.split()[: rng.randint(1, 5)])
        out["NameCards"].append(api.NameCardsRequest(cards=cards, ruleset=game.ruleset, table=table))
        out["NameCards"].append(api.NameCardsRequest(cards=cards, game=by_token, seat=rng.randrange(game.players)))
        if stage < n:
            out["BotMove"].append(
                api.BotMoveRequest(game=by_token, level=rng.choice(LEVELS), seed=rng.getrandbits(64), simulations=8)
            )
        if stage < n:
            bots = [api.BotSeat(seat=seat, level=rng.choice(LEVELS[:3]), seed=rng.getrandbits(64)) for seat in range(2)]
            out["PlayBots"].append(api.PlayBotsRequest(game=by_token, bots=bots))
            mine = rng.randrange(game.players)
            others = [seat for seat in range(game.players) if seat != mine]
            seated = api.DealRequest(ruleset=game.ruleset, view_seat=mine, bot_seats=others)
            seated.bot_levels.extend(api.SeatBotLevel(seat=seat, level=rng.choice(LEVELS[:3])) for seat in others)
            out["Deal"].append(seated)
        if game.result is not None:
            out["ScoreDeal"].append(api.ScoreDealRequest(game=pb.Game(state_token=game.tokens[-1])))
            out["ScoreDeal"].append(
                api.ScoreDealRequest(counts=api.CardCounts(ruleset=game.ruleset, cards_left=game.result.cards_left))
            )
            out["AuditLog"].append(api.AuditLogRequest(game_log=game.log(), want_steps=True, view_seat=0))
        out["PlayStream"].append(
            api.PlayStreamRequest(open=api.StreamOpen(game=by_log, view_seat=0, state_tokens=True))
        )
        if stage < n:
            move = pb.Move(index=stage, seat=game.seats[stage], text=game.moves[stage])
            out["PlayStream"].append(api.PlayStreamRequest(move=api.StreamMove(move=move)))
    for preset in corpus.domain.presets:
        results = [g.result for g in corpus.finished if g.result is not None and g.ruleset.preset == preset]
        results = results or [g.result for g in corpus.finished if g.result is not None][:1]
        out["SettleMatch"].append(api.SettleMatchRequest(ruleset=pb.Ruleset(preset=preset), deals=results))
    for text in corpus.replay_texts:
        out["AuditLog"].append(api.AuditLogRequest(replay_toml=text, want_steps=rng.random() < 0.5))
    rpcs.check_covers([name for name, messages in out.items() if messages], "tests/fuzz/corpus.py's valid requests")
    return {name: [message.SerializeToString() for message in messages] for name, messages in out.items()}


def valid_streams(corpus: Corpus, rng: random.Random) -> list[list[bytes]]:
    """Whole conversations: open a game by log or token, then its moves in order."""
    conversations: list[list[bytes]] = []
    for game in corpus.games:
        start = rng.randint(0, len(game.moves) // 2)
        ref = pb.Game(state_token=game.tokens[start]) if rng.random() < 0.5 else pb.Game(log=game.log(start))
        messages = [api.PlayStreamRequest(open=api.StreamOpen(game=ref, view_seat=0, state_tokens=rng.random() < 0.5))]
        for index in range(start, min(len(game.moves), start + 30)):
            move = pb.Move(index=index, seat=game.seats[index], text=game.moves[index])
            messages.append(api.PlayStreamRequest(move=api.StreamMove(move=move)))
        conversations.append([message.SerializeToString() for message in messages])
    return conversations


UNARY_RPCS: dict[str, tuple[type[Message], type[Message]]] = {
    rpc.name: (rpc.request, rpc.response) for rpc in rpcs.UNARY_RPCS
}
"""Every unary RPC of bigtwo.v1.BigTwoService with its request and reply messages (from the
descriptor, :mod:`bigtwo.codec.rpcs`)."""
STREAM_RPCS: dict[str, tuple[type[Message], type[Message]]] = {
    rpc.name: (rpc.request, rpc.response) for rpc in rpcs.STREAM_RPCS
}


def check_rpc_table() -> None:
    """Fail loudly when the proto grew an RPC this fuzzer does not attack: one with no hostile
    builder (tests/fuzz/hostile.py checks so at import) or no valid request (checked as the corpus
    is built, :func:`valid_requests`)."""
    from fuzz import hostile  # the hostile builders read this module's corpus

    hostile.check_builders()
