"""Fixes as plain text edits, shared by `check --fix`, `--diff` and the editor server.

A fix is computed after the check, from the finding and the file's current text, so findings
stay small plain data in the cache and an editor can ask for the fix of any diagnostic it shows.
Offsets are character offsets into the text as read (0-based, end exclusive), which convert to
both line/column pairs (LSP) and slices (``--fix``) without a second parse.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evallint.findings import Finding
from evallint.suppress import TODO_MARKER, Suppression, scan


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

# The module of ``evallint.fixes`` that holds each code's fixer, imported only when a fix is
# asked for: a plain ``check`` never pays for the fixers (nor for libcst, which EL505 uses).
FIX_MODULES: dict[str, str] = {
    "EL105": "templates",
    "EL304": "agents",
    "EL401": "agents",
    "EL402": "agents",
    "EL505": "python_modes",
}
# No fixer may silence what it was asked to repair: ``fix_for`` refuses a fix that adds or
# changes a suppression comment, or adds a to-do marker (a placeholder for words only a person
# can write). So EL904 (a suppression without a reason) has no fix: the reason is a person's.


def fixer(code: str) -> Callable[[Fixer], Fixer]:
    """Register the function that repairs findings of ``code`` (one per rule)."""

    def register(fn: Fixer) -> Fixer:
        _FIXERS[code] = fn
        return fn

    return register


def fixable_codes() -> frozenset[str]:
    """Codes that have a fixer (for the report's "[*] fixable" marks and the docs)."""
    return frozenset(_FIXERS) | frozenset(FIX_MODULES)


def _load(code: str) -> Fixer | None:
    """The fixer of ``code``, importing its module from ``evallint.fixes`` on first use."""
    fn = _FIXERS.get(code)
    if fn is None and code in FIX_MODULES:
        import importlib

        importlib.import_module(f"evallint.fixes.{FIX_MODULES[code]}")
        fn = _FIXERS.get(code)
    return fn


def fix_for(finding: Finding, text: str) -> Fix | None:
    """The fix for ``finding`` on the file's current ``text``, or None when there is none or
    the text no longer has the shape the fixer expects (the file changed since the check).
    Notebooks get none: their findings are positioned inside a cell of a JSON document."""
    if finding.cell is not None or finding.path.endswith(".ipynb"):
        return None
    fn = _load(finding.code)
    if fn is None:
        return None
    try:
        fix = fn(finding, text)
    except Exception:  # bad input (or a fixer's bug) means no fix, never a crashed run
        return None
    return None if fix is not None and silences(fix, text) else fix


def silences(fix: Fix, text: str) -> bool:
    """Whether ``fix`` would make a finding go away without repairing it: it adds (or
    changes) a suppression comment, or adds a to-do marker (``TODO``, ``FIXME``, ``XXX``,
    ``TBD``) that stands for a decision still owed."""
    added = "".join(e.new_text for e in fix.edits)
    if "evallint:" not in text and "evallint:" not in added and not TODO_MARKER.search(added):
        return False
    after = apply_edits(text, fix.edits)
    if Counter(map(_said, scan(after))) - Counter(map(_said, scan(text))):
        return True
    return len(TODO_MARKER.findall(after)) > len(TODO_MARKER.findall(text))


def _said(s: Suppression) -> tuple[tuple[str, ...], bool, str]:
    return s.codes, s.whole_file, s.reason


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


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """Apply whole fixes in position order, skipping any fix with an edit that overlaps one
    already taken (a later pass applies it to the new text). Returns the new text and the
    fixes applied, so that a caller can count them."""
    taken: list[Fix] = []
    spans: list[tuple[int, int]] = []
    for fix in sorted(fixes, key=lambda f: min(((e.start, e.end) for e in f.edits),
                                               default=(0, 0))):
        if not fix.edits:
            continue
        if any(_overlaps(e, s) for e in fix.edits for s in spans):
            continue
        taken.append(fix)
        spans.extend((e.start, e.end) for e in fix.edits)
    return apply_edits(text, [e for f in taken for e in f.edits]), taken


def _overlaps(edit: TextEdit, span: tuple[int, int]) -> bool:
    """Two edits conflict when their spans intersect or both insert at one offset."""
    start, end = span
    if edit.start == edit.end or start == end:
        return edit.start == start or start < edit.start < end or edit.start < start < edit.end
    return edit.start < end and start < edit.end
