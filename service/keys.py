"""Where token keys come from (docs/SERVICE.md "Keys and rotation").

In order:

1. ``--token-keys-file PATH`` (env ``BIGTWO_TOKEN_KEYS_FILE``): one secret a line, ``#`` comments;
   the first line encrypts new state tokens, every line decrypts.
2. ``BIGTWO_TOKEN_KEYS``: secrets separated by commas; the first encrypts, all decrypt.
3. Nothing configured: a development key, made once with :mod:`secrets` and kept in
   ``$BIGTWO_HOME/dev-signing-key`` (default ``~/.bigtwo/``), and the server says so in its log.

A secret is any text of at least 32 characters (e.g. ``python -c "import secrets;
print(secrets.token_hex(32))"``). State tokens are encrypted with an AES-256-SIV key derived from
its UTF-8 bytes through HKDF (:mod:`bigtwo.service.tokens`); replay signatures and deal identifiers
key their HMACs from the same bytes under labels of their own.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from .tokens import KeyRing

MIN_SECRET = 32


class KeyConfigError(Exception):
    """Keys that are configured but unusable: the server refuses to start."""


@dataclass(frozen=True, slots=True)
class LoadedKeys:
    ring: KeyRing
    source: str
    """Where they came from, for the log (never the secret itself)."""
    development: bool = False


def _parse_secrets(lines: list[str], where: str) -> list[bytes]:
    out: list[bytes] = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if len(line) < MIN_SECRET:
            raise KeyConfigError(f"{where}: key {number} is shorter than {MIN_SECRET} characters")
        out.append(line.encode())
    if not out:
        raise KeyConfigError(f"{where}: no keys")
    return out


def _ring(keys: list[bytes], where: str) -> KeyRing:
    try:
        return KeyRing(keys)
    except ValueError as exc:  # e.g. two secrets whose key ids collide
        raise KeyConfigError(f"{where}: {exc}") from None


def default_home() -> Path:
    return Path(os.environ.get("BIGTWO_HOME") or Path.home() / ".bigtwo")


def load_keys(keys_file: str | None = None, env: dict[str, str] | None = None) -> LoadedKeys:
    env = dict(os.environ) if env is None else env
    path = keys_file or env.get("BIGTWO_TOKEN_KEYS_FILE")
    if path:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise KeyConfigError(f"token keys file {path}: {exc.strerror}") from None
        keys = _parse_secrets(lines, f"token keys file {path}")
        return LoadedKeys(_ring(keys, f"token keys file {path}"), f"file {path} ({len(keys)} key(s))")
    inline = env.get("BIGTWO_TOKEN_KEYS")
    if inline:
        keys = _parse_secrets(inline.split(","), "BIGTWO_TOKEN_KEYS")
        return LoadedKeys(_ring(keys, "BIGTWO_TOKEN_KEYS"), f"BIGTWO_TOKEN_KEYS ({len(keys)} key(s))")
    dev = default_home() / "dev-signing-key"
    if not dev.exists():
        dev.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(dev, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
    keys = _parse_secrets(dev.read_text(encoding="utf-8").splitlines(), str(dev))
    return LoadedKeys(_ring(keys, str(dev)), f"development key file {dev}", development=True)
