"""The result cache, safe in a tree an attacker controls.

``check`` runs on pull requests from forks, so a cache folder inside the checked tree may have
been written by anyone. Three things keep it honest:

- entries are plain data (:mod:`evallint.datacodec`), never pickles: reading one cannot run code;
- each entry carries an HMAC made with a key that lives in the user's own cache directory, never
  in the project, so a committed, copied or edited entry does not authenticate and is a miss;
- the folder stays where the project's config may put it (inside the project root; elsewhere
  only from the command line or the environment), and ignores itself (``.gitignore`` with ``*``,
  ``CACHEDIR.TAG``), so it is neither committed by accident nor picked up by backups.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evallint import datacodec
from evallint.safefs import Folder, UnsafePath
from evallint.source import read_bounded

MAGIC = b"evallint-cache 2\n"
PACK_MAGIC = b"evallint-pack 3\n"
# Namespaces kept in pack files: one file per run holding every new entry. Thousands of
# one-entry files cost more to create and open than the entries take to compute on some file
# systems (4,300 creations took 3.5 s here). A pack is its magic, the index's length (16 hex
# digits), the index's HMAC (64 hex digits), the index (a record per entry: key, HMAC, offset
# and length of the payload after the index, in hex), then the payloads: a run reads the
# indexes, and then only the payloads it uses, never a whole pack (a merged pack may hold
# many older entries). A pack whose index does not authenticate is not ours: it is neither
# read nor removed.
PACKED = frozenset({"files", "pyflow"})
# Packed namespaces whose merged pack keeps only what the run wrote and read: an entry of the
# project analysis no run asked for belongs to a part that no longer exists.
LEAN = frozenset({"pyflow"})
MAX_INDEX = 64 * 1024 * 1024  # over every pack's index: a planted pack cannot make us read GBs
MAX_PACKS = 8  # beyond this many packs, the next write merges them into one
MAX_MERGED = 256 * 1024 * 1024  # a merged pack keeps older entries up to this many bytes
_RECORD = 64 + 64 + 16 + 16  # an index record: key, HMAC, payload offset, payload length
_HEAD = len(PACK_MAGIC) + 16 + 64  # magic, the index's length, its HMAC
_HEX = re.compile(rb"[0-9a-f]+")
KEY_BYTES = 32
MAX_ENTRY = 256 * 1024 * 1024  # an entry larger than this was not written by us
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by evallint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
ENV_CACHE_DIR = "EVALLINT_CACHE_DIR"
ENV_KEY_FILE = "EVALLINT_CACHE_KEY"  # tests and unusual homes: where the HMAC key lives


class CacheUnavailable(Exception):
    """Caching is off for this run; the message says why (shown as a warning)."""


def key_path() -> Path:
    """Where this user's cache key lives: outside every project, in the user's cache home."""
    explicit = os.environ.get(ENV_KEY_FILE)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "evallint" / "cache.key"


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def load_key(project_root: Path) -> bytes:
    """This user's HMAC key, created on first use (mode 0600); never one inside the project."""
    path = key_path()
    resolved = path.resolve()
    if _inside(resolved, project_root.resolve()):
        raise CacheUnavailable(f"the cache key {path} lies inside the checked project")
    try:
        resolved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(resolved, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(KEY_BYTES))
        key = _read_regular(resolved, KEY_BYTES + 1)
    except OSError as exc:
        raise CacheUnavailable(f"cannot create or read the cache key {path}: "
                               f"{exc.strerror or exc}") from None
    if key is None or len(key) != KEY_BYTES:
        raise CacheUnavailable(f"the cache key {path} is not one evallint wrote")
    return key


def _read_regular(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (a final symlink is not followed); None when over ``limit``."""
    data = read_bounded(path, limit, follow=False)
    return None if len(data) > limit else data


def resolve_folder(root: Path, configured: str, override: str | None) -> Path:
    """The cache folder: ``override`` (command line, environment) as given; otherwise the
    config's relative ``cache-dir`` under the project root, which must stay inside the root
    even after symlinks are followed (a committed symlink must not aim our writes elsewhere).
    An override that names a folder inside the project must stay inside it too: the person
    who typed ``--cache-dir .evallint_cache`` did not mean a symlink committed there."""
    real_root = root.resolve()
    if override:
        folder = Path(override).expanduser().absolute()
        if _inside(Path(os.path.normpath(folder)), root.absolute()) and \
                not _inside(folder.resolve(), real_root):
            raise CacheUnavailable(f"the cache folder {override} is a symlink out of the "
                                   "project")
        return folder
    folder = root / configured
    if not _inside(folder.resolve(), real_root):
        raise CacheUnavailable(f"cache-dir '{configured}' leads outside the project root "
                               f"(set {ENV_CACHE_DIR} or --cache-dir for a folder elsewhere)")
    return folder


def open_folder(folder: Path, version: str) -> Folder:
    """The cache folder (created, with its ``.gitignore`` and ``CACHEDIR.TAG`` kept if
    present) and, inside it, the folder of this cache ``version``, opened for the run.
    Every name inside is then used through the opened folder, never followed as a symlink:
    a committed ``.evallint_cache/v2 -> ~`` turns caching off, it does not aim our writes."""
    top: Folder | None = None
    try:
        top = Folder.open(folder, create=True)
        for name, text in ((".gitignore", "# created by evallint\n*\n"),
                           ("CACHEDIR.TAG", CACHEDIR_TAG)):
            if top.kind(name) is None:
                top.write(name, text.encode(), mode=0o644)
        return top.sub(version)
    except UnsafePath as exc:
        raise CacheUnavailable(f"{exc.strerror or exc} inside the cache folder") from None
    except OSError as exc:
        raise CacheUnavailable(f"cannot create the cache folder {folder}: "
                               f"{exc.strerror or exc}") from None
    finally:
        if top is not None:
            top.close()


_KEY_NAME = re.compile(r"[0-9a-f]{64}")
_SHARD = re.compile(r"[0-9a-f]{2}")


class Store:
    """Authenticated plain-data entries under ``folder/<namespace>/``, the folder opened once
    (:class:`~evallint.safefs.Folder`): no symlink inside it is ever followed, and only
    files that authenticate as this user's are ever removed."""

    def __init__(self, folder: Folder | Path, key: bytes, salt: str) -> None:
        self.folder = folder if isinstance(folder, Folder) else Folder.open(folder, create=True)
        self._key = key
        self.salt = salt
        self.enabled = True
        self.problem: str | None = None  # why caching stopped mid-run (shown as a warning)
        self._folders: dict[tuple[str, ...], Folder | None] = {}  # opened subfolders
        # packed namespaces: key -> (the pack, where its record starts in the pack's index)
        self._index: dict[str, dict[str, tuple[_Pack, int]]] = {}
        self._packs: dict[str, list[_Pack]] = {}  # the packs the index was read from
        self._used: dict[str, dict[str, tuple[bytes, bytes]]] = {}  # hits: key -> mac, payload
        self._pending: dict[str, list[tuple[str, bytes, bytes]]] = {}  # key, mac, payload

    def entry_key(self, *parts: str | bytes) -> str:
        """A digest of the salt (evallint's code, config, rules, the project) and ``parts``."""
        h = hashlib.sha256(self.salt.encode())
        for part in parts:
            h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()

    def _sub(self, *names: str, create: bool) -> Folder | None:
        """The folder ``names`` under the cache folder, or None: missing (and not
        ``create``), or not a real folder, which turns caching off for the run."""
        at = tuple(names)
        if at in self._folders and (self._folders[at] is not None or not create):
            return self._folders[at]
        parent = self.folder if len(at) == 1 else self._sub(*at[:-1], create=create)
        found: Folder | None = None
        if parent is not None:
            try:
                found = parent.sub(at[-1], create=create)
            except FileNotFoundError:
                found = None
            except OSError as exc:
                self._stop(f"{exc.strerror or exc}" if isinstance(exc, UnsafePath) else
                           f"cannot use {parent.path / at[-1]}: {exc.strerror or exc}")
        self._folders[at] = found
        return found

    def _stop(self, why: str) -> None:
        """Stop writing for the rest of the run, and say why (once)."""
        if self.enabled and self.problem is None:
            self.problem = f"result cache off: {why}"
        self.enabled = False

    def _mac(self, namespace: str, key: str, payload: bytes) -> bytes:
        mac = hmac.new(self._key, MAGIC + namespace.encode() + b"\0" + key.encode() + b"\0",
                       hashlib.sha256)
        mac.update(payload)
        return mac.hexdigest().encode()

    def _entry(self, namespace: str, key: str, blob: bytes | None) -> tuple[bytes, bytes] | None:
        """(HMAC, payload) of a one-entry file's bytes, when it authenticates."""
        if blob is None or not blob.startswith(MAGIC):
            return None
        head = len(MAGIC)
        mac, payload = blob[head:head + 64], blob[head + 65:]
        if blob[head + 64:head + 65] != b"\n" or \
                not hmac.compare_digest(mac, self._mac(namespace, key, payload)):
            return None
        return mac, payload

    def get(self, namespace: str, key: str) -> Any | None:
        """The object stored under ``key``, or None: missing, foreign, tampered or corrupt
        entries are all just misses."""
        if namespace in PACKED:
            where = self._pack_index(namespace).get(key)
            found = where[0].record(where[1]) if where is not None else None
            if found is None:
                return None
            mac, payload = found
            if not hmac.compare_digest(mac, self._mac(namespace, key, payload)):
                return None
        else:
            shard = self._sub(namespace, key[:2], create=False)
            try:
                blob = shard.read(key, MAX_ENTRY) if shard is not None else None
            except OSError:
                return None
            entry = self._entry(namespace, key, blob)
            if entry is None:
                return None
            mac, payload = entry
        try:
            value = datacodec.decode(payload)
        except datacodec.CodecError:
            return None
        if namespace in PACKED:
            self._used.setdefault(namespace, {})[key] = (mac, payload)
        return value

    def has(self, namespace: str, key: str) -> bool:
        """Whether a packed namespace holds an entry under ``key`` (not yet authenticated or
        decoded: :meth:`get` may still find it foreign or corrupt)."""
        return namespace in PACKED and key in self._pack_index(namespace)

    def _pack_index(self, namespace: str) -> dict[str, tuple[_Pack, int]]:
        """Where each entry of the namespace's packs lies, read once per run from the packs'
        indexes. Only packs whose index authenticates are read (and only those are ever
        merged away); every entry is still checked against its HMAC (and its bounds) when
        read."""
        index = self._index.get(namespace)
        if index is not None:
            return index
        index = {}
        packs: list[_Pack] = []
        budget = MAX_INDEX
        folder = self._sub(namespace, create=False)
        try:
            names = folder.names() if folder is not None else []
        except OSError:
            names = []
        for name in names:
            if not (name.startswith("pack-") and name.endswith(".bin")):
                continue
            if len(packs) >= 4 * MAX_PACKS:
                break  # more than evallint ever leaves: the rest are misses
            assert folder is not None
            pack = _Pack.open(folder, name, budget, self._key)
            if pack is not None:
                budget -= len(pack.index)
                packs.append(pack)
                for key, at in pack.records():
                    index[key] = (pack, at)
        self._index[namespace], self._packs[namespace] = index, packs
        return index

    def close(self) -> None:
        """Release the pack files and folders this run opened (an editor server runs many
        checks)."""
        for packs in self._packs.values():
            for pack in packs:
                pack.close()
        self._packs, self._index = {}, {}
        for folder in self._folders.values():
            if folder is not None:
                folder.close()
        self._folders = {}

    def put(self, namespace: str, key: str, obj: Any, *, replace_all: bool = False) -> None:
        """Store ``obj``; ``replace_all`` drops the namespace's other entries (one-entry
        caches such as the project analysis). Failures switch caching off, never the run."""
        if not self.enabled:
            return
        try:
            payload = datacodec.encode(obj)
        except datacodec.CodecError:
            return
        self.put_encoded(namespace, key, payload, replace_all=replace_all)

    def put_encoded(self, namespace: str, key: str, payload: bytes, *,
                    replace_all: bool = False) -> None:
        """Store an entry already encoded with :func:`datacodec.encode` (by a worker). In a
        packed namespace the entry waits for :meth:`flush`."""
        if not self.enabled:
            return
        if namespace in PACKED:
            self._pending.setdefault(namespace, []).append(
                (key, self._mac(namespace, key, payload), payload))
            return
        try:
            if replace_all:
                self._drop_entries(namespace)
            shard = self._sub(namespace, key[:2], create=True)
            if shard is not None:
                shard.write(key, MAGIC + self._mac(namespace, key, payload) + b"\n" + payload)
        except OSError as exc:
            self._stop(f"cannot write to {self.folder.path / namespace}: {exc.strerror or exc}")

    def _drop_entries(self, namespace: str) -> None:
        """Remove the entries of a one-entry namespace: in its two-letter folders, the files
        named by a key whose content authenticates under that key (nothing else)."""
        folder = self._sub(namespace, create=False)
        if folder is None:
            return
        for shard_name in folder.names():
            if not _SHARD.fullmatch(shard_name) or folder.kind(shard_name) != "dir":
                continue
            shard = self._sub(namespace, shard_name, create=False)
            if shard is None:
                continue
            for name in shard.names():
                if not _KEY_NAME.fullmatch(name) or shard.kind(name) != "file":
                    continue
                try:
                    blob = shard.read(name, MAX_ENTRY)
                except OSError:
                    continue
                if self._entry(namespace, name, blob) is not None:
                    shard.remove(name)

    def flush(self) -> None:
        """Write the entries waiting in packed namespaces as one new pack each. With too many
        packs already, the new pack takes the old packs' entries too and replaces them: first
        what this run wrote and read, then the rest up to ``MAX_MERGED`` bytes (a run over a
        few files, as a pre-commit hook makes, keeps the entries of the others). Most of the
        time only the packs beside the largest are merged (see :func:`_merging`): rewriting
        every entry of a large tree at each merge made every eighth run tens of milliseconds
        slower, and seconds for a cache near ``MAX_MERGED``."""
        pending, self._pending = self._pending, {}
        for namespace, items in pending.items():
            if not self.enabled or not items:
                continue
            old = self._packs.get(namespace, []) if namespace in self._index else []
            merged = _merging(old, lean=namespace in LEAN)
            compact = len(merged) == len(old) > 0
            records = {key: (mac, payload) for key, mac, payload in items}
            if merged and not compact:  # the small packs only: all they hold
                for pack in merged:
                    for key, at in pack.records():
                        found = pack.record(at) if key not in records else None
                        if found is not None:
                            records[key] = found
            if compact:
                for key, rec in self._used.get(namespace, {}).items():
                    records.setdefault(key, rec)
                room = 0 if namespace in LEAN else MAX_MERGED - sum(
                    len(p) for _, p in records.values())
                for key, (pack, at) in self._index.get(namespace, {}).items():
                    if key in records or room <= 0 or pack.length(at) > room:
                        continue
                    found = pack.record(at)
                    if found is not None:
                        records[key] = found
                        room -= len(found[1])
            name = f"pack-{time.time_ns():020d}-{os.urandom(4).hex()}.bin"
            folder = self._sub(namespace, create=True)
            if folder is None:
                continue
            try:
                folder.write(name, pack_bytes(records, self._key))
                if merged:  # closed first: Windows does not remove an open file
                    for pack in merged:
                        pack.close()
                        folder.remove(pack.name)
                    # a later read in this process looks at the packs as they are now
                    self._index.pop(namespace, None)
                    self._packs.pop(namespace, None)
            except OSError as exc:
                self._stop(f"cannot write to {folder.path}: {exc.strerror or exc}")


def _merging(packs: list[_Pack], *, lean: bool) -> list[_Pack]:
    """The packs the next write replaces: none while there are fewer than ``MAX_PACKS``;
    then all of them when the namespace keeps only what runs use (``lean``), when together
    they pass ``MAX_MERGED`` bytes, or when the others add up to half the largest (so that
    the largest is rewritten about once per half its size of new entries); else every pack
    but the largest."""
    if len(packs) < MAX_PACKS:
        return []
    largest = max(packs, key=lambda p: p.size)
    rest = [p for p in packs if p is not largest]
    small = sum(p.size for p in rest)
    if lean or small + largest.size > MAX_MERGED or 2 * small >= largest.size:
        return packs
    return rest


def read_pack(folder: Path, name: str, key: bytes) -> dict[str, tuple[bytes, bytes]]:
    """key -> (HMAC, payload) of every record of the pack ``name`` in ``folder`` that parses
    and lies inside it (the index is authenticated with ``key``; the entries are not)."""
    where = Folder.open(folder)
    try:
        pack = _Pack.open(where, name, MAX_INDEX, key)
        if pack is None:
            return {}
        try:
            out: dict[str, tuple[bytes, bytes]] = {}
            for k, at in pack.records():
                found = pack.record(at)
                if found is not None:
                    out[k] = found
            return out
        finally:
            pack.close()
    finally:
        where.close()


def _index_mac(key: bytes, index: bytes) -> bytes:
    return hmac.new(key, PACK_MAGIC + index, hashlib.sha256).hexdigest().encode()


def pack_bytes(records: dict[str, tuple[bytes, bytes]], key: bytes) -> bytes:
    """A pack file holding ``records`` (key -> HMAC, payload), its index signed with
    ``key``: a pack whose index does not authenticate is neither read nor ever removed."""
    index: list[bytes] = []
    at = 0
    for k, (mac, payload) in records.items():
        index.append(k.encode() + mac + b"%016x%016x" % (at, len(payload)))
        at += len(payload)
    head = b"".join(index)
    return b"".join([PACK_MAGIC, b"%016x" % len(head), _index_mac(key, head), head,
                     *(payload for _mac, payload in records.values())])


class _Pack:
    """One pack file held open for the run: its index read, each payload read when asked
    for (``os.pread``: a forked solver reading the same file shares no file position)."""

    def __init__(self, name: str, fd: int, size: int, index: bytes) -> None:
        self.name, self.fd, self.size, self.index = name, fd, size, index
        self.base = _HEAD + len(index)

    @classmethod
    def open(cls, folder: Folder, name: str, budget: int, key: bytes) -> _Pack | None:
        """The pack ``name`` in ``folder``, or None when it is not a regular file with our
        magic and a whole index of at most ``budget`` bytes that authenticates with ``key``
        (a symlink is not followed; a FIFO does not block)."""
        try:
            fd = folder.open_file(name)
        except OSError:
            return None
        try:
            size = os.fstat(fd).st_size
            head = _read_at(fd, _HEAD, 0) if size >= _HEAD else b""
            length = head[len(PACK_MAGIC):len(PACK_MAGIC) + 16]
            mac = head[len(PACK_MAGIC) + 16:]
            if head.startswith(PACK_MAGIC) and _HEX.fullmatch(length) and \
                    int(length, 16) <= min(size - _HEAD, budget):
                index = _read_at(fd, int(length, 16), _HEAD)
                if len(index) == int(length, 16) and \
                        hmac.compare_digest(mac, _index_mac(key, index)):
                    return cls(name, fd, size, index)
        except OSError:
            pass
        os.close(fd)
        return None

    def records(self) -> Iterator[tuple[str, int]]:
        """Each record's key and where the record starts in the index."""
        for at in range(0, len(self.index) - _RECORD + 1, _RECORD):
            yield self.index[at:at + 64].decode("latin-1"), at

    def length(self, at: int) -> int:
        """The payload length the record at ``at`` claims (-1: malformed)."""
        field = self.index[at + 144:at + 160]
        return int(field, 16) if _HEX.fullmatch(field) else -1

    def record(self, at: int) -> tuple[bytes, bytes] | None:
        """The (HMAC, payload) of the index record at ``at``; None when the record is
        malformed or points outside the pack."""
        mac, offset, length = (self.index[at + 64:at + 128], self.index[at + 128:at + 144],
                               self.length(at))
        if not (_HEX.fullmatch(mac) and _HEX.fullmatch(offset)) or not 0 <= length <= MAX_ENTRY:
            return None
        start = self.base + int(offset, 16)
        if start + length > self.size or self.fd < 0:
            return None
        try:
            payload = _read_at(self.fd, length, start)
        except OSError:
            return None
        return (mac, payload) if len(payload) == length else None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _read_at(fd: int, n: int, at: int) -> bytes:
    """``n`` bytes at offset ``at`` (fewer at the end of the file)."""
    if hasattr(os, "pread"):
        return os.pread(fd, n, at)
    os.lseek(fd, at, os.SEEK_SET)  # Windows: no pread, and no fork to share the position
    return os.read(fd, n)
