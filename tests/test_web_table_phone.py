"""The browser table as a phone app, in Debian's Chromium (clients/ts/test/table_phone_e2e.ts): a
whole deal played in the page at 390 px, no sideways scroll from 360 to 1440 px and a hand that
wraps on a phone, seats p1..pN and cards as their faces in every line, and a service that stops
under a running game: the page says so, keeps the game, its header stops saying "Connected", and
"Try again" goes on once a service is back on the same port (the same token keys, so the game's
seat token still verifies). Screenshots of the table at 390 and 1280 px are taken (and, with
BIGTWO_SAVE_SCREENSHOTS=1, copied to docs/img/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_support import ServerProcess, free_port
from test_web_table import require_chromium, wait_for_port
from ts_support import ROOT, TS, bundle, require_toolchain

pytestmark = pytest.mark.timeout(300)
HAND_OVER_SECONDS = 180.0


def wait_for(path: Path, node: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + HAND_OVER_SECONDS
    while not path.exists():
        if node.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the page script stopped before {path.name}: {node.communicate()}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    node_path = require_toolchain()
    require_chromium()
    tmp = tmp_path_factory.mktemp("web-phone")
    shots, signals = tmp / "screenshots", tmp / "signals"
    shots.mkdir()
    signals.mkdir()
    script = bundle("test/table_phone_e2e.ts", tmp)
    port = free_port()
    servers = [ServerProcess(tmp, "--web-port", str(port), metrics=False)]
    node: subprocess.Popen[str] | None = None
    try:
        wait_for_port(port, servers[0])
        node = subprocess.Popen(
            [node_path, str(script), f"http://127.0.0.1:{port}", str(shots), str(TS), str(signals)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(signals / "ready-to-stop", node)
        servers[0].stop()
        (signals / "stopped").touch()
        wait_for(signals / "ready-to-start", node)
        servers.append(ServerProcess(tmp, "--web-port", str(port), metrics=False))  # the same keys: KEY_A
        wait_for_port(port, servers[-1])
        (signals / "started").touch()
        out, err = node.communicate(timeout=HAND_OVER_SECONDS)
    finally:
        if node is not None and node.poll() is None:
            node.kill()
            node.communicate()
        for server in servers:
            server.stop()
    lines = out.strip().splitlines()
    assert lines, f"no summary (exit {node.returncode}): {err}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result["failures"] == [], result["failures"]
    assert node.returncode == 0 and result["ok"], err
    result["screenshots"] = sorted(path.name for path in shots.iterdir())
    if os.environ.get("BIGTWO_SAVE_SCREENSHOTS") == "1":  # how docs/img/table-390.png and -1280.png are made
        for name in ("table-390.png", "table-1280.png"):
            shutil.copyfile(shots / name, ROOT / "docs" / "img" / name)
    yield result


def test_a_whole_deal_is_played_in_the_page_on_a_phone(summary: dict[str, Any]) -> None:
    assert summary["turns"] >= 1 and summary["turnsAfter"] >= 1
    assert summary["log"] and all(line.startswith(("p", "deal", "trick")) for line in summary["log"]), summary["log"]


def test_the_page_fits_360_to_1440_px_and_the_hand_wraps_on_a_phone(summary: dict[str, Any]) -> None:
    widths = [layout["width"] for layout in summary["layouts"]]
    assert widths == [360, 360, 390, 1280, 1440, 390]
    assert all(layout["scrollWidth"] <= layout["width"] for layout in summary["layouts"])
    assert summary["layouts"][2]["handRows"] >= 2


def test_a_service_gone_is_said_in_words_and_try_again_goes_on(summary: dict[str, Any]) -> None:
    lost, back = summary["lost"], summary["back"]
    assert "cannot be reached" in lost["error"] and "Unknown" not in lost["error"] and "fetch" not in lost["error"]
    assert lost["header"].startswith("Not connected") and lost["handKept"]
    assert back["header"].startswith("Connected to ") and back["error"] == "" and back["retryHidden"]


def test_screenshots_at_phone_and_desktop_widths(summary: dict[str, Any]) -> None:
    assert {"table-390.png", "table-1280.png", "unreachable-390.png"} <= set(summary["screenshots"])
    for name in ("table-390.png", "table-1280.png"):
        assert (ROOT / "docs" / "img" / name).stat().st_size > 10_000, f"docs/img/{name} is missing"
