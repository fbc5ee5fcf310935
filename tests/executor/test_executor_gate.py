"""The lint gate and --dry-run: nothing is sent unless the loop is clean, and dry runs send
nothing at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evallint.executor.cases import validate_cases
from evallint.executor.errors import SpecError
from evallint.executor.plan import make_plan
from evallint.executor.spec import load_spec
from evallint.registry import load_rules
from tests.executor.conftest import EVALUATOR_PROMPT, invoke, write_loop
from tests.executor.messages_server import MessagesServer

CONTAMINATED = EVALUATOR_PROMPT.replace(
    "<input>", "Context the generator had:\n<context>{{ system_prompt }}</context>\n<input>")

_HAS_TEMPLATE_RULES = any(code.startswith("EL1") for code in load_rules())


@pytest.mark.xfail(not _HAS_TEMPLATE_RULES, strict=False,
                   reason="no EL1xx template rule has landed yet; the executor's own run-time "
                          "isolation check still refuses the run (see the next test)")
def test_gate_stops_contaminated_evaluator_with_findings(tmp_path: Path,
                                                        api_env: MessagesServer) -> None:
    spec = write_loop(tmp_path, evaluator_prompt=CONTAMINATED)
    result = invoke(spec)
    assert api_env.requests == []
    assert result.exit_code == 1
    lines = [ln for ln in result.stdout.splitlines() if " EL1" in ln]
    assert any("evaluator.prompt.md:" in ln for ln in lines), result.stdout
    assert "not started" in result.stderr


def test_contaminated_evaluator_never_starts(tmp_path: Path, api_env: MessagesServer) -> None:
    """Whatever the lint finds, the executor refuses an evaluator that sees more than
    input and output, before any request."""
    spec = write_loop(tmp_path, evaluator_prompt=CONTAMINATED)
    result = invoke(spec)
    assert result.exit_code in (1, 2)
    assert api_env.requests == []
    assert (tmp_path / "out" / "results.jsonl").exists() is False
    if result.exit_code == 2:
        assert "system_prompt" in result.stderr and "only input and output" in result.stderr


def test_lint_error_blocks_before_any_request(tmp_path: Path, api_env: MessagesServer) -> None:
    """An evaluator template the linter cannot parse is an EL901 error: exit 1, nothing sent."""
    broken = "## System\nYou grade answers.\n\n## User\n<output>{{ output </output>\n"
    spec = write_loop(tmp_path, evaluator_prompt=broken, evaluator_name="evaluator.j2")
    result = invoke(spec)
    assert result.exit_code == 1, result.stderr
    assert api_env.requests == []
    finding = next(ln for ln in result.stdout.splitlines() if " EL901 " in ln)
    path, line, col, _ = finding.split(":", 3)
    assert path.endswith("prompts/evaluator.j2") and line.isdigit() and col.isdigit()


def test_dry_run_renders_and_sends_nothing(tmp_path: Path, server: MessagesServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # not needed to render
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    spec = write_loop(tmp_path, cases=[{"id": "q1", "input": "What is 2+2?"}])
    result = invoke(spec, "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert server.requests == []
    assert "<question>\nWhat is 2+2?\n</question>" in result.stdout
    assert "<output>\n[the generator's final answer goes here]\n</output>" in result.stdout
    assert not (tmp_path / "out").exists()


def test_dry_run_of_the_shipped_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "loop" / "evallint.loop.yaml"
    result = invoke(fixture, "--dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "## generator (claude-sonnet-4-6) system" in result.stdout
    assert "## evaluator (claude-haiku-4-5) system" in result.stdout


@pytest.mark.parametrize(("spec_extra", "message"), [
    ({"pass_treshold": 0.9}, "unknown key 'pass_treshold'"),
    ({"pass_threshold": 85}, "pass_threshold must be in (0, 1]"),
    ({"max_attempts": 0}, "'max_attempts' must be between 1 and 50"),
    ({"evaluator": {"prompt": "prompts/generator.prompt.md", "model": "claude-haiku-4-5"}},
     "their own prompt files"),
])
def test_bad_specs_are_one_line_tool_errors(tmp_path: Path, api_env: MessagesServer,
                                            spec_extra: dict[str, Any], message: str) -> None:
    spec = write_loop(tmp_path, **spec_extra)
    result = invoke(spec)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert api_env.requests == []


def test_same_model_is_refused(tmp_path: Path, api_env: MessagesServer) -> None:
    prompt = EVALUATOR_PROMPT.replace("model: claude-haiku-4-5\n", "")
    spec = write_loop(tmp_path, evaluator_prompt=prompt,
                      evaluator={"prompt": "prompts/evaluator.prompt.md",
                                 "model": "claude-sonnet-4-6-20260101"})
    result = invoke(spec)
    assert api_env.requests == []
    assert result.exit_code in (1, 2)  # EL301 from the lint, or the executor's own check
    if result.exit_code == 1:
        assert " EL301 " in result.stdout
    else:
        assert "different (cheaper) model" in result.stderr


def test_model_named_twice_differently_is_refused(tmp_path: Path) -> None:
    spec = write_loop(tmp_path, evaluator={"prompt": "prompts/evaluator.prompt.md",
                                           "model": "claude-opus-4-8"})
    with pytest.raises(SpecError, match="name it once"):
        make_plan(load_spec(spec))


def test_missing_cases_file(tmp_path: Path) -> None:
    spec = write_loop(tmp_path)
    (tmp_path / "cases.jsonl").unlink()
    with pytest.raises(SpecError, match=r"cases\.jsonl: cases file not found"):
        validate_cases(load_spec(spec).cases)
    result = invoke(spec)
    assert result.exit_code in (1, 2)  # EL611 from the lint, or the executor's own check


def test_spec_errors_name_file_and_line(tmp_path: Path) -> None:
    spec = write_loop(tmp_path)
    text = spec.read_text().replace("max_attempts: 3", "max_attempts: 3\nconvergence:\n"
                                    "  window: 2\n  min_gian: 0.1")
    spec.write_text(text)
    result = invoke(spec)
    assert result.exit_code == 2
    line = text.splitlines().index("  min_gian: 0.1") + 1
    assert f"evallint.loop.yaml:{line}: unknown key 'convergence.min_gian'" in result.stderr


def test_missing_spec_file(tmp_path: Path) -> None:
    result = invoke(tmp_path / "nope.yaml")
    assert result.exit_code == 2 and "loop spec not found" in result.stderr
