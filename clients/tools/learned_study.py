"""Would a learned move ranker make ``great`` or ``pro`` stronger? A reproducible study (issue 17).

Data: deals played by ``great`` at every seat. At each decision with a choice, the policy's first
``candidates`` moves are each played in the real deal (every hand known to the study, never to the
model) and the deal played out by ``great``; the value of a move is the seat's utility at the end
(:func:`bigtwo.engine.bots.pro.utility`). Each candidate is described by features of the deciding
seat's view only (:func:`candidate_features`).

Fit: ridge regression of a candidate's advantage over the policy's first choice (value minus the
first choice's value) on the difference of their features, on the ``train`` seed's deals; judged
on the ``test`` seed's deals by the advantage the chosen move really had, next to the oracle (the
best candidate with the hands known). With ``--with-search`` each decision also runs ``pro``'s
search (its own belief, seeded) and the fit gets the search's mean differences as inputs.

Play: ``great`` re-ranked by the fit (a candidate replaces the first choice when its predicted
advantage exceeds ``threshold``) against ``great``, at the tables of both ``bigtwo tournament``
seatings (``field``: alone in each seat against three ``great``; ``rotate``: the two take turns
around the table), paired by deal.

``python -m bigtwo.tools.learned_study --preset classic --players 4 --deals 6000 --with-search-deals 800``
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from bigtwo.engine import Deal, Ruleset, deal_from_code, observe
from bigtwo.engine.bots import Budget, ProBot
from bigtwo.engine.bots.base import View, view_in_deal, view_of
from bigtwo.engine.bots.heuristic import OrderFn, finalize, great_order
from bigtwo.engine.bots.plan import PLAY_COST, Masters, highest_rank, rest_costs, split
from bigtwo.engine.bots.pro import legal_candidates, play_out, utility
from bigtwo.engine.generate import CARD_MASK, MASK_BITS

from .tournament import Seating, deal_code, mean_ci, tables_of

CANDIDATES = 6
RIDGE = 1.0
THRESHOLDS = (0.0, 0.25, 0.5, 1.0)

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: called after each deal of a phase."""


def _silent(phase: str, done: int, total: int) -> None:
    del phase, done, total


@dataclass(frozen=True, slots=True)
class Decision:
    features: tuple[tuple[float, ...], ...]
    """Per candidate (the policy's first choice first), its features."""
    values: tuple[float, ...]
    """Per candidate, the seat's utility when it is played and the deal played out, hands known."""
    search_means: tuple[float, ...] = ()
    """Per candidate, pro's search estimate (``--with-search``)."""
    search_pick: int = 0


def candidate_features(view: View, cands: Sequence[int]) -> list[tuple[float, ...]]:
    """What the seat can see about each candidate: a pass, or the play's size, height, whether an
    unseen card can beat it, what it costs the rest of the hand's plan, and the same again for a
    lead, each set scaled by how near the seats are to going out."""
    tables = view.tables
    hand = view.hand
    keyed = {e & CARD_MASK: e for e in view.legal}
    _, cost_now = split(hand, tables)
    plays = [mask for mask in cands if mask]
    rest = dict(zip(plays, rest_costs(hand, plays, tables), strict=True))
    counter = Masters(view.unseen, tables)
    lowest_other = min(view.cards_left[s] for s in view.opponents())
    next_seat = view.cards_left[(view.seat + 1) % view.players]
    own = hand.bit_count() / 13
    lead = 1.0 if view.leading else 0.0
    rows = []
    for mask in cands:
        row = [0.0] * 16
        if not mask:
            row[0:4] = [1.0, own, float(lowest_other <= 2), float(next_seat <= 2)]
        else:
            encoded = keyed.get(mask, mask)
            size = mask.bit_count()
            height = highest_rank(mask) / 12
            master = float(bool(encoded >> MASK_BITS) and counter.master(encoded))
            row[4 + {1: 0, 2: 1, 3: 2}.get(size, 3)] = 1.0
            row[8:16] = [
                height,
                float(highest_rank(mask) == 12),
                master,
                (rest[mask] - cost_now) / PLAY_COST,
                height * float(lowest_other <= 2),
                master * float(lowest_other <= 3),
                height * own,
                size / 5 * own,
            ]
        rows.append(tuple(row + [x * lead for x in row]))
    return rows


def collect(
    ruleset: Ruleset, seed: int, deals: int, with_search: bool, progress: Progress = _silent
) -> list[Decision]:
    """The decisions of ``deals`` all-``great`` deals (see the module docstring)."""
    pro = ProBot(Budget())
    out: list[Decision] = []
    for index in range(deals):
        deal = Deal.start(ruleset, deal_from_code(deal_code(seed, index), ruleset))
        rng = random.Random(f"learned-study/{seed}/{index}")
        while not deal.over:
            view = view_in_deal(deal)
            cands = legal_candidates(view, great_order, pro.budget.candidates if with_search else CANDIDATES)
            if len(cands) > 1 and cands[0] != view.hand:
                out.append(_decision(deal, view, cands, pro if with_search else None, rng))
            _play(deal, view.seat, finalize(view, great_order(view)))
        progress(f"decisions (seed {seed})", index + 1, deals)
    return out


def _decision(deal: Deal, view: View, cands: list[int], pro: ProBot | None, rng: random.Random) -> Decision:
    values = []
    for mask in cands:
        trial = deal.clone()
        _play(trial, view.seat, mask)
        play_out(trial, great_order)
        values.append(utility(deal.ruleset, trial, view.seat))
    features = tuple(candidate_features(view, cands))
    if pro is None:
        return Decision(features, tuple(values))
    observation = observe(deal, view.seat, with_history=True)
    picked = pro.search(observation, deal.ruleset, view_of(observation, deal.ruleset), rng)
    return Decision(features, tuple(values), pro.last_means, cands.index(picked))


def _play(deal: Deal, seat: int, mask: int) -> None:
    if mask:
        deal.play_mask(seat, mask)
    else:
        deal.pass_turn(seat)


def _inputs(decision: Decision, candidate: int, with_search: bool) -> list[float]:
    first = decision.features[0]
    row = [a - b for a, b in zip(decision.features[candidate], first, strict=True)]
    if with_search:
        row.insert(0, decision.search_means[candidate] - decision.search_means[0])
    return row


def fit(decisions: Sequence[Decision], with_search: bool) -> list[float]:
    rows = [_inputs(d, c, with_search) for d in decisions for c in range(1, len(d.values))]
    target = [d.values[c] - d.values[0] for d in decisions for c in range(1, len(d.values))]
    x = np.array(rows)
    weights = np.linalg.solve(x.T @ x + RIDGE * np.eye(x.shape[1]), x.T @ np.array(target))
    return [float(w) for w in weights]


def chosen(decision: Decision, weights: Sequence[float], threshold: float, with_search: bool) -> int:
    best, best_score = 0, threshold
    for candidate in range(1, len(decision.values)):
        score = sum(w * x for w, x in zip(weights, _inputs(decision, candidate, with_search), strict=True))
        if score > best_score:
            best, best_score = candidate, score
    return best


def mean_gain(decisions: Sequence[Decision], pick: Callable[[Decision], int]) -> float:
    """The mean advantage, over the policy's first choice, of the candidate ``pick`` chooses."""
    return sum(d.values[pick(d)] - d.values[0] for d in decisions) / max(1, len(decisions))


def reranked(weights: Sequence[float], threshold: float) -> OrderFn:
    """``great``'s order with a candidate moved first when the fit predicts it gains more than
    ``threshold``."""

    def order(view: View) -> list[int]:
        base = great_order(view)
        cands = legal_candidates(view, great_order, CANDIDATES)
        if len(cands) < 2 or cands[0] == view.hand:
            return base
        features = candidate_features(view, cands)
        decision = Decision(tuple(features), tuple(0.0 for _ in cands))
        best = chosen(decision, weights, threshold, False)
        return list(base) if best == 0 else [cands[best], *(m for m in base if m != cands[best])]

    return order


Player = Callable[[Deal, random.Random], int]
"""The mask the seat to act plays (0: a pass), decided from that seat's view only."""


def order_player(order: OrderFn) -> Player:
    def play(deal: Deal, rng: random.Random) -> int:
        view = view_in_deal(deal)
        return finalize(view, order(view))

    return play


def pro_player(pro: ProBot) -> Player:
    def play(deal: Deal, rng: random.Random) -> int:
        observation = observe(deal, deal.to_act, with_history=True)
        return pro.search(observation, deal.ruleset, view_of(observation, deal.ruleset), rng)

    return play


def duel(
    ruleset: Ruleset,
    player: Player,
    seed: int,
    deals: int,
    seating: Seating,
    progress: Progress = _silent,
    name: str = "re-ranked great",
) -> list[float]:
    """``player`` against ``great`` at the tables of ``bigtwo tournament --seating`` (``player``
    first, ``great`` the field): per deal, the better-is-positive difference of their utilities."""
    players = {"measured": player, "great": order_player(great_order)}
    tables = tables_of(tuple(players), ruleset.players, seating)
    per_deal = []
    for index in range(deals):
        cards = deal_from_code(deal_code(seed, index), ruleset)
        sums = dict.fromkeys(players, 0.0)
        counts = dict.fromkeys(players, 0)
        for number, table in enumerate(tables):
            rngs = [random.Random(f"learned-study/{seed}/{index}/{number}/{seat}") for seat in range(ruleset.players)]
            values = _play_table(Deal.start(ruleset, cards), [players[level] for level in table.seats], rngs)
            for seat in table.counted:
                sums[table.seats[seat]] += values[seat]
                counts[table.seats[seat]] += 1
        per_deal.append(sums["measured"] / counts["measured"] - sums["great"] / counts["great"])
        progress(f"{name} against great, seating {seating.value}", index + 1, deals)
    return per_deal


def _play_table(deal: Deal, players: list[Player], rngs: list[random.Random]) -> list[float]:
    while not deal.over:
        seat = deal.to_act
        _play(deal, seat, players[seat](deal, rngs[seat]))
    return [utility(deal.ruleset, deal, seat) for seat in range(deal.ruleset.players)]


class _LearnedFirstPro(ProBot):
    """pro whose candidates, and so its choice when none is shown better, come from the fitted
    order; its rollouts and its model of the other seats stay ``great``."""

    def __init__(self, order: OrderFn) -> None:
        super().__init__()
        self.first = order

    def candidates(self, view: View) -> list[int]:
        return legal_candidates(view, self.first, self.budget.candidates) or [finalize(view, [])]


def pro_duels(ruleset: Ruleset, order: OrderFn, seed: int, deals: int, progress: Progress) -> dict[str, object]:
    """pro, and pro with the fitted order as its first choice or as its playouts, each alone in
    each seat against ``great`` (seating ``field``), the variants paired against pro."""
    variants = {
        "pro": ProBot(),
        "pro_learned_first_choice": _LearnedFirstPro(order),
        "pro_learned_playouts": ProBot(policy=order),
    }
    per_deal = {
        name: duel(ruleset, pro_player(bot), seed, deals, Seating.FIELD, progress, name)
        for name, bot in variants.items()
    }
    out: dict[str, object] = {"deals": deals}
    for name, diffs in per_deal.items():
        entry = _summary(mean_ci(diffs))
        if name != "pro":
            entry["minus_pro"] = _summary(mean_ci([a - b for a, b in zip(diffs, per_deal["pro"], strict=True)]))
        out[name] = entry
    return out


def _summary(interval: tuple[float, float, float]) -> dict[str, object]:
    mean, low, high = interval
    return {"mean": round(mean, 4), "ci95": [round(low, 4), round(high, 4)]}


def oracle(decision: Decision) -> int:
    """The candidate that was best with the hands known."""
    return max(range(len(decision.values)), key=decision.values.__getitem__)


def learned_gains(decisions: Sequence[Decision], weights: Sequence[float], with_search: bool) -> dict[float, float]:
    """Per threshold, the mean gain of the fit's choice."""

    def gain(threshold: float) -> float:
        return round(mean_gain(decisions, lambda d: chosen(d, weights, threshold, with_search)), 4)

    return {threshold: gain(threshold) for threshold in THRESHOLDS}


def study(
    ruleset: Ruleset,
    deals: int,
    search_deals: int,
    seed: int,
    progress: Progress = _silent,
    pro_deals: int = 0,
) -> dict[str, object]:
    report: dict[str, object] = {"preset": ruleset.preset, "players": ruleset.players, "deals": deals}
    train = collect(ruleset, seed, deals, False, progress)
    test = collect(ruleset, seed + 1, deals, False, progress)
    weights = fit(train, False)
    report["decisions"] = [len(train), len(test)]
    report["oracle_gain"] = round(mean_gain(test, oracle), 4)
    report["learned_gain"] = learned_gains(test, weights, False)
    on_train = learned_gains(train, weights, False)
    threshold = max(THRESHOLDS, key=on_train.__getitem__)
    learned = reranked(weights, threshold)
    duels: dict[str, object] = {"threshold": threshold}
    for seating in Seating:
        per_deal = duel(ruleset, order_player(learned), seed + 2, deals, seating, progress)
        duels[seating.value] = _summary(mean_ci(per_deal))
    report["reranked_minus_great"] = duels
    if pro_deals:
        report["pro_minus_great"] = pro_duels(ruleset, learned, seed + 5, pro_deals, progress)
    if search_deals:
        train = collect(ruleset, seed + 3, search_deals, True, progress)
        test = collect(ruleset, seed + 4, search_deals, True, progress)
        weights = fit(train, True)
        report["with_search"] = {
            "decisions": [len(train), len(test)],
            "oracle_gain": round(mean_gain(test, oracle), 4),
            "pro_gain": round(mean_gain(test, lambda d: d.search_pick), 4),
            "learned_gain": learned_gains(test, weights, True),
        }
    return report


def _to_stderr(phase: str, done: int, total: int) -> None:
    if done == total or done % max(1, total // 20) == 0:
        print(f"{phase}: {done}/{total} deals", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bigtwo.tools.learned_study", description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="classic")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--deals", type=int, default=6000, help="deals for each of training, testing and play")
    parser.add_argument("--with-search-deals", type=int, default=0, help="deals for the fit on pro's search (slow)")
    parser.add_argument(
        "--pro-deals", type=int, default=0, help="deals for pro with the fit as its first choice or playouts (slow)"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.deals < 1 or args.with_search_deals < 0 or args.pro_deals < 0:
        parser.error("--deals must be at least 1, --with-search-deals and --pro-deals at least 0")
    try:
        ruleset = Ruleset.from_mapping({"preset": args.preset, "players": args.players})
    except ValueError as refused:
        parser.error(str(refused))
    report = study(ruleset, args.deals, args.with_search_deals, args.seed, _to_stderr, args.pro_deals)
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
