"""EL105: put the candidate's output between tags, in the template's own syntax.

``Grade this: {{ output }}`` becomes ``Grade this: <output>{{ output }}</output>`` (the tag is
named for the variable; ``{{{response}}}``, ``{answer}`` and a script's ``${answer}`` keep their
own braces).

Unsafe: the judge's prompt text changes, so its scores may move and a prompt pinned in
``evallint.lock`` no longer matches (EL610); a person should look at the wording around it.
"""

from __future__ import annotations

import re

from evallint.findings import Finding
from evallint.fixing import Fix, TextEdit, fixer, offset_of
from evallint.frontends.scriptparse import GRAMMARS

_CHAIN = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")


def _tag(text: str, at: int) -> str:
    """The tag's name: the part of ``run.response`` that names the output (the last one of
    EL105's ``output_names``), else ``output``."""
    from evallint.registry import load_rules

    meta = load_rules().get("EL105")
    listed = (meta.params.get("output_names") if meta is not None else None) or []
    names = {"output", *(str(n).lower() for n in listed)}
    m = _CHAIN.match(text, at)
    parts = [p.lower() for p in m.group(0).split(".")] if m else []
    return next((p for p in reversed(parts) if p in names), "output")


@fixer("EL105")
def wrap_output(finding: Finding, text: str) -> Fix | None:
    """Wrap the interpolation that holds the reported variable in ``<name>…</name>``."""
    if finding.path.endswith((".py", ".ipynb")):
        return None
    at = offset_of(text, finding.line, finding.column)
    line_start = text.rfind("\n", 0, at) + 1
    opened = _opening(text, line_start, at)
    if opened is None:
        return None
    start, braces = opened
    if braces == 1 and start > 0 and text[start - 1] == "$" and \
            finding.path.lower().endswith(tuple(GRAMMARS)):
        start -= 1  # a template literal's `${answer}`: the tags go round the whole of it
    close = text.find("}" * braces, at)
    if close < 0 or "\n\n" in text[start:close]:
        return None
    end = close + braces
    tag = _tag(text, at)
    edits = (TextEdit(start, start, f"<{tag}>"), TextEdit(end, end, f"</{tag}>"))
    return Fix("EL105", f"Wrap the output in <{tag}> tags", False, edits)


def _opening(text: str, line_start: int, at: int) -> tuple[int, int] | None:
    """Where the interpolation around ``at`` opens (``{{{``, ``{{`` or ``{``) and how many
    braces close it; None when ``at`` is not inside one on its line."""
    double = text.rfind("{{", line_start, at)
    if double >= 0 and text.find("}}", double, at) < 0:
        start = double
        while start > line_start and text[start - 1] == "{":
            start -= 1
        return start, 3 if text[start:start + 3] == "{{{" else 2
    single = text.rfind("{", line_start, at)
    if single >= 0 and text.find("}", single, at) < 0:
        return single, 1
    return None
