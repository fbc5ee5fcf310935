"""Digests and kinds of files remembered by their status, so a warm run reads no unchanged file.

A warm run used to read every file to hash it for the cache key, and every YAML, markdown and
JSON file's head to tell its kind: on a tree of a thousand such files that was most of the
run. Like git's index, this one remembers per path the file's size, modification time, change
time, inode and device beside its digest and kind, and trusts them while all five are the same.

The change time is the kernel's: no tool can set it back, so rewriting a file and restoring its
modification time and size (``touch -d``, ``rsync -t``) still shows. A file changed just before
its status was taken could change again within the same clock tick without any of the five
moving ("racily clean" in git): an entry is only kept when the file's change time is
``MARGIN_NS`` older than the start of the run that recorded it; younger files are hashed
again next time. The index is an entry of the result cache, so it is authenticated like every
other entry: a committed or edited index is a miss, never trusted.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from typing import TYPE_CHECKING, Final

from evallint.source import read_bounded

if TYPE_CHECKING:
    from evallint.cache import Store

NAMESPACE: Final = "index"
MARGIN_NS = 2_000_000_000
MAX_ENTRIES = 200_000  # beyond this, entries this run did not see are dropped
UNKNOWN: Final = "?"  # a kind not recorded (a ``None`` kind is recorded as "")

Signature = tuple[int, int, int, int, int]


def signature(st: os.stat_result) -> Signature:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileIndex:
    """One run's view of the index: what it may trust, and what it learnt for the next run."""

    def __init__(self, entries: object = None, started_ns: int | None = None) -> None:
        self.started = time.time_ns() if started_ns is None else started_ns
        self._old: dict[str, list[object]] = _valid(entries)
        self._new: dict[str, list[object]] = {}
        self._stats: dict[str, os.stat_result | None] = {}
        self._links: set[str] = set()

    def stat(self, abspath: str) -> os.stat_result | None:
        """The file's status (links followed), or None when it is not a regular file."""
        if abspath in self._stats:
            return self._stats[abspath]
        st: os.stat_result | None
        try:
            st = os.lstat(abspath)
            if stat.S_ISLNK(st.st_mode):
                self._links.add(abspath)
                st = os.stat(abspath)
        except (OSError, ValueError):
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            st = None
        self._stats[abspath] = st
        return st

    def is_link(self, abspath: str) -> bool:
        """Whether :meth:`stat` found a symbolic link at ``abspath``."""
        return abspath in self._links

    def _entry(self, abspath: str, st: os.stat_result) -> list[object]:
        """This run's record of the file, seeded from the old one if its status is the same."""
        entry = self._new.get(abspath)
        sig = list(signature(st))
        if entry is not None and entry[:5] == sig:
            return entry
        old = self._old.get(abspath)
        entry = list(old) if old is not None and old[:5] == sig else [*sig, "", UNKNOWN]
        self._new[abspath] = entry
        return entry

    def kind(self, abspath: str, st: os.stat_result, context: str = "") -> str:
        """The kind recorded for an unchanged file under the same ``context`` (whatever else
        the kind was read from; "" for no kind), else :data:`UNKNOWN`."""
        value = self._entry(abspath, st)[6]
        head, sep, kind = value.partition("\0") if isinstance(value, str) else ("", "", "")
        return kind if sep and head == context else UNKNOWN

    def note_kind(self, abspath: str, st: os.stat_result, kind: str | None,
                  context: str = "") -> None:
        self._entry(abspath, st)[6] = f"{context}\0{kind or ''}"

    def digest(self, abspath: str, limit: int) -> tuple[str | None, bytes | None]:
        """The digest of the file's first ``limit + 1`` bytes (what the analysis reads) and,
        when it had to be read, the bytes; (None, None) for a file that cannot be read."""
        st = self.stat(abspath)
        if st is None:
            return None, None
        entry = self._entry(abspath, st)
        tag = f"{limit}:"
        known = entry[5]
        if isinstance(known, str) and known.startswith(tag):
            return known[len(tag):], None
        try:
            data = read_bounded(abspath, limit)
        except OSError:
            return None, None
        digest = content_digest(data)
        entry[5] = tag + digest
        return digest, data

    def entries(self) -> dict[str, list[object]]:
        """What the next run may trust: this run's records of files whose change time is
        ``MARGIN_NS`` before this run started, then the older records it did not look at."""
        cutoff = self.started - MARGIN_NS
        out = {p: e for p, e in self._new.items()
               if isinstance(e[2], int) and e[2] < cutoff and (e[5] or e[6] != UNKNOWN)}
        for path, entry in self._old.items():
            if len(out) >= MAX_ENTRIES:
                break
            if path not in self._new:
                out[path] = entry
        return out

    def save(self, store: Store, key: str) -> None:
        """Write the index back when this run learnt anything (a write failure only turns the
        cache off, as with every other entry)."""
        entries = self.entries()
        if entries != self._old:
            store.put(NAMESPACE, key, entries)


def load(store: Store, key: str) -> FileIndex:
    return FileIndex(store.get(NAMESPACE, key))


def _valid(entries: object) -> dict[str, list[object]]:
    """The well-formed records of a decoded index (an entry we did not write is a miss)."""
    if not isinstance(entries, dict):
        return {}
    out: dict[str, list[object]] = {}
    for path, entry in entries.items():
        if (isinstance(path, str) and isinstance(entry, list) and len(entry) == 7
                and all(type(v) is int for v in entry[:5])
                and isinstance(entry[5], str) and isinstance(entry[6], str)):
            out[path] = entry
    return out
