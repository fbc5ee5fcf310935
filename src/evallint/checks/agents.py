"""I4/I5 for Claude Code sub-agents: evaluator tools, implicit tools, inherited or shared models.

Roles matter: a generator agent with Bash is how work gets done; the same grant on the agent
that grades the work lets the judge change what it is judging.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from evallint.facts.agents import AgentFacts, SettingsFacts, ToolRef
from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.facts.toolgrants import ToolGrant, grant_source
from evallint.findings import Finding, Related
from evallint.kinds import FileKind
from evallint.registry import Context, Project, file_check, project_check
from evallint.roles import PLAN_HEADS, name_tokens
from evallint.toolcaps import VERBS, capability, reported

CORE_WRITE = ("Write", "Edit", "MultiEdit", "NotebookEdit", "Bash")
_ALIASES = {"sonnet": "claude-sonnet", "opus": "claude-opus", "haiku": "claude-haiku"}


def write_reason(tool: ToolRef, params: dict[str, Any]) -> str | None:
    """Why ``tool`` can write or execute, or None when it cannot (or is not known to)."""
    name = tool.name
    if name == "*":
        return "'*' grants every tool"
    cap = capability(name, params)
    if cap is None or cap not in reported(params):
        return None
    if name.lower().startswith("mcp__"):
        words = {str(w).lower() for w in params.get("mcp_write_words", [])}
        hit = set(name_tokens(name.split("__")[-1])) & words
        return f"MCP tool '{name}' ({sorted(hit)[0]})"
    if cap == "exec" and tool.spec is not None:
        return None if _read_only(tool, params) else f"'{tool.text}' runs commands"
    if cap == "exec":
        return f"'{name}' runs any command"
    return f"'{tool.text}' {VERBS.get(cap, 'can write or execute')}"


def _read_only(tool: ToolRef, params: dict[str, Any]) -> bool:
    """A ``Bash(...)`` grant limited to a command that only reads and prints whatever its
    arguments (``readonly_commands``), unless the grant names one of the options that make
    that command write a file (``readonly_unless``: ``sort -o``, ``git log --output``)."""
    command = _command(tool)
    if not command:
        return False
    for c in (" ".join(str(c).split()) for c in params.get("readonly_commands", [])):
        if command == c or command.startswith(c + " "):
            writers = (params.get("readonly_unless") or {}).get(c) or []
            words = (tool.spec or "").replace(":", " ").replace("=", " ").split()
            return not any(str(w) in words for w in writers)
    return False


def _evidence(facts: AgentFacts) -> list[str]:
    return list(facts.role.evidence)


def _who(facts: AgentFacts) -> str:
    return f"evaluator agent '{facts.name or PurePosixPath(facts.path).stem}'"


@grant_source
def agent_grants(project: Project, ctx: Context) -> Iterator[ToolGrant]:
    """An evaluator agent's write/exec tools: those its ``tools:`` allow-list names, or with
    no allow-list, those its ``disallowedTools:`` deny-list leaves."""
    params = ctx.params("EL401")
    for facts in project.of_kind(FileKind.AGENT):
        if not isinstance(facts, AgentFacts) or not facts.role.is_evaluator:
            continue
        if facts.tools:
            reasons = tuple(r for t in facts.tools if (r := write_reason(t, params)))
            yield ToolGrant(_who(facts), facts.path, facts.tools_pos, reasons,
                            evidence=tuple(_evidence(facts)))
        elif facts.disallowed is not None and facts.tools is None:
            denied = {t.name for t in facts.disallowed if t.spec is None}
            yield ToolGrant(
                _who(facts), facts.path, facts.disallowed_pos,
                tuple(r for t in CORE_WRITE if t not in denied
                      and (r := write_reason(ToolRef(t, None, facts.front_matter_pos), params))),
                how=" (no tools allow-list, and its disallowedTools deny-list leaves them)",
                evidence=tuple(_evidence(facts)))


@file_check("EL402", "EL304", kinds=[FileKind.AGENT])
def evaluator_agent(facts: AgentFacts, ctx: Context) -> Iterator[Finding]:
    """An evaluator agent's implicit tools and inherited model, from its own front matter
    (its write/exec tools are EL401's: :func:`agent_grants`)."""
    if not facts.role.is_evaluator:
        return
    who = _who(facts)
    listed = bool(facts.tools) or (facts.disallowed is not None and facts.tools is None)
    if not listed:  # neither list: every tool of the session
        what = "an empty 'tools:' line" if facts.tools == [] else "no 'tools:' line"
        yield ctx.finding(
            "EL402", facts.path, facts.front_matter_pos,
            f"{who} has {what}, so it inherits every tool of the session (Bash, Write, "
            "Edit, MCP tools); list read-only tools explicitly", evidence=_evidence(facts))
    if facts.model is not None and facts.model.lower() == "inherit":
        # The configured judge model (if any) travels in the finding: --fix and the editor
        # server offer it as the replacement without reading the config again.
        judge = str(ctx.params("EL304").get("judge_model") or "").strip()
        yield ctx.finding(
            "EL304", facts.path, facts.model_pos,
            f"{who} has 'model: inherit': it runs as whatever model the main conversation "
            "uses, which is the model that produced the work; name a different, cheaper model",
            evidence=_evidence(facts), fix=f"model: {judge}" if judge else None)


def agent_model(model: str) -> str:
    """Claude Code aliases (``sonnet``) as comparable ids (``claude-sonnet``)."""
    return _ALIASES.get(model.strip().lower(), model.strip())


@pair_source
def agent_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """An evaluator agent and each generating agent of its folder (agents of one folder form
    one team), when both name a model (``inherit`` is EL304's)."""
    by_dir: dict[str, list[AgentFacts]] = {}
    for f in project.of_kind(FileKind.AGENT):
        if (isinstance(f, AgentFacts) and f.model and f.model.lower() != "inherit"
                and is_team_folder(f.path)):
            by_dir.setdefault(str(PurePosixPath(f.path).parent), []).append(f)
    for agents in by_dir.values():
        gens = [a for a in agents if a.role.is_generator]
        # A planner writes the spec the makers follow; where the team has a maker too, the
        # judge grades the maker's work, not the plan (planner, generator, evaluator).
        makers = [a for a in gens if not _plans(a)]
        gens = makers or gens
        for ev in (a for a in agents if a.role.is_evaluator):
            assert ev.model is not None
            end = ModelEnd(f"evaluator agent '{ev.name}'", ev.path,
                           ev.model_pos or ev.front_matter_pos, agent_model(ev.model), ev.model)
            for g in gens:
                assert g.model is not None
                yield ModelPair(
                    end, ModelEnd(f"generating agent '{g.name}'", g.path,
                                  g.model_pos or g.front_matter_pos, agent_model(g.model),
                                  g.model),
                    key=ev.path, related=(_rel(g, "the generating agent's model"),),
                    evidence=tuple(ev.role.evidence + g.role.evidence))


def _plans(agent: AgentFacts) -> bool:
    """An agent named for planning or routing (``planner``, ``task-router``)."""
    tokens = name_tokens(agent.name or PurePosixPath(agent.path).stem)
    return bool(tokens) and tokens[-1] in PLAN_HEADS


def is_team_folder(path: str) -> bool:
    """Whether the agent's folder is one team: ``.claude/agents/`` or a plugin's ``agents/``
    are deployed together; a catalogue's category folder (``categories/quality/``) only lists
    agents side by side that no one runs as one loop."""
    return PurePosixPath(path).parent.name.lower() == "agents"


def loaded_by(agent_path: str, project_dir: str) -> bool:
    """Whether Claude Code, run in ``project_dir``, loads this agent: it reads the project's
    ``.claude/agents/``; a plugin's or a catalogue's agent files in the same tree run elsewhere,
    under the settings of the project that installs them."""
    folder = "" if project_dir in ("", ".") else project_dir.rstrip("/") + "/"
    return agent_path.startswith(folder + ".claude/agents/")


def _rel(a: AgentFacts, message: str) -> Related:
    p = a.model_pos or a.front_matter_pos
    return Related(a.path, p.line, p.column, message)


def _effective(agent: AgentFacts) -> set[str] | None:
    """Tool names the agent may use; None means every tool (minus ``denied`` below)."""
    if agent.tools:
        if any(t.name == "*" for t in agent.tools):
            return None
        return {t.name for t in agent.tools}
    return None


@project_check("EL403")
def project_permissions(project: Project, ctx: Context) -> Iterator[Finding]:
    """Project allow-rules that pre-approve write/exec tools an evaluator agent can call."""
    params = ctx.params("EL401")
    params = {**params, **ctx.params("EL403")}
    evaluators = [f for f in project.of_kind(FileKind.AGENT)
                  if isinstance(f, AgentFacts) and f.role.is_evaluator]
    for settings in project.of_kind(FileKind.CLAUDE_SETTINGS):
        if not isinstance(settings, SettingsFacts):
            continue
        mine = [a for a in evaluators if loaded_by(a.path, settings.project_dir)]
        if not mine:
            continue
        for entry in settings.allow:
            reason = write_reason(entry, params)
            if reason is None or _is_check_command(entry, params):
                continue
            users = [a for a in mine if _grants(a, entry.name)]
            if users:
                names = ", ".join(f"'{a.name}'" for a in users)
                agents = "agent" if len(users) == 1 else "agents"
                yield ctx.finding(
                    "EL403", settings.path, entry.pos,
                    f"project permission '{entry.text}' pre-approves a write/exec action for "
                    f"evaluator {agents} {names}, which can use {entry.name}: {reason}",
                    related=[_rel_tools(a) for a in users],
                    evidence=[e for a in users for e in a.role.evidence])
        mode = (settings.default_mode or "").strip()
        if mode in ("bypassPermissions", "acceptEdits"):
            wanted: tuple[str, ...] = ("Write", "Edit", "MultiEdit", "NotebookEdit")
            if mode == "bypassPermissions":
                wanted = CORE_WRITE
            users = [a for a in mine if any(_grants(a, t) for t in wanted)]
            if users and settings.default_mode_pos is not None:
                names = ", ".join(f"'{a.name}'" for a in users)
                yield ctx.finding(
                    "EL403", settings.path, settings.default_mode_pos,
                    f"defaultMode '{mode}' approves write/exec actions without asking, for "
                    f"evaluator agent {names} too", related=[_rel_tools(a) for a in users])


def _command(tool: ToolRef) -> str:
    """``Bash(git commit:*)`` / ``Bash(git commit*)`` -> ``git commit``."""
    return " ".join((tool.spec or "").split(":")[0].replace("*", " ").split())


def _is_check_command(tool: ToolRef, params: dict[str, Any]) -> bool:
    """A Bash grant that runs the project's own checks (tests, linters): what an evaluator's
    Bash is for. EL401 already reports the Bash grant; EL403 reports what goes beyond it."""
    if tool.name != "Bash" or tool.spec is None:
        return False
    cmd = _command(tool)
    for prefix in (" ".join(str(p).split()) for p in params.get("runner_prefixes", [])):
        if prefix and cmd.startswith(prefix + " "):
            cmd = cmd[len(prefix) + 1:]  # ``npx tsc``, ``uv run pytest``: the check itself
            break
    cmd = cmd.removeprefix("./")  # ``./gradlew test``: the project's wrapper script
    checks = [" ".join(str(c).split()) for c in params.get("check_commands", [])]
    return bool(cmd) and any(cmd == c or cmd.startswith(c + " ") for c in checks)


def _grants(agent: AgentFacts, tool: str) -> bool:
    eff = _effective(agent)
    if eff is None:
        denied = {t.name for t in agent.disallowed or [] if t.spec is None}
        return tool not in denied
    return tool in eff


def _rel_tools(a: AgentFacts) -> Related:
    p = a.tools_pos or a.front_matter_pos
    return Related(a.path, p.line, p.column, "the evaluator agent's tools")
