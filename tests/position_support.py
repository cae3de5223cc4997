"""Deals set up at the start of a trick, for the bot and endgame tests."""

from __future__ import annotations

from collections.abc import Sequence

from bigtwo.engine import Deal, DealState, Ruleset


def trick_start(ruleset: Ruleset, hands: Sequence[int], leader: int, *, played: int = 0, moves_made: int = 0) -> Deal:
    """A first deal with ``hands`` dealt, ``played`` already out and ``leader`` to lead any play."""
    state = DealState(
        hands=tuple(hands),
        to_act=leader,
        leader=leader,
        table_mask=0,
        table_kind=None,
        table_key=-1,
        last_player=-1,
        passes=0,
        passed=0,
        played=played,
        opening_card=-1,
        winner=-1,
        moves_made=moves_made,
        deal_number=1,
        start_sizes=(),
    )
    return Deal.from_state(ruleset, state)
