"""``path:line:col: CODE message``: the format editors and problem matchers understand."""

from __future__ import annotations

from collections.abc import Collection

from evallint.findings import Finding, Severity
from evallint.registry import RuleMeta
from evallint.report.clean import clean_path, clean_text

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTE: "\x1b[36m"}


def location(f: Finding) -> str:
    path = clean_path(f.path)
    if f.cell is not None:
        return f"{path}:cell {f.cell}:{f.line}:{f.column}"
    return f"{path}:{f.line}:{f.column}"


def render_text(findings: list[Finding], metas: dict[str, RuleMeta], verbose: bool,
                fixable: Collection[int] = (), color: bool = False) -> str:
    """One line per finding; ``fixable`` holds the indices of findings that ``--fix`` would
    repair, marked ``[*]`` after the code as ruff does. Every field from the tree is printed
    with its control characters escaped (:mod:`evallint.report.clean`), so each finding is
    exactly its lines; ``color`` colours each finding's first line by its severity."""
    lines = []
    for i, f in enumerate(findings):
        sev = "" if f.severity is Severity.ERROR else f" ({f.severity.value})"
        mark = "[*] " if i in fixable else ""
        head = f"{location(f)}: {f.code} {mark}{clean_text(f.message)}{sev}"
        lines.append(colorize(head, f.severity) if color else head)
        for r in f.related:
            where = f"cell {r.cell}:" if r.cell is not None else ""
            lines.append(f"    {clean_path(r.path)}:{where}{r.line}:{r.column}: "
                         f"{clean_text(r.message)}")
        if verbose:
            for e in f.evidence:
                lines.append(f"    evidence: {clean_text(e)}")
            if f.fix:
                lines.append(f"    fix: {clean_text(f.fix)}")
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
