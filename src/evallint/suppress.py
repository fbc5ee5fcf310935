"""Inline suppressions: ``evallint: ignore[EL201] -- reason`` in any comment syntax.

A suppression silences the named codes on its own line; a comment that stands alone on its
line also covers the next non-blank line (templates and markdown cannot always carry a trailing
comment). ``ignore-file[...]`` anywhere covers the whole file. Suppressions that silence nothing
are reported (EL902), as are unknown codes (EL903) and missing reasons (EL904): a placeholder
(``TODO: say why``) is no reason (:func:`placeholder`).
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

# A reason that only says one is owed. A to-do marker first: the decision is still to be made.
TODO_MARKER = re.compile(r"\b(?:TODO|FIXME|XXX+|TBD)\b", re.IGNORECASE)
_MARKER_FIRST = re.compile(r"^[\W_]*(?:TODO|FIXME|XXX+|TBD)\b", re.IGNORECASE)
# Words that ask for a reason instead of giving one ("say why", "reason here", "<reason>"),
# or that stand for none ("n/a", "none"); matched on the reason's words, punctuation left out.
_FILLER = re.compile(
    r"(?:(?:please )?(?:say|explain|add|give|write|insert|state|document|fill in|enter|put) )?"
    r"(?:(?:a|the|your|some) )?(?:reason|why|justification|explanation|rationale)"
    r"(?: (?:here|goes here|this is (?:safe|ok|okay|fine|needed)|it is (?:safe|ok|okay|fine)"
    r"|needed|missing))?"
    r"|n/?a|none|nothing|tbd|wip|later",
    re.IGNORECASE)


def placeholder(reason: str) -> bool:
    """Whether ``reason`` gives no reason: empty or punctuation only (``-``, ``...``, ``?``),
    a to-do marker first (``TODO``, ``FIXME``, ``XXX``, ``TBD``), or words that ask for a
    reason (``say why this is safe``, ``reason here``, ``<reason>``) or stand for none
    (``n/a``). Reported as EL904 like a missing one."""
    text = reason.strip()
    if not re.search(r"[^\W_]", text) or _MARKER_FIRST.match(text):
        return True
    words = " ".join(re.findall(r"[^\W_]+(?:['/][^\W_]+)*", text))
    return _FILLER.fullmatch(words) is not None


@dataclass
class Suppression:
    """One suppression comment; ``lines`` are the lines it covers (empty: the whole file)."""

    line: int
    column: int
    codes: tuple[str, ...]  # empty: every code
    reason: str  # empty when none is given, or only a placeholder
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
                reason=_reason(m.group("reason") or ""),
                lines=frozenset(covered),
                whole_file=m.group("kind") == "ignore-file",
                cell=cell,
            )
        )
    return found


def _reason(text: str) -> str:
    """The reason a suppression gives: its text, or "" when it is none (:func:`placeholder`)."""
    text = text.strip()
    return "" if placeholder(text) else text
