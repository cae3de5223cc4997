"""One deal as an event-sourced state machine (RULES.md "Refusals", the trick Decisions, opening,
passing, dragon, auto-pass). The two rules about singles are asked from :mod:`.singles`, the
settlement from :mod:`.scoring`.

``verify(move)`` says why a move is refused without changing anything; ``can(move)`` answers yes
or no; ``do(move)`` verifies, turns the move into events and folds them in with ``apply``. The
state changes only in ``apply``, so replaying a deal's events rebuilds it exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .cards import RANK_MASKS, TWOS_MASK, Card, cards_of, seat_ref
from .combos import Kind, Play, check_beats, classify_mask, play_name
from .dealing import DealtCards
from .errors import (
    BadCardError,
    CannotPassLeadingError,
    EventLogError,
    GameOverError,
    MustIncludeOpeningCardError,
    MustPlayHighestSingleError,
    NotInHandError,
    NotYourTurnError,
    SingleTwoLastError,
)
from .events import CardsPlayed, DealEnded, DealStarted, DragonRevealed, Event, LastCard, Passed, TrickEnded
from .generate import CARD_MASK, all_plays, can_beat, plays_of_size
from .moves import Move as Move  # re-exported: ``bigtwo.engine.deal.Move`` is a public path
from .moves import read_move_text
from .rules import AfterPass, Opening, Ruleset, Switch
from .scoring import DealSettlement, settle_hands
from .singles import forced_single, single_two_out
from .tables import RuleTables, tables_for

FULL_DECK = (1 << 52) - 1
TWOS = TWOS_MASK


@dataclass(frozen=True, slots=True)
class DealContext:
    """Where the deal sits in its match: needed by ``winner-leads``."""

    deal_number: int = 1
    previous_winner: int | None = None
    empty_seats: frozenset[int] = field(default_factory=frozenset)


class DealState(NamedTuple):
    """Everything needed to go on playing, without the history: what a state token carries.
    Immutable; a named tuple because services make one for every move they answer by token."""

    hands: tuple[int, ...]
    to_act: int
    leader: int
    table_mask: int
    table_kind: Kind | None
    table_key: int
    last_player: int
    passes: int
    passed: int
    played: int
    opening_card: int
    winner: int
    moves_made: int
    deal_number: int
    start_sizes: tuple[int, ...]
    scores: tuple[int, ...] = ()
    face_up_card: int = -1
    """Three players: the face-up 52nd card (public) and the seat that took it; else -1."""
    face_up_seat: int = -1


class Deal:
    """The live state of one deal. Build it with :meth:`start` or :meth:`replay`."""

    __slots__ = (
        "_auto_pass",
        "_events",
        "_may_play_again",
        "_single_rules",
        "deal_number",
        "face_up_card",
        "face_up_seat",
        "hands",
        "last_player",
        "leader",
        "moves_made",
        "opening_card",
        "passed",
        "passes",
        "played",
        "players",
        "ruleset",
        "scores",
        "start_sizes",
        "table",
        "tables",
        "to_act",
        "winner",
    )

    def __init__(self, ruleset: Ruleset) -> None:
        self._bind(ruleset)
        self.hands: list[int] = [0] * self.players
        self.start_sizes: tuple[int, ...] = (0,) * self.players
        self.to_act = 0
        self.leader = 0
        self.table: Play | None = None
        self.last_player = -1
        self.passes = 0
        self.passed = 0
        self.played = 0
        self.opening_card = -1
        self.winner = -1
        self.moves_made = 0
        self.deal_number = 1
        self.face_up_card = -1
        self.face_up_seat = -1
        self.scores: tuple[int, ...] = ()
        self._events: list[Event] = []

    def _bind(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.tables: RuleTables = tables_for(ruleset)
        self.players = ruleset.players
        # The options the hot paths ask about on every move, looked up once.
        self._may_play_again = ruleset.after_pass is AfterPass.MAY_PLAY_AGAIN
        self._auto_pass = ruleset.auto_pass is Switch.ON
        # Whether either rule of :mod:`.singles` is on: most rulesets skip asking them at all.
        self._single_rules = self.tables.highest_single or self.tables.single_two_out_refused

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def start(cls, ruleset: Ruleset, dealt: DealtCards, context: DealContext | None = None) -> Deal:
        """A new deal: who leads, the opening card, and a dragon if one was dealt."""
        context = context or DealContext()
        if len(dealt.hands) != ruleset.players:
            raise EventLogError(f"{len(dealt.hands)} hands dealt for {ruleset.players} players")
        deal = cls(ruleset)
        tables = deal.tables
        all_dealt = dealt.dealt
        winner_leads = (
            ruleset.opening is Opening.WINNER_LEADS
            and context.deal_number > 1
            and context.previous_winner is not None
            and 0 <= context.previous_winner < ruleset.players
            and context.previous_winner not in context.empty_seats
        )
        if winner_leads:
            assert context.previous_winner is not None
            leader, opening_card = context.previous_winner, -1
        else:
            opening_card = tables.lowest_card_in(all_dealt)
            leader = next(seat for seat, hand in enumerate(dealt.hands) if hand >> opening_card & 1)
        started = DealStarted(
            hands=dealt.hands,
            leader=leader,
            opening_card=opening_card,
            deal_number=context.deal_number,
            face_up_card=dealt.face_up_card,
            face_up_seat=dealt.face_up_seat,
        )
        deal.apply(started)
        if ruleset.dragon is Switch.ON:
            for event in deal._dragon_events():
                deal.apply(event)
        return deal

    @classmethod
    def replay(cls, ruleset: Ruleset, events: Iterable[Event]) -> Deal:
        """Fold a whole event log; the result equals the deal that produced it."""
        deal = cls(ruleset)
        for event in events:
            deal.apply(event)
        return deal

    def clone(self) -> Deal:
        """A cheap independent copy (history shared until either side appends)."""
        other = Deal.__new__(Deal)
        for name in Deal.__slots__:
            setattr(other, name, getattr(self, name))
        other.hands = list(self.hands)
        other._events = list(self._events)
        return other

    # -- reading ---------------------------------------------------------------------------------

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def over(self) -> bool:
        return self.winner >= 0

    @property
    def leading(self) -> bool:
        """True when the seat to act leads a fresh trick (nothing on the table)."""
        return self.table is None

    def cards_left(self) -> tuple[int, ...]:
        return tuple(hand.bit_count() for hand in self.hands)

    def settlement(self) -> DealSettlement | None:
        """The settlement card of a finished deal (None while it is in play): the one its
        ``DealEnded`` holds, and the same for a deal resumed from a state, which keeps no events."""
        if self.winner < 0:
            return None
        for event in reversed(self._events):
            if isinstance(event, DealEnded):
                return event.settlement
        return settle_hands(self.ruleset, self.winner, self.hands)

    def hand(self, seat: int) -> tuple[Card, ...]:
        return cards_of(self.hands[seat])

    def state(self) -> DealState:
        table = self.table
        # Positional, in DealState's field order: a service makes one for every move it answers.
        return DealState(
            tuple(self.hands),
            self.to_act,
            self.leader,
            table.mask if table else 0,
            table.kind if table else None,
            table.key if table else -1,
            self.last_player,
            self.passes,
            self.passed,
            self.played,
            self.opening_card,
            self.winner,
            self.moves_made,
            self.deal_number,
            self.start_sizes,
            self.scores,
            self.face_up_card,
            self.face_up_seat,
        )

    @classmethod
    def from_state(cls, ruleset: Ruleset, state: DealState) -> Deal:
        """Resume from a snapshot (no history): what a service does with a state token."""
        if len(state.hands) != ruleset.players:
            raise EventLogError(f"state holds {len(state.hands)} hands for {ruleset.players} players")
        deal = cls.__new__(cls)
        deal._bind(ruleset)
        (
            hands,
            deal.to_act,
            deal.leader,
            table_mask,
            table_kind,
            table_key,
            deal.last_player,
            deal.passes,
            deal.passed,
            deal.played,
            deal.opening_card,
            deal.winner,
            deal.moves_made,
            deal.deal_number,
            deal.start_sizes,
            deal.scores,
            deal.face_up_card,
            deal.face_up_seat,
        ) = state
        deal.hands = list(hands)
        deal.table = Play(table_mask, table_kind, table_key) if table_kind else None
        deal._events = []
        return deal

    # -- verify / can / do -----------------------------------------------------------------------

    def verify(self, move: Move) -> Play | None:
        """Raise the :class:`Refusal` RULES.md names for ``move``, or return what it plays (None for
        a pass). Changes nothing."""
        self._check_turn(move.seat, move.is_pass)
        if move.is_pass:
            return None
        mask = 0
        for card in move.cards:
            if mask & card.bit:
                raise NotInHandError(f"{card.pretty} is picked twice")
            mask |= card.bit
        return self._verify_mask(move.seat, mask)

    def verify_text(self, seat: int, text: str) -> Play | None:
        """Verify a move typed as text; text that is no card is ``bad-card`` in its place in the order."""
        try:
            is_pass, mask, repeated = read_move_text(text)
        except BadCardError:
            self._check_turn(seat, is_pass=False)
            raise
        self._check_turn(seat, is_pass)
        if is_pass:
            return None
        if repeated >= 0:
            raise NotInHandError(f"{Card.from_index(repeated).pretty} is picked twice")
        return self._verify_mask(seat, mask)

    def can(self, move: Move) -> bool:
        try:
            self.verify(move)
        except ValueError:
            return False
        return True

    def do(self, move: Move) -> tuple[Event, ...]:
        """Verify and apply ``move``; returns the events it produced (auto-passes included)."""
        play = self.verify(move)
        return self._commit(move.seat, play)

    def play_mask(self, seat: int, mask: int) -> tuple[Event, ...]:
        """Verify and apply a play given as a card mask: :meth:`do` without building ``Card``
        objects, for search and self-play. Verification is the same; pass with :meth:`pass_turn`."""
        self._check_turn(seat, is_pass=False)
        return self._commit(seat, self._verify_mask(seat, mask))

    def pass_turn(self, seat: int) -> tuple[Event, ...]:
        """Verify and apply a pass."""
        self._check_turn(seat, is_pass=True)
        return self._commit(seat, None)

    def do_text(self, seat: int, text: str) -> tuple[Event, ...]:
        play = self.verify_text(seat, text)
        return self._commit(seat, play)

    def _check_turn(self, seat: int, is_pass: bool) -> None:
        if self.winner >= 0:
            raise GameOverError(f"The deal is over: {seat_ref(self.winner)} went out")
        if seat != self.to_act:
            raise NotYourTurnError(f"It is {seat_ref(self.to_act)}'s turn, not {seat_ref(seat)}'s")
        if is_pass and self.table is None:
            raise CannotPassLeadingError("You lead: play any hand")

    def _verify_mask(self, seat: int, mask: int) -> Play:
        hand = self.hands[seat]
        missing = mask & ~hand
        if missing:
            names = " ".join(card.pretty for card in cards_of(missing))
            raise NotInHandError(f"You do not hold {names}")
        if self.opening_card >= 0 and not mask >> self.opening_card & 1:
            raise MustIncludeOpeningCardError(
                f"The first play must include {Card.from_index(self.opening_card).suit_first}"
            )
        play = check_beats(mask, self.table, self.tables)
        if self._single_rules and play.kind is Kind.SINGLE:
            self._check_singles(seat, mask)
        return play

    def _check_singles(self, seat: int, mask: int) -> None:
        """Refuse a single that a rule of :mod:`.singles` forbids, in RULES.md's refusal order
        (``single-two-last`` before ``must-play-highest-single``)."""
        if single_two_out(self.tables, self.hands[seat], self.table is not None):
            raise SingleTwoLastError("You can't go out on a single 2")
        forced = forced_single(self.tables, self.hands, seat)
        if forced and mask != forced:
            raise MustPlayHighestSingleError(
                f"The next player has one card left: a single must be your highest, "
                f"{Card.from_index(forced.bit_length() - 1).pretty}"
            )

    def _commit(self, seat: int, play: Play | None) -> tuple[Event, ...]:
        """Turn a verified move into its event and the events the rules add after it (last card,
        deal end, auto-passes, trick end), folding each in as it is made."""
        index = self.moves_made
        if play is None:
            passed = Passed(seat, index)
            self._fold_passed(passed)
            if self.passes < self.players - 1:
                return (passed,)
            ended = TrickEnded(self.last_player)
            self.apply(ended)
            return passed, ended
        played = CardsPlayed(seat, play.mask, play.kind, play.key, index)
        self._fold_played(played, play)
        left = self.hands[seat].bit_count()
        if left > 1 and not self._auto_pass:
            return (played,)  # most plays: nothing follows
        out: list[Event] = [played]
        if left == 0:
            out.append(self._deal_ended(seat, by_dragon=False))
        else:
            if left == 1:
                out.append(LastCard(seat))
            if self._auto_pass and not can_beat(FULL_DECK & ~self.played, play.size, play.key, self.tables):
                for offset in range(1, self.players):
                    other = (seat + offset) % self.players
                    if not self.passed >> other & 1:
                        out.append(Passed(other, index + 1, automatic=True))
                out.append(TrickEnded(seat))
        for event in out[1:]:
            self.apply(event)
        return tuple(out)

    def _deal_ended(self, winner: int, *, by_dragon: bool) -> DealEnded:
        return DealEnded(settle_hands(self.ruleset, winner, self.hands), by_dragon)

    def _dragon_events(self) -> list[Event]:
        dragons = [seat for seat, hand in enumerate(self.hands) if all(hand & rank for rank in RANK_MASKS)]
        if not dragons:
            return []
        spade_two = Card.parse("2S").bit
        holders = [seat for seat in dragons if self.hands[seat] & spade_two]
        if holders:
            winner = holders[0]
        else:  # RULES.md Decision: the dragon holding the highest 2 under the suit order
            winner = max(dragons, key=lambda s: self.tables.strength[self.tables.highest_card_in(self.hands[s] & TWOS)])
        return [DragonRevealed(winner, self.hands[winner]), self._deal_ended(winner, by_dragon=True)]

    # -- the fold --------------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Fold one event into the state. The only place the state changes (with
        :meth:`_fold_played` and :meth:`_fold_passed`, its parts for a play and a pass)."""
        if isinstance(event, CardsPlayed):
            self._fold_played(event, Play(event.mask, event.kind, event.key))
            return
        if isinstance(event, Passed):
            self._fold_passed(event)
            return
        if isinstance(event, TrickEnded):
            self.table = None
            self.leader = self.to_act = event.winner
            self.passes = 0
            self.passed = 0
        elif isinstance(event, LastCard):
            pass  # public marker only; the hand size already says it
        elif isinstance(event, DealStarted):
            self.hands = list(event.hands)
            self.start_sizes = tuple(hand.bit_count() for hand in event.hands)
            self.leader = self.to_act = event.leader
            self.opening_card = event.opening_card
            self.deal_number = event.deal_number
            self.face_up_card = event.face_up_card
            self.face_up_seat = event.face_up_seat
        elif isinstance(event, DragonRevealed):
            pass
        elif isinstance(event, DealEnded):
            settlement = event.settlement
            self.winner = settlement.winner
            self.scores = settlement.scores
        else:  # pragma: no cover - the Event union is closed
            raise EventLogError(f"unknown event {event!r}")
        self._events.append(event)

    def _fold_passed(self, event: Passed) -> None:
        """Fold a Passed (``_commit`` calls it directly: half the moves are passes)."""
        self.passes += 1
        self.passed |= 1 << event.seat
        if not event.automatic:
            self.moves_made = event.move_index + 1
        if self.passes < self.players - 1:
            self.to_act = self._next_in_trick(event.seat)
        self._events.append(event)

    def _fold_played(self, event: CardsPlayed, play: Play) -> None:
        """Fold a CardsPlayed whose play is known: ``_commit`` has just classified it, so the play
        on the table is not built twice for every move."""
        seat = event.seat
        self.hands[seat] &= ~event.mask
        self.played |= event.mask
        self.table = play
        self.last_player = seat
        self.opening_card = -1
        self.moves_made = event.move_index + 1
        if self._may_play_again:
            self.passes = 0
            self.passed = 0
        self.to_act = self._next_in_trick(seat)
        self._events.append(event)

    def _next_in_trick(self, seat: int) -> int:
        players = self.players
        if self._may_play_again:
            return (seat + 1) % players
        for offset in range(1, players):
            other = (seat + offset) % players
            if not self.passed >> other & 1:
                return other
        return seat

    # -- legal moves -----------------------------------------------------------------------------

    def legal_encoded(self) -> list[int]:
        """Legal plays of the seat to act as ``key << 52 | mask`` integers, sorted; passing not included."""
        if self.winner >= 0:
            return []
        seat = self.to_act
        hand = self.hands[seat]
        table = self.table
        if table is None:
            plays = all_plays(hand, self.tables)
        else:
            plays = plays_of_size(hand, table.size, self.tables, table.key)
            plays.sort()
        if self.opening_card >= 0:
            bit = 1 << self.opening_card
            plays = [p for p in plays if p & bit]
        # Each rule of .singles is asked only under a ruleset that has it: a call costs as much as
        # a small move list's filtering, and most rulesets have neither.
        tables = self.tables
        if tables.single_two_out_refused and single_two_out(tables, hand, table is not None):
            return []  # the hand is a lone 2: its one play would go out on it
        if tables.highest_single:
            forced = forced_single(tables, self.hands, seat)
            if forced:
                plays = [p for p in plays if (p & CARD_MASK).bit_count() != 1 or p & CARD_MASK == forced]
        return plays

    def legal_plays(self) -> list[Play]:
        return [classify_mask(encoded & CARD_MASK, self.tables) for encoded in self.legal_encoded()]

    def legal_moves(self) -> list[Move]:
        """Every move the seat to act may make: plays (sorted) then pass when passing is allowed."""
        seat = self.to_act
        moves = [Move.from_mask(seat, encoded & CARD_MASK) for encoded in self.legal_encoded()]
        if self.winner < 0 and self.table is not None:
            moves.append(Move.pass_(seat))
        return moves

    def name(self, play: Play) -> str:
        return play_name(play, self.tables)
