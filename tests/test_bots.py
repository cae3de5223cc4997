"""Bots: legal to the end under every preset and option mix, deterministic given a
seed, honest (hidden hands reshuffled change nothing), pro within budget, tournament output."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from bigtwo.engine import (
    PRESET_NAMES,
    CardsPlayed,
    Deal,
    DealCode,
    DealContext,
    DealStarted,
    DealtCards,
    Move,
    Passed,
    Ruleset,
    deal_from_code,
    observe,
)
from bigtwo.engine.bots import LEVELS, Budget, PolicyBot, ProBot, bot_for, plan, timeout_bot_move, view_in_deal
from bigtwo.engine.bots.base import Bot, View
from bigtwo.engine.bots.heuristic import good_order, great_order
from bigtwo.engine.bots.plan import rest_costs, split
from bigtwo.engine.cards import parse_mask
from bigtwo.engine.generate import CARD_MASK, all_plays
from bigtwo.engine.tables import tables_for
from bigtwo.tools.tournament import TournamentResult
from position_support import trick_start

TINY = Budget(simulations=12, steps=300, candidates=3)


def make_bot(level: str) -> Bot:
    return bot_for(level, TINY if level == "pro" else None)


OPTION_MIXES: list[dict[str, object]] = [
    {"players": 3},
    {"players": 2},
    {"players": 2, "cards_each": 17},
    {"flush": "none", "triples": "only-in-full-house"},
    {"after_pass": "out-until-trick-ends", "next_has_one_card": "highest-single"},
    {"single_two_last": "forbidden", "auto_pass": "on", "players": 3},
    {"straights": "no-twos", "suit_order": "CSHD", "penalty": "harsh", "twos_double": "on"},
    {"straights": "taiwan", "suit_order": "CDHS", "settlement": "zero-sum", "penalty": "flat"},
    {"players": 2, "two_player_start": "reshuffle-until-lowest", "after_pass": "out-until-trick-ends"},
]


def random_mix(rng: random.Random) -> dict[str, object]:
    players = rng.choice([2, 3, 4])
    mix: dict[str, object] = {
        "preset": rng.choice(PRESET_NAMES),
        "players": players,
        "flush": rng.choice(["suit-first", "rank-first", "none"]),
        "triples": rng.choice(["allowed", "only-in-full-house"]),
        "after_pass": rng.choice(["may-play-again", "out-until-trick-ends"]),
        "single_two_last": rng.choice(["allowed", "forbidden"]),
        "next_has_one_card": rng.choice(["free", "highest-single"]),
        "auto_pass": rng.choice(["off", "on"]),
        "straights": rng.choice(["ace-two-low", "twos-high", "taiwan", "no-twos"]),
        "suit_order": rng.choice(["DCHS", "CDHS", "CSHD"]),
    }
    if players == 2:
        mix["cards_each"] = rng.choice([13, 17])
    return mix


def play_deal(
    ruleset: Ruleset, code: int, levels: list[str], seed: int, context: DealContext | None = None
) -> list[Move]:
    """Play a whole deal, checking that every bot move is legal; returns the moves made."""
    deal = Deal.start(ruleset, deal_from_code(DealCode(code), ruleset), context)
    bots = [make_bot(level) for level in levels]
    rngs = [random.Random(seed * 10 + seat) for seat in range(len(levels))]
    moves: list[Move] = []
    for _ in range(500):
        if deal.over:
            break
        seat = deal.to_act
        move = bots[seat].choose(observe(deal, seat), ruleset, rngs[seat])
        assert move.seat == seat
        assert deal.can(move), f"{levels[seat]} chose illegal {move} under {ruleset.to_mapping()}"
        deal.do(move)
        moves.append(move)
    assert deal.over
    return moves


def table_of(levels: tuple[str, ...], players: int, shift: int) -> list[str]:
    return [levels[(seat + shift) % len(levels)] for seat in range(players)]


@pytest.mark.parametrize("preset_name", PRESET_NAMES)
def test_every_level_plays_legal_moves_under_every_preset(preset_name: str) -> None:
    ruleset = Ruleset.from_mapping({"preset": preset_name})
    rng = random.Random(preset_name)
    for index in range(3):
        levels = table_of(LEVELS, ruleset.players, index)
        play_deal(ruleset, rng.getrandbits(60), levels, index)


@pytest.mark.parametrize("mix", OPTION_MIXES, ids=lambda m: ",".join(f"{k}={v}" for k, v in m.items()))
def test_every_level_plays_legal_moves_under_option_mixes(mix: dict[str, object]) -> None:
    ruleset = Ruleset.from_mapping({"preset": "classic", **mix})
    rng = random.Random(str(mix))
    for index in range(len(LEVELS)):
        levels = table_of(LEVELS, ruleset.players, index)
        play_deal(ruleset, rng.getrandbits(60), levels, index)


def test_random_option_mixes_without_pro() -> None:
    rng = random.Random(2024)
    fast = ("random", "beginner", "good", "great")
    for index in range(25):
        ruleset = Ruleset.from_mapping(random_mix(rng))
        levels = table_of(fast, ruleset.players, index)
        play_deal(ruleset, rng.getrandbits(60), levels, index)


def test_winner_leads_second_deal() -> None:
    ruleset = Ruleset.from_mapping({"preset": "hong-kong"})
    context = DealContext(deal_number=2, previous_winner=2)
    for index, level in enumerate(LEVELS):
        play_deal(ruleset, 1000 + index, [level] * 4, index, context)


@pytest.mark.parametrize("level", LEVELS)
def test_deterministic_given_seed(level: str) -> None:
    ruleset = Ruleset.from_mapping({"preset": "classic"})
    levels = [level, "great", level, "good"]
    first = play_deal(ruleset, 77, levels, 5)
    second = play_deal(ruleset, 77, levels, 5)
    assert first == second


def _reshuffled(ruleset: Ruleset, deal: Deal, seat: int, rng: random.Random) -> Deal | None:
    """The same public history as ``deal`` with the other seats' unplayed cards reshuffled among
    them (face-up card kept with its holder); None when a replayed move becomes illegal."""
    events = deal.events
    started = events[0]
    assert isinstance(started, DealStarted)
    keep = [0] * ruleset.players
    for event in events:
        if isinstance(event, CardsPlayed):
            keep[event.seat] |= event.mask
    if started.face_up_card >= 0:
        keep[started.face_up_seat] |= 1 << started.face_up_card
    others = [s for s in range(ruleset.players) if s != seat]
    pool = [i for s in others for i in range(52) if (started.hands[s] & ~keep[s]) >> i & 1]
    if ruleset.players == 2:
        # The opponent's unplayed cards trade places with undealt cards above the opening card
        # (the lowest card dealt), which leaves the opening card unchanged.
        dealt = started.hands[0] | started.hands[1]
        strength = deal.tables.strength
        lowest = deal.tables.lowest_card_in(dealt)
        pool += [i for i in range(52) if not dealt >> i & 1 and strength[i] > strength[lowest]]
    rng.shuffle(pool)
    hands = list(started.hands)
    position = 0
    for s in others:
        need = (started.hands[s] & ~keep[s]).bit_count()
        hands[s] = keep[s] | sum(1 << i for i in pool[position : position + need])
        position += need
    dealt = DealtCards(tuple(hands), started.face_up_card, started.face_up_seat)
    other = Deal.start(ruleset, dealt, DealContext(started.deal_number))
    if other.over:
        return None  # a dragon appeared
    for event in events[1:]:
        if isinstance(event, CardsPlayed):
            move = Move.from_mask(event.seat, event.mask)
        elif isinstance(event, Passed) and not event.automatic:
            move = Move.pass_(event.seat)
        else:
            continue
        if not other.can(move):
            return None
        other.do(move)
    return other


@pytest.mark.parametrize(
    "options",
    [
        {"preset": "classic"},
        {"preset": "hong-kong"},
        {"preset": "classic", "players": 3},
        {"preset": "taiwan", "players": 2, "cards_each": 17},
    ],
    ids=["classic", "hong-kong", "3-players", "2-players-17"],
)
def test_honest_hidden_hands_reshuffled_change_nothing(options: dict[str, object]) -> None:
    ruleset = Ruleset.from_mapping(options)
    rng = random.Random(str(options))
    checked = changed = 0
    for deal_index in range(3):
        deal = Deal.start(ruleset, deal_from_code(DealCode(rng.getrandbits(60)), ruleset))
        driver = bot_for("great")
        while not deal.over:
            seat = deal.to_act
            if deal.moves_made % 3 == 0:
                other = None
                for _ in range(10):
                    other = _reshuffled(ruleset, deal, seat, rng)
                    if other is not None:
                        break
                if other is not None:
                    changed += other.hands != deal.hands
                    assert observe(other, seat) == observe(deal, seat)
                    for level in LEVELS:
                        bot = make_bot(level)
                        mine = bot.choose(observe(deal, seat), ruleset, random.Random(deal_index))
                        theirs = bot.choose(observe(other, seat), ruleset, random.Random(deal_index))
                        assert mine == theirs, level
                    checked += 1
            deal.do(driver.choose(observe(deal, seat), ruleset, random.Random(0)))
    assert checked >= 10
    assert changed >= 5


def _position(preset_name: str, players: int, mine: str, others: list[str], led: str) -> View:
    """Seat 0 holds ``mine``; the last seat (holding ``others[-1]``) has just led ``led``, or
    nothing when ``led`` is empty (then seat 0 leads)."""
    ruleset = Ruleset.from_mapping({"preset": preset_name, "players": players})
    hands = (parse_mask(mine), *(parse_mask(text) for text in others[-(players - 1) :]))
    first = players - 1 if led else 0
    deal = trick_start(ruleset, hands, first, moves_made=12)
    if led:
        deal.do(Move.from_mask(first, parse_mask(led)))
    assert deal.to_act == 0
    return view_in_deal(deal)


OTHERS = ["5C 5D 7C 7D TC TD", "5H 5S 7H 7S TH TS", "KC 3D 3H 4C 4H QD"]


@pytest.mark.parametrize(
    ("preset_name", "players", "spends_the_ace"),
    [("taiwan", 4, False), ("taiwan", 3, False), ("taiwan", 2, True), ("classic", 4, True), ("hong-kong", 3, True)],
)
def test_great_keeps_its_ace_only_when_winning_alone_counts(
    preset_name: str, players: int, spends_the_ace: bool
) -> None:
    # Six singles and a king on the table: only the ace beats it. Under penalty = none the cards
    # left cost nothing, so with 3 or 4 seats great keeps the ace for the lead it wins later; heads
    # up a pass gives the only opponent the lead, and under penalties every card kept costs.
    view = _position(preset_name, players, "4D 6H 8C 9S JD AS", OTHERS, "KC")
    chosen = PolicyBot("great", great_order).choose_in_view(view)
    assert chosen == (parse_mask("AS") if spends_the_ace else 0)


def test_great_follows_with_control_when_an_opponent_is_near_going_out() -> None:
    view = _position("taiwan", 4, "4D 6H 8C 9S JD AS", ["5C 5D 7C", "5H 5S 7H 7S TH TS", "KC 3D 3H 4C 4H QD"], "KC")
    assert PolicyBot("great", great_order).choose_in_view(view) == parse_mask("AS")


@pytest.mark.parametrize(("players", "lead"), [(2, "7C 7H"), (4, "6D")])
def test_good_leads_combinations_first_heads_up(players: int, lead: str) -> None:
    view = _position("classic", players, "6D 7C 7H JS", OTHERS, "")
    assert PolicyBot("good", good_order).choose_in_view(view) == parse_mask(lead)


def test_good_blocks_a_lone_opponent_with_one_card_when_leading() -> None:
    view = _position("classic", 2, "4D 8C JS", ["KC"], "")
    assert PolicyBot("good", good_order).choose_in_view(view) == parse_mask("JS")


@pytest.mark.parametrize("preset_name", ["classic", "hong-kong", "taiwan"])
def test_rest_costs_match_a_split_of_each_rest(preset_name: str) -> None:
    tables = tables_for(Ruleset.from_mapping({"preset": preset_name}))
    rng = random.Random(preset_name)
    for size in (13, 17):
        hand = sum(1 << card for card in rng.sample(range(52), size))
        masks = [encoded & CARD_MASK for encoded in rng.sample(all_plays(hand, tables), 6)]
        costs = rest_costs(hand, masks, tables)
        plan._SPLITS.clear()
        assert costs == [split(hand & ~mask, tables)[1] for mask in masks]


def test_pro_respects_its_budget() -> None:
    ruleset = Ruleset.from_mapping({"preset": "classic"})
    deal = Deal.start(ruleset, deal_from_code(DealCode(99), ruleset))
    great = bot_for("great")
    # Move on to a position with a table to follow, so that pro has several candidates.
    while deal.table is None or len(deal.legal_moves()) < 3:
        deal.do(great.choose(observe(deal, deal.to_act), ruleset, random.Random(1)))
        assert not deal.over
    observation = observe(deal, deal.to_act)
    pro = ProBot(Budget(simulations=20, steps=None, candidates=4))
    pro.choose(observation, ruleset, random.Random(3))
    assert 0 < pro.last_rollouts <= 20
    timed = ProBot(Budget(simulations=100_000, steps=None, max_ms=60))
    move = timed.choose(observation, ruleset, random.Random(3))
    assert 0 < timed.last_rollouts < 100_000, "the clock, not the rollout cap, ended the search"
    assert deal.can(move)
    stepped = ProBot(Budget(simulations=100_000, steps=500))
    stepped.choose(observation, ruleset, random.Random(3))
    assert stepped.last_steps < 500 + 4 * 200


def test_timeout_bot_move_is_legal_and_fixed() -> None:
    ruleset = Ruleset.from_mapping({"preset": "taiwan"})
    deal = Deal.start(ruleset, deal_from_code(DealCode(5), ruleset))
    while not deal.over:
        observation = observe(deal, deal.to_act)
        move = timeout_bot_move(observation, ruleset)
        assert deal.can(move)
        assert move == timeout_bot_move(observation, ruleset)
        deal.do(move)


def test_bot_for_rejects_unknown_levels_and_wrong_turns() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        bot_for("grandmaster")
    ruleset = Ruleset.from_mapping({"preset": "classic"})
    deal = Deal.start(ruleset, deal_from_code(DealCode(1), ruleset))
    idle = (deal.to_act + 1) % 4
    with pytest.raises(ValueError, match="not the seat to act"):
        bot_for("great").choose(observe(deal, idle), ruleset, random.Random(0))


def test_tournament_json_shape(tmp_path: Path) -> None:
    png = tmp_path / "plot.png"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bigtwo.cli.main",
            "tournament",
            "--preset",
            "classic",
            "--levels",
            "great,good,random",
            "--deals",
            "4",
            "--seed",
            "42",
            "--json",
            "--plot",
            str(png),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"preset", "deals", "seating", "levels"}
    assert data["seating"] == "rotate"
    assert data["preset"] == "classic" and data["deals"] == 4
    assert list(data["levels"]) == ["great", "good", "random"]
    for summary in data["levels"].values():
        assert set(summary) == {"mean", "ci95", "decide_ms_p95"}
        low, high = summary["ci95"]
        assert low <= summary["mean"] <= high
        assert summary["decide_ms_p95"] >= 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tournament_seating_and_reproducibility() -> None:
    from bigtwo.tools.tournament import run_tournament, seat_levels

    assert seat_levels(["a", "b", "c"], 4, 0) == ["a", "b", "c", "a"]
    assert seat_levels(["a", "b", "c"], 4, 1) == ["b", "c", "a", "b"]
    for players in (2, 3, 4):
        for seat in range(players):
            assert sorted(seat_levels(["a", "b", "c"], players, t)[seat] for t in range(3)) == ["a", "b", "c"]
    ruleset = Ruleset.from_mapping({"preset": "taiwan"})
    one = run_tournament(ruleset, ["great", "random"], 3, 7)
    two = run_tournament(ruleset, ["great", "random"], 3, 7, jobs=2)
    assert one.points == two.points
    assert all(0.0 <= p <= 1.0 for p in one.points["great"])


def test_field_seating_puts_each_level_alone_in_each_seat_against_the_field() -> None:
    from bigtwo.tools.tournament import (
        Job,
        Seating,
        deal_code,
        play_table,
        run_tournament,
        tables_of,
    )

    tables = tables_of(["pro", "great"], 3, Seating.FIELD)
    assert [(t.seats, t.counted) for t in tables] == [
        (("great", "great", "great"), (0, 1, 2)),
        (("pro", "great", "great"), (0,)),
        (("great", "pro", "great"), (1,)),
        (("great", "great", "pro"), (2,)),
    ]
    assert len(tables_of(["a", "b", "c"], 4, Seating.FIELD)) == 1 + 2 * 4
    # The rotation is unchanged by the option: the earlier figures stay reproducible.
    assert [list(t.seats) for t in tables_of(["a", "b", "c"], 4, Seating.ROTATE)] == [
        ["a", "b", "c", "a"],
        ["b", "c", "a", "b"],
        ["c", "a", "b", "c"],
    ]

    ruleset = Ruleset.from_mapping({"preset": "classic", "players": 4})
    result = run_tournament(ruleset, ["good", "random"], 4, 11, seating=Seating.FIELD)
    assert result.to_json()["seating"] == "field"
    job = Job(ruleset, ("good", "random"), 11, None, Seating.FIELD)
    for index in range(4):
        code = deal_code(11, index)
        prefix = f"bigtwo-tournament/11/{index}"
        field_points, _ = play_table(job, code, ["random"] * 4, f"{prefix}/0")
        own = []
        for seat in range(4):
            seats = ["random"] * 4
            seats[seat] = "good"
            own.append(play_table(job, code, seats, f"{prefix}/{1 + seat}")[0][seat])
        assert result.points["good"][index] == pytest.approx(sum(own) / 4)
        assert result.points["random"][index] == pytest.approx(sum(field_points) / 4)
    with pytest.raises(ValueError, match="field"):
        run_tournament(ruleset, ["good"], 1, 11, seating=Seating.FIELD)


def _bench_result(preset: str, points: dict[str, list[float]]) -> TournamentResult:
    ruleset = Ruleset.from_mapping({"preset": preset})
    deals = len(next(iter(points.values())))
    return TournamentResult(ruleset, tuple(points), deals, points=points, decide_ms={level: [1.0] for level in points})


def test_bots_bench_verdicts_on_fabricated_results() -> None:
    from bigtwo.tools.bots_bench import ladder_verdict, pro_verdict

    wobble = [0.0, 0.2, -0.2, 0.1, -0.1, 0.0]
    # classic: penalty points, lower is better, so great's fewer points read as a positive difference.
    ordered = _bench_result(
        "classic",
        {
            "great": [2 + w for w in wobble],
            "good": [3 + w for w in wobble],
            "beginner": [5 - w for w in wobble],
            "random": [7 + w for w in wobble],
        },
    )
    verdict = ladder_verdict(ordered)
    assert verdict["ordered"] and verdict["failing"] == []
    assert [p["pair"] for p in verdict["pairs"]] == ["beginner-random", "good-beginner", "great-good"]
    assert verdict["pairs"][2]["mean"] == pytest.approx(1.0) and verdict["pairs"][2]["ci95"][0] > 0
    # good scores more penalty than beginner on every deal: a reversal; great - good sits on zero.
    broken = _bench_result(
        "classic",
        {
            "great": [6 + w for w in wobble],
            "good": [6 - w for w in wobble],
            "beginner": [5 + w for w in wobble],
            "random": [7 + w for w in wobble],
        },
    )
    verdict = ladder_verdict(broken)
    assert not verdict["ordered"]
    assert verdict["failing"] == [
        {"pair": "good-beginner", "why": "reversed"},
        {"pair": "great-good", "why": "unresolved"},
    ]
    # web is zero-sum (higher is better): no sign flip.
    pro = _bench_result("web", {"pro": [1.5 + w for w in wobble], "great": [0.0] * 6})
    assert pro_verdict(pro, "web")["met"]
    short = _bench_result("web", {"pro": [0.6 + w for w in wobble], "great": [0.0] * 6})
    assert pro_verdict(short, "web")["verdict"] == "below +1.0"
    # no +1.0 target outside classic and web (taiwan's points are a win rate): being ahead is enough.
    taiwan = _bench_result("taiwan", {"pro": [0.4 + w for w in wobble], "great": [0.0] * 6})
    assert pro_verdict(taiwan, "taiwan")["verdict"] == "ahead"
    # the table names the failing pair
    from bigtwo.tools.bots_bench import Cell, cell_report, table
    from rich.console import Console

    cell = Cell("classic", 4, broken.ruleset, with_pro=False)
    report = {"deals": 6, "pro_deals": 0, "seed": 0, "cells": [cell_report(cell, broken, None)]}
    console = Console(width=200, record=True)
    console.print(table(report))
    text = console.export_text()
    assert "not ordered" in text and "good-beginner reversed" in text and "strictly ordered" not in text


def test_bots_bench_short_run(tmp_path: Path) -> None:
    report_path = tmp_path / "bench.json"
    common = ["--presets", "classic", "--players", "2,3", "--deals", "20", "--pro-deals", "4"]
    common += ["--pro-presets", "classic", "--pro-players", "2", "--pro-sims", "12", "--pro-steps", "300"]
    common += ["--jobs", "1", "--no-progress", "--json", str(report_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "bigtwo.tools.bots_bench", *common],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "estimated run time" in proc.stderr
    assert "better-is-positive" in proc.stdout and "sign flipped under penalty" in proc.stdout
    for header in ("beginner − random", "good − beginner", "great − good", "pro − great", "p50/p95/p99"):
        assert header in proc.stdout
    report = json.loads(report_path.read_text())
    assert {"seed", "deals", "pro_deals", "orientation", "pro_target", "skipped", "cells"} <= set(report)
    assert [(c["preset"], c["players"]) for c in report["cells"]] == [("classic", 2), ("classic", 3)]
    two, three = report["cells"]
    assert two["lower_is_better"] and three["pro"] is None
    assert two["pro"]["deals"] == 4 and two["pro"]["pair"] == "pro-great" and two["pro"]["target"] == 1.0
    for cell in report["cells"]:
        ladder = cell["ladder"]
        assert ladder["deals"] == 20 and len(ladder["pairs"]) == 3
        assert ladder["ordered"] == (ladder["failing"] == [])
        assert ladder["ordered"] == all(p["ci95"][0] > 0 for p in ladder["pairs"])
        tournament = ladder["tournament"]["pairs"]
        # better-is-positive: classic's penalty differences come out of the tournament sign-flipped
        assert ladder["pairs"][2]["mean"] == pytest.approx(-tournament["great-good"]["mean"], abs=1e-3)
        expected = {"great", "good", "beginner", "random"} | ({"pro"} if cell["pro"] else set())
        assert set(cell["decide_ms"]) == expected
        for times in cell["decide_ms"].values():
            assert times["decisions"] > 0
            assert 0 <= times["p50"] <= times["p95"] <= times["p99"]
    verdict_word = "strictly ordered" if two["ladder"]["ordered"] else "not ordered"
    assert verdict_word in proc.stdout


def test_bots_bench_can_seat_pro_alone_against_great() -> None:
    from bigtwo.tools.bots_bench import parse_args, run

    argv = ["--presets", "classic", "--players", "2", "--deals", "0", "--pro-deals", "2", "--pro-players", "2"]
    argv += ["--pro-sims", "12", "--pro-steps", "300", "--pro-seating", "field", "--jobs", "1", "--no-progress"]
    report = run(parse_args(argv))
    assert report["pro_seating"] == "field"
    (cell,) = report["cells"]
    assert cell["pro"]["tournament"]["seating"] == "field" and cell["pro"]["pair"] == "pro-great"


def test_bots_bench_same_results_for_any_jobs() -> None:
    from bigtwo.tools.bots_bench import parse_args, run

    def measured(jobs: str) -> list[dict[str, object]]:
        argv = ["--presets", "web", "--players", "3", "--deals", "6", "--pro-deals", "0", "--no-progress"]
        cells = run(parse_args([*argv, "--jobs", jobs]))["cells"]
        # decision times and wall seconds are the clock's; everything else must match to the digit
        for cell in cells:
            del cell["decide_ms"], cell["seconds"]
            for summary in cell["ladder"]["tournament"]["levels"].values():
                del summary["decide_ms_p95"]
        return list(cells)

    assert measured("1") == measured("2")
