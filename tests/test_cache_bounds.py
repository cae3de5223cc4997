"""Every cache has a bound: a caller chooses the keys (any ruleset, any hand, any token), so no memo
may grow with them. The service's bounds are lowered here so that the tests fill them."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from bigtwo.engine import DealCode, Ruleset, classify_mask, tables_for
from bigtwo.engine.generate import CARD_MASK, all_plays

PACKAGES = ("bigtwo.engine", "bigtwo.service", "bigtwo.engine.replay")


def modules() -> list[Any]:
    out = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        out.append(package)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            if info.name.endswith(("bench", ".commands", "render_terminal")):
                continue  # commands and benchmarks, not the service's code
            out.append(importlib.import_module(info.name))
    return out


def test_no_functools_cache_is_unbounded() -> None:
    for module in modules():
        for attr, value in vars(module).items():
            info = getattr(value, "cache_info", None)
            if callable(info) and getattr(value, "__module__", "") == module.__name__:
                assert info().maxsize is not None, f"{module.__name__}.{attr} caches without a bound"


# The engine's own bounds (the bots' splits, classified plays, rule tables) are tested in
# tests/test_cache.py, with the one memo type they all use.


# -- the service's memos ---------------------------------------------------------------------------


def module_dicts() -> dict[str, int]:
    """The size of every dictionary the service's modules hold, by module and name."""
    sizes = {}
    for module in modules():
        if module.__name__.startswith("bigtwo.service"):
            for attr, value in vars(module).items():
                if isinstance(value, dict) and not attr.startswith("__"):
                    sizes[f"{module.__name__}.{attr}"] = len(value)
    return sizes


def test_no_service_module_keeps_a_memo_of_its_own() -> None:
    # Every memo of the service is a BoundedCache (bounded, and counted in bigtwo_cache_*): calls
    # about many rulesets, deals and tokens leave every module-level dictionary as it was.
    from bigtwo.engine.cache import BoundedCache, cache_stats
    from bigtwo.service.core import CallInfo
    from bigtwo.service.servicer import ServiceCore
    from bigtwo.service.tokens import KeyRing, TokenCodec
    from bigtwo.v1 import service_pb2 as api
    from bigtwo.v1 import types_pb2 as pb

    for module in modules():
        for attr, value in vars(module).items():
            if module.__name__.startswith("bigtwo.service"):
                assert not callable(getattr(value, "cache_info", None)), (
                    f"{module.__name__}.{attr} is a functools cache"
                )
    core = ServiceCore(TokenCodec(KeyRing([b"k" * 32])))
    before = module_dicts()
    for n in range(40):
        ruleset = pb.Ruleset(preset="classic", options={"match": f"deals:{n + 1}"})
        dealt = core.deal(api.DealRequest(ruleset=ruleset, deal_code=str(DealCode(n + 2))), CallInfo())
        game = pb.Game(state_token=dealt.state_token)
        legal = core.legal_moves(api.LegalMovesRequest(game=game), CallInfo())
        move = pb.Move(index=0, seat=legal.seat, text=legal.plays[0].cards.text)
        core.apply_move(api.ApplyMoveRequest(game=game, move=move), CallInfo())
    assert module_dicts() == before
    owners = {stats.owner for stats in cache_stats()}
    assert {"service.tokens.snapshots", "service.wire.outcomes", "service.deal_ids.names"} <= owners
    assert all(stats.entries <= stats.capacity for stats in cache_stats())
    assert isinstance(core.games.deal_ids._names, BoundedCache)


def test_the_wire_parts_are_bounded_whatever_the_plays(monkeypatch: pytest.MonkeyPatch) -> None:
    from bigtwo.engine import CardsPlayed
    from bigtwo.service import wire

    monkeypatch.setattr(wire, "LIMIT", 20)
    ruleset = Ruleset.from_mapping({"match": "deals:77"})
    parts = wire.RulesetParts(ruleset)  # made after the lowered limit: its caches hold 20
    tables = tables_for(ruleset)
    hand = sum(1 << card for card in range(18))
    plays = [classify_mask(encoded & CARD_MASK, tables) for encoded in all_plays(hand, tables)]
    assert len(plays) > 100
    for play in plays:
        outcome = parts.outcome(play.mask, play.kind, play.key)
        assert parts.outcome(play.mask, play.kind, play.key) is outcome  # a hit
        parts.play_on_table(play.mask, play.kind, play.key)
        parts.played_event(CardsPlayed(1, play.mask, play.kind, play.key, 0))
        for cache in (parts.outcomes, parts.plays_on_table, parts.cards_played):
            assert len(cache) <= 20
    assert parts.outcomes.stats().clears >= len(plays) // 20 - 1


def test_deal_names_and_identities_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from bigtwo.service import deal_ids, tokens

    monkeypatch.setattr(deal_ids, "_REMEMBERED", 10)
    names = deal_ids.DealIds(b"k" * 32)
    for value in range(200):
        identity = tokens.identity_of(value % 2 == 0, value)
        assert names.of(identity) == deal_ids.DealIds(b"k" * 32).of(identity)
        assert len(names._names) <= 10
        assert len(tokens._IDENTITIES) <= tokens._IDENTITIES.capacity


def test_issued_tokens_keep_two_generations_at_most() -> None:
    from bigtwo.service import tokens

    issued = tokens.IssuedTokens(size=5)
    snaps = {}
    for n in range(53):
        token = n.to_bytes(4, "big")
        snaps[token] = tokens.Snapshot(Ruleset(), tokens.identity_of(False, n), -1, -1, None)  # type: ignore[arg-type]
        issued.add(token, snaps[token])
        assert len(issued.newer) + len(issued.older) <= 10
    for n in range(48, 53):  # the last generation is always known
        token = n.to_bytes(4, "big")
        assert issued.get(token) is snaps[token]
    assert issued.get((0).to_bytes(4, "big")) is None
    assert issued.newer.stats().owner == "service.tokens.snapshots"
    assert issued.newer.stats().clears + issued.older.stats().clears == 9  # a generation dropped each 5 issues
