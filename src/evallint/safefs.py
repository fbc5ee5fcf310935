"""File operations that a hostile tree cannot redirect.

The checked tree is untrusted, and so is anything committed inside it, the cache folder
included. A path that is checked once and then opened by name can be a symlink to anywhere
(``.evallint_cache/v2/runs -> ~/.ssh``), so the folders evallint writes into are opened once
and then used only through their descriptors: every name inside one is looked up without
following a symlink, created exclusively, renamed and removed relative to the descriptor.
On a platform without ``dir_fd`` support (Windows) the same rules are applied by path, each
name checked with ``lstat`` first.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FD = {os.open, os.mkdir, os.unlink, os.rename, os.stat} <= os.supports_dir_fd and \
    os.listdir in os.supports_fd


class UnsafePath(OSError):
    """A name that is not what evallint may use: a symlink, or not a regular file or folder."""


class Folder:
    """A folder opened once; names inside it never follow a symlink.

    ``path`` is kept for messages (and for the by-path fallback)."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, path: Path, *, create: bool = False) -> Folder:
        """``path`` itself (symlinks in it are followed: the caller has checked where it
        leads), created when ``create``."""
        if create:
            path.mkdir(parents=True, exist_ok=True)
        if not _DIR_FD:
            if not path.is_dir():
                raise UnsafePath(f"{path}: not a folder")
            return cls(path, None)
        return cls(path, os.open(path, os.O_RDONLY | _DIRECTORY))

    def sub(self, name: str, *, create: bool = True) -> Folder:
        """The folder ``name`` inside this one, created when missing (and ``create``); a
        symlink or anything but a real folder there is :class:`UnsafePath`."""
        _plain_name(name)
        if create:
            try:
                if self.fd is None:
                    os.mkdir(self.path / name, 0o700)
                else:
                    os.mkdir(name, 0o700, dir_fd=self.fd)
            except FileExistsError:
                pass
        if self.fd is None:
            st = os.lstat(self.path / name)
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafePath(f"{self.path / name}: not a folder (a symlink?)")
            return Folder(self.path / name, None)
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            if _is_link_error(exc) or self.kind(name) not in (None, "dir"):
                raise UnsafePath(f"{self.path / name}: not a folder (a symlink?)") from None
            raise
        return Folder(self.path / name, fd)

    def kind(self, name: str) -> str | None:
        """What ``name`` is, its final symlink not followed: "file", "dir", "link", "other",
        or None when it does not exist."""
        try:
            st = (os.lstat(self.path / name) if self.fd is None
                  else os.stat(name, dir_fd=self.fd, follow_symlinks=False))
        except FileNotFoundError:
            return None
        if stat.S_ISREG(st.st_mode):
            return "file"
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        return "link" if stat.S_ISLNK(st.st_mode) else "other"

    def names(self) -> list[str]:
        return sorted(os.listdir(self.path if self.fd is None else self.fd))

    def open_file(self, name: str) -> int:
        """A descriptor for reading the regular file ``name`` (not a symlink, and a FIFO or a
        device is refused without blocking)."""
        _plain_name(name)
        flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK
        fd = (os.open(self.path / name, flags) if self.fd is None
              else os.open(name, flags, dir_fd=self.fd))
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise UnsafePath(f"{self.path / name}: not a regular file")
        return fd

    def read(self, name: str, limit: int) -> bytes | None:
        """The bytes of the regular file ``name``; None when it holds more than ``limit``."""
        fd = self.open_file(name)
        try:
            data = read_fd(fd, limit)
        finally:
            os.close(fd)
        return None if len(data) > limit else data

    def write(self, name: str, data: bytes, mode: int = 0o600) -> None:
        """Write ``name`` atomically: a new file created exclusively beside it, then renamed
        over it (a symlink there is replaced, never followed; a folder or any other special
        file there is :class:`UnsafePath`)."""
        _plain_name(name)
        if self.kind(name) not in (None, "file", "link"):
            raise UnsafePath(f"{self.path / name}: not a regular file")
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        fd = (os.open(self.path / tmp, flags, mode) if self.fd is None
              else os.open(tmp, flags, mode, dir_fd=self.fd))
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            if self.fd is None:
                os.replace(self.path / tmp, self.path / name)
            else:
                os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.remove(tmp)
            raise

    def remove(self, name: str) -> None:
        """Remove the name ``name`` from this folder (a symlink itself, never its target;
        a folder is left alone)."""
        _plain_name(name)
        try:
            if self.fd is None:
                os.unlink(self.path / name)
            else:
                os.unlink(name, dir_fd=self.fd)
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            pass

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _plain_name(name: str) -> None:
    """A name inside a folder: no separator, not ``.`` or ``..`` (a key or a pack name)."""
    if not name or name in (".", "..") or "/" in name or os.sep in name or "\0" in name:
        raise UnsafePath(f"{name!r}: not a plain file name")


def _is_link_error(exc: OSError) -> bool:
    import errno

    return exc.errno in (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", -1))


def read_fd(fd: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the open regular file ``fd``, never more than its
    size says plus one: a file that grows while it is read, or a kernel file that reports a
    size of 0 and never ends (``/proc``), cannot make the read allocate more."""
    size = os.fstat(fd).st_size
    left = min(limit, size) + 1
    chunks: list[bytes] = []
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > size and size < limit:
        raise OSError(f"file changed size while it was read, or is not a plain file "
                      f"({size} bytes by its status)")
    return data


def write_output(path: str | os.PathLike[str], data: bytes, root: Path) -> None:
    """Write a report, a baseline or a lock file at ``path``: a new file beside it renamed
    over it, so that a symlink committed at that name is replaced, never written through.
    A folder on the way that is inside the project as written but a symlink out of it is
    :class:`~evallint.confine.Outside`; so is anything at ``path`` but a regular file or a
    symlink (a folder, a FIFO, a device)."""
    from evallint.confine import Outside, escapes

    target = Path(os.path.abspath(path))
    if escapes(target.parent, root):
        raise Outside(f"{path}: its folder is a symlink out of the project; not written")
    folder = Folder.open(target.parent)
    try:
        folder.write(target.name, data, mode=0o666)
    finally:
        folder.close()
