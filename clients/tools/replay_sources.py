"""Where ``bigtwo audit`` finds replays: files, folders, fsspec URLs and tar archives.

The client lists (:func:`list_sources`): it turns the paths it was given into names, one per
replay file or archive, in a stable order, and never reads a replay. The workers read
(:func:`read_entries`): each opens the names of its batch itself, so on a cluster the replay bytes
go from the store to the worker that audits them and never through the client.

A name is a local path (listed with :mod:`pathlib`, no extra package needed) or an fsspec URL
(``file://``, ``memory://``, ``s3://`` with s3fs installed, ...; listed and opened with fsspec,
part of ``pip install 'bigtwo[distributed]'``). Folders are searched recursively for ``*.toml``
replay files and ``.tar``, ``.tar.gz`` and ``.tgz`` archives; a URL may be a glob
(``s3://bucket/2026-12-04/*.tar.gz``).

An archive is a plain tar file of replay files, one game a member (``tar czf day.tar.gz
replays/``). It is read as a stream, one member at a time, so its size does not matter; every
member is an :class:`Entry` named ``ARCHIVE#member/name.toml``. Members that are not what an
archive of replays holds are refused, each as an entry with a ``problem``, never an exception:
links, devices and other non-regular members, members larger than a replay may be, names that
climb out (``..``), start at the root or carry control characters, a second member of the same
name, and headers larger than any such archive needs.
"""

from __future__ import annotations

import glob
import gzip
import io
import re
import tarfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bigtwo.engine.replay.limits import DEFAULT_LIMITS, ReplayLimits

from .cluster import INSTALL_HINT

REPLAY_SUFFIX = ".toml"
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")
MEMBER_MARK = "#"
"""Between an archive's name and a member's in an entry's path: ``day.tar.gz#replays/a.toml``."""
NAME_CHARS = 1024
"""Longest member name accepted (and shown): far beyond any path a folder of replays has."""
HEADER_BYTES = 1 << 20
"""Most bytes tar headers may take between two members. A pax or long-name header is read whole
by :mod:`tarfile`, so without this bound one hostile header could take any amount of memory."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_GLOB = re.compile(r"[*?\[]")
_PIP_NAMES = {"huggingface_hub": "huggingface_hub", "pyarrow": "pyarrow"}


class SourceError(ValueError):
    """A path that cannot be audited (missing, empty, a URL nothing here can read), in words."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One replay to audit: its ``path`` in the report and its bytes, or why it was not read."""

    path: str
    data: bytes | None = None
    problem: str = ""


def is_url(name: str) -> bool:
    return _URL.match(name) is not None


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _wanted(name: str) -> bool:
    return name.endswith(REPLAY_SUFFIX) or is_archive(name)


# -- listing, on the client ------------------------------------------------------------------------


def list_sources(paths: Iterable[str]) -> list[str]:
    """The replay files and archives that ``paths`` name, each path's in sorted order."""
    given = list(paths)
    found: list[str] = []
    for raw in given:
        found.extend(_list_url(raw) if is_url(raw) else _list_local(raw))
    if not found:
        raise SourceError(
            f"no replay files (*.toml) or archives ({', '.join(ARCHIVE_SUFFIXES)}) in {', '.join(given)}."
        )
    return found


def _list_local(raw: str) -> list[str]:
    path = Path(raw)
    if path.is_dir():
        return sorted(str(p) for p in path.rglob("*") if _wanted(p.name) and p.is_file())
    if path.exists():
        return [raw]  # named on its own: audited whatever its name, as an archive if it is named so
    if _GLOB.search(raw):
        matches = sorted(glob.glob(raw, recursive=True))
        return [name for match in matches for name in (_list_local(match) if Path(match).is_dir() else [match])]
    raise SourceError(f"{raw}: no such file or folder. Give replay files, archives or folders of them.")


def _filesystem(url: str) -> tuple[Any, str]:
    """fsspec's filesystem for ``url`` and the path within it; what to install when it is missing."""
    try:
        import fsspec  # type: ignore[import-untyped]  # fsspec ships no type information
        from fsspec.registry import known_implementations  # type: ignore[import-untyped]
    except ImportError:
        raise SourceError(f"{url}: reading URLs needs fsspec, which is not installed: {INSTALL_HINT}") from None
    scheme = url.split("://", 1)[0].lower()
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError as exc:
        known = known_implementations.get(scheme, {})
        package = str(known.get("class", "")).split(".", 1)[0]
        if package and package != "fsspec":
            hint = f"pip install {_PIP_NAMES.get(package, package)}"
        else:
            hint = str(known.get("err") or exc)
        raise SourceError(f"{url}: reading {scheme}:// URLs needs a package that is not installed: {hint}") from None
    except ValueError as exc:
        raise SourceError(f"{url}: fsspec cannot read this URL ({exc}); check the scheme.") from None
    return fs, str(path)


def _list_url(url: str) -> list[str]:
    fs, path = _filesystem(url)
    if _GLOB.search(path):
        names: list[str] = []
        for match in sorted(fs.glob(path)):
            names.extend(sorted(fs.find(match)) if fs.isdir(match) else [match])
        found = [fs.unstrip_protocol(name) for name in names if _wanted(name)]
        if not found:
            raise SourceError(f"{url}: matches no replay files or archives.")
        return found
    if fs.isdir(path):
        return [fs.unstrip_protocol(name) for name in sorted(fs.find(path)) if _wanted(name)]
    if fs.isfile(path):
        return [fs.unstrip_protocol(path)]
    raise SourceError(f"{url}: no such file or folder. Check the URL (and the credentials it needs).")


# -- reading, on the workers -----------------------------------------------------------------------


def _open(name: str) -> AbstractContextManager[IO[bytes]]:
    if not is_url(name):
        return open(name, "rb")
    import fsspec

    opened: AbstractContextManager[IO[bytes]] = fsspec.open(name, "rb")
    return opened


def _bounded(file: IO[bytes], limit: int) -> bytes | str:
    """The bytes of ``file``, or why not: it is larger than ``limit``."""
    data = file.read(limit + 1)
    if len(data) > limit:
        return f"larger than {limit} bytes, the most a replay file may be"
    return data


def read_entries(name: str, limits: ReplayLimits = DEFAULT_LIMITS) -> Iterator[Entry]:
    """The replays that ``name`` holds: itself, or each member of an archive, in order."""
    if is_archive(name):
        yield from _archive_entries(name, limits)
        return
    try:
        with _open(name) as file:
            data = _bounded(file, limits.text_bytes)
    except OSError as exc:
        yield Entry(name, problem=exc.strerror or str(exc))
        return
    yield Entry(name, data) if isinstance(data, bytes) else Entry(name, problem=f"the file is {data}")


class _HeaderTooLarge(Exception):
    pass


class _HeaderBudget(io.RawIOBase):
    """The archive's bytes, counted: past the members' data granted so far, only
    :data:`HEADER_BYTES` may be read before the next member, else :class:`_HeaderTooLarge`."""

    def __init__(self, stream: io.BufferedIOBase | IO[bytes]) -> None:
        super().__init__()
        self.stream = stream
        self.used = 0
        self.allowed = HEADER_BYTES

    def grant(self, member_bytes: int) -> None:
        self.allowed = self.used + member_bytes + HEADER_BYTES

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size if size >= 0 else tarfile.RECORDSIZE)
        self.used += len(data)
        if self.used > self.allowed:
            raise _HeaderTooLarge()
        return data


def _shown(name: str) -> str:
    """A member's name as the report shows it: control characters escaped, length bounded."""
    shown = name if name.isprintable() else name.encode("unicode_escape").decode("ascii")
    return shown if len(shown) <= NAME_CHARS else shown[:NAME_CHARS] + "..."


def _name_problem(name: str, seen: set[str]) -> str:
    parts = name.replace("\\", "/").split("/")
    if not name or len(name) > NAME_CHARS or not name.isprintable():
        return "the member's name is empty, too long or has control characters"
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts or "\\" in name:
        return "the member's name leaves the archive (an absolute path, '..' or '\\')"
    if name in seen:
        return "a second member of the same name"
    return ""


def _member_entry(archive: str, tar: tarfile.TarFile, member: tarfile.TarInfo, seen: set[str], limit: int) -> Entry:
    path = f"{archive}{MEMBER_MARK}{_shown(member.name)}"
    problem = _name_problem(member.name, seen)
    seen.add(member.name)
    if problem:
        return Entry(path, problem=problem)
    if not member.isreg():
        return Entry(path, problem="the member is not a regular file (a link, device or other special member)")
    if member.size > limit:
        return Entry(path, problem=f"the member is larger than {limit} bytes, the most a replay file may be")
    extracted = tar.extractfile(member)
    if extracted is None:
        return Entry(path, problem="the member has no contents")
    return Entry(path, extracted.read(member.size))


def _archive_entries(archive: str, limits: ReplayLimits) -> Iterator[Entry]:
    members = 0
    try:
        with _open(archive) as raw:
            plain = gzip.GzipFile(fileobj=raw, mode="rb") if archive.lower().endswith((".gz", ".tgz")) else raw
            budget = _HeaderBudget(plain)
            with tarfile.open(fileobj=budget, mode="r|") as tar:
                seen: set[str] = set()
                while (member := tar.next()) is not None:
                    # TarFile keeps every member it has read (undeclared in typeshed); a stream needs none back,
                    # and a huge archive must not pile them up.
                    tar.members.clear()  # type: ignore[attr-defined]
                    budget.grant(member.size + tarfile.BLOCKSIZE)
                    if member.isdir() or (member.isreg() and not member.name.endswith(REPLAY_SUFFIX)):
                        continue  # as in a folder: only replay files are audited
                    members += 1
                    yield _member_entry(archive, tar, member, seen, limits.text_bytes)
    except OSError as exc:
        yield Entry(archive, problem=f"the archive cannot be read: {exc.strerror or exc}")
        return
    except (tarfile.TarError, EOFError, zlib.error, _HeaderTooLarge) as exc:
        why = "a tar header is larger than a replay archive needs" if isinstance(exc, _HeaderTooLarge) else str(exc)
        yield Entry(archive, problem=f"the archive is damaged after {members} replay(s): {why}")
        return
    if not members:
        yield Entry(archive, problem="the archive holds no replay files (*.toml)")


__all__ = [
    "ARCHIVE_SUFFIXES",
    "MEMBER_MARK",
    "Entry",
    "SourceError",
    "is_archive",
    "is_url",
    "list_sources",
    "read_entries",
]
