"""The field benchmark's own plumbing: it once skipped every repository as "no JSON" for
months (it started evallint through an entry point that had been renamed), so the way it runs
evallint is exercised here on a small tree. Figures are the script's business, not a test's."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import write_files

RUN = Path(__file__).resolve().parents[1] / "bench" / "field" / "run.py"


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("field_run", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("safe_path", ["", "1"])
def test_the_field_runner_gets_evallints_findings_as_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, safe_path: str) -> None:
    if safe_path:
        monkeypatch.setenv("PYTHONSAFEPATH", safe_path)
    else:
        monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    write_files(tmp_path, {".claude/agents/judge.md": (
        "---\nname: judge\ndescription: Scores the answer.\ntools: Read, Bash\n---\nScore it.\n")})
    found = _runner().run_evallint(tmp_path)
    assert [(f["path"], f["code"]) for f in found] == [(".claude/agents/judge.md", "EL401")]


def test_the_field_runner_reads_an_empty_tree_as_nothing_found(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing evallint reads\n")
    assert _runner().run_evallint(tmp_path) == []


def test_a_verdict_with_a_name_matches_only_the_finding_that_names_it() -> None:
    """Two findings of one rule on one line (two fields at one judge call) take the verdicts
    that name their values; a verdict without a name matches both."""
    run = _runner()
    findings = [
        {"path": "s.ts", "line": 7, "code": "EL202", "message": "`trace.plan` looks like ..."},
        {"path": "s.ts", "line": 7, "code": "EL202", "message": "`trace.input` looks like ..."},
    ]
    named = [run.Verdict("s.ts", 7, "EL202", "true", "the plan", name="trace.plan"),
             run.Verdict("s.ts", 7, "EL202", "false", "the input", name="trace.input")]
    repo = run.Repo("o/r", "0" * 40, "", "repos-x.yaml", named, [])
    out = run.match(repo, findings)
    assert [out.judged[i].verdict for i in (0, 1)] == ["true", "false"]
    either = run.Verdict("s.ts", 7, "EL202", "debatable", "either")
    plain = run.match(run.Repo("o/r", "0" * 40, "", "repos-x.yaml", [named[0], either], []),
                      findings)
    assert plain.judged[0].verdict == "true" and plain.judged[1].verdict == "debatable"
