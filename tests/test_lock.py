"""The lock workflow: `evallint lock` pins, `evallint check` reports drift (EL610), re-lock."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from evallint.cli import main
from tests.conftest import write_files

JUDGE = ("---\nstep: evaluator\nmodel: claude-haiku-4-5\n---\n## System\nScore "
         "<output>{{ output }}</output> for <input>{{ input }}</input>.\n"
         'Reply as JSON: {"score": 0.0, "feedback": "..."}\n')
FILES = {
    "pyproject.toml": "[tool.evallint]\nselect = ['EL610']\n",
    "prompts/evaluator.prompt.md": JUDGE,
    "prompts/generator.prompt.md": "---\nstep: generator\n---\nAnswer {{ input }}\n",
    "opt/spec.yaml": "model: claude-sonnet-4-5\nmetric:\n  judge:\n    model: claude-haiku-4-5\n"
                     "    rubric: rubric.md\n    max_cost_usd: 1\n",
    "opt/rubric.md": "Score accuracy 0-1.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    write_files(tmp_path, FILES)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


def _check() -> tuple[int, str]:
    res = CliRunner().invoke(main, ["check", "--no-cache", "."])
    return res.exit_code, res.output


def test_lock_pins_evaluator_prompts_and_rubrics(repo: Path) -> None:
    res = CliRunner().invoke(main, ["lock"])
    assert res.exit_code == 0, res.output
    data = yaml.safe_load((repo / "evallint.lock").read_text())
    assert sorted(data["files"]) == ["opt/rubric.md", "prompts/evaluator.prompt.md"]
    assert data["files"]["prompts/evaluator.prompt.md"]["judge_model"] == "claude-haiku-4-5"
    assert data["files"]["opt/rubric.md"]["kind"] == "rubric"
    first = (repo / "evallint.lock").read_text()
    CliRunner().invoke(main, ["lock"])
    assert (repo / "evallint.lock").read_text() == first  # stable output


def test_drift_is_reported_and_relock_approves_it(repo: Path) -> None:
    assert CliRunner().invoke(main, ["lock"]).exit_code == 0
    assert _check()[0] == 0
    (repo / "opt/rubric.md").write_text("Score accuracy 0-1, be lenient.\n")
    code, out = _check()
    assert code == 1
    assert "opt/rubric.md:1:1: EL610" in out and "evallint lock" in out
    assert CliRunner().invoke(main, ["lock", "--check"]).exit_code == 1
    assert CliRunner().invoke(main, ["lock"]).exit_code == 0
    assert _check()[0] == 0
    assert CliRunner().invoke(main, ["lock", "--check"]).exit_code == 0


def test_missing_pinned_file_is_reported_on_the_lock(repo: Path) -> None:
    assert CliRunner().invoke(main, ["lock"]).exit_code == 0
    (repo / "opt/rubric.md").unlink()
    code, out = _check()
    assert code == 1
    assert "evallint.lock:5:3: EL610" in out and "missing" in out


def test_judge_model_change_is_reported(repo: Path) -> None:
    assert CliRunner().invoke(main, ["lock"]).exit_code == 0
    spec = repo / "opt/spec.yaml"
    spec.write_text(spec.read_text().replace("claude-haiku-4-5", "claude-sonnet-4-5"))
    code, out = _check()
    assert code == 1 and "judge model of 'opt/rubric.md' changed" in out


def test_no_lock_file_means_nothing_pinned(repo: Path) -> None:
    assert _check()[0] == 0
    assert CliRunner().invoke(main, ["lock", "--check"]).exit_code == 1
