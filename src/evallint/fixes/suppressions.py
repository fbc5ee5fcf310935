"""EL904: give a suppression without a reason a placeholder that says one is owed.

Safe: the edit is inside a comment and adds no instruction; the placeholder is easy to find
(``TODO``) and still reads as an unfinished decision to a reviewer.
"""

from __future__ import annotations

import re

from evallint.findings import Finding
from evallint.fixing import Fix, TextEdit, fixer, line_offsets
from evallint.suppress import _PATTERN

PLACEHOLDER = "TODO: say why this is safe"
_SEPARATOR = re.compile(r"\s*(?:--(?![>}])|:|—)[ \t]*")


@fixer("EL904")
def add_reason(finding: Finding, text: str) -> Fix | None:
    """Insert `` -- TODO: say why this is safe`` after the codes of the suppression."""
    starts = line_offsets(text)
    if not 1 <= finding.line <= len(starts):
        return None
    begin = starts[finding.line - 1]
    end = starts[finding.line] - 1 if finding.line < len(starts) else len(text)
    line = text[begin:end].rstrip("\r")
    m = _PATTERN.search(line)
    if m is None or (m.group("reason") or "").strip():
        return None
    at = m.end("codes") + 1 if m.group("codes") is not None else m.end("kind")
    sep = _SEPARATOR.match(line, at)
    if sep is not None:  # "ignore[EL101] --" with nothing after the dash: fill it in
        spaced = line[sep.end() - 1:sep.end()].isspace()
        new = PLACEHOLDER if spaced else " " + PLACEHOLDER
        if spaced and line[sep.end():].strip():
            new += " "  # keep the space before the comment's closer
        edit = TextEdit(begin + sep.end(), begin + sep.end(), new)
    else:
        edit = TextEdit(begin + at, begin + at, f" -- {PLACEHOLDER}")
    return Fix("EL904", "Add a reason placeholder to the suppression", True, (edit,))
