"""``path:line:col: CODE message``: the format editors and problem matchers understand."""

from __future__ import annotations

from collections.abc import Collection

from evallint.findings import Finding, Severity
from evallint.registry import RuleMeta

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTE: "\x1b[36m"}


def location(f: Finding) -> str:
    if f.cell is not None:
        return f"{f.path}:cell {f.cell}:{f.line}:{f.column}"
    return f"{f.path}:{f.line}:{f.column}"


def render_text(findings: list[Finding], metas: dict[str, RuleMeta], verbose: bool,
                fixable: Collection[int] = ()) -> str:
    """One line per finding; ``fixable`` holds the indices of findings that ``--fix`` would
    repair, marked ``[*]`` after the code as ruff does."""
    lines = []
    for i, f in enumerate(findings):
        sev = "" if f.severity is Severity.ERROR else f" ({f.severity.value})"
        mark = "[*] " if i in fixable else ""
        lines.append(f"{location(f)}: {f.code} {mark}{f.message}{sev}")
        for r in f.related:
            where = f"cell {r.cell}:" if r.cell is not None else ""
            lines.append(f"    {r.path}:{where}{r.line}:{r.column}: {r.message}")
        if verbose:
            for e in f.evidence:
                lines.append(f"    evidence: {e}")
            if f.fix:
                lines.append(f"    fix: {f.fix}")
    return "\n".join(lines) + ("\n" if lines else "")


def fix_hint(fixable: int, hidden: int) -> str:
    """The line under the summary that says what ``--fix`` would do, as ruff words it."""
    more = ""
    if hidden:
        more = (f" ({hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the "
                "`--unsafe-fixes` option)")
    if fixable:
        return f"[*] {fixable} fixable with the `--fix` option{more}."
    return f"No fixes available{more}." if hidden else ""


def colorize(line: str, severity: Severity) -> str:
    return f"{_COLORS[severity]}{line}\x1b[0m"
