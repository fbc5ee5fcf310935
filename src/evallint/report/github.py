"""GitHub Actions workflow commands: annotations on the pull request diff."""

from __future__ import annotations

from evallint.findings import Finding, Severity
from evallint.registry import RuleMeta
from evallint.report.clean import clean_text

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(findings: list[Finding], metas: dict[str, RuleMeta], verbose: bool) -> str:
    """One workflow command per finding: every field from the tree has its control
    characters escaped first (:mod:`evallint.report.clean`), then GitHub's own escapes, so
    that a field can neither end the command nor start another."""
    out = []
    for f in findings:
        props = f"file={_escape_prop(clean_text(f.path))},line={f.line},col={f.column}"
        if f.end_line:
            props += f",endLine={f.end_line}"
        title = f"{f.code} {f.name}".strip()
        props += f",title={_escape_prop(title)}"
        message = clean_text(f.message if f.cell is None else f"cell {f.cell}: {f.message}")
        out.append(f"::{_LEVEL[f.severity]} {props}::{_escape_data(f.code + ' ' + message)}")
    return "\n".join(out) + ("\n" if out else "")
