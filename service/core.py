"""The service's handlers as plain functions: request message in, response message out.

No gRPC here: :mod:`bigtwo.service.servicer` hosts these on the grpc.aio server, maps errors
(one place, :func:`bigtwo.service.errors.to_rpc_status`), logs and counts. Each handler converts
the request, calls the engine, converts back. :class:`Core` holds the sixteen handlers and the named
parts they call, each of which can be built alone: ``games`` loads the game a request names
(:class:`~bigtwo.service.loading.GameLoader`), ``judge`` judges a move against it and writes the
answer (:class:`~bigtwo.service.judging.MoveJudge`, whose applied move is
:meth:`~bigtwo.service.game.Game.play`), ``tokens`` writes its tokens
(:class:`~bigtwo.service.loading.GameTokens`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

from bigtwo.engine import (
    PRESET_NAMES,
    PRESET_SUMMARIES,
    PRESETS,
    DealRecord,
    Event,
    Match,
    Move,
    Play,
    Refusal,
    RuleTables,
    check_beats,
    classify_mask,
    fewest_plays,
    hint_cycle,
    next_hint,
    parse_mask,
    play_name,
    settle,
    tables_for,
    timeout_move,
)
from bigtwo.engine.bots import DEFAULT_LEVEL, REGISTRY, Budget
from bigtwo.engine.generate import CARD_MASK, all_plays, plays_of_size
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb

from . import convert as cv
from . import wire
from .bot_turns import (
    bot_choice,
    bot_decision_seed,
    bot_level_from,
    bot_levels_of,
    bot_seats_of,
    bots_fixed,
    playable_bots,
    sealed_level,
    sealed_seed,
)
from .bounds import MAX_SEATS
from .errors import FailedPrecondition, ResourceExhausted, at_field, bad_field
from .game import CallInfo, Game, MoveResult, rebuild_events
from .judging import MoveJudge
from .limits import LIMITS, Limits
from .loading import CardSource, GameLoader, GameTokens, require, view_seat_field, view_seat_of
from .streams import StreamSession
from .tokens import SEAL_SECRET_BYTES, TableSeal, TokenCodec

if TYPE_CHECKING:  # the replay package is imported when an audit first needs it
    from bigtwo.engine.replay import GameLog


def table_play(text: str, path: str, tables: RuleTables) -> Play:
    """A play to beat given as card text (an input, not a move): INVALID_ARGUMENT when it is none."""
    try:
        return classify_mask(cv.mask_from(text, path), tables)
    except Refusal as refusal:
        raise bad_field(path, f"the table is no play: {refusal.message}") from None


class Core:
    """Every RPC's logic, over named parts: ``games`` (loading), ``judge`` (judging and answering a
    move), ``tokens`` (writing tokens). Thread-safe: the parts hold only the token codec, the
    limits and the deal names."""

    def __init__(
        self,
        codec: TokenCodec,
        entropy: Callable[[int], bytes] = secrets.token_bytes,
        limits: Limits = LIMITS,
    ) -> None:
        self.codec = codec
        self.limits = limits
        self.games = GameLoader(codec, entropy, limits)
        self.judge = MoveJudge(limits)
        self.tokens = GameTokens(codec)

    def session(self, info: CallInfo) -> StreamSession:
        """A PlayStream's session: the deal the stream holds, judged message by message."""
        return StreamSession(self, info)

    def list_presets(self, request: api.ListPresetsRequest, info: CallInfo) -> api.ListPresetsResponse:
        out = api.ListPresetsResponse(
            bot_levels=[api.BotLevelInfo(name=level.name, description=level.description) for level in REGISTRY],
            default_bot_level=DEFAULT_LEVEL,
        )
        for name in PRESET_NAMES:
            rules = PRESETS[name]
            out.presets.append(
                pb.Preset(
                    name=name,
                    summary=PRESET_SUMMARIES.get(name, ""),
                    ruleset=cv.ruleset_to_pb(rules),
                    fingerprint=rules.fingerprint,
                    description=list(rules.describe()),
                )
            )
        return out

    def describe_ruleset(self, request: api.DescribeRulesetRequest, info: CallInfo) -> api.DescribeRulesetResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        info.preset = rules.preset
        return api.DescribeRulesetResponse(
            ruleset=cv.ruleset_to_pb(rules),
            overrides={key: cv.option_text(value) for key, value in rules.overrides().items()},
            fingerprint=rules.fingerprint,
            description=list(rules.describe()),
        )

    def deal(self, request: api.DealRequest, info: CallInfo) -> api.DealResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        view_seat = view_seat_field(request, rules)
        bots = bot_seats_of(request, rules, view_seat)
        levels = bot_levels_of(request, rules, view_seat, bots)
        seal = TableSeal(self.games.entropy(SEAL_SECRET_BYTES), levels)
        game = self.games.start(rules, CardSource.of_request(request), info, seal)
        info.deals_started += 1
        if game.deal.over:
            info.deals_finished += 1
        every_other_seat = (1 << rules.players) - 1
        alone_with_bots = view_seat is not None and bots | 1 << view_seat == every_other_seat
        out = api.DealResponse(
            deal_code=game.code_for(view_seat),
            # One person against bots: the seat token is the whole game, no host holds it.
            state_token=b"" if alone_with_bots else self.tokens.token(game),
            table=game.table(),
            events=cv.events_to_pb(game.deal.events, rules, view_seat),
            seat_token=self.tokens.seat_token(game, view_seat, bots),
        )
        if view_seat is not None:
            out.view.CopyFrom(cv.seat_view(game.deal, view_seat))
        return out

    def validate_move(self, request: api.ValidateMoveRequest, info: CallInfo) -> api.ValidateMoveResponse:
        require(request, "move")
        game = self.games.load(request.game, "game", info)
        result = self.judge.validate(game, request.move, "move", info, need_index=False)
        return api.ValidateMoveResponse(outcome=pb.MoveOutcome.FromString(result.outcome))

    def apply_move(self, request: api.ApplyMoveRequest, info: CallInfo) -> api.ApplyMoveResponse:
        return api.ApplyMoveResponse.FromString(self.apply_move_answer(request, info))

    def apply_move_answer(self, request: api.ApplyMoveRequest, info: CallInfo) -> bytes:
        """ApplyMove's answer, serialized: what the server sends (see :mod:`bigtwo.service.wire`)."""
        require(request, "move")
        game = self.games.load(request.game, "game", info)
        view_seat = view_seat_of(request, game)
        result = self.judge.apply(game, request.move, "move", info, need_index=True)
        token = self.tokens.token(result.game)
        seat_token = token if result.game.viewer >= 0 else self.tokens.seat_token(result.game, view_seat)
        return self.judge.answer(result, view_seat, wire.APPLY, token, seat_token)

    def legal_moves(self, request: api.LegalMovesRequest, info: CallInfo) -> api.LegalMovesResponse:
        which = request.WhichOneof("source")
        if which == "game":
            game = self.games.load(request.game, "game", info)
            deal = game.deal
            game.check_seat(deal.to_act, "game")
            plays = deal.legal_plays()
            return api.LegalMovesResponse(
                seat=deal.to_act,
                plays=[cv.play_to_pb(play, game.ruleset) for play in plays],
                can_pass=not deal.over and deal.table is not None,
            )
        if which == "position":
            position = request.position
            rules = cv.ruleset_from(position.ruleset, "position.ruleset")
            tables = tables_for(rules)
            hand = self.games.hand_of(position.hand, "position.hand")
            if position.table.strip():
                table = table_play(position.table, "position.table", tables)
                encoded = plays_of_size(hand, table.size, tables, table.key)
                encoded.sort()
            else:
                encoded = all_plays(hand, tables)
            plays = [classify_mask(e & CARD_MASK, tables) for e in encoded]
            return api.LegalMovesResponse(plays=[cv.play_to_pb(play, rules) for play in plays])
        raise bad_field("source", "set game or position")

    def next_hint(self, request: api.NextHintRequest, info: CallInfo) -> api.NextHintResponse:
        game = self.games.load(request.game, "game", info)
        game.check_seat(game.deal.to_act, "game")
        after = cv.mask_from(request.after, "after") if request.after.strip() else 0
        cycle = hint_cycle(game.deal)
        out = api.NextHintResponse(cycle_length=len(cycle))
        play = next_hint(game.deal, after)
        if play is not None:
            out.play.CopyFrom(cv.play_to_pb(play, game.ruleset))
        return out

    def timeout_move(self, request: api.TimeoutMoveRequest, info: CallInfo) -> api.TimeoutMoveResponse:
        game = self.games.load(request.game, "game", info)
        if game.deal.over:
            raise FailedPrecondition("the deal is over: no turn can time out", reason="DEAL_OVER")
        game.check_seat(game.deal.to_act, "game")
        if game.viewer >= 0:
            # A seat token: the level its deal sealed for the seat plays the turn, else the rules' move.
            if request.bot_level:
                raise bots_fixed("bot_level", "the timed-out turn's bot level")
            level = sealed_level(game, game.viewer)
            seed = bot_decision_seed(sealed_seed(game, game.viewer), game.deal.moves_made)
        else:
            # TW: the computer plays the timed-out turn; seed 0, so a game always times out the same way.
            level = bot_level_from(request.bot_level, "bot_level") if request.bot_level else ""
            seed = 0
        if level:
            info.bot_level = level
            move = bot_choice(game, level, seed)
        else:
            move = timeout_move(game.deal)
        return api.TimeoutMoveResponse(move=pb.Move(index=game.deal.moves_made, seat=move.seat, text=str(move)))

    def bot_move(self, request: api.BotMoveRequest, info: CallInfo) -> api.BotMoveResponse:
        level = bot_level_from(request.level, "level") if request.level else ""
        limits = self.limits
        if request.simulations > limits.bot_simulations:
            raise bad_field("simulations", f"at most {limits.bot_simulations}")
        if request.max_ms > limits.bot_ms:
            raise bad_field("max_ms", f"at most {limits.bot_ms}")
        game = self.games.load(request.game, "game", info)
        deal = game.deal
        if deal.over:
            raise FailedPrecondition("the deal is over: no seat is to act", reason="DEAL_OVER")
        game.check_seat(deal.to_act, "game")
        seed = request.seed
        if game.viewer >= 0:  # the seat's level and randomness were fixed when the deal was made
            for name in ("level", "seed", "simulations", "max_ms"):
                if getattr(request, name):
                    raise bots_fixed(name, f"the bot's {name}")
            level = sealed_level(game, game.viewer) or DEFAULT_LEVEL
            seed = bot_decision_seed(sealed_seed(game, game.viewer), deal.moves_made)
        elif not level:
            level = bot_level_from(request.level, "level")  # raises: no level named
        budget = None
        if level == "pro" and (request.simulations or request.max_ms):
            budget = Budget()
            if request.simulations:
                budget = dataclasses.replace(budget, simulations=request.simulations)
            if request.max_ms:
                budget = dataclasses.replace(budget, max_ms=float(request.max_ms))
        move = bot_choice(game, level, seed, budget)
        info.bot_level = level
        name = "" if move.is_pass else play_name(classify_mask(move.mask, deal.tables), deal.tables)
        return api.BotMoveResponse(
            move=pb.Move(index=deal.moves_made, seat=move.seat, text=str(move)), name=name, level=level
        )

    def play_bots(self, request: api.PlayBotsRequest, info: CallInfo) -> api.PlayBotsResponse:
        """The bot seats' turns, as BotMove chooses them and ApplyMove applies them, until a seat
        that is not a bot is to act, the deal ends or ``limits.play_bots_moves`` moves were made."""
        game = self.games.load(request.game, "game", info)
        bots = playable_bots(request, game)
        deal = game.deal
        view_seat = game.viewer if game.viewer >= 0 else None
        out = api.PlayBotsResponse()
        events: list[Event] = []
        # Rebuilt once: a token's earlier events cost a replay of the deal, the moves since are the deal's.
        before, since = game.events_so_far(), len(deal.events)
        while not deal.over and deal.to_act in bots and len(out.moves) < self.limits.play_bots_moves:
            level, seed = bots[deal.to_act]
            index = deal.moves_made
            move = bot_choice(game, level, bot_decision_seed(seed, index), events=before + deal.events[since:])
            name = "" if move.is_pass else play_name(classify_mask(move.mask, deal.tables), deal.tables)
            played = pb.Move(index=index, seat=move.seat, text=str(move))
            result = self.judge.apply(game, played, "bots", info, need_index=True, bot_seat=True)
            if not result.accepted:  # a bot chooses among the legal moves: this is the service's fault
                raise RuntimeError(f"the rules refused the {level} bot's move {played.text!r} at move {index}")
            events.extend(result.events)
            out.moves.append(api.BotPlayed(move=played, name=name, level=level))
            info.bot_levels.append(level)
        out.events.extend(cv.events_to_pb(events, game.ruleset, view_seat))
        out.table.CopyFrom(game.table())
        if view_seat is None:
            out.state_token = self.tokens.token(game)
        else:
            out.view.CopyFrom(cv.seat_view(deal, view_seat))
            out.seat_token = self.tokens.token(game)
        return out

    def split_hand(self, request: api.SplitHandRequest, info: CallInfo) -> api.SplitHandResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        hand = self.games.hand_of(request.hand, "hand")
        return api.SplitHandResponse(plays=[cv.play_to_pb(play, rules) for play in fewest_plays(hand, rules)])

    def name_cards(self, request: api.NameCardsRequest, info: CallInfo) -> api.NameCardsResponse:
        """The readout line. A selection that does not parse (bad-card) or repeats a card
        (not-in-hand) is an answer like any refusal: in a game, in RULES.md's order for the seat
        (``verify_text``); with a ruleset, then wrong-size, the play's own reason, does-not-beat."""
        text = request.cards
        if len(text) > self.limits.card_text:
            raise bad_field("cards", f"at most {self.limits.card_text} characters")
        which = request.WhichOneof("context")
        out = api.NameCardsResponse()
        if which == "game":
            game = self.games.load(request.game, "game", info)
            deal = game.deal
            seat = cv.seat_from(request.seat, deal.players, "seat")
            game.check_seat(seat, "seat")
            tables = deal.tables
            out.ending_now = cv.seat_view(deal, seat).ending_now

            def judge() -> object:
                return deal.verify_text(seat, text)

        elif which == "ruleset":
            tables = tables_for(cv.ruleset_from(request.ruleset, "ruleset"))
            table = table_play(request.table, "table", tables) if request.table.strip() else None

            def judge() -> object:
                return check_beats(parse_mask(text), table, tables)

        else:
            raise bad_field("context", "set ruleset or game")
        with contextlib.suppress(Refusal):
            own = classify_mask(parse_mask(text), tables)
            out.name = play_name(own, tables)
            out.kind = cv.KIND_TO_PB[own.kind]
        try:
            judge()
        except Refusal as refusal:
            out.refusal.CopyFrom(cv.refusal_to_pb(refusal))
        else:
            out.playable = True
        return out

    def score_deal(self, request: api.ScoreDealRequest, info: CallInfo) -> api.ScoreDealResponse:
        which = request.WhichOneof("source")
        if which == "counts":
            counts = request.counts
            rules = cv.ruleset_from(counts.ruleset, "counts.ruleset")
            cards_left = list(counts.cards_left)
            if len(cards_left) != rules.players:
                raise bad_field("counts.cards_left", f"one entry per seat: {rules.players} seats")
            most = self.limits.hand_cards
            if any(n > most for n in cards_left):
                raise bad_field("counts.cards_left", f"a seat holds at most {most} cards")
            twos = list(counts.twos_left) or [0] * len(cards_left)
            if len(twos) != len(cards_left) or any(t > 4 or t > n for t, n in zip(twos, cards_left, strict=False)):
                raise bad_field("counts.twos_left", "one entry per seat, each at most 4 and at most its cards left")
            with at_field("counts.cards_left"):
                settlement = settle(rules, cards_left, twos)
        elif which == "game":
            game = self.games.load(request.game, "game", info)
            if not game.deal.over:
                raise FailedPrecondition("the deal is not over: nothing to score yet", reason="DEAL_NOT_OVER")
            ended = game.deal.settlement()
            assert ended is not None  # the deal is over
            settlement = ended
        else:
            raise bad_field("source", "set counts or game")
        return api.ScoreDealResponse(
            winner=settlement.winner,
            seats=[
                pb.SeatScore(
                    seat=line.seat,
                    cards_left=line.cards_left,
                    twos_left=line.twos_left,
                    rate=line.rate,
                    multiplier=line.multiplier,
                    penalty=line.penalty,
                    score=line.score,
                )
                for line in settlement.seats
            ],
            scores=settlement.scores,
        )

    def settle_match(self, request: api.SettleMatchRequest, info: CallInfo) -> api.SettleMatchResponse:
        rules = cv.ruleset_from(request.ruleset, "ruleset")
        limits = self.limits
        if len(request.deals) > limits.match_deals:
            raise ResourceExhausted(
                f"deals: {len(request.deals)} deals; at most {limits.match_deals}",
                reason="MATCH_TOO_LONG",
                metadata={"max_deals": str(limits.match_deals)},
            )
        match = Match(rules)
        for seat in request.empty_seats:
            match = match.leave(cv.seat_from(seat, rules.players, "empty_seats"))
        for index, result in enumerate(request.deals):
            path = f"deals[{index}]"
            winner = cv.seat_from(result.winner, rules.players, f"{path}.winner")
            if len(result.scores) != rules.players:
                raise bad_field(f"{path}.scores", f"one score per seat: {rules.players} seats")
            for seat, score in enumerate(result.scores):
                if abs(score) > limits.score:
                    raise bad_field(
                        f"{path}.scores[{seat}]", f"{score} is not a deal's score (at most {limits.score} either way)"
                    )
            if match.over:
                raise bad_field(path, "the match was already over before this deal")
            with at_field(path):
                match = match.record(
                    DealRecord(
                        result.deal_number or index + 1,
                        winner,
                        tuple(result.scores),
                        tuple(result.cards_left),
                        result.deal_code,
                        result.by_dragon,
                    )
                )
        if request.stopped:
            match = match.stop()
        return api.SettleMatchResponse(
            totals=match.totals,
            deals_won=match.deals_won,
            over=match.over,
            winners=match.winners,
            next_context=cv.context_to_pb(match.next_context()),
        )

    def replay_log(self, request: api.ReplayLogRequest, info: CallInfo) -> api.ReplayLogResponse:
        log = request.log
        rules = cv.ruleset_from(log.ruleset, "log.ruleset")
        view_seat = view_seat_field(request, rules)
        self.games.check_moves(log.moves, "log.moves")
        source = CardSource.of_log(log, "log")
        # A table of its own (its tokens are not another replay's of the same log); no bot levels.
        seal = TableSeal(self.games.entropy(SEAL_SECRET_BYTES), bytes(MAX_SEATS))
        game = self.games.start(rules, source, info, seal)
        out = api.ReplayLogResponse()
        deal = game.deal
        for index, text in enumerate(log.moves):
            try:
                game.play(deal.to_act, text)
            except Refusal as refusal:
                out.refused, out.refused_at = True, index
                out.refusal.CopyFrom(cv.refusal_to_pb(refusal))
                break
        out.moves_applied = deal.moves_made
        out.events.extend(cv.events_to_pb(deal.events, rules, view_seat))
        out.table.CopyFrom(game.table())
        out.state_token = self.tokens.token(game)
        return out

    def audit_log(self, request: api.AuditLogRequest, info: CallInfo) -> api.AuditLogResponse:
        """Audit a replay file (or one deal's log) with ``bigtwo.engine.replay``: the replay format
        and its checker live there, as pure modules; imported on first use. The signature is checked
        with the service's keys (the signing key and every verification key)."""
        from bigtwo.engine import replay

        # Every verification key counts, so files signed before a key rotation still verify.
        keys = (self.codec.keys.signing_key, *self.codec.keys.verifying.values())
        which = request.WhichOneof("source")
        if which == "replay_toml":
            try:
                log = replay.loads(request.replay_toml, self.limits.replay)
            except replay.ReplayFormatError as error:
                verdict = replay.audit.format_error_verdict(error)  # its FORMAT_ERROR verdict, without parsing again
                return cv.audit_to_pb(verdict, None, None)
        elif which == "game_log":
            log = self._replay_of(request.game_log, "game_log", info)
        else:
            raise bad_field("source", "set replay_toml or game_log")
        view_seat = view_seat_field(request, log.ruleset)
        actions = sum(len(record.actions) for record in log.deals)
        limits = self.limits
        if len(log.deals) > limits.match_deals or actions > limits.audit_actions:
            raise ResourceExhausted(
                f"{len(log.deals)} deals, {actions} actions: at most {limits.match_deals} deals and "
                f"{limits.audit_actions} actions in one audit",
                reason="AUDIT_TOO_LARGE",
                metadata={"max_actions": str(limits.audit_actions), "max_deals": str(limits.match_deals)},
            )
        if request.want_steps and actions + len(log.deals) > limits.audit_steps:
            raise ResourceExhausted(
                f"want_steps: {actions + len(log.deals)} steps; at most {limits.audit_steps} (audit without "
                "steps, or deal by deal)",
                reason="AUDIT_TOO_LARGE",
                metadata={"max_steps": str(limits.audit_steps)},
            )
        info.preset = log.ruleset.preset
        if log.deals:
            info.deal_id = log.deals[0].code or "explicit"
        verdict = replay.audit_log(log, keys, views=request.want_steps, require_signature=request.require_signature)
        return cv.audit_to_pb(verdict, log, view_seat)

    def _replay_of(self, message: pb.GameLog, path: str, info: CallInfo) -> GameLog:
        """A one-deal replay log from a ``GameLog``, its fields checked here with their paths."""
        from bigtwo.codec.replay import game_log_from_pb

        cv.ruleset_from(message.ruleset, f"{path}.ruleset")
        if message.WhichOneof("deal") is None:
            raise bad_field(f"{path}.deal_code", "a log needs its cards: set deal_code or explicit_deal")
        self.games.check_moves(message.moves, f"{path}.moves")
        for index, text in enumerate(message.moves):
            where = f"{path}.moves[{index}]"
            try:
                Move.parse(0, text)
            except Refusal as refusal:  # a replay records cards: text that is none cannot be one
                raise bad_field(where, refusal.message) from None
        with at_field(path):
            return game_log_from_pb(message)


__all__ = ["CallInfo", "Core", "Game", "MoveResult", "rebuild_events"]
