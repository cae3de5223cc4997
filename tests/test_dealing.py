"""Deal codes and the shuffle, checked against docs/DEALING.md re-implemented here from the page
alone (no engine import), and against the published vectors in tests/data/deal-code-vectors.json."""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from bigtwo.engine import DealCode, DealCodeError, Ruleset, deal_from_code, dealing, mask_text, shuffled_deck

VECTORS = json.loads((Path(__file__).parent / "data" / "deal-code-vectors.json").read_text(encoding="utf-8"))
RANKS = "3456789TJQKA2"
SUITS = "DCHS"
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def page_limit(n: int) -> int:
    return 2**32 - 2**32 % n


def reference_deck(seed: int, round_number: int, limit_of: Callable[[int], int] = page_limit) -> list[int]:
    """Step 1 and 2 of docs/DEALING.md, written from the page."""
    words: list[int] = []

    def word() -> int:
        if not words:
            block = reference_deck.blocks  # type: ignore[attr-defined]
            digest = hashlib.sha256(b"bigtwo-deal-v1" + struct.pack(">QII", seed, round_number, block)).digest()
            words.extend(reversed(struct.unpack(">8I", digest)))
            reference_deck.blocks += 1  # type: ignore[attr-defined]
        return words.pop()

    reference_deck.blocks = 0  # type: ignore[attr-defined]
    deck = list(range(52))
    for i in range(51, 0, -1):
        n = i + 1
        limit = limit_of(n)
        w = word()
        while w >= limit:
            w = word()
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def reference_check_symbol(body: str) -> str:
    def times_x(value: int) -> int:
        value <<= 1
        return value ^ 0b100101 if value & 0b100000 else value

    acc = 0
    for ch in body:
        acc = times_x(acc) ^ ALPHABET.index(ch)
    return ALPHABET[times_x(acc)]


def card_text(index: int) -> str:
    return RANKS[index // 4] + SUITS[index % 4]


def test_seed_zero_deck_matches_the_page_and_the_vectors() -> None:
    expected = VECTORS["shuffled_deck_seed0_round0"]
    assert " ".join(card_text(i) for i in reference_deck(0, 0)) == expected
    assert " ".join(card_text(i) for i in shuffled_deck(0, 0)) == expected


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['code']}-{json.dumps(c['ruleset'])}")
def test_published_vectors(case: dict[str, object]) -> None:
    code = DealCode.parse(str(case["code"]))
    assert code.seed == case["seed"]
    body = str(case["code"])[:12]
    assert reference_check_symbol(body) == str(case["code"])[12]
    ruleset = Ruleset.from_mapping(case["ruleset"])  # type: ignore[arg-type]
    dealt = deal_from_code(code, ruleset)
    assert list(dealt.hand_texts()) == case["hands"]
    assert dealt.shuffle_rounds == case["shuffle_rounds"]
    if "face_up_card" in case:
        assert card_text(dealt.face_up_card) == case["face_up_card"]
        assert dealt.face_up_seat == case["face_up_seat"]


def test_reference_dealing_matches_engine_for_four_players() -> None:
    for seed in (5, 77, 2**59 + 3):
        deck = reference_deck(seed, 0)
        hands = [sorted(deck[p] for p in range(52) if p % 4 == seat) for seat in range(4)]
        dealt = deal_from_code(DealCode(seed), Ruleset())
        assert [mask_text(sum(1 << c for c in hand)) for hand in hands] == list(dealt.hand_texts())


def test_rejected_words_draw_more_blocks_as_the_page_says(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the page's limits a word is rejected about once in 10^8 shuffles; lower limits reject
    # most words, so the shuffle must go on into blocks past the seven it hashes at first.
    def low_limit(n: int) -> int:
        return page_limit(n) // 5

    monkeypatch.setattr(dealing, "_LIMITS", tuple(low_limit(n) if n else 0 for n in range(53)))
    for seed in (1, 2**40 + 9):
        assert list(shuffled_deck(seed, 3)) == reference_deck(seed, 3, low_limit)


def test_codes_are_case_insensitive_and_forgive_dashes() -> None:
    code = DealCode(0x123456789ABCDEF)
    text = str(code)
    assert DealCode.parse(text.lower()) == code
    assert DealCode.parse(f"{text[:4]}-{text[4:8]}-{text[8:]}") == code


@pytest.mark.parametrize("position", range(13))
def test_every_single_mistyped_symbol_is_refused(position: int) -> None:
    text = str(DealCode(987654321012345))
    for replacement in ALPHABET:
        if replacement == text[position]:
            continue
        typo = text[:position] + replacement + text[position + 1 :]
        with pytest.raises(DealCodeError, match=r"mistyped|not a deal-code"):
            DealCode.parse(typo)


@pytest.mark.parametrize("seed", [987654321012345, 0, 31 << 50, (1 << 60) - 1])
def test_swapped_neighbours_are_refused(seed: int) -> None:
    text = str(DealCode(seed))
    for i in range(12):
        if text[i] == text[i + 1]:
            continue
        swapped = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        with pytest.raises(DealCodeError):
            DealCode.parse(swapped)


def test_every_neighbour_swap_of_two_symbols_is_caught_exhaustively() -> None:
    """All 32 x 32 symbol pairs at every position of a code: Luhn mod 32 would miss 0Z <-> Z0."""
    for position in range(12):
        for a in ALPHABET:
            for b in ALPHABET:
                if a == b:
                    continue
                body = "7" * position + a + b + "7" * (11 - position)
                body = body[:12]
                swapped = body[:position] + b + a + body[position + 2 :]
                if len(swapped) != 12 or swapped == body:
                    continue
                assert reference_check_symbol(body) != reference_check_symbol(swapped) or (body[12:] != swapped[12:]), (
                    body,
                    swapped,
                )


@pytest.mark.parametrize("bad", ["", "ABC", "0000000000000000", "UUUUUUUUUUUUU", "000000000000!"])
def test_malformed_codes_say_why(bad: str) -> None:
    with pytest.raises(DealCodeError) as info:
        DealCode.parse(bad)
    assert bad in str(info.value) or "symbols" in str(info.value)


def test_three_players_face_up_card_goes_to_lowest_card_holder() -> None:
    """FULL: "deal 17 cards each and place the last card face up. Whoever holds the 3♦ takes it"."""
    for seed in range(40):
        dealt = deal_from_code(DealCode(seed), Ruleset.from_mapping({"players": 3}))
        sizes = sorted(hand.bit_count() for hand in dealt.hands)
        assert sizes == [17, 17, 18]
        holder = dealt.hands[dealt.face_up_seat]
        assert holder & 1  # 3D is card index 0
        assert dealt.face_up_card != 0


def test_taiwan_two_players_always_deal_three_of_clubs() -> None:
    """TW: "the engine reshuffles until the 3♣ is among the cards actually dealt"."""
    rules = Ruleset.from_mapping({"preset": "taiwan", "players": 2})
    rounds = []
    for seed in range(60):
        dealt = deal_from_code(DealCode(seed), rules)
        assert dealt.dealt >> 1 & 1  # 3C is card index 1
        assert [hand.bit_count() for hand in dealt.hands] == [13, 13]
        rounds.append(dealt.shuffle_rounds)
    assert max(rounds) > 1  # some codes really needed a reshuffle
