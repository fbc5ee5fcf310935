"""One tool table for every kind: an agent's tool list, a settings grant and a Python call's
tools are judged by the same EL401 parameters (toolcaps.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.registry import load_rules
from evallint.toolcaps import capability, writes
from tests.conftest import lint_tree, write_files

PARAMS = load_rules()["EL401"].params


@pytest.mark.parametrize(("name", "cap"), [
    ("Bash", "exec"), ("Write", "write"), ("KillShell", "control"), ("Read", "read"),
    ("bash_20250124", "exec"), ("text_editor_20250728", "edit"),
    ("code_interpreter", "exec"), ("code_interpreter_lookup", None),
    ("web_search_20250305", "network"), ("mcp__fs__write_file", "write"),
    ("mcp__fs__read_file", None), ("mcp__fs", None), ("save_report", "write"),
    ("lookup_docs", None),
])
def test_one_table_reads_every_tool_name(name: str, cap: str | None) -> None:
    assert capability(name, PARAMS) == cap


def test_extra_write_tools_from_config_count_for_every_kind() -> None:
    params = {**PARAMS, "write_tools": ["PublishPage"]}
    assert writes("PublishPage", params) and not writes("PublishPage", PARAMS)


AGENT = """---
name: judge
description: Scores the draft against the rubric.
tools: Read, {tool}
model: haiku
---
You are the judge. Score the draft.
"""

PY = """import anthropic
client = anthropic.Anthropic()


def judge(draft):
    return client.messages.create(
        model="claude-haiku-4-5", max_tokens=50,
        system="You are the judge. Score the response from 1 to 10.",
        tools=[{{"name": "{tool}", "description": "a tool",
                 "input_schema": {{"type": "object", "properties": {{}}}}}}],
        messages=[{{"role": "user", "content": draft}}])
"""


@pytest.mark.parametrize(("tool", "flagged"), [("Bash", True), ("save_notes", True),
                                               ("Grep", False), ("lookup_docs", False)])
def test_an_agent_and_a_python_judge_read_a_tool_alike(tmp_path: Path, tool: str,
                                                       flagged: bool) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": AGENT.format(tool=tool),
                           "judge.py": PY.format(tool=tool)})
    found = {f.path.rsplit("/", 1)[-1] for f in lint_tree(tmp_path, {"EL401"}).findings}
    assert found == ({"judge.md", "judge.py"} if flagged else set())
