"""`evallint check --fix / --diff / --unsafe-fixes` as a user runs them, and on fixtures/broken."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.conftest import write_files
from tests.test_cli import run

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^(?P<path>[^:\s]+):(?:cell \d+:)?\d+:\d+: (?P<code>EL\d{3}) (?P<mark>\[\*\] )?")


def findings(out: str) -> list[tuple[str, str, bool]]:
    """(path, code, marked fixable) of each finding line of the text report."""
    return [(m["path"], m["code"], bool(m["mark"])) for line in out.splitlines()
            if (m := LINE.match(line))]


JUDGE = "---\nname: judge\ndescription: Scores the draft against the rubric.\n---\nScore it.\n"
EVALUATOR = ("---\nname: evaluator\ndescription: Grades the work.\ntools: Read, Bash\n"
             "model: haiku\n---\nGrade it.\n")


def test_text_report_marks_fixable_findings_and_hints(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": JUDGE,
                           ".claude/agents/evaluator.md": EVALUATOR})
    code, out, err = run(["check", "--no-cache"], tmp_path)
    assert code == 1
    assert sorted(findings(out)) == [(".claude/agents/evaluator.md", "EL401", False),
                                     (".claude/agents/judge.md", "EL402", True)]
    assert ("[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the "
            "`--unsafe-fixes` option).") in err
    code, out, err = run(["check", "--no-cache", "--unsafe-fixes"], tmp_path)
    assert all(marked for _, _, marked in findings(out))
    assert "[*] 2 fixable with the `--fix` option." in err


def test_diff_prints_and_writes_nothing(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": JUDGE})
    code, out, err = run(["check", "--no-cache", "--diff"], tmp_path)
    assert code == 1
    assert "--- a/.claude/agents/judge.md\n+++ b/.claude/agents/judge.md\n" in out
    assert "+tools: Read, Grep, Glob\n" in out
    assert "Would fix 1 finding." in err
    assert (tmp_path / ".claude/agents/judge.md").read_text() == JUDGE


def test_diff_without_changes_exits_0(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/evaluator.md": EVALUATOR})
    code, out, err = run(["check", "--no-cache", "--diff"], tmp_path)
    assert (code, out) == (0, "")
    assert "No fixes to apply." in err


def test_fix_writes_reports_what_remains_and_is_idempotent(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": JUDGE,
                           ".claude/agents/evaluator.md": EVALUATOR})
    code, out, err = run(["check", "--no-cache", "--fix"], tmp_path)
    assert code == 1
    assert findings(out) == [(".claude/agents/evaluator.md", "EL401", False)]
    assert "Fixed 1 finding (1 remaining); 2 files checked." in err
    assert "tools: Read, Grep, Glob" in (tmp_path / ".claude/agents/judge.md").read_text()
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.md")}
    code, out, err = run(["check", "--no-cache", "--fix"], tmp_path)
    assert "Fixed" not in err and "Found 1 finding (1 error); 2 files checked." in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.md")} == before
    code, out, err = run(["check", "--no-cache", "--fix", "--unsafe-fixes"], tmp_path)
    assert code == 0
    assert "Fixed 1 finding (0 remaining)" in err


def test_fix_respects_ignore(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": JUDGE})
    code, out, _ = run(["check", "--no-cache", "--fix", "--ignore", "EL402"], tmp_path)
    assert (code, out) == (0, "")
    assert (tmp_path / ".claude/agents/judge.md").read_text() == JUDGE


def test_fix_refuses_stdin(tmp_path: Path) -> None:
    code, _, err = run(["check", "--fix", "--stdin-filename", "a.j2"], tmp_path)
    assert code == 2
    assert "--stdin-filename" in err


def test_fix_on_broken_fixtures_removes_exactly_the_safe_fixable(tmp_path: Path) -> None:
    """Every finding with a safe fix goes; every other finding stays (by file and code)."""
    tree = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures" / "broken", tree / "broken")
    _, out, _ = run(["check", "--no-cache", "fixtures"], tmp_path)
    before = findings(out)
    safe = Counter((p, c) for p, c, marked in before if marked)
    assert {c for _, c in safe} == {"EL402", "EL505"}
    code, out, err = run(["check", "--no-cache", "--fix", "fixtures"], tmp_path)
    after = Counter((p, c) for p, c, _ in findings(out))
    assert after == Counter((p, c) for p, c, _ in before) - safe
    assert f"Fixed {sum(safe.values())} findings ({sum(after.values())} remaining)" in err
    code, out, err = run(["check", "--no-cache", "--diff", "fixtures"], tmp_path)
    assert (code, out) == (0, "")


def test_plain_check_does_not_import_the_fixers(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.j2": "Grade <output>{{ output }}</output>.\n"})
    probe = ("import sys\nfrom evallint.cli import main\n"
             "try:\n    main(['check', '--no-cache', '.'])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith(('libcst', 'evallint.fixes'))))")
    res = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stderr


def test_rule_command_says_whether_a_fix_exists(tmp_path: Path) -> None:
    import json

    code, out, _ = run(["rule", "EL402"], tmp_path)
    assert code == 0
    assert "Fix available (safe, applied by --fix): Adds `tools: Read, Grep, Glob`" in out
    code, out, _ = run(["rule", "EL401", "--output-format", "json"], tmp_path)
    (doc,) = json.loads(out)
    assert doc["fixable"] == "unsafe" and "deny-list" in doc["autofix"]
    code, out, _ = run(["rule", "EL101", "--output-format", "json"], tmp_path)
    assert json.loads(out)[0]["fixable"] is None
