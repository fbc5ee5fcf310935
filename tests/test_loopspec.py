"""Loop specs: the three dialects, the executor's demo loop, path detection, EL611."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.facts.loopspec import looks_like_path
from tests.conftest import lint_tree, write_files

ROOT = Path(__file__).resolve().parents[1]
SPEC_CODES = {"EL301", "EL302", "EL603", "EL604", "EL605", "EL606", "EL607", "EL608", "EL609",
              "EL611"}


@pytest.mark.skipif(not (ROOT / "fixtures/loop/evallint.loop.yaml").is_file(),
                    reason="the executor's demo loop is not in this checkout")
def test_executor_demo_loop_is_clean() -> None:
    result = lint_tree(ROOT, SPEC_CODES, paths=["fixtures/loop"])
    assert result.findings == []


@pytest.mark.parametrize(("value", "is_path"), [
    ("prompts/judge.md", True), ("rubric.yaml", True), ("rubrics/", True),
    ("Score each item for accuracy.", False), ("a\nb.md", False), ("", False), (3, False),
])
def test_looks_like_path(value: object, is_path: bool) -> None:
    assert looks_like_path(value) is is_path


def test_non_loop_pipeline_config_is_ignored(tmp_path: Path) -> None:
    write_files(tmp_path, {"pipeline.config.yaml": "stages: [lint, test]\nmax_attempts: 99\n"})
    assert lint_tree(tmp_path, SPEC_CODES).findings == []


def test_aiwg_nested_roles(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "pipeline.config.yaml": "eval_config:\n  generator: {prompt: p/g.md, model: gpt-4o}\n"
                                "  evaluator: {prompt: p/g.md, model: gpt-4o-mini}\n"
                                "  max_cost_usd: 2\n",
        "p/g.md": "x\n"})
    result = lint_tree(tmp_path, SPEC_CODES)
    assert [(f.code, f.line) for f in result.findings] == [("EL605", 3)]


def test_bool_threshold_and_attempts_are_reported(tmp_path: Path) -> None:
    write_files(tmp_path, {"x.loop.yaml": "generator: {}\nevaluator: {}\npass_threshold: true\n"
                                          "max_attempts: 2.5\nmax_cost_usd: 1\n"})
    result = lint_tree(tmp_path, SPEC_CODES)
    assert [(f.code, f.line) for f in result.findings] == [("EL603", 3), ("EL604", 4)]


def test_missing_files_are_relative_to_the_spec(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "loops/a.loop.yaml": "generator: {prompt: ../p/g.md}\nevaluator: {prompt: e.md}\n"
                             "cases: cases.jsonl\nmax_cost_usd: 1\n",
        "p/g.md": "x\n", "loops/cases.jsonl": "{}\n"})
    result = lint_tree(tmp_path, {"EL611"})
    assert [(f.line, "e.md" in f.message) for f in result.findings] == [(2, True)]


def test_invalid_spec_yaml_is_el901(tmp_path: Path) -> None:
    write_files(tmp_path, {"x.loop.yaml": "generator:\n  prompt: [a\n"})
    result = lint_tree(tmp_path, {"EL901"})
    assert [f.code for f in result.findings] == ["EL901"]
