"""``{$var}`` placeholders (WildBench-style markdown templates) → :class:`TemplateFacts`.

These templates are filled by plain string replacement of ``{$name}``: nothing else in the
text is syntax, so JSON examples and ``{`` in prose are never placeholders.
"""

from __future__ import annotations

import re

from evallint.facts import TemplateFacts, TemplateVar
from evallint.frontends.template_text import TextMap, normalize_newlines

_FIELD = re.compile(r"\{\$(?P<name>[A-Za-z_]\w*)\}")


def has_dollar_fields(text: str) -> bool:
    """True when the text holds at least one ``{$name}`` placeholder."""
    return _FIELD.search(text) is not None


def parse_dollar(text: str) -> TemplateFacts:
    """Every ``{$name}`` placeholder, positioned at its name."""
    text = normalize_newlines(text)
    tmap = TextMap.of(text)
    out: list[TemplateVar] = []
    for m in _FIELD.finditer(text):
        name = m.group("name")
        offset = m.start()
        out.append(TemplateVar(name=name, path=(name,), pos=tmap.pos(offset + 2),
                               delimited=tmap.delimited(offset)))
    return TemplateFacts(dialect="dollar", variables=out)
