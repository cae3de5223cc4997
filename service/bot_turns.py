"""The service's bots: which seats the service plays, at which level and with which randomness.

With the host's token (or a log) the caller names each bot's level and seed. With a seat token the
deal fixed them (issue 33): ``DealRequest.bot_seats`` and ``bot_levels`` and 16 random bytes drawn
by ``Deal`` are sealed in every token of the deal (:class:`~bigtwo.service.tokens.TableSeal`), and
a level, seed or budget sent with a seat token is ``INVALID_ARGUMENT`` ``BOTS_FIXED_AT_DEAL``: the
same token always gets the same bot moves. The levels are the registry's
(:data:`bigtwo.engine.bots.REGISTRY`). The handlers that play them are :class:`~bigtwo.service.core.Core`'s.
"""

from __future__ import annotations

import hashlib
import random

from bigtwo.engine import Event, Move, Ruleset, observe
from bigtwo.engine.bots import DEFAULT_LEVEL, LEVELS, Budget, bot_for, level_by_code, level_named
from bigtwo.v1 import service_pb2 as api

from . import convert as cv
from .bounds import MAX_SEATS
from .errors import InvalidArgument, PermissionDenied, bad_field
from .game import Game
from .limits import quote


def bot_level_from(text: str, path: str) -> str:
    """A bot level name (case and spaces ignored); INVALID_ARGUMENT listing the valid ones."""
    level = text.strip().lower()
    if level not in LEVELS:
        raise bad_field(path, f"unknown bot level {quote(text)}; valid levels: {', '.join(LEVELS)}")
    return level


def bot_choice(
    game: Game, level: str, seed: int, budget: Budget | None = None, events: tuple[Event, ...] | None = None
) -> Move:
    """The bot's move for the seat to act, decided from that seat's observation only: the one it
    has in process, history included, however the game came (a log, a host's or a seat's token:
    :meth:`Game.events_so_far` rebuilds a token's earlier events from its public history, which
    the rules bound, ``history.MAX_HISTORY_BYTES``, and so the observation). ``events``: those
    events when the caller has them already."""
    deal = game.deal
    seen = observe(deal, deal.to_act, events=game.events_so_far() if events is None else events)
    return bot_for(level, budget).choose(seen, deal.ruleset, random.Random(seed))


def bot_decision_seed(seed: int, move_index: int) -> int:
    """The seed of a PlayBots decision: the first 8 bytes (little-endian) of BLAKE2b-64 over the bot
    seat's seed (8 bytes, little-endian) and the move's index in the deal (2 bytes, little-endian).
    Every decision of a bot draws afresh, the same game, levels and seeds give the same moves, and a
    BotMove with this seed chooses the same move (docs/SERVICE.md "PlayBots")."""
    digest = hashlib.blake2b(seed.to_bytes(8, "little") + move_index.to_bytes(2, "little"), digest_size=8)
    return int.from_bytes(digest.digest(), "little")


def sealed_seed(game: Game, seat: int) -> int:
    """The seed of ``seat``'s bot in a game sealed at deal time: BLAKE2b-64 keyed with the deal's
    secret (:class:`~bigtwo.service.tokens.TableSeal`, drawn from the OS by ``Deal``) over the seat,
    read little-endian. Its decisions mix in the move's index as a host's seed does
    (:func:`bot_decision_seed`). The caller never holds the secret, so it can neither choose a bot's
    draws nor foresee them; a token issued before seals existed keys with nothing (still fixed)."""
    seal = game.seal
    key = seal.secret if seal is not None else b""
    digest = hashlib.blake2b(b"bot seat %d" % seat, key=key, digest_size=8, person=b"bigtwo bots")
    return int.from_bytes(digest.digest(), "little")


def sealed_level(game: Game, seat: int) -> str:
    """The level ``seat``'s bot was given at deal time (``DealRequest.bot_levels``); "" when none
    was (a level this build does not know reads as none)."""
    seal = game.seal
    if seal is None or seat >= len(seal.levels):
        return ""
    level = level_by_code(seal.levels[seat])
    return "" if level is None else level.name


def bots_fixed(path: str, what: str) -> InvalidArgument:
    """INVALID_ARGUMENT ``BOTS_FIXED_AT_DEAL``: a seat token asked to choose its bots' play."""
    return bad_field(
        path,
        f"a seat token's bots play as its deal fixed them (levels and randomness sealed in the token), so "
        f"{what} cannot be set with one; leave it unset (DealRequest.bot_levels chooses levels when dealing)",
        reason="BOTS_FIXED_AT_DEAL",
    )


def bot_seats_of(request: api.DealRequest, rules: Ruleset, view_seat: int | None) -> int:
    """DealRequest.bot_seats as a mask: other seats than ``view_seat``, which they need."""
    if not request.bot_seats:
        return 0
    if view_seat is None:
        raise bad_field("bot_seats", "needs view_seat: bot seats are bound into that seat's token")
    bots = 0
    for index, seat in enumerate(request.bot_seats):
        path = f"bot_seats[{index}]"
        cv.seat_from(seat, rules.players, path)
        if seat == view_seat:
            raise bad_field(path, f"seat {seat} is view_seat, the person's own seat: it cannot be a bot")
        if bots >> seat & 1:
            raise bad_field(path, f"seat {seat} is listed twice")
        bots |= 1 << seat
    return bots


def bot_levels_of(request: api.DealRequest, rules: Ruleset, view_seat: int | None, bots: int) -> bytes:
    """DealRequest.bot_levels as a token's level codes, one byte a seat (0: none named): bot
    seats, and ``view_seat`` itself (its BotMove and TimeoutMove level)."""
    codes = bytearray(MAX_SEATS)
    for index, entry in enumerate(request.bot_levels):
        path = f"bot_levels[{index}]"
        if view_seat is None:
            raise bad_field("bot_levels", "needs view_seat: bot levels are sealed into that seat's token")
        seat = cv.seat_from(entry.seat, rules.players, f"{path}.seat")
        if seat != view_seat and not bots >> seat & 1:
            raise bad_field(f"{path}.seat", f"seat {seat} is neither view_seat nor one of bot_seats")
        if codes[seat]:
            raise bad_field(f"{path}.seat", f"seat {seat} is listed twice")
        name = bot_level_from(entry.level, f"{path}.level") if entry.level.strip() else DEFAULT_LEVEL
        found = level_named(name)
        assert found is not None  # bot_level_from checked it
        codes[seat] = found.code
    return bytes(codes)


def playable_bots(request: api.PlayBotsRequest, game: Game) -> dict[int, tuple[str, int]]:
    """The seats PlayBots may play, each with its level and seed: a seat token's bot seats at the
    levels and with the seeds sealed at deal time (:func:`sealed_level`, :func:`sealed_seed`;
    ``bots`` must be empty), or for the host's token the seats ``bots`` lists."""
    players = game.ruleset.players
    if game.viewer >= 0:
        if not game.bots:
            raise PermissionDenied(
                f"game: this seat token is bound to seat {game.viewer} and names no bot seats, so PlayBots has "
                "no seat to play; deal with view_seat and bot_seats for a seat token that has them",
                reason="TOKEN_BOUND_TO_SEAT",
                metadata={"seat": str(game.viewer)},
            )
        if request.bots:
            raise bots_fixed("bots", "a bot seat's level or seed")
        return {
            seat: (sealed_level(game, seat) or DEFAULT_LEVEL, sealed_seed(game, seat))
            for seat in range(players)
            if game.bots >> seat & 1
        }
    playable: dict[int, tuple[str, int]] = {}
    listed = 0
    for index, entry in enumerate(request.bots):
        path = f"bots[{index}]"
        seat = cv.seat_from(entry.seat, players, f"{path}.seat")
        if listed >> seat & 1:
            raise bad_field(f"{path}.seat", f"seat {seat} is listed twice")
        listed |= 1 << seat
        playable[seat] = (bot_level_from(entry.level, f"{path}.level"), entry.seed)
    return playable
