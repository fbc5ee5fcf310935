"""`evallint check fixtures` reports exactly the planted violations, and nothing on clean code.

Every expected finding is listed in fixtures/expected/<area>.txt as ``path:line: CODE`` (or
``path:cell N:line: CODE`` for notebooks), paths from the repository root.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import lint_tree, write_files

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


def test_output_does_not_depend_on_hash_seeds(tmp_path: Path) -> None:
    """Same input, same output, byte for byte: baselines and CI diffs depend on it. Two
    generators reach one judge below; sets of strings iterate in a per-process order."""
    import os
    import subprocess
    import sys

    write_files(tmp_path, {"loop.py": (
        "import anthropic\nclient = anthropic.Anthropic()\nMODEL = 'claude-sonnet-4-5'\n"
        "def ask(q):\n    return client.messages.create(model=MODEL, max_tokens=9,\n"
        "        messages=[{'role': 'user', 'content': q}]).content[0].text\n"
        "def ask_again(q):\n    return client.messages.create(model=MODEL, max_tokens=9,\n"
        "        messages=[{'role': 'user', 'content': q}]).content[0].text\n"
        "def judge(answer):\n    return client.messages.create(model=MODEL, max_tokens=9,\n"
        "        messages=[{'role': 'user', 'content': 'Score 1-10: ' + answer}])\n"
        "a = ask('x')\nb = ask_again('y')\nverdict = judge(a + b)\n")})
    root = Path(__file__).resolve().parents[1]
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root / "src")}
        proc = subprocess.run([sys.executable, "-m", "evallint", "check", "--no-cache",
                               str(tmp_path), str(root / "fixtures")], env=env,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 1 and "EL301" in proc.stdout
        outputs.add(proc.stdout)
    assert len(outputs) == 1
