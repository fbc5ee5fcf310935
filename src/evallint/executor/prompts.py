"""Prompt files: aiwg markdown (front matter, ``## System``, ``## User``, ``## Notes``,
``{{variables}}``) and Jinja templates.

Sections are split *before* rendering, so a generator answer that contains a ``## System`` line
cannot move text into another section. Markdown placeholders are substituted in one pass (a
value containing ``{{...}}`` is never expanded again); Jinja runs in a sandbox with
StrictUndefined, so an unknown variable is an error, never an empty string.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

from evallint.executor.errors import SpecError, read_text
from evallint.frontend import ParseError
from evallint.marks import load_yaml, split_front_matter

JINJA_SUFFIXES = (".j2", ".jinja", ".jinja2")
_SECTION = re.compile(r"^##\s+(system|user|notes)\s*$", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}")

_ENV = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False,
                            keep_trailing_newline=False)


@dataclass
class Rendered:
    """A rendered prompt: what is sent as ``system`` and as the first user message."""

    system: str
    user: str


@dataclass
class PromptFile:
    """One parsed prompt file. ``variables`` are the top-level names its sections use."""

    path: Path
    front: dict[str, Any]
    system: str
    user: str
    jinja: bool
    variables: set[str] = field(default_factory=set)
    section_variables: dict[str, set[str]] = field(default_factory=dict)
    _compiled: dict[str, jinja2.Template] = field(default_factory=dict, repr=False)

    @property
    def step(self) -> str | None:
        value = self.front.get("step", self.front.get("role"))
        return str(value).lower() if value is not None else None

    @property
    def model(self) -> str | None:
        value = self.front.get("model")
        return str(value) if value is not None else None

    def render(self, values: dict[str, Any]) -> Rendered:
        """Fill the sections with ``values``; every variable used must be given."""
        missing = self.variables - set(values)
        if missing:
            raise SpecError(f"no value for template variable(s) {', '.join(sorted(missing))}",
                            str(self.path))
        if self.jinja:
            return Rendered(self._render_jinja("system", values),
                            self._render_jinja("user", values))
        return Rendered(_substitute(self.system, values, self.path),
                        _substitute(self.user, values, self.path))

    def _render_jinja(self, section: str, values: dict[str, Any]) -> str:
        template = self._compiled.get(section)
        if template is None:
            return ""
        try:
            return template.render(**values).strip()
        except jinja2.TemplateError as exc:
            raise SpecError(f"cannot render the {section} section: {exc}", str(self.path)) \
                from None


def load_prompt(path: Path) -> PromptFile:
    """Parse a prompt file; errors name the file (and line where there is one)."""
    shown = str(path)
    text = read_text(path, "prompt file")
    front, body, body_line = _front_matter(text, shown)
    jinja = path.suffix.lower() in JINJA_SUFFIXES or str(front.get("format", "")).lower() in (
        "jinja", "jinja2")
    sections = split_sections(body)
    system, user = sections.get("system", ""), sections.get("user", "")
    if not sections:
        user = body.strip()  # a file without sections is one user message
    if not user.strip():
        raise SpecError("prompt has no '## User' section (or it is empty)", shown)
    prompt = PromptFile(path=path, front=front, system=system.strip(), user=user.strip(),
                        jinja=jinja)
    if jinja:
        for name, src in (("system", prompt.system), ("user", prompt.user)):
            if not src:
                continue
            try:
                ast = _ENV.parse(src)
                prompt._compiled[name] = _ENV.from_string(src)
            except jinja2.TemplateSyntaxError as exc:
                line = _section_line(body, name, exc.lineno) + body_line - 1
                raise SpecError(f"Jinja syntax error: {exc.message}", shown, line) from None
            prompt.section_variables[name] = set(meta.find_undeclared_variables(ast))
    else:
        for name, src in (("system", prompt.system), ("user", prompt.user)):
            prompt.section_variables[name] = {m.split(".")[0] for m in _PLACEHOLDER.findall(src)}
    for names in prompt.section_variables.values():
        prompt.variables |= names
    return prompt


def _front_matter(text: str, shown: str) -> tuple[dict[str, Any], str, int]:
    """Front matter (a mapping), the body after it, and the body's first line number.

    Split and parsed by the linter's own front-matter reader, so `run` and `check` agree on
    where a prompt's front matter ends.
    """
    block = split_front_matter(text)
    if block is None:
        if text.splitlines()[:1] and text.splitlines()[0].rstrip() == "---":
            raise SpecError("front matter is not closed with '---'", shown, 1)
        return {}, text, 1
    yaml_text, first_line, body_line = block
    try:
        front = load_yaml(yaml_text, line_offset=first_line - 1).data or {}
    except ParseError as exc:
        raise SpecError("invalid YAML front matter", shown, exc.line) from None
    if not isinstance(front, dict):
        raise SpecError("front matter must be a mapping", shown, 1)
    return front, "".join(text.splitlines(keepends=True)[body_line - 1:]), body_line


def split_sections(body: str) -> dict[str, str]:
    """``## System`` / ``## User`` / ``## Notes`` bodies; headings inside code fences don't count.

    Other ``##`` headings belong to the section they are in (a system prompt may have its own
    sub-headings)."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    in_fence = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _SECTION.match(line.strip())
        if m:
            current = m.group(1).lower()
            sections.setdefault(current, [])
            continue
        if current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}


def _section_line(body: str, section: str, lineno: int) -> int:
    """Map a line inside a section back to the body's line (for error messages)."""
    for i, line in enumerate(body.splitlines(), start=1):
        if line.strip().lower().startswith("## ") and line.strip()[3:].strip().lower() == section:
            return i + lineno
    return lineno


def as_text(value: Any) -> str:
    """How a value is written into a markdown prompt: strings as-is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _lookup(values: dict[str, Any], dotted: str, path: Path) -> Any:
    head, *rest = dotted.split(".")
    value = values[head]
    for part in rest:
        if not isinstance(value, dict) or part not in value:
            raise SpecError(f"template variable '{dotted}' has no field '{part}'", str(path))
        value = value[part]
    return value


def _substitute(template: str, values: dict[str, Any], path: Path) -> str:
    return _PLACEHOLDER.sub(lambda m: as_text(_lookup(values, m.group(1), path)), template)
