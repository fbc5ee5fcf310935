"""``path:line:col: CODE message``: the format editors and problem matchers understand."""

from __future__ import annotations

from evallint.findings import Finding, Severity
from evallint.registry import RuleMeta

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTE: "\x1b[36m"}


def location(f: Finding) -> str:
    if f.cell is not None:
        return f"{f.path}:cell {f.cell}:{f.line}:{f.column}"
    return f"{f.path}:{f.line}:{f.column}"


def render_text(findings: list[Finding], metas: dict[str, RuleMeta], verbose: bool) -> str:
    lines = []
    for f in findings:
        sev = "" if f.severity is Severity.ERROR else f" ({f.severity.value})"
        lines.append(f"{location(f)}: {f.code} {f.message}{sev}")
        for r in f.related:
            where = f"cell {r.cell}:" if r.cell is not None else ""
            lines.append(f"    {r.path}:{where}{r.line}:{r.column}: {r.message}")
        if verbose:
            for e in f.evidence:
                lines.append(f"    evidence: {e}")
            if f.fix:
                lines.append(f"    fix: {f.fix}")
    return "\n".join(lines) + ("\n" if lines else "")


def colorize(line: str, severity: Severity) -> str:
    return f"{_COLORS[severity]}{line}\x1b[0m"
