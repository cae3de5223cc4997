"""A bot has the same evidence through the service as in process (issue 17, item 2): whether the
game comes as a log, the host's state token, a seat's token or a stream's token, BotMove,
TimeoutMove (with a bot level) and PlayBots hand the bot the observation it has in process on the
whole deal, history included (rebuilt from the token's public history), so it chooses the same move.

Every check runs in process on the service core (no server): random deals under several rulesets,
the service and the engine side by side, move by move. The service's bots are wrapped
(:class:`Recorder`) so that every observation the service hands one is compared, not only the move
it leads to: most positions' moves do not depend on the history."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from bigtwo.engine import Deal, DealCode, Move, Observation, Ruleset, deal_from_code, observe
from bigtwo.engine.bots import LEVELS, Bot, Budget, bot_for
from bigtwo.service import bot_turns
from bigtwo.service.bot_turns import bot_decision_seed
from bigtwo.service.core import CallInfo
from bigtwo.service.servicer import ServiceCore
from bigtwo.service.streams import StreamSession
from bigtwo.service.tokens import KeyRing, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from service_support import KEY_A

RULESETS = [
    Ruleset.from_mapping({"preset": "classic"}),
    Ruleset.from_mapping({"preset": "hong-kong"}),
    Ruleset.from_mapping({"preset": "taiwan", "players": "2"}),
    Ruleset.from_mapping({"preset": "pusoy-dos"}),
    Ruleset.from_mapping({"preset": "hong-kong", "players": "3"}),
]
SEEDS = (1, 2)
HEURISTIC_LEVELS = tuple(level for level in LEVELS if level != "pro")
PRO_SIMULATIONS = 30
"""Pro's budget through BotMoveRequest.simulations: small, and deterministic (no clock)."""
EVERY = 3
"""Every level is asked at every third position of a deal (the evidence is compared at each)..."""
PRO_EVERY = 18
"""...and pro, the slowest, at every eighteenth from the ninth on (a history to go by), for the
log, the host's token and the seat's token."""


@dataclass
class RecordingBot:
    """A bot that notes each observation it is handed."""

    inner: Bot
    seen: list[Observation]
    level: str = ""

    def __post_init__(self) -> None:
        self.level = self.inner.level

    def choose(self, observation: Observation, ruleset: Ruleset, rng: random.Random) -> Move:
        self.seen.append(observation)
        return self.inner.choose(observation, ruleset, rng)


@dataclass
class Recorder:
    """The service's bot factory, wrapped: every bot it makes records what it sees."""

    seen: list[Observation] = field(default_factory=list)

    def bot_for(self, level: str, budget: Budget | None = None) -> Bot:
        return RecordingBot(bot_for(level, budget), self.seen)

    def take(self) -> list[Observation]:
        taken, self.seen[:] = list(self.seen), []
        return taken


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recording = Recorder()
    monkeypatch.setattr(bot_turns, "bot_for", recording.bot_for)
    return recording


def make_core() -> ServiceCore:
    # remember=0: every token is decoded from its bytes, as a replica that did not issue it would.
    return ServiceCore(TokenCodec(KeyRing([KEY_A.encode()]), remember=0))


def ruleset_pb(rules: Ruleset) -> pb.Ruleset:
    return pb.Ruleset(preset=rules.preset, options={"players": str(rules.players)})


def code_for(rules: Ruleset, seed: int) -> DealCode:
    return DealCode(random.Random(f"{rules.preset}-{rules.players}-{seed}").getrandbits(60))


def in_process(truth: Deal, level: str, seed: int, budget: Budget | None = None) -> Move:
    """The bot's move on the whole deal, as a program that holds the deal asks it."""
    return bot_for(level, budget).choose(observe(truth, truth.to_act), truth.ruleset, random.Random(seed))


def _stream_answer(answer: api.PlayStreamResponse | bytes) -> api.PlayStreamResponse:
    return answer if isinstance(answer, api.PlayStreamResponse) else api.PlayStreamResponse.FromString(answer)


@dataclass
class Table:
    """One deal played at once in the engine (``truth``) and through the service, which hands back a
    host token, a token bound to the seat to act, and a stream's token after every move."""

    core: ServiceCore
    recorder: Recorder
    rules: Ruleset
    code: DealCode
    truth: Deal
    stream: StreamSession
    host_token: bytes = b""
    seat_token: bytes = b""
    stream_token: bytes = b""
    moves: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, core: ServiceCore, recorder: Recorder, rules: Ruleset, seed: int) -> Table:
        code = code_for(rules, seed)
        truth = Deal.start(rules, deal_from_code(code, rules))
        table = cls(core, recorder, rules, code, truth, core.session(CallInfo()))
        dealt = core.deal(
            api.DealRequest(ruleset=ruleset_pb(rules), deal_code=str(code), view_seat=truth.to_act), CallInfo()
        )
        table.host_token, table.seat_token = dealt.state_token, dealt.seat_token
        opened = table.stream.handle(
            api.PlayStreamRequest(open=api.StreamOpen(game=table.log_game(), state_tokens=True))
        )
        table.stream_token = _stream_answer(opened).opened.state_token
        return table

    def log_game(self) -> pb.Game:
        return pb.Game(log=pb.GameLog(ruleset=ruleset_pb(self.rules), deal_code=str(self.code), moves=self.moves))

    def games(self) -> dict[str, pb.Game]:
        """The position now, as each way of naming a game gives it."""
        return {
            "log": self.log_game(),
            "host token": pb.Game(state_token=self.host_token),
            "seat token": pb.Game(state_token=self.seat_token),
            "stream token": pb.Game(state_token=self.stream_token),
        }

    def play(self, move: Move) -> None:
        """``move`` made in the engine, by ApplyMove on the host's token and on the stream."""
        wire_move = pb.Move(index=self.truth.moves_made, seat=move.seat, text=str(move))
        after = self.truth.clone()
        after.do(move)
        request = api.ApplyMoveRequest(game=pb.Game(state_token=self.host_token), move=wire_move)
        if not after.over:
            request.view_seat = after.to_act
        applied = self.core.apply_move(request, CallInfo())
        assert applied.outcome.accepted, applied.outcome
        self.host_token, self.seat_token = applied.state_token, applied.seat_token
        streamed = self.stream.handle(api.PlayStreamRequest(move=api.StreamMove(move=wire_move)))
        self.stream_token = _stream_answer(streamed).move_result.state_token
        self.truth.do(move)
        self.moves.append(str(move))

    def assert_saw_the_truth(self, how: str) -> None:
        """The one bot the service just asked saw what the seat to act sees in process."""
        seen = self.recorder.take()
        assert len(seen) == 1, how
        truth = self.truth
        expected = observe(truth, truth.to_act)
        assert seen[0].history == expected.history, f"{how}: another history than the deal's at move {truth.moves_made}"
        assert seen[0] == expected, how


def positions(table: Table, seed: int) -> Iterator[int]:
    """Plays the deal out with random moves, yielding before each move (the moves made so far)."""
    rng = random.Random(seed)
    while not table.truth.over:
        yield table.truth.moves_made
        table.play(rng.choice(table.truth.legal_moves()))


def sealed_seed(core: ServiceCore, game: pb.Game, seat: int, made: int) -> int:
    """The seed a seat token's bot decides with at move ``made``: its deal's sealed randomness."""
    loaded = core.games.load(game, "game", CallInfo())
    return bot_decision_seed(bot_turns.sealed_seed(loaded, seat), made)


def assert_seat_token_bot(table: Table, how: str) -> None:
    """BotMove from a seat token takes no level or seed: the seat's sealed level (none sealed here:
    good) decides with the deal's randomness, from the seat's observation."""
    truth, game = table.truth, table.games()["seat token"]
    seed = sealed_seed(table.core, game, truth.to_act, truth.moves_made)
    answer = table.core.bot_move(api.BotMoveRequest(game=game), CallInfo())
    table.assert_saw_the_truth(how)
    assert (answer.move.text, answer.level) == (str(in_process(truth, "good", seed)), "good"), how


def assert_same_evidence(table: Table, seed: int) -> None:
    """A cheap bot asked through every way of naming the game sees the seat's whole observation."""
    expected = str(in_process(table.truth, "random", seed))
    for how, game in table.games().items():
        if how == "seat token":
            assert_seat_token_bot(table, how)
            continue
        answer = table.core.bot_move(api.BotMoveRequest(game=game, level="random", seed=seed), CallInfo())
        table.assert_saw_the_truth(how)
        assert answer.move.text == expected, how


def assert_bots_agree(table: Table, seed: int, *, with_pro: bool) -> None:
    """BotMove at every level (pro when ``with_pro``) for the log, the host's and the seat's token,
    and at one heuristic level (in turn) for the stream's token, and TimeoutMove with that level for
    all four, choose the move the bot chooses in process from the same observation."""
    truth, core = table.truth, table.core
    games = table.games()
    in_turn = HEURISTIC_LEVELS[seed % len(HEURISTIC_LEVELS)]
    for level in LEVELS:
        pro = level == "pro"
        if pro and not with_pro:
            continue
        budget = Budget(simulations=PRO_SIMULATIONS) if pro else None
        expected = str(in_process(truth, level, seed, budget))
        for how, game in games.items():
            if how == "stream token" and level != in_turn:
                continue  # a host's token made another way: one level a position covers it
            if how == "seat token":
                continue  # takes no level: assert_seat_token_bot
            request = api.BotMoveRequest(game=game, level=level, seed=seed)
            if pro:
                request.simulations = PRO_SIMULATIONS
            answer = core.bot_move(request, CallInfo())
            table.assert_saw_the_truth(f"BotMove {level}, {how}")
            assert (answer.move.text, answer.move.index) == (expected, truth.moves_made), (level, how)
    # TimeoutMove asks pro at its full budget: BotMove covers pro.
    expected = str(in_process(truth, in_turn, 0))
    for how, game in games.items():
        if how == "seat token":
            continue  # takes no level; none was sealed for the seat, so the rules' timeout move answers
        timed_out = core.timeout_move(api.TimeoutMoveRequest(game=game, bot_level=in_turn), CallInfo())
        table.assert_saw_the_truth(f"TimeoutMove {in_turn}, {how}")
        assert timed_out.move.text == expected, (in_turn, how)


def assert_play_bots_agree(table: Table, seed: int) -> None:
    """PlayBots for every seat (levels mixed) from the log and the host's token hands each bot the
    observation it has in process, and plays the moves the bots play in process with the
    documented seeds."""
    truth = table.truth.clone()
    seats = {
        seat: (HEURISTIC_LEVELS[(seat + seed) % len(HEURISTIC_LEVELS)], seed * 10 + seat)
        for seat in range(truth.players)
    }
    expected_moves: list[str] = []
    expected_views: list[Observation] = []
    while not truth.over and len(expected_moves) < table.core.limits.play_bots_moves:
        level, bot_seed = seats[truth.to_act]
        expected_views.append(observe(truth, truth.to_act))
        move = in_process(truth, level, bot_decision_seed(bot_seed, truth.moves_made))
        expected_moves.append(str(move))
        truth.do(move)
    bots = [api.BotSeat(seat=seat, level=level, seed=bot_seed) for seat, (level, bot_seed) in seats.items()]
    for how in ("log", "host token"):
        played = table.core.play_bots(api.PlayBotsRequest(game=table.games()[how], bots=bots), CallInfo())
        assert table.recorder.take() == expected_views, f"PlayBots, {how}"
        assert [bot.move.text for bot in played.moves] == expected_moves, how


@pytest.mark.parametrize("rules", RULESETS, ids=lambda rules: f"{rules.preset}-{rules.players}p")
def test_every_level_sees_and_chooses_as_in_process_however_the_game_comes(rules: Ruleset, recorder: Recorder) -> None:
    core = make_core()
    for seed in SEEDS:
        table = Table.open(core, recorder, rules, seed)
        asked = pro_asked = 0
        for made in positions(table, seed):
            assert_same_evidence(table, seed * 1000 + made)
            if made % EVERY == 0:
                with_pro = made % PRO_EVERY == PRO_EVERY // 2
                assert_bots_agree(table, seed * 1000 + made, with_pro=with_pro)
                asked, pro_asked = asked + 1, pro_asked + with_pro
            if made % (3 * EVERY) == EVERY:
                assert_play_bots_agree(table, seed)
        assert asked >= 3 and pro_asked, "a deal has positions to ask at"


def test_bots_against_a_person_holding_only_a_seat_token_see_and_play_as_in_process(recorder: Recorder) -> None:
    """A person alone with bots (pro among them, at its default budget: PlayBots sets none): each
    PlayBots call loads the seat token, and every bot sees and plays what it does in process on
    the whole deal."""
    core = make_core()
    rules = RULESETS[0]
    code = code_for(rules, 7)
    truth = Deal.start(rules, deal_from_code(code, rules))
    person = (truth.to_act + 1) % rules.players
    levels = ["pro", "great", "good"]
    seats = {seat: levels[n] for n, seat in enumerate(s for s in range(rules.players) if s != person)}
    dealt = core.deal(
        api.DealRequest(
            ruleset=ruleset_pb(rules),
            deal_code=str(code),
            view_seat=person,
            bot_seats=list(seats),
            bot_levels=[api.SeatBotLevel(seat=seat, level=level) for seat, level in seats.items()],
        ),
        CallInfo(),
    )
    token, rng, bot_moves = dealt.seat_token, random.Random(7), 0
    while not truth.over:
        if truth.to_act == person:
            move = rng.choice(truth.legal_moves())
            request = api.ApplyMoveRequest(
                game=pb.Game(state_token=token), move=pb.Move(index=truth.moves_made, seat=person, text=str(move))
            )
            token = core.apply_move(request, CallInfo()).seat_token
            truth.do(move)
            continue
        game = pb.Game(state_token=token)
        played = core.play_bots(api.PlayBotsRequest(game=game), CallInfo())
        seen = recorder.take()
        assert played.moves and len(seen) == len(played.moves)
        for bot, observation in zip(played.moves, seen, strict=True):
            level = seats[truth.to_act]
            assert observation == observe(truth, truth.to_act), (level, truth.moves_made)
            expected = in_process(truth, level, sealed_seed(core, game, truth.to_act, truth.moves_made))
            assert bot.move.text == str(expected), (level, truth.moves_made)
            truth.do(expected)
            bot_moves += 1
        token = played.seat_token
    assert bot_moves >= 5
