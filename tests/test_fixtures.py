"""`evallint check fixtures` reports exactly the planted violations, and nothing on clean code.

Every expected finding is listed in fixtures/expected/<area>.txt as ``path:line: CODE`` (or
``path:cell N:line: CODE`` for notebooks), paths from the repository root.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import lint_tree

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(
    r"^(?P<path>[^:\s]+):(?:cell (?P<cell>\d+):)?(?P<line>\d+): (?P<code>EL\d{3})\s*$"
)

Key = tuple[str, int | None, int, str]


def expected() -> set[Key]:
    out: set[Key] = set()
    for f in sorted((ROOT / "fixtures" / "expected").glob("*.txt")):
        for n, raw in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = LINE.match(line)
            assert m, f"{f.name}:{n}: cannot read expectation {raw!r}"
            cell = int(m["cell"]) if m["cell"] else None
            out.add((m["path"], cell, int(m["line"]), m["code"]))
    return out


def test_fixtures_report_exactly_the_planted_findings() -> None:
    result = lint_tree(ROOT, paths=["fixtures"])
    assert not result.tool_errors, result.tool_errors
    found = {(f.path, f.cell, f.line, f.code) for f in result.findings}
    want = expected()
    missing = sorted(want - found, key=str)
    extra = sorted(found - want, key=str)
    assert not missing and not extra, f"missing: {missing}\nunexpected: {extra}"


def test_clean_fixtures_have_no_errors_or_warnings() -> None:
    result = lint_tree(ROOT, paths=["fixtures"])
    bad = [f for f in result.findings
           if f.path.startswith(("fixtures/clean/", "fixtures/loop/"))
           and f.severity.value != "note"]
    assert bad == []
