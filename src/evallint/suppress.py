"""Inline suppressions: ``evallint: ignore[EL201] -- reason`` in any comment syntax.

A suppression silences the named codes on its own line; a comment that stands alone on its
line also covers the next non-blank line (templates and markdown cannot always carry a trailing
comment). ``ignore-file[...]`` anywhere covers the whole file. Suppressions that silence nothing
are reported (EL902), as are unknown codes (EL903) and missing reasons (EL904).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPENERS = r"(?:#|\{#-?|<!--|\{\{!(?:--)?|//|--|;)"
_PATTERN = re.compile(
    _OPENERS
    + r"\s*evallint:\s*(?P<kind>ignore-file|ignore)\b"
    r"(?:\[(?P<codes>[^\]]*)\])?"
    r"(?:\s*(?:--(?![>}])|:|—)\s*(?P<reason>.*?))?"
    r"\s*(?:-?#\}|-->|--\}\}|\}\}|\*/)?\s*$"
)
_ONLY_COMMENT = re.compile(r"^\s*" + _OPENERS)


@dataclass
class Suppression:
    """One suppression comment; ``lines`` are the lines it covers (empty: the whole file)."""

    line: int
    column: int
    codes: tuple[str, ...]  # empty: every code
    reason: str
    lines: frozenset[int]
    whole_file: bool = False
    cell: int | None = None
    used: set[str] = field(default_factory=set)

    def covers(self, code: str, line: int, cell: int | None) -> bool:
        if self.cell != cell and not self.whole_file:
            return False
        if self.codes and not any(code == c or code.startswith(c) for c in self.codes):
            return False
        return self.whole_file or line in self.lines


def scan(text: str, cell: int | None = None) -> list[Suppression]:
    """Find every suppression comment in ``text``."""
    if "evallint:" not in text:
        return []
    lines = text.splitlines()
    found: list[Suppression] = []
    for idx, raw in enumerate(lines):
        if "evallint:" not in raw:
            continue
        m = _PATTERN.search(raw)
        if not m:
            continue
        lineno = idx + 1
        codes = tuple(
            c.strip().upper() for c in (m.group("codes") or "").split(",") if c.strip()
        )
        covered = {lineno}
        if _ONLY_COMMENT.match(raw):
            nxt = idx + 1
            while nxt < len(lines) and not lines[nxt].strip():
                nxt += 1
            if nxt < len(lines):
                covered.add(nxt + 1)
        found.append(
            Suppression(
                line=lineno,
                column=m.start() + 1,
                codes=codes,
                reason=(m.group("reason") or "").strip(),
                lines=frozenset(covered),
                whole_file=m.group("kind") == "ignore-file",
                cell=cell,
            )
        )
    return found
