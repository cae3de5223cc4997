"""State tokens are opaque: encrypted and authenticated (AES-SIV), deterministic, and refused
whole when anything about them is wrong (service/tokens.py, docs/SERVICE.md "State tokens")."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Iterator

import pytest
from bigtwo.engine import Deal, DealCode
from bigtwo.service import tokens
from bigtwo.service.core import CallInfo
from bigtwo.service.errors import InvalidArgument
from bigtwo.service.keys import KeyConfigError, load_keys
from bigtwo.service.limits import LIMITS
from bigtwo.service.servicer import ServiceCore
from bigtwo.service.tokens import KeyRing, Snapshot, TokenCodec
from bigtwo.v1 import service_pb2 as api
from bigtwo.v1 import types_pb2 as pb
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from service_support import CODE, KEY_A, KEY_B

HEAD = 1 + tokens.KEY_ID_SIZE
WINDOW = 6
"""Bytes in a row that would betray plaintext: a chance match in ~300-byte tokens is about 2^-31."""

RULESETS = [
    pb.Ruleset(preset="classic"),
    pb.Ruleset(preset="web"),
    pb.Ruleset(preset="hong-kong", options={"players": "3", "flush": "rank-first"}),
    pb.Ruleset(preset="taiwan", options={"players": "2"}),
    pb.Ruleset(preset="pusoy-dos"),
]


def ring(*keys: str) -> KeyRing:
    return KeyRing([key.encode() for key in keys or (KEY_A,)])


def reason_of(codec: TokenCodec, token: bytes) -> str:
    with pytest.raises(InvalidArgument) as caught:
        codec.decode(token)
    assert caught.value.violations[0].field == "game.state_token"
    return str(caught.value.reason)


def windows(data: bytes, size: int = WINDOW) -> set[bytes]:
    return {data[i : i + size] for i in range(len(data) - size + 1)}


def play(core: ServiceCore, rules: pb.Ruleset, seed: int, moves: int) -> Iterator[tuple[bytes, Snapshot]]:
    """The tokens of one deal, move by move (the first move's own choice, so a deal goes on)."""
    token = core.deal(api.DealRequest(ruleset=rules, deal_code=str(DealCode(seed))), CallInfo()).state_token
    for index in range(moves + 1):
        snap = core.codec.decode(token)
        yield token, snap
        deal = Deal.from_state(snap.ruleset, snap.state)
        if deal.over or index == moves:
            return
        move = deal.legal_moves()[-1]
        request = api.ApplyMoveRequest(
            game=pb.Game(state_token=token), move=pb.Move(index=index, seat=move.seat, text=str(move))
        )
        token = core.apply_move(request, CallInfo()).state_token


def test_nothing_of_the_state_is_readable_without_the_key() -> None:
    core = ServiceCore(TokenCodec(ring()))
    for rules in RULESETS:
        for seed in (1, 77, 2**40 + 5):
            for token, snap in play(core, rules, seed, 30):
                body = core.codec.keys.open(token)
                assert body is not None
                assert not windows(body) & windows(token[HEAD:]), "no run of the plaintext shows"
                # Each check looks for bytes the plaintext does hold (so it would catch them).
                assert struct.pack("<Q", seed) in body
                for hand in snap.state.hands:
                    if hand:
                        assert struct.pack("<Q", hand) in body
                        assert struct.pack("<Q", hand) not in token and struct.pack(">Q", hand) not in token
                        assert struct.pack("<Q", hand)[:WINDOW] not in token
                assert struct.pack("<Q", seed)[:WINDOW] not in token
                overrides = snap.ruleset.overrides()
                if overrides:
                    text = json.dumps(overrides, sort_keys=True, separators=(",", ":")).encode()
                    assert text in body
                    assert text[:WINDOW] not in token and b"players" not in token
                assert bytes.fromhex(snap.ruleset.fingerprint)[:WINDOW] not in token


def test_tokens_of_one_game_share_no_plaintext_structure() -> None:
    core = ServiceCore(TokenCodec(ring()))
    played = [token for token, _ in play(core, pb.Ruleset(preset="classic"), 12345, 40)]
    bodies = [core.codec.keys.open(token) for token in played]
    assert all(body is not None for body in bodies)
    for before, after, body_before, body_after in zip(played, played[1:], bodies, bodies[1:], strict=False):
        assert before[:HEAD] == after[:HEAD], "version and key id are the only clear bytes"
        assert body_before is not None and body_after is not None
        # The plaintexts have a long common prefix (ruleset, identity); the ciphertexts do not.
        assert body_before[:16] == body_after[:16]
        same = sum(x == y for x, y in zip(before[HEAD:], after[HEAD:], strict=False))
        assert same < 16, f"{same} bytes equal in place, as in unrelated random strings"
        assert not windows(before[HEAD:]) & windows(after[HEAD:])


def test_tokens_are_deterministic_and_keyed_by_hkdf() -> None:
    snaps = [snap for _, snap in play(ServiceCore(TokenCodec(ring())), pb.Ruleset(preset="classic"), 9, 12)]
    first, second = TokenCodec(ring(), remember=0), TokenCodec(ring(KEY_A, KEY_B), remember=0)
    for snap in snaps:
        token = first.encode(snap)
        assert token == first.encode(snap) == second.encode(snap), "same snapshot, same bytes, on any replica"
        assert token[0] == tokens.VERSION == 3 and token[1:HEAD] == tokens.key_id(KEY_A.encode())
        again = first.decode(token)
        assert (again.state, again.ruleset, again.identity, again.last_move, again.history) == (
            snap.state,
            snap.ruleset,
            snap.identity,
            snap.last_move,
            snap.history,
        )
        # The documented construction: AES-256-SIV under the HKDF-derived key, of the head and the body.
        plain = AESSIV(tokens.aead_key(KEY_A.encode())).decrypt(token[HEAD:], None)
        assert plain == token[:HEAD] + (first.keys.open(token) or b"")
    assert tokens.aead_key(KEY_A.encode()) != tokens.aead_key(KEY_B.encode())
    assert KEY_A.encode()[:8] not in tokens.aead_key(KEY_A.encode()) + tokens.key_id(KEY_A.encode())


@pytest.mark.parametrize("remember", [0, 4096])
def test_any_single_byte_flipped_is_refused(remember: int) -> None:
    codec = TokenCodec(ring(), remember=remember)
    core = ServiceCore(codec)
    *_, (token, _) = play(core, pb.Ruleset(preset="classic"), 31, 6)
    for position in range(len(token)):
        for bit in (0x01, 0x80):
            altered = bytearray(token)
            altered[position] ^= bit
            reason = reason_of(codec, bytes(altered))
            if position == 0:
                assert reason == "TOKEN_MALFORMED"
            elif position < HEAD:
                assert reason == "TOKEN_UNKNOWN_KEY"
            else:
                assert reason == "TOKEN_BAD_SIGNATURE"
    with pytest.raises(InvalidArgument, match="altered"):
        altered = bytearray(token)
        altered[-1] ^= 1
        codec.decode(bytes(altered))
    for cut in (0, 1, HEAD, HEAD + tokens.TAG_SIZE, len(token) - 1):
        assert reason_of(codec, token[:cut]).startswith("TOKEN_")
    assert reason_of(codec, token + b"\0") == "TOKEN_BAD_SIGNATURE"
    assert reason_of(codec, token + b"\0" * 3000) == "TOKEN_MALFORMED"
    assert codec.decode(token).state.moves_made == 6, "the original still reads"


def test_foreign_rotated_and_old_tokens() -> None:
    a, b, both = TokenCodec(ring(KEY_A)), TokenCodec(ring(KEY_B)), TokenCodec(ring(KEY_B, KEY_A))
    *_, (token_a, snap) = play(ServiceCore(a), pb.Ruleset(preset="classic"), 5, 3)
    assert reason_of(b, token_a) == "TOKEN_UNKNOWN_KEY"
    assert both.decode(token_a).state == snap.state, "a key rotated to second place still decrypts"
    token_b = both.encode(snap)
    assert token_b[1:HEAD] == tokens.key_id(KEY_B.encode()), "the first key encrypts"
    assert b.decode(token_b).state == snap.state
    assert reason_of(a, token_b) == "TOKEN_UNKNOWN_KEY"
    # A key id of the ring, the body of another key: it does not authenticate.
    assert reason_of(a, token_a[:HEAD] + token_b[HEAD:]) == "TOKEN_BAD_SIGNATURE"

    for version, why in ((1, "signed, not encrypted"), (2, "without the deal's history")):
        with pytest.raises(InvalidArgument, match=rf"version {version} \({why}\) is no longer read") as caught:
            a.decode(bytes((version,)) + token_a[1:])
        assert caught.value.reason == "TOKEN_MALFORMED"
    assert reason_of(a, b"\x04" + token_a[1:]) == "TOKEN_MALFORMED"
    # The head sealed inside must be the head in clear: a sealed head of another version (as a
    # later format would seal) under a clear head of this one does not pass.
    body = a.keys.open(token_a)
    assert body is not None
    aead = AESSIV(tokens.aead_key(KEY_A.encode()))
    relabelled = token_a[:HEAD] + aead.encrypt(b"\x04" + token_a[1:HEAD] + body, None)
    assert reason_of(TokenCodec(ring(KEY_A), remember=0), relabelled) == "TOKEN_BAD_SIGNATURE"
    resealed = token_a[:HEAD] + aead.encrypt(token_a[:HEAD] + body, None)
    assert resealed == token_a and TokenCodec(ring(KEY_A), remember=0).decode(resealed).state == snap.state
    # A body that authenticates but does not parse (only a key holder can make one).
    assert reason_of(a, a.keys.seal(b"\x00" * 40)) == "TOKEN_MALFORMED"


def test_key_ring_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError):
        KeyRing([])
    with pytest.raises(ValueError):
        KeyRing([b"short"])
    assert len(KeyRing([KEY_A.encode(), KEY_A.encode()]).verifying) == 1, "a key listed twice is one key"
    monkeypatch.setattr(tokens, "key_id", lambda key: b"\0\0\0\0")
    with pytest.raises(ValueError, match="share a key id"):
        KeyRing([KEY_A.encode(), KEY_B.encode()])
    with pytest.raises(KeyConfigError, match="BIGTWO_TOKEN_KEYS: two token keys share a key id"):
        load_keys(env={"BIGTWO_TOKEN_KEYS": f"{KEY_A},{KEY_B}"})


def test_a_retry_returns_the_same_token_on_any_replica() -> None:
    issuer = ServiceCore(TokenCodec(ring()))
    other = ServiceCore(TokenCodec(ring(), remember=0))
    dealt = issuer.deal(api.DealRequest(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE), CallInfo())
    snap = issuer.codec.decode(dealt.state_token)
    move = Deal.from_state(snap.ruleset, snap.state).legal_moves()[-1]
    request = api.ApplyMoveRequest(
        game=pb.Game(state_token=dealt.state_token), move=pb.Move(index=0, seat=move.seat, text=str(move))
    )
    first = issuer.apply_move(request, CallInfo()).state_token
    assert (
        first == issuer.apply_move(request, CallInfo()).state_token == other.apply_move(request, CallInfo()).state_token
    )
    resent = api.ApplyMoveRequest(game=pb.Game(state_token=first), move=request.move)
    assert (
        issuer.apply_move(resent, CallInfo()).state_token == first == other.apply_move(resent, CallInfo()).state_token
    )


RESUMED = [
    (pb.Ruleset(preset="classic"), None),
    (pb.Ruleset(preset="hong-kong"), pb.DealContext(deal_number=2, previous_winner=2)),  # winner leads, auto-pass
    (pb.Ruleset(preset="taiwan", options={"players": "3"}), None),  # a face-up card
    (pb.Ruleset(preset="web", options={"after_pass": "out-until-trick-ends"}), None),
    (pb.Ruleset(preset="pusoy-dos", options={"players": "2"}), None),
]


def opened_events(core: ServiceCore, game: pb.Game, view_seat: int | None) -> list[pb.Event]:
    opening = api.StreamOpen(game=game)
    if view_seat is not None:
        opening.view_seat = view_seat
    answer = core.session(CallInfo()).handle(api.PlayStreamRequest(open=opening))
    assert isinstance(answer, bytes)
    return list(api.PlayStreamResponse.FromString(answer).opened.events)


@pytest.mark.parametrize(("rules", "context"), RESUMED, ids=lambda value: getattr(value, "preset", "") or "")
def test_a_stream_resumed_from_a_token_tells_the_deal_so_far(rules: pb.Ruleset, context: pb.DealContext | None) -> None:
    """Opened from a token at any move, a stream gets the events that opening it from the log
    gives (hidden hands empty, the viewing seat's own hand shown), up to the end of the deal."""
    core = ServiceCore(TokenCodec(ring()))
    other = ServiceCore(TokenCodec(ring(), remember=0))  # reads each token in full
    rng = random.Random(7)
    code = str(DealCode(rng.getrandbits(60)))
    dealt = core.deal(api.DealRequest(ruleset=rules, deal_code=code, context=context), CallInfo())
    log = pb.GameLog(ruleset=rules, deal_code=code, context=context)
    token, moves = dealt.state_token, 0
    while True:
        for view_seat in (None, moves % 2):
            by_log = opened_events(core, pb.Game(log=log), view_seat)
            assert by_log[0].HasField("deal_started")
            assert opened_events(core, pb.Game(state_token=token), view_seat) == by_log
            assert opened_events(other, pb.Game(state_token=token), view_seat) == by_log
        snap = core.codec.decode(token)
        deal = Deal.from_state(snap.ruleset, snap.state)
        if deal.over:
            break
        move = rng.choice(deal.legal_moves())
        request = api.ApplyMoveRequest(
            game=pb.Game(state_token=token), move=pb.Move(index=moves, seat=move.seat, text=str(move))
        )
        token = core.apply_move(request, CallInfo()).state_token
        log.moves.append(str(move))
        moves += 1
        if moves % 9 == 5:  # a resend answered from the token gives the same token, history included
            assert core.apply_move(request, CallInfo()).state_token == token
            assert other.apply_move(request, CallInfo()).state_token == token
    assert by_log[-1].HasField("deal_ended")


def test_a_dragon_and_explicit_hands_are_told_from_a_token() -> None:
    core = ServiceCore(TokenCodec(ring(), remember=0))
    rules = pb.Ruleset(preset="hong-kong")
    ranks = "3456789TJQKA2"
    hands = [
        " ".join(rank + "S" for rank in ranks),  # a dragon: every rank
        " ".join(rank + "H" for rank in ranks),
        " ".join(rank + "C" for rank in ranks),
        " ".join(rank + "D" for rank in ranks),
    ]
    dealt = core.deal(
        api.DealRequest(ruleset=rules, explicit_deal=pb.ExplicitDeal(hands=hands), view_seat=1), CallInfo()
    )
    assert dealt.table.over
    log = pb.GameLog(ruleset=rules, explicit_deal=pb.ExplicitDeal(hands=hands))
    events = opened_events(core, pb.Game(log=log), 0)
    assert [event.WhichOneof("event") for event in events] == ["deal_started", "dragon_revealed", "deal_ended"]
    assert opened_events(core, pb.Game(state_token=dealt.state_token), 0) == events
    # A token bound to seat 1 opens with seat 1's view: its own hand shown, the others empty.
    assert opened_events(core, pb.Game(state_token=dealt.seat_token), None) == opened_events(core, pb.Game(log=log), 1)


def test_the_longest_history_fits_the_token_limit() -> None:
    """The bound on a deal's history (52 cards played, at most 3 passes after each play) keeps the
    longest token under the limit a server reads."""
    assert tokens.MAX_HISTORY_BYTES == 2 + 52 + 3 * 52 + 52
    core = ServiceCore(TokenCodec(ring()))
    rules = pb.Ruleset(preset="hong-kong", options={"players": "3", "flush": "rank-first", "match": "deals:16"})
    dealt = core.deal(api.DealRequest(ruleset=rules, deal_code=CODE), CallInfo())
    snap = core.codec.decode(dealt.state_token)
    assert len(snap.history) == 2, "the opening, no move yet"
    longest = snap._replace(
        history=snap.history + b"\x00" * (tokens.MAX_HISTORY_BYTES - 2),
        previous=snap.state,
        last_move=tokens.LastMove(0, (1 << 52) - 1, False),
    )
    token = core.codec.encode(longest)
    assert len(token) <= LIMITS.token_bytes
    assert TokenCodec(ring(), remember=0).decode(token).history == longest.history
    too_long = snap._replace(history=snap.history + b"\x00" * (tokens.MAX_HISTORY_BYTES - 1))
    assert reason_of(TokenCodec(ring(), remember=0), core.codec.encode(too_long)) == "TOKEN_MALFORMED"


def test_a_seat_viewing_stream_hands_out_the_seat_token_apply_move_would() -> None:
    """A stream that views a seat and asks for tokens gives, with each move, the seat-bound token
    ApplyMove gives for that seat, so the seat's device can go on without the stream; a stream
    without tokens gives neither."""
    core = ServiceCore(TokenCodec(ring()))
    rules = pb.Ruleset(preset="classic")
    dealt = core.deal(api.DealRequest(ruleset=rules, deal_code=CODE), CallInfo())
    seat = 2
    session = core.session(CallInfo())
    opening = api.StreamOpen(game=pb.Game(state_token=dealt.state_token), view_seat=seat, state_tokens=True)
    plain = core.session(CallInfo())
    plain.handle(
        api.PlayStreamRequest(open=api.StreamOpen(game=pb.Game(state_token=dealt.state_token), view_seat=seat))
    )
    session.handle(api.PlayStreamRequest(open=opening))
    token, rng = dealt.state_token, random.Random(3)
    for index in range(12):
        snap = core.codec.decode(token)
        deal = Deal.from_state(snap.ruleset, snap.state)
        move = rng.choice(deal.legal_moves())
        wire_move = pb.Move(index=index, seat=move.seat, text=str(move))
        applied = core.apply_move(
            api.ApplyMoveRequest(game=pb.Game(state_token=token), move=wire_move, view_seat=seat), CallInfo()
        )
        answer = session.handle(api.PlayStreamRequest(move=api.StreamMove(move=wire_move)))
        assert isinstance(answer, bytes)
        result = api.PlayStreamResponse.FromString(answer).move_result
        assert result.outcome.accepted
        assert (result.state_token, result.seat_token) == (applied.state_token, applied.seat_token)
        assert result.seat_token and result.seat_token != result.state_token
        quiet = plain.handle(api.PlayStreamRequest(move=api.StreamMove(move=wire_move)))
        assert isinstance(quiet, bytes)
        quiet_result = api.PlayStreamResponse.FromString(quiet).move_result
        assert (quiet_result.state_token, quiet_result.seat_token) == (b"", b"")
        token = applied.state_token
    # The seat token goes on as the seat: the same view as the stream's last answer.
    resumed = api.StreamOpen(game=pb.Game(state_token=result.seat_token))
    opened = core.session(CallInfo()).handle(api.PlayStreamRequest(open=resumed))
    assert isinstance(opened, bytes)
    assert api.PlayStreamResponse.FromString(opened).opened.view == result.view
