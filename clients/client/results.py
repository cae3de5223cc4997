"""What the client's calls answer: small frozen values, free of protobuf.

Cards come as bit masks (with :class:`~bigtwo.engine.Card` tuples on demand), kinds and refusal
reasons as the engine's enums, and the game as a :class:`GameRef` the caller holds: the service
keeps nothing, so every value here is complete in itself and safe to share between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bigtwo.engine import Card, DealContext, Event, Kind, Move, Reason, Ruleset, cards_of, mask_text


@dataclass(frozen=True, slots=True)
class NamedPlay:
    """Cards and what they form, with the readout name (``Pair K``)."""

    mask: int
    kind: Kind | None
    name: str

    @property
    def cards(self) -> tuple[Card, ...]:
        return cards_of(self.mask)

    @property
    def text(self) -> str:
        """Canonical text (``3D 3S``), what a move sends."""
        return mask_text(self.mask)

    @property
    def size(self) -> int:
        return self.mask.bit_count()

    def __str__(self) -> str:
        return self.name or self.text


@dataclass(frozen=True, slots=True)
class RefusalInfo:
    """Why the rules refuse a move: the RULES.md reason and the sentence a player sees."""

    reason: Reason
    message: str

    def __str__(self) -> str:
        return f"{self.message} ({self.reason.value})"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A move judged: accepted (a pass, or the play it made) or refused, with why."""

    accepted: bool
    is_pass: bool = False
    play: NamedPlay | None = None
    refusal: RefusalInfo | None = None


@dataclass(frozen=True, slots=True)
class TableView:
    """What everyone at the table may see."""

    players: int
    moves_made: int
    to_act: int
    leader: int
    table: NamedPlay | None
    last_player: int | None
    cards_left: tuple[int, ...]
    played: int
    passed_seats: tuple[int, ...]
    opening_card: Card | None
    over: bool
    winner: int | None
    scores: tuple[int, ...]
    deal_number: int
    deal_id: str
    """The deal's opaque name (nothing about the cards follows from it)."""
    ruleset_fingerprint: str
    deal_code: str = ""
    """The deal code once the deal is over (empty while it is in play)."""


@dataclass(frozen=True, slots=True)
class SeatHand:
    """One seat's own view: its hand and WEB's "ending now" readout."""

    seat: int
    mask: int
    ending_now: str
    to_act: bool

    @property
    def cards(self) -> tuple[Card, ...]:
        return cards_of(self.mask)


@dataclass(frozen=True, slots=True)
class GameRef:
    """The game as the caller holds it: enough to rebuild it anywhere (the log) and the latest
    signed state token (cheaper to send). Immutable: moves return a new one."""

    ruleset: Ruleset
    deal_code: str = ""
    hands: tuple[str, ...] = ()
    context: DealContext = field(default_factory=DealContext)
    moves: tuple[str, ...] = ()
    token: bytes = b""

    @property
    def moves_made(self) -> int:
        """The index the next move carries."""
        return len(self.moves)

    def after(self, move_text: str, token: bytes) -> GameRef:
        return replace(self, moves=(*self.moves, move_text), token=token)


@dataclass(frozen=True, slots=True)
class Dealt:
    """A new deal: the game to go on with, its code (when the answer may show it), the table,
    the events so far and, for one seat, its view."""

    game: GameRef
    deal_code: str
    table: TableView
    events: tuple[Event, ...]
    view: SeatHand | None
    seat_token: bytes = b""
    """With a view: a state token bound to that seat, safe to hand to its device (docs/SECURITY.md)."""


@dataclass(frozen=True, slots=True)
class MoveResult:
    """The answer to a move. ``game`` is the game after it (unchanged when refused)."""

    index: int
    outcome: Outcome
    events: tuple[Event, ...]
    game: GameRef
    table: TableView
    view: SeatHand | None
    seat_token: bytes = b""
    """With a view: a state token bound to that seat, safe to hand to its device (docs/SECURITY.md)."""

    @property
    def accepted(self) -> bool:
        return self.outcome.accepted


@dataclass(frozen=True, slots=True)
class LegalMoves:
    """Every play the seat to act may make, and whether it may pass."""

    seat: int
    plays: tuple[NamedPlay, ...]
    can_pass: bool


@dataclass(frozen=True, slots=True)
class Hint:
    """The next play of the hint cycle (None: nothing beats the table) and the cycle's length."""

    play: NamedPlay | None
    cycle_length: int


@dataclass(frozen=True, slots=True)
class Readout:
    """The readout line: what a selection forms and whether it can be played now, or why not."""

    name: str
    kind: Kind | None
    playable: bool
    refusal: RefusalInfo | None
    ending_now: str


@dataclass(frozen=True, slots=True)
class BotChoice:
    """A bot's move for the seat to act (BotMove): apply it with ``apply_move``."""

    move: Move
    name: str
    """The readout name of what it plays ("Pair 9"; empty for a pass)."""
    level: str


@dataclass(frozen=True, slots=True)
class RulesetInfo:
    """A ruleset as the service reads it: its overrides of the preset, fingerprint, rules in words."""

    ruleset: Ruleset
    overrides: dict[str, str]
    fingerprint: str
    description: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PresetInfo:
    """One preset of the service: its name, a one-line summary, its rules and fingerprint."""

    name: str
    summary: str
    ruleset: Ruleset
    fingerprint: str
    description: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BotLevels:
    """The service's computer-player levels (its one registry), weakest first: each level's name and
    a line about how it plays; ``default`` is the level a bot seat plays at when none is named."""

    levels: tuple[tuple[str, str], ...]
    default: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.levels)


@dataclass(frozen=True, slots=True)
class MatchStanding:
    """A match after its deals: totals, deals won, whether it is over (and who won) and the next
    deal's context (deal number, previous winner, empty seats)."""

    totals: tuple[int, ...]
    deals_won: tuple[int, ...]
    over: bool
    winners: tuple[int, ...]
    next_context: DealContext


@dataclass(frozen=True, slots=True)
class Replayed:
    """A log replayed: how many moves were applied, the first refused one (if any) and why, the
    events, the table and the game up to the refusal with a fresh token."""

    moves_applied: int
    refused: bool
    refused_at: int
    refusal: RefusalInfo | None
    events: tuple[Event, ...]
    table: TableView
    game: GameRef


__all__ = [
    "BotChoice",
    "BotLevels",
    "Dealt",
    "GameRef",
    "Hint",
    "LegalMoves",
    "MatchStanding",
    "MoveResult",
    "NamedPlay",
    "Outcome",
    "PresetInfo",
    "Readout",
    "RefusalInfo",
    "Replayed",
    "RulesetInfo",
    "SeatHand",
    "TableView",
]
