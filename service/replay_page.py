"""The HTML replay of a finished deal, from one of its tokens: the browser table's replay link.

A token carries the deal's identity (its code), its ruleset and its public history, so the deal can
be dealt again from the code and replayed move by move into a replay log, audited and drawn as the
page ``bigtwo replay --html`` writes (:mod:`bigtwo.engine.replay.html`). Only once the deal is over:
before, the page would show hands a seat may not see (once it is over the table shows the deal
code anyway, and with it every hand). A seat token does, so the page that played the deal can link
to its replay without ever holding the host's token.
"""

from __future__ import annotations

from dataclasses import replace

from bigtwo.engine import CardsPlayed, Deal, DealCode, DealContext, DealStarted, Move, Passed, deal_from_code
from bigtwo.engine.replay.audit import audit_log
from bigtwo.engine.replay.canonical import seal
from bigtwo.engine.replay.html import render_html
from bigtwo.engine.replay.model import GameLog
from bigtwo.engine.replay.writer import game_log_from_deals
from bigtwo.v1 import types_pb2 as pb

from .core import Core
from .errors import FailedPrecondition
from .game import CallInfo
from .loading import GameLoader

TOKEN_PATH = "token"


def finished_deal_log(loader: GameLoader, token: bytes) -> GameLog:
    """The replay log of the finished deal ``token`` belongs to (a state or seat token)."""
    game = loader.load(pb.Game(state_token=token), TOKEN_PATH, CallInfo())
    if not game.deal.over:
        raise FailedPrecondition(
            "the deal is not over: its replay would show hands that are still hidden", reason="DEAL_NOT_OVER"
        )
    if game.identity.explicit:
        raise FailedPrecondition(
            "a deal of explicit hands has no deal code to replay it from: its host holds its log",
            reason="NO_DEAL_CODE",
        )
    events = game.events_so_far()
    started = events[0]
    assert isinstance(started, DealStarted)  # events_so_far opens every deal with its start
    previous_winner = started.leader if started.deal_number > 1 and started.opening_card < 0 else None
    context = DealContext(deal_number=started.deal_number, previous_winner=previous_winner)
    deal = Deal.start(game.ruleset, deal_from_code(DealCode.parse(game.deal_code), game.ruleset), context)
    for event in events:
        if isinstance(event, CardsPlayed):
            deal.do(Move.from_mask(event.seat, event.mask))
        elif isinstance(event, Passed) and not event.automatic:
            deal.do(Move.pass_(event.seat))
    log = game_log_from_deals(game.ruleset, [deal], codes=[game.deal_code])
    first = replace(log.deals[0], previous_winner=previous_winner)
    return seal(replace(log, deals=(first,)))


def replay_page(core: Core, token: bytes) -> str:
    """The self-contained HTML page of the finished deal's replay (loaded by ``core``'s games)."""
    log = finished_deal_log(core.games, token)
    code = log.deals[0].code
    return render_html(log, audit_log(log), title=f"Big Two replay · deal {code}")


__all__ = ["TOKEN_PATH", "finished_deal_log", "replay_page"]
