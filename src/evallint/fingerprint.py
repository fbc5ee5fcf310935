"""A finding's identity without its position: what baselines record and SARIF's
``partialFingerprints`` carry, so that an edit elsewhere in a file never makes an old finding
look new.

A fingerprint is a hash of four parts:

- the rule code;
- the file, as the finding names it;
- the message with its positions taken out (:func:`normalise_message`): ``raw_loop.py:38``
  becomes ``raw_loop.py:#``, ``line 12`` becomes ``line #``, and so do ``column``, ``cell``,
  ``char`` and ``offset`` numbers; names (``gpt-4o``, ``claude-3-5``, ``EL201``), counts and
  values (``max_attempts is 25``) stay;
- the context (:data:`Print.context`): a hash of the finding's own line with its whitespace
  collapsed, and an occurrence counter, so that two findings alike in code, message and line
  text get different fingerprints (the first, the second... in the order of the file).

The neighbouring lines are left out on purpose. A line added right above a flagged line, or an
edit on the next one, is as unrelated to the finding as an edit fifty lines away, and a
baseline must survive both; what the finding is about is already in its code, its message
(which names the variable, the call, the model) and its own line. Identical lines are told
apart by the counter, which counts findings, not lines, so that copying an unflagged line that
happens to equal a flagged one does not move the counter either.

Related locations are left out as well: they are often in another file, and an edit there (a
line added above the generator's call) must not bring the finding back; what they are is named
in the message already.

Each file is read once, bounded by ``max-file-size`` and only inside the run's roots; a file
that cannot be read (gone, too large, outside) gets a context from the rest alone. In a
notebook, the line is the line of the finding's code cell.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evallint.confine import inside_any
from evallint.findings import Finding
from evallint.source import DEFAULT_MAX_BYTES, read_bounded

if TYPE_CHECKING:
    from evallint.pyflow.notebook import JoinedNotebook

SCHEME = "evallint/v1"  # the partialFingerprints key; bump it when the recipe changes

# ``name.ext:12``, ``name.ext:12:5``, ``name.ipynb:cell 3:4``: a file reference with a line
# (the file's extension starts with a letter, so a model tag such as ``qwen2.5:7b`` or
# ``llama3.1:70b`` is not one, nor is ``openai:gpt-4o``).
_FILE_POS = re.compile(r"(\.[A-Za-z][\w-]*)(:cell \d+)?(:\d+)(:\d+)?(?!\w)")
# ``line 12``, ``lines 3-5``, ``column 7``, ``cell 3``, ``char 40``, ``offset 12``
_WORD_POS = re.compile(
    r"\b(line|lines|column|columns|col|cell|cells|char|offset)\s+\d+(?:\s*[-–]\s*\d+)?\b",
    re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def normalise_message(message: str) -> str:
    """``message`` with its positions taken out and its whitespace collapsed."""
    out = _FILE_POS.sub(lambda m: m.group(1) + (":cell #" if m.group(2) else "") + ":#"
                        + (":#" if m.group(4) else ""), message)
    out = _WORD_POS.sub(lambda m: m.group(1) + " #", out)
    return _SPACE.sub(" ", out).strip()


def without_own_name(message: str, path: str) -> str:
    """A normalised message with the finding's own file named ``<file>`` (its path, and its
    name when that has an extension): what stays the same when the file is renamed
    (``generated at raw_loop.py:#`` in ``raw_loop.py`` and ``generated at loop.py:#`` in
    ``loop.py`` are alike)."""
    if not path:
        return message
    out = message.replace(path, "<file>")
    name = path.rsplit("/", 1)[-1]
    if "." in name.lstrip("."):
        out = re.sub(r"(?<![\w./-])" + re.escape(name) + r"(?![\w/-])", "<file>", out)
    return out


def line_key(text: str) -> str:
    """A source line as the context hashes it: whitespace collapsed, ends stripped (a line
    that is indented again, or whose spacing changes, is the same line)."""
    return _SPACE.sub(" ", text).strip()


def _digest(*parts: str, size: int = 32) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:size]


@dataclass(frozen=True)
class Print:
    """A finding's fingerprint and the parts it is made of."""

    code: str
    path: str
    message: str  # normalised
    context: str  # "<hash of the line>:<occurrence>" ("-:<occurrence>": the line unknown)
    value: str  # the fingerprint: a hash of the four above


class Sources:
    """The lines of the files findings point at, each file read once: bounded by ``max_bytes``
    and only when its real path lies inside ``roots`` (default: the working folder).
    ``texts`` gives a file's bytes instead (standard input)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, roots: tuple[str, ...] | None = None,
                 texts: Mapping[str, bytes] | None = None) -> None:
        self.max_bytes = max_bytes
        self.roots = roots if roots is not None else (os.path.realpath(os.getcwd()),)
        self.texts = dict(texts or {})
        self._text: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}
        self._cells: dict[str, JoinedNotebook | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._text:
            self._text[path] = self._read(path)
        return self._text[path]

    def _read(self, path: str) -> str | None:
        data = self.texts.get(path)
        if data is None:
            if not path or not inside_any(path, self.roots):
                return None
            try:
                data = read_bounded(path, self.max_bytes)
            except (OSError, ValueError):
                return None
        if len(data) > self.max_bytes:
            return None
        return data.decode("utf-8-sig", "replace")

    def line(self, path: str, line: int, cell: int | None = None) -> str | None:
        """The text of 1-based ``line`` (of code cell ``cell`` in a notebook), or None."""
        if cell is not None:
            lines = self._cell_lines(path, cell)
        else:
            if path not in self._lines:
                text = self.text(path)
                self._lines[path] = ([] if text is None else
                                     text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
            lines = self._lines[path]
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]

    def _cell_lines(self, path: str, cell: int) -> list[str] | None:
        if path not in self._cells:
            self._cells[path] = None
            text = self.text(path)
            if text is not None:
                from evallint.frontend import ParseError
                from evallint.pyflow.notebook import join_cells

                with contextlib.suppress(ParseError, ValueError, RecursionError):
                    self._cells[path] = join_cells(text, self.max_bytes)
        nb = self._cells[path]
        if nb is None or not 0 < cell <= len(nb.starts):
            return None
        return nb.cell_code(cell).split("\n")


def fingerprints(findings: Iterable[Finding], sources: Sources | None = None) -> list[Print]:
    """The fingerprint of each finding, in the order given. The occurrence counter follows the
    findings' order in their file (:meth:`Finding.sort_key`), whatever the order given."""
    items = list(findings)
    src = sources or Sources()
    parts: list[tuple[str, str | None]] = []
    for f in items:
        text = src.line(f.path, f.line, f.cell)
        parts.append((normalise_message(f.message), None if text is None else line_key(text)))
    seen: Counter[tuple[str, str, str, str | None]] = Counter()
    contexts: dict[int, str] = {}
    for i in sorted(range(len(items)), key=lambda i: items[i].sort_key()):
        f = items[i]
        message, text = parts[i]
        seen[(f.code, f.path, message, text)] += 1
        line_hash = "-" if text is None else _digest(text, size=16)
        contexts[i] = f"{line_hash}:{seen[(f.code, f.path, message, text)]}"
    return [Print(f.code, f.path, parts[i][0], contexts[i],
                  _digest(SCHEME, f.code, f.path, parts[i][0], contexts[i]))
            for i, f in enumerate(items)]
