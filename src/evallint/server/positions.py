"""Columns in the client's position encoding.

evallint counts columns in characters (code points); an LSP client counts in UTF-16 code units
unless it negotiated otherwise, so every column that crosses the wire goes through here. A
character outside the Basic Multilingual Plane (most emoji) is two UTF-16 units, and any
non-ASCII character is several UTF-8 units.
"""

from __future__ import annotations

from evallint.fixing import line_offsets, position_of

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def _units(ch: str, encoding: str) -> int:
    code = ord(ch)
    if encoding == UTF32:
        return 1
    if encoding == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 2 if code > 0xFFFF else 1


def to_client(line_text: str, column: int, encoding: str = UTF16) -> int:
    """The client column of the 0-based character ``column`` on ``line_text``; columns past
    the end (a line the server could not read) count one unit per character."""
    column = max(column, 0)
    head = line_text[:column]
    beyond = column - len(head)
    if head.isascii() or encoding == UTF32:
        return column
    return sum(_units(ch, encoding) for ch in head) + beyond


def from_client(line_text: str, units: int, encoding: str = UTF16) -> int:
    """The 0-based character column of a client column on ``line_text`` (clamped to the line;
    a column inside a surrogate pair or a UTF-8 sequence rounds up to the next character)."""
    if line_text.isascii() or encoding == UTF32:
        return min(max(units, 0), len(line_text))
    seen = 0
    for i, ch in enumerate(line_text):
        if seen >= units:
            return i
        seen += _units(ch, encoding)
    return len(line_text)


class Lines:
    """One text's lines, for converting offsets and 1-based finding positions to client ones."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_offsets(text)

    def line(self, index: int) -> str:
        """The text of 0-based line ``index`` without its line break ('' past the end)."""
        if not 0 <= index < len(self.starts):
            return ""
        end = self.starts[index + 1] - 1 if index + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[index]:end].rstrip("\r")

    def client_position(self, offset: int, encoding: str = UTF16) -> tuple[int, int]:
        """0-based (line, client column) of a character offset (fix edits)."""
        line, column = position_of(min(max(offset, 0), len(self.text)), self.starts)
        return line, to_client(self.line(line), column, encoding)

    def offset(self, line: int, units: int, encoding: str = UTF16) -> int:
        """The character offset of a 0-based client (line, column)."""
        if line >= len(self.starts):
            return len(self.text)
        return self.starts[max(line, 0)] + from_client(self.line(line), units, encoding)
