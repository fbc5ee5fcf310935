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
import secrets
from pathlib import Path
from typing import Any

from evallint import datacodec
from evallint.source import read_bounded

MAGIC = b"evallint-cache 2\n"
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
                fh.write(secrets.token_bytes(KEY_BYTES))
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
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
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
            return datacodec.decode(payload)
        except datacodec.CodecError:
            return None

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
        """Store an entry already encoded with :func:`datacodec.encode` (by a worker)."""
        if not self.enabled:
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
