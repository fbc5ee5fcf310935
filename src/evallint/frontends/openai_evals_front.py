"""openai/evals model-graded specs (``registry/modelgraded/*.yaml``).

Each top-level key is a spec with a ``prompt`` (a string or chat messages) in ``str.format``
syntax, and ``input_outputs`` mapping input names to completion names. The template fields
are read with :class:`string.Formatter` — the parser the evals framework itself renders with.
"""

from __future__ import annotations

import string
from typing import Any

from evallint.config import Config
from evallint.facts import Pos
from evallint.facts.openai_evals import (
    FormatField,
    GradedSpec,
    OpenAIEvalsFacts,
)
from evallint.frontend import frontend
from evallint.kinds import FileKind
from evallint.marks import Doc, PathT, load_yaml
from evallint.source import SourceFile


def format_fields(text: str, first_line: int, column: int) -> list[FormatField]:
    """Fields of a ``str.format`` template; an invalid template yields none (it never renders).

    ``column`` is where the text starts on ``first_line``; fields on later lines get column 1
    (the indentation of a block scalar is not part of the string).
    """
    out: list[FormatField] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return out
    cursor = 0
    for _literal, fname, _spec, _conv in parsed:
        if fname is None:
            continue
        idx = text.find("{" + fname, cursor)
        idx = idx if idx >= 0 else cursor
        cursor = idx + 1
        line = first_line + text.count("\n", 0, idx)
        col = column + idx if line == first_line else 1
        root = fname.split(".", 1)[0].split("[", 1)[0]
        if root and not root.isdigit():
            out.append(FormatField(root, fname, Pos(line, col)))
    return out


def _texts(doc: Doc, path: PathT) -> list[tuple[str, PathT]]:
    value = doc.data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, str):
        return [(value, path)]
    out = []
    if isinstance(value, list):
        for i, msg in enumerate(value):
            if isinstance(msg, dict) and isinstance(msg.get("content"), str):
                out.append((msg["content"], (*path, i, "content")))
            elif isinstance(msg, str):
                out.append((msg, (*path, i)))
    return out


@frontend(FileKind.OPENAI_EVALS)
def parse_openai_evals(source: SourceFile, config: Config) -> OpenAIEvalsFacts:
    """Every spec's grader-prompt fields with positions; invalid YAML raises ParseError."""
    doc = load_yaml(source.text)
    facts = OpenAIEvalsFacts(path=source.rel, kind=FileKind.OPENAI_EVALS.value)
    if not isinstance(doc.data, dict):
        return facts
    if "prompt" in doc.data:  # the registry's layout: one spec per file, named by the file
        entries: list[tuple[str, Any, PathT]] = [(source.path.stem, doc.data, ())]
    else:
        entries = [(str(k), v, (str(k),)) for k, v in doc.data.items()]
    for key, body, at in entries:
        if not isinstance(body, dict) or "prompt" not in body:
            continue
        spec = GradedSpec(key, doc.keys.get(at, Pos(1, 1)))
        for text, path in _texts(doc, (*at, "prompt")):
            base = doc.values.get(path, spec.pos)
            first = doc.text_line(*path) or base.line
            shift = 1 if path in doc.quoted else 0
            column = 1 if path in doc.body_lines else base.column + shift
            spec.fields += format_fields(text, first, column)
        io = body.get("input_outputs")
        if isinstance(io, dict):
            spec.mapped = [str(x) for kv in io.items() for x in kv]
        facts.specs.append(spec)
    return facts
