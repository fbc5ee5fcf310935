"""Decide what kind of file a path is, from its name first and a cheap look at its text second.

Classification must be cheap: it runs on every discovered file, before any parser.
"""

from __future__ import annotations

import re
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
_DOC_NAMES = {"readme", "changelog", "license", "contributing", "index", "agents", "claude"}
_YAML_EXTS = {".yaml", ".yml"}

# Top-level YAML keys that mark a loop spec (evallint's own, aiwg's, or a judge spec).
_LOOP_KEYS = re.compile(r"^(generator|evaluator|eval_config|pass_threshold|metric)\s*:", re.M)


def classify(rel: str, text_head: str | None = None, *, templates: tuple[str, ...] = ()) -> (
    FileKind | None
):
    """Return the kind of ``rel`` or None when evallint has nothing to say about it.

    ``text_head`` is the first few KiB of the file, used only for YAML and agent sniffing.
    ``templates`` are config globs of extra files to treat as prompt templates.
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
        if suffix in (".md", ".markdown") and "agents" in parts and _has_front_matter(text_head):
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


def _has_front_matter(text_head: str | None) -> bool:
    return text_head is not None and text_head.lstrip("\ufeff").startswith("---")


def _looks_like_loop_spec(text_head: str) -> bool:
    keys = {m.group(1) for m in _LOOP_KEYS.finditer(text_head)}
    return (
        {"generator", "evaluator"} <= keys
        or "eval_config" in keys
        or ("metric" in keys and re.search(r"^\s+judge\s*:", text_head, re.M) is not None)
    )
