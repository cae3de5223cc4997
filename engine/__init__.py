"""bigtwo.engine: the pure Big Two rules library (no I/O, no gRPC).

Start here::

    from bigtwo.engine import Ruleset, DealCode, deal_from_code, Deal, Move

    rules = Ruleset.from_mapping({"preset": "hong-kong"})
    deal = Deal.start(rules, deal_from_code(DealCode.parse("7K3M9QX2AB4H8"), rules))
    deal.verify(Move.play(deal.to_act, "3D"))   # raises a Refusal naming its RULES.md reason
    events = deal.do(Move.play(deal.to_act, "3D"))
"""

from .cards import (
    ALL_CARDS,
    TWOS_MASK,
    Card,
    Rank,
    Suit,
    cards_of,
    mask_of,
    mask_pretty,
    mask_text,
    parse_cards,
    parse_mask,
    seat_ref,
)
from .combos import Kind, Play, check_beats, classify, classify_mask, play_name
from .deal import Deal, DealContext, DealState
from .dealing import DealCode, DealtCards, deal_from_code, explicit_deal, shuffled_deck
from .errors import (
    REFUSAL_CLASSES,
    BadCardError,
    CannotPassLeadingError,
    DealCodeError,
    DealError,
    DoesNotBeatError,
    EventLogError,
    GameOverError,
    MustIncludeOpeningCardError,
    MustPlayHighestSingleError,
    NoFlushError,
    NoLoneTripleError,
    NotACombinationError,
    NotInHandError,
    NoTwoInStraightsError,
    NotYourTurnError,
    Reason,
    Refusal,
    RulesetError,
    SingleTwoLastError,
    WrongSizeError,
)
from .events import CardsPlayed, DealEnded, DealStarted, DragonRevealed, Event, LastCard, Passed, TrickEnded
from .hints import Readout, fewest_plays, hint_cycle, name_cards, next_hint, readout, timeout_move
from .match import DealRecord, Match
from .moves import Move
from .observation import Observation, observe, redact
from .rules import OPTION_NAMES, PRESET_NAMES, PRESET_SUMMARIES, PRESETS, Ruleset, preset
from .scoring import (
    DealSettlement,
    SeatSettlement,
    ending_now,
    ending_now_of,
    settle,
    settle_hands,
    settle_with_winner,
    twos_in,
)
from .singles import forced_single, single_two_out
from .tables import RuleTables, tables_for

__all__ = [
    "ALL_CARDS",
    "OPTION_NAMES",
    "PRESETS",
    "PRESET_NAMES",
    "PRESET_SUMMARIES",
    "REFUSAL_CLASSES",
    "TWOS_MASK",
    "BadCardError",
    "CannotPassLeadingError",
    "Card",
    "CardsPlayed",
    "Deal",
    "DealCode",
    "DealCodeError",
    "DealContext",
    "DealEnded",
    "DealError",
    "DealRecord",
    "DealSettlement",
    "DealStarted",
    "DealState",
    "DealtCards",
    "DoesNotBeatError",
    "DragonRevealed",
    "Event",
    "EventLogError",
    "GameOverError",
    "Kind",
    "LastCard",
    "Match",
    "Move",
    "MustIncludeOpeningCardError",
    "MustPlayHighestSingleError",
    "NoFlushError",
    "NoLoneTripleError",
    "NoTwoInStraightsError",
    "NotACombinationError",
    "NotInHandError",
    "NotYourTurnError",
    "Observation",
    "Passed",
    "Play",
    "Rank",
    "Readout",
    "Reason",
    "Refusal",
    "RuleTables",
    "Ruleset",
    "RulesetError",
    "SeatSettlement",
    "SingleTwoLastError",
    "Suit",
    "TrickEnded",
    "WrongSizeError",
    "cards_of",
    "check_beats",
    "classify",
    "classify_mask",
    "deal_from_code",
    "ending_now",
    "ending_now_of",
    "explicit_deal",
    "fewest_plays",
    "forced_single",
    "hint_cycle",
    "mask_of",
    "mask_pretty",
    "mask_text",
    "name_cards",
    "next_hint",
    "observe",
    "parse_cards",
    "parse_mask",
    "play_name",
    "preset",
    "readout",
    "redact",
    "seat_ref",
    "settle",
    "settle_hands",
    "settle_with_winner",
    "shuffled_deck",
    "single_two_out",
    "tables_for",
    "timeout_move",
    "twos_in",
]
