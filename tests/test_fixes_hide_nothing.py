"""Fixes never hide a problem.

For every registered fixer, its fix (safe or unsafe) applied to each invalid example of its rule
(``tests.invalid`` of rules/ELnnn.yaml, as tests/test_rule_examples.py reads them) must make the
finding go away because the problem is gone: no suppression comment is added or changed, no
to-do placeholder is written, the suppression rules (EL902-EL904) find nothing new, and with every
suppression comment switched off the finding is still gone.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import evallint.fixes
from evallint import fixing
from evallint.findings import Finding
from evallint.fixing import FIX_MODULES, Fix, TextEdit, apply_fixes, fix_for, line_offsets
from evallint.registry import load_rules
from evallint.suppress import TODO_MARKER, placeholder, scan
from tests.conftest import lint_tree, write_files

METAS = load_rules()
SUPPRESSION_RULES = {"EL902", "EL903", "EL904"}
# Parameters a fixer needs before it offers anything (EL304 writes the configured judge model).
FIX_PARAMS: dict[str, dict[str, Any]] = {"EL304": {"judge_model": "haiku"}}


def _config(code: str, example: dict[str, Any]) -> dict[str, Any] | None:
    config = dict(example.get("config") or {})
    if code in FIX_PARAMS:
        rules = dict(config.get("rules") or {})
        rules[code] = {**(rules.get(code) or {}), **FIX_PARAMS[code]}
        config["rules"] = rules
    return config or None


def test_every_fixer_module_is_listed_and_registers_only_listed_codes() -> None:
    """The registry a fix is looked up in is what the test below walks: a fixer registered
    under a code missing from FIX_MODULES would escape it (and never load in a real run)."""
    for info in pkgutil.iter_modules(evallint.fixes.__path__):
        importlib.import_module(f"evallint.fixes.{info.name}")
    assert set(fixing._FIXERS) == set(FIX_MODULES)
    assert set(FIX_MODULES.values()) <= {i.name for i in pkgutil.iter_modules(
        evallint.fixes.__path__)}
    assert "EL904" not in fixing.fixable_codes()


def _said(root: Path, files: dict[str, Any]) -> tuple[Counter[Any], int]:
    """Every suppression comment (codes, scope, reason) and every to-do marker in the files."""
    comments: Counter[Any] = Counter()
    markers = 0
    for rel in files:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        comments.update((rel, s.codes, s.whole_file, s.reason) for s in scan(text))
        markers += len(TODO_MARKER.findall(text))
    return comments, markers


def _switch_off_suppressions(root: Path, files: dict[str, Any]) -> None:
    for rel in files:
        path = root / rel
        data = path.read_bytes()
        path.write_bytes(data.replace(b"evallint:", b"evallint-off:"))


def _fix_once(root: Path, hits: list[Finding]) -> int:
    """Apply every fix (safe and unsafe) of ``hits`` once, as one pass of --fix; returns how
    many were applied."""
    by_path: dict[str, list[Fix]] = {}
    for f in hits:
        try:
            text = (root / f.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        fix = fix_for(f, text)
        if fix is not None:
            by_path.setdefault(f.path, []).append(fix)
    applied = 0
    for rel, fixes in by_path.items():
        path = root / rel
        new, taken = apply_fixes(path.read_text(encoding="utf-8"), fixes)
        path.write_text(new, encoding="utf-8")
        applied += len(taken)
    return applied


@pytest.mark.parametrize("code", sorted(FIX_MODULES))
def test_each_fix_removes_the_problem_not_the_finding(code: str, tmp_path: Path) -> None:
    examples = METAS[code].tests.get("invalid") or []
    fixed_any = False
    for i, example in enumerate(examples):
        name = f"{code} invalid example {i} ({example.get('name', '')})"
        files: dict[str, Any] = example["files"]
        config = _config(code, example)
        enabled = {code, *example.get("enable", [])}
        root = tmp_path / f"case{i}"
        write_files(root, files)
        before = lint_tree(root, enabled | SUPPRESSION_RULES, config)
        hits = [f for f in before.findings if f.code == code]
        assert hits, f"{name}: the rule does not fire"
        comments, markers = _said(root, files)

        applied = _fix_once(root, hits)
        if not applied:
            continue  # no fix for this shape (EL304 without judge_model, EL105 in Python)
        fixed_any = True
        after = lint_tree(root, enabled | SUPPRESSION_RULES, config)
        assert not after.tool_errors, (name, after.tool_errors)

        # nothing new for the suppression rules, no suppression added or changed, no to-do
        def quiet(findings: list[Finding]) -> Counter[Any]:
            return Counter((f.path, f.code) for f in findings if f.code in SUPPRESSION_RULES)

        assert quiet(after.findings) - quiet(before.findings) == Counter(), (name, after.findings)
        now_comments, now_markers = _said(root, files)
        assert now_comments == comments, f"{name}: the fix touched a suppression comment"
        assert now_markers <= markers, f"{name}: the fix wrote a to-do placeholder"

        # with every suppression comment switched off, the fixed findings are still gone
        _switch_off_suppressions(root, files)
        bare_after = [f for f in lint_tree(root, enabled, config).findings if f.code == code]
        original = tmp_path / f"orig{i}"
        write_files(original, files)
        _switch_off_suppressions(original, files)
        bare_before = [f for f in lint_tree(original, enabled, config).findings
                       if f.code == code]
        assert len(bare_after) <= len(bare_before) - applied, (name, bare_before, bare_after)
    assert fixed_any, f"{code}: no invalid example of the rule gets a fix"


# ------------------------------------------------------------------ placeholders are EL904


@pytest.mark.parametrize("reason", [
    "", "-", "...", "?", "TODO", "TODO: say why this is safe", "todo: later", "FIXME(ana)",
    "XXX", "TBD", "say why", "why this is safe", "reason", "<reason>", "add a reason here",
    "Reason goes here", "your reason", "[why]", "n/a", "none", "explain why it is ok",
])
def test_a_placeholder_is_no_reason(reason: str) -> None:
    assert placeholder(reason)
    (s,) = scan(f"x = 1  # evallint: ignore[EL201] -- {reason}\n")
    assert s.reason == ""


@pytest.mark.parametrize("reason", [
    "closed by the caller", "legacy", "reviewed", "ok", "typo: letter O",
    "why: the judge compares against the brief", "reason: the caller strips it",
    "the caller closes it (TODO: move to config)", "correctness judge, reviewed in #412",
])
def test_a_real_reason_stays(reason: str) -> None:
    assert not placeholder(reason)
    (s,) = scan(f"x = 1  # evallint: ignore[EL201] -- {reason}\n")
    assert s.reason == reason


def test_the_old_placeholder_fix_output_is_still_reported(tmp_path: Path) -> None:
    """What the EL904 fix used to write (``-- TODO: say why this is safe``) satisfies nothing."""
    write_files(tmp_path, {"prompts/judge.j2":
                           "{% if output %}  {# evallint: ignore[EL901] -- TODO: say why this is "
                           "safe #}\n"})
    result = lint_tree(tmp_path, {"EL904"})
    assert [(f.code, f.line) for f in result.findings] == [("EL904", 1)]
    (finding,) = result.findings
    assert fix_for(finding, (tmp_path / "prompts/judge.j2").read_text()) is None


# ------------------------------------------------------------------ the guard in fix_for


def _with_fixer(monkeypatch: pytest.MonkeyPatch, edit: Any) -> Finding:
    """Register a fixer for EL505 (for this test only) that makes ``edit(text)``."""
    monkeypatch.setitem(fixing._FIXERS, "EL505", lambda f, text: Fix(
        "EL505", "test", True, (edit(text),)))
    return Finding("EL505", "m", "run.py", 1, 1)


def _end_of_line(text: str, new: str) -> TextEdit:
    end = text.index("\n")
    return TextEdit(end, end, new)


@pytest.mark.parametrize("new", [
    "  # evallint: ignore[EL505] -- the results are rewritten on purpose",  # a suppression
    "  # TODO: append instead",  # a placeholder for a decision
    "  # FIXME",
])
def test_a_fix_that_silences_is_refused(monkeypatch: pytest.MonkeyPatch, new: str) -> None:
    finding = _with_fixer(monkeypatch, lambda text: _end_of_line(text, new))
    assert fix_for(finding, 'fh = open("results.jsonl", "w")\n') is None


def test_a_fix_that_fills_in_or_changes_a_reason_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = 'fh = open("results.jsonl", "w")  # evallint: ignore[EL505]\n'
    finding = _with_fixer(monkeypatch, lambda t: _end_of_line(t, " -- safe by design"))
    assert fix_for(finding, text) is None
    text = 'fh = open("results.jsonl", "w")  # evallint: ignore[EL505] -- old\n'
    finding = _with_fixer(monkeypatch, lambda t: TextEdit(t.index("EL505]"), t.index("]"),
                                                          "EL5"))
    assert fix_for(finding, text) is None


def test_a_fix_may_keep_what_the_file_already_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix that rewrites a line keeps its comment (suppression or TODO) as it was."""
    text = 'fh = open("results.jsonl", "w")  # TODO: rotate  # evallint: ignore[EL201] -- ok\n'

    def rewrite(t: str) -> TextEdit:
        starts = line_offsets(t)
        return TextEdit(starts[0], starts[1] - 1, t[:starts[1] - 1].replace('"w"', '"a"'))

    finding = _with_fixer(monkeypatch, rewrite)
    fix = fix_for(finding, text)
    assert fix is not None and fix.edits[0].new_text.startswith('fh = open("results.jsonl", "a")')
