"""Each fixer: apply it, check again, and the finding is gone with nothing new in its place;
a second run changes nothing. Safe fixes apply by default, unsafe ones only when asked."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evallint.config import parse_config
from evallint.engine import RunResult, run_check
from evallint.findings import Finding
from evallint.fixes.runner import fix_project, write_back
from evallint.fixing import apply_edits, fix_for
from evallint.registry import load_checks, load_rules
from tests.conftest import write_files


def _lint(root: Path, config: dict[str, Any] | None = None,
          codes: set[str] | None = None) -> tuple[RunResult, Any, set[str]]:
    load_checks()
    metas = load_rules()
    cfg = parse_config(config or {}, source=None, root=root)
    cfg.respect_gitignore = False
    enabled = codes if codes is not None else {c for c, m in metas.items() if m.default}
    old = Path.cwd()
    os.chdir(root)
    try:
        return run_check(["."], cfg, enabled, jobs=1, use_cache=False), cfg, enabled
    finally:
        os.chdir(old)


def _fix(root: Path, config: dict[str, Any] | None = None, *, unsafe: bool = False,
         codes: set[str] | None = None) -> int:
    """Lint, fix, write back; returns the number of fixes applied."""
    result, cfg, enabled = _lint(root, config, codes)
    old = Path.cwd()
    os.chdir(root)
    try:
        outcome = fix_project(result, cfg, enabled, unsafe=unsafe, jobs=1)
        write_back(outcome.texts)
    finally:
        os.chdir(old)
    return outcome.fixed


def _counts(findings: list[Finding]) -> Counter[tuple[str, str]]:
    return Counter((f.path, f.code) for f in findings)


def check_fix(root: Path, files: dict[str, str], code: str, *, unsafe: bool = False,
              config: dict[str, Any] | None = None) -> dict[str, str]:
    """Apply the fixes for ``code``: its findings are gone, every other finding stays (by
    file and code: lines may move), and a second run changes nothing. Returns the texts."""
    write_files(root, files)
    before, _, _ = _lint(root, config)
    assert any(f.code == code for f in before.findings), before.findings
    fixed = _fix(root, config, unsafe=unsafe)
    assert fixed >= 1
    after, _, _ = _lint(root, config)
    assert not [f for f in after.findings if f.code == code], after.findings
    want = _counts([f for f in before.findings if f.code != code])
    assert _counts(after.findings) == want, (after.findings, before.findings)
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in files}
    assert _fix(root, config, unsafe=unsafe) == 0
    assert {rel: (root / rel).read_text(encoding="utf-8") for rel in files} == texts
    return texts


JUDGE_NO_TOOLS = """---
name: judge
description: Scores the draft against the rubric.
model: haiku
---
You are the judge.
"""


def test_el402_adds_a_read_only_tools_line(tmp_path: Path) -> None:
    out = check_fix(tmp_path, {".claude/agents/judge.md": JUDGE_NO_TOOLS}, "EL402")
    assert out[".claude/agents/judge.md"] == JUDGE_NO_TOOLS.replace(
        "model: haiku", "tools: Read, Grep, Glob\nmodel: haiku")


def test_el402_fills_an_empty_tools_line_and_keeps_crlf(tmp_path: Path) -> None:
    text = ("---\r\nname: checker-bot\r\ndescription: Runs after each attempt.\r\ntools:\r\n"
            "---\r\nYou are the strict evaluator of the loop. Give a score from 0 to 1.\r\n")
    rel = "agents/checker-bot.md"
    write_files(tmp_path, {})
    (tmp_path / "agents").mkdir()
    (tmp_path / rel).write_bytes(text.encode())
    before, _, _ = _lint(tmp_path)
    assert [f.code for f in before.findings] == ["EL402"]
    assert _fix(tmp_path) == 1
    assert (tmp_path / rel).read_bytes() == text.replace(
        "tools:\r\n", "tools: Read, Grep, Glob\r\n").encode()
    after, _, _ = _lint(tmp_path)
    assert after.findings == []


def test_el402_on_front_matter_strict_yaml_refuses(tmp_path: Path) -> None:
    text = ("---\nname: branch-checker\ndescription: Use this agent when: a branch is ready. "
            "Reviews the implemented code and gives a pass/fail verdict.\n---\n"
            "You are a strict reviewer.\n")
    out = check_fix(tmp_path, {".claude/agents/branch-checker.md": text}, "EL402")
    assert "\ntools: Read, Grep, Glob\n---\n" in out[".claude/agents/branch-checker.md"]


EVALUATOR_WRITES = """---
name: evaluator
description: Grades the implementer's work against the rubric.
tools: Read, Grep, Bash, Write
model: haiku
---
You are the evaluator.
"""


def test_el401_is_unsafe_and_drops_the_write_tools(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/evaluator.md": EVALUATOR_WRITES})
    assert _fix(tmp_path) == 0  # unsafe: not applied without --unsafe-fixes
    assert (tmp_path / ".claude/agents/evaluator.md").read_text() == EVALUATOR_WRITES
    out = check_fix(tmp_path, {".claude/agents/evaluator.md": EVALUATOR_WRITES}, "EL401",
                    unsafe=True)
    assert "\ntools: Read, Grep\nmodel: haiku\n" in out[".claude/agents/evaluator.md"]


def test_el401_rewrites_a_yaml_list_and_keeps_read_only_bash(tmp_path: Path) -> None:
    text = ("---\nname: evaluator\ndescription: Checks the sprint result.\nmodel: sonnet\n"
            "tools:\n  - Read\n  - Bash(git diff:*)\n  - mcp__github__create_issue\n  - Skill\n"
            "---\nCheck it.\n")
    out = check_fix(tmp_path, {"plugin/agents/evaluator.md": text}, "EL401", unsafe=True)
    assert out["plugin/agents/evaluator.md"] == (
        "---\nname: evaluator\ndescription: Checks the sprint result.\nmodel: sonnet\n"
        "tools: Read, Bash(git diff:*)\n---\nCheck it.\n")


def test_el401_completes_a_deny_list(tmp_path: Path) -> None:
    text = ("---\nname: critic\ndescription: Critiques the draft.\n"
            "disallowedTools: [Write, Edit]\n---\nCritique it.\n")
    out = check_fix(tmp_path, {".claude/agents/critic.md": text}, "EL401", unsafe=True)
    assert ("disallowedTools: Write, Edit, MultiEdit, NotebookEdit, Bash\n"
            in out[".claude/agents/critic.md"])


def test_el401_only_write_tools_leaves_the_read_only_set(tmp_path: Path) -> None:
    text = ("---\nname: judge\ndescription: Scores the change.\ntools: Bash, Write\n"
            "model: haiku\n---\nScore it.\n")
    out = check_fix(tmp_path, {".claude/agents/judge.md": text}, "EL401", unsafe=True)
    assert "\ntools: Read, Grep, Glob\n" in out[".claude/agents/judge.md"]


INHERIT = """---
name: evaluator
description: Grades each attempt.
tools: Read, Grep
model: "inherit"  # set by the template
---
Grade it.
"""


def test_el304_uses_the_configured_judge_model(tmp_path: Path) -> None:
    config = {"rules": {"EL304": {"judge_model": "haiku"}}}
    out = check_fix(tmp_path, {".claude/agents/evaluator.md": INHERIT}, "EL304", unsafe=True,
                    config=config)
    assert '\nmodel: "haiku"  # set by the template\n' in out[".claude/agents/evaluator.md"]


def test_el304_has_no_fix_without_a_judge_model(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/evaluator.md": INHERIT})
    result, _, _ = _lint(tmp_path)
    (finding,) = [f for f in result.findings if f.code == "EL304"]
    assert fix_for(finding, INHERIT) is None
    assert _fix(tmp_path, unsafe=True) == 0


LOOP = """import json
import anthropic
client = anthropic.Anthropic()

def judge(answer):
    r = client.messages.create(model="claude-haiku-4-5", max_tokens=10,
                               messages=[{"role": "user", "content": answer}])
    return r.content[0].text

def run(cases):
    with OPEN as fh:
        for case in cases:
            fh.write(json.dumps({"id": case, "verdict": judge(case)}) + "\\n")
"""


@pytest.mark.parametrize(("call", "fixed"), [
    ('open("results.jsonl", "w")', 'open("results.jsonl", "a")'),
    ("open('results.jsonl', mode='wt', encoding='utf-8')",
     "open('results.jsonl', mode='at', encoding='utf-8')"),
])
def test_el505_appends_instead_of_truncating(tmp_path: Path, call: str, fixed: str) -> None:
    text = LOOP.replace("OPEN", call)
    out = check_fix(tmp_path, {"loop.py": text}, "EL505")
    assert out["loop.py"] == text.replace(call, fixed)


def test_el505_fixer_reads_path_open_and_picks_the_call_at_the_column() -> None:
    text = 'a = open("log.txt", "w"); b = Path("results.jsonl").open("wb")\n'
    fix = fix_for(Finding("EL505", "m", "run.py", 1, 27), text)
    assert fix is not None and fix.safe
    assert apply_edits(text, fix.edits) == text.replace('"wb"', '"ab"')


@pytest.mark.parametrize("line", [
    'fh = open("results.jsonl", MODE)',
    'fh = open("results.jsonl", f"{MODE}")',
    'fh = open("results.jsonl", "r")',
    'Path("results.jsonl").write_text(body)',
    'fh = open("results.jsonl", "w"',  # no longer Python: libcst refuses, no fix, no crash
    'fh = io.open("words.jsonl", "r")',  # a path that starts with w is no mode
    'fh = open("results.jsonl", "wq")',
])
def test_el505_without_a_literal_w_mode_has_no_fix(line: str) -> None:
    assert fix_for(Finding("EL505", "m", "run.py", 1, 6), line + "\n") is None


@pytest.mark.parametrize(("rel", "line"), [
    ("prompts/judge.j2", "{% if output %}  {# evallint: ignore[EL901] #}"),
    ("prompts/judge.prompt.md", "<!-- evallint: ignore -->"),
    ("prompts/judge.prompt.md", "<!-- evallint: ignore[EL105] -- -->"),
    ("prompts/judge.prompt.md", "<!-- evallint: ignore[EL105] -- TODO: say why this is safe -->"),
])
def test_el904_has_no_fix_only_a_person_can_give_the_reason(tmp_path: Path, rel: str,
                                                             line: str) -> None:
    text = f"Grade <output>{{{{ output }}}}</output>.\n{line}\n"
    write_files(tmp_path, {rel: text})
    before, _, _ = _lint(tmp_path, codes={"EL904"})
    assert [f.code for f in before.findings] == ["EL904"]
    assert _fix(tmp_path, codes={"EL904"}, unsafe=True) == 0
    assert (tmp_path / rel).read_text() == text


@pytest.mark.parametrize(("rel", "text", "fixed"), [
    ("prompts/judge.j2", "Grade this answer: {{ output }}\n",
     "Grade this answer: <output>{{ output }}</output>\n"),
    ("prompts/evaluator.hbs", "Question: <q>{{input}}</q>\nDecide whether {{{response}}} fits.\n",
     "Question: <q>{{input}}</q>\nDecide whether <response>{{{response}}}</response> fits.\n"),
    ("prompts/judge.j2", "Grade this answer: {{- answer | trim -}}, now.\n",
     "Grade this answer: <answer>{{- answer | trim -}}</answer>, now.\n"),
    ("prompts/judge.txt", "Question: <q>{input}</q>\nSay whether {output} answers it.\n",
     "Question: <q>{input}</q>\nSay whether <output>{output}</output> answers it.\n"),
])
def test_el105_wraps_the_output_in_tags(tmp_path: Path, rel: str, text: str,
                                        fixed: str) -> None:
    write_files(tmp_path, {rel: text})
    assert _fix(tmp_path, codes={"EL105"}) == 0  # unsafe: the judge's prompt changes
    out = check_fix(tmp_path, {rel: text}, "EL105", unsafe=True)
    assert out[rel] == fixed


def test_a_suppressed_finding_is_not_fixed(tmp_path: Path) -> None:
    text = JUDGE_NO_TOOLS + "<!-- evallint: ignore-file[EL402] -- the harness sets tools -->\n"
    write_files(tmp_path, {".claude/agents/judge.md": text})
    result, _, _ = _lint(tmp_path)
    assert not [f for f in result.findings if f.code == "EL402"]
    assert _fix(tmp_path, unsafe=True) == 0
    assert (tmp_path / ".claude/agents/judge.md").read_text() == text


def test_deselected_rules_are_not_fixed(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": JUDGE_NO_TOOLS})
    assert _fix(tmp_path, codes={"EL304", "EL401"}) == 0
    assert (tmp_path / ".claude/agents/judge.md").read_text() == JUDGE_NO_TOOLS


def test_notebook_findings_get_no_fix() -> None:
    finding = Finding("EL505", "m", "nb.ipynb", 1, 1, cell=2)
    assert fix_for(finding, '{"cells": []}') is None


def test_rule_metadata_names_every_fixer_and_its_safety() -> None:
    from evallint.fixing import FIX_MODULES

    metas = load_rules()
    assert {c for c, m in metas.items() if m.fixable} == set(FIX_MODULES)
    assert {c: metas[c].fixable for c in FIX_MODULES} == {
        "EL105": "unsafe", "EL304": "unsafe", "EL401": "unsafe",
        "EL402": "safe", "EL505": "safe"}
    assert all(metas[c].autofix.strip() for c in FIX_MODULES)


def test_several_fixes_in_one_file_apply_in_one_run(tmp_path: Path) -> None:
    text = "Grade {{ answer }}\nand {{ output }}\n"
    write_files(tmp_path, {"prompts/judge.j2": text})
    before, _, _ = _lint(tmp_path, codes={"EL105"})
    assert [f.code for f in before.findings] == ["EL105", "EL105"]
    assert _fix(tmp_path, codes={"EL105"}, unsafe=True) == 2
    assert (tmp_path / "prompts/judge.j2").read_text() == (
        "Grade <answer>{{ answer }}</answer>\nand <output>{{ output }}</output>\n")


def test_a_fixer_that_meets_a_changed_file_offers_nothing() -> None:
    finding = Finding("EL402", "m", ".claude/agents/judge.md", 1, 1)
    assert fix_for(finding, "no front matter any more\n") is None
    assert fix_for(finding, JUDGE_NO_TOOLS.replace("model: haiku", "tools: Read")) is None
    assert fix_for(Finding("EL904", "m", "a.j2", 9, 1), "one line\n") is None
    assert fix_for(Finding("EL105", "m", "a.j2", 1, 3), "no braces\n") is None


def test_el105_tag_is_named_for_the_output_part_of_a_dotted_name() -> None:
    text = "Is {{ run.response.text | trim }} right?\n"
    fix = fix_for(Finding("EL105", "m", "prompts/judge.j2", 1, 7), text)
    assert fix is not None and not fix.safe
    assert apply_edits(text, fix.edits) == (
        "Is <response>{{ run.response.text | trim }}</response> right?\n")


def test_a_byte_order_mark_survives_the_fix(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    path = tmp_path / "prompts" / "judge.j2"
    path.write_bytes(b"\xef\xbb\xbfGrade this answer: {{ output }}\n")
    assert _fix(tmp_path, codes={"EL105"}, unsafe=True) == 1
    assert path.read_bytes() == b"\xef\xbb\xbfGrade this answer: <output>{{ output }}</output>\n"


def test_el505_module_open_takes_the_mode_not_the_path() -> None:
    text = 'fh = gzip.open("words.jsonl.gz", "wt")\n'
    fix = fix_for(Finding("EL505", "m", "run.py", 1, 6), text)
    assert fix is not None
    assert apply_edits(text, fix.edits) == 'fh = gzip.open("words.jsonl.gz", "at")\n'
