"""The exact endgame search of ``pro`` (engine/bots/endgame.py) against the engine: its moves are the
deal's legal moves, its values are those of an independent search over real ``Deal`` objects, and
the line it expects, played in a real deal, scores what it said. Plus known tiny endgames, the node
budget, determinism, and ``pro`` using it."""

from __future__ import annotations

import random

import pytest
from bigtwo.engine import Deal, DealState, Ruleset, observe
from bigtwo.engine.bots import Budget, ProBot
from bigtwo.engine.bots.endgame import EndgameSolver, OutOfNodes, Position, line_of, position_of
from bigtwo.engine.bots.pro import utility
from bigtwo.engine.cards import parse_cards
from bigtwo.engine.generate import CARD_MASK, MASK_BITS
from position_support import trick_start

FULL_DECK = (1 << 52) - 1

RULESETS: dict[str, dict[str, object]] = {
    "classic": {"preset": "classic"},
    "web": {"preset": "web"},
    "hong-kong": {"preset": "hong-kong"},
    "hong-kong-strict": {"preset": "hong-kong-strict"},
    "taiwan": {"preset": "taiwan"},
    "pusoy-dos": {"preset": "pusoy-dos"},
    "3 players": {"preset": "classic", "players": 3},
    "2 players": {"preset": "classic", "players": 2},
    "2 players, hong-kong, 17 cards": {"preset": "hong-kong", "players": 2, "cards_each": 17},
    "3 players, out until the trick ends, auto-pass": {
        "preset": "classic",
        "players": 3,
        "after_pass": "out-until-trick-ends",
        "auto_pass": "on",
    },
    "out until the trick ends, twos double, harsh": {
        "preset": "classic",
        "after_pass": "out-until-trick-ends",
        "twos_double": "on",
        "penalty": "harsh",
    },
}


def mask_of(text: str) -> int:
    out = 0
    for card in parse_cards(text):
        out |= card.bit
    return out


def random_deal(ruleset: Ruleset, rng: random.Random, most: int) -> Deal:
    """A small position: 1..``most`` cards a seat, the rest played (with two players a few cards
    stay undealt), then a few random moves so that some positions are in mid-trick."""
    deck = list(range(52))
    rng.shuffle(deck)
    hands = []
    for _ in range(ruleset.players):
        size = rng.randint(1, most)
        hand = 0
        for index in deck[:size]:
            hand |= 1 << index
        del deck[:size]
        hands.append(hand)
    undealt = 0
    if ruleset.players == 2:
        for index in deck[: rng.randint(0, 8)]:
            undealt |= 1 << index
    held = 0
    for hand in hands:
        held |= hand
    seat = rng.randrange(ruleset.players)
    state = DealState(
        hands=tuple(hands),
        to_act=seat,
        leader=seat,
        table_mask=0,
        table_kind=None,
        table_key=-1,
        last_player=-1,
        passes=0,
        passed=0,
        played=FULL_DECK & ~held & ~undealt,
        opening_card=-1,
        winner=-1,
        moves_made=0,
        deal_number=1,
        start_sizes=(),
    )
    deal = Deal.from_state(ruleset, state)
    for _ in range(rng.randint(0, 3)):
        moves = deal.legal_moves()
        if deal.over or not moves:
            break
        deal.do(rng.choice(moves))
    return deal


def legal_masks(deal: Deal) -> list[int]:
    return [m.mask for m in deal.legal_moves()]


def reference_values(deal: Deal, memo: dict[tuple[object, ...], tuple[float, ...]]) -> tuple[float, ...]:
    """The same max^n search written on real deals (clone, legal_moves, play, the engine's scoring):
    a seat that can go out does, plays of more cards first and lowest first, pass last, the first
    best move wins a tie. No cut-off: the solver's must not change a value."""
    ruleset = deal.ruleset
    players = ruleset.players
    if deal.over:
        return tuple(utility(ruleset, deal, seat) for seat in range(players))
    table = deal.table
    key = (tuple(deal.hands), deal.to_act, table.mask if table else 0, deal.last_player if table else -1, deal.passed)
    if key in memo:
        return memo[key]
    seat = deal.to_act
    plays = sorted(deal.legal_encoded(), key=lambda e: (-(e & CARD_MASK).bit_count(), e >> MASK_BITS, e))
    moves = [e & CARD_MASK for e in plays]
    if deal.hands[seat] in moves:
        moves = [deal.hands[seat]]
    elif table is not None:
        moves.append(0)
    best: tuple[float, ...] | None = None
    for mask in moves:
        child = deal.clone()
        if mask:
            child.play_mask(seat, mask)
        else:
            child.pass_turn(seat)
        values = reference_values(child, memo)
        if best is None or values[seat] > best[seat]:
            best = values
    assert best is not None
    memo[key] = best
    return best


def outcome(deal: Deal) -> tuple[float, ...]:
    return tuple(utility(deal.ruleset, deal, seat) for seat in range(deal.players))


@pytest.mark.parametrize("name", list(RULESETS))
def test_solver_matches_the_engine(name: str) -> None:
    ruleset = Ruleset.from_mapping(RULESETS[name])
    rng = random.Random(f"endgame/{name}")
    checked = 0
    while checked < 20:
        deal = random_deal(ruleset, rng, most=4 if ruleset.players == 2 else 3)
        position = position_of(deal)
        if position is None:
            continue
        solver = EndgameSolver(ruleset, node_budget=200_000)
        # Its moves are the deal's legal moves, along a random walk to the end.
        walk = deal.clone()
        while not walk.over:
            walk_position = position_of(walk)
            assert walk_position is not None
            assert sorted(solver.moves(walk_position)) == sorted(legal_masks(walk))
            walk.do(rng.choice(walk.legal_moves()))
        # Its value is the reference search's, for the position and after each move.
        values = solver.solve(position)
        reference: dict[tuple[object, ...], tuple[float, ...]] = {}
        assert values == reference_values(deal, reference)
        masks = solver.moves(position)
        after = solver.candidate_values(position, masks)
        assert after is not None
        for mask, value in zip(masks, after, strict=True):
            child = deal.clone()
            if mask:
                child.play_mask(deal.to_act, mask)
            else:
                child.pass_turn(deal.to_act)
            assert value == reference_values(child, reference)[deal.to_act]
        # The line it expects, played in the real deal, ends with the value it announced.
        played = deal.clone()
        for seat, mask in line_of(solver, deal):
            if mask:
                played.play_mask(seat, mask)
            else:
                played.pass_turn(seat)
        assert played.over
        assert outcome(played) == values
        checked += 1


def two_player_endgame(ruleset: Ruleset, mine: str, theirs: str, leader: int = 0) -> Deal:
    hands = (mask_of(mine), mask_of(theirs))
    return trick_start(ruleset, hands, leader, played=FULL_DECK & ~hands[0] & ~hands[1])


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"preset": "classic"}, [0.0, -1.0]),
        ({"preset": "classic", "twos_double": "on"}, [0.0, -2.0]),
        ({"preset": "web"}, [1.0, -1.0]),
        ({"preset": "taiwan"}, [1.0, 0.0]),
    ],
)
def test_cashing_the_master_first_is_a_forced_win(options: dict[str, object], expected: list[float]) -> None:
    # Seat 0 holds 2♠ and 3♦, seat 1 one ace: 2♠ first wins the trick and 3♦ goes out; 3♦ first
    # lets the ace go out, and seat 0 pays for the 2 it still holds.
    ruleset = Ruleset.from_mapping({**options, "players": 2})
    deal = two_player_endgame(ruleset, "2S 3D", "AS" if ruleset.suit_order.value == "DCHS" else "AH")
    position = position_of(deal)
    assert position is not None
    solver = EndgameSolver(ruleset)
    assert solver.candidate_values(position, [mask_of("2S"), mask_of("3D")]) == expected
    assert solver.best_move(position) == mask_of("2S")


@pytest.mark.parametrize(("preset", "expected"), [("hong-kong", 0.0), ("hong-kong-strict", -1.0)])
def test_a_lone_two_goes_out_unless_the_rules_forbid_it(preset: str, expected: float) -> None:
    # Seat 1 must lead its highest single (9♥: seat 0 holds one card); seat 0 holds a lone 2♠.
    # hong-kong: it goes out on the 2. hong-kong-strict: it may not, passes, and seat 1 (9♣, then
    # 5♦ or the other way round under the same rule) goes out first.
    ruleset = Ruleset.from_mapping({"preset": preset, "players": 2})
    deal = two_player_endgame(ruleset, "2S", "5D 9H 9C", leader=1)
    deal.play_mask(1, mask_of("9H"))
    position = position_of(deal)
    assert position is not None
    solver = EndgameSolver(ruleset)
    assert solver.moves(position) == ([mask_of("2S"), 0] if expected == 0.0 else [0])
    values = solver.solve(position)
    assert values is not None
    assert values[0] == expected


def test_a_single_into_a_seat_with_one_card_loses() -> None:
    # 4 players: seat 1 holds one 5♦. Seat 0 (2♠ 4♦ 4♣) wins by leading 2♠ or the pair of 4s
    # (nobody can follow either, then the rest goes out); a single 4 lets the 5♦ go out at once.
    ruleset = Ruleset.from_mapping({"preset": "classic"})
    hands = (mask_of("2S 4D 4C"), mask_of("5D"), mask_of("3H 7C"), mask_of("3S 8C"))
    held = 0
    for hand in hands:
        held |= hand
    state = DealState(
        hands=hands,
        to_act=0,
        leader=0,
        table_mask=0,
        table_kind=None,
        table_key=-1,
        last_player=-1,
        passes=0,
        passed=0,
        played=FULL_DECK & ~held,
        opening_card=-1,
        winner=-1,
        moves_made=0,
        deal_number=1,
        start_sizes=(),
    )
    position = position_of(Deal.from_state(ruleset, state))
    assert position is not None
    solver = EndgameSolver(ruleset)
    candidates = [mask_of("2S"), mask_of("4D 4C"), mask_of("4D"), mask_of("4C")]
    assert solver.candidate_values(position, candidates) == [0.0, 0.0, -2.0, -2.0]
    assert solver.best_move(position) == mask_of("4D 4C")  # more cards first among equals


def test_the_node_budget_is_respected() -> None:
    ruleset = Ruleset.from_mapping({"preset": "classic"})
    rng = random.Random("endgame/budget")
    deal = random_deal(ruleset, rng, most=6)
    while position_of(deal) is None or sum(deal.cards_left()) < 16:
        deal = random_deal(ruleset, rng, most=6)
    position = position_of(deal)
    assert position is not None
    small = EndgameSolver(ruleset, node_budget=25)
    assert small.solve(position) is None
    assert small.nodes == 25
    assert small.candidate_values(position, small.moves(position)) is None
    assert small.nodes <= 25
    with pytest.raises(OutOfNodes):
        line_of(small, deal)
    big = EndgameSolver(ruleset, node_budget=1_000_000)
    assert big.solve(position) is not None
    assert big.nodes > 25


def test_deterministic_and_independent_of_what_was_solved_before() -> None:
    ruleset = Ruleset.from_mapping({"preset": "hong-kong"})
    rng = random.Random("endgame/determinism")
    positions: list[Position] = []
    while len(positions) < 12:
        found = position_of(random_deal(ruleset, rng, most=3))
        if found is not None:
            positions.append(found)
    shared = EndgameSolver(ruleset, node_budget=200_000)
    together = [(shared.solve(p), shared.best_move(p)) for p in positions]
    alone = []
    for p in reversed(positions):
        fresh = EndgameSolver(ruleset, node_budget=200_000)
        alone.append((fresh.solve(p), fresh.best_move(p)))
    assert together == alone[::-1]


def test_a_tiny_memo_gives_the_same_values() -> None:
    ruleset = Ruleset.from_mapping({"preset": "web"})
    rng = random.Random("endgame/memo")
    for _ in range(10):
        position = position_of(random_deal(ruleset, rng, most=3))
        if position is None:
            continue
        roomy = EndgameSolver(ruleset, node_budget=10**6)
        cramped = EndgameSolver(ruleset, node_budget=10**6, memo_limit=8)
        assert roomy.solve(position) == cramped.solve(position)


def test_pro_solves_small_worlds_exactly() -> None:
    # Everything but the two hands has been played: seat 0 can tell seat 1's cards, every world is
    # the true one, and pro must pick a move the search proves best.
    ruleset = Ruleset.from_mapping({"preset": "classic", "players": 2})
    deal = two_player_endgame(ruleset, "2S 3D 3C 6D", "AS 9H 9C")
    position = position_of(deal)
    assert position is not None
    solver = EndgameSolver(ruleset)
    moves = solver.moves(position)
    values = solver.candidate_values(position, moves)
    assert values is not None
    best = {mask for mask, value in zip(moves, values, strict=True) if value == max(values)}
    assert best != set(moves)
    budget = Budget(simulations=40, steps=None, candidates=len(moves))
    pro = ProBot(budget)
    first = pro.choose(observe(deal, 0), ruleset, random.Random(3))
    assert pro.last_solved > 0
    assert pro.last_rollouts == 0
    assert first.mask in best
    again = ProBot(budget).choose(observe(deal, 0), ruleset, random.Random(3))
    assert again == first
    rolled = ProBot(Budget(simulations=40, steps=None, candidates=4, endgame_cards=0))
    rolled.choose(observe(deal, 0), ruleset, random.Random(3))
    assert rolled.last_solved == 0
    assert rolled.last_rollouts > 0
