"""Hostile requests that still look like requests: every field filled with what a careless or
malicious client might send, built from the corpus so the service reads them past the first
check.

Each generator takes the case's ``random.Random`` and returns a message (or a replay text, or a
stream conversation) together with a short name of what it tried (``deal:explicit-too-many``,
``replay:dotted-keys``), so a report groups findings by what caused them and a known finding can be
named exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from bigtwo.codec import rpcs
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

from fuzz.corpus import DECK, LEVELS, Corpus, PlayedGame
from fuzz.mutate import UINT32_EDGES, UINT64_EDGES, Pools, mutate_bytes

FULL_DECK = " ".join(DECK)
HUGE = 20_000
"""Characters in a 'huge' string: over the 16 KiB trailer limit if an error echoed it whole."""

HOSTILE_STRINGS: tuple[str, ...] = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "x" * HUGE,
    "é" * (HUGE // 2),
    "🂡" * (HUGE // 4),
    "\u202e\u200b\ufeff",
    "\r\n\t",
    "%s%s%n{0}${x}",
    "'\"\\",
    "../../../../etc/passwd",
    "9" * 5000,
    "-1",
    "1e309",
    "NaN",
    "3D " * 2000,
    FULL_DECK,
    FULL_DECK + " " + FULL_DECK,
    "3D 3D",
    "10D JQ 1X",
    "3♦ ♠2 10♥",
    "3d 4c",
    "pass",
    "PASS",
    " pass ",
    "pass pass",
    "3D\x00",
    "classic",
    "CLASSIC",
    " classic",
    "classic\x00",
    "hong-kong",
    "players",
    "pro",
    "PRO ",
    "deals:0",
    "deals:-1",
    "deals:" + "9" * 100,
    "target:99999999999999999999",
    ",".join(["A2345/5"] * 3000),
    "7K3M9QX2AB4H8",
    "0000000000000",
    "explicit:0000",
)


@dataclass
class Hostile:
    """Hostile requests for one corpus."""

    corpus: Corpus

    def pools(self) -> Pools:
        """Values for the descriptor-driven generator: hostile strings plus the corpus's own."""
        corpus = self.corpus
        strings = list(HOSTILE_STRINGS)
        strings += corpus.domain.presets + corpus.deal_codes + list(LEVELS)
        strings += [play for game in corpus.games for play in game.plays[:10]]
        strings += [hand for game in corpus.games for hand in game.hands]
        keys = [*list(corpus.domain.values), "", "x" * HUGE, "players\x00", "PLAYERS", "é"]
        values = [value for found in corpus.domain.values.values() for value in found] + list(HOSTILE_STRINGS)
        blobs = corpus.tokens[:200] + [self.tampered_token(random.Random(i)) for i in range(50)]
        return Pools(strings=strings, blobs=blobs, keys=keys, values=values)

    # --- building blocks ----------------------------------------------------------------------

    def game_record(self, rng: random.Random) -> PlayedGame:
        return rng.choice(self.corpus.games)

    def tampered_token(self, rng: random.Random) -> bytes:
        tokens = self.corpus.tokens
        token = bytearray(rng.choice(tokens))
        how = rng.randrange(9)
        if how == 0 and token:
            token[rng.randrange(len(token))] ^= 1 << rng.randrange(8)
        elif how == 1:
            del token[rng.randrange(len(token) + 1) :]
        elif how == 2:
            token.extend(rng.randbytes(rng.choice((1, 16, 300))))
        elif how == 3 and token:
            token[0] = rng.randrange(256)  # version
        elif how == 4 and len(token) > 5:
            token[1:5] = rng.randbytes(4)  # key id
        elif how == 5:
            token = bytearray(rng.choice(tokens) + rng.choice(tokens))
        elif how == 6:
            token = bytearray(len(token))
        elif how == 7 and token:
            token[-rng.randint(1, min(32, len(token))) :] = rng.randbytes(rng.randint(1, 32))
        else:
            token = bytearray(mutate_bytes(bytes(token), rng))
        return bytes(token)

    def ruleset(self, rng: random.Random) -> tuple[pb.Ruleset, str]:
        domain = self.corpus.domain
        if rng.random() < 0.5:
            return domain.random_ruleset(rng), "valid"
        ruleset = pb.Ruleset(preset=rng.choice(domain.presets))
        how = rng.randrange(8)
        names = sorted(domain.values)
        if how == 0:
            ruleset.preset = rng.choice(HOSTILE_STRINGS)
            return ruleset, "preset"
        if how == 1:
            ruleset.options[rng.choice(names)] = rng.choice(HOSTILE_STRINGS)
            return ruleset, "option-value"
        if how == 2:
            ruleset.options[rng.choice(HOSTILE_STRINGS)] = rng.choice(domain.values[rng.choice(names)])
            return ruleset, "option-name"
        if how == 3:
            for i in range(rng.choice((33, 100, 1000, 5000))):
                ruleset.options[f"option{i}"] = "on"
            return ruleset, "many-options"
        if how == 4:
            rungs = domain.rungs or ["A2345"]
            ruleset.options["straights"] = ",".join(
                f"{rng.choice(rungs)}/{rng.choice('3456789TJQKA2')}" for _ in range(rng.choice((2, 20, 200)))
            )
            return ruleset, "ladder"
        if how == 5:
            ruleset.options["match"] = rng.choice(("deals:", "target:")) + rng.choice(
                ("0", "-5", "9" * rng.choice((10, 19, 20, 1000, 5000)), "1.5", "1e9", "٣")
            )
            return ruleset, "match"
        if how == 6:
            ruleset.options["players"] = rng.choice(("0", "1", "5", "52", "-1", "4294967296", "9" * 400, "٤", "4 "))
            return ruleset, "players"
        for name in names:
            ruleset.options[name] = domain.random_value(name, rng)
        return ruleset, "every-option"

    def hand_text(self, rng: random.Random) -> tuple[str, str]:
        """A hand or selection: real, too large, repeated, or not cards at all."""
        game = self.game_record(rng)
        how = rng.randrange(7)
        if how == 0:
            return rng.choice(game.hands), "real"
        if how == 1:
            return FULL_DECK, "52-cards"
        if how == 2:
            return " ".join(rng.sample(DECK, rng.choice((14, 17, 18, 19, 26, 39, 51)))), "many-cards"
        if how == 3:
            hand = rng.choice(game.hands).split()
            return " ".join(hand + hand[: rng.randint(1, len(hand))]), "repeated-cards"
        if how == 4:
            return " ".join(rng.choice(DECK) for _ in range(rng.choice((100, 1000, 5000)))), "huge-card-list"
        if how == 5:
            hand = rng.choice(game.hands).split()
            return " ".join(hand[: rng.randint(0, len(hand))]), "part"
        return rng.choice(HOSTILE_STRINGS), "string"

    def explicit_deal(self, rng: random.Random) -> tuple[pb.ExplicitDeal, str]:
        game = self.game_record(rng)
        hands = list(game.hands)
        how = rng.randrange(7)
        if how == 0:
            return pb.ExplicitDeal(hands=hands), "valid"
        if how == 1:
            hands[0] = FULL_DECK
            return pb.ExplicitDeal(hands=hands), "too-many-cards"
        if how == 2:
            hands[-1] = hands[0]
            return pb.ExplicitDeal(hands=hands), "duplicate-cards"
        if how == 3:
            return pb.ExplicitDeal(hands=hands * rng.choice((2, 25, 250))), "too-many-hands"
        if how == 4:
            return pb.ExplicitDeal(hands=hands[: rng.randint(0, 1)]), "too-few-hands"
        if how == 5:
            return pb.ExplicitDeal(hands=[rng.choice(HOSTILE_STRINGS) for _ in hands]), "strings"
        return pb.ExplicitDeal(hands=[" ".join(rng.sample(DECK, 18)) for _ in hands]), "18-card-hands"

    def context(self, rng: random.Random) -> pb.DealContext:
        context = pb.DealContext(deal_number=rng.choice(UINT32_EDGES))
        if rng.random() < 0.5:
            context.previous_winner = rng.choice(UINT32_EDGES)
        context.empty_seats.extend(rng.choice(UINT32_EDGES) for _ in range(rng.choice((0, 1, 3, 4, 1000))))
        return context

    def log(self, rng: random.Random) -> tuple[pb.GameLog, str]:
        """A game's log: valid at some move, or edited."""
        game = self.game_record(rng)
        stage = rng.randint(0, len(game.moves))
        log = game.log(stage)
        how = rng.randrange(10)
        if how == 0 or not log.moves:
            return log, "valid"
        if how == 1:
            log.moves[rng.randrange(len(log.moves))] = rng.choice(rng.choice(game.hands).split())
            return log, "edited-move"
        if how == 2:
            i, j = rng.randrange(len(log.moves)), rng.randrange(len(log.moves))
            log.moves[i], log.moves[j] = log.moves[j], log.moves[i]
            return log, "swapped-moves"
        if how == 3:
            log.moves.extend(["pass"] * rng.choice((1, 100, 1024, 1025, 5000)))
            return log, "long"
        if how == 4:
            log.moves[rng.randrange(len(log.moves))] = rng.choice(HOSTILE_STRINGS)
            return log, "hostile-move"
        if how == 5:
            log.ruleset.CopyFrom(self.ruleset(rng)[0])
            return log, "other-ruleset"
        if how == 6:
            if rng.random() < 0.5:
                log.deal_code = rng.choice((*self.corpus.deal_codes, *HOSTILE_STRINGS))
            else:
                log.explicit_deal.CopyFrom(self.explicit_deal(rng)[0])
            return log, "other-deal"
        if how == 7:
            log.context.CopyFrom(self.context(rng))
            return log, "context"
        if how == 8:
            other = self.game_record(rng)
            log.moves.extend(other.moves)
            return log, "spliced-moves"
        log.moves.extend([*game.moves[stage:], "pass", "pass", FULL_DECK])
        return log, "past-the-end"

    def game(self, rng: random.Random) -> tuple[pb.Game, str]:
        how = rng.randrange(4)
        if how == 0:
            return pb.Game(state_token=rng.choice(self.corpus.tokens)), "token"
        if how == 1:
            return pb.Game(state_token=self.tampered_token(rng)), "tampered-token"
        log, name = self.log(rng)
        return pb.Game(log=log), f"log-{name}"

    def move(self, rng: random.Random) -> tuple[pb.Move, str]:
        game = self.game_record(rng)
        stage = rng.randrange(len(game.moves)) if game.moves else 0
        move = pb.Move(seat=game.seats[stage] if game.moves else 0, text=game.moves[stage] if game.moves else "pass")
        how = rng.randrange(6)
        if how != 5:
            move.index = rng.choice((stage, max(0, stage - 1), stage + 1, *UINT32_EDGES))
        if how == 1:
            move.seat = rng.choice(UINT32_EDGES)
            return move, "seat"
        if how == 2:
            move.text = self.hand_text(rng)[0]
            return move, "cards"
        if how == 3:
            move.text = rng.choice(HOSTILE_STRINGS)
            return move, "string"
        return move, "index" if how != 5 else "no-index"

    # --- one per RPC -------------------------------------------------------------------------------

    def ListPresets(self, rng: random.Random) -> tuple[Message, str]:
        return api.ListPresetsRequest(), "empty"

    def DescribeRuleset(self, rng: random.Random) -> tuple[Message, str]:
        ruleset, name = self.ruleset(rng)
        return api.DescribeRulesetRequest(ruleset=ruleset), name

    def Deal(self, rng: random.Random) -> tuple[Message, str]:
        ruleset, name = self.ruleset(rng) if rng.random() < 0.4 else (self.game_record(rng).ruleset, "")
        request = api.DealRequest(ruleset=ruleset)
        how = rng.randrange(4)
        if how == 0:
            request.deal_code = rng.choice(self.corpus.deal_codes)
            code = list(request.deal_code)
            if rng.random() < 0.7 and code:
                code[rng.randrange(len(code))] = rng.choice("0123456789ABCDEFGHJKMNPQRSTVWXYZabc-é")
            request.deal_code = rng.choice(("".join(code), rng.choice(HOSTILE_STRINGS)))
            name += ":code"
        elif how == 1:
            deal, deal_name = self.explicit_deal(rng)
            request.explicit_deal.CopyFrom(deal)
            name += f":explicit-{deal_name}"
        if rng.random() < 0.5:
            request.context.CopyFrom(self.context(rng))
            name += ":context"
        if rng.random() < 0.5:
            request.view_seat = rng.choice(UINT32_EDGES)
        if rng.random() < 0.3:
            request.bot_seats.extend(rng.choice((0, 1, 2, 3, *UINT32_EDGES)) for _ in range(rng.choice((1, 3, 100))))
            name += ":bot-seats"
        if rng.random() < 0.3:
            for _ in range(rng.choice((1, 3, 100))):
                seat = rng.choice((0, 1, 2, 3, *UINT32_EDGES))
                request.bot_levels.add(seat=seat, level=rng.choice((*LEVELS, "", *HOSTILE_STRINGS)))
            name += ":bot-levels"
        return request, name.strip(":")

    def ValidateMove(self, rng: random.Random) -> tuple[Message, str]:
        game, game_name = self.game(rng)
        move, move_name = self.move(rng)
        return api.ValidateMoveRequest(game=game, move=move), f"{game_name}:{move_name}"

    def ApplyMove(self, rng: random.Random) -> tuple[Message, str]:
        game, game_name = self.game(rng)
        move, move_name = self.move(rng)
        request = api.ApplyMoveRequest(game=game, move=move)
        if rng.random() < 0.5:
            request.view_seat = rng.choice(UINT32_EDGES)
        return request, f"{game_name}:{move_name}"

    def LegalMoves(self, rng: random.Random) -> tuple[Message, str]:
        if rng.random() < 0.4:
            game, name = self.game(rng)
            return api.LegalMovesRequest(game=game), name
        hand, name = self.hand_text(rng)
        table = rng.choice(("", self.hand_text(rng)[0], *self.game_record(rng).plays[:3]))
        ruleset = self.ruleset(rng)[0] if rng.random() < 0.3 else self.game_record(rng).ruleset
        return api.LegalMovesRequest(
            position=api.HandPosition(ruleset=ruleset, hand=hand, table=table)
        ), f"position-{name}"

    def NextHint(self, rng: random.Random) -> tuple[Message, str]:
        game, name = self.game(rng)
        return api.NextHintRequest(game=game, after=rng.choice(("", self.hand_text(rng)[0]))), name

    def TimeoutMove(self, rng: random.Random) -> tuple[Message, str]:
        game, name = self.game(rng)
        level = rng.choice(("", *LEVELS, *HOSTILE_STRINGS))
        return api.TimeoutMoveRequest(game=game, bot_level=level), name

    def SplitHand(self, rng: random.Random) -> tuple[Message, str]:
        hand, name = self.hand_text(rng)
        ruleset = self.ruleset(rng)[0] if rng.random() < 0.3 else self.game_record(rng).ruleset
        return api.SplitHandRequest(ruleset=ruleset, hand=hand), name

    def NameCards(self, rng: random.Random) -> tuple[Message, str]:
        cards, name = self.hand_text(rng)
        request = api.NameCardsRequest(cards=cards)
        if rng.random() < 0.5:
            request.ruleset.CopyFrom(self.ruleset(rng)[0])
            request.table = rng.choice(("", self.hand_text(rng)[0]))
            return request, f"ruleset-{name}"
        game, game_name = self.game(rng)
        request.game.CopyFrom(game)
        request.seat = rng.choice(UINT32_EDGES)
        return request, f"game-{game_name}-{name}"

    def ScoreDeal(self, rng: random.Random) -> tuple[Message, str]:
        if rng.random() < 0.4:
            game, name = self.game(rng)
            finished = [g for g in self.corpus.finished if g.tokens]
            if finished and rng.random() < 0.5:
                game = pb.Game(state_token=rng.choice(finished).tokens[-1])
                name = "finished"
            return api.ScoreDealRequest(game=game), name
        seats = rng.choice((0, 1, 2, 3, 4, 5, 1000))
        counts = api.CardCounts(ruleset=self.ruleset(rng)[0] if rng.random() < 0.3 else pb.Ruleset())
        counts.cards_left.extend(rng.choice(UINT32_EDGES) for _ in range(seats))
        counts.twos_left.extend(rng.choice(UINT32_EDGES) for _ in range(rng.choice((0, seats, 7))))
        return api.ScoreDealRequest(counts=counts), "counts"

    def SettleMatch(self, rng: random.Random) -> tuple[Message, str]:
        results = [g.result for g in self.corpus.finished if g.result is not None]
        request = api.SettleMatchRequest(ruleset=self.ruleset(rng)[0] if rng.random() < 0.5 else pb.Ruleset())
        how = rng.randrange(4)
        count = rng.choice((0, 1, 8, 999, 1000, 1001, 5000))
        patterns: list[pb.DealResult] = []
        for _ in range(min(count, 16)):  # a few distinct deals, repeated: building 5,000 is the server's work
            deal = pb.DealResult()
            deal.CopyFrom(rng.choice(results))
            if how == 1:
                deal.scores[:] = [rng.choice((2**31 - 1, -(2**31), 1_000_000, -1_000_000)) for _ in deal.scores]
            elif how == 2:
                deal.winner = rng.choice(UINT32_EDGES)
                deal.deal_number = rng.choice(UINT32_EDGES)
            elif how == 3:
                deal.scores.extend(rng.choice((0, 1, -1)) for _ in range(rng.choice((1, 100))))
            patterns.append(deal)
        if patterns:
            request.deals.extend((patterns * (count // len(patterns) + 1))[:count])
            if how != 2:
                for number, deal in enumerate(request.deals, start=1):
                    deal.deal_number = number
        request.empty_seats.extend(rng.choice(UINT32_EDGES) for _ in range(rng.choice((0, 1, 4, 100))))
        request.stopped = rng.random() < 0.5
        return request, ("valid", "huge-scores", "odd-winners", "odd-lengths")[how] + f"-{count}"

    def ReplayLog(self, rng: random.Random) -> tuple[Message, str]:
        log, name = self.log(rng)
        request = api.ReplayLogRequest(log=log)
        if rng.random() < 0.5:
            request.view_seat = rng.choice(UINT32_EDGES)
        return request, name

    def BotMove(self, rng: random.Random, heavy: bool = False) -> tuple[Message, str]:
        game, name = self.game(rng)
        level = rng.choice((*LEVELS, *LEVELS, *HOSTILE_STRINGS))
        request = api.BotMoveRequest(game=game, level=level, seed=rng.choice(UINT64_EDGES))
        if heavy:
            request.level = "pro"
            request.simulations = rng.choice((10_000, 2**32 - 1))
            request.max_ms = rng.choice((0, 10_000, 2**32 - 1))
            return request, f"{name}:max-budget"
        request.simulations = rng.choice((0, 1, 2, 8, 16, 10_001, 2**32 - 1))
        request.max_ms = rng.choice((0, 0, 1, 5, 10_001, 2**32 - 1))
        if request.level == "pro" and request.simulations in (0, 16) and request.max_ms == 0:
            request.simulations = 8  # the default budget is for real tables, not for a fuzzer's thousands
        return request, name

    def PlayBots(self, rng: random.Random) -> tuple[Message, str]:
        game, name = self.game(rng)
        request = api.PlayBotsRequest(game=game)
        count = rng.choice((0, 1, 4, 5, 100))
        # No pro: a host's token with every seat a bot plays up to a whole call's moves, which at the
        # pro level's default budget is seconds per call, not a fuzzer's thousands of cases.
        levels = (*(level for level in LEVELS if level != "pro"), *HOSTILE_STRINGS)
        for _ in range(count):
            seat = rng.choice((0, 1, 2, 3, *UINT32_EDGES))
            request.bots.add(seat=seat, level=rng.choice(levels), seed=rng.choice(UINT64_EDGES))
        return request, f"{name}:bots-{count}"

    def AuditLog(self, rng: random.Random) -> tuple[Message, str]:
        request = api.AuditLogRequest(want_steps=rng.random() < 0.5, require_signature=rng.random() < 0.3)
        if rng.random() < 0.5:
            request.view_seat = rng.choice(UINT32_EDGES)
        if rng.random() < 0.3:
            log, name = self.log(rng)
            request.game_log.CopyFrom(log)
            return request, f"log-{name}"
        text, name = hostile_replay_text(rng, self.corpus.replay_texts)
        request.replay_toml = text
        return request, f"replay:{name}"

    def build(self, rpc: str, rng: random.Random, heavy: bool = False) -> tuple[Message, str]:
        """A hostile request for ``rpc`` and the name of what it tries."""
        if rpc == "BotMove":
            return self.BotMove(rng, heavy)
        builder: Callable[[random.Random], tuple[Message, str]] = getattr(self, rpc)
        return builder(rng)

    # --- streams -----------------------------------------------------------------------------

    def stream(self, rng: random.Random) -> tuple[list[bytes], str]:
        """A PlayStream conversation: valid ones edited, opens twice, moves before the open,
        resends, garbage messages."""
        corpus = self.corpus
        conversation = list(rng.choice(corpus.streams))
        how = rng.randrange(9)
        if how == 0:
            return conversation, "valid"
        if how == 1:
            return conversation[1:], "moves-before-open"
        if how == 2:
            at = rng.randint(1, len(conversation))
            return [*conversation[:at], conversation[0], *conversation[at:]], "double-open"
        if how == 3 and len(conversation) > 1:
            at = rng.randrange(1, len(conversation))
            return conversation[: at + 1] + [conversation[at]] * rng.choice((1, 2, 10)) + conversation[
                at + 1 :
            ], "resend"
        if how == 4:
            for _ in range(rng.randint(1, 5)):
                at = rng.randrange(1, len(conversation) + 1)
                move, _name = self.move(rng)
                message = api.PlayStreamRequest(move=api.StreamMove(move=move, validate_only=rng.random() < 0.3))
                conversation.insert(at, message.SerializeToString())
            return conversation, "hostile-moves"
        if how == 5:
            game, name = self.game(rng)
            opening = api.PlayStreamRequest(open=api.StreamOpen(game=game, state_tokens=rng.random() < 0.5))
            if rng.random() < 0.5:
                opening.open.view_seat = rng.choice(UINT32_EDGES)
            return [opening.SerializeToString(), *conversation[1:]], f"open-{name}"
        if how == 6:
            others = corpus.requests.get("PlayStream", [])
            return [
                mutate_bytes(message, rng, others) if rng.random() < 0.4 else message for message in conversation
            ], "mutated"
        if how == 7:
            move, _name = self.move(rng)
            flood = api.PlayStreamRequest(move=api.StreamMove(move=move)).SerializeToString()
            return conversation[:1] + [flood] * rng.choice((100, 500)), "flood"
        return conversation[:1], "open-only"


def check_builders() -> None:
    """Fail loudly when the proto has a unary RPC with no hostile builder here (a method of
    :class:`Hostile` named as the RPC), or a stream other than PlayStream (:meth:`Hostile.stream`)."""
    builders = [name for name in vars(Hostile) if name[:1].isupper()]
    rpcs.check_covers(builders, "tests/fuzz/hostile.py's Hostile builders", rpcs.UNARY_RPCS)
    rpcs.check_covers(["PlayStream"], "tests/fuzz/hostile.py's stream conversations (Hostile.stream)", rpcs.STREAM_RPCS)


check_builders()


# --- replay texts -------------------------------------------------------------------------------

REPLAY_LIMIT = 1 << 20
"""The documented message limit: a replay text up to it must be answered cheaply."""


def _size(rng: random.Random) -> int:
    return rng.choice((10, 100, 1000, 5000, 20_000, 100_000, 400_000, REPLAY_LIMIT - 200))


def _golden_edit(rng: random.Random, golden: list[str]) -> tuple[str, str]:
    text = rng.choice(golden)
    lines = text.splitlines()
    how = rng.randrange(9)
    if how == 0:
        head, sep, deals = text.partition("[[deals]]")
        block = sep + deals
        copies = max(1, min(rng.choice((2, 10, 200, 2000)), (REPLAY_LIMIT - len(head)) // max(1, len(block))))
        return head + block * copies, f"golden-many-deals-{copies}"
    if how == 1:
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(lines))
            lines[i] = lines[i].replace(rng.choice(DECK), rng.choice(("1X", "3D 3D", FULL_DECK, "pass", "")), 1)
        return "\n".join(lines), "golden-edited-cards"
    if how == 2:
        i = rng.randrange(len(lines))
        lines[i] = (
            lines[i].split("=")[0]
            + "= "
            + rng.choice(
                ("99999999999999999999999", "-1", "1e999", "nan", "[]", "{}", '"' + "x" * HUGE + '"', "9" * 100_000)
            )
        )
        return "\n".join(lines), "golden-odd-value"
    if how == 3:
        rng.shuffle(lines)
        return "\n".join(lines), "golden-shuffled"
    if how == 4:
        del lines[rng.randrange(len(lines)) :]
        return "\n".join(lines), "golden-truncated"
    if how == 5:
        return text.replace("hands = [", "hands = [\n  " + '"' + FULL_DECK + '",', 1), "golden-52-card-hand"
    if how == 6:
        return text.replace(
            "actions = [", "actions = [\n" + '  "p1 pass",\n' * rng.choice((100, 10_000, 25_000)), 1
        ), "golden-many-actions"
    if how == 7:
        data = mutate_bytes(text.encode(), rng)
        return data.decode("utf-8", errors="replace"), "golden-mutated-bytes"
    return text + "\n" + rng.choice(
        ("[ruleset]\n", "format = 1\n", "[[seats]]\n" * 1000, "signature = '" + "0" * 64 + "'\n")
    ), "golden-appended"


def _repeat_lines(rng: random.Random, size: int, line: Callable[[int], str]) -> str:
    """Lines ``line(0)``, ``line(1)``, ... until the text is about ``size`` characters long."""
    parts: list[str] = []
    total = 0
    while total < size:
        text = line(len(parts)) + "\n"
        parts.append(text)
        total += len(text)
    return "".join(parts)


def _one_construct(rng: random.Random, n: int) -> tuple[str, str]:
    """One huge construct on one line (or one string): deep, long or wide."""
    how = rng.randrange(9)
    if how == 0:
        return "[" * n, "open-brackets"
    if how == 1:
        depth = min(n, REPLAY_LIMIT // 2 - 10)
        return "a = " + "[" * depth + "]" * depth, "nested-arrays"
    if how == 2:
        depth = min(n, REPLAY_LIMIT // 4 - 10)
        return "a = " + "{a=" * depth + "1" + "}" * depth, "nested-tables"
    if how == 3:
        return "a" + ".a" * (n // 2) + " = 1", "dotted-keys"
    if how == 4:
        return "[" + "a." * (n // 2) + "a]\nb = 1", "dotted-table"
    if how == 5:
        return "x = " + rng.choice(("", "-", "+")) + "9" * n, "huge-integer"
    if how == 6:
        return "x = " + rng.choice(
            ("0x" + "f" * n, "1" + "_0" * (n // 2), "1e" + "9" * n, "0." + "1" * n)
        ), "odd-number"
    if how == 7:
        unit = rng.choice(("a", "é", "\\u0000", "\\\\", "\\uD800", "\\U0010FFFF"))
        return 's = "' + unit * (n // len(unit)) + '"', "huge-string"
    return 's = """' + "\\\n" * (n // 2) + '"""', "line-continuations"


def _many_lines(rng: random.Random, n: int) -> tuple[str, str]:
    """The same constructs at a width a line-length limit may allow, repeated line after line up to
    the size: a per-line limit must not leave a per-text cost unbounded."""
    width = rng.choice((8, 64, 500, 1000, 2000, 4000))
    how = rng.randrange(10)
    if how == 0:
        return _repeat_lines(rng, n, lambda i: f"k{i}" + ".a" * (width // 2) + " = 1"), f"dotted-keys-lines-{width}"
    if how == 1:
        return _repeat_lines(rng, n, lambda i: f"[t{i}" + ".a" * (width // 2) + "]"), f"dotted-tables-lines-{width}"
    if how == 2:
        depth = max(1, width // 2)
        return _repeat_lines(rng, n, lambda i: f"a{i} = " + "[" * depth + "]" * depth), f"nested-arrays-lines-{width}"
    if how == 3:
        depth = max(1, width // 4)
        return _repeat_lines(
            rng, n, lambda i: f"a{i} = " + "{a=" * depth + "1" + "}" * depth
        ), f"nested-tables-lines-{width}"
    if how == 4:
        return _repeat_lines(rng, n, lambda i: f"x{i} = " + "9" * width), f"huge-integers-lines-{width}"
    if how == 5:
        return _repeat_lines(rng, n, lambda i: f"k{i} = {i}"), "many-keys"
    if how == 6:
        return _repeat_lines(rng, n, lambda i: f"[t{i}]"), "many-tables"
    if how == 7:
        return '[ruleset]\npreset = "classic"\n' + _repeat_lines(rng, n, lambda i: "[[deals]]"), "many-array-tables"
    if how == 8:
        return _repeat_lines(rng, n, lambda i: "a = 1"), "duplicate-keys"
    return _repeat_lines(rng, n, lambda i: f's{i} = "' + "\\u00e9" * (width // 6) + '"'), f"escapes-lines-{width}"


def hostile_replay_text(rng: random.Random, golden: list[str]) -> tuple[str, str]:
    """A replay text built to make a TOML reader or the audit work hard: deep nesting, long dotted
    keys, huge numbers and strings, many keys and tables, many deals and actions, edited real
    files, odd characters; up to the message limit."""
    n = _size(rng)
    how = rng.randrange(10)
    if how < 3:
        return _one_construct(rng, n)
    if how < 6:
        return _many_lines(rng, n)
    if how == 6:
        unit = rng.choice(("\ufeff", "\r\n", "\u2028", "\x00", "#", "\x7f", "# comment\n", "\n"))
        return unit * (n // len(unit)), "odd-characters"
    if how == 7:
        text = rng.choice(golden)
        return text + "\ncomment = " + "[" * min(n, 5000) + "]" * min(n, 5000), "golden-nested-comment"
    return _golden_edit(rng, golden)
