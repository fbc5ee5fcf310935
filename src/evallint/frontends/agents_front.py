"""Claude Code sub-agent definitions (``.claude/agents/*.md``) and project permission files.

An agent file is markdown with YAML front matter (``name``, ``description``, ``tools``,
``model``, optionally ``disallowedTools``) and a body that is the agent's system prompt. The
role comes from explicit front matter or config first, then the name, then the description and
the body's self-description; every piece of evidence is kept for the finding's explanation.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from evallint import globs
from evallint.config import Config
from evallint.facts import Pos
from evallint.facts.agents import (
    AgentFacts,
    SettingsFacts,
    ToolRef,
)
from evallint.frontend import ParseError, frontend
from evallint.frontends.model_policy import model_policies
from evallint.kinds import FileKind
from evallint.marks import (
    Doc,
    PathT,
    lenient_front_matter,
    load_json,
    load_yaml,
    split_front_matter,
)
from evallint.roles import (
    AGENT_MAKER_WORDS,
    Role,
    RoleInfo,
    content_role,
    judges_others_work,
    name_tokens,
    role_from_value,
    stated_identity,
)
from evallint.roles import STRONG_JUDGE_WORDS as STRONG_EVAL
from evallint.roles import WEAK_JUDGE_WORDS as WEAK_EVAL
from evallint.source import SourceFile

# (the blanks after the brackets belong to them: two blank runs side by side, with nothing
# between them, were split every way before the match failed)
_TOOL = re.compile(r"^\s*(\*|[A-Za-z_][\w.\-]*)\s*(?:\((.*)\)\s*)?$", re.S)


def parse_tool(text: str, pos: Pos) -> ToolRef | None:
    """``"Bash(git log:*)"`` -> ToolRef('Bash', 'git log:*'); None for text that is no tool."""
    m = _TOOL.match(text)
    if not m:
        return None
    return ToolRef(m.group(1), m.group(2), pos)


def _split_tools(value: str) -> list[tuple[str, int]]:
    """Split a comma string of tools, keeping brackets whole; returns (item, offset) pairs."""
    out: list[tuple[str, int]] = []
    depth, start = 0, 0
    for i, ch in enumerate(value + ","):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            item = value[start:i]
            stripped = item.strip()
            if stripped:
                out.append((stripped, start + (len(item) - len(item.lstrip()))))
            start = i + 1
    return out


def tool_list(doc: Doc, path: PathT) -> list[ToolRef] | None:
    """Read a tools value (comma string, space string or YAML list) with per-tool positions."""
    value = _get(doc.data, path)
    if value is None:
        return [] if _has(doc.data, path) else None
    base = doc.values.get(path) or doc.pos(*path) or Pos(1, 1)
    out: list[ToolRef] = []
    if isinstance(value, str):
        shift = 1 if path in doc.quoted else 0
        single_line = "\n" not in value
        items = _split_tools(value)
        if len(items) == 1 and " " in items[0][0] and "(" not in items[0][0]:
            items = [(w, items[0][1] + items[0][0].index(w)) for w in items[0][0].split()]
        for item, off in items:
            col = base.column + shift + off if single_line else base.column
            ref = parse_tool(item, Pos(base.line, col))
            if ref:
                out.append(ref)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                ref = parse_tool(item, doc.values.get((*path, i), base))
                if ref:
                    out.append(ref)
    return out


def _get(data: Any, path: PathT) -> Any:
    for key in path:
        if isinstance(data, dict):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and key < len(data):
            data = data[key]
        else:
            return None
    return data


def _has(data: Any, path: PathT) -> bool:
    parent = _get(data, path[:-1])
    return isinstance(parent, dict) and path[-1] in parent


# --------------------------------------------------------------------------- lenient reading

# Keys of an agent's front matter. In the lenient reading a line that opens with another word
# and a colon ("user: ...", "Context: ..." in an example inside an unquoted description)
# continues the value above it instead of starting a key.
AGENT_KEYS = frozenset({
    "name", "description", "tools", "allowed-tools", "allowedTools", "disallowedTools",
    "disallowed-tools", "disallowed_tools", "model", "color", "role", "step",
    "permissionMode", "skills", "hooks", "mcpServers", "memory", "maxTurns", "effort",
    "background", "isolation", "version", "tags", "category",
})
# --------------------------------------------------------------------------- roles

# Words that say an agent grades: "evaluate" and "rate" are left out, an auditor "evaluates
# risks" and "rates severity" without grading anyone's work.
_SCORING = re.compile(
    r"\b(score[sd]?|scoring|grades?|grading|rubric|pass/fail|verdicts?|ratings)\b",
    re.I,
)


def infer_agent_role(path: str, fm: dict[str, Any], body: str, body_line: int,
                     config: Config) -> RoleInfo:
    """Role of an agent from config, explicit front matter, name, description and body."""
    rel = config.root_relative(path)
    for glob, role in config.roles.items():
        if globs.match(rel, glob):
            return RoleInfo(Role(role), [f"config roles: '{glob}' = {role}"], explicit=True)
    for key in ("role", "step"):
        r = role_from_value(fm.get(key))
        if r is not Role.UNKNOWN:
            return RoleInfo(r, [f"front matter {key}: {fm.get(key)}"], explicit=True)

    desc = str(fm.get("description")) if isinstance(fm.get("description"), str) else ""
    lead = first_sentence(desc)
    builds = _BUILDS.search(lead) or _MAKES_PLAN.search(lead)
    # The body of a long agent prompt, and the example dialogues of a description, mention
    # scores and evaluation in passing; only what the description says the agent is for
    # counts as a scoring cue.
    scoring_cue = bool(_SCORING.search(purpose(desc))) and not builds
    name = fm.get("name") if isinstance(fm.get("name"), str) else PurePosixPath(path).stem
    name = own_name(path, str(name))
    tokens = set(name_tokens(name))
    ev_strong, ev_weak, gen = tokens & STRONG_EVAL, tokens & WEAK_EVAL, tokens & AGENT_MAKER_WORDS
    other = judges_other(lead) if ev_strong else ""
    if other:
        return RoleInfo(Role.UNKNOWN, [f"description: it judges {other}, not the work"])
    if ev_strong and not gen:
        return RoleInfo(Role.EVALUATOR, [f"agent name '{name}' (word '{sorted(ev_strong)[0]}')"])
    if gen and not (ev_strong or ev_weak):
        return RoleInfo(Role.GENERATOR, [f"agent name '{name}' (word '{sorted(gen)[0]}')"])

    # Reviewing the work must be said in the description (its examples included): a long
    # body lists "code review findings" among the topics of any auditor.
    review_cue = "" if builds else judged_work(desc)
    self_m = stated_identity(body)
    if self_m:
        word = self_m.word
        line = body_line + body.count("\n", 0, self_m.start)
        ev = self_m.role is Role.EVALUATOR
        evidence = [f"body line {line}: '{self_m.text.strip()}'"]
        if ev_weak:
            evidence.insert(0, f"agent name '{name}' (word '{sorted(ev_weak)[0]}')")
        if ev and (word not in WEAK_EVAL or scoring_cue or review_cue):
            return RoleInfo(Role.EVALUATOR, evidence)
        if not ev:
            return RoleInfo(Role.GENERATOR, evidence)

    verdict = _VERDICT_LINE.search(body) if ev_weak & _REVIEWING and not gen else None
    if ev_weak and not gen and (scoring_cue or review_cue or verdict):
        cue = ("its description speaks of scores or grades" if scoring_cue
               else f"it reviews the work: {review_cue}" if review_cue
               else f"its output contract ends on a verdict: '{_clip(verdict.group(0), 40)}'"
               if verdict else "")
        return RoleInfo(Role.EVALUATOR,
                        [f"agent name '{name}' (word '{sorted(ev_weak)[0]}')", cue])
    inspects = _INSPECTS.search(purpose(desc))
    if inspects and not builds and not gen:
        # An agent that inspects the work just made in the session ("invoke it after the app
        # has been created or modified", "after generating large comments, verify them"), or
        # that scores what it inspects.
        fresh = _AFTER_WORK.search(purpose(desc))
        if fresh or scoring_cue:
            why = (f"it runs on fresh work: '{_clip(fresh.group(0), 60)}'" if fresh
                   else "its description speaks of scores or ratings")
            return RoleInfo(Role.EVALUATOR,
                            [f"its description says it inspects: '{inspects.group(0)}'", why])
    judged = judged_work(lead)
    if judged and not builds and not set(name_tokens(lead)) & AGENT_MAKER_WORDS and not gen:
        return RoleInfo(Role.EVALUATOR, [f"description: '{_clip(desc)}'",
                                         f"it judges {judged}"])
    task = None if builds or gen else content_role(purpose(desc))
    if task is not None and task[0] is Role.EVALUATOR:  # "to evaluate overall text quality"
        return RoleInfo(Role.EVALUATOR, [f"its description: '{_clip(task[1][0].text, 60)}'"])
    others = None if builds or gen else judges_others_work(body)
    if others is not None:
        # What its instructions say it does, whatever it is called: it reviews work another
        # party made and gives a verdict (and does not mend what it finds).
        line = body_line + body.count("\n", 0, others.start)
        return RoleInfo(Role.EVALUATOR, [
            f"body line {line}: '{others.snippet}' (it reviews work another party made and "
            "gives a verdict)"])
    return RoleInfo(Role.UNKNOWN, [])


# A reviewer's output contract that ends on a verdict ("Verdict: {pass | fail}"): what it
# returns decides, so it judges. Only for the reviewing words: an auditor's or a checker's
# pass/fail may be about anything (a deployment, an account).
_REVIEWING = frozenset({"reviewer", "review", "verifier", "verify"})
_VERDICT_LINE = re.compile(
    r"(?im)^[ \t>*_-]*verdict[*_]*[ \t]*:[ \t]*[`*_]*[{\[(<]?[ \t]*[`*_]*"
    r"(?:pass|fail|approved?|reject(?:ed)?|accept(?:ed)?|lgtm|ship|block)\b")


# What an agent that makes the work says it does, at the start of its description ("Use this
# agent when developing ...", "Implements the plan"): such an agent is no reviewer even when it
# also reviews its own code.
_BUILDS = re.compile(
    # (a verb, not the end of a compound noun: "after every feature, bug-fix or pull-request")
    r"(?<![-\u2010\u2011])\b(?:develop(?:s|ing)?|implement(?:s|ing)?|build(?:s|ing)?|creat(?:e|es|ing)|"
    r"writ(?:e|es|ing)|generat(?:e|es|ing)|refactor(?:s|ing)?|migrat(?:e|es|ing)|"
    r"achiev(?:e|es|ing)|fix(?:es|ing)?|optimi[sz](?:e|es|ing))\b",
    re.I,
)
# An agent whose product is a plan ("produces structured delegation plans"): a planner, even
# when it analyses the plan it is handed first.
_MAKES_PLAN = re.compile(
    r"\b(?:produc|creat|generat|writ|draft|mak|build)\w*\s+(?:[\w-]+\s+){0,3}?"
    r"(?:plans?|schedules?|roadmaps?|breakdowns?)\b", re.I)
# Inspecting something, said as a verb: what a reviewer or a validator says it does.
_INSPECTS = re.compile(
    r"\b(?:audit(?:s|ing)?|review(?:s|ing)?|assess(?:es|ing)?|evaluat(?:e|es|ing)|"
    r"verif(?:y|ies|ying)|validat(?:e|es|ing)|analy[sz](?:e|es|ing)|inspect(?:s|ing)?|"
    r"check(?:s|ing)?)\b", re.I)
# Work just made in the session: "after generating large comments", "after the user creates
# or modifies plugin components".
_AFTER_WORK = re.compile(
    r"\b(?:after|once)\s+(?:[\w'-]+\s+){0,8}?(?:generat|creat|writ|modif|add|implement|finish|"
    r"complet|chang|feature|fix|commit|pull[\s\u2010\u2011-]?request)\w*"
    r"|\bbefore\s+(?:[\w'-]+\s+){0,3}?merg(?:e|es|ed|ing)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n\s*\n|\\n")


_EXAMPLES = re.compile(r"<example|\bexamples?\s*:|\\n\\n|\n\s*\n", re.I)


def purpose(text: str) -> str:
    """A description without its example dialogues: what the agent says it is for."""
    m = _EXAMPLES.search(text)
    return text[: m.start()] if m else text


def first_sentence(text: str) -> str:
    """The first sentence of a description: what the agent is for, before its examples."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


# What a judge in an eval loop judges: the work. An agent that evaluates candidates, markets,
# options or risks is a recruiter, an analyst or an advisor, not a grader.
WORK_NOUNS = (
    "work", "output", "outputs", "response", "responses", "implementation", "implementations",
    "code", "answer", "answers", "submission", "submissions", "pr", "prs", "pull request",
    "pull requests", "completion", "completions", "draft", "drafts", "generation",
    "generations", "solution", "solutions", "patch", "patches", "diff", "diffs", "essay",
    "essays", "result", "results", "changes", "deliverable", "deliverables", "attempt",
    "attempts", "modifications", "artifacts", "design", "designs", "comments",
)
# Within one line: a phrase never runs from one bullet of a list into the next.
_SP = r"[^\S\n]+"
_WORK = "(?:" + "|".join(re.escape(w).replace(r"\ ", _SP) for w in WORK_NOUNS) + ")"
_JUDGE_VERB = (r"(?:evaluat\w*|grad(?:e|es|ed|ing)|judg\w*|critiqu\w*|scor(?:e|es|ed|ing)|"
               r"rat(?:e|es|ed|ing)|verif(?:y|ies|ying)|validat(?:e|es|ing))")
_FILLER = rf"(?:[A-Za-z][\w'-]*{_SP}){{0,3}}?"
_REVIEW_VERB = r"(?:review(?:s|ed|ing)?)"
_JUDGES_WORK = re.compile(
    # "evaluates the generated code", "evaluation of responses", "grading each answer",
    # "reviews implemented code", "review a pull request"
    rf"\b(?:{_JUDGE_VERB}|{_REVIEW_VERB}){_SP}(?:of{_SP}|on{_SP})?{_FILLER}{_WORK}\b"
    # "code evaluation", "response grading", "output scoring", "code reviews"
    rf"|\b{_WORK}{_SP}(?:evaluation|evaluator|grading|grader|judging|judge|critique|critic|"
    rf"scoring|scorer|rating|rater|review|reviewer)s?\b",
    re.I,
)


def own_name(path: str, name: str) -> str:
    """The agent's own name without its plugin's prefix.

    Plugin catalogues name an agent ``<plugin>-<agent>`` (``perf-review-load-tester`` in
    ``plugins/perf-review/agents/``); the plugin's folder name says what the plugin is about,
    not what this agent does, so its words must not make the agent a reviewer.
    """
    parts = PurePosixPath(path).parts
    if len(parts) >= 3 and parts[-2].lower() == "agents":
        prefix = parts[-3].lower() + "-"
        if name.lower().startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix):]
    return name


# What an advisor judges: things to adopt or buy, people, markets. An "evaluator" of these is
# not the judge of a generate-evaluate loop.
OTHER_NOUNS = (
    "tool", "tools", "framework", "frameworks", "library", "libraries", "vendor", "vendors",
    "service", "services", "provider", "providers", "platform", "platforms", "candidate",
    "candidates", "market", "markets", "option", "options", "investment", "investments",
    "technology", "technologies", "stack", "stacks",
)
_OTHER = "(?:" + "|".join(OTHER_NOUNS) + ")"
_JUDGES_OTHER = re.compile(
    rf"\b{_JUDGE_VERB}\s+(?:of\s+)?(?:[\w'-]+\s+){{0,3}}?{_OTHER}\b", re.I)


def judges_other(text: str) -> str:
    """The phrase in which ``text`` judges tools, vendors, people or markets, not the work."""
    if judged_work(text):
        return ""
    m = _JUDGES_OTHER.search(text)
    return f"'{' '.join(m.group(0).split())}'" if m else ""


def judged_work(text: str) -> str:
    """The phrase in which ``text`` judges someone's work ("evaluates the code"), else ''."""
    m = _JUDGES_WORK.search(text)
    return f"'{' '.join(m.group(0).split())}'" if m else ""


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# --------------------------------------------------------------------------- front-ends


@frontend(FileKind.AGENT)
def parse_agent(source: SourceFile, config: Config) -> AgentFacts:
    """Front matter with positions, body role cues; ParseError for invalid front matter."""
    split = split_front_matter(source.text)
    if split is None:
        raise ParseError("agent definition has no closed '---' front matter block", 1, 1)
    yaml_text, first_line, body_line = split
    try:
        doc = load_yaml(yaml_text, line_offset=first_line - 1)
    except ParseError as strict_error:
        lenient = lenient_front_matter(yaml_text, first_line, AGENT_KEYS)
        if lenient is None:
            raise strict_error from None
        doc = lenient
    fm = doc.data if doc.data is not None else {}
    if not isinstance(fm, dict):
        raise ParseError("agent front matter must be a mapping of keys", first_line, 1)
    lines = source.text.splitlines()
    body = "\n".join(lines[body_line - 1:])
    facts = AgentFacts(path=source.rel, kind=FileKind.AGENT.value)
    facts.role = infer_agent_role(source.rel, fm, body, body_line, config)
    name = fm.get("name")
    facts.name = str(name) if name is not None else None
    facts.name_pos = doc.keys.get(("name",))
    desc = fm.get("description")
    facts.description = str(desc) if desc is not None else ""
    for key in ("tools", "allowed-tools", "allowedTools"):
        if key in fm:
            facts.tools = tool_list(doc, (key,))
            facts.tools_pos = doc.keys.get((key,))
            break
    for key in ("disallowedTools", "disallowed-tools", "disallowed_tools"):
        if key in fm:
            facts.disallowed = tool_list(doc, (key,))
            facts.disallowed_pos = doc.keys.get((key,))
            break
    model = fm.get("model")
    if model is not None:
        facts.model = str(model).strip()
        facts.model_pos = doc.keys.get(("model",))
    facts.model_policies = model_policies(body, body_line)
    return facts


@frontend(FileKind.CLAUDE_SETTINGS)
def parse_settings(source: SourceFile, config: Config) -> SettingsFacts:
    """``permissions.allow`` / ``deny`` entries and ``defaultMode``, each with its position."""
    doc = load_json(source.text)
    facts = SettingsFacts(path=source.rel, kind=FileKind.CLAUDE_SETTINGS.value)
    data = doc.data
    if data is None:
        return facts
    if not isinstance(data, dict):
        raise ParseError("settings must be a JSON object", 1, 1)
    perms = data.get("permissions")
    if not isinstance(perms, dict):
        return facts
    for key, target in (("allow", facts.allow), ("deny", facts.deny)):
        entries = perms.get(key)
        if isinstance(entries, list):
            for i, entry in enumerate(entries):
                pos = doc.values.get(("permissions", key, i), Pos(1, 1))
                ref = parse_tool(entry, pos) if isinstance(entry, str) else None
                if ref:
                    target.append(ref)
    mode = perms.get("defaultMode")
    if isinstance(mode, str):
        facts.default_mode = mode
        facts.default_mode_pos = doc.keys.get(("permissions", "defaultMode"))
    return facts
