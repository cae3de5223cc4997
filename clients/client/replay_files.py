"""Replay files on disk: the engine's replay format is pure text in, text out, so reading and writing
the file is the client's job. :func:`read_replay` checks the size before decoding and accepts a
byte-order mark and CRLF line ends (as some editors write); :func:`write_replay` writes the
canonical bytes.
"""

from __future__ import annotations

from pathlib import Path

from bigtwo.engine.replay import GameLog, ReplayFormatError, dumps, loads
from bigtwo.engine.replay.limits import DEFAULT_LIMITS, ReplayLimits


def read_replay(path: str | Path, limits: ReplayLimits = DEFAULT_LIMITS) -> GameLog:
    """Read and parse a replay file (UTF-8; a byte-order mark is accepted) within ``limits``."""
    with Path(path).open("rb") as file:
        raw = file.read(limits.text_bytes + 1)
    if len(raw) > limits.text_bytes:
        raise ReplayFormatError(f"the file is larger than {limits.text_bytes} bytes, the most a replay file may be")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ReplayFormatError("the file is not UTF-8 text", line) from None
    return loads(text.replace("\r\n", "\n"), limits)


def write_replay(path: str | Path, log: GameLog) -> None:
    """Write the canonical text (UTF-8, ``\\n`` line ends: the same bytes on every machine)."""
    Path(path).write_bytes(dumps(log).encode("utf-8"))


__all__ = ["read_replay", "write_replay"]
