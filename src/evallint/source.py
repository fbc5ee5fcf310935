"""Reading files safely: bytes to text with clear, positioned reasons when that fails."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from evallint.safefs import read_fd

DEFAULT_MAX_BYTES = 2_000_000


class SourceError(Exception):
    """A file that cannot be turned into text. Carries the 1-based line where that was seen."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass
class SourceFile:
    """A decoded file. ``rel`` is the '/'-separated path shown to the user."""

    path: Path
    rel: str
    text: str
    data: bytes

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


def char_column(line_text: str, byte_col: int) -> int:
    """``ast``'s 0-based column (UTF-8 bytes) as a 0-based column in characters."""
    if not byte_col or line_text.isascii():
        return byte_col
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def is_utf16(data: bytes) -> bool:
    """A text saved as UTF-16 with its byte-order mark (Windows editors write such files:
    every other byte of ASCII is NUL, yet it is text)."""
    return data.startswith(_UTF16_BOMS)


def utf8_bytes(data: bytes, text: str) -> bytes:
    """The file's bytes as the parsers read them (UTF-8): a UTF-16 file's text re-encoded."""
    return text.encode("utf-8") if is_utf16(data) else data


def decode(data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Decode UTF-8 (with or without BOM), or UTF-16 with its BOM, or raise
    :class:`SourceError` saying where it broke."""
    if len(data) > max_bytes:
        raise SourceError(  # the read stops one byte past the limit: the size is not known
            f"file is over the {max_bytes:,}-byte limit (max-file-size); not analysed"
        )
    if is_utf16(data):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise SourceError(f"not valid UTF-16 (at byte offset {exc.start})") from None
    if b"\x00" in data[:8192]:
        raise SourceError("binary file (contains NUL bytes); not analysed")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SourceError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line, col
        ) from None


def read_bounded(path: Path | str, limit: int, *, follow: bool = True) -> bytes:
    """At most ``limit + 1`` bytes of a regular file (one byte more, so that callers can tell
    an oversized file). The checked tree is untrusted: a FIFO would block a plain read and a
    device such as ``/dev/zero`` would never end, so anything but a regular file is an OSError,
    and a read never takes more than the file's size says (a ``/proc`` file claims 0 bytes
    and never ends). ``follow=False`` refuses a final symlink too."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def read_source(path: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> SourceFile:
    """Read and decode one file; OS errors become :class:`SourceError` too."""
    try:
        data = read_bounded(path, max_bytes)
    except OSError as exc:
        raise SourceError(f"cannot read file: {exc.strerror or exc}") from None
    text = decode(data, max_bytes)
    return SourceFile(path=path, rel=rel, text=text, data=utf8_bytes(data, text))


def offset_to_pos(text: str, offset: int) -> tuple[int, int]:
    """Convert a 0-based character offset into a 1-based (line, column)."""
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


class LineIndex:
    """Fast offset -> (line, column) lookups for one text (bisect over line starts)."""

    def __init__(self, text: str) -> None:
        starts = [0]
        pos = text.find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        self._starts = starts

    def pos(self, offset: int) -> tuple[int, int]:
        from bisect import bisect_right

        i = bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1

    def offset(self, line: int, column: int = 1) -> int:
        return self._starts[max(0, min(line, len(self._starts)) - 1)] + column - 1
