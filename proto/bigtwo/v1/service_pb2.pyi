from bigtwo.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class VerdictKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERDICT_KIND_UNSPECIFIED: _ClassVar[VerdictKind]
    VERDICT_KIND_VALID: _ClassVar[VerdictKind]
    VERDICT_KIND_FORMAT_ERROR: _ClassVar[VerdictKind]
    VERDICT_KIND_RULESET_MISMATCH: _ClassVar[VerdictKind]
    VERDICT_KIND_DEAL_CODE_MISMATCH: _ClassVar[VerdictKind]
    VERDICT_KIND_CONTEXT_MISMATCH: _ClassVar[VerdictKind]
    VERDICT_KIND_ILLEGAL_MOVE: _ClassVar[VerdictKind]
    VERDICT_KIND_RESULT_MISMATCH: _ClassVar[VerdictKind]
    VERDICT_KIND_BROKEN_CHAIN: _ClassVar[VerdictKind]
    VERDICT_KIND_BAD_SIGNATURE: _ClassVar[VerdictKind]
VERDICT_KIND_UNSPECIFIED: VerdictKind
VERDICT_KIND_VALID: VerdictKind
VERDICT_KIND_FORMAT_ERROR: VerdictKind
VERDICT_KIND_RULESET_MISMATCH: VerdictKind
VERDICT_KIND_DEAL_CODE_MISMATCH: VerdictKind
VERDICT_KIND_CONTEXT_MISMATCH: VerdictKind
VERDICT_KIND_ILLEGAL_MOVE: VerdictKind
VERDICT_KIND_RESULT_MISMATCH: VerdictKind
VERDICT_KIND_BROKEN_CHAIN: VerdictKind
VERDICT_KIND_BAD_SIGNATURE: VerdictKind

class ListPresetsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPresetsResponse(_message.Message):
    __slots__ = ("presets", "bot_levels", "default_bot_level")
    PRESETS_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVELS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_BOT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    presets: _containers.RepeatedCompositeFieldContainer[_types_pb2.Preset]
    bot_levels: _containers.RepeatedCompositeFieldContainer[BotLevelInfo]
    default_bot_level: str
    def __init__(self, presets: _Optional[_Iterable[_Union[_types_pb2.Preset, _Mapping]]] = ..., bot_levels: _Optional[_Iterable[_Union[BotLevelInfo, _Mapping]]] = ..., default_bot_level: _Optional[str] = ...) -> None: ...

class BotLevelInfo(_message.Message):
    __slots__ = ("name", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class SeatBotLevel(_message.Message):
    __slots__ = ("seat", "level")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    level: str
    def __init__(self, seat: _Optional[int] = ..., level: _Optional[str] = ...) -> None: ...

class DescribeRulesetRequest(_message.Message):
    __slots__ = ("ruleset",)
    RULESET_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ...) -> None: ...

class DescribeRulesetResponse(_message.Message):
    __slots__ = ("ruleset", "overrides", "fingerprint", "description")
    class OverridesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RULESET_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    overrides: _containers.ScalarMap[str, str]
    fingerprint: str
    description: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., overrides: _Optional[_Mapping[str, str]] = ..., fingerprint: _Optional[str] = ..., description: _Optional[_Iterable[str]] = ...) -> None: ...

class DealRequest(_message.Message):
    __slots__ = ("ruleset", "deal_code", "explicit_deal", "context", "view_seat", "bot_seats", "bot_levels")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    DEAL_CODE_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_DEAL_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    VIEW_SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_SEATS_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVELS_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    deal_code: str
    explicit_deal: _types_pb2.ExplicitDeal
    context: _types_pb2.DealContext
    view_seat: int
    bot_seats: _containers.RepeatedScalarFieldContainer[int]
    bot_levels: _containers.RepeatedCompositeFieldContainer[SeatBotLevel]
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., deal_code: _Optional[str] = ..., explicit_deal: _Optional[_Union[_types_pb2.ExplicitDeal, _Mapping]] = ..., context: _Optional[_Union[_types_pb2.DealContext, _Mapping]] = ..., view_seat: _Optional[int] = ..., bot_seats: _Optional[_Iterable[int]] = ..., bot_levels: _Optional[_Iterable[_Union[SeatBotLevel, _Mapping]]] = ...) -> None: ...

class DealResponse(_message.Message):
    __slots__ = ("deal_code", "state_token", "table", "events", "view", "seat_token")
    DEAL_CODE_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    deal_code: str
    state_token: bytes
    table: _types_pb2.TableState
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    view: _types_pb2.SeatView
    seat_token: bytes
    def __init__(self, deal_code: _Optional[str] = ..., state_token: _Optional[bytes] = ..., table: _Optional[_Union[_types_pb2.TableState, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., view: _Optional[_Union[_types_pb2.SeatView, _Mapping]] = ..., seat_token: _Optional[bytes] = ...) -> None: ...

class ValidateMoveRequest(_message.Message):
    __slots__ = ("game", "move")
    GAME_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    move: _types_pb2.Move
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., move: _Optional[_Union[_types_pb2.Move, _Mapping]] = ...) -> None: ...

class ValidateMoveResponse(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: _types_pb2.MoveOutcome
    def __init__(self, outcome: _Optional[_Union[_types_pb2.MoveOutcome, _Mapping]] = ...) -> None: ...

class ApplyMoveRequest(_message.Message):
    __slots__ = ("game", "move", "view_seat")
    GAME_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    VIEW_SEAT_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    move: _types_pb2.Move
    view_seat: int
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., move: _Optional[_Union[_types_pb2.Move, _Mapping]] = ..., view_seat: _Optional[int] = ...) -> None: ...

class ApplyMoveResponse(_message.Message):
    __slots__ = ("outcome", "events", "state_token", "table", "view", "seat_token")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    outcome: _types_pb2.MoveOutcome
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    state_token: bytes
    table: _types_pb2.TableState
    view: _types_pb2.SeatView
    seat_token: bytes
    def __init__(self, outcome: _Optional[_Union[_types_pb2.MoveOutcome, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., state_token: _Optional[bytes] = ..., table: _Optional[_Union[_types_pb2.TableState, _Mapping]] = ..., view: _Optional[_Union[_types_pb2.SeatView, _Mapping]] = ..., seat_token: _Optional[bytes] = ...) -> None: ...

class HandPosition(_message.Message):
    __slots__ = ("ruleset", "hand", "table")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    hand: str
    table: str
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., hand: _Optional[str] = ..., table: _Optional[str] = ...) -> None: ...

class LegalMovesRequest(_message.Message):
    __slots__ = ("game", "position")
    GAME_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    position: HandPosition
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., position: _Optional[_Union[HandPosition, _Mapping]] = ...) -> None: ...

class LegalMovesResponse(_message.Message):
    __slots__ = ("seat", "plays", "can_pass")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    CAN_PASS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    plays: _containers.RepeatedCompositeFieldContainer[_types_pb2.Play]
    can_pass: bool
    def __init__(self, seat: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[_types_pb2.Play, _Mapping]]] = ..., can_pass: _Optional[bool] = ...) -> None: ...

class NextHintRequest(_message.Message):
    __slots__ = ("game", "after")
    GAME_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    after: str
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., after: _Optional[str] = ...) -> None: ...

class NextHintResponse(_message.Message):
    __slots__ = ("play", "cycle_length")
    PLAY_FIELD_NUMBER: _ClassVar[int]
    CYCLE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    play: _types_pb2.Play
    cycle_length: int
    def __init__(self, play: _Optional[_Union[_types_pb2.Play, _Mapping]] = ..., cycle_length: _Optional[int] = ...) -> None: ...

class TimeoutMoveRequest(_message.Message):
    __slots__ = ("game", "bot_level")
    GAME_FIELD_NUMBER: _ClassVar[int]
    BOT_LEVEL_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    bot_level: str
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., bot_level: _Optional[str] = ...) -> None: ...

class TimeoutMoveResponse(_message.Message):
    __slots__ = ("move",)
    MOVE_FIELD_NUMBER: _ClassVar[int]
    move: _types_pb2.Move
    def __init__(self, move: _Optional[_Union[_types_pb2.Move, _Mapping]] = ...) -> None: ...

class SplitHandRequest(_message.Message):
    __slots__ = ("ruleset", "hand")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    hand: str
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., hand: _Optional[str] = ...) -> None: ...

class SplitHandResponse(_message.Message):
    __slots__ = ("plays",)
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[_types_pb2.Play]
    def __init__(self, plays: _Optional[_Iterable[_Union[_types_pb2.Play, _Mapping]]] = ...) -> None: ...

class NameCardsRequest(_message.Message):
    __slots__ = ("cards", "ruleset", "game", "table", "seat")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    cards: str
    ruleset: _types_pb2.Ruleset
    game: _types_pb2.Game
    table: str
    seat: int
    def __init__(self, cards: _Optional[str] = ..., ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., table: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class NameCardsResponse(_message.Message):
    __slots__ = ("name", "kind", "playable", "refusal", "ending_now")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAYABLE_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    ENDING_NOW_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: _types_pb2.Kind
    playable: bool
    refusal: _types_pb2.Refusal
    ending_now: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[_types_pb2.Kind, str]] = ..., playable: _Optional[bool] = ..., refusal: _Optional[_Union[_types_pb2.Refusal, _Mapping]] = ..., ending_now: _Optional[str] = ...) -> None: ...

class CardCounts(_message.Message):
    __slots__ = ("ruleset", "cards_left", "twos_left")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TWOS_LEFT_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    twos_left: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., cards_left: _Optional[_Iterable[int]] = ..., twos_left: _Optional[_Iterable[int]] = ...) -> None: ...

class ScoreDealRequest(_message.Message):
    __slots__ = ("counts", "game")
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    counts: CardCounts
    game: _types_pb2.Game
    def __init__(self, counts: _Optional[_Union[CardCounts, _Mapping]] = ..., game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ...) -> None: ...

class ScoreDealResponse(_message.Message):
    __slots__ = ("winner", "seats", "scores")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    winner: int
    seats: _containers.RepeatedCompositeFieldContainer[_types_pb2.SeatScore]
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, winner: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[_types_pb2.SeatScore, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class SettleMatchRequest(_message.Message):
    __slots__ = ("ruleset", "deals", "empty_seats", "stopped")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    EMPTY_SEATS_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    ruleset: _types_pb2.Ruleset
    deals: _containers.RepeatedCompositeFieldContainer[_types_pb2.DealResult]
    empty_seats: _containers.RepeatedScalarFieldContainer[int]
    stopped: bool
    def __init__(self, ruleset: _Optional[_Union[_types_pb2.Ruleset, _Mapping]] = ..., deals: _Optional[_Iterable[_Union[_types_pb2.DealResult, _Mapping]]] = ..., empty_seats: _Optional[_Iterable[int]] = ..., stopped: _Optional[bool] = ...) -> None: ...

class SettleMatchResponse(_message.Message):
    __slots__ = ("totals", "deals_won", "over", "winners", "next_context")
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    DEALS_WON_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    deals_won: _containers.RepeatedScalarFieldContainer[int]
    over: bool
    winners: _containers.RepeatedScalarFieldContainer[int]
    next_context: _types_pb2.DealContext
    def __init__(self, totals: _Optional[_Iterable[int]] = ..., deals_won: _Optional[_Iterable[int]] = ..., over: _Optional[bool] = ..., winners: _Optional[_Iterable[int]] = ..., next_context: _Optional[_Union[_types_pb2.DealContext, _Mapping]] = ...) -> None: ...

class ReplayLogRequest(_message.Message):
    __slots__ = ("log", "view_seat")
    LOG_FIELD_NUMBER: _ClassVar[int]
    VIEW_SEAT_FIELD_NUMBER: _ClassVar[int]
    log: _types_pb2.GameLog
    view_seat: int
    def __init__(self, log: _Optional[_Union[_types_pb2.GameLog, _Mapping]] = ..., view_seat: _Optional[int] = ...) -> None: ...

class ReplayLogResponse(_message.Message):
    __slots__ = ("moves_applied", "refused", "refused_at", "refusal", "events", "table", "state_token")
    MOVES_APPLIED_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    REFUSED_AT_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    moves_applied: int
    refused: bool
    refused_at: int
    refusal: _types_pb2.Refusal
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    table: _types_pb2.TableState
    state_token: bytes
    def __init__(self, moves_applied: _Optional[int] = ..., refused: _Optional[bool] = ..., refused_at: _Optional[int] = ..., refusal: _Optional[_Union[_types_pb2.Refusal, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., table: _Optional[_Union[_types_pb2.TableState, _Mapping]] = ..., state_token: _Optional[bytes] = ...) -> None: ...

class StreamOpen(_message.Message):
    __slots__ = ("game", "view_seat", "state_tokens")
    GAME_FIELD_NUMBER: _ClassVar[int]
    VIEW_SEAT_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    view_seat: int
    state_tokens: bool
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., view_seat: _Optional[int] = ..., state_tokens: _Optional[bool] = ...) -> None: ...

class StreamMove(_message.Message):
    __slots__ = ("move", "validate_only")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    move: _types_pb2.Move
    validate_only: bool
    def __init__(self, move: _Optional[_Union[_types_pb2.Move, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class PlayStreamRequest(_message.Message):
    __slots__ = ("open", "move")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    open: StreamOpen
    move: StreamMove
    def __init__(self, open: _Optional[_Union[StreamOpen, _Mapping]] = ..., move: _Optional[_Union[StreamMove, _Mapping]] = ...) -> None: ...

class StreamOpened(_message.Message):
    __slots__ = ("deal_code", "table", "events", "view", "state_token", "seat_token")
    DEAL_CODE_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    deal_code: str
    table: _types_pb2.TableState
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    view: _types_pb2.SeatView
    state_token: bytes
    seat_token: bytes
    def __init__(self, deal_code: _Optional[str] = ..., table: _Optional[_Union[_types_pb2.TableState, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., view: _Optional[_Union[_types_pb2.SeatView, _Mapping]] = ..., state_token: _Optional[bytes] = ..., seat_token: _Optional[bytes] = ...) -> None: ...

class StreamMoveResult(_message.Message):
    __slots__ = ("index", "outcome", "events", "table", "view", "state_token", "seat_token")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    index: int
    outcome: _types_pb2.MoveOutcome
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    table: _types_pb2.TableState
    view: _types_pb2.SeatView
    state_token: bytes
    seat_token: bytes
    def __init__(self, index: _Optional[int] = ..., outcome: _Optional[_Union[_types_pb2.MoveOutcome, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., table: _Optional[_Union[_types_pb2.TableState, _Mapping]] = ..., view: _Optional[_Union[_types_pb2.SeatView, _Mapping]] = ..., state_token: _Optional[bytes] = ..., seat_token: _Optional[bytes] = ...) -> None: ...

class PlayStreamResponse(_message.Message):
    __slots__ = ("opened", "move_result")
    OPENED_FIELD_NUMBER: _ClassVar[int]
    MOVE_RESULT_FIELD_NUMBER: _ClassVar[int]
    opened: StreamOpened
    move_result: StreamMoveResult
    def __init__(self, opened: _Optional[_Union[StreamOpened, _Mapping]] = ..., move_result: _Optional[_Union[StreamMoveResult, _Mapping]] = ...) -> None: ...

class BotMoveRequest(_message.Message):
    __slots__ = ("game", "level", "seed", "simulations", "max_ms")
    GAME_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SIMULATIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_MS_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    level: str
    seed: int
    simulations: int
    max_ms: int
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., level: _Optional[str] = ..., seed: _Optional[int] = ..., simulations: _Optional[int] = ..., max_ms: _Optional[int] = ...) -> None: ...

class BotMoveResponse(_message.Message):
    __slots__ = ("move", "name", "level")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    move: _types_pb2.Move
    name: str
    level: str
    def __init__(self, move: _Optional[_Union[_types_pb2.Move, _Mapping]] = ..., name: _Optional[str] = ..., level: _Optional[str] = ...) -> None: ...

class BotSeat(_message.Message):
    __slots__ = ("seat", "level", "seed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    level: str
    seed: int
    def __init__(self, seat: _Optional[int] = ..., level: _Optional[str] = ..., seed: _Optional[int] = ...) -> None: ...

class PlayBotsRequest(_message.Message):
    __slots__ = ("game", "bots")
    GAME_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    game: _types_pb2.Game
    bots: _containers.RepeatedCompositeFieldContainer[BotSeat]
    def __init__(self, game: _Optional[_Union[_types_pb2.Game, _Mapping]] = ..., bots: _Optional[_Iterable[_Union[BotSeat, _Mapping]]] = ...) -> None: ...

class BotPlayed(_message.Message):
    __slots__ = ("move", "name", "level")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    move: _types_pb2.Move
    name: str
    level: str
    def __init__(self, move: _Optional[_Union[_types_pb2.Move, _Mapping]] = ..., name: _Optional[str] = ..., level: _Optional[str] = ...) -> None: ...

class PlayBotsResponse(_message.Message):
    __slots__ = ("moves", "events", "table", "view", "state_token", "seat_token")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[BotPlayed]
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    table: _types_pb2.TableState
    view: _types_pb2.SeatView
    state_token: bytes
    seat_token: bytes
    def __init__(self, moves: _Optional[_Iterable[_Union[BotPlayed, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., table: _Optional[_Union[_types_pb2.TableState, _Mapping]] = ..., view: _Optional[_Union[_types_pb2.SeatView, _Mapping]] = ..., state_token: _Optional[bytes] = ..., seat_token: _Optional[bytes] = ...) -> None: ...

class AuditLogRequest(_message.Message):
    __slots__ = ("replay_toml", "game_log", "want_steps", "require_signature", "view_seat")
    REPLAY_TOML_FIELD_NUMBER: _ClassVar[int]
    GAME_LOG_FIELD_NUMBER: _ClassVar[int]
    WANT_STEPS_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    VIEW_SEAT_FIELD_NUMBER: _ClassVar[int]
    replay_toml: str
    game_log: _types_pb2.GameLog
    want_steps: bool
    require_signature: bool
    view_seat: int
    def __init__(self, replay_toml: _Optional[str] = ..., game_log: _Optional[_Union[_types_pb2.GameLog, _Mapping]] = ..., want_steps: _Optional[bool] = ..., require_signature: _Optional[bool] = ..., view_seat: _Optional[int] = ...) -> None: ...

class AuditProblem(_message.Message):
    __slots__ = ("kind", "message", "deal_number", "action_index", "move_index", "line", "reason_id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    MOVE_INDEX_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    REASON_ID_FIELD_NUMBER: _ClassVar[int]
    kind: VerdictKind
    message: str
    deal_number: int
    action_index: int
    move_index: int
    line: int
    reason_id: str
    def __init__(self, kind: _Optional[_Union[VerdictKind, str]] = ..., message: _Optional[str] = ..., deal_number: _Optional[int] = ..., action_index: _Optional[int] = ..., move_index: _Optional[int] = ..., line: _Optional[int] = ..., reason_id: _Optional[str] = ...) -> None: ...

class AuditStep(_message.Message):
    __slots__ = ("step", "deal_number", "action_index", "actor", "text", "refused", "to_act", "table", "cards_left", "deal_over", "winner", "deal_scores", "totals", "hand")
    STEP_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    DEAL_OVER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    DEAL_SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    step: int
    deal_number: int
    action_index: int
    actor: int
    text: str
    refused: str
    to_act: int
    table: _types_pb2.CardSet
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    deal_over: bool
    winner: int
    deal_scores: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    hand: _types_pb2.CardSet
    def __init__(self, step: _Optional[int] = ..., deal_number: _Optional[int] = ..., action_index: _Optional[int] = ..., actor: _Optional[int] = ..., text: _Optional[str] = ..., refused: _Optional[str] = ..., to_act: _Optional[int] = ..., table: _Optional[_Union[_types_pb2.CardSet, _Mapping]] = ..., cards_left: _Optional[_Iterable[int]] = ..., deal_over: _Optional[bool] = ..., winner: _Optional[int] = ..., deal_scores: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., hand: _Optional[_Union[_types_pb2.CardSet, _Mapping]] = ...) -> None: ...

class AuditLogResponse(_message.Message):
    __slots__ = ("kind", "problems", "signature", "events", "steps", "deals_checked", "actions_checked", "totals")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    DEALS_CHECKED_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_CHECKED_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    kind: VerdictKind
    problems: _containers.RepeatedCompositeFieldContainer[AuditProblem]
    signature: str
    events: _containers.RepeatedCompositeFieldContainer[_types_pb2.Event]
    steps: _containers.RepeatedCompositeFieldContainer[AuditStep]
    deals_checked: int
    actions_checked: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, kind: _Optional[_Union[VerdictKind, str]] = ..., problems: _Optional[_Iterable[_Union[AuditProblem, _Mapping]]] = ..., signature: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_types_pb2.Event, _Mapping]]] = ..., steps: _Optional[_Iterable[_Union[AuditStep, _Mapping]]] = ..., deals_checked: _Optional[int] = ..., actions_checked: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...
