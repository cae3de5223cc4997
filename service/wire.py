"""A move's answer as protobuf wire bytes, joined from parts that protobuf serialized once.

Why: in a loaded server every field written into a upb message touches memory that the transport
has just pushed out of the CPU caches, and a move's answer needs a dozen such writes (outcome,
events, table) for a few bytes of news (``bigtwo bench service``; docs/SERVICE.md, "Speed"; figures
in docs/PERFORMANCE.md). So each part of an answer (the outcome of a play, the table's fields that last the whole
deal, the numbers of cards left, one pass...) is built as a message by :mod:`bigtwo.service.convert`,
serialized by protobuf once and kept; an answer joins cached parts.

Every answer is written as protobuf itself would write it: each field of each message once, in
field-number order (repeated fields in a run), never a message written in pieces that a decoder
must merge. The protobuf encoding allows the pieces (protobuf.dev "Encoding", "Last One Wins"), but
decoders do not all follow it: protobufjs 7, which ``@grpc/proto-loader`` uses, keeps the last
piece of a sub-message written twice. So the parts joined here are always whole fields of the
message they go into, and what differs per answer (a play's move index, the cards played) is
written inside the field it belongs to. :func:`check_fields` states that rule; the parts are checked
against it once, as they are made, and tests/test_interop_decoders.py reads real answers with
protobufjs and checks that re-serializing them gives the same bytes.

The only encoding written by hand here is the envelope: a field's tag and length in front of bytes
that protobuf produced (:func:`delimited`), the played cards' ``CardSet`` (two scalars that change
on every play, see :func:`_played`) and a play's event around its cached parts (:func:`event_bytes`).
Field numbers come from the generated descriptors. tests/test_service_wire.py parses every answer
of random games under every preset and compares it with the message that
:mod:`bigtwo.service.convert` builds field by field.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from bigtwo.engine import (
    CardsPlayed,
    Deal,
    Event,
    Kind,
    LastCard,
    Passed,
    Play,
    Refusal,
    Ruleset,
    TrickEnded,
    mask_text,
)
from bigtwo.engine.cache import BoundedCache, IdentityCache
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

from . import convert as cv
from .bounds import (
    MAX_SEATS,
    SMALL_LENGTH,
    BoundError,
    check_events_compare_by_type,
    check_length,
    check_seats,
    seat_counts,
)
from .fieldcheck import MessageDescriptor, WireError, check_fields
from .tokens import MAX_TOKEN_BYTES

_VARINT = 0
_LENGTH = 2
LIMIT = 8192
"""Entries a part cache holds before it starts again (parts are small: a few dozen bytes)."""
ANSWER_REST_BYTES = 4096
"""The most a move's answer takes besides its tokens: its outcome, its events, the table after it
and a seat's view, each bounded by the deck's 52 cards (tests/test_service_wire.py checks the
longest answers of whole deals against it)."""


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINTS = tuple(_encode_varint(n) for n in range(SMALL_LENGTH))
"""Every length below :data:`~bigtwo.service.bounds.SMALL_LENGTH`, a one- or two-byte varint: the
answer writer reads each part's length here (:func:`_check_bounds`)."""
_MIDDLE_VARINTS = tuple(bytes((n & 0x7F | 0x80, n >> 7 | 0x80)) for n in range(1 << 14))
"""Fourteen bits that more bits follow: both bytes carry the continuation bit."""


def varint(value: int) -> bytes:
    """The base-128 varint of a non-negative integer."""
    if value < SMALL_LENGTH:
        return _SMALL_VARINTS[value]
    # Fourteen bits at a time from tables: the played cards' mask (up to 52 bits) is written
    # after every play, so its varint takes table lookups instead of a loop over its bytes.
    out = b""
    while value >= 16384:
        out += _MIDDLE_VARINTS[value & 0x3FFF]
        value >>= 14
    return out + _SMALL_VARINTS[value]


def _number(message: Message | type[Message], name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


def _tag(message: Message | type[Message], name: str, wire_type: int) -> bytes:
    return varint(_number(message, name) << 3 | wire_type)


def delimited(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field (a sub-message, bytes or a string): tag, length, payload."""
    return tag + varint(len(payload)) + payload


def _in_field_order(message: Message | type[Message], names: tuple[str, ...]) -> tuple[str, ...]:
    """``names``, checked (at import) to be in field-number order: the order a writer below joins
    those fields in. A proto change that renumbers them fails here, not in a client."""
    numbers = [_number(message, name) for name in names]
    if numbers != sorted(set(numbers)):
        raise WireError(f"{message.DESCRIPTOR.full_name}: {names} are not in field-number order")
    return names


def _checked(descriptor: MessageDescriptor, part: bytes) -> bytes:
    """``part``, once :func:`check_fields` passed it (parts are checked once, as they are cached)."""
    check_fields(descriptor, part)
    return part


class AnswerLayout(NamedTuple):
    """Where a move answer's fields go in one response message: their tags."""

    envelope: bytes
    """The tag of the field that holds the answer (the stream's ``move_result``), or empty when
    the answer is the response itself (ApplyMove)."""
    move_index: bytes
    """The tag of the move's index, or empty when the message has none."""
    outcome: bytes
    events: bytes
    table: bytes
    view: bytes
    state_token: bytes
    seat_token: bytes
    """The tag of the seat-bound token, or empty when the message has none (the stream's)."""
    token_first: bool
    """The state token's field comes before the table's (ApplyMove), else after the view's."""

    @classmethod
    def of(cls, message: type[Message], envelope: bytes = b"") -> AnswerLayout:
        names = message.DESCRIPTOR.fields_by_name
        token_first = _number(message, "state_token") < _number(message, "table")
        middle = ("state_token", "table", "view") if token_first else ("table", "view", "state_token")
        written = ("index", "outcome", "events", *middle, "seat_token")
        _in_field_order(message, tuple(name for name in written if name in names))
        return cls(
            envelope=envelope,
            move_index=_tag(message, "index", _VARINT) if "index" in names else b"",
            outcome=_tag(message, "outcome", _LENGTH),
            events=_tag(message, "events", _LENGTH),
            table=_tag(message, "table", _LENGTH),
            view=_tag(message, "view", _LENGTH),
            state_token=_tag(message, "state_token", _LENGTH),
            seat_token=_tag(message, "seat_token", _LENGTH) if "seat_token" in names else b"",
            token_first=token_first,
        )


STREAM = AnswerLayout.of(api.StreamMoveResult, envelope=_tag(api.PlayStreamResponse, "move_result", _LENGTH))
"""A move's answer on the stream: a ``PlayStreamResponse`` holding a ``StreamMoveResult``."""
APPLY = AnswerLayout.of(api.ApplyMoveResponse)
"""A move's answer to ApplyMove: an ``ApplyMoveResponse``."""


class JudgedMove(Protocol):
    """What an answer is written from (``bigtwo.service.core.MoveResult``)."""

    @property
    def move_index(self) -> int: ...

    @property
    def outcome(self) -> bytes: ...

    @property
    def events(self) -> tuple[Event, ...]: ...


_STREAM_OPENED = _tag(api.PlayStreamResponse, "opened", _LENGTH)
_OPENED_ORDER = _in_field_order(api.StreamOpened, ("deal_code", "table", "events", "view", "state_token", "seat_token"))
_OPENED = {name: _tag(api.StreamOpened, name, _LENGTH) for name in _OPENED_ORDER}
_TABLE_PLAYED = _tag(pb.TableState, "played", _LENGTH)
_CARDS_TEXT = _tag(pb.CardSet, "text", _LENGTH)
_CARDS_MASK = _tag(pb.CardSet, "mask", _VARINT)
_in_field_order(pb.CardSet, ("text", "mask"))
_CARDS_PLAYED = _tag(pb.Event, "cards_played", _LENGTH)
_in_field_order(pb.Event, ("cards_played", "description"))
_in_field_order(pb.CardsPlayedEvent, ("seat", "play", "move_index"))
"""A play's event: ``cards_played`` {seat, play | move index}, then the description."""
_TABLE_ORDER = _in_field_order(
    pb.TableState,
    (
        "players",  # the header's head
        "moves_made",
        "to_act",
        "leader",
        "table",
        "last_player",
        "cards_left",  # the part after a play
        "played",
        "passed_seats",
        "opening_card",
        "over",  # the end of the deal
        "winner",
        "scores",
        "deal_number",  # the header's tail
        "deal_id",
        "ruleset_fingerprint",
        "deal_code",  # once the deal is over
    ),
)
"""The order :meth:`DealWriter.table` joins a table's fields in."""
_HEADER_HEAD = ("players",)
_HEADER_TAIL = ("deal_number", "deal_id", "ruleset_fingerprint")
_ENDING = ("over", "winner", "scores")
_EVENT = pb.Event.DESCRIPTOR
_TABLE = pb.TableState.DESCRIPTOR


def _only(message: Message, names: tuple[str, ...]) -> bytes:
    """``message`` serialized with only the fields ``names`` (the others cleared on a copy)."""
    part = type(message)()
    part.CopyFrom(message)
    for field in message.DESCRIPTOR.fields:
        if field.name not in names:
            part.ClearField(field.name)
    return bytes(part.SerializeToString())


# -- parts -----------------------------------------------------------------------------------------


class RulesetParts:
    """The serialized parts of one ruleset's answers, each made once."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.messages = cv.messages_for(ruleset)
        self.outcomes: BoundedCache[int, bytes] = BoundedCache("service.wire.outcomes", LIMIT)
        self.plays_on_table: BoundedCache[int, bytes] = BoundedCache("service.wire.plays_on_table", LIMIT)
        self.cards_played: BoundedCache[int, tuple[bytes, bytes]] = BoundedCache("service.wire.cards_played", LIMIT)
        self.headers: BoundedCache[tuple[str, int], tuple[bytes, bytes]] = BoundedCache("service.wire.headers", LIMIT)

    def outcome(self, mask: int, kind: Kind, key: int) -> bytes:
        """The outcome of an accepted play (a ``MoveOutcome``)."""
        part = self.outcomes.get(mask)
        if part is None:
            outcome = pb.MoveOutcome(accepted=True, play=self.messages.play(mask, kind, key))
            part = self.outcomes.put(mask, _checked(pb.MoveOutcome.DESCRIPTOR, outcome.SerializeToString()))
        return part

    def play_on_table(self, mask: int, kind: Kind, key: int) -> bytes:
        """``TableState.table``: the play to beat."""
        part = self.plays_on_table.get(mask)
        if part is None:
            table = pb.TableState(table=self.messages.play(mask, kind, key))
            part = self.plays_on_table.put(mask, _checked(_TABLE, table.SerializeToString()))
        return part

    def played_event(self, event: CardsPlayed) -> tuple[bytes, bytes]:
        """A CardsPlayed event's parts that are the same every time this seat plays these cards:
        the ``CardsPlayedEvent``'s seat and play (its move index goes after them) and the
        ``Event``'s description field (after the ``cards_played`` field). :func:`event_bytes`
        writes the event around them, each field once."""
        cache_key = event.seat << 52 | event.mask
        part = self.cards_played.get(cache_key)
        if part is None:
            message = pb.Event()
            cv.fill_event(message, CardsPlayed(event.seat, event.mask, event.kind, event.key, 0), self.messages, None)
            seat_and_play = _checked(pb.CardsPlayedEvent.DESCRIPTOR, message.cards_played.SerializeToString())
            description = _checked(_EVENT, pb.Event(description=message.description).SerializeToString())
            part = self.cards_played.put(cache_key, (seat_and_play, description))
        return part

    def header(self, deal: Deal, deal_id: str) -> tuple[bytes, bytes]:
        """The table's fields that last the whole deal: the one numbered before the rest
        (players) and the ones numbered after them (deal number, id, fingerprint)."""
        key = (deal_id, deal.deal_number)
        part = self.headers.get(key)
        if part is None:
            header = cv.table_header(deal, deal_id)
            head, tail = _only(header, _HEADER_HEAD), _only(header, _HEADER_TAIL)
            if pb.TableState.FromString(head + tail) != header:
                raise WireError("convert.table_header sets fields that the table's header parts leave out")
            part = self.headers.put(key, (_checked(_TABLE, head), _checked(_TABLE, tail)))
        return part


parts_for: IdentityCache[Ruleset, RulesetParts] = IdentityCache("service.wire.ruleset_parts", RulesetParts, 16)
"""The parts of a ruleset (by identity: rulesets come from caches, so one object per ruleset)."""


def _event_message(event: Event, messages: cv.RulesetMessages, view_seat: int | None) -> bytes:
    out = pb.Event()
    cv.fill_event(out, event, messages, view_seat)
    return out.SerializeToString()


_MOVE_INDEXES = tuple(pb.CardsPlayedEvent(move_index=index).SerializeToString() for index in range(1024))
"""A play's move index as a ``CardsPlayedEvent`` field (nothing for 0), by index."""
_PASSES: BoundedCache[tuple[int, int, bool], bytes] = BoundedCache("service.wire.passes", LIMIT)
_SMALL_EVENTS: BoundedCache[Event, bytes] = BoundedCache("service.wire.small_events", LIMIT)
"""Keyed by the events themselves: right only while events of different types never compare
equal (:func:`~bigtwo.service.bounds.check_events_compare_by_type`, at import)."""
check_events_compare_by_type()
_OPENING_CARD = (*(pb.TableState(opening_card=cv.card_name(index)).SerializeToString() for index in range(52)), b"")
"""By card index; index -1 (no opening card) is the last entry, which writes nothing."""


def event_bytes(event: Event, parts: RulesetParts, view_seat: int | None) -> bytes:
    """One event, serialized (an ``Event``)."""
    kind = type(event)
    if kind is CardsPlayed:
        assert isinstance(event, CardsPlayed)
        seat_and_play, description = parts.cards_played.get(event.seat << 52 | event.mask) or parts.played_event(event)
        index = event.move_index
        played = seat_and_play + (
            _MOVE_INDEXES[index] if index < 1024 else pb.CardsPlayedEvent(move_index=index).SerializeToString()
        )
        return _CARDS_PLAYED + _SMALL_VARINTS[len(played)] + played + description
    if kind is Passed:
        assert isinstance(event, Passed)
        key = (event.seat, event.move_index, event.automatic)
        part = _PASSES.get(key)
        if part is None:
            part = _PASSES.put(key, _checked(_EVENT, _event_message(event, parts.messages, None)))
        return part
    if kind is TrickEnded or kind is LastCard:
        part = _SMALL_EVENTS.get(event)
        if part is None:
            part = _SMALL_EVENTS.put(event, _checked(_EVENT, _event_message(event, parts.messages, None)))
        return part
    return _event_message(event, parts.messages, view_seat)  # once a deal: start, dragon, end


_NONE_PLAYED = delimited(_TABLE_PLAYED, b"")


def _played(mask: int, text: bytes) -> bytes:
    """``TableState.played``: the cards played and their text. Written here, not by protobuf: the
    cards played are new after every play, and ``text`` and ``mask`` are plain scalars."""
    if not mask:
        return _NONE_PLAYED
    return delimited(_TABLE_PLAYED, delimited(_CARDS_TEXT, text) + _CARDS_MASK + varint(mask))


_CARD_NAMES = tuple(mask_text(1 << index).encode() for index in range(52))
if any(len(name) != 2 for name in _CARD_NAMES):  # _text_adding places each card at 3 bytes a card
    raise BoundError("a card's name is no longer two characters")


def _text_adding(text: bytes, held: int, added: int) -> bytes:
    """The text of the cards ``held | added``, from ``text``, the text of ``held``.

    A deal's cards played grow by one play at a time: every card's name is two characters, one
    space apart, so each new card goes in at three times the number of held cards below it, and no
    held card is looked up again. Many cards at once (a writer's first table) are written whole."""
    if added.bit_count() > 5:
        return mask_text(held | added).encode()
    while added:
        low = added & -added
        name = _CARD_NAMES[low.bit_length() - 1]
        if not held:
            text = name
        else:
            position = 3 * (held & (low - 1)).bit_count()
            text = text + b" " + name if position > len(text) else text[:position] + name + b" " + text[position:]
        held |= low
        added ^= low
    return text


def _values(field_name: str, count: int) -> tuple[bytes, ...]:
    """``TableState`` with only ``field_name`` set to 0, 1, ... ``count - 1``, serialized by protobuf."""
    out = []
    for value in range(count):
        table = pb.TableState()
        setattr(table, field_name, value)
        out.append(table.SerializeToString())
    return tuple(out)


_MOVES_MADE = _values("moves_made", 1024)
_TO_ACT = _values("to_act", MAX_SEATS)
_LEADER = _values("leader", MAX_SEATS)
_LAST_PLAYER = (b"", *_values("last_player", MAX_SEATS))
"""By seat + 1: nobody has played yet (-1) writes nothing."""
_PASSED_SEATS = tuple(pb.TableState(passed_seats=seats).SerializeToString() for seats in cv.SEATS_IN)
"""By the mask of seats that passed."""
_CARDS_LEFT = _tag(pb.TableState, "cards_left", _LENGTH)
_DECK = 52


def _cards_left(hands: list[int]) -> bytes:
    # A packed repeated field of one-byte varints: its length (the seats) and each count (at most
    # the deck's cards) are below 128 (:func:`_check_bounds`).
    return _CARDS_LEFT + bytes((len(hands), *map(int.bit_count, hands)))


def _check_bounds() -> None:
    """The bounds the tables above are built for, checked where they are built (import), so the
    answer writer indexes them without a check per move: an entry for every seat of every deal
    the engine allows, for every set of seats that passed, one-byte counts of cards, and the
    lengths of every part of an answer (two tokens and the rest) in :data:`_SMALL_VARINTS`."""
    for table in (_TO_ACT, _LEADER, _LAST_PLAYER[1:]):
        check_seats(len(table))
    if len(_PASSED_SEATS) < 1 << max(seat_counts()):
        raise BoundError(f"{len(_PASSED_SEATS)} sets of seats that passed; a deal may have {1 << max(seat_counts())}")
    if max(_DECK, MAX_SEATS) >= 128:
        raise BoundError("a count of cards or seats is no longer a one-byte varint")
    check_length("a move's answer", 2 * MAX_TOKEN_BYTES + ANSWER_REST_BYTES + 16)


_check_bounds()


class DealWriter:
    """Writes one deal's answers: its public table after each of its moves (a ``TableState``, the
    one definition of its fields) and each move's answer around it.

    Each field comes from a table of protobuf's own encodings of its possible values, or from a
    part cached per ruleset, so writing a table allocates no message. What only a play changes (the
    cards left, the cards played, the play to beat) is written again only after a play: a pass,
    about half the moves, reuses it. A writer follows one deal, which only moves forward: while the
    cards played stay the same, so do the cards left.
    """

    __slots__ = (
        "_after_play",
        "_played",
        "_played_text",
        "_table",
        "_table_part",
        "deal_code",
        "head",
        "parts",
        "tail",
    )

    def __init__(self, deal: Deal, deal_id: str, parts: RulesetParts | None = None, *, deal_code: str = "") -> None:
        self.parts = parts = parts or parts_for(deal.ruleset)
        self.deal_code = deal_code
        """Shown only once the deal is over: while it is in play it would deal every hand."""
        self.head: bytes
        self.tail: bytes
        self.head, self.tail = parts.headers.get((deal_id, deal.deal_number)) or parts.header(deal, deal_id)
        self._played = 0
        self._played_text = b""
        self._after_play = b""
        self._table: Play | None = None
        self._table_part = b""

    def answer(
        self,
        layout: AnswerLayout,
        move: JudgedMove,
        deal: Deal,
        view_seat: int | None,
        *,
        view: bytes = b"",
        state_token: bytes = b"",
        seat_token: bytes = b"",
    ) -> bytes:
        """A judged move's answer: outcome, events, the table after it, the seat's view, tokens,
        each field once and in field-number order (:meth:`AnswerLayout.of` checks the order)."""
        # Every length here, the answer's own included, is read from _SMALL_VARINTS: _check_bounds
        # proved at import that two tokens and the rest of an answer fit its lengths.
        small = _SMALL_VARINTS
        parts = self.parts
        outcome = move.outcome
        body = [
            layout.move_index + small[move.move_index] if layout.move_index and move.move_index else b"",
            layout.outcome,
            small[len(outcome)],
            outcome,
        ]
        for event in move.events:
            part = event_bytes(event, parts, view_seat)
            body += (layout.events, small[len(part)], part)
        if state_token and layout.token_first:
            body += (layout.state_token, small[len(state_token)], state_token)
        table = self.table(deal)
        body += (layout.table, small[len(table)], table)
        if view:
            body += (layout.view, small[len(view)], view)
        if state_token and not layout.token_first:
            body += (layout.state_token, small[len(state_token)], state_token)
        if seat_token and layout.seat_token:
            body += (layout.seat_token, small[len(seat_token)], seat_token)
        answer = b"".join(body)
        return layout.envelope + small[len(answer)] + answer if layout.envelope else answer

    def table(self, deal: Deal) -> bytes:
        """The public table of ``deal`` after its latest move, its fields in :data:`_TABLE_ORDER`."""
        played = deal.played
        if played != self._played or not self._after_play:
            self._played_text = _text_adding(self._played_text, self._played, played & ~self._played)
            self._played = played
            self._after_play = _cards_left(deal.hands) + _played(played, self._played_text)
        table = deal.table
        if table is None:
            table_part = b""
        elif table is self._table:
            table_part = self._table_part
        else:
            self._table = table
            table_part = self._table_part = self.parts.plays_on_table.get(table.mask) or self.parts.play_on_table(
                table.mask, table.kind, table.key
            )
        moves_made = deal.moves_made
        over = deal.winner >= 0
        return b"".join(
            (
                self.head,
                _MOVES_MADE[moves_made]
                if moves_made < 1024
                else pb.TableState(moves_made=moves_made).SerializeToString(),
                _TO_ACT[deal.to_act],
                _LEADER[deal.leader],
                table_part,
                _LAST_PLAYER[deal.last_player + 1],
                self._after_play,
                _PASSED_SEATS[deal.passed],
                _OPENING_CARD[deal.opening_card],
                pb.TableState(over=True, winner=deal.winner, scores=deal.scores).SerializeToString() if over else b"",
                self.tail,
                pb.TableState(deal_code=self.deal_code).SerializeToString() if over else b"",
            )
        )


def table_bytes(deal: Deal, deal_id: str, parts: RulesetParts | None = None, *, deal_code: str = "") -> bytes:
    """The public table of ``deal`` (a ``TableState``), written once (see :class:`DealWriter`)."""
    return DealWriter(deal, deal_id, parts, deal_code=deal_code).table(deal)


def table_to_pb(deal: Deal, deal_id: str, *, deal_code: str = "") -> pb.TableState:
    """:func:`table_bytes` as a message (for answers other than a move's)."""
    return pb.TableState.FromString(table_bytes(deal, deal_id, deal_code=deal_code))


PASS_OUTCOME = pb.MoveOutcome(accepted=True, is_pass=True).SerializeToString()


def refusal_outcome(refusal: Refusal) -> bytes:
    """The outcome of a refused move (a ``MoveOutcome``)."""
    return pb.MoveOutcome(accepted=False, refusal=cv.refusal_to_pb(refusal)).SerializeToString()


# -- answers ---------------------------------------------------------------------------------------


def opened_response(
    deal_code: str, table: bytes, events: list[bytes], view: bytes, state_token: bytes, seat_token: bytes = b""
) -> bytes:
    """A ``PlayStreamResponse`` holding a ``StreamOpened``: the stream's first answer, its fields in
    :data:`_OPENED_ORDER`."""
    body = [
        delimited(_OPENED["deal_code"], deal_code.encode()) if deal_code else b"",
        delimited(_OPENED["table"], table),
    ]
    body += (delimited(_OPENED["events"], event) for event in events)
    if view:
        body.append(delimited(_OPENED["view"], view))
    body.append(delimited(_OPENED["state_token"], state_token))
    if seat_token:
        body.append(delimited(_OPENED["seat_token"], seat_token))
    return delimited(_STREAM_OPENED, b"".join(body))
