"""Fixes as plain text edits, shared by `check --fix`, `--diff` and the editor server.

A fix is computed after the check, from the finding and the file's current text, so findings
stay small plain data in the cache and an editor can ask for the fix of any diagnostic it shows.
Offsets are character offsets into the text as read (0-based, end exclusive), which convert to
both line/column pairs (LSP) and slices (``--fix``) without a second parse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evallint.findings import Finding


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[start:end]`` with ``new_text`` (an insertion when ``start == end``)."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """One rule's repair for one finding. ``safe`` follows ruff: a safe fix never changes what
    a prompt means to the model; an unsafe one may, and is applied only with --unsafe-fixes."""

    code: str
    title: str
    safe: bool
    edits: tuple[TextEdit, ...]


Fixer = Callable[[Finding, str], "Fix | None"]

_FIXERS: dict[str, Fixer] = {}


def fixer(code: str) -> Callable[[Fixer], Fixer]:
    """Register the function that repairs findings of ``code`` (one per rule)."""

    def register(fn: Fixer) -> Fixer:
        _FIXERS[code] = fn
        return fn

    return register


def fixable_codes() -> frozenset[str]:
    """Codes that have a fixer (for the report's "[*] fixable" marks and the docs)."""
    return frozenset(_FIXERS)


def fix_for(finding: Finding, text: str) -> Fix | None:
    """The fix for ``finding`` on the file's current ``text``, or None when there is none or
    the text no longer has the shape the fixer expects (the file changed since the check)."""
    fn = _FIXERS.get(finding.code)
    if fn is None or finding.cell is not None:
        return None
    return fn(finding, text)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits; overlapping ones (two fixes on one span) keep the first in
    position order and drop the rest, so a later run can apply them to the new text."""
    out: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < cursor:
            continue
        out.append(text[cursor:edit.start])
        out.append(edit.new_text)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)


def line_offsets(text: str) -> list[int]:
    """Offset of the first character of every line (line 1 is index 0)."""
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def offset_of(text: str, line: int, column: int, starts: list[int] | None = None) -> int:
    """Offset of a 1-based ``line`` and 1-based ``column`` as findings carry them (clamped)."""
    starts = starts if starts is not None else line_offsets(text)
    index = min(max(line, 1), len(starts)) - 1
    return min(starts[index] + max(column, 1) - 1, len(text))


def position_of(offset: int, starts: list[int]) -> tuple[int, int]:
    """0-based (line, character) of an offset, as the Language Server Protocol wants it."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo, offset - starts[lo]
