"""Prompt templates that live inside another file: a JSON string, a YAML scalar, a text file a
config names.

A template inside a JSON or YAML string is parsed as the decoded text (escapes resolved), and
every position is then mapped back to the line and column of the character in the file, so a
finding points at the placeholder the user sees, not at the start of the string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from evallint import globs
from evallint.config import Config
from evallint.facts import Pos, TemplateFacts
from evallint.frontend import ParseError
from evallint.frontends import prompt_files as pf
from evallint.frontends.template_text import TextMap, fenced_spans
from evallint.kinds import FileKind
from evallint.marks import Doc, PathT
from evallint.roles import Role, RoleInfo
from evallint.source import LineIndex

_SIMPLE = {"0": "\0", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r",
           "t": "\t", "\t": "\t", "v": "\v", '"': '"', "/": "/", "\\": "\\", " ": " ",
           "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_HEX = {"x": 2, "u": 4, "U": 8}


def decode_quoted(text: str, start: int) -> tuple[str, list[int]] | None:
    """Decode the JSON or YAML quoted string opening at ``start``, with the file offset of
    every decoded character (plus one for the closing quote); None when it is not one.

    JSON escapes are a subset of YAML's double-quoted ones; a YAML line break inside quotes
    folds to a space (an empty line to a newline).
    """
    if start >= len(text) or text[start] not in "\"'":
        return None
    quote = text[start]
    out: list[str] = []
    offs: list[int] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            if quote == "'" and i + 1 < n and text[i + 1] == "'":
                out.append("'")
                offs.append(i)
                i += 2
                continue
            offs.append(i)
            return "".join(out), offs
        if ch == "\\" and quote == '"' and i + 1 < n:
            esc = text[i + 1]
            if esc in _SIMPLE:
                out.append(_SIMPLE[esc])
                offs.append(i)
                i += 2
                continue
            if esc in _HEX:
                width = _HEX[esc]
                digits = text[i + 2:i + 2 + width]
                try:
                    code = int(digits, 16)
                except ValueError:
                    return None
                j = i + 2 + width
                if esc == "u" and 0xD800 <= code < 0xDC00 and text.startswith("\\u", j):
                    try:
                        low = int(text[j + 2:j + 6], 16)
                    except ValueError:
                        low = 0
                    if 0xDC00 <= low < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        j += 6
                try:
                    out.append(chr(code))
                except ValueError:
                    return None
                offs.append(i)
                i = j
                continue
            if esc == "\n":  # an escaped line break: the break and the next indentation go
                i += 2
                while i < n and text[i] in " \t":
                    i += 1
                continue
            return None
        if ch == "\n":  # YAML folding inside quotes
            while out and out[-1] in " \t" and offs:
                out.pop()
                offs.pop()
            j = i + 1
            breaks = 0
            while j < n and text[j] in " \t\n":
                if text[j] == "\n":
                    breaks += 1
                j += 1
            if breaks:
                out.extend("\n" * breaks)
                offs.extend([i] * breaks)
            else:
                out.append(" ")
                offs.append(i)
            i = j
            continue
        out.append(ch)
        offs.append(i)
        i += 1
    return None


@dataclass
class Locator:
    """Maps a position in a decoded text to the position of that character in the file."""

    text_index: LineIndex
    offsets: list[int]  # file offset of each decoded character, and one past the end
    file_index: LineIndex
    fallback: Pos

    def __call__(self, pos: Pos) -> Pos:
        if not self.offsets:
            return self.fallback
        i = self.text_index.offset(pos.line, pos.column)
        raw = self.offsets[max(0, min(i, len(self.offsets) - 1))]
        line, col = self.file_index.pos(raw)
        return Pos(line, col)


def identity(pos: Pos) -> Pos:
    return pos


def string_locator(file_text: str, file_index: LineIndex, start: int,
                   value: str) -> tuple[str, Callable[[Pos], Pos]]:
    """The decoded text of the JSON/YAML quoted string at ``start`` and its locator.

    The text returned has ``\\r\\n`` folded to ``\\n`` (what the template parsers see); when
    the raw text cannot be decoded to ``value``, every position maps to the string's start.
    """
    line, col = file_index.pos(start)
    fallback = Pos(line, col)
    got = decode_quoted(file_text, start)
    if got is None or got[0] != value:
        return _normalized(value), lambda _p: fallback
    text, offs = got
    return _fold(text, offs, file_index, fallback)


def scalar_locator(file_text: str, file_index: LineIndex, doc: Doc, path: PathT,
                   value: str) -> tuple[str, Callable[[Pos], Pos]]:
    """Decoded text and locator of a YAML string scalar at ``path`` (quoted, literal block or
    plain); a folded or otherwise unmappable scalar maps every position to its start."""
    vpos = doc.values.get(path) or doc.pos(*path) or Pos(1, 1)
    start = file_index.offset(vpos.line, vpos.column)
    if path in doc.quoted:
        return string_locator(file_text, file_index, start, value)
    body = doc.body_lines.get(path)
    if body is not None:
        located = _block(file_text, file_index, body, value)
        if located is not None:
            return located
        return _normalized(value), lambda _p: vpos
    if file_text.startswith(value, start):
        return _fold(value, [start + i for i in range(len(value) + 1)], file_index, vpos)
    return _normalized(value), lambda _p: vpos


def _block(file_text: str, file_index: LineIndex, body_line: int,
           value: str) -> tuple[str, Callable[[Pos], Pos]] | None:
    """A literal block scalar: decoded line k is file line ``body_line + k`` after the
    indentation; None when the file lines do not spell the value (a folded ``>`` block)."""
    lines = file_text.split("\n")
    wanted = value.split("\n")
    indent: int | None = None
    offs: list[int] = []
    for k, text_line in enumerate(wanted):
        idx = body_line - 1 + k
        if text_line == "" and k == len(wanted) - 1 and k:
            offs.append(offs[-1] if offs else 0)  # the final newline a `|` block keeps
            break
        if idx >= len(lines):
            return None
        raw = lines[idx].rstrip("\r")
        if indent is None and raw.strip():
            indent = len(raw) - len(raw.lstrip(" "))
        ind = indent or 0
        if raw[ind:] != text_line and not (not text_line and not raw.strip()):
            return None
        start = file_index.offset(idx + 1, 1) + ind
        offs.extend(start + c for c in range(len(text_line) + 1))
    vpos = Pos(body_line, (indent or 0) + 1)
    text = "\n".join(wanted)
    while len(offs) < len(text) + 1:
        offs.append(offs[-1] if offs else 0)
    return text, Locator(LineIndex(text), offs[:len(text) + 1], file_index, vpos)


def _normalized(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _fold(text: str, offs: list[int], file_index: LineIndex,
          fallback: Pos) -> tuple[str, Callable[[Pos], Pos]]:
    """Drop the ``\\r`` of ``\\r\\n`` (and turn a lone ``\\r`` into ``\\n``) in step with the
    offsets, as the template parsers do."""
    if "\r" in text:
        chars: list[str] = []
        new: list[int] = []
        for i, ch in enumerate(text):
            if ch == "\r":
                if i + 1 < len(text) and text[i + 1] == "\n":
                    continue
                ch = "\n"
            chars.append(ch)
            new.append(offs[i])
        new.append(offs[len(text)] if len(offs) > len(text) else (new[-1] if new else 0))
        text, offs = "".join(chars), new
    return text, Locator(LineIndex(text), offs, file_index, fallback)


# ---------------------------------------------------------------------------- prompt facts

_LINE_NOTE = re.compile(r"\(line (\d+)\)")


def prompt_from_text(path: str, text: str, locate: Callable[[Pos], Pos], config: Config, *,
                     name: str, role: RoleInfo | None = None,
                     extra_contract: list[str] | None = None,
                     name_is: str = "file name") -> pf.PromptFileFacts:
    """PromptFacts for one template text found inside ``path``.

    ``name`` stands in for the file name in role inference (a record's or a key's name);
    ``role`` is the role the surrounding config states, if any; positions go through
    ``locate`` (text position -> file position). A template that does not parse keeps its
    error and no variables: one bad record never hides the others.
    """
    folder = str(PurePosixPath(path).parent)
    pseudo = f"{folder}/{name}" if folder not in ("", ".") else name
    facts = pf.PromptFileFacts(path=pseudo, kind=FileKind.PROMPT.value)
    try:
        # The dialect comes from the text ({var}, {{ var }}, {$var}) or a template's extension.
        facts.template = pf._parse_body(pseudo, text, {})
    except ParseError as exc:
        facts.template = TemplateFacts(dialect="none", error=exc.message,
                                       error_pos=Pos(exc.line, exc.column))
    tmap = TextMap.of(text)
    facts.sections = pf._sections(text, tmap, fenced_spans(text))
    facts.contract_keys = pf._contract_keys(text, {}) + list(extra_contract or [])
    facts.role = role if role is not None else _role(facts, path, text, tmap, config)
    if name_is != "file name":
        facts.role.evidence = [e.replace("file name token", f"{name_is} token")
                               for e in facts.role.evidence]
    if facts.role.is_evaluator:
        facts.subjects = list(dict.fromkeys(
            pf.evaluated_subjects(text) + pf.labelled_subjects(facts, text)
            + pf.process_subjects(facts, text)))
        facts.conversation = pf.conversation_inputs(facts, text)
        facts.references = pf.reference_names(text, facts.template)
    pf._find_batch(facts, text, tmap)
    facts.path = path
    relocate(facts, locate)
    return facts


def _role(facts: pf.PromptFileFacts, path: str, text: str, tmap: TextMap,
          config: Config) -> RoleInfo:
    """Config roles on the real file first, then the shared prompt evidence on the name."""
    rel = config.root_relative(path)
    for pattern, role in config.roles.items():
        if globs.match(rel, pattern):
            return RoleInfo(Role(role), [f"config roles: '{pattern}' = {role}"], explicit=True)
    return pf.infer_role(facts, text, tmap, config)


def relocate(facts: pf.PromptFileFacts, locate: Callable[[Pos], Pos]) -> None:
    """Move every position of ``facts`` from text coordinates to file coordinates."""
    if locate is identity:
        return
    t = facts.template
    for var in t.variables:
        var.pos = locate(var.pos)
    for ref in t.refs:
        ref.pos = locate(ref.pos)
    if t.error_pos is not None:
        t.error_pos = locate(t.error_pos)
    for sec in facts.sections:
        sec.pos = locate(sec.pos)
    if facts.batch_pos is not None:
        facts.batch_pos = locate(facts.batch_pos)
    facts.role.evidence = [
        _LINE_NOTE.sub(lambda m: f"(line {locate(Pos(int(m.group(1)), 1)).line})", note)
        for note in facts.role.evidence
    ]
    facts.body_start_line = locate(Pos(1, 1)).line
