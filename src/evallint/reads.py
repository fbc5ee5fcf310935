"""Files read besides the checked ones, recorded so that results that depend on them can be cached.

A judge config or a promptfoo config reads the templates, graders and tests it names; the lock
check reads the lock file and the pinned files; a loop spec's check reads its calibration set.
Their results then depend on those files too, and a cache keyed on the checked files' text
alone would keep stale results after a named file changed. Each such read (and each place
looked at where nothing was found) is recorded here as a dependency with the digest of what
was read; a cached result is reused only while every dependency still reads the same
(:func:`still_valid`). Front-ends and checks read other files only through :func:`read_file`
and :func:`exists` (or note what they read), which tests/test_architecture.py keeps true.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from evallint.confine import Outside, inside_any
from evallint.fileindex import content_digest
from evallint.source import read_bounded

if TYPE_CHECKING:
    from evallint.fileindex import FileIndex

# (absolute path, limit the read used, digest of the bytes read or "" when nothing was there);
# a limit of EXISTS records only whether the path exists ("1") or not ("").
Dependency = tuple[str, int, str]
EXISTS = -1
MAX_PINNED = 64 * 1024 * 1024  # a pinned prompt or rubric larger than this is not digested

_log: list[Dependency] | None = None


@contextmanager
def recording() -> Iterator[list[Dependency]]:
    """Record the reads made inside the block (one file's analysis) into the yielded list."""
    global _log
    outer, _log = _log, []
    try:
        yield _log
    finally:
        _log = outer


def recording_now() -> bool:
    """Whether reads are being recorded (a caller that looks at the file system for its own
    reasons, as the project-root lookup does, records only then)."""
    return _log is not None


def note(abspath: str, limit: int, data: bytes | None) -> None:
    """``abspath`` was read (``data``, at most ``limit + 1`` bytes) or found missing (None)."""
    if _log is not None:
        _log.append((abspath, limit, content_digest(data) if data is not None else ""))


def read_file(path: str | os.PathLike[str], limit: int, roots: tuple[str, ...]) -> bytes:
    """:func:`~evallint.source.read_bounded`, recorded (a failed read as "nothing there"),
    of a file whose real path lies inside ``roots`` (the run's :attr:`Config.roots`); a path
    that leads outside is :class:`~evallint.confine.Outside`, never opened."""
    abspath = os.path.abspath(path)
    if not inside_any(abspath, roots):
        raise Outside(f"{path}: outside the project; not read")
    try:
        data = read_bounded(abspath, limit)
    except OSError:
        note(abspath, limit, None)
        raise
    note(abspath, limit, data)
    return data


def exists(path: str | os.PathLike[str], roots: tuple[str, ...] | None = None) -> bool:
    """``os.path.exists``, recorded; with ``roots``, a path outside them does not exist."""
    abspath = os.path.abspath(path)
    if roots is not None and not inside_any(abspath, roots):
        return False  # nothing is learnt about a path outside (and nothing to record)
    found = os.path.exists(abspath)
    if _log is not None:
        _log.append((abspath, EXISTS, "1" if found else ""))
    return found


def still_valid(deps: list[Dependency], index: FileIndex) -> bool:
    """Whether every dependency still reads as it did (through the index: unchanged files
    are not read again)."""
    for abspath, limit, digest in deps:
        if limit == EXISTS:
            now: str | None = "1" if os.path.exists(abspath) else ""
        else:
            now, _ = index.digest(abspath, limit)
        if (now or "") != digest:
            return False
    return True


def well_formed(deps: object) -> bool:
    return isinstance(deps, list) and all(
        isinstance(d, tuple) and len(d) == 3 and isinstance(d[0], str)
        and type(d[1]) is int and isinstance(d[2], str) for d in deps)
