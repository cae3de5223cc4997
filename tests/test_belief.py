"""The belief over hidden hands (engine/bots/belief.py): card counts kept, clues read from the public
history, and guesses drawn consistently with them."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from bigtwo.engine import Deal, Move, deal_from_code, observe, preset
from bigtwo.engine.bots import View, bot_for, finalize, great_order, sample_hands
from bigtwo.engine.bots.belief import Belief, read_clues
from bigtwo.engine.cards import parse_mask
from bigtwo.engine.tables import tables_for
from bigtwo.tools.tournament import deal_code
from position_support import trick_start

CLASSIC = preset("classic")


def _play(deal: Deal, seat: int, cards: str) -> None:
    deal.do(Move.from_mask(seat, parse_mask(cards)) if cards else Move.pass_(seat))


def _single_trick(later: str = "") -> Deal:
    """Seat 0 leads the 9♠, seat 1 passes, seat 2 plays the J♦, seat 3 and seat 0 pass, seat 1 passes."""
    hands = [
        parse_mask("9S 3C 4C 5C"),
        parse_mask("8D 6C 6D 3H KC" if later else "8D 6C 6D 3H 4H"),
        parse_mask("JD 7C 7D 5H 5S"),
        parse_mask("QS AS 2S TD TC"),
    ]
    deal = trick_start(CLASSIC, hands, 0)
    _play(deal, 0, "9S")
    _play(deal, 1, "")
    _play(deal, 2, "JD")
    return deal


def test_a_pass_on_a_single_caps_the_seat() -> None:
    deal = _single_trick()
    observation = observe(deal, 3)
    belief = Belief.of(observation, CLASSIC)
    tables = tables_for(CLASSIC)
    above_nine_spades = tables.stronger_than[tables.strength[parse_mask("9S").bit_length() - 1] + 1]
    assert belief.allowed[1] & above_nine_spades == 0
    assert belief.allowed[2] == belief.allowed[0]  # seat 2 never passed: nothing known
    rng = random.Random(5)
    for _ in range(200):
        hands = belief.sample(rng)
        assert hands[3] == observation.hand
        assert hands[1] & above_nine_spades == 0
        assert [hand.bit_count() for hand in hands] == list(observation.cards_left)
        assert (hands[0] | hands[1] | hands[2]) & ~observation.unseen == 0  # the rest stayed undealt
        assert not (hands[0] & hands[1] or hands[0] & hands[2] or hands[1] & hands[2])


def test_a_voluntary_pass_is_no_clue() -> None:
    deal = _single_trick(later="KC")
    for seat in (3, 0, 1):
        _play(deal, seat, "")
    _play(deal, 2, "5H")  # seat 2 leads the next trick; seat 1 now plays the K♣ it held when it passed
    _play(deal, 3, "")
    _play(deal, 0, "")
    _play(deal, 1, "KC")
    passes, _ = read_clues(observe(deal, 2), CLASSIC)
    assert [(clue.seat, clue.size, clue.since) for clue in passes if clue.seat == 1] == [(1, 1, parse_mask("KC"))] * 2
    belief = Belief.of(observe(deal, 2), CLASSIC)
    assert belief.allowed[1] == belief.allowed[2]  # the clue is dropped: seat 1 passed holding the K♣


def test_a_lone_two_that_may_not_go_out_says_nothing() -> None:
    strict = replace(preset("hong-kong-strict"), auto_pass=preset("classic").auto_pass)
    hands = [parse_mask("9S 3C"), parse_mask("2S"), parse_mask("JD 7C 7D"), parse_mask("QS AS TD")]
    deal = trick_start(strict, hands, 0)
    _play(deal, 0, "9S")
    _play(deal, 1, "")  # forced: a lone 2 may not go out on a trick
    belief = Belief.of(observe(deal, 2), strict)
    two_of_spades = parse_mask("2S")
    assert belief.allowed[1] & two_of_spades
    assert belief.allowed[1] & parse_mask("AS") == 0  # still no ace: it would have played it
    assert any(belief.sample(random.Random(seed))[1] == two_of_spades for seed in range(40))


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("preset_name", ["classic", "hong-kong", "web"])
def test_great_self_play_never_contradicts_the_belief(preset_name: str, players: int) -> None:
    """``great`` passes only when it cannot beat (under penalties), so the true hands always lie
    within the caps; every guess keeps the counts, the unseen cards and the face-up card."""
    ruleset = replace(preset(preset_name), players=players)
    great = bot_for("great")
    rng = random.Random(1)
    capped = 0
    for index in range(6):
        deal = Deal.start(ruleset, deal_from_code(deal_code(3, index), ruleset))
        while not deal.over:
            seat = deal.to_act
            observation = observe(deal, seat)
            belief = Belief.of(observation, ruleset)
            for other in range(players):
                if other != seat:
                    assert deal.hands[other] & ~belief.allowed[other] == 0
                    capped += belief.allowed[other] != belief.allowed[seat]
            hands = belief.sample(rng)
            assert hands[seat] == observation.hand
            assert tuple(hand.bit_count() for hand in hands) == observation.cards_left
            others = 0
            for other in range(players):
                if other != seat:
                    assert hands[other] & ~observation.unseen == 0
                    assert not others & hands[other]
                    others |= hands[other]
            if observation.face_up_seat not in (-1, seat) and observation.unseen >> observation.face_up_card & 1:
                assert hands[observation.face_up_seat] >> observation.face_up_card & 1
            deal.do(great.choose(observation, ruleset, rng))
    assert capped > 0  # the clues were used


def test_without_clues_every_seat_is_equally_likely() -> None:
    """No pass yet: a hidden card lands in each other seat about as often as its count says."""
    deal = Deal.start(CLASSIC, deal_from_code(deal_code(9, 0), CLASSIC))
    observation = observe(deal, (deal.to_act + 1) % 4)
    card = (observation.unseen & -observation.unseen).bit_length() - 1
    rng = random.Random(2)
    landed = [0, 0, 0, 0]
    for _ in range(3000):
        hands = sample_hands(observation, CLASSIC, rng)
        landed[next(seat for seat in range(4) if hands[seat] >> card & 1)] += 1
    assert landed[observation.seat] == 0
    assert all(900 < landed[seat] < 1100 for seat in range(4) if seat != observation.seat)


@pytest.mark.parametrize("preset_name", ["classic", "hong-kong"])
def test_the_true_hands_explain_great_s_recent_moves(preset_name: str) -> None:
    """Replayed from the public history with the hands each seat really held, ``great`` makes
    every checked decision again; guesses drawn without the model often would not."""
    ruleset = preset(preset_name)
    great = bot_for("great")

    def model(view: View) -> int:
        return finalize(view, great_order(view))

    rng = random.Random(4)
    checks = unexplained = 0
    for index in range(3):
        deal = Deal.start(ruleset, deal_from_code(deal_code(5, index), ruleset))
        while not deal.over:
            seat = deal.to_act
            observation = observe(deal, seat)
            belief = Belief.of(observation, ruleset, 1, model, 6)
            assert all(check.seat != seat for check in belief.checks)
            assert belief.surprises(tuple(deal.hands)) == 0
            checks += len(belief.checks)
            unexplained += belief.surprises(belief.sample(rng))
            deal.do(great.choose(observation, ruleset, rng))
    assert checks > 100
    assert unexplained > checks // 10
