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


def parse_format(text: str, shell: bool = False) -> TemplateFacts:
    """Every ``{identifier…}`` replacement field with its attribute/index path. ``shell``: the
    text is a prompt file, not a string a program formats, so ``${NAME}`` is a shell (or
    JavaScript) expansion in a command line (``${CLAUDE_PLUGIN_ROOT}/scripts/x.sh``), not a
    field."""
    text = normalize_newlines(text)
    tmap = TextMap.of(text)
    out: list[TemplateVar] = []
    for m in _FIELD.finditer(text):
        name = m.group("name")
        if name is None or (shell and _expansion(text, m.start())):
            continue
        rest = tuple(a or b for a, b in _PART.findall(m.group("rest") or ""))
        offset = m.start("name")
        out.append(TemplateVar(name=name, path=(name, *rest), pos=tmap.pos(offset),
                               delimited=tmap.delimited(offset)))
    return TemplateFacts(dialect="format", variables=out)


def has_format_fields(text: str, shell: bool = False) -> bool:
    """True when the text holds at least one identifier replacement field (``shell``: as in
    :func:`parse_format`)."""
    return any(m.group("name") and not (shell and _expansion(text, m.start()))
               for m in _FIELD.finditer(text))


def _expansion(text: str, brace: int) -> bool:
    """``${NAME}``: the field's brace follows a ``$`` (not a ``$$``-escaped dollar)."""
    return brace > 0 and text[brace - 1] == "$" and not (brace > 1 and text[brace - 2] == "$")
