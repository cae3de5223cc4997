"""``bigtwo replay FILE --html OUT.html`` in headless Chromium (Debian's chromium package, installed
by ``make chromium``, which ``make test`` runs first; the tests install nothing). Under CI=true a
missing browser fails the test; elsewhere it is skipped."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from bigtwo.cli.main import main as cli_main

CHROMIUM = Path("/usr/bin/chromium")
GOLDEN = Path(__file__).parent / "golden"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=3000",
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def chromium() -> Path:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: run `make chromium` (Debian's chromium package)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "hong-kong.html"
    status = cli_main(
        ["replay", str(GOLDEN / "hong-kong.toml"), "--html", str(out), "--key", str(GOLDEN / "test-signing-key")]
    )
    assert status == 0
    return out


def _run(chromium: Path, tmp_path: Path, *args: str) -> str:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    command = [str(chromium), *FLAGS, f"--user-data-dir={profile}", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _dump(chromium: Path, tmp_path: Path, page: Path, step: int) -> str:
    return _run(chromium, tmp_path, "--dump-dom", f"{page.as_uri()}#step={step}")


def test_page_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert '<script id="replay-data"' in text and "Content-Security-Policy" in text


def test_page_loads_without_errors_and_steps(chromium: Path, tmp_path: Path, page: Path) -> None:
    early = _dump(chromium, tmp_path, page, 5)
    late = _dump(chromium, tmp_path, page, 60)
    for dom, step in ((early, 5), (late, 60)):
        assert 'data-ready="1"' in dom, dom[:2000]
        assert f'data-step="{step}"' in dom
        errors = re.search(r'<pre id="errors">(.*?)</pre>', dom, re.S)
        assert errors is not None and errors.group(1).strip() == "", errors.group(1) if errors else dom[:2000]
        assert dom.count('class="card"') > 20  # the hands are drawn as SVG cards

    def table(dom: str) -> str:
        found = re.search(r'<div id="table-cards">(.*?)</div>', dom, re.S)
        assert found is not None
        return found.group(1)

    assert early != late
    assert table(early) != table(late) or early.count('class="card"') != late.count('class="card"')
    # A move's note says it once, in the page's words: "p2 plays 10♦", not "p2 TD — p2 plays TD".
    for dom in (early, late):
        note = re.search(r'id="note"[^>]*>(.*?)<', dom, re.S)
        assert note is not None, dom[:2000]
        assert note.group(1).count("—") <= ("refused" in note.group(1)), note.group(1)
        assert not re.search(r"\b[2-9TJQKA][DCHS]\b", note.group(1)), note.group(1)
    assert re.search(r'id="where">Step 60 / \d+', late)


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """A tiny PNG reader (8-bit RGB/RGBA, non-interlaced): width, height and unfiltered rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, width, height, channels = 8, b"", 0, 0, 0
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        chunk = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    offset = 0
    for _ in range(height):
        filter_type = raw[offset]
        line = bytearray(raw[offset + 1 : offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                line[i] = (line[i] + left) & 255
            elif filter_type == 2:
                line[i] = (line[i] + up) & 255
            elif filter_type == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif filter_type == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                line[i] = (line[i] + predictor) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def test_screenshot_is_not_blank(chromium: Path, tmp_path: Path, page: Path) -> None:
    shot = tmp_path / "shot.png"
    _run(chromium, tmp_path, "--window-size=1000,700", f"--screenshot={shot}", f"{page.as_uri()}#step=30")
    width, height, rows = _png_pixels(shot.read_bytes())
    assert (width, height) == (1000, 700)
    channels = len(rows[0]) // width
    colours = set()
    for row in rows[::7]:
        for x in range(0, width, 5):
            colours.add(row[x * channels : x * channels + 3])
    assert len(colours) > 50, f"only {len(colours)} colours: blank page?"
    # the felt green dominates but white card faces and red suits are there too
    assert any(c[0] > 200 and c[1] > 200 and c[2] > 200 for c in colours)
    assert any(c[0] > 150 and c[1] < 90 and c[2] < 90 for c in colours)
