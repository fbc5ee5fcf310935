"""``str.format`` prompts (``{question}``) → :class:`TemplateFacts`.

Only identifier field names count: ``{"score": 1}`` in a JSON example is data, not a
placeholder, and ``{{``/``}}`` are escaped braces. A format spec never holds spaces or quotes,
so ``{score: 1, feedback: "..."}`` in prose is not a field either. Never raises: a stray
brace in prose is what ``.format`` users escape at render time, not a reason to stop linting.
"""

from __future__ import annotations

import re

from evallint.facts import TemplateFacts, TemplateVar
from evallint.frontends.template_text import TextMap, normalize_newlines

_FIELD = re.compile(
    r"\{\{|\}\}"
    r"|\{(?P<name>[A-Za-z_]\w*)(?P<rest>(?:\.[A-Za-z_]\w*|\[[^\]{}\s]+\])*)"
    r"(?:![rsa])?(?::[^{}\s\"']*)?\}"
)
_PART = re.compile(r"\.([A-Za-z_]\w*)|\[([^\]]+)\]")


def parse_format(text: str) -> TemplateFacts:
    """Every ``{identifier…}`` replacement field with its attribute/index path."""
    text = normalize_newlines(text)
    tmap = TextMap.of(text)
    out: list[TemplateVar] = []
    for m in _FIELD.finditer(text):
        name = m.group("name")
        if name is None:
            continue
        rest = tuple(a or b for a, b in _PART.findall(m.group("rest") or ""))
        offset = m.start("name")
        out.append(TemplateVar(name=name, path=(name, *rest), pos=tmap.pos(offset),
                               delimited=tmap.delimited(offset)))
    return TemplateFacts(dialect="format", variables=out)


def has_format_fields(text: str) -> bool:
    """True when the text holds at least one identifier replacement field."""
    return any(m.group("name") for m in _FIELD.finditer(text))
