"""EL401 from one check for every kind: agents and Python calls list their evaluators' tool
grants (``@grant_source``), and ``checks/tools.py`` words them alike."""

from __future__ import annotations

from pathlib import Path

from evallint.checks.agents import agent_grants
from evallint.checks.python_models import python_grants
from evallint.facts.toolgrants import SOURCES
from evallint.registry import load_checks
from tests.conftest import lint_tree, write_files

AGENT = "---\nname: grader\ndescription: Grades the draft.\ntools: Read, Bash, Write\n---\nGrade.\n"
DENY = ("---\nname: grader\ndescription: Grades the draft.\ndisallowedTools: [Write, Edit]\n"
        "---\nGrade.\n")
WRITER = ("---\nname: writer\ndescription: Writes the draft.\ntools: Read, Bash, Write\n"
          "---\nWrite.\n")
PYTHON = """\
import anthropic

client = anthropic.Anthropic()


def grade(answer):
    return client.messages.create(
        model="claude-haiku-4-5", max_tokens=9,
        tools=[{"name": "write_file", "input_schema": {}}, {"name": "lookup", "input_schema": {}}],
        system="You are a strict grader. Score the answer from 1 to 10.",
        messages=[{"role": "user", "content": answer}])
"""


def el401(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, {"EL401"})
    assert not result.tool_errors
    return sorted((f.path, f.line, f.message) for f in result.findings)


def test_every_kind_s_grants_are_one_check_s() -> None:
    load_checks()
    assert agent_grants in SOURCES and python_grants in SOURCES


def test_an_agent_and_a_python_call_read_alike(tmp_path: Path) -> None:
    found = el401(tmp_path, {".claude/agents/grader.md": AGENT, "judge.py": PYTHON})
    assert [(p, line) for p, line, _ in found] == [(".claude/agents/grader.md", 4),
                                                    ("judge.py", 7)]
    agent, call = (m for _, _, m in found)
    assert agent == ("evaluator agent 'grader' is given write/exec tools: 'Bash' runs any "
                     "command; 'Write' can write files; an evaluator should only read")
    assert call == ("the evaluator call at judge.py:7 is given write/exec tools: `write_file`; "
                    "an evaluator should only read")


def test_a_deny_list_without_an_allow_list_grants_what_it_leaves(tmp_path: Path) -> None:
    found = el401(tmp_path, {".claude/agents/grader.md": DENY})
    assert len(found) == 1
    path, line, message = found[0]
    assert (path, line) == (".claude/agents/grader.md", 4)
    assert "(no tools allow-list, and its disallowedTools deny-list leaves them)" in message
    assert "'MultiEdit' can edit files" in message and "'Bash' runs any command" in message
    assert "'Write'" not in message and "'Edit'" not in message


def test_a_generator_s_tools_are_not_reported(tmp_path: Path) -> None:
    assert el401(tmp_path, {".claude/agents/writer.md": WRITER}) == []
