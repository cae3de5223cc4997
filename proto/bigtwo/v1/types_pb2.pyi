from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KIND_UNSPECIFIED: _ClassVar[Kind]
    KIND_SINGLE: _ClassVar[Kind]
    KIND_PAIR: _ClassVar[Kind]
    KIND_TRIPLE: _ClassVar[Kind]
    KIND_STRAIGHT: _ClassVar[Kind]
    KIND_FLUSH: _ClassVar[Kind]
    KIND_FULL_HOUSE: _ClassVar[Kind]
    KIND_FOUR_OF_A_KIND: _ClassVar[Kind]
    KIND_STRAIGHT_FLUSH: _ClassVar[Kind]

class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REASON_UNSPECIFIED: _ClassVar[Reason]
    REASON_GAME_OVER: _ClassVar[Reason]
    REASON_NOT_YOUR_TURN: _ClassVar[Reason]
    REASON_CANNOT_PASS_LEADING: _ClassVar[Reason]
    REASON_BAD_CARD: _ClassVar[Reason]
    REASON_NOT_IN_HAND: _ClassVar[Reason]
    REASON_MUST_INCLUDE_OPENING_CARD: _ClassVar[Reason]
    REASON_WRONG_SIZE: _ClassVar[Reason]
    REASON_NOT_A_COMBINATION: _ClassVar[Reason]
    REASON_NO_TWO_IN_STRAIGHTS: _ClassVar[Reason]
    REASON_NO_FLUSH: _ClassVar[Reason]
    REASON_NO_LONE_TRIPLE: _ClassVar[Reason]
    REASON_DOES_NOT_BEAT: _ClassVar[Reason]
    REASON_SINGLE_TWO_LAST: _ClassVar[Reason]
    REASON_MUST_PLAY_HIGHEST_SINGLE: _ClassVar[Reason]
KIND_UNSPECIFIED: Kind
KIND_SINGLE: Kind
KIND_PAIR: Kind
KIND_TRIPLE: Kind
KIND_STRAIGHT: Kind
KIND_FLUSH: Kind
KIND_FULL_HOUSE: Kind
KIND_FOUR_OF_A_KIND: Kind
KIND_STRAIGHT_FLUSH: Kind
REASON_UNSPECIFIED: Reason
REASON_GAME_OVER: Reason
REASON_NOT_YOUR_TURN: Reason
REASON_CANNOT_PASS_LEADING: Reason
REASON_BAD_CARD: Reason
REASON_NOT_IN_HAND: Reason
REASON_MUST_INCLUDE_OPENING_CARD: Reason
REASON_WRONG_SIZE: Reason
REASON_NOT_A_COMBINATION: Reason
REASON_NO_TWO_IN_STRAIGHTS: Reason
REASON_NO_FLUSH: Reason
REASON_NO_LONE_TRIPLE: Reason
REASON_DOES_NOT_BEAT: Reason
REASON_SINGLE_TWO_LAST: Reason
REASON_MUST_PLAY_HIGHEST_SINGLE: Reason

class Ruleset(_message.Message):
    __slots__ = ("preset", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PRESET_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    preset: str
    options: _containers.ScalarMap[str, str]
    def __init__(self, preset: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CardSet(_message.Message):
    __slots__ = ("text", "mask")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    MASK_FIELD_NUMBER: _ClassVar[int]
    text: str
    mask: int
    def __init__(self, text: _Optional[str] = ..., mask: _Optional[int] = ...) -> None: ...

class Refusal(_message.Message):
    __slots__ = ("reason", "reason_id", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: Reason
    reason_id: str
    message: str
    def __init__(self, reason: _Optional[_Union[Reason, str]] = ..., reason_id: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("cards", "kind", "name")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    cards: CardSet
    kind: Kind
    name: str
    def __init__(self, cards: _Optional[_Union[CardSet, _Mapping]] = ..., kind: _Optional[_Union[Kind, str]] = ..., name: _Optional[str] = ...) -> None: ...

class ExplicitDeal(_message.Message):
    __slots__ = ("hands",)
    HANDS_FIELD_NUMBER: _ClassVar[int]
    hands: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hands: _Optional[_Iterable[str]] = ...) -> None: ...

class DealContext(_message.Message):
    __slots__ = ("deal_number", "previous_winner", "empty_seats")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_WINNER_FIELD_NUMBER: _ClassVar[int]
    EMPTY_SEATS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    previous_winner: int
    empty_seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, deal_number: _Optional[int] = ..., previous_winner: _Optional[int] = ..., empty_seats: _Optional[_Iterable[int]] = ...) -> None: ...

class GameLog(_message.Message):
    __slots__ = ("ruleset", "deal_code", "explicit_deal", "context", "moves")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    DEAL_CODE_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_DEAL_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    ruleset: Ruleset
    deal_code: str
    explicit_deal: ExplicitDeal
    context: DealContext
    moves: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ruleset: _Optional[_Union[Ruleset, _Mapping]] = ..., deal_code: _Optional[str] = ..., explicit_deal: _Optional[_Union[ExplicitDeal, _Mapping]] = ..., context: _Optional[_Union[DealContext, _Mapping]] = ..., moves: _Optional[_Iterable[str]] = ...) -> None: ...

class Game(_message.Message):
    __slots__ = ("log", "state_token")
    LOG_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    log: GameLog
    state_token: bytes
    def __init__(self, log: _Optional[_Union[GameLog, _Mapping]] = ..., state_token: _Optional[bytes] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("index", "seat", "text")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    index: int
    seat: int
    text: str
    def __init__(self, index: _Optional[int] = ..., seat: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class MoveOutcome(_message.Message):
    __slots__ = ("accepted", "refusal", "play", "is_pass")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    IS_PASS_FIELD_NUMBER: _ClassVar[int]
    accepted: bool
    refusal: Refusal
    play: Play
    is_pass: bool
    def __init__(self, accepted: _Optional[bool] = ..., refusal: _Optional[_Union[Refusal, _Mapping]] = ..., play: _Optional[_Union[Play, _Mapping]] = ..., is_pass: _Optional[bool] = ...) -> None: ...

class DealStartedEvent(_message.Message):
    __slots__ = ("hands", "hand_sizes", "leader", "opening_card", "deal_number", "face_up_card", "face_up_seat")
    HANDS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    OPENING_CARD_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_CARD_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_SEAT_FIELD_NUMBER: _ClassVar[int]
    hands: _containers.RepeatedCompositeFieldContainer[CardSet]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    leader: int
    opening_card: str
    deal_number: int
    face_up_card: str
    face_up_seat: int
    def __init__(self, hands: _Optional[_Iterable[_Union[CardSet, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., leader: _Optional[int] = ..., opening_card: _Optional[str] = ..., deal_number: _Optional[int] = ..., face_up_card: _Optional[str] = ..., face_up_seat: _Optional[int] = ...) -> None: ...

class CardsPlayedEvent(_message.Message):
    __slots__ = ("seat", "play", "move_index")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    MOVE_INDEX_FIELD_NUMBER: _ClassVar[int]
    seat: int
    play: Play
    move_index: int
    def __init__(self, seat: _Optional[int] = ..., play: _Optional[_Union[Play, _Mapping]] = ..., move_index: _Optional[int] = ...) -> None: ...

class PassedEvent(_message.Message):
    __slots__ = ("seat", "move_index", "automatic")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_INDEX_FIELD_NUMBER: _ClassVar[int]
    AUTOMATIC_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move_index: int
    automatic: bool
    def __init__(self, seat: _Optional[int] = ..., move_index: _Optional[int] = ..., automatic: _Optional[bool] = ...) -> None: ...

class TrickEndedEvent(_message.Message):
    __slots__ = ("winner",)
    WINNER_FIELD_NUMBER: _ClassVar[int]
    winner: int
    def __init__(self, winner: _Optional[int] = ...) -> None: ...

class LastCardEvent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DragonRevealedEvent(_message.Message):
    __slots__ = ("seat", "hand")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: CardSet
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Union[CardSet, _Mapping]] = ...) -> None: ...

class DealEndedEvent(_message.Message):
    __slots__ = ("winner", "cards_left", "twos_left", "scores", "by_dragon")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TWOS_LEFT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    BY_DRAGON_FIELD_NUMBER: _ClassVar[int]
    winner: int
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    twos_left: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    by_dragon: bool
    def __init__(self, winner: _Optional[int] = ..., cards_left: _Optional[_Iterable[int]] = ..., twos_left: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., by_dragon: _Optional[bool] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("deal_started", "cards_played", "passed", "trick_ended", "last_card", "dragon_revealed", "deal_ended", "description")
    DEAL_STARTED_FIELD_NUMBER: _ClassVar[int]
    CARDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    TRICK_ENDED_FIELD_NUMBER: _ClassVar[int]
    LAST_CARD_FIELD_NUMBER: _ClassVar[int]
    DRAGON_REVEALED_FIELD_NUMBER: _ClassVar[int]
    DEAL_ENDED_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    deal_started: DealStartedEvent
    cards_played: CardsPlayedEvent
    passed: PassedEvent
    trick_ended: TrickEndedEvent
    last_card: LastCardEvent
    dragon_revealed: DragonRevealedEvent
    deal_ended: DealEndedEvent
    description: str
    def __init__(self, deal_started: _Optional[_Union[DealStartedEvent, _Mapping]] = ..., cards_played: _Optional[_Union[CardsPlayedEvent, _Mapping]] = ..., passed: _Optional[_Union[PassedEvent, _Mapping]] = ..., trick_ended: _Optional[_Union[TrickEndedEvent, _Mapping]] = ..., last_card: _Optional[_Union[LastCardEvent, _Mapping]] = ..., dragon_revealed: _Optional[_Union[DragonRevealedEvent, _Mapping]] = ..., deal_ended: _Optional[_Union[DealEndedEvent, _Mapping]] = ..., description: _Optional[str] = ...) -> None: ...

class TableState(_message.Message):
    __slots__ = ("players", "moves_made", "to_act", "leader", "table", "last_player", "cards_left", "played", "passed_seats", "opening_card", "over", "winner", "scores", "deal_number", "deal_id", "ruleset_fingerprint", "deal_code")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    MOVES_MADE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    LAST_PLAYER_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    PASSED_SEATS_FIELD_NUMBER: _ClassVar[int]
    OPENING_CARD_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEAL_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    DEAL_CODE_FIELD_NUMBER: _ClassVar[int]
    players: int
    moves_made: int
    to_act: int
    leader: int
    table: Play
    last_player: int
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    played: CardSet
    passed_seats: _containers.RepeatedScalarFieldContainer[int]
    opening_card: str
    over: bool
    winner: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    deal_number: int
    deal_id: str
    ruleset_fingerprint: str
    deal_code: str
    def __init__(self, players: _Optional[int] = ..., moves_made: _Optional[int] = ..., to_act: _Optional[int] = ..., leader: _Optional[int] = ..., table: _Optional[_Union[Play, _Mapping]] = ..., last_player: _Optional[int] = ..., cards_left: _Optional[_Iterable[int]] = ..., played: _Optional[_Union[CardSet, _Mapping]] = ..., passed_seats: _Optional[_Iterable[int]] = ..., opening_card: _Optional[str] = ..., over: _Optional[bool] = ..., winner: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., deal_number: _Optional[int] = ..., deal_id: _Optional[str] = ..., ruleset_fingerprint: _Optional[str] = ..., deal_code: _Optional[str] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "hand", "ending_now", "to_act")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    ENDING_NOW_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: CardSet
    ending_now: str
    to_act: bool
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Union[CardSet, _Mapping]] = ..., ending_now: _Optional[str] = ..., to_act: _Optional[bool] = ...) -> None: ...

class SeatScore(_message.Message):
    __slots__ = ("seat", "cards_left", "twos_left", "rate", "multiplier", "penalty", "score")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TWOS_LEFT_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards_left: int
    twos_left: int
    rate: int
    multiplier: int
    penalty: int
    score: int
    def __init__(self, seat: _Optional[int] = ..., cards_left: _Optional[int] = ..., twos_left: _Optional[int] = ..., rate: _Optional[int] = ..., multiplier: _Optional[int] = ..., penalty: _Optional[int] = ..., score: _Optional[int] = ...) -> None: ...

class DealResult(_message.Message):
    __slots__ = ("deal_number", "winner", "scores", "cards_left", "deal_code", "by_dragon")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    DEAL_CODE_FIELD_NUMBER: _ClassVar[int]
    BY_DRAGON_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    winner: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    deal_code: str
    by_dragon: bool
    def __init__(self, deal_number: _Optional[int] = ..., winner: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., cards_left: _Optional[_Iterable[int]] = ..., deal_code: _Optional[str] = ..., by_dragon: _Optional[bool] = ...) -> None: ...

class Preset(_message.Message):
    __slots__ = ("name", "summary", "ruleset", "fingerprint", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    summary: str
    ruleset: Ruleset
    fingerprint: str
    description: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., summary: _Optional[str] = ..., ruleset: _Optional[_Union[Ruleset, _Mapping]] = ..., fingerprint: _Optional[str] = ..., description: _Optional[_Iterable[str]] = ...) -> None: ...
