"""EL401, EL402, EL304 on an evaluator agent's front matter, as exact line edits.

The front matter is read again from the current text (strict YAML, else the lenient reading
the agent front-end uses), so a fix is computed on what the file says now, and each edit
replaces whole ``key: value`` entries, leaving every other line as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from evallint.findings import Finding
from evallint.fixing import Fix, TextEdit, fixer, line_offsets
from evallint.frontend import ParseError
from evallint.frontends.agents_front import AGENT_KEYS, tool_list
from evallint.marks import Doc, lenient_front_matter, load_yaml, split_front_matter

READ_ONLY = "Read, Grep, Glob"  # the rule's documented allow-list for a judge
TOOL_KEYS = ("tools", "allowed-tools", "allowedTools")
DENY_KEYS = ("disallowedTools", "disallowed-tools", "disallowed_tools")


@dataclass
class _Front:
    """The front matter of one agent file: its document and where its lines are."""

    doc: Doc
    lines: list[str]  # the file's lines, with their endings
    starts: list[int]  # offset of each line
    close: int  # 1-based line of the closing '---'
    newline: str


def _front(text: str) -> _Front | None:
    split = split_front_matter(text)
    if split is None:
        return None
    yaml_text, first, body = split
    try:
        doc = load_yaml(yaml_text, line_offset=first - 1)
    except ParseError:
        lenient = lenient_front_matter(yaml_text, first, AGENT_KEYS)
        if lenient is None:
            return None
        doc = lenient
    if not isinstance(doc.data, dict):
        return None
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    return _Front(doc, lines, line_offsets(text), body - 1, newline)


def _entry(front: _Front, key: str) -> tuple[int, int] | None:
    """Offsets of the whole ``key:`` entry (its line and the indented or ``-`` lines under
    it), for a top-level key written at the start of its line."""
    pos = front.doc.keys.get((key,))
    if pos is None or pos.column != 1:
        return None
    last = pos.line
    nxt = pos.line + 1
    while nxt < front.close:
        raw = front.lines[nxt - 1]
        if raw.strip() and not raw[0].isspace() and not raw.startswith("-"):
            break
        if raw.strip():
            last = nxt
        nxt += 1
    start = front.starts[pos.line - 1]
    end = front.starts[last - 1] + len(front.lines[last - 1])
    return start, end


def _value(text: str) -> str:
    """A tools string as a YAML scalar: plain when it reads back the same, else quoted."""
    if re.search(r":\s|\s#|^[\[\]{}&*!|>'\"%@`,?-]", text):
        return json.dumps(text)
    return text


def _key_of(front: _Front, keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if k in front.doc.data), None)


@fixer("EL402")
def add_tools(finding: Finding, text: str) -> Fix | None:
    """Give an evaluator agent a read-only ``tools:`` line (or fill in an empty one)."""
    front = _front(text)
    if front is None:
        return None
    key = _key_of(front, TOOL_KEYS)
    line = f"tools: {READ_ONLY}{front.newline}"
    if key is not None:
        if tool_list(front.doc, (key,)):
            return None  # the file has tools now
        span = _entry(front, key)
        if span is None:
            return None
        edit = TextEdit(span[0], span[1], f"{key}: {READ_ONLY}{front.newline}")
    else:
        model = front.doc.keys.get(("model",))
        at = model.line if model is not None and model.column == 1 else front.close
        edit = TextEdit(front.starts[at - 1], front.starts[at - 1], line)
    return Fix("EL402", f"Add 'tools: {READ_ONLY}' to the evaluator agent", True, (edit,))


@fixer("EL401")
def drop_write_tools(finding: Finding, text: str) -> Fix | None:
    """Remove the write/exec tools from an evaluator's allow-list, or complete its deny-list.

    Unsafe: someone listed those tools, and the agent may need them for what it does."""
    from evallint.checks.agents import CORE_WRITE, write_reason
    from evallint.registry import load_rules

    front = _front(text)
    if front is None:
        return None
    params = dict(load_rules()["EL401"].params)
    key = _key_of(front, TOOL_KEYS)
    deny = _key_of(front, DENY_KEYS)
    if key is not None and front.doc.keys.get((key,), None) is not None \
            and front.doc.keys[(key,)].line == finding.line:
        tools = tool_list(front.doc, (key,)) or []
        kept = [t.text for t in tools if write_reason(t, params) is None]
        if len(kept) == len(tools):
            return None
        value = ", ".join(kept) if kept else READ_ONLY
        title = "Drop the write/exec tools from the evaluator agent"
    elif deny is not None and key is None and front.doc.keys.get((deny,)) is not None \
            and front.doc.keys[(deny,)].line == finding.line:
        denied = tool_list(front.doc, (deny,)) or []
        names = {t.name for t in denied if t.spec is None}
        missing = [t for t in CORE_WRITE if t not in names]
        if not missing:
            return None
        value = ", ".join([t.text for t in denied] + missing)
        key = deny
        title = f"Deny {', '.join(missing)} to the evaluator agent"
    else:
        return None
    span = _entry(front, key)
    if span is None:
        return None
    edit = TextEdit(span[0], span[1], f"{key}: {_value(value)}{front.newline}")
    return Fix("EL401", title, False, (edit,))


_INHERIT = re.compile(r"^(?P<head>model[ \t]*:[ \t]*)(?P<q>[\"']?)inherit(?P=q)(?=[ \t]*(?:#|$))",
                      re.I)
_JUDGE = re.compile(r"^model: (?P<model>[\w.:/@-]+)$")


@fixer("EL304")
def judge_model(finding: Finding, text: str) -> Fix | None:
    """Replace ``model: inherit`` with the judge model the project configured (EL304's
    ``judge_model`` parameter, which the check puts in the finding's ``fix``).

    Unsafe: the judge then runs on another model, and its verdicts can change."""
    m = _JUDGE.match(finding.fix or "")
    if m is None:
        return None
    starts = line_offsets(text)
    if not 1 <= finding.line <= len(starts):
        return None
    begin = starts[finding.line - 1]
    end = starts[finding.line] if finding.line < len(starts) else len(text)
    hit = _INHERIT.match(text[begin:end].rstrip("\r\n"))
    if hit is None:
        return None
    quote = len(hit.group("q"))
    value = TextEdit(begin + hit.end("head") + quote, begin + hit.end() - quote,
                     m.group("model"))
    return Fix("EL304", f"Run the evaluator agent on {m.group('model')}", False, (value,))
