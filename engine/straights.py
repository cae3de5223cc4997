"""Straight ladders (RULES.md "Straights"): which five-rank sequences are straights, their order,
and the card whose suit breaks a tie between two straights on the same rung.

Ten sequences exist (the Ace at either end, the 2 below the 3); wrap-arounds through K-A-2 never
are. A ladder is data: the four named ladders and any explicit list of rungs are the same type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import RANK_SYMBOLS, Rank
from .errors import RulesetError

# The ten sequences, written as the ranks of their cards (order inside a sequence is irrelevant).
A2345 = frozenset({Rank.ACE, Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE})
S23456 = frozenset({Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE, Rank.SIX})
_PLAIN = tuple(frozenset(Rank(r + i) for i in range(5)) for r in range(0, 8))  # 34567 .. TJQKA
ALL_SEQUENCES: tuple[frozenset[Rank], ...] = (A2345, S23456, *_PLAIN)
SEQUENCES_WITH_TWO = (A2345, S23456)

_SEQUENCE_NAMES = {
    A2345: "A2345",
    S23456: "23456",
    **{seq: "".join(RANK_SYMBOLS[r] for r in sorted(seq)) for seq in _PLAIN},
}


def sequence_name(sequence: frozenset[Rank]) -> str:
    return _SEQUENCE_NAMES[sequence]


def rank_mask_of(ranks: frozenset[Rank]) -> int:
    """13-bit mask of ranks (bit r for rank r)."""
    out = 0
    for rank in ranks:
        out |= 1 << rank
    return out


SEQUENCE_BY_RANK_MASK: dict[int, frozenset[Rank]] = {rank_mask_of(s): s for s in ALL_SEQUENCES}


@dataclass(frozen=True, slots=True)
class Rung:
    """One straight of a ladder and the rank of the card whose suit breaks ties."""

    sequence: frozenset[Rank]
    tie_break: Rank

    def __str__(self) -> str:
        return f"{sequence_name(self.sequence)}/{self.tie_break.symbol}"


@dataclass(frozen=True, slots=True)
class Ladder:
    """Straights allowed under a ruleset, lowest rung first. ``name`` is ``explicit`` for custom ones."""

    name: str
    rungs: tuple[Rung, ...]

    def position(self, sequence: frozenset[Rank]) -> int:
        """Rung index of ``sequence``, or -1 when the ladder does not allow it."""
        for index, rung in enumerate(self.rungs):
            if rung.sequence == sequence:
                return index
        return -1

    def to_data(self) -> str | list[str]:
        """The form written into rulesets: a ladder name, or a list of ``A2345/5`` rungs."""
        if self.name != EXPLICIT:
            return self.name
        return [str(rung) for rung in self.rungs]

    def describe(self) -> str:
        order = " < ".join(sequence_name(rung.sequence) for rung in self.rungs)
        return f"{self.name}: {order}" if self.name != EXPLICIT else f"explicit: {order}"


EXPLICIT = "explicit"


def _top_of(sequence: frozenset[Rank]) -> Rank:
    # The top card of a sequence read as written (A2345 tops at 5, 23456 at 6, TJQKA at A).
    if sequence == A2345:
        return Rank.FIVE
    if sequence == S23456:
        return Rank.SIX
    return max(sequence)


def _rungs(sequences: Sequence[frozenset[Rank]], tie_breaks: dict[frozenset[Rank], Rank]) -> tuple[Rung, ...]:
    return tuple(Rung(seq, tie_breaks.get(seq, _top_of(seq))) for seq in sequences)


ACE_TWO_LOW = Ladder("ace-two-low", _rungs(ALL_SEQUENCES, {}))
TWOS_HIGH = Ladder("twos-high", _rungs((*_PLAIN, S23456, A2345), {S23456: Rank.TWO, A2345: Rank.TWO}))
TAIWAN = Ladder("taiwan", _rungs((A2345, *_PLAIN, S23456), {S23456: Rank.TWO}))
NO_TWOS = Ladder("no-twos", _rungs(_PLAIN, {}))

NAMED_LADDERS: dict[str, Ladder] = {ladder.name: ladder for ladder in (ACE_TWO_LOW, TWOS_HIGH, TAIWAN, NO_TWOS)}


def _parse_sequence(text: str) -> frozenset[Rank]:
    cleaned = text.upper().replace("10", "T").replace("-", "").replace(" ", "").replace(",", "")
    try:
        ranks = frozenset(Rank.parse(ch) for ch in cleaned)
    except ValueError:
        raise RulesetError(f"straights: {text!r} is not a sequence of ranks", option="straights") from None
    if len(cleaned) != 5 or len(ranks) != 5 or ranks not in SEQUENCE_BY_RANK_MASK.values():
        valid = tuple(sequence_name(s) for s in ALL_SEQUENCES)
        raise RulesetError(
            f"straights: {text!r} is not one of the ten straights ({' '.join(valid)})",
            option="straights",
            valid=valid,
        )
    return ranks


_SEQUENCE_KEYS = ("sequence", "ranks", "straight", "cards", "seq")
_TIE_KEYS = ("tie_break", "tiebreak", "tie-break", "tie", "high", "top")


def _parse_rung(item: object) -> Rung:
    seq_text, tie_text = _rung_texts(item)
    sequence = _parse_sequence(seq_text)
    if tie_text is None:
        return Rung(sequence, _top_of(sequence))
    try:
        tie = Rank.parse(tie_text)
    except ValueError:
        raise RulesetError(f"straights: tie-break {tie_text!r} is not a rank", option="straights") from None
    if tie not in sequence:
        raise RulesetError(
            f"straights: tie-break rank {tie.symbol} is not in {sequence_name(sequence)}", option="straights"
        )
    return Rung(sequence, tie)


def _rung_texts(item: object) -> tuple[str, str | None]:
    """(sequence text, tie-break text or None) of a rung written in any of its accepted forms."""
    if isinstance(item, str):
        for separator in ("/", ":", "@"):
            if separator in item:
                seq_text, tie_text = item.split(separator, 1)
                return seq_text, tie_text
        return item, None
    if isinstance(item, (list, tuple)):
        found = _rung_texts_of_list(item)
        if found is not None:
            return found
    if isinstance(item, dict):
        return _rung_texts_of_mapping(item)
    raise RulesetError(
        f"straights: cannot read rung {item!r}; write 'A2345/5', ['A2345', '5'] or "
        "{'sequence': 'A2345', 'tie_break': '5'}",
        option="straights",
    )


def _rung_texts_of_list(item: list[object] | tuple[object, ...]) -> tuple[str, str | None] | None:
    """``["A2345", "5"]``, ``["A2345"]`` or ``["A", "2", "3", "4", "5"]``; None for any other list."""
    if len(item) in (1, 2) and all(isinstance(x, str) for x in item):
        return str(item[0]), str(item[1]) if len(item) == 2 else None
    if len(item) == 5 and all(isinstance(x, (str, int)) for x in item):
        return "".join(str(x) for x in item), None
    return None


def _rung_texts_of_mapping(item: dict[object, object]) -> tuple[str, str | None]:
    seq_keys = [k for k in _SEQUENCE_KEYS if k in item]
    tie_keys = [k for k in _TIE_KEYS if k in item]
    if not seq_keys:
        raise RulesetError(
            'straights: an explicit rung needs a \'sequence\' (e.g. {"sequence": "A2345", "tie_break": "5"})',
            option="straights",
        )
    return str(item[seq_keys[0]]), str(item[tie_keys[0]]) if tie_keys else None


def parse_ladder(value: object) -> Ladder:
    """A ladder name (``twos-high``) or an explicit list of rungs, lowest first."""
    if isinstance(value, Ladder):
        return value
    if isinstance(value, str):
        return _ladder_from_text(value)
    if isinstance(value, dict):
        found = _ladder_from_mapping(value)
        if found is not None:
            return found
    if isinstance(value, (list, tuple)):
        return _ladder_from_rungs(value)
    raise RulesetError(
        f"straights: expected a ladder name or a list of rungs, got {value!r}",
        option="straights",
        valid=tuple(NAMED_LADDERS),
    )


def _ladder_from_text(value: str) -> Ladder:
    if value in NAMED_LADDERS:
        return NAMED_LADDERS[value]
    if "," in value or ("/" in value and len(value) > 8):
        return parse_ladder([part for part in value.split(",") if part.strip()])
    valid = (*NAMED_LADDERS, "a list of sequences such as ['A2345/5', '34567/7']")
    raise RulesetError(
        f"straights: unknown value {value!r}; valid values: {', '.join(valid)}",
        option="straights",
        valid=tuple(NAMED_LADDERS),
    )


def _ladder_from_mapping(value: dict[object, object]) -> Ladder | None:
    """A ladder written as a table (``{rungs = [...], tie_breaks = [...]}``), or None when it has no rungs."""
    for key in ("rungs", "ladder", "sequences", "order", "straights"):
        if key in value:
            rungs = value[key]
            ties = value.get("tie_breaks") or value.get("tie_break") or value.get("tiebreaks")
            if isinstance(ties, (list, tuple)) and isinstance(rungs, (list, tuple)) and len(ties) == len(rungs):
                return parse_ladder([[str(seq), str(tie)] for seq, tie in zip(rungs, ties, strict=True)])
            return parse_ladder(rungs)
    return None


def _ladder_from_rungs(value: list[object] | tuple[object, ...]) -> Ladder:
    rungs = tuple(_parse_rung(item) for item in value)
    seen: set[frozenset[Rank]] = set()
    for rung in rungs:
        if rung.sequence in seen:
            raise RulesetError(f"straights: {sequence_name(rung.sequence)} is listed twice", option="straights")
        seen.add(rung.sequence)
    for named in NAMED_LADDERS.values():
        if named.rungs == rungs:
            return named
    return Ladder(EXPLICIT, rungs)
