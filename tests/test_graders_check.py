"""EL205 from one check for every framework: promptfoo rubrics, openai/evals model-graded specs
and Inspect scorers list what their graders read (``@grader_source``), and ``checks/graders.py``
decides on all of them by the scope of each read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evallint.checks.inspect_scorers import history_shown
from evallint.checks.openai_evals import spec_fields
from evallint.checks.promptfoo import rubric_reads
from evallint.facts.graderreads import SOURCES
from evallint.findings import Severity
from evallint.registry import load_checks
from tests.conftest import lint_tree, write_files


def promptfoo(name: str) -> str:
    return ("providers: [openai:gpt-4.1]\n"
            "defaultTest:\n  options: {provider: openai:gpt-4.1-mini}\n"
            "tests:\n"
            f"  - vars: {{q: hi, {name}: x}}\n"
            "    assert:\n"
            "      - type: llm-rubric\n"
            f"        value: 'Answers {{{{ q }}}}; see {{{{ {name} }}}}'\n")


def spec(name: str) -> str:
    return ("grade:\n  prompt: |-\n"
            f"    Task {{input}}; extra {{{name}}}; answer {{completion}}\n"
            "  input_outputs:\n    input: completion\n")


INSPECT = ("from inspect_ai.scorer import model_graded_qa\n\n"
           "SCORER = model_graded_qa(model='openai/gpt-4o-mini', include_history=True)\n")


def el205(tmp_path: Path, files: dict[str, str], config: dict[str, Any] | None = None
          ) -> list[tuple[str, int, Severity, str]]:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, {"EL205"}, config)
    assert not result.tool_errors
    return sorted((f.path, f.line, f.severity, f.message) for f in result.findings)


def test_every_framework_s_reads_are_one_check_s() -> None:
    load_checks()
    assert {rubric_reads, spec_fields, history_shown} <= set(SOURCES)


@pytest.mark.parametrize("name", ["chat_history", "scratchpad", "intermediate_steps"])
def test_a_signal_is_an_error_in_every_framework(tmp_path: Path, name: str) -> None:
    found = el205(tmp_path, {"promptfooconfig.yaml": promptfoo(name),
                             "registry/modelgraded/grade.yaml": spec(name)})
    assert [(p, sev) for p, _, sev, _ in found] == [
        ("promptfooconfig.yaml", Severity.ERROR),
        ("registry/modelgraded/grade.yaml", Severity.ERROR)]
    rubric, graded = (m for *_, m in found)
    assert rubric.startswith(f"the llm-rubric assertion grader's template renders '{name}' "
                             "(denied name ")
    assert graded.startswith(f"the model-graded spec 'grade' grader's template renders "
                             f"'{name}' (generator-context signal ")
    for message in (rubric, graded):
        assert message.endswith("beyond the task input, the output and the reference: the "
                                "judge sees generator-side context")


def test_an_unknown_name_is_a_test_variable_in_a_rubric_and_a_note_in_a_spec(
        tmp_path: Path) -> None:
    found = el205(tmp_path, {"promptfooconfig.yaml": promptfoo("audience"),
                             "registry/modelgraded/grade.yaml": spec("audience")})
    assert [(p, line, sev) for p, line, sev, _ in found] == [
        ("registry/modelgraded/grade.yaml", 3, Severity.NOTE)]
    assert found[0][3].endswith("; map it in input_outputs, declare it legitimate, or remove it")


def test_a_legitimate_declaration_makes_each_framework_s_error_a_note(tmp_path: Path) -> None:
    config = {"legitimate": [{"inputs": ["scratchpad"],
                              "reason": "the grader checks the working"}]}
    found = el205(tmp_path, {"promptfooconfig.yaml": promptfoo("scratchpad"),
                             "registry/modelgraded/grade.yaml": spec("scratchpad")}, config)
    assert [sev for *_, sev, _ in found] == [Severity.NOTE, Severity.NOTE]
    assert all(m.endswith("grader sees 'scratchpad' (declared legitimate: the grader checks "
                          "the working)") for *_, m in found)


def test_the_whole_history_is_a_note(tmp_path: Path) -> None:
    found = el205(tmp_path, {"evals/task.py": INSPECT})
    assert [(p, line, sev) for p, line, sev, _ in found] == [
        ("evals/task.py", 3, Severity.NOTE)]
    assert found[0][3].startswith("model_graded_qa(include_history=True) shows the grader the "
                                  "whole conversation")
