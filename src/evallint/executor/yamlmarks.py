"""YAML loading that remembers where each value came from, so spec errors can name a line.

``yaml.safe_load`` forgets positions; the linter's loader (``marks.py``) keeps them.
This adapts its positions to the executor's key-path lines and its errors to SpecError.
"""

from __future__ import annotations

from typing import Any

from evallint.executor.errors import SpecError
from evallint.frontend import ParseError
from evallint.marks import load_yaml

KeyPath = tuple[str | int, ...]


class Located:
    """A loaded document plus the 1-based line of every key path in it."""

    def __init__(self, value: Any, lines: dict[KeyPath, int], path: str) -> None:
        self.value = value
        self.lines = lines
        self.path = path

    def line(self, *keys: str | int) -> int | None:
        """The line of the deepest known prefix of ``keys`` (a missing key points at its parent)."""
        probe: KeyPath = tuple(keys)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return self.lines.get((), None)

    def error(self, message: str, *keys: str | int) -> SpecError:
        return SpecError(message, self.path, self.line(*keys))


def load_located(text: str, path: str) -> Located:
    """Parse one YAML document with positions; YAML syntax errors become SpecError with a line.

    The positions come from the linter's own position-aware loader, so the executor and the
    lint read a spec the same way.
    """
    try:
        doc = load_yaml(text)
    except ParseError as exc:
        raise SpecError(exc.message, path, exc.line) from None
    if doc.duplicates:
        where, pos = doc.duplicates[0]
        raise SpecError(f"duplicate key '{where[-1]}'", path, pos.line)
    lines: dict[KeyPath, int] = {k: p.line for k, p in doc.values.items()}
    lines.update({k: p.line for k, p in doc.keys.items()})
    return Located(doc.data, lines, path)
