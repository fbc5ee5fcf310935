"""The kinds of file evallint understands."""

from __future__ import annotations

from enum import Enum


class FileKind(str, Enum):
    PYTHON = "python"
    NOTEBOOK = "notebook"
    JINJA = "jinja"  # .j2 .jinja .jinja2
    MUSTACHE = "mustache"  # .mustache .hbs .handlebars
    PROMPT = "prompt"  # *.prompt.md, .md/.txt under prompts/, configured templates
    PROMPTY = "prompty"  # .prompty: front matter + Jinja
    DOTPROMPT = "dotprompt"  # .prompt: front matter + Handlebars
    AGENT = "agent"  # .claude/agents/*.md and agent files in that style
    CLAUDE_SETTINGS = "claude-settings"  # .claude/settings*.json
    PROMPTFOO = "promptfoo"  # promptfooconfig.yaml and what it includes
    OPENAI_EVALS = "openai-evals"  # registry/modelgraded/*.yaml
    LOOP_SPEC = "loop-spec"  # evallint's own loop spec, aiwg pipeline.config.yaml, judge specs
    PROMPT_COLLECTION = "prompt-collection"  # .jsonl/.json records holding prompt templates
    JUDGE_CONFIG = "judge-config"  # annotator/judge configs naming or holding judge templates
    TYPESCRIPT = "typescript"  # .ts .tsx .mts .cts
    JAVASCRIPT = "javascript"  # .js .jsx .mjs .cjs
    INSTRUCTIONS = "instructions"  # SKILL.md, AGENTS.md, CLAUDE.md, commands: how agents are run


TEMPLATE_KINDS = frozenset(
    {FileKind.JINJA, FileKind.MUSTACHE, FileKind.PROMPT, FileKind.PROMPTY, FileKind.DOTPROMPT}
)
