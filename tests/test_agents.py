"""Agent definitions and Claude settings: parsing, roles, tools, positions, project relations."""

from __future__ import annotations

from pathlib import Path

from evallint.checks.agents import write_reason
from evallint.config import Config
from evallint.facts import Pos
from evallint.facts.agents import AgentFacts
from evallint.frontends.agents_front import parse_agent, parse_settings, parse_tool
from evallint.registry import load_rules
from evallint.roles import Role
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files

PARAMS = load_rules()["EL401"].params


def agent(text: str, rel: str = ".claude/agents/a.md") -> AgentFacts:
    src = SourceFile(Path(rel), rel, text, text.encode())
    return parse_agent(src, Config())


def test_tools_comma_string_positions_and_brackets() -> None:
    facts = agent("---\nname: judge\ntools: Read, Bash(git log:*, x), Write\n---\nbody\n")
    assert facts.tools is not None
    assert [t.text for t in facts.tools] == ["Read", "Bash(git log:*, x)", "Write"]
    assert [t.pos for t in facts.tools] == [Pos(3, 8), Pos(3, 14), Pos(3, 34)]


def test_tools_yaml_list_positions() -> None:
    facts = agent("---\nname: judge\ntools:\n  - Read\n  - Edit\n---\n")
    assert facts.tools is not None
    assert [(t.name, t.pos.line) for t in facts.tools] == [("Read", 4), ("Edit", 5)]


def test_missing_tools_is_none_and_empty_is_empty() -> None:
    assert agent("---\nname: judge\n---\n").tools is None
    assert agent("---\nname: judge\ntools:\n---\n").tools == []


def test_role_evidence_is_kept() -> None:
    facts = agent("---\nname: helper\ndescription: x\n---\nIntro.\nYou are the strict judge.\n")
    assert facts.role.role is Role.EVALUATOR
    assert facts.role.evidence == ["body line 6: 'You are the strict judge'"]


def test_reviewer_needs_a_scoring_cue() -> None:
    plain = agent("---\nname: code-reviewer\ndescription: Looks at diffs for style.\n---\n")
    scoring = agent("---\nname: code-reviewer\ndescription: Gives each diff a score.\n---\n")
    assert plain.role.role is Role.UNKNOWN
    assert scoring.role.role is Role.EVALUATOR


def test_config_role_wins() -> None:
    from evallint.config import parse_config

    cfg = parse_config({"roles": {"**/helper.md": "evaluator"}}, source=None, root=Path.cwd())
    src = SourceFile(Path("a/agents/helper.md"), "a/agents/helper.md",
                     "---\nname: writer\n---\n", b"")
    facts = parse_agent(src, cfg)
    assert facts.role.role is Role.EVALUATOR and facts.role.explicit


def test_write_reason_classification() -> None:
    def reason(text: str) -> str | None:
        ref = parse_tool(text, Pos(1))
        assert ref is not None
        return write_reason(ref, PARAMS)

    assert reason("Read") is None
    assert reason("WebFetch") is None
    assert reason("Bash(git diff:*)") is None
    assert reason("Bash(git diff --stat)") is None
    assert reason("Bash(git commit:*)") is not None
    assert reason("Bash(lsof:*)") is not None  # 'ls' is a whole word, not a prefix
    assert reason("Bash") is not None
    assert reason("Edit(docs/**)") is not None
    assert reason("mcp__github__create_issue") is not None
    assert reason("mcp__github__get_issue") is None
    assert reason("mcp__github") is None  # a whole server: unknown statically


def test_invalid_front_matter_is_el901_at_the_line(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": "---\nname: judge\ntools: [Read\n---\n"})
    result = lint_tree(tmp_path, {"EL901"})
    assert [(f.code, f.line) for f in result.findings] == [("EL901", 4)]


def test_invalid_settings_json_is_el901(tmp_path: Path) -> None:
    write_files(tmp_path, {".claude/settings.json": '{\n  "permissions": {"allow": [}\n}\n'})
    result = lint_tree(tmp_path, {"EL901"})
    assert [(f.code, f.line, f.column) for f in result.findings] == [("EL901", 2, 29)]


def test_settings_entries_have_exact_positions() -> None:
    text = '{"permissions": {\n  "allow": ["Read",\n    "Bash(git commit:*)"],\n' \
           '  "defaultMode": "acceptEdits"}}'
    src = SourceFile(Path(".claude/settings.json"), ".claude/settings.json", text, b"")
    facts = parse_settings(src, Config())
    assert [(t.text, t.pos) for t in facts.allow] == [("Read", Pos(2, 13)),
                                                       ("Bash(git commit:*)", Pos(3, 5))]
    assert facts.default_mode == "acceptEdits" and facts.default_mode_pos == Pos(4, 3)
    assert facts.project_dir == "."


def test_generator_with_bash_and_readonly_judge_are_clean(tmp_path: Path) -> None:
    write_files(tmp_path, {
        ".claude/agents/implementer.md": "---\nname: implementer\ntools: Bash, Write\n---\n",
        ".claude/agents/judge.md": "---\nname: judge\ntools: Read, Grep\nmodel: haiku\n---\n",
        ".claude/settings.json": '{"permissions": {"allow": ["Bash(npm install:*)"]}}',
    })
    result = lint_tree(tmp_path, {"EL401", "EL402", "EL403", "EL304", "EL301", "EL302"})
    assert result.findings == []


def test_settings_apply_only_to_their_own_project(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "a/.claude/settings.json": '{"permissions": {"allow": ["Bash(git commit:*)"]}}',
        "b/.claude/agents/judge.md": "---\nname: judge\ntools: Read, Bash\n---\n",
    })
    result = lint_tree(tmp_path, {"EL403"})
    assert result.findings == []


def test_el401_message_names_the_evidence(tmp_path: Path) -> None:
    write_files(tmp_path,
                {".claude/agents/evaluator.md": "---\nname: evaluator\ntools: Bash\n---\n"})
    result = lint_tree(tmp_path, {"EL401"})
    [f] = result.findings
    assert f.evidence == ["agent name 'evaluator' (word 'evaluator')"]
    assert "'Bash' runs any command" in f.message


def test_an_agent_that_evaluates_people_or_markets_is_no_judge() -> None:
    for desc in ("Recruiting lead for sourcing, interview loops and candidate evaluation.",
                 "Evaluates market segments and pricing options; risk assessment.",
                 "Evaluate ROI on major decisions."):
        facts = agent(f"---\nname: helper\ndescription: '{desc}'\ntools: Read, Bash\n---\n")
        assert facts.role.role is Role.UNKNOWN, desc


def test_an_agent_that_evaluates_the_work_is_a_judge() -> None:
    facts = agent("---\nname: qa\ndescription: Scores the generated code against the spec.\n"
                  "tools: Read\n---\n")
    assert facts.role.role is Role.EVALUATOR
    assert facts.role.evidence[1] == "it judges 'Scores the generated code'"
