"""The mask-level calls (`play_mask`, `pass_turn`) are `do` without Card objects: same events,
same refusals."""

from __future__ import annotations

import random

import pytest
from bigtwo.engine import PRESET_NAMES, Deal, DealCode, Move, Reason, Refusal, deal_from_code, preset
from bigtwo.engine.generate import CARD_MASK


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_mask_calls_make_the_same_events_as_do(name: str) -> None:
    rules = preset(name)
    rng = random.Random(name)
    for seed in range(4):
        by_move = Deal.start(rules, deal_from_code(DealCode(seed), rules))
        by_mask = by_move.clone()
        while not by_move.over:
            options = by_move.legal_encoded() + ([0] if by_move.table is not None else [])
            mask = rng.choice(options) & CARD_MASK
            seat = by_move.to_act
            expected = by_move.do(Move.from_mask(seat, mask))
            got = by_mask.play_mask(seat, mask) if mask else by_mask.pass_turn(seat)
            assert got == expected
        assert by_mask.state() == by_move.state()


def test_mask_calls_refuse_like_do() -> None:
    rules = preset("classic")
    deal = Deal.start(rules, deal_from_code(DealCode(11), rules))
    seat = deal.to_act
    with pytest.raises(Refusal) as info:
        deal.pass_turn(seat)
    assert info.value.reason is Reason.CANNOT_PASS_LEADING
    with pytest.raises(Refusal) as info:
        deal.play_mask((seat + 1) % 4, deal.hands[(seat + 1) % 4] & -deal.hands[(seat + 1) % 4])
    assert info.value.reason is Reason.NOT_YOUR_TURN
    other_card = deal.hands[(seat + 1) % 4] & -deal.hands[(seat + 1) % 4]
    with pytest.raises(Refusal) as info:
        deal.play_mask(seat, other_card)
    assert info.value.reason is Reason.NOT_IN_HAND
    before = deal.state()
    with pytest.raises(Refusal):
        deal.play_mask(seat, 0)
    assert deal.state() == before
