"""Plays and refusals: :class:`~bigtwo.engine.Play` <-> ``bigtwo.v1.Play``, kinds and reasons <-> their
enums, a :class:`~bigtwo.engine.Refusal` -> ``bigtwo.v1.Refusal``.

A play's message is the same every time it is written under one ruleset, and one is written on
every move, so :class:`RulesetMessages` builds each once per ruleset; callers copy it (constructor
argument, ``CopyFrom``) and never change it.
"""

from __future__ import annotations

from typing import cast

from bigtwo.engine import Kind, Play, Reason, Refusal, Ruleset, RuleTables, classify_mask, play_name, tables_for
from bigtwo.engine.cache import BoundedCache, IdentityCache
from bigtwo.v1 import types_pb2 as pb

from .cards import card_set

KIND_TO_PB: dict[Kind, pb.Kind] = {kind: cast(pb.Kind, pb.Kind.Value("KIND_" + kind.name)) for kind in Kind}
KIND_FROM_PB: dict[int, Kind] = {value: kind for kind, value in KIND_TO_PB.items()}
REASON_TO_PB: dict[Reason, pb.Reason] = {
    reason: cast(pb.Reason, pb.Reason.Value("REASON_" + reason.name)) for reason in Reason
}
REASON_FROM_PB: dict[int, Reason] = {value: reason for reason, value in REASON_TO_PB.items()}


class RulesetMessages:
    """The messages of one ruleset that many answers share, each built once: plays by mask."""

    __slots__ = ("_tables", "fingerprint", "plays", "ruleset")

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.fingerprint = ruleset.fingerprint
        self.plays: BoundedCache[int, pb.Play] = BoundedCache("codec.plays", 8192)
        self._tables: RuleTables | None = None

    def play(self, mask: int, kind: Kind, key: int) -> pb.Play:
        message = self.plays.get(mask)
        if message is None:
            tables = self._tables
            if tables is None:
                tables = self._tables = tables_for(self.ruleset)
            name = play_name(Play(mask, kind, key), tables)
            message = self.plays.put(mask, pb.Play(cards=card_set(mask), kind=KIND_TO_PB[kind], name=name))
        return message


messages_for: IdentityCache[Ruleset, RulesetMessages] = IdentityCache("codec.ruleset_messages", RulesetMessages, 16)
"""The shared messages of a ruleset, by the ruleset's identity (rulesets hash and compare slowly)."""


def play_to_pb(play: Play, ruleset: Ruleset) -> pb.Play:
    """A play as a message (shared: copy it, never change it)."""
    return messages_for(ruleset).play(play.mask, play.kind, play.key)


def play_from_pb(message: pb.Play, ruleset: Ruleset) -> Play:
    """The play of the message's cards under ``ruleset`` (the kind and key are the engine's reading
    of the cards, not the message's word for them); cards that form nothing raise their Refusal."""
    return classify_mask(message.cards.mask, tables_for(ruleset))


def refusal_to_pb(refusal: Refusal) -> pb.Refusal:
    return pb.Refusal(reason=REASON_TO_PB[refusal.reason], reason_id=refusal.reason.value, message=refusal.message)


def reason_from_pb(message: pb.Refusal) -> Reason | None:
    """The reason of a refusal message (by its enum, else by its RULES.md id), None for no refusal."""
    if not message.reason and not message.reason_id:
        return None
    return REASON_FROM_PB.get(message.reason) or Reason(message.reason_id)


__all__ = [
    "KIND_FROM_PB",
    "KIND_TO_PB",
    "REASON_FROM_PB",
    "REASON_TO_PB",
    "RulesetMessages",
    "messages_for",
    "play_from_pb",
    "play_to_pb",
    "reason_from_pb",
    "refusal_to_pb",
]
