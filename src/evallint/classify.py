"""Decide what kind of file a path is, from its name first and a cheap look at its text second.

Classification must be cheap: it runs on every discovered file, before any parser.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from itertools import pairwise
from pathlib import PurePosixPath

from evallint import globs, reads
from evallint.kinds import FileKind
from evallint.roles import name_tokens

_EXT = {
    ".py": FileKind.PYTHON,
    ".pyi": None,
    ".ipynb": FileKind.NOTEBOOK,
    ".j2": FileKind.JINJA,
    ".jinja": FileKind.JINJA,
    ".jinja2": FileKind.JINJA,
    ".mustache": FileKind.MUSTACHE,
    ".hbs": FileKind.MUSTACHE,
    ".handlebars": FileKind.MUSTACHE,
    ".prompty": FileKind.PROMPTY,
    ".prompt": FileKind.DOTPROMPT,
    ".ts": FileKind.TYPESCRIPT,
    ".tsx": FileKind.TYPESCRIPT,
    ".mts": FileKind.TYPESCRIPT,
    ".cts": FileKind.TYPESCRIPT,
    ".js": FileKind.JAVASCRIPT,
    ".jsx": FileKind.JAVASCRIPT,
    ".mjs": FileKind.JAVASCRIPT,
    ".cjs": FileKind.JAVASCRIPT,
}
# what a template named ``x.<ext>.hbs`` renders as: source code a scaffolding tool writes out
_CODE_EXTS = {".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".py", ".json", ".yaml", ".yml",
              ".toml", ".html", ".css", ".go", ".rs", ".java", ".sh"}
# type declarations and bundles: no code of anyone's to check
_NOT_SOURCE = (".d.ts", ".d.mts", ".d.cts", ".min.js", ".min.mjs", ".min.cjs")
_PROMPT_DIRS = {"prompts", "prompt", "prompt_templates", "prompt-templates"}
_PROMPT_EXTS = {".md", ".txt", ".markdown", ".xml", ".tmpl", ".tpl"}
# Plain-text files in a templates/ folder are prompt templates in LLM projects; markdown there
# is too often something else (issue templates, docs scaffolds) to read by default.
_TEMPLATE_DIRS = {"templates", "template", "prompt_templates"}
# ``SKILL.md`` is an agent skill (instructions loaded on demand), not a template rendered for a
# model with inputs: a skill about writing evaluators is not an evaluator prompt.
_DOC_NAMES = {"readme", "changelog", "license", "contributing", "index", "agents", "claude",
              "skill"}
_YAML_EXTS = {".yaml", ".yml"}
_JSON_EXTS = {".json", ".jsonl"}

# Top-level YAML keys that mark a loop spec (evallint's own, aiwg's, or a judge spec).
_LOOP_KEYS = re.compile(r"^(generator|evaluator|eval_config|pass_threshold|metric)\s*:", re.M)


def classify(rel: str, text_head: str | None = None, *, templates: tuple[str, ...] = (),
             abspath: str | None = None) -> FileKind | None:
    """Return the kind of ``rel`` or None when evallint has nothing to say about it.

    ``text_head`` is the first few KiB of the file, used only for YAML and agent sniffing.
    ``templates`` are config globs of extra files to treat as prompt templates. ``abspath``
    lets agent detection read the path from the file's own project root, so the folder
    evallint was started from never decides what is an agent.
    """
    p = PurePosixPath(rel)
    name = p.name.lower()
    suffix = p.suffix.lower()
    parts = [s.lower() for s in p.parts[:-1]]

    if templates and globs.match_any(rel, templates):
        if suffix in _EXT and _EXT[suffix] is not None and suffix not in (".py", ".ipynb"):
            return _EXT[suffix]
        return FileKind.PROMPT

    if name.startswith("settings") and suffix == ".json" and parts and parts[-1] == ".claude":
        return FileKind.CLAUDE_SETTINGS

    if suffix in _EXT:
        if name.endswith(_NOT_SOURCE):
            return None
        if _EXT[suffix] is FileKind.MUSTACHE and PurePosixPath(name[: -len(suffix)]).suffix in \
                _CODE_EXTS:
            return None  # ``judge.tool.ts.hbs``: a scaffold's code template, not a prompt
        return _EXT[suffix]

    if suffix in _YAML_EXTS:
        if "promptfooconfig" in name:
            return FileKind.PROMPTFOO
        if "modelgraded" in parts:
            return FileKind.OPENAI_EVALS
        if name.endswith((".loop.yaml", ".loop.yml")) or name in (
            "loop.yaml", "loop.yml", "pipeline.config.yaml", "pipeline.config.yml",
        ):
            return FileKind.LOOP_SPEC
        if text_head is not None and _looks_like_loop_spec(text_head):
            return FileKind.LOOP_SPEC
        if text_head is not None and judge_config_shape(rel, text_head):
            return FileKind.JUDGE_CONFIG
        if text_head is not None and _promptfoo_graded().search(text_head):
            return FileKind.PROMPTFOO  # a test file a promptfoo config includes via file://
        return None

    if suffix in _JSON_EXTS:
        if text_head is not None and looks_like_collection(text_head):
            return FileKind.PROMPT_COLLECTION
        return None

    if suffix in _PROMPT_EXTS:
        stem = name.split(".")[0]
        if suffix in (".md", ".markdown") and _has_front_matter(text_head):
            agent_rel = (project_relative(abspath) if abspath else None) or rel
            if is_agent_definition(agent_rel, text_head or ""):
                return FileKind.AGENT
        if name.endswith((".prompt.md", ".prompt.txt", ".prompt.markdown")):
            return FileKind.PROMPT
        if set(parts) & _PROMPT_DIRS and stem not in _DOC_NAMES:
            return FileKind.PROMPT
        if suffix == ".txt" and set(parts) & _TEMPLATE_DIRS and stem not in _DOC_NAMES:
            return FileKind.PROMPT
        if text_head is not None and stem not in _DOC_NAMES and _DOLLAR.search(text_head):
            return FileKind.PROMPT  # a WildBench-style template: "{$name}" only fills prompts
        if suffix in (".md", ".markdown") and is_instruction_file(rel):
            return FileKind.INSTRUCTIONS
    return None


# Files a coding agent reads as its standing instructions, whatever folder they are in.
_INSTRUCTION_NAMES = frozenset({"agents.md", "claude.md", "claude.local.md", "gemini.md",
                                "skill.md", "copilot-instructions.md"})


def is_instruction_file(rel: str) -> bool:
    """Whether a markdown file tells a coding agent how to work: a project instruction file
    (``AGENTS.md``, ``CLAUDE.md``), a skill (``SKILL.md`` and the markdown its folder keeps)
    or a slash command (markdown under ``commands/``). Agent definitions are decided first."""
    p = PurePosixPath(rel)
    if p.name.lower() in _INSTRUCTION_NAMES:
        return True
    parts = [s.lower() for s in p.parts[:-1]]
    nearest = next((d for d in reversed(parts) if d in _NOT_AGENT_DIRS or d == "agents"), "")
    return nearest in _NOT_AGENT_DIRS


_DOLLAR = re.compile(r"\{\$[A-Za-z_]\w*\}")

# A promptfoo model-graded assertion type: marks YAML test files that configs include.
# ([^\S\n] is a blank that ends no line: the indent is read on the key's own line, so a match
# never starts on each of a run of blank lines and spans the rest of them (quadratic); as a
# found-or-not test this is the same as \s, a later line of a blank run starting it too.)
@lru_cache(maxsize=1)
def _promptfoo_graded() -> re.Pattern[str]:
    """The line of a model-graded assertion type; the types are the one list of EL303's
    ``graded_types`` parameter (rules/EL303.yaml)."""
    from evallint.registry import load_rules

    types = load_rules()["EL303"].params.get("graded_types") or ()
    alternatives = "|".join(re.escape(str(t)) for t in sorted(types, key=len, reverse=True))
    return re.compile(r"^[^\S\n]*(?:-[^\S\n]+)?type:\s*['\"]?(?:not-)?(?:" + alternatives
                      + r")['\"]?\s*(?:#.*)?$", re.M)


# --------------------------------------------------------------------------- prompt collections

# Fields that only a prompt record has: their presence (with a placeholder) makes the record.
TEMPLATE_FIELDS = (
    "prompt_template", "system_prompt", "user_prompt", "system_template", "user_template",
    "template", "judge_prompt", "judge_template", "eval_prompt", "evaluation_prompt",
    "evaluator_prompt", "grader_prompt", "grading_prompt", "critique_prompt", "critic_prompt",
    "rubric_prompt", "scoring_prompt", "generator_prompt", "generation_prompt",
    "instruction_template", "prompt_format",
)
# Read as templates once the record is a prompt (alone they are a data row's input).
PLAIN_FIELDS = ("prompt", "system", "instruction", "user")
MODEL_FIELDS = ("model", "model_name", "judge_model", "engine", "model_id")
# Text that states the output format: its keys count toward the record's contract.
FORMAT_FIELDS = ("output_format", "response_format_text", "format_instructions")
# A prompt collection is small; a bigger .json/.jsonl is data and is never read.
MAX_COLLECTION_BYTES = 1_000_000

_HEAD_KEY = re.compile(r'"(?:' + "|".join(TEMPLATE_FIELDS) + r')"\s*:', re.I)
_HEAD_MODEL = re.compile(r'"(?:' + "|".join(MODEL_FIELDS) + r')"\s*:', re.I)
_HEAD_PLAIN = re.compile(r'"(?:' + "|".join((*PLAIN_FIELDS, "messages")) + r')"\s*:', re.I)
_PLACEHOLDER = re.compile(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}|\{\$[A-Za-z_]\w*\}|\{[A-Za-z_]\w*\}")


def looks_like_collection(head: str) -> bool:
    """Cheap test on a JSON file's head: a template field (or a model next to a prompt field)
    and a placeholder. Rows of eval cases have neither template keys nor placeholders."""
    if not _PLACEHOLDER.search(head):
        return False
    return bool(_HEAD_KEY.search(head)) or bool(_HEAD_MODEL.search(head)
                                                and _HEAD_PLAIN.search(head))


# --------------------------------------------------------------------------- judge configs

# Top-level (or one level down) keys of judge configs that name or hold judge templates:
# alpaca_eval annotators, arena-hard judge configs, phoenix classification evaluators,
# pydantic-evals datasets with LLMJudge evaluators.
_ANNOTATOR = re.compile(r"^\s{0,4}prompt_template\s*:", re.M)
_ANNOTATOR_FN = re.compile(r"^\s{0,4}(?:fn_completions|completions_kwargs)\s*:", re.M)
_ARENA = re.compile(r"^judge_model\s*:", re.M)
_ARENA_TEXT = re.compile(r"^(?:system_prompt|prompt_template)\s*:", re.M)
# choices may sit after a long prompt, beyond the head: optimization_direction stands in.
_PHOENIX = re.compile(r"^(?:choices|optimization_direction)\s*:", re.M)
_PHOENIX_MSGS = re.compile(r"^messages\s*:", re.M)
_PHOENIX_NAME = re.compile(r"^name\s*:", re.M)
# (blanks of the key's own line, as in _promptfoo_graded(); one blank run before the dash and one
# after it, never two adjacent runs that could split a run of blanks every way)
_PYDANTIC_EVALS = re.compile(r"^[^\S\n]*(?:-[^\S\n]*)?LLMJudge\s*:", re.M)
_PYDANTIC_CASES = re.compile(r"^(?:cases|evaluators)\s*:", re.M)


_JUDGE_FOLDERS = frozenset({"evaluator", "evaluators", "annotator", "annotators", "judge",
                            "judges", "grader", "graders"})


def judge_config_shape(rel: str, head: str) -> str | None:
    """Which judge-config layout a YAML file's head has, or None.

    An annotator config looks like a model config (a prompt template and a completion
    function): the folder (``evaluators_configs/``) or a completion parser says it judges.
    """
    if _ANNOTATOR.search(head) and _ANNOTATOR_FN.search(head):
        folders = {t for part in PurePosixPath(rel).parts[:-1] for t in name_tokens(part)}
        if folders & _JUDGE_FOLDERS or "fn_completion_parser" in head:
            return "annotator"
        return None
    if _ARENA.search(head) and _ARENA_TEXT.search(head):
        return "arena"
    if _PHOENIX.search(head) and _PHOENIX_MSGS.search(head) and _PHOENIX_NAME.search(head):
        return "phoenix"
    if _PYDANTIC_EVALS.search(head) and _PYDANTIC_CASES.search(head):
        return "pydantic-evals"
    return None


# --------------------------------------------------------------------------- agent definitions

# Folders whose markdown is a skill or a slash command, not a sub-agent definition (unless an
# agents/ folder inside them says otherwise).
_NOT_AGENT_DIRS = frozenset({"skills", "commands"})
# Front matter keys of docs pages and blog posts (static-site generators), not of agents.
_DOC_KEYS = frozenset({
    "title", "layout", "slug", "permalink", "sidebar_position", "sidebar_label", "date",
    "author", "authors", "nav_order", "weight",
})
# Keys that only an agent-style definition has next to its name (evallint's role/step too).
_AGENT_KEYS = frozenset({"tools", "model", "role", "step", "disallowedTools"})
_FM_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]|$)")


def front_matter_keys(head: str) -> set[str]:
    """Top-level keys of a ``---`` block, read line by line (lenient: an unquoted colon in a
    description, which strict YAML refuses and Claude Code accepts, does not hide the keys)."""
    lines = head.lstrip("\ufeff").splitlines()
    keys: set[str] = set()
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            break
        m = _FM_KEY.match(line)
        if m:
            keys.add(m.group(1))
    return keys


def is_agent_definition(rel: str, head: str) -> bool:
    """Whether a markdown file with front matter defines a sub-agent.

    Claude Code reads every file in ``.claude/agents/``; a plugin's or a catalogue's agents
    live anywhere, so elsewhere the front matter decides: a ``name`` with the keys of an
    agent (in an ``agents/`` folder: a description or an agent key; elsewhere: a description
    and a tools/model/role key). Skills, commands and docs pages stay out.
    """
    p = PurePosixPath(rel)
    parts = [s.lower() for s in p.parts[:-1]]
    if p.name.lower() == "skill.md":
        return False
    # the nearest of agents/, skills/, commands/ decides: a bundle's own agents/ folder (as in
    # skills/scanning/agents/auditor.md) holds agents; markdown in a skill or command does not
    nearest = next((d for d in reversed(parts) if d in _NOT_AGENT_DIRS or d == "agents"), "")
    if nearest in _NOT_AGENT_DIRS:
        return False
    if p.name.lower().split(".")[0] in _DOC_NAMES:
        return False
    if any(a == ".claude" and b == "agents" for a, b in pairwise(parts)):
        return True
    keys = front_matter_keys(head)
    if "name" not in keys or keys & _DOC_KEYS:
        return False
    below = parts[len(parts) - 1 - parts[::-1].index("agents") + 1:] if nearest == "agents" \
        else []
    if nearest == "agents" and not set(below) & _NOT_AGENT_BELOW:
        # agents/ or a folder inside it (agents/core/, agents/universal/), not the prompts,
        # templates or docs an agent folder keeps beside its agents
        return bool(keys & (_AGENT_KEYS | {"description"}))
    return "description" in keys and bool(keys & _AGENT_KEYS)


_NOT_AGENT_BELOW = frozenset(_PROMPT_DIRS | _TEMPLATE_DIRS | {"docs", "doc", "examples",
                                                               "example", "references"})
_ROOT_MARKERS = ("pyproject.toml", "evallint.toml", ".evallint.toml", ".git")


@lru_cache(maxsize=8192)
def _project_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding a project marker, else None."""
    if any(os.path.exists(os.path.join(folder, m)) for m in _ROOT_MARKERS):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _project_root(parent)


def _root_markers(path: str) -> list[str]:
    """Every marker path :func:`project_root_of` looks at for ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    found: list[str] = []
    while True:
        found.extend(os.path.join(folder, m) for m in _ROOT_MARKERS)
        parent = os.path.dirname(folder)
        if _project_root(folder) == folder or parent == folder:
            return found
        folder = parent


def project_root_of(path: str) -> str | None:
    """The project root of a file: the nearest folder above it with a project marker.

    Inside a recorded analysis (:mod:`evallint.reads`) the markers looked at are recorded:
    where a front-end or a check may read depends on them, so a cached result that did must
    not outlive a marker appearing or going."""
    if reads.recording_now():
        for marker in _root_markers(path):
            reads.exists(marker)
    return _project_root(os.path.dirname(os.path.abspath(path)))


def project_relative(abspath: str) -> str | None:
    """``abspath`` relative to its own project root ('/'-separated), None without a root."""
    full = os.path.abspath(abspath)
    root = _project_root(os.path.dirname(full))
    if root is None:
        return None
    return os.path.relpath(full, root).replace(os.sep, "/")


def _has_front_matter(text_head: str | None) -> bool:
    return text_head is not None and text_head.lstrip("\ufeff").startswith("---")


# An indented "judge:" key, or one right under a blank line (what ^\s+judge matched): blanks
# are read on one line at a time, so no line start scans a whole run of blank lines.
_JUDGE_KEY = re.compile(r"^(?:[^\S\n]+|[^\S\n]*\n)judge\s*:", re.M)


def _looks_like_loop_spec(text_head: str) -> bool:
    keys = {m.group(1) for m in _LOOP_KEYS.finditer(text_head)}
    return (
        {"generator", "evaluator"} <= keys
        or "eval_config" in keys
        or ("metric" in keys and _JUDGE_KEY.search(text_head) is not None)
    )


def is_script(path: str) -> bool:
    """Is ``path`` a TypeScript or JavaScript file (by its suffix)?"""
    return _EXT.get(PurePosixPath(path).suffix.lower()) in (FileKind.TYPESCRIPT,
                                                            FileKind.JAVASCRIPT)
