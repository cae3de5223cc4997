"""Rule vectors judged through a running service: ``bigtwo vectors PATH --target HOST:PORT``.

:class:`ServiceJudge` is a ``case -> CaseResult`` callable for
:func:`bigtwo.cli.vectors_cmd.run_vector_files`. Each check goes to one RPC:

* ``kind``  -> NameCards (ruleset, cards): the kind, or the refusal;
* ``beats`` -> NameCards (ruleset, cards, table): playable, or the refusal;
* ``legal`` -> LegalMoves (a loose hand against a table): how many plays;
* ``score`` -> ScoreDeal (cards-left counts);
* ``game``  -> ReplayLog (explicit hands, context, moves): the first refusal, or the table.

The verdict text is the engine judge's (:mod:`bigtwo.engine.vectors`), so the same case gives the
same line whether it is judged locally or through the service.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from bigtwo.codec.contexts import context_to_pb
from bigtwo.codec.plays import KIND_FROM_PB
from bigtwo.codec.rulesets import ruleset_to_pb
from bigtwo.engine import DealContext, Ruleset
from bigtwo.engine.vectors import CaseResult, canonical, expected_text
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import service_pb2_grpc as rpc
from bigtwo.v1 import types_pb2 as pb


def ruleset_message(data: Mapping[str, Any] | None) -> pb.Ruleset:
    """A vector's ruleset (the vectors' JSON form) as the message: read by the engine, as the local
    judge reads it (so a ruleset the engine refuses gives the same error line either way), and
    written by the codec, as every client writes a ruleset."""
    return ruleset_to_pb(Ruleset.from_mapping(data or {}))


def _kind_id(kind: int) -> str:
    known = KIND_FROM_PB.get(kind)
    return known.value if known is not None else pb.Kind.Name(kind).removeprefix("KIND_").lower().replace("_", "-")


class ServiceJudge:
    """Judge vector cases through the service at ``target`` (``HOST:PORT``)."""

    def __init__(self, target: str, *, timeout: float = 10.0, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.channel = grpc.insecure_channel(target)
        self.stub = rpc.BigTwoServiceStub(self.channel)
        self.timeout = timeout
        self.metadata = metadata

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> ServiceJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, case: Mapping[str, Any]) -> CaseResult:
        case_id = str(case.get("id", "?"))
        expected = expected_text(case)
        try:
            got = self._run(case)
        except grpc.RpcError as exc:
            got = f"error {exc.code().name}: {exc.details()}"
        except (KeyError, TypeError, ValueError) as exc:
            got = f"error {type(exc).__name__}: {exc}"
        return CaseResult(case_id, got == expected, expected, got)

    def _call(self, method: str, request: Any) -> Any:
        return getattr(self.stub, method)(request, timeout=self.timeout, metadata=self.metadata)

    def _run(self, case: Mapping[str, Any]) -> str:
        rules = ruleset_message(case.get("ruleset"))
        check = case.get("check")
        if check == "kind":
            reply = self._call("NameCards", api.NameCardsRequest(cards=str(case["cards"]), ruleset=rules))
            if reply.HasField("refusal"):
                return f"refused {reply.refusal.reason_id}"
            return _kind_id(reply.kind)
        if check == "beats":
            reply = self._call(
                "NameCards", api.NameCardsRequest(cards=str(case["play"]), ruleset=rules, table=str(case["table"]))
            )
            return f"refused {reply.refusal.reason_id}" if reply.HasField("refusal") else "true"
        if check == "legal":
            position = api.HandPosition(ruleset=rules, hand=str(case["hand"]), table=str(case.get("table") or ""))
            return str(len(self._call("LegalMoves", api.LegalMovesRequest(position=position)).plays))
        if check == "score":
            counts = api.CardCounts(
                ruleset=rules,
                cards_left=[int(n) for n in case["cards_left"]],
                twos_left=[int(n) for n in case.get("twos_left") or []],
            )
            return str(list(self._call("ScoreDeal", api.ScoreDealRequest(counts=counts)).scores))
        if check == "game":
            return self._game(case, rules)
        raise ValueError(f"unknown check {check!r}")

    def _game(self, case: Mapping[str, Any], rules: pb.Ruleset) -> str:
        context_data = case.get("context") or {}
        previous = context_data.get("previous_winner")
        context = DealContext(int(context_data.get("deal_number", 1) or 1), None if previous is None else int(previous))
        log = pb.GameLog(
            ruleset=rules,
            explicit_deal=pb.ExplicitDeal(hands=[str(h) for h in case["hands"]]),
            context=context_to_pb(context),
            moves=[str(m) for m in case.get("moves", [])],
        )
        reply = self._call("ReplayLog", api.ReplayLogRequest(log=log))
        expect = case.get("expect", {})
        if reply.refused:
            return canonical({"refused_at": reply.refused_at, "reason": reply.refusal.reason_id})
        if "refused_at" in expect:
            return "no refusal; all moves accepted"
        table = reply.table
        outcome = {
            "next_seat": None if table.over else table.to_act,
            "leader": table.leader,
            "winner": table.winner if table.over else None,
            "cards_left": list(table.cards_left),
            "scores": list(table.scores) if table.over else None,
            "over": table.over,
        }
        return canonical({k: outcome.get(k) for k in expect} if expect else outcome)
