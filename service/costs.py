"""Where a call runs: on the serving event loop, or in the heavy-call pool, by a bound on its cost
known before its work.

The aio server answers every call and stream of a process on one event loop, so a call that
computes for long on that loop delays every other one (issue 13); such calls run in the heavy-call
pool (:mod:`bigtwo.service.offload`), which is bounded and refuses at once when full. A call sent
there that costs microseconds only pays the hand-over and risks that refusal: an ordinary
``LegalMoves`` refused for load beside bots' searches (issue 31). So each call is placed by its own
bound:

* The bound is read from facts known cheaply: how many plays the hand in question can make at
  most (:func:`plays_bound`, from its rank and suit counts: a 13-card hand of one suit has about
  1,300, an ordinary one a few dozen), its cards, the bot level, the size of an audit or a match.
  A game given by token or log is loaded on the loop first (what an ``ApplyMove`` costs anyway) to
  read its seat to act; the handler is then given that game (:attr:`Placement.game`), not made to
  load it again.
* The figures are the worst cases measured with ``python -m bigtwo.tools.cost_bench``: CPU time of
  the handler and its answer's serializing, every memo emptied first (a hand, a token never seen),
  on the 2-core development machine; docs/PERFORMANCE.md has the table. The bench prints each case's
  time beside its bound: a bound is an upper bound of what was measured, or the bench says so.
* A call whose bound is at most :data:`LOOP_BUDGET_US` runs on the loop, any other in the pool.
  The calls of :data:`ALWAYS_ON_THE_LOOP` cost at most about the budget whatever the limits let
  through (the longest deal's log replayed is their worst) and always run on the loop; every unary
  RPC of the proto is in one of the two tables, or this module fails at import naming it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from math import comb
from typing import Any

from bigtwo.codec.rpcs import UNARY_RPCS, RpcTableError, check_covers
from bigtwo.engine import Ruleset, tables_for
from bigtwo.engine.bots import DEFAULT_LEVEL, LEVELS
from bigtwo.engine.rules import AfterPass, Switch
from bigtwo.engine.tables import RuleTables

from . import convert as cv
from .bot_turns import playable_bots, sealed_level
from .game import CallInfo, Game

LOOP_BUDGET_US = 2_500
"""A call whose bound is at most this many microseconds runs on the event loop. It is the worst case
of the calls that always ran there (the longest deal's log replayed and answered, cold: 1.8 ms for
146 moves measured, a few more moves at most in any deal): the calls placed here by their bound
stall the streams no longer than those always did."""

BOT_LEVELS = LEVELS
SEARCHING_LEVEL = "pro"
"""The level that searches: a decision takes its clock budget (about 50–250 ms), always the pool."""


class Where(enum.Enum):
    """Where a call runs."""

    LOOP = "loop"
    """On the serving event loop, as it arrives: no hand-over, never refused for load."""
    POOL = "pool"
    """In the heavy-call pool (:class:`~bigtwo.service.offload.Offload`), a bounded number at once."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one call runs, and why: its cost bound and the fact the bound was read from."""

    where: Where
    bound_us: int
    fact: str
    game: Game | None = None
    """The game loaded to place the call, for its handler on the loop (None when none was)."""


# -- the measured costs (µs of CPU; python -m bigtwo.tools.cost_bench) ----------------------------------

LIST_BASE_US = 300
LIST_PER_PLAY_US = 25
"""Listing a hand's plays (LegalMoves, NextHint's cycle): each play classified and written into the
answer, cold (one suit's 13 cards, 1,310 plays at most, took 22–25 ms; the worst of 30 random
13-card hands, 78 plays at most, 1.2–2.3 ms, in runs on a loaded machine)."""
SPLIT_FROM_CARDS = 13
SPLIT_BY_CARDS_US = (900, 1_600, 2_800, 5_000, 11_000, 37_000)
"""SplitHand's search over the plays of 13, 14, ... 18 cards, at its worst found (pairs along a
run; fours; random hands); fewer cards cost at most the 13-card figure."""
SPLIT_PER_PLAY_US = (16, 20, 25, 40, 55, 75)
"""SplitHand of a hand with very many plays (one suit's cards), per play, by cards as above: the
search grows faster than the plays listed."""
OBSERVE_US = 800
"""A bot's first decision in a call: the seat's observation, a token's history rebuilt."""
DECIDE_BASE_US: dict[str, int] = {"random": 200, "beginner": 200, "good": 900, "great": 900, "learned": 2_000}
DECIDE_PER_PLAY_US: dict[str, int] = {"random": 3, "beginner": 3, "good": 16, "great": 16, "learned": 40}
"""One decision of each non-searching level, and what it costs a play of the seat's hand: the
random and beginner levels list the legal moves, the good and great policies split the hand into
plans (a search over its plays). The learned level runs great's order (a move feature), then its
network over every legal move (numpy; p95 0.5 ms measured, and a process's first decision reads the
1 MB of weights), so it is never placed on the event loop."""
DECIDE_MORE_CARDS_US: dict[str, int] = {"random": 0, "beginner": 0, "good": 16_000, "great": 16_000, "learned": 16_000}
"""A good or great decision with more than 13 cards in hand (3-player deals, explicit hands): the
plan search grows with the cards as the split does (3–4 ms on real 3-player deals, 6–7 ms on 16
cards of fours)."""
PRO_US = 250_000
"""A pro decision at its default budget (BotMove's max_ms may ask up to 10 s)."""
_UNCOSTED = [
    level
    for level in BOT_LEVELS
    if level != SEARCHING_LEVEL
    and not all(level in table for table in (DECIDE_BASE_US, DECIDE_PER_PLAY_US, DECIDE_MORE_CARDS_US))
]
if _UNCOSTED:  # a level added to the registry (bigtwo.engine.bots.REGISTRY) needs its decision's cost here
    raise RuntimeError(
        f"costs: no decision cost for bot level {', '.join(_UNCOSTED)}: measure it (cost_bench) and add it"
    )
JUDGE_US = 300
"""PlayBots: applying a bot's move and writing its events, per move."""
AUDIT_BASE_US = 2_000
AUDIT_PER_KB_US = 300
"""AuditLog of a replay file: reading, checking the signature and re-running every deal (2.4 ms
for one deal, 28 ms for 100 deals in 118 kB)."""
AUDIT_GAME_LOG_US = 4_500
"""AuditLog of one deal's log (at most a deal's moves): its longest measured, 4.3 ms."""
SETTLE_BASE_US = 200
SETTLE_PER_DEAL_US = 11
"""SettleMatch, a deal recorded (1,000 deals took 11 ms)."""


# -- the facts ----------------------------------------------------------------------------------------


def plays_bound(hand: int, tables: RuleTables) -> int:
    """At most how many plays ``hand`` makes under ``tables``' rules, from its rank and suit counts
    (about 20 µs): singles, pairs, triples, fours; straights on the ruleset's rungs (every
    choice of suits), flushes, full houses and four-with-a-kicker. Overlaps (a straight flush is a
    straight and a flush; a full house's pair counted from its own rank) are counted in each, so
    the bound is never below the plays listed (tests/test_costs.py), and an ordinary hand's is
    within a few dozen of them."""
    counts = [(hand >> (4 * rank)) & 0xF for rank in range(13)]
    per_rank = [nibble.bit_count() for nibble in counts]
    cards = sum(per_rank)
    pairs = sum(comb(n, 2) for n in per_rank)
    triples = sum(comb(n, 3) for n in per_rank)
    fours = sum(1 for n in per_rank if n == 4)
    straights = 0
    for rung in tables.rungs:
        ways = 1
        for rank in rung.ranks:
            ways *= per_rank[rank]
        straights += ways
    suits = [sum(nibble >> suit & 1 for nibble in counts) for suit in range(4)]
    flushes = sum(comb(n, 5) for n in suits)
    return cards + pairs + triples + fours + straights + flushes + triples * pairs + fours * max(0, cards - 4)


def _list_us(plays: int) -> int:
    return LIST_BASE_US + LIST_PER_PLAY_US * plays


def _decide_us(level: str, hand: int, tables: RuleTables) -> int:
    """One decision of a non-searching ``level`` for ``hand``, its observation already read."""
    own = DECIDE_BASE_US[level] + DECIDE_PER_PLAY_US[level] * plays_bound(hand, tables)
    return max(own, DECIDE_MORE_CARDS_US[level]) if hand.bit_count() > 13 else own


def _placed(bound_us: int, fact: str, game: Game | None = None) -> Placement:
    if bound_us <= LOOP_BUDGET_US:
        return Placement(Where.LOOP, bound_us, fact, game)
    return Placement(Where.POOL, bound_us, fact)


def _level(text: str) -> str:
    return text.strip().lower()


# -- each bounded call ---------------------------------------------------------------------------------


def _to_act(core: Any, request: Any, info: CallInfo) -> tuple[Game, int]:
    game = core.games.load(request.game, "game", info)
    deal = game.deal
    return game, deal.hands[deal.to_act] if not deal.over else 0


def _dealt_plays(request: Any, core: Any) -> int | None:
    """For a game given by its log: the most plays any hand of its deal could make, read from the
    dealt cards without replaying a move (a hand later in the deal holds a part of one of them, and
    a part makes no play its whole could not). A replay on the loop costs up to the budget itself,
    so a call whose dealt hands already bound it over the budget goes to the pool unloaded. None for
    a token (cheap to load) or a log the loader should refuse (it names the field)."""
    game = request.game
    if game.WhichOneof("game") != "log":
        return None
    try:
        ruleset, hands = core.games.dealt_hands(game.log)
    except Exception:  # the handler's load refuses it, naming its field
        return None
    tables = tables_for(ruleset)
    return max((plays_bound(hand, tables) for hand in hands), default=0)


def _listing(request: Any, core: Any, info: CallInfo) -> Placement:
    """LegalMoves of a game's seat to act, or NextHint: both list the hand's plays."""
    dealt = _dealt_plays(request, core)
    if dealt is not None and _list_us(dealt) > LOOP_BUDGET_US:
        return _placed(_list_us(dealt), f"{dealt} plays dealt")
    game, hand = _to_act(core, request, info)
    plays = plays_bound(hand, game.deal.tables)
    return _placed(_list_us(plays), f"{plays} plays", game)


def _legal_moves(request: Any, core: Any, info: CallInfo) -> Placement:
    if request.WhichOneof("source") == "position":
        position = request.position
        hand = core.games.hand_of(position.hand, "position.hand")
        plays = plays_bound(hand, tables_for(cv.ruleset_from(position.ruleset, "position.ruleset")))
        return _placed(_list_us(plays), f"{plays} plays")
    return _listing(request, core, info)


def _next_hint(request: Any, core: Any, info: CallInfo) -> Placement:
    return _listing(request, core, info)


def _split_hand(request: Any, core: Any, info: CallInfo) -> Placement:
    hand = core.games.hand_of(request.hand, "hand")
    plays = plays_bound(hand, tables_for(cv.ruleset_from(request.ruleset, "ruleset")))
    cards = hand.bit_count()
    size = min(len(SPLIT_BY_CARDS_US) - 1, max(0, cards - SPLIT_FROM_CARDS))
    bound = max(SPLIT_BY_CARDS_US[size], SPLIT_PER_PLAY_US[size] * plays, _list_us(plays))
    return _placed(bound, f"{cards} cards, {plays} plays")


def _bot_turn(text: str, request: Any, core: Any, info: CallInfo, seat_default: str) -> Placement:
    """BotMove's or TimeoutMove's bot: the level asked for, or with a seat token and none asked the
    level its deal sealed for the seat (``seat_default`` when none was: "" is the timeout rule)."""
    level = _level(text)
    loaded = None
    if not level:
        loaded = _to_act(core, request, info)
        game = loaded[0]
        if game.viewer >= 0:
            level = sealed_level(game, game.viewer) or seat_default
        if not level:  # the timeout rule (a table lookup), or no level: refused by the handler
            return _placed(0, "no bot", game)
    if level not in DECIDE_BASE_US:  # pro searches; a level that is none is refused by the handler
        return _placed(PRO_US if level == SEARCHING_LEVEL else 0, level)
    game, hand = loaded or _to_act(core, request, info)
    bound = OBSERVE_US + _decide_us(level, hand, game.deal.tables)
    return _placed(bound, f"{level}, {hand.bit_count()} cards", game)


def _bot_move(request: Any, core: Any, info: CallInfo) -> Placement:
    return _bot_turn(request.level, request, core, info, DEFAULT_LEVEL)


def _timeout_move(request: Any, core: Any, info: CallInfo) -> Placement:
    if not request.bot_level and request.game.WhichOneof("game") != "state_token":
        return _placed(0, "no bot")  # a log is the host's: the timeout rule, a table lookup
    return _bot_turn(request.bot_level, request, core, info, "")


def turns_before_a_person(ruleset: Ruleset, bot_seats: int, players: int, most: int) -> int:
    """At most how many moves PlayBots makes before a seat that is no bot acts: one round, when
    some seat is a person's and every seat acts in its turn; else (bots only, or rules that skip a
    seat: out until the trick ends, auto-pass) up to ``most``."""
    everyone = (1 << players) - 1
    in_turn = ruleset.after_pass is AfterPass.MAY_PLAY_AGAIN and ruleset.auto_pass is Switch.OFF
    return players - 1 if bot_seats != everyone and in_turn else most


def _play_bots(request: Any, core: Any, info: CallInfo) -> Placement:
    game = core.games.load(request.game, "game", info)
    deal = game.deal
    seats = playable_bots(request, game)  # the handler's own check: its refusals, raised here
    levels = {level for level, _ in seats.values()}
    mask = sum(1 << seat for seat in seats)
    moves = turns_before_a_person(game.ruleset, mask, deal.players, core.limits.play_bots_moves)
    if SEARCHING_LEVEL in levels:
        return _placed(PRO_US * moves, f"{moves} moves, pro")
    decide = max((_decide_us(level, deal.hands[seat], deal.tables) for seat, (level, _) in seats.items()), default=0)
    return _placed(OBSERVE_US + moves * (decide + JUDGE_US), f"{moves} moves, {'/'.join(sorted(levels))}", game)


def _audit_log(request: Any, core: Any, info: CallInfo) -> Placement:
    if request.WhichOneof("source") == "replay_toml":
        kb = len(request.replay_toml) // 1000 + 1
        return _placed(AUDIT_BASE_US + AUDIT_PER_KB_US * kb, f"{kb} kB")
    return _placed(AUDIT_GAME_LOG_US, "one deal's log")


def _settle_match(request: Any, core: Any, info: CallInfo) -> Placement:
    deals = len(request.deals)
    return _placed(SETTLE_BASE_US + SETTLE_PER_DEAL_US * deals, f"{deals} deals")


BOUNDED: dict[str, Callable[[Any, Any, CallInfo], Placement]] = {
    "LegalMoves": _legal_moves,
    "NextHint": _next_hint,
    "SplitHand": _split_hand,
    "BotMove": _bot_move,
    "TimeoutMove": _timeout_move,
    "PlayBots": _play_bots,
    "AuditLog": _audit_log,
    "SettleMatch": _settle_match,
}
"""The calls whose cost within the limits can pass the budget, each with its bound."""
ALWAYS_ON_THE_LOOP = frozenset(
    {"ListPresets", "DescribeRuleset", "Deal", "ValidateMove", "ApplyMove", "NameCards", "ScoreDeal", "ReplayLog"}
)
"""The unary calls that need no bound: each costs at most about the budget whatever the limits let
through (the longest deal's log replayed is their worst)."""
check_covers([*BOUNDED, *ALWAYS_ON_THE_LOOP], "service/costs.py (BOUNDED or ALWAYS_ON_THE_LOOP)", UNARY_RPCS)
if not ALWAYS_ON_THE_LOOP.isdisjoint(BOUNDED):
    raise RpcTableError(
        f"service/costs.py: {sorted(ALWAYS_ON_THE_LOOP & BOUNDED.keys())} both bounded and always on the loop"
    )

ON_THE_LOOP = Placement(Where.LOOP, 0, "")


def place(method: str, request: Any, core: Any, info: CallInfo) -> Placement:
    """Where ``request`` of ``method`` runs. ``core`` (a :class:`~bigtwo.service.core.Core`) loads
    the game a bound needs and checks the hand; what it refuses is the call's error, as its handler
    would raise it."""
    bound = BOUNDED.get(method)
    return ON_THE_LOOP if bound is None else bound(request, core, info)


__all__ = [
    "ALWAYS_ON_THE_LOOP",
    "BOT_LEVELS",
    "BOUNDED",
    "LOOP_BUDGET_US",
    "Placement",
    "Where",
    "place",
    "plays_bound",
    "turns_before_a_person",
]
