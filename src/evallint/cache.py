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
from pathlib import Path
from typing import Any

from evallint import datacodec
from evallint.source import read_bounded

MAGIC = b"evallint-cache 2\n"
PACK_MAGIC = b"evallint-pack 1\n"
# Namespaces kept in pack files: one file per run holding every new entry (a record: key,
# HMAC, payload length, payload). Thousands of one-entry files cost more to create and open
# than the entries take to compute on some file systems (4,300 creations took 3.5 s here).
PACKED = frozenset({"files", "pyflow"})
# Packed namespaces whose merged pack keeps only what the run wrote and read: an entry of the
# project analysis no run asked for belongs to a part that no longer exists.
LEAN = frozenset({"pyflow"})
MAX_PACK = 1 << 30
MAX_PACKS = 8  # beyond this many packs, the next write merges them into one
MAX_MERGED = 256 * 1024 * 1024  # a merged pack keeps older entries up to this many bytes
_RECORD_HEAD = 64 + 64 + 16
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
    even after symlinks are followed (a committed symlink must not aim our writes elsewhere)."""
    if override:
        return Path(override).expanduser().absolute()
    folder = root / configured
    real_root = root.resolve()
    if not _inside(folder.resolve(), real_root):
        raise CacheUnavailable(f"cache-dir '{configured}' leads outside the project root "
                               f"(set {ENV_CACHE_DIR} or --cache-dir for a folder elsewhere)")
    return folder


def prepare_folder(folder: Path) -> None:
    """Create the folder with its ``.gitignore`` and ``CACHEDIR.TAG`` (kept if present)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# created by evallint\n*\n"),
                           ("CACHEDIR.TAG", CACHEDIR_TAG)):
            target = folder / name
            if not os.path.lexists(target):
                _write_new(target, text.encode(), mode=0o644)
    except OSError as exc:
        raise CacheUnavailable(f"cannot create the cache folder {folder}: "
                               f"{exc.strerror or exc}") from None


def _write_new(target: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``target`` atomically; a planted symlink there is replaced, not
    followed (the temporary name is created exclusively, ``os.replace`` renames over links)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class Store:
    """Authenticated plain-data entries under ``folder/<namespace>/``."""

    def __init__(self, folder: Path, key: bytes, salt: str) -> None:
        self.folder = folder
        self._key = key
        self.salt = salt
        self.enabled = True
        self._made: set[Path] = set()  # folders known to exist
        # packed namespaces: key -> (pack bytes, mac start, payload start, payload end)
        self._index: dict[str, dict[str, tuple[bytes, int, int, int]]] = {}
        self._packs: dict[str, list[Path]] = {}  # the pack files the index was read from
        self._used: dict[str, dict[str, tuple[bytes, bytes]]] = {}  # hits: key -> mac, payload
        self._pending: dict[str, list[tuple[str, bytes, bytes]]] = {}  # key, mac, payload

    def entry_key(self, *parts: str | bytes) -> str:
        """A digest of the salt (evallint's code, config, rules) and ``parts``."""
        h = hashlib.sha256(self.salt.encode())
        for part in parts:
            h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()

    def _path(self, namespace: str, key: str) -> Path:
        return self.folder / namespace / key[:2] / key

    def _mac(self, namespace: str, key: str, payload: bytes) -> bytes:
        mac = hmac.new(self._key, MAGIC + namespace.encode() + b"\0" + key.encode() + b"\0",
                       hashlib.sha256)
        mac.update(payload)
        return mac.hexdigest().encode()

    def get(self, namespace: str, key: str) -> Any | None:
        """The object stored under ``key``, or None: missing, foreign, tampered or corrupt
        entries are all just misses."""
        if namespace in PACKED:
            rec = self._pack_index(namespace).get(key)
            if rec is None:
                return None
            pack, at, start, end = rec
            mac, payload = pack[at:at + 64], pack[start:end]
        else:
            try:
                blob = _read_regular(self._path(namespace, key), MAX_ENTRY)
            except OSError:
                return None
            if blob is None or not blob.startswith(MAGIC):
                return None
            head = len(MAGIC)
            mac, payload = blob[head:head + 64], blob[head + 65:]
            if blob[head + 64:head + 65] != b"\n":
                return None
        if not hmac.compare_digest(mac, self._mac(namespace, key, payload)):
            return None
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

    def _pack_index(self, namespace: str) -> dict[str, tuple[bytes, int, int, int]]:
        """Where each entry of the namespace's packs lies, read once per run. A pack that is
        not one we wrote (a symlink, over the size limit, malformed) yields what parsed before
        the damage; every entry is still checked against its HMAC when read."""
        index = self._index.get(namespace)
        if index is not None:
            return index
        index = {}
        packs: list[Path] = []
        folder = self.folder / namespace
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        budget = MAX_PACK  # over every pack: a planted folder of huge packs cannot stall us
        for name in names:
            if not (name.startswith("pack-") and name.endswith(".bin")):
                continue
            if len(packs) >= 4 * MAX_PACKS:
                break  # more than evallint ever leaves: the rest are misses
            try:
                blob = _read_regular(folder / name, budget)
            except OSError:
                continue
            if blob is not None:
                budget -= len(blob)
                packs.append(folder / name)
                _read_pack(blob, index)
        self._index[namespace], self._packs[namespace] = index, packs
        return index

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
        target = self._path(namespace, key)
        try:
            if replace_all and (self.folder / namespace).is_dir():
                for sub in (self.folder / namespace).iterdir():
                    if sub.is_dir() and not sub.is_symlink():
                        for old in sub.iterdir():
                            old.unlink(missing_ok=True)
            if target.parent not in self._made:
                target.parent.mkdir(parents=True, exist_ok=True)
                self._made.add(target.parent)
            _write_new(target, MAGIC + self._mac(namespace, key, payload) + b"\n" + payload)
        except OSError:
            self.enabled = False  # a read-only checkout: just stop caching

    def flush(self) -> None:
        """Write the entries waiting in packed namespaces as one new pack each. With too many
        packs already, the new pack takes the old packs' entries too and replaces them: first
        what this run wrote and read, then the rest up to ``MAX_MERGED`` bytes (a run over a
        few files, as a pre-commit hook makes, keeps the entries of the others)."""
        pending, self._pending = self._pending, {}
        for namespace, items in pending.items():
            if not self.enabled or not items:
                continue
            old = self._packs.get(namespace, []) if namespace in self._index else []
            compact = len(old) >= MAX_PACKS
            records = {key: (mac, payload) for key, mac, payload in items}
            if compact:
                for key, rec in self._used.get(namespace, {}).items():
                    records.setdefault(key, rec)
                room = 0 if namespace in LEAN else MAX_MERGED - sum(
                    len(p) for _, p in records.values())
                for key, (blob, at, start, end) in self._index.get(namespace, {}).items():
                    if key not in records and end - start <= room:
                        records[key] = (blob[at:at + 64], blob[start:end])
                        room -= end - start
            body = b"".join(key.encode() + mac + b"%016x" % len(payload) + payload
                            for key, (mac, payload) in records.items())
            folder = self.folder / namespace
            name = f"pack-{time.time_ns():020d}-{os.urandom(4).hex()}.bin"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                _write_new(folder / name, PACK_MAGIC + body)
                if compact:
                    for path in old:
                        path.unlink(missing_ok=True)
            except OSError:
                self.enabled = False  # a read-only checkout: just stop caching


def _read_pack(blob: bytes, index: dict[str, tuple[bytes, int, int, int]]) -> None:
    """Add the records of one pack to ``index``; stop at the first malformed one."""
    if not blob.startswith(PACK_MAGIC):
        return
    pos, size = len(PACK_MAGIC), len(blob)
    while pos + _RECORD_HEAD <= size:
        key, mac, length = blob[pos:pos + 64], blob[pos + 64:pos + 128], \
            blob[pos + 128:pos + _RECORD_HEAD]
        if not (_HEX.fullmatch(key) and _HEX.fullmatch(mac) and _HEX.fullmatch(length)):
            return
        start = pos + _RECORD_HEAD
        end = start + int(length, 16)
        if end > size or end - start > MAX_ENTRY:
            return
        index[key.decode()] = (blob, pos + 64, start, end)
        pos = end
