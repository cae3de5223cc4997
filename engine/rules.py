"""Rulesets: every option of RULES.md with its stable name, the six presets, loading from
mappings (JSON/TOML), a canonical form and its fingerprint, and a description in words.

A :class:`Ruleset` is plain data. Everything derived from it that hot paths need (card strengths,
straight tables) is built once per ruleset in :mod:`bigtwo.engine.tables`.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum, StrEnum
from typing import Any, TypeVar

from .cards import Suit
from .errors import RulesetError
from .straights import ACE_TWO_LOW, TAIWAN, TWOS_HIGH, Ladder, parse_ladder


class SuitOrder(StrEnum):
    """Suits from lowest to highest."""

    DCHS = "DCHS"
    CDHS = "CDHS"
    CSHD = "CSHD"

    def strength(self, suit: Suit) -> int:
        """0 for the lowest suit of this order, 3 for the highest."""
        return self.value.index(suit.letter)

    @property
    def lowest(self) -> Suit:
        return Suit("DCHS".index(self.value[0]))

    @property
    def highest(self) -> Suit:
        return Suit("DCHS".index(self.value[3]))


class Flush(StrEnum):
    SUIT_FIRST = "suit-first"
    RANK_FIRST = "rank-first"
    NONE = "none"


class Triples(StrEnum):
    ALLOWED = "allowed"
    ONLY_IN_FULL_HOUSE = "only-in-full-house"


class Opening(StrEnum):
    LOWEST_CARD_EVERY_DEAL = "lowest-card-every-deal"
    WINNER_LEADS = "winner-leads"


class TwoPlayerStart(StrEnum):
    LOWEST_DEALT_CARD = "lowest-dealt-card"
    RESHUFFLE_UNTIL_LOWEST = "reshuffle-until-lowest"


class AfterPass(StrEnum):
    MAY_PLAY_AGAIN = "may-play-again"
    OUT_UNTIL_TRICK_ENDS = "out-until-trick-ends"


class SingleTwoLast(StrEnum):
    ALLOWED = "allowed"
    FORBIDDEN = "forbidden"


class NextHasOneCard(StrEnum):
    FREE = "free"
    HIGHEST_SINGLE = "highest-single"


class Switch(StrEnum):
    OFF = "off"
    ON = "on"


class Penalty(StrEnum):
    TIERED = "tiered"
    HARSH = "harsh"
    FLAT = "flat"
    NONE = "none"


class Settlement(StrEnum):
    PENALTY = "penalty"
    ZERO_SUM = "zero-sum"


class MatchKind(StrEnum):
    DEALS = "deals"
    TARGET = "target"
    SINGLE = "single"
    OPEN = "open"


@dataclass(frozen=True, slots=True)
class MatchLength:
    """``deals:N``, ``target:T``, ``single`` or ``open``."""

    kind: MatchKind
    amount: int = 0

    def __str__(self) -> str:
        return (
            f"{self.kind.value}:{self.amount}" if self.kind in (MatchKind.DEALS, MatchKind.TARGET) else self.kind.value
        )

    @classmethod
    def parse(cls, value: object) -> MatchLength:
        if isinstance(value, MatchLength):
            return value
        text = str(value).strip().lower()
        valid = ("deals:N", "target:T", "single", "open")
        if text in ("single", "open"):
            return cls(MatchKind(text))
        kind, _, amount = text.partition(":")
        if kind in ("deals", "target") and amount.isdigit() and int(amount) > 0:
            return cls(MatchKind(kind), int(amount))
        raise RulesetError(
            f"match: unknown value {value!r}; valid values: {', '.join(valid)} (N, T positive whole numbers)",
            option="match",
            valid=valid,
        )


@dataclass(frozen=True, slots=True)
class Ruleset:
    """One table's rules. Field names are RULES.md's option names (``-`` for ``_`` in text)."""

    players: int = 4
    cards_each: int = 13
    suit_order: SuitOrder = SuitOrder.DCHS
    straights: Ladder = ACE_TWO_LOW
    flush: Flush = Flush.SUIT_FIRST
    triples: Triples = Triples.ALLOWED
    opening: Opening = Opening.LOWEST_CARD_EVERY_DEAL
    two_player_start: TwoPlayerStart = TwoPlayerStart.LOWEST_DEALT_CARD
    after_pass: AfterPass = AfterPass.MAY_PLAY_AGAIN
    single_two_last: SingleTwoLast = SingleTwoLast.ALLOWED
    next_has_one_card: NextHasOneCard = NextHasOneCard.FREE
    dragon: Switch = Switch.OFF
    auto_pass: Switch = Switch.OFF
    penalty: Penalty = Penalty.TIERED
    twos_double: Switch = Switch.OFF
    settlement: Settlement = Settlement.PENALTY
    match: MatchLength = MatchLength(MatchKind.DEALS, 8)
    preset: str = "classic"
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        # Rulesets key every per-ruleset cache (tables, plays, tokens): the hash is computed once,
        # so a lookup does not hash the ladders of frozensets again on every move.
        return self._hash

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Rebuilt through __init__ so the receiving process computes its own hash (str hashes
        # differ between processes).
        return (Ruleset, tuple(getattr(self, name) for name in _INIT_FIELDS))

    def __post_init__(self) -> None:
        if self.players == 3 and self.cards_each != 17:
            # RULES.md Decision: 3 players always get 17, so the canonical form says so too.
            object.__setattr__(self, "cards_each", 17)
        if self.players not in (2, 3, 4):
            raise RulesetError(
                f"players: unknown value {self.players!r}; valid values: 2, 3, 4",
                option="players",
                valid=("2", "3", "4"),
            )
        if self.cards_each not in (13, 17):
            raise RulesetError(
                f"cards_each: unknown value {self.cards_each!r}; valid values: 13, 17",
                option="cards_each",
                valid=("13", "17"),
            )
        if self.players == 4 and self.cards_each == 17:
            raise RulesetError(
                "cards_each: 4 players always get 13 cards each (17 is for 2 or 3 players)",
                option="cards_each",
                valid=("13",),
            )
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, name) for name in _COMPARED)))

    # -- derived facts -------------------------------------------------------------------------

    @property
    def hand_size(self) -> int:
        """Cards dealt to each seat. RULES.md Decision: 3 players always get 17."""
        if self.players == 3:
            return 17
        if self.players == 4:
            return 13
        return self.cards_each

    def to_mapping(self) -> dict[str, Any]:
        """Every option by its stable name, values in their text form (the canonical form)."""
        out: dict[str, Any] = {"preset": self.preset}
        for name in OPTION_NAMES:
            out[name] = _value_to_data(getattr(self, name))
        return out

    def overrides(self) -> dict[str, Any]:
        """Only the options that differ from this ruleset's preset."""
        base = PRESETS[self.preset].to_mapping() if self.preset in PRESETS else Ruleset().to_mapping()
        mine = self.to_mapping()
        return {k: v for k, v in mine.items() if k != "preset" and base.get(k) != v}

    def canonical_json(self) -> str:
        data = self.to_mapping()
        data.pop("preset")  # the same rules reached from two presets are the same rules
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    @property
    def fingerprint(self) -> str:
        """First 16 hex digits of SHA-256 over the canonical JSON of the options (preset excluded)."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    def with_options(self, **options: Any) -> Ruleset:
        return Ruleset.from_mapping({**self.to_mapping(), **options})

    # -- loading -------------------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Ruleset:
        """``{"preset": "web", "suit_order": "CDHS"}``: a preset (default ``classic``) plus overrides."""
        if not isinstance(data, Mapping):
            raise RulesetError(f"a ruleset is a mapping of option names to values, got {type(data).__name__}")
        data = _flatten_options(data)
        preset_name = str(data.get("preset", "classic") or "classic")
        base = preset(preset_name)
        changes: dict[str, Any] = {}
        for raw_key, raw_value in data.items():
            key = str(raw_key).replace("-", "_")
            if key == "preset":
                continue
            if key not in _PARSERS:
                raise RulesetError(
                    f"unknown option {raw_key!r}; valid options: {', '.join(OPTION_NAMES)}",
                    option=str(raw_key),
                    valid=OPTION_NAMES,
                )
            changes[key] = _PARSERS[key](raw_value)
        return replace(base, **changes) if changes else base

    @classmethod
    def from_json(cls, text: str) -> Ruleset:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RulesetError(f"ruleset JSON does not parse: {exc}") from None
        return cls.from_mapping(data)

    @classmethod
    def from_toml(cls, text: str) -> Ruleset:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RulesetError(f"ruleset TOML does not parse: {exc}") from None
        if "ruleset" in data and isinstance(data["ruleset"], dict):
            data = data["ruleset"]
        return cls.from_mapping(data)

    def to_toml(self) -> str:
        lines = [f'preset = "{self.preset}"']
        for key, value in self.overrides().items():
            lines.append(f"{key} = {json.dumps(value)}")
        return "\n".join(lines) + "\n"

    def describe(self) -> tuple[str, ...]:
        """The table's rules in words, one line per option (HK: the table shows its rules)."""
        from .describe import describe_ruleset

        return describe_ruleset(self)


_INIT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Ruleset) if f.init)
_COMPARED: tuple[str, ...] = tuple(f.name for f in fields(Ruleset) if f.compare)
OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Ruleset) if f.name not in ("preset", "_hash"))

E = TypeVar("E", bound=Enum)


def _enum_parser(option: str, enum_type: type[E]) -> Any:
    def parse(value: object) -> E:
        if isinstance(value, enum_type):
            return value
        if isinstance(value, bool) and {m.value for m in enum_type} == {"on", "off"}:
            return enum_type("on" if value else "off")
        text = str(value).strip()
        for member in enum_type:
            if member.value == text or member.value == text.lower() or member.name == text.upper().replace("-", "_"):
                return member
        valid = tuple(str(m.value) for m in enum_type)
        raise RulesetError(
            f"{option}: unknown value {value!r}; valid values: {', '.join(valid)}", option=option, valid=valid
        )

    return parse


def _int_parser(option: str, valid: tuple[int, ...]) -> Any:
    def parse(value: object) -> int:
        try:
            number = int(str(value).strip()) if not isinstance(value, bool) else -1
        except ValueError:
            number = -1
        if number not in valid:
            text = tuple(str(v) for v in valid)
            raise RulesetError(
                f"{option}: unknown value {value!r}; valid values: {', '.join(text)}", option=option, valid=text
            )
        return number

    return parse


_PARSERS: dict[str, Any] = {
    "players": _int_parser("players", (2, 3, 4)),
    "cards_each": _int_parser("cards_each", (13, 17)),
    "suit_order": _enum_parser("suit_order", SuitOrder),
    "straights": parse_ladder,
    "flush": _enum_parser("flush", Flush),
    "triples": _enum_parser("triples", Triples),
    "opening": _enum_parser("opening", Opening),
    "two_player_start": _enum_parser("two_player_start", TwoPlayerStart),
    "after_pass": _enum_parser("after_pass", AfterPass),
    "single_two_last": _enum_parser("single_two_last", SingleTwoLast),
    "next_has_one_card": _enum_parser("next_has_one_card", NextHasOneCard),
    "dragon": _enum_parser("dragon", Switch),
    "auto_pass": _enum_parser("auto_pass", Switch),
    "penalty": _enum_parser("penalty", Penalty),
    "twos_double": _enum_parser("twos_double", Switch),
    "settlement": _enum_parser("settlement", Settlement),
    "match": MatchLength.parse,
}


def _value_to_data(value: object) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Ladder):
        return value.to_data()
    if isinstance(value, MatchLength):
        return str(value)
    return value


CLASSIC = Ruleset()
PRESETS: dict[str, Ruleset] = {
    "classic": CLASSIC,
    "web": replace(
        CLASSIC,
        preset="web",
        straights=TWOS_HIGH,
        settlement=Settlement.ZERO_SUM,
        match=MatchLength(MatchKind.OPEN),
    ),
    "hong-kong": replace(
        CLASSIC,
        preset="hong-kong",
        straights=TWOS_HIGH,
        flush=Flush.RANK_FIRST,
        dragon=Switch.ON,
        opening=Opening.WINNER_LEADS,
        next_has_one_card=NextHasOneCard.HIGHEST_SINGLE,
        auto_pass=Switch.ON,
    ),
    "taiwan": replace(
        CLASSIC,
        preset="taiwan",
        suit_order=SuitOrder.CDHS,
        straights=TAIWAN,
        flush=Flush.NONE,
        penalty=Penalty.NONE,
        match=MatchLength(MatchKind.SINGLE),
        two_player_start=TwoPlayerStart.RESHUFFLE_UNTIL_LOWEST,
    ),
    "pusoy-dos": replace(CLASSIC, preset="pusoy-dos", suit_order=SuitOrder.CSHD),
}
PRESETS["hong-kong-strict"] = replace(
    PRESETS["hong-kong"], preset="hong-kong-strict", single_two_last=SingleTwoLast.FORBIDDEN
)
def _flatten_options(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A ruleset written as a preset plus an ``options`` table (``[options]`` in TOML, ``"options":
    {...}`` in JSON) is read as the flat form, the options beside the preset; an option given in both
    places, or an ``options`` that is not a table, is refused with the form to use."""
    nested = data.get("options")
    if nested is None:
        return data
    flat_form = 'preset = "classic" and the options beside it (penalty = "flat"), or [options] holding only options'
    if not isinstance(nested, Mapping):
        raise RulesetError(f"'options' is a table of option names to values; write {flat_form}", option="options")
    if "preset" in nested:
        raise RulesetError(f"the preset goes beside [options], not inside it: write {flat_form}", option="options")
    both = sorted(set(map(str, nested)) & {str(key) for key in data if key != "options"})
    if both:
        raise RulesetError(f"{', '.join(both)} given both beside the preset and under [options]; give each once")
    return {**{key: value for key, value in data.items() if key != "options"}, **nested}


PRESET_NAMES: tuple[str, ...] = ("classic", "web", "hong-kong", "hong-kong-strict", "taiwan", "pusoy-dos")

PRESET_SUMMARIES: dict[str, str] = {
    # One line for a player choosing a table (the browser's rules menu, ListPresets): the game's
    # words, never the names of the sources RULES.md was written from.
    "classic": "the common rules: suits ♦ < ♣ < ♥ < ♠, A-2-3-4-5 the lowest straight, flushes compare by suit, "
    "3♦ leads every deal, penalty points for cards left, 8 deals",
    "web": "as online rooms play it: suits ♦ < ♣ < ♥ < ♠, straights up to 2-high, flushes compare by suit, "
    "the lowest card leads, zero-sum scores, play on as long as you like",
    "hong-kong": "as Hong Kong tables play it: straights up to 2-high, flushes compare by rank, a dragon wins at "
    "once, the winner leads the next deal, your highest single when the next player has one card left, "
    "automatic passes, 8 deals",
    "hong-kong-strict": "hong-kong, and no going out on a single 2",
    "taiwan": "as Taiwan plays it: suits ♣ < ♦ < ♥ < ♠ (3♣ leads), Taiwan straights, no plain flush, "
    "one deal with no scoring; 2 players reshuffle until 3♣ is dealt",
    "pusoy-dos": "the Philippine game: suits ♣ < ♠ < ♥ < ♦ (diamonds highest, 3♣ leads), otherwise classic",
}


def preset(name: str) -> Ruleset:
    """A preset by name; an unknown name lists the valid ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise RulesetError(
            f"preset: unknown value {name!r}; valid values: {', '.join(PRESET_NAMES)}",
            option="preset",
            valid=PRESET_NAMES,
        ) from None
