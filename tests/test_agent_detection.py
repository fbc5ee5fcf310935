"""Agent definitions on real layouts: where they are found, how leniently their front matter is
read, which words make one a judge, and what each of its tools can do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evallint.checks.agents import capability, write_reason
from evallint.classify import classify, front_matter_keys, is_agent_definition
from evallint.config import Config, parse_config
from evallint.discovery import discover
from evallint.facts import Pos
from evallint.facts.agents import AgentFacts
from evallint.frontends.agents_front import (
    first_sentence,
    own_name,
    parse_agent,
    parse_tool,
)
from evallint.kinds import FileKind
from evallint.registry import load_rules
from evallint.roles import Role
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files

PARAMS = load_rules()["EL401"].params
AGENT_CODES = {"EL301", "EL302", "EL304", "EL401", "EL402", "EL403", "EL901"}

CATALOGUE_REVIEWER = """---
name: diff-inspector
description: "Use this agent to review code changes before they are merged."
tools: Read, Write, Edit, Bash, Glob
model: inherit
---

You are a careful code reviewer. Read the change and list what is wrong with it.
"""

# The description holds "when: ..." and an example dialogue with "user: ..." lines: strict YAML
# refuses it, Claude Code loads it.
UNQUOTED_COLONS = """---
name: change-reviewer
description: Use this agent when: a pull request is ready. It reviews the pull request.
Context: the user has finished a feature
user: "please look at my branch"
assistant: "I will start the change-reviewer agent"
model: inherit
---

Review the pull request and report problems by severity.
"""


def agent(text: str, rel: str = ".claude/agents/a.md") -> AgentFacts:
    return parse_agent(SourceFile(Path(rel), rel, text, text.encode()), Config())


def codes(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int]]:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, AGENT_CODES)
    return sorted((f.code, f.path, f.line) for f in result.findings)


# --------------------------------------------------------------------------- where agents live


@pytest.mark.parametrize(("rel", "head", "is_agent"), [
    ("categories/quality/diff-inspector.md", CATALOGUE_REVIEWER, True),
    ("plugins/ship/agents/checker.md", "---\nname: checker\ndescription: x\n---\n", True),
    (".claude/agents/nested/judge.md", "---\ndescription: x\n---\n", True),
    # a skill, wherever it lives, and slash commands are no agents
    ("server/agents/prompts/skills/graders/SKILL.md",
     "---\nname: graders\ndescription: How to write graders.\n---\n", False),
    ("plugins/x/skills/review/helper.md", "---\nname: r\ndescription: d\nmodel: haiku\n---\n",
     False),
    ("plugins/x/commands/review.md", "---\nname: r\ndescription: d\nmodel: haiku\n---\n", False),
    # but a bundle's own agents/ folder holds agents, even inside a skill
    ("skills/scanning/agents/auditor.md", "---\nname: auditor\ndescription: d\n---\n", True),
    # docs pages and blog posts keep their own keys
    ("docs/agents/judge.md", "---\ntitle: Judges\nname: judge\ndescription: d\n---\n", False),
    ("blog/judges.md", "---\nname: judges\ndescription: A post.\n---\n", False),
    ("notes/agents/README.md", "---\nname: r\ndescription: d\n---\n", False),
])
def test_agent_definitions_are_found_by_their_front_matter(rel: str, head: str,
                                                           is_agent: bool) -> None:
    assert is_agent_definition(rel, head) is is_agent
    assert (classify(rel, head) is FileKind.AGENT) is is_agent


def test_front_matter_keys_survive_unquoted_colons() -> None:
    assert front_matter_keys(UNQUOTED_COLONS) >= {"name", "description", "model"}


def test_a_catalogue_reviewer_with_write_tools_is_reported(tmp_path: Path) -> None:
    found = codes(tmp_path, {"categories/quality/diff-inspector.md": CATALOGUE_REVIEWER})
    assert found == [("EL304", "categories/quality/diff-inspector.md", 5),
                     ("EL401", "categories/quality/diff-inspector.md", 4)]


def _project(root: Path) -> None:
    """A repository whose own folder is named ``agents`` (like a public agents catalogue)."""
    (root / ".git").mkdir(parents=True)
    write_files(root, {
        "plugins/ship/agents/checker.md": "---\nname: checker\ndescription: d\n---\n",
        "plugins/ship/commands/go.md": "---\ndescription: Ship it.\n---\n",
        "plugins/ship/skills/tidy/SKILL.md": "---\nname: tidy\ndescription: d\n---\n",
        "plugins/ship/skills/tidy/references/style.md": "---\nname: style\ndescription: d\n---\n",
        "guide.md": "---\nname: guide\ndescription: How to install.\n---\n",
        "README.md": "# agents\n",
    })


def test_the_folder_evallint_starts_from_does_not_decide(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "agents"
    _project(root)

    def agents_seen(cwd: Path, arg: str) -> list[str]:
        monkeypatch.chdir(cwd)
        cfg = parse_config({}, source=None, root=cwd)
        cfg.respect_gitignore = False
        return [os.path.basename(os.path.dirname(os.path.dirname(t.abspath))) + "/" +
                os.path.basename(t.abspath) for t in discover([arg], cfg)
                if t.kind == FileKind.AGENT.value]

    inside = agents_seen(root, ".")
    assert inside == ["ship/checker.md"]
    assert agents_seen(tmp_path, "agents") == inside


# --------------------------------------------------------------------------- lenient front matter


def test_unquoted_colons_are_read_leniently() -> None:
    facts = agent(UNQUOTED_COLONS, "plugins/pr/agents/change-reviewer.md")
    assert facts.name == "change-reviewer"
    assert facts.model == "inherit" and facts.model_pos == Pos(7, 1)
    assert facts.description.startswith("Use this agent when: a pull request is ready.")
    assert 'user: "please look at my branch"' in facts.description  # a line of the example
    assert facts.tools is None
    assert facts.role.role is Role.EVALUATOR


def test_lenient_tools_keep_their_positions() -> None:
    text = ("---\nname: x\ndescription: Checks it: twice.\ntools: Read, Bash\n---\n")
    facts = agent(text)
    assert facts.tools is not None
    assert [(t.name, t.pos) for t in facts.tools] == [("Read", Pos(4, 8)), ("Bash", Pos(4, 14))]
    listed = agent("---\nname: x\ndescription: a: b\ntools:\n  - Read\n  - Edit\n---\n")
    assert listed.tools is not None
    assert [(t.name, t.pos) for t in listed.tools] == [("Read", Pos(5, 5)), ("Edit", Pos(6, 5))]
    flow = agent('---\nname: x\ndescription: a: b\ntools: ["Read", "Grep"]\n---\n')
    assert flow.tools is not None
    assert [(t.name, t.pos.line) for t in flow.tools] == [("Read", 4), ("Grep", 4)]


def test_unquoted_colons_give_findings_not_el901(tmp_path: Path) -> None:
    found = codes(tmp_path, {"plugins/pr/agents/change-reviewer.md": UNQUOTED_COLONS})
    assert found == [("EL304", "plugins/pr/agents/change-reviewer.md", 7),
                     ("EL402", "plugins/pr/agents/change-reviewer.md", 1)]


@pytest.mark.parametrize("front", [
    "name: judge\ntools: [Read\n",                 # an unclosed flow list
    "name: judge\ndescription: 'open quote: here\n",  # an unclosed quote
    "description: no name: here\nmodel: haiku\n",  # nothing names the agent
])
def test_broken_front_matter_stays_el901(tmp_path: Path, front: str) -> None:
    write_files(tmp_path, {".claude/agents/judge.md": f"---\n{front}---\nJudge it.\n"})
    result = lint_tree(tmp_path, {"EL901"})
    assert [f.code for f in result.findings] == ["EL901"]


# --------------------------------------------------------------------------- roles


def test_a_plugin_prefix_is_not_the_agents_own_name() -> None:
    assert own_name("plugins/load-review/agents/x.md", "load-review-perf-tuner") == "perf-tuner"
    assert own_name("plugins/load-review/agents/x.md", "load-review") == "load-review"
    assert own_name(".claude/agents/x.md", "claude-review") == "claude-review"


def test_builders_in_a_review_plugin_are_no_judges(tmp_path: Path) -> None:
    body = ("You are a latency specialist. Profile the service, tune caches and add load "
            "tests; rate each bottleneck by its cost and score the fixes by impact.\n")
    files = {
        "plugins/load-review/agents/perf-tuner.md":
            "---\nname: load-review-perf-tuner\ndescription: Tunes hot paths and caches.\n"
            f"model: inherit\n---\n\n{body}",
        "plugins/load-review/agents/test-writer.md":
            "---\nname: load-review-test-builder\ndescription: Writes load and unit tests.\n"
            "model: sonnet\n---\n\nYou are a test automation engineer.\n",
    }
    assert codes(tmp_path, files) == []


def test_a_reviewer_of_the_work_is_a_judge() -> None:
    facts = agent("---\nname: review\ndescription: Reviews the implemented code by severity.\n"
                  "model: inherit\n---\n\nYou are a senior code reviewer.\n")
    assert facts.role.role is Role.EVALUATOR


@pytest.mark.parametrize(("name", "desc"), [
    ("bot-auditor",
     "Use this agent when building chat bots, wiring webhooks or reviewing bot code."),
    ("backend-architect",  # the judging phrase is not what the agent is for
     "Expert backend architect for services and queues. Also does code review on request."),
    ("controls-auditor",
     "Use this agent to achieve compliance, implement controls and score audit readiness."),
])
def test_agents_that_make_the_work_are_no_judges(name: str, desc: str) -> None:
    facts = agent(f"---\nname: {name}\ndescription: '{desc}'\ntools: Read, Bash\n---\n"
                  "\nRate each control; keep a score of findings.\n")
    assert facts.role.role is Role.UNKNOWN, desc


def test_first_sentence_stops_before_examples() -> None:
    assert first_sentence("Reviews PRs. Then more.") == "Reviews PRs."
    assert first_sentence("Reviews PRs.\\n<example>x</example>") == "Reviews PRs."


# --------------------------------------------------------------------------- tools


@pytest.mark.parametrize(("tool", "writes"), [
    ("KillShell", False), ("BashOutput", False), ("TodoWrite", False), ("WebFetch", False),
    ("NotebookRead", False), ("SomeNewTool", False),
    ("Write", True), ("MultiEdit", True), ("Bash", True), ("Task", True), ("Skill", True),
])
def test_each_tool_is_judged_by_what_it_can_do(tool: str, writes: bool) -> None:
    ref = parse_tool(tool, Pos(1))
    assert ref is not None
    assert (write_reason(ref, PARAMS) is not None) is writes


def test_capability_table_and_extra_writers() -> None:
    assert capability("KillShell", PARAMS) == "control"
    assert capability("WebSearch", PARAMS) == "network"
    assert capability("Deployer", PARAMS) is None
    assert capability("Deployer", {**PARAMS, "write_tools": ["Deployer"]}) == "write"


def test_a_reader_with_shell_control_tools_is_clean(tmp_path: Path) -> None:
    files = {"plugins/dev/agents/code-reviewer.md":
             "---\nname: code-reviewer\ndescription: Reviews code for bugs.\n"
             "tools: Glob, Grep, Read, TodoWrite, WebSearch, KillShell, BashOutput\n"
             "model: sonnet\n---\n\nReview the code.\n"}
    assert codes(tmp_path, files) == []


# --------------------------------------------------------------------------- project relations


def test_catalogue_folders_are_no_teams(tmp_path: Path) -> None:
    judge = "---\nname: judge\ndescription: Grades answers.\ntools: Read\nmodel: sonnet\n---\n"
    writer = "---\nname: writer\ndescription: Writes answers.\ntools: Read\nmodel: sonnet\n---\n"
    assert codes(tmp_path / "a", {"catalog/misc/judge.md": judge,
                                  "catalog/misc/writer.md": writer}) == []
    assert codes(tmp_path / "b", {"team/agents/judge.md": judge,
                                  "team/agents/writer.md": writer}) == [
        ("EL301", "team/agents/judge.md", 5)]


def test_settings_reach_only_the_agents_the_project_loads(tmp_path: Path) -> None:
    files = {
        ".claude/settings.json": '{"permissions": {"allow": ["Bash(python3:*)"]}}',
        "catalog/quality/judge.md":
            "---\nname: judge\ndescription: Grades answers.\ntools: Read, Bash\n"
            "model: haiku\n---\n",
    }
    assert [c for c in codes(tmp_path, files) if c[0] == "EL403"] == []


def test_an_evaluator_of_tools_or_vendors_is_an_advisor() -> None:
    facts = agent("---\nname: stack-evaluator\ndescription: Use this agent when evaluating new "
                  "frameworks or hosting services for the team.\ntools: Read, Bash\n---\n")
    assert facts.role.role is Role.UNKNOWN
    assert facts.role.evidence == ["description: it judges 'evaluating new frameworks', "
                                   "not the work"]
    judge = agent("---\nname: evaluator\ndescription: Evaluates the generated code of each "
                  "framework port.\ntools: Read\n---\n")
    assert judge.role.role is Role.EVALUATOR


def test_scores_in_a_descriptions_examples_are_no_cue() -> None:
    text = ("---\nname: policy-checker\ndescription: Use this agent when handling privacy "
            "policies. Examples:\\n<example>user: rate my policy</example>\ntools: Read, Write\n"
            "---\n")
    assert agent(text).role.role is Role.UNKNOWN
    scored = text.replace("Examples:", "Gives each policy a score. Examples:")
    assert agent(scored).role.role is Role.EVALUATOR


def test_a_systems_auditor_is_no_judge() -> None:
    text = ("---\nname: infra-auditor\ndescription: Use this agent to audit cloud accounts, "
            "evaluate access risks and rate the severity of gaps.\ntools: Read, Grep\n"
            "model: inherit\n---\n\nChecklist:\n- Code review\n- Patch cadence\n"
            "- Code review findings from last quarter\n")
    assert agent(text, "catalogue/security/infra-auditor.md").role.role is Role.UNKNOWN
    reviewer = text.replace("audit cloud accounts", "review code changes for leaked secrets")
    assert agent(reviewer, "catalogue/security/infra-auditor.md").role.role is Role.EVALUATOR


def test_a_skill_under_a_prompts_folder_is_no_prompt_either() -> None:
    """A skill about evaluators kept under ``prompts/`` is instructions for an agent, not a
    judge prompt: it is read as instructions (prompts beside it still are prompts)."""
    head = "---\nname: graders\ndescription: How to write graders.\n---\n"
    assert classify("server/agents/prompts/skills/graders/SKILL.md", head) is \
        FileKind.INSTRUCTIONS
    assert classify("server/agents/prompts/judge.md", head) is FileKind.PROMPT


def test_an_agent_whose_description_says_it_evaluates_quality_is_a_judge(tmp_path: Path) -> None:
    """The description's purpose line ("Use this agent ... to evaluate overall text quality")
    makes a judge even when its first sentence is in another language."""
    agent = ("---\nname: prose-inspector\ndescription: |\n"
             "  文章の品質を分析するエージェント。\n"
             "  Use this agent after each chapter to evaluate overall text quality.\n"
             "model: inherit\ntools: Read, Write\n---\nInspect the chapter.\n")
    write_files(tmp_path, {".claude/agents/prose-inspector.md": agent})
    codes = {f.code for f in lint_tree(tmp_path, {"EL304", "EL401"}).findings}
    assert codes == {"EL304", "EL401"}
    write_files(tmp_path, {".claude/agents/prose-inspector.md": agent.replace(
        "to evaluate overall text quality", "to write the next chapter")})
    assert not lint_tree(tmp_path, {"EL304", "EL401"}).findings
