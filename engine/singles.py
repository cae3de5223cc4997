"""The two rules about singles (RULES.md options ``single_two_last`` and ``next_has_one_card``),
each written once, as a predicate on masks.

Verification (:meth:`bigtwo.engine.deal.Deal.verify`), move generation
(:meth:`~bigtwo.engine.deal.Deal.legal_encoded`, which every bot plays from) and the timed-out move
(:func:`bigtwo.engine.hints.timeout_move`) all ask these two functions, so what a seat may play,
what it is offered and what the clock plays for it cannot drift apart.

Both read their option from the ruleset's :class:`~bigtwo.engine.tables.RuleTables` (a field
lookup, not an enum comparison: generation asks on every call).
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import TWOS_MASK
from .tables import RuleTables


def forced_single(tables: RuleTables, hands: Sequence[int], seat: int) -> int:
    """``next_has_one_card = highest-single``: the only single ``seat`` may play, as a card mask, or
    0 when any single may be played.

    The rule binds while the next seat in seat order holds one card (RULES.md Decision: whether or
    not that seat has passed); the single must then be the strongest card of the hand under the
    suit order. Passing and plays of more cards stay free."""
    if tables.highest_single and hands[(seat + 1) % tables.players].bit_count() == 1:
        return 1 << tables.highest_card_in(hands[seat])
    return 0


def single_two_out(tables: RuleTables, hand: int, following: bool) -> bool:
    """``single_two_last = forbidden``: True when a single played from ``hand`` would go out on a
    2 while following a trick (HK rule 4), that is when the hand is a lone 2: no single may then be
    played, and the seat passes.

    A pair of 2s or a 2 inside a five-card hand may go out, and so may a lone 2 led as the seat's
    last card (RULES.md: "leading with a single 2 as your only card is fine")."""
    return tables.single_two_out_refused and following and hand.bit_count() == 1 and hand & TWOS_MASK != 0


__all__ = ["forced_single", "single_two_out"]
