"""Loading games: a new deal (from a deal code, explicit hands or fresh entropy), a deal replayed
from its log, or a deal resumed from a state token (:class:`GameLoader`); the tokens of a loaded
game (:class:`GameTokens`); and the seat checks every answer of a loaded game needs. Every request
limit on what is loaded is checked here, before the work."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bigtwo.engine import Deal, DealCode, Move, Refusal, Ruleset, deal_from_code, explicit_deal
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from google.protobuf.message import Message

from . import convert as cv
from .deal_ids import DealIds
from .errors import InvalidArgument, ResourceExhausted, at_field, bad_field
from .game import CallInfo, Game
from .limits import LIMITS, Limits, quote
from .tokens import DealIdentity, TableSeal, TokenCodec, explicit_identity, identity_of


@dataclass(frozen=True, slots=True)
class CardSource:
    """Where a new deal's cards come from, as a request or a log names them, and the field path its
    refusals name."""

    kind: str
    """``deal_code``, ``explicit_deal``, or empty: fresh entropy."""
    code_text: str = ""
    hands: tuple[str, ...] = ()
    context: pb.DealContext | None = None
    path: str = ""
    """The message holding the fields (``log``), empty at the request's top level."""

    @classmethod
    def of_request(cls, request: api.DealRequest) -> CardSource:
        return cls(
            request.WhichOneof("source") or "",
            request.deal_code,
            tuple(request.explicit_deal.hands),
            request.context,
        )

    @classmethod
    def of_log(cls, log: pb.GameLog, path: str) -> CardSource:
        """A log's cards (refused, naming ``path``, when it has none)."""
        kind = log.WhichOneof("deal")
        if kind is None:
            raise bad_field(f"{path}.deal_code", "a log needs its cards: set deal_code or explicit_deal")
        return cls(kind, log.deal_code, tuple(log.explicit_deal.hands), log.context, path)


class GameLoader:
    """Loads the game a request names. Thread-safe: it holds only the token codec, the entropy, the
    limits and the deal names."""

    def __init__(
        self,
        codec: TokenCodec,
        entropy: Callable[[int], bytes] = secrets.token_bytes,
        limits: Limits = LIMITS,
    ) -> None:
        self.codec = codec
        self.entropy = entropy
        self.limits = limits
        self.deal_ids = DealIds(codec.keys.signing_key)

    def _name(self, identity: DealIdentity, ruleset: Ruleset, info: CallInfo) -> str:
        """The public name of the deal ``identity`` names, told to the call's log line too."""
        public_id = info.deal_id = self.deal_ids.of(identity)
        info.preset = ruleset.preset
        return public_id

    def start(self, ruleset: Ruleset, source: CardSource, info: CallInfo, seal: TableSeal | None = None) -> Game:
        """A new deal from ``source``; ``seal``: what ``Deal`` fixed for it (its tokens carry it)."""
        deal, identity, public_id = self._dealt(ruleset, source, info)
        return Game(ruleset, deal, identity, deal.face_up_card, deal.face_up_seat, public_id=public_id, seal=seal)

    def _dealt(self, ruleset: Ruleset, source: CardSource, info: CallInfo) -> tuple[Deal, DealIdentity, str]:
        """A new deal (see :meth:`start`), its identity and its public name."""
        base = source.path
        path = f"{base}." if base else ""
        limits = self.limits
        hands = source.hands
        if source.kind == "explicit_deal":
            if len(hands) > 4:
                raise bad_field(f"{path}explicit_deal.hands", "at most 4 hands")
            for seat, text in enumerate(hands):
                if len(text) > limits.card_text:
                    raise bad_field(f"{path}explicit_deal.hands[{seat}]", f"at most {limits.card_text} characters")
            with at_field(f"{path}explicit_deal.hands"):
                dealt = explicit_deal(list(hands), ruleset)
            identity = explicit_identity(self.entropy(8))  # never a function of the hands
        else:
            if source.kind == "deal_code":
                if len(source.code_text) > limits.deal_code_text:
                    raise bad_field(f"{path}deal_code", "a deal code is 13 symbols")
                with at_field(f"{path}deal_code"):
                    deal_code = DealCode.parse(source.code_text)
            else:
                deal_code = DealCode.from_entropy(self.entropy(16))
            dealt = deal_from_code(deal_code, ruleset)
            identity = identity_of(False, deal_code.seed)
        context = cv.context_from(source.context or pb.DealContext(), ruleset.players, f"{path}context")
        with at_field(base or "context"):
            deal = Deal.start(ruleset, dealt, context)
        return deal, identity, self._name(identity, ruleset, info)

    def dealt_hands(self, log: pb.GameLog) -> tuple[Ruleset, tuple[int, ...]]:
        """A log's ruleset and the hands its deal starts with, without replaying a move (to bound a
        call's cost before loading it: :mod:`bigtwo.service.costs`). Raises what :meth:`load_log`
        would refuse, less precisely: the caller then lets the load name the field."""
        ruleset = cv.ruleset_from(log.ruleset, "log.ruleset")
        source = log.WhichOneof("deal")
        if source == "explicit_deal":
            hands = list(log.explicit_deal.hands)
            if len(hands) > 4 or any(len(text) > self.limits.card_text for text in hands):
                raise ValueError("explicit hands over the limits")
            return ruleset, explicit_deal(hands, ruleset).hands
        if source == "deal_code" and len(log.deal_code) <= self.limits.deal_code_text:
            return ruleset, deal_from_code(DealCode.parse(log.deal_code), ruleset).hands
        raise ValueError("no cards in the log")

    def load_log(self, log: pb.GameLog, path: str, info: CallInfo, seal: TableSeal | None = None) -> Game:
        """The game a log names; ``seal``: a new table's (a stream opened from a log), else none, so
        that its answers follow from the log alone."""
        ruleset = cv.ruleset_from(log.ruleset, f"{path}.ruleset")
        source = CardSource.of_log(log, path)
        self.check_moves(log.moves, f"{path}.moves")
        deal, identity, public_id = self._dealt(ruleset, source, info)
        moves = log.moves
        last = len(moves) - 1
        # The moves before the last are replayed on the bare deal (nothing of a game to keep for
        # them); the game is made from the deal before the last move, and plays that one itself,
        # keeping the state before it for a retry.
        for index in range(last):
            text = moves[index]
            try:
                deal.do(Move.parse(deal.to_act, text))
            except Refusal as refusal:
                raise _log_move_refused(path, index, text, refusal) from None
        game = Game(ruleset, deal, identity, deal.face_up_card, deal.face_up_seat, public_id=public_id, seal=seal)
        if last >= 0:
            text = moves[last]
            try:
                game.play(deal.to_act, Move.parse(deal.to_act, text))
            except Refusal as refusal:
                raise _log_move_refused(path, last, text, refusal) from None
        return game

    def check_moves(self, moves: Sequence[str], path: str) -> None:
        """A log's moves against the limits, before any is replayed."""
        limits = self.limits
        if len(moves) > limits.log_moves:
            raise ResourceExhausted(
                f"{path}: {len(moves)} moves; at most {limits.log_moves}",
                reason="LOG_TOO_LONG",
                metadata={"max_moves": str(limits.log_moves)},
            )
        for index, text in enumerate(moves):
            if len(text) > limits.card_text:
                raise bad_field(f"{path}[{index}]", f"at most {limits.card_text} characters")

    def load(self, message: pb.Game, path: str, info: CallInfo) -> Game:
        loaded = info.loaded
        if loaded is not None and loaded[0] is message:  # loaded already, to place the call
            info.loaded = None
            return loaded[1]
        which = message.WhichOneof("game")
        if which == "state_token":
            snap = self.codec.decode(message.state_token, f"{path}.state_token")
            return Game.resumed(snap, self._name(snap.identity, snap.ruleset, info))
        if which == "log":
            return self.load_log(message.log, f"{path}.log", info)
        raise bad_field(path, "set log or state_token")

    def hand_of(self, text: str, path: str) -> int:
        """A hand given as input: its cards, at most as many as any seat is dealt."""
        hand = cv.mask_from(text, path)
        most = self.limits.hand_cards
        if hand.bit_count() > most:
            raise bad_field(path, f"{hand.bit_count()} cards; a hand has at most {most}")
        return hand


def _log_move_refused(path: str, index: int, text: str, refusal: Refusal) -> InvalidArgument:
    """INVALID_ARGUMENT ``LOG_MOVE_REFUSED`` naming the log's move the rules refuse."""
    return bad_field(
        f"{path}.moves[{index}]",
        f"move {index} ({quote(text)}) is refused ({refusal.reason.value}): {refusal.message}",
        reason="LOG_MOVE_REFUSED",
    )


class GameTokens:
    """Writes a loaded game's tokens (the host's, and one bound to a seat). Thread-safe: it holds
    only the token codec."""

    __slots__ = ("codec",)

    def __init__(self, codec: TokenCodec) -> None:
        self.codec = codec

    def token(self, game: Game) -> bytes:
        """The game's own token (bound to the game's seat, if it is bound to one)."""
        return self.codec.encode(game.snapshot())

    def seat_token(self, game: Game, view_seat: int | None, bots: int | None = None) -> bytes:
        """The token bound to ``view_seat`` (with bot seats ``bots``, else the game's) an answer with
        a view carries (none without one); for a game already bound to that seat it is the game's own
        token, ``state_token``."""
        if view_seat is None:
            return b""
        return self.codec.encode(game.snapshot(view_seat, bots))


def view_seat_of(request: api.ApplyMoveRequest | api.StreamOpen, game: Game, path: str = "view_seat") -> int | None:
    """The seat whose view an answer carries (``request.view_seat``, named ``path`` in errors):
    a seat-bound game allows only its own seat, and takes it as the default."""
    view_seat = None
    if request.HasField("view_seat"):
        view_seat = cv.seat_from(request.view_seat, game.ruleset.players, path)
    if game.viewer >= 0:
        if view_seat is not None:
            game.check_seat(view_seat, path)
        return game.viewer
    return view_seat


def view_seat_field(request: Message, rules: Ruleset, name: str = "view_seat") -> int | None:
    """A request's view seat before any game is loaded (None when unset)."""
    if not request.HasField(name):
        return None
    return cv.seat_from(getattr(request, name), rules.players, name)


def require(request: Message, name: str) -> None:
    """INVALID_ARGUMENT when the request's message field ``name`` is unset."""
    if not request.HasField(name):
        raise bad_field(name, "required")


__all__ = ["GameLoader", "GameTokens", "require", "view_seat_field", "view_seat_of"]
