"""The learned-ranker study (bigtwo.tools.learned_study): its fit, its choice and a small run."""

from __future__ import annotations

import json

import pytest
from bigtwo.engine import Ruleset
from bigtwo.tools import learned_study
from bigtwo.tools.learned_study import Decision, chosen, fit, mean_gain, oracle, study


def _decision(rows: list[list[float]], values: list[float]) -> Decision:
    return Decision(tuple(tuple(row) for row in rows), tuple(values))


def test_fit_recovers_a_linear_advantage() -> None:
    # The advantage of candidate c over the first is 2 * (x_c - x_0) exactly.
    decisions = [
        _decision([[float(i % 5)], [float(i % 3)], [float(i % 7)]], [0.0, 2.0 * (i % 3 - i % 5), 2.0 * (i % 7 - i % 5)])
        for i in range(200)
    ]
    (weight,) = fit(decisions, with_search=False)
    assert weight == pytest.approx(2.0, abs=0.01)
    learned = mean_gain(decisions, lambda d: chosen(d, [weight], 0.0, False))
    assert learned == pytest.approx(mean_gain(decisions, oracle))


def test_the_choice_keeps_the_first_unless_a_gain_clears_the_threshold() -> None:
    decision = _decision([[0.0], [1.0], [0.5]], [0.0, 1.0, 0.5])
    assert chosen(decision, [1.0], 0.0, False) == 1
    assert chosen(decision, [1.0], 1.0, False) == 0
    assert chosen(decision, [-1.0], 0.0, False) == 0
    assert oracle(decision) == 1


def test_a_small_study_is_reproducible_and_bounded_by_its_oracle() -> None:
    ruleset = Ruleset.from_mapping({"preset": "classic", "players": 4})
    report = study(ruleset, deals=6, search_deals=1, seed=3, pro_deals=1)
    assert report == study(ruleset, deals=6, search_deals=1, seed=3, pro_deals=1)
    train, test = report["decisions"]  # type: ignore[misc]
    assert train > 0 and test > 0
    gains = report["learned_gain"]
    assert isinstance(gains, dict) and set(gains) == set(learned_study.THRESHOLDS)
    assert all(gain <= report["oracle_gain"] for gain in gains.values())  # type: ignore[operator]
    search = report["with_search"]
    assert isinstance(search, dict)
    assert search["pro_gain"] <= search["oracle_gain"]
    pro = report["pro_minus_great"]
    assert isinstance(pro, dict) and pro["deals"] == 1
    assert set(pro["pro_learned_playouts"]) == {"mean", "ci95", "minus_pro"}
    duels = report["reranked_minus_great"]
    assert isinstance(duels, dict) and set(duels) == {"threshold", "field", "rotate"}
    for seating in ("field", "rotate"):
        assert duels[seating]["ci95"][0] <= duels[seating]["mean"] <= duels[seating]["ci95"][1]


def test_the_command_prints_json_and_refuses_bad_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert learned_study.main(["--deals", "2", "--players", "2"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["players"] == 2
    assert "re-ranked great against great, seating field: 2/2 deals" in printed.err
    with pytest.raises(SystemExit):
        learned_study.main(["--deals", "0"])
    with pytest.raises(SystemExit):
        learned_study.main(["--preset", "nope"])
    assert "preset: unknown value 'nope'" in capsys.readouterr().err


def test_great_against_itself_is_even_in_both_seatings() -> None:
    from bigtwo.engine.bots import great_order
    from bigtwo.tools.tournament import Seating

    ruleset = Ruleset.from_mapping({"preset": "classic", "players": 4})
    for seating in Seating:
        assert learned_study.duel(ruleset, learned_study.order_player(great_order), 5, 3, seating) == [0.0] * 3
