"""Decide what kind of file a path is, from its name first and a cheap look at its text second.

Classification must be cheap: it runs on every discovered file, before any parser.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from itertools import pairwise
from pathlib import PurePosixPath

from evallint import globs
from evallint.kinds import FileKind

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
}
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
        if text_head is not None and _PROMPTFOO_GRADED.search(text_head):
            return FileKind.PROMPTFOO  # a test file a promptfoo config includes via file://
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
    return None


# A promptfoo model-graded assertion type: marks YAML test files that configs include.
_PROMPTFOO_GRADED = re.compile(
    r"^\s*(?:-\s+)?type:\s*['\"]?(?:not-)?(?:llm-rubric|g-eval|factuality|model-graded-"
    r"(?:closedqa|factuality)|answer-relevance|context-(?:faithfulness|recall|relevance)|"
    r"select-best|search-rubric|conversation-relevance)['\"]?\s*(?:#.*)?$",
    re.M,
)


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
    if parts and parts[-1] == "agents":
        return bool(keys & (_AGENT_KEYS | {"description"}))
    return "description" in keys and bool(keys & _AGENT_KEYS)


_ROOT_MARKERS = ("pyproject.toml", "evallint.toml", ".evallint.toml", ".git")


@lru_cache(maxsize=8192)
def _project_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding a project marker, else None."""
    if any(os.path.exists(os.path.join(folder, m)) for m in _ROOT_MARKERS):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _project_root(parent)


def project_relative(abspath: str) -> str | None:
    """``abspath`` relative to its own project root ('/'-separated), None without a root."""
    full = os.path.abspath(abspath)
    root = _project_root(os.path.dirname(full))
    if root is None:
        return None
    return os.path.relpath(full, root).replace(os.sep, "/")


def _has_front_matter(text_head: str | None) -> bool:
    return text_head is not None and text_head.lstrip("\ufeff").startswith("---")


def _looks_like_loop_spec(text_head: str) -> bool:
    keys = {m.group(1) for m in _LOOP_KEYS.finditer(text_head)}
    return (
        {"generator", "evaluator"} <= keys
        or "eval_config" in keys
        or ("metric" in keys and re.search(r"^\s+judge\s*:", text_head, re.M) is not None)
    )
