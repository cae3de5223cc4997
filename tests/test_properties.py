"""Property tests: random legal play to the end of a deal, under every preset and random mixes of
RULES.md's options, checking the invariants of the engine at every move.

* cards are conserved: hands + played == dealt, hands and played disjoint;
* every listed legal move is accepted by ``verify``; random subsets of the hand that are not
  listed are refused with a RULES.md reason, and a refused move changes nothing;
* replaying ``deal.events`` with ``Deal.replay`` rebuilds an equal state, and the state survives a
  round trip through ``Deal.from_state``; so does replaying the move texts from scratch;
* a timed-out turn's move is always accepted;
* the deal always ends; its scores follow the settlement its DealEnded holds (zero-sum scores
  sum to 0), and a deal resumed from its final state settles the same.
"""

from __future__ import annotations

import json
import random
from typing import Any

from bigtwo.engine import (
    PRESET_NAMES,
    Deal,
    DealCode,
    DealContext,
    DealEnded,
    Move,
    Reason,
    Refusal,
    Ruleset,
    RulesetError,
    deal_from_code,
    preset,
    timeout_move,
)
from bigtwo.engine.generate import CARD_MASK
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

OPTION_VALUES: dict[str, list[Any]] = {
    "players": [2, 3, 4],
    "cards_each": [13, 17],
    "suit_order": ["DCHS", "CDHS", "CSHD"],
    "straights": ["ace-two-low", "twos-high", "taiwan", "no-twos", ["34567/7", "A2345/A", "TJQKA/T", "23456/2"]],
    "flush": ["suit-first", "rank-first", "none"],
    "triples": ["allowed", "only-in-full-house"],
    "opening": ["lowest-card-every-deal", "winner-leads"],
    "two_player_start": ["lowest-dealt-card", "reshuffle-until-lowest"],
    "after_pass": ["may-play-again", "out-until-trick-ends"],
    "single_two_last": ["allowed", "forbidden"],
    "next_has_one_card": ["free", "highest-single"],
    "dragon": ["off", "on"],
    "auto_pass": ["off", "on"],
    "penalty": ["tiered", "harsh", "flat", "none"],
    "twos_double": ["off", "on"],
    "settlement": ["penalty", "zero-sum"],
    "match": ["deals:4", "deals:8", "target:50", "single", "open"],
}


def _build(options: dict[str, Any]) -> Ruleset:
    if options.get("players", preset(options["preset"]).players) == 4:
        options.pop("cards_each", None)  # 17 cards each is for 2 or 3 players only
    return Ruleset.from_mapping(options)


option_mixes = st.fixed_dictionaries(
    {"preset": st.sampled_from(PRESET_NAMES)},
    optional={name: st.sampled_from(values) for name, values in OPTION_VALUES.items()},
).map(_build)

seeds = st.integers(min_value=0, max_value=(1 << 60) - 1)
rng_seeds = st.integers(min_value=0, max_value=2**32 - 1)
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALID_REASONS = set(Reason)


# -- the checks ------------------------------------------------------------------------------------


def check_conservation(deal: Deal, dealt: int) -> None:
    union = deal.played
    total = deal.played.bit_count()
    for hand in deal.hands:
        assert not union & hand, "a card is in two places"
        union |= hand
        total += hand.bit_count()
    assert union == dealt and total == dealt.bit_count(), "hands + played == dealt"


def check_moves(deal: Deal, rng: random.Random) -> list[Move]:
    """Every listed move is accepted; random unlisted subsets are refused with a reason."""
    seat = deal.to_act
    moves = deal.legal_moves()
    assert moves, f"seat {seat} has no legal move"
    listed = set()
    for move in moves:
        assert move.seat == seat
        deal.verify(move)  # raises if refused
        listed.add(0 if move.is_pass else move.mask)
    assert (0 in listed) == (deal.table is not None), "pass is legal exactly when following"
    hand_cards = [1 << i for i in range(52) if deal.hands[seat] >> i & 1]
    before = deal.state()
    for _ in range(8):
        size = rng.choice((0, 1, 2, 2, 3, 4, 5, 5, 6))
        if size > len(hand_cards):
            continue
        mask = sum(rng.sample(hand_cards, size))
        move = Move.from_mask(seat, mask) if mask else Move(seat, (), False)
        if mask and mask in listed:
            assert deal.can(move)
            continue
        try:
            deal.do(move)
        except Refusal as refusal:
            assert refusal.reason in VALID_REASONS
        else:
            raise AssertionError(f"unlisted move {move} was accepted")
        assert deal.state() == before, "a refused move changes nothing"
    # A card the seat does not hold, and a seat that is not to act.
    foreign = ((1 << 52) - 1) & ~deal.hands[seat]
    if foreign:
        card = 1 << rng.choice([i for i in range(52) if foreign >> i & 1])
        try:
            deal.verify(Move.from_mask(seat, card))
        except Refusal as refusal:
            assert refusal.reason is Reason.NOT_IN_HAND
        else:
            raise AssertionError("a card not in hand was accepted")
    other = (seat + 1) % deal.players
    try:
        deal.verify(Move.pass_(other))
    except Refusal as refusal:
        assert refusal.reason is Reason.NOT_YOUR_TURN
    return moves


def check_rebuilds(deal: Deal, ruleset: Ruleset) -> None:
    state = deal.state()
    assert Deal.replay(ruleset, deal.events).state() == state
    resumed = Deal.from_state(ruleset, state)
    assert resumed.state() == state
    assert [str(m) for m in resumed.legal_moves()] == [str(m) for m in deal.legal_moves()]


def check_end(deal: Deal, ruleset: Ruleset) -> None:
    assert deal.over and deal.legal_moves() == []
    ended = [event for event in deal.events if isinstance(event, DealEnded)]
    assert len(ended) == 1 and ended[0].winner == deal.winner
    assert ended[0].cards_left == deal.cards_left()
    assert ended[0].settlement == deal.settlement() == Deal.from_state(ruleset, deal.state()).settlement()
    by_dragon = ended[0].by_dragon
    assert by_dragon or deal.cards_left()[deal.winner] == 0
    scores = deal.scores
    assert len(scores) == ruleset.players
    if ruleset.settlement.value == "zero-sum":
        assert sum(scores) == 0
        assert scores[deal.winner] >= 0 and all(s <= 0 for i, s in enumerate(scores) if i != deal.winner)
    else:
        assert scores[deal.winner] == 0 and all(s >= 0 for s in scores)
    if ruleset.penalty.value == "none":
        assert all(s == 0 for s in scores)
    else:
        assert all(s != 0 for i, s in enumerate(scores) if i != deal.winner), "every loser holds cards"


def play_random_deal(ruleset: Ruleset, code_seed: int, rng_seed: int, context: DealContext | None = None) -> Deal:
    rng = random.Random(rng_seed)
    dealt = deal_from_code(DealCode(code_seed), ruleset)
    deal = Deal.start(ruleset, dealt, context)
    if context is not None and not deal.over:
        winner_leads = (
            ruleset.opening.value == "winner-leads"
            and context.deal_number > 1
            and context.previous_winner is not None
            and context.previous_winner < ruleset.players
            and context.previous_winner not in context.empty_seats
        )
        if winner_leads:
            assert deal.to_act == context.previous_winner and deal.opening_card == -1
        else:
            assert deal.opening_card >= 0 and deal.hands[deal.to_act] >> deal.opening_card & 1
    texts: list[str] = []
    limit = 2 * 52 * ruleset.players  # every trick plays a card: no deal lasts longer
    while not deal.over:
        assert len(texts) < limit, "the deal did not end"
        check_conservation(deal, dealt.dealt)
        check_rebuilds(deal, ruleset)
        assert deal.can(timeout_move(deal)), "a timed-out turn makes a legal move"
        move = rng.choice(check_moves(deal, rng))
        deal.do(move)
        texts.append(str(move))
    check_conservation(deal, dealt.dealt)
    check_rebuilds(deal, ruleset)
    check_end(deal, ruleset)
    # The logged deal replays from scratch through move texts (a service verifying a client's log).
    again = Deal.start(ruleset, dealt, context)
    for text in texts:
        again.do_text(again.to_act, text)
    assert again.state() == deal.state() and again.events == deal.events
    return deal


# -- the properties --------------------------------------------------------------------------------


contexts = st.builds(
    DealContext,
    deal_number=st.integers(min_value=1, max_value=8),
    previous_winner=st.none() | st.integers(min_value=0, max_value=3),
    empty_seats=st.frozensets(st.integers(min_value=0, max_value=3), max_size=2),
)


@SETTINGS
@given(ruleset=option_mixes, code_seed=seeds, rng_seed=rng_seeds, context=st.none() | contexts)
def test_random_option_mixes_play_out_legally(
    ruleset: Ruleset, code_seed: int, rng_seed: int, context: DealContext | None
) -> None:
    play_random_deal(ruleset, code_seed, rng_seed, context)


@settings(max_examples=8, deadline=None)
@given(code_seed=seeds, rng_seed=rng_seeds, name=st.sampled_from(PRESET_NAMES))
def test_presets_play_out_legally(code_seed: int, rng_seed: int, name: str) -> None:
    play_random_deal(preset(name), code_seed, rng_seed)


def test_every_preset_plays_out_legally() -> None:
    """Each preset at least a few times, whatever hypothesis draws."""
    for index, name in enumerate(PRESET_NAMES):
        for k in range(10):
            play_random_deal(preset(name), 1000 * index + k, k)


@SETTINGS
@given(ruleset=option_mixes, code_seed=seeds)
def test_legal_encoded_matches_legal_moves(ruleset: Ruleset, code_seed: int) -> None:
    deal = Deal.start(ruleset, deal_from_code(DealCode(code_seed), ruleset))
    encoded = deal.legal_encoded()
    assert len(set(encoded)) == len(encoded)
    order = [((code & CARD_MASK).bit_count(), code) for code in encoded]
    assert order == sorted(order), "sorted by size, then strength"
    plays = [m for m in deal.legal_moves() if not m.is_pass]
    assert [code & CARD_MASK for code in encoded] == [m.mask for m in plays]


@SETTINGS
@given(ruleset=option_mixes, code_seed=seeds)
def test_dealing_is_deterministic_and_sized(ruleset: Ruleset, code_seed: int) -> None:
    code = DealCode(code_seed)
    dealt = deal_from_code(code, ruleset)
    assert deal_from_code(DealCode.parse(str(code)), ruleset) == dealt
    sizes = sorted(hand.bit_count() for hand in dealt.hands)
    if ruleset.players == 3:
        assert sizes == [17, 17, 18]
    else:
        assert sizes == [ruleset.hand_size] * ruleset.players
    deal = Deal.start(ruleset, dealt)
    if not deal.over and deal.opening_card >= 0:
        assert deal.hands[deal.to_act] >> deal.opening_card & 1


@SETTINGS
@given(ruleset=option_mixes)
def test_ruleset_round_trips_through_mapping_json_and_toml(ruleset: Ruleset) -> None:
    assert Ruleset.from_mapping(ruleset.to_mapping()) == ruleset
    assert Ruleset.from_json(json.dumps(ruleset.to_mapping())) == ruleset
    assert Ruleset.from_toml(ruleset.to_toml()) == ruleset
    assert Ruleset.from_mapping({**ruleset.to_mapping(), "preset": "classic"}).fingerprint == ruleset.fingerprint


@SETTINGS
@given(name=st.sampled_from(sorted(OPTION_VALUES)), junk=st.text(max_size=10))
def test_unknown_values_are_always_refused(name: str, junk: str) -> None:
    value = "zz" + junk  # no option value starts with "zz"
    try:
        Ruleset.from_mapping({name: value})
    except RulesetError as exc:
        assert name in str(exc)
    else:
        raise AssertionError(f"{name}={value!r} was accepted")
