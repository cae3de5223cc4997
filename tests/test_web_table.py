"""The browser table (issue 16): the page ``bigtwo serve --web-port`` serves at ``/`` (built from
clients/ts/src/table by clients/ts/build_table.mjs into service/table/, committed) played end to end
in headless Chromium (Debian's chromium, installed by ``make chromium``; playwright-core from
``make ts-deps``; the tests install nothing). clients/ts/test/table_e2e.ts plays a deal by clicking
with one refused move, the next deal of the match by keyboard, and a deal over gRPC-Web, and decodes
every answer the page received to look for another seat's cards; it prints one JSON summary, which
is asserted on here. Under CI=true a missing browser or toolchain fails the test; elsewhere it is
skipped."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_support import ServerProcess, free_port
from ts_support import ROOT, TS, bundle, require_toolchain, run_node

pytestmark = pytest.mark.timeout(180)
CHROMIUM = Path("/usr/bin/chromium")
TABLE = ROOT / "service" / "table"
BUILT = ("table.js", "index.html", "table.css")


def require_chromium() -> None:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: run `make chromium` (Debian's chromium package)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def wait_for_port(port: int, server: ServerProcess, timeout: float = 60) -> None:
    """The web port opens beside the gRPC one; a server that exits is reported at once."""
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited {server.process.returncode}: {server.log()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_the_committed_table_is_the_build_of_its_sources(tmp_path: Path) -> None:
    node = require_toolchain()
    proc = subprocess.run(
        [node, str(TS / "build_table.mjs"), str(tmp_path)], cwd=TS, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    stale = [name for name in BUILT if (tmp_path / name).read_bytes() != (TABLE / name).read_bytes()]
    assert stale == [], f"service/table/{stale} differ from a fresh build: run `make ts-table` and commit them"
    assert not list(TABLE.glob("*.map")), "no source map is shipped"


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    require_toolchain()
    require_chromium()
    tmp = tmp_path_factory.mktemp("web-table")
    shots = tmp / "screenshots"
    shots.mkdir()
    script = bundle("test/table_e2e.ts", tmp)
    port = free_port()
    server = ServerProcess(tmp, "--web-port", str(port), metrics=False)
    try:
        wait_for_port(port, server)
        proc = run_node(script, f"http://127.0.0.1:{port}", str(shots), str(TS), timeout=150)
    finally:
        server.stop()
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no summary (exit {proc.returncode}): {proc.stderr}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result["failures"] == [], result["failures"]
    assert proc.returncode == 0 and result["ok"], proc.stderr
    result["screenshots"] = sorted(path.name for path in shots.iterdir())
    yield result


def test_a_refused_move_shows_and_announces_the_services_sentence(summary: dict[str, Any]) -> None:
    refusal = summary["refusal"]
    assert refusal["accepted"] is False and refusal["sentence"]
    assert refusal["shown"] == refusal["sentence"]
    assert refusal["sentence"] in refusal["announced"]
    # The two cards were chosen by keyboard (Space on the first card, End, Enter on the last).
    assert refusal["focusedLast"] and len(refusal["selection"].split()) == 2


RANK_NAMES = {
    **{"3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven", "8": "Eight", "9": "Nine"},
    **{"T": "Ten", "J": "Jack", "Q": "Queen", "K": "King", "A": "Ace", "2": "Two"},
}
SUIT_NAMES = {"D": "Diamonds", "C": "Clubs", "H": "Hearts", "S": "Spades"}


def test_cards_are_named_for_screen_readers(summary: dict[str, Any]) -> None:
    card = summary["refusal"]["card"]
    assert summary["refusal"]["label"] == f"{RANK_NAMES[card[0]]} of {SUIT_NAMES[card[1]]}"


SUITS_LOW_TO_HIGH = "DCHS"  # classic's suit_order
RANKS_LOW_TO_HIGH = "3456789TJQKA2"


def test_the_hand_sorts_by_rank_by_suit_and_into_the_services_plays(summary: dict[str, Any]) -> None:
    sorts = summary["sorts"]
    by_rank, by_suit = sorts["byRank"], sorts["bySuit"]
    assert sorted(by_rank) == sorted(by_suit) and len(by_rank) > 1

    def strength(card: str) -> tuple[int, int]:
        return RANKS_LOW_TO_HIGH.index(card[0]), SUITS_LOW_TO_HIGH.index(card[1])

    assert by_rank == sorted(by_rank, key=strength)
    assert by_suit == sorted(by_suit, key=lambda card: strength(card)[::-1])
    # "Into plays" shows SplitHand's answer as it is, one group per play.
    assert sorts["groups"] == sorts["plays"]
    assert sorts["backToRank"]


def test_whole_deals_are_played_by_clicks_by_keys_and_over_grpc_web(summary: dict[str, Any]) -> None:
    first, second, grpc_web = summary["deals"]
    for deal in summary["deals"]:
        assert deal["turns"] > 0
        assert deal["scores"][deal["winner"]] == 0
        assert deal["shownScores"] == deal["scores"]
        assert deal["shownTotals"] == deal["totals"]
    # Deal 2 is the match's second: its totals are both deals' scores added up.
    assert second["totals"] == [a + b for a, b in zip(first["scores"], second["scores"], strict=True)]
    assert grpc_web["totals"] == grpc_web["scores"]
    assert grpc_web["connection"].startswith("Connected to ") and grpc_web["connection"].endswith("(gRPC-Web binary).")


def test_the_replay_link_opens_the_services_replay_of_the_deal(summary: dict[str, Any]) -> None:
    for deal in summary["deals"]:
        # GET /replay?token=...: the deal's final seat token, never a host token.
        assert deal["replayPath"] == "/replay" and deal["replayTokenIsSeatToken"]
        assert deal["replayStatus"] == 200 and deal["replayType"].startswith("text/html")
        assert deal["dealCode"] and deal["replayNamesDeal"]


def test_no_answer_shows_another_seats_cards_or_a_host_token(summary: dict[str, Any]) -> None:
    audits = summary["audits"]
    assert len(audits) == 3
    for deal in audits:
        assert len(deal["dealt"].split()) == 13
        assert deal["over"] and deal["answersChecked"] > 3 and deal["moves"] > 0
        assert deal["foreignCards"] == []
        assert deal["hiddenHandsShown"] == 0
        assert deal["foreignViews"] == 0
        assert deal["hostTokens"] == 0
    # Every token the page sent was a seat token the service had given it.
    assert summary["tokens"]["sent"] > 0 and summary["tokens"]["notSeatTokens"] == 0


def test_screenshots_are_taken(summary: dict[str, Any]) -> None:
    assert summary["screenshots"] == ["web-table-mid-deal.png", "web-table-refusal.png", "web-table-settlement.png"]
