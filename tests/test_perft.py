"""Perft-style checks of the move generator (bigtwo.engine.generate) against an independent
brute-force enumerator: every subset of the hand, judged one by one with ``check_beats`` (the same
judgement a player's move gets), counted when accepted.

The generator builds plays by construction (nibble patterns, ladder rungs, suit runs) and computes
their keys inline, so agreeing with the brute force on the exact set of plays *and* their keys, on
many hands, under every preset and random option mixes, is the strongest check it gets.
"""

from __future__ import annotations

import itertools
import random
from itertools import combinations
from typing import Any

import pytest
from bigtwo.engine import (
    PRESET_NAMES,
    Deal,
    DealCode,
    Move,
    Play,
    Refusal,
    Ruleset,
    check_beats,
    classify,
    deal_from_code,
    explicit_deal,
    parse_mask,
    preset,
    tables_for,
)
from bigtwo.engine.generate import CARD_MASK, MASK_BITS, all_plays, can_beat, plays_of_size

HAND = "3D 4C 5H 6S 7D 8D 8C 9H TS JD JC QH 2S"
FULL_DECK = (1 << 52) - 1


# -- the independent enumerator --------------------------------------------------------------------


def bits_of(mask: int) -> list[int]:
    return [1 << index for index in range(52) if mask >> index & 1]


def brute_force(
    hand: int, table: Play | None, ruleset: Ruleset, sizes: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
) -> dict[int, int]:
    """{mask: key} of every subset of ``hand`` (of the given sizes) that ``check_beats`` accepts."""
    tables = tables_for(ruleset)
    cards = bits_of(hand)
    accepted: dict[int, int] = {}
    for size in sizes:
        for combo in combinations(cards, size):
            mask = sum(combo)
            try:
                play = check_beats(mask, table, tables)
            except Refusal:
                continue
            accepted[mask] = play.key
    return accepted


def generated(hand: int, table: Play | None, ruleset: Ruleset) -> dict[int, int]:
    tables = tables_for(ruleset)
    encoded = all_plays(hand, tables) if table is None else plays_of_size(hand, table.size, tables, table.key)
    out = {code & CARD_MASK: code >> MASK_BITS for code in encoded}
    assert len(out) == len(encoded), "the generator lists a play twice"
    return out


def assert_same(hand: int, table: Play | None, ruleset: Ruleset) -> int:
    sizes = (0, 1, 2, 3, 4, 5) if table is None else (table.size,)
    expected = brute_force(hand, table, ruleset, sizes)
    got = generated(hand, table, ruleset)
    if got != expected:
        from bigtwo.engine import mask_text

        missing = [mask_text(m) for m in expected.keys() - got.keys()]
        extra = [mask_text(m) for m in got.keys() - expected.keys()]
        wrong_key = [mask_text(m) for m in expected.keys() & got.keys() if expected[m] != got[m]]
        pytest.fail(
            f"hand {mask_text(hand)}, table {table.text() if table else None}, rules {ruleset.overrides()} "
            f"({ruleset.preset}): missing {missing[:5]}, extra {extra[:5]}, wrong key {wrong_key[:5]}"
        )
    return len(got)


# -- fixed counts ------------------------------------------------------------------------------------


def test_bench_hand_has_31_plays_under_classic() -> None:
    """13 singles + 2 pairs (8s, Js) + 16 straights (23456 included under ace-two-low)."""
    hand = parse_mask(HAND)
    classic = preset("classic")
    assert len(all_plays(hand, tables_for(classic))) == 31
    assert len(brute_force(hand, None, classic)) == 31


def test_bench_hand_has_30_plays_without_twos_in_straights() -> None:
    no_twos = Ruleset.from_mapping({"straights": "no-twos"})
    hand = parse_mask(HAND)
    assert len(all_plays(hand, tables_for(no_twos))) == 30
    assert len(brute_force(hand, None, no_twos)) == 30


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_bench_hand_counts_under_every_preset(name: str) -> None:
    # Every preset's ladder includes 23456 and the hand holds no flush, triple or four.
    assert assert_same(parse_mask(HAND), None, preset(name)) == 31


@pytest.mark.parametrize(
    ("table", "ruleset", "count"),
    [
        ("8S", {}, 6),  # 9H TS JD JC QH 2S
        ("7S 7H", {}, 2),  # 8D 8C, JD JC
        ("9S 9D", {}, 1),  # JD JC
        ("3H 4S 5D 6C 7H", {}, 14),  # 45678 ×2, 56789 ×2, 6789T ×2, 789TJ ×4, 89TJQ ×4 (34567 to 7♦ is lower)
        ("3H 4S 5D 6C 7H", {"preset": "web"}, 15),  # ... and 23456, above TJQKA under twos-high
        ("3H 4S 5D 6C 7H", {"preset": "taiwan"}, 15),  # taiwan: 23456 highest too
        ("3H 4S 5D 6C 7H", {"straights": "no-twos"}, 14),
        ("3C 5C 7C 9C JC", {}, 0),  # a flush: no straight beats it
        ("3D 3C 3H", {}, 0),
        ("2H", {}, 1),  # only 2S
    ],
)
def test_bench_hand_following_counts(table: str, ruleset: dict[str, Any], count: int) -> None:
    rules = Ruleset.from_mapping(ruleset)
    table_play = classify(table, rules)
    assert assert_same(parse_mask(HAND), table_play, rules) == count


# -- random hands under every preset and random option mixes -----------------------------------------

MIXES: list[dict[str, Any]] = [
    {"straights": "no-twos", "flush": "rank-first", "suit_order": "CDHS"},
    {"straights": "taiwan", "flush": "none", "triples": "only-in-full-house"},
    {"straights": "twos-high", "flush": "suit-first", "suit_order": "CSHD", "triples": "only-in-full-house"},
    {"straights": ["34567/7", "A2345/A", "TJQKA/T", "23456/4"], "flush": "rank-first"},
    {"preset": "taiwan", "straights": "no-twos", "suit_order": "CSHD"},
    {"preset": "hong-kong", "straights": "ace-two-low", "flush": "none"},
]
RULESETS = [(name, preset(name)) for name in PRESET_NAMES] + [
    (f"mix{index}", Ruleset.from_mapping(mix)) for index, mix in enumerate(MIXES)
]


def random_hand(rng: random.Random, shape: str) -> int:
    deck = list(range(52))
    if shape == "uniform13":
        return sum(1 << i for i in rng.sample(deck, 13))
    if shape == "uniform17":
        return sum(1 << i for i in rng.sample(deck, 17))
    if shape == "clustered":  # few ranks: pairs, triples, fours, full houses
        ranks = rng.sample(range(13), 5)
        pool = [rank * 4 + suit for rank in ranks for suit in range(4)]
        return sum(1 << i for i in rng.sample(pool, 13))
    if shape == "suited":  # one long suit: flushes and straight flushes
        suit = rng.randrange(4)
        long = [rank * 4 + suit for rank in rng.sample(range(13), 9)]
        rest = [i for i in deck if i % 4 != suit]
        return sum(1 << i for i in long + rng.sample(rest, 4))
    if shape == "runs":  # consecutive ranks, every suit: straights on every rung
        start = rng.randrange(-1, 9)
        ranks = [(start + k) % 13 for k in range(6)]
        pool = [rank * 4 + suit for rank in ranks for suit in range(4)]
        return sum(1 << i for i in rng.sample(pool, 13))
    size = rng.randrange(1, 8)  # "small": late in a deal
    return sum(1 << i for i in rng.sample(deck, size))


SHAPES = ("uniform13", "uniform17", "clustered", "suited", "runs", "small")


@pytest.mark.parametrize(("label", "ruleset"), RULESETS, ids=[label for label, _ in RULESETS])
def test_generator_matches_brute_force_on_random_hands(label: str, ruleset: Ruleset) -> None:
    rng = random.Random(f"perft-{label}")
    tables = tables_for(ruleset)
    for round_index in range(2):
        for shape in SHAPES:
            hand = random_hand(rng, shape)
            assert_same(hand, None, ruleset)
            # Following: tables made from the other cards (any size), and from the hand itself
            # (an equal key must not count as beating).
            others = all_plays(FULL_DECK & ~hand, tables)
            own = all_plays(hand, tables)
            candidates = [rng.choice(others) for _ in range(3)] + ([rng.choice(own)] if own else [])
            for code in candidates:
                table = classify(code & CARD_MASK, ruleset)
                assert_same(hand, table, ruleset)
        del round_index


@pytest.mark.parametrize(("label", "ruleset"), RULESETS, ids=[label for label, _ in RULESETS])
def test_generator_matches_brute_force_on_every_five_card_class(label: str, ruleset: Ruleset) -> None:
    """Tables of each five-card class against hands rich in five-card hands."""
    rng = random.Random(f"fives-{label}")
    tables = tables_for(ruleset)
    for _ in range(6):
        hand = random_hand(rng, rng.choice(("clustered", "suited", "runs")))
        fives = [code for code in all_plays(FULL_DECK & ~hand, tables) if (code & CARD_MASK).bit_count() == 5]
        by_class: dict[str, list[int]] = {}
        for code in fives:
            by_class.setdefault(classify(code & CARD_MASK, ruleset).kind.value, []).append(code)
        for codes in by_class.values():
            table = classify(rng.choice(codes) & CARD_MASK, ruleset)
            assert_same(hand, table, ruleset)


# -- can_beat (auto-pass) against the generator -------------------------------------------------------


@pytest.mark.parametrize(("label", "ruleset"), RULESETS, ids=[label for label, _ in RULESETS])
def test_can_beat_agrees_with_the_generator(label: str, ruleset: Ruleset) -> None:
    """``can_beat(pool, size, key)`` (auto-pass) is true exactly when the generator finds a play."""
    rng = random.Random(f"can-beat-{label}")
    tables = tables_for(ruleset)
    every_play = all_plays(FULL_DECK, tables)
    for _ in range(80):
        pool = random_hand(rng, rng.choice(SHAPES))
        if rng.random() < 0.3:  # late in a deal: most of the deck is unplayed
            pool = FULL_DECK & ~sum(1 << i for i in rng.sample(range(52), rng.randrange(0, 30)))
        table_code = rng.choice(every_play)
        table = classify(table_code & CARD_MASK, ruleset)
        expected = bool(plays_of_size(pool, table.size, tables, table.key))
        assert can_beat(pool, table.size, table.key, tables) == expected, (label, pool, table.text())


# -- perft over deal trees: Deal.legal_moves against Deal.can over every subset ------------------------


def brute_moves(deal: Deal) -> set[int]:
    """Masks of every move ``Deal.can`` accepts for the seat to act (0 = pass)."""
    seat = deal.to_act
    cards = bits_of(deal.hands[seat])
    sizes = range(0, 6) if deal.table is None else (deal.table.size,)
    out = set()
    for size in sizes:
        for combo in combinations(cards, size):
            mask = sum(combo)
            if mask and deal.can(Move.from_mask(seat, mask)):
                out.add(mask)
        if size == 0:
            assert not deal.can(Move(seat, (), False)), "an empty play is never accepted"
    if deal.can(Move.pass_(seat)):
        out.add(0)
    return out


def perft(deal: Deal, depth: int) -> tuple[int, int]:
    """(leaf count by the generator, leaf count by brute force) after checking every node's moves."""
    if depth == 0 or deal.over:
        return 1, 1
    moves = deal.legal_moves()
    masks = {0 if move.is_pass else move.mask for move in moves}
    assert len(masks) == len(moves), "a move is listed twice"
    brute = brute_moves(deal)
    assert masks == brute, f"legal_moves and can() disagree at {deal.state()}"
    generated_total = brute_total = 0
    for move in moves:
        child = deal.clone()
        child.do(move)
        g, b = perft(child, depth - 1)
        generated_total += g
        brute_total += b
    return generated_total, brute_total


GAME_MIXES: list[dict[str, Any]] = [
    {"after_pass": "out-until-trick-ends", "next_has_one_card": "highest-single"},
    {"preset": "hong-kong-strict", "after_pass": "out-until-trick-ends"},
    {"preset": "web", "auto_pass": "on", "single_two_last": "forbidden", "triples": "only-in-full-house"},
    {"preset": "taiwan", "players": 3, "next_has_one_card": "highest-single"},
    {"preset": "hong-kong", "players": 2, "suit_order": "CSHD"},
]
TREE_RULESETS = [(name, preset(name)) for name in PRESET_NAMES] + [
    (f"game-mix{index}", Ruleset.from_mapping(mix)) for index, mix in enumerate(GAME_MIXES)
]


@pytest.mark.parametrize(("label", "ruleset"), TREE_RULESETS, ids=[label for label, _ in TREE_RULESETS])
def test_perft_small_hands(label: str, ruleset: Ruleset) -> None:
    """Whole deal trees from 4-card hands: opening card, passing, trick ends, going out, and the
    game rules (single 2 last, highest single, auto-pass, passed-is-out) at every node."""
    rng = random.Random(f"tree-{label}")
    players = ruleset.players
    for _ in range(4):
        cards = rng.sample(range(52), 4 * players)
        hands = tuple(sum(1 << i for i in cards[seat * 4 : seat * 4 + 4]) for seat in range(players))
        deal = Deal.start(ruleset, explicit_deal(hands, ruleset))
        generated_count, brute_count = perft(deal, 9)
        assert generated_count == brute_count > 0


@pytest.mark.parametrize("name", ["classic", "hong-kong-strict", "taiwan"])
def test_perft_real_deal_depth_3(name: str) -> None:
    ruleset = preset(name)
    deal = Deal.start(ruleset, deal_from_code(DealCode(20240601), ruleset))
    generated_count, brute_count = perft(deal, 3)
    assert generated_count == brute_count > 1


# -- an independent reference for classify: kinds, refusals and order, written from RULES.md ----------

RANKS = "3456789TJQKA2"
SEQUENCES = {  # name -> set of rank indices (3 = 0 ... 2 = 12)
    "A2345": {11, 12, 0, 1, 2},
    "23456": {12, 0, 1, 2, 3},
    **{RANKS[r : r + 5]: set(range(r, r + 5)) for r in range(8)},
}
PLAIN = [RANKS[r : r + 5] for r in range(8)]  # 34567 .. TJQKA, tie-break on the top card
TOP = {name: max(SEQUENCES[name]) for name in PLAIN} | {"A2345": 2, "23456": 3}  # the 5, the 6
LADDERS = {  # RULES.md "Straights": low -> high, with the tie-break rank of each
    "ace-two-low": [("A2345", 2), ("23456", 3)] + [(n, TOP[n]) for n in PLAIN],
    "twos-high": [(n, TOP[n]) for n in PLAIN] + [("23456", 12), ("A2345", 12)],
    "taiwan": [("A2345", 2)] + [(n, TOP[n]) for n in PLAIN] + [("23456", 12)],
    "no-twos": [(n, TOP[n]) for n in PLAIN],
}


def reference(cards: list[tuple[int, int]], options: dict[str, str]) -> tuple[Any, ...] | str:
    """(rank, suit) cards -> a comparable key (size first) or the refusal reason id."""
    order = options["suit_order"]
    strength = {suit: order.index("DCHS"[suit]) for suit in range(4)}
    ranks = sorted((rank for rank, _ in cards), reverse=True)
    counts = sorted((ranks.count(r) for r in set(ranks)), reverse=True)
    size = len(cards)
    if size == 1:
        rank, suit = cards[0]
        return (1, rank, strength[suit])
    if size in (2, 3) and counts == [size]:
        if size == 3 and options["triples"] == "only-in-full-house":
            return "no-lone-triple"
        return (size, ranks[0], max(strength[s] for _, s in cards)) if size == 2 else (3, ranks[0])
    if size != 5:
        return "not-a-combination"
    one_suit = len({suit for _, suit in cards}) == 1
    rank_set = set(ranks)
    ladder = LADDERS[options["straights"]]
    for position, (name, tie) in enumerate(ladder):
        if SEQUENCES[name] == rank_set:
            tie_suit = max(strength[s] for r, s in cards if r == tie)
            return (5, 4 if one_suit else 0, position, tie_suit)
    if one_suit and options["flush"] != "none":
        suit = strength[cards[0][1]]
        return (5, 1, suit, ranks) if options["flush"] == "suit-first" else (5, 1, ranks, suit)
    if counts == [3, 2]:
        return (5, 2, max(r for r in rank_set if ranks.count(r) == 3))
    if counts == [4, 1]:
        return (5, 3, max(r for r in rank_set if ranks.count(r) == 4))
    if len(rank_set) == 5 and rank_set in (SEQUENCES["A2345"], SEQUENCES["23456"]):
        return "no-two-in-straights"
    if one_suit:
        return "no-flush"
    return "not-a-combination"


REFERENCE_CONFIGS = [
    {"suit_order": order, "straights": ladder, "flush": flush, "triples": triples}
    for order in ("DCHS", "CDHS", "CSHD")
    for ladder in LADDERS
    for flush in ("suit-first", "rank-first", "none")
    for triples in (["allowed", "only-in-full-house"] if flush == "suit-first" else ["allowed"])
]


@pytest.mark.parametrize("options", REFERENCE_CONFIGS, ids=["-".join(c.values()) for c in REFERENCE_CONFIGS])
def test_classify_matches_an_independent_reference(options: dict[str, str]) -> None:
    """Kinds, refusal reasons and the order of every play kind agree with a from-scratch reading of
    RULES.md (the generator's keys are checked against classify's by the brute force above)."""
    ruleset = Ruleset.from_mapping(options)
    rng = random.Random("reference-" + "-".join(options.values()))
    five_plays = [code & CARD_MASK for code in plays_of_size(FULL_DECK, 5, tables_for(ruleset))]
    samples = rng.sample(five_plays, 600)
    samples += [sum(1 << i for i in rng.sample(range(52), n)) for n in (1, 2, 3, 4, 5, 6) * 60]
    for name in SEQUENCES:  # every sequence, suited and mixed, whether or not the ladder allows it
        for suits in ([0] * 5, [1] * 5, [0, 1, 2, 3, 0], [3, 2, 1, 0, 3]):
            samples.append(sum(1 << (4 * r + s) for r, s in zip(sorted(SEQUENCES[name]), suits, strict=True)))
    keyed: list[tuple[tuple[Any, ...], int, int]] = []
    for mask in samples:
        cards = [(i >> 2, i & 3) for i in range(52) if mask >> i & 1]
        expected = reference(cards, options)
        try:
            play = classify(mask, ruleset)
        except Refusal as refusal:
            if options["flush"] == "none" and expected == "no-flush" and refusal.reason.value == "no-two-in-straights":
                continue  # suited A2345/23456 with neither straight nor flush allowed: RULES.md does not say
            assert refusal.reason.value == expected, (options, [f"{RANKS[r]}{'DCHS'[s]}" for r, s in cards])
            continue
        assert isinstance(expected, tuple), (options, play.text(), expected)
        assert play.kind.size == expected[0]
        keyed.append((expected, play.key, mask))
    # Same size: the engine's keys order plays exactly as the reference does (ties included).
    for size in (1, 2, 3, 5):
        group = sorted((ref, key) for ref, key, mask in keyed if ref[0] == size)
        for (ref_a, key_a), (ref_b, key_b) in itertools.pairwise(group):
            assert (ref_a < ref_b) == (key_a < key_b) and (ref_a == ref_b) == (key_a == key_b), (ref_a, ref_b)
