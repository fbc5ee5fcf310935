"""Jupyter notebooks: code cells joined into one module, with a map back to (cell, line).

Cells run top to bottom in one namespace, so data flows across cells; joining them keeps that.
IPython magics and shell escapes (``%time``, ``!pip``, ``x = !ls``) are replaced by ``pass``
with the same indentation; a ``%%`` cell magic blanks its whole cell. With automagic on (the
default) IPython also runs ``cd ..``, ``pip install x``, ``load_ext autoreload`` as magics: a
line that starts with a magic's name and is not valid Python is one too. A cell that still does
not parse is blanked by the front-end (:meth:`JoinedNotebook.blank`) and reported as a note.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from bisect import bisect_right
from collections.abc import Callable

from evallint import suppress
from evallint.facts import Pos
from evallint.frontend import ParseError
from evallint.pyast import quiet_parse

# (the assigned names start with a non-blank, so the indent and the names never share a run of
# blanks; "  = %x", which matched with one blank as the names, is the last branch)
_MAGIC = re.compile(r"^(\s*)(?:[%!]|[\w.,\[\]][\w.,\s\[\]]*=\s*[%!]|\s=\s*[%!])")
# IPython's line magics and default shell aliases, callable without ``%`` (automagic)
AUTOMAGIC = frozenset({
    "alias", "autoawait", "autocall", "automagic", "autoreload", "bookmark", "cat", "cd",
    "clear", "colors", "conda", "config", "cp", "debug", "dhist", "dirs", "doctest_mode",
    "ed", "edit", "env", "gui", "hist", "history", "killbgscripts", "ldir", "less", "lf",
    "lk", "ll", "load", "load_ext", "loadpy", "logoff", "logon", "logstart", "logstate",
    "logstop", "ls", "lsmagic", "lx", "macro", "magic", "man", "matplotlib", "mkdir",
    "more", "mv", "notebook", "page", "pastebin", "pdb", "pdef", "pdoc", "pfile", "pinfo",
    "pinfo2", "pip", "popd", "pprint", "precision", "prun", "psearch", "psource", "pushd",
    "pwd", "pycat", "pylab", "qtconsole", "quickref", "recall", "rehashx", "reload_ext",
    "rep", "rerun", "reset", "reset_selective", "rm", "rmdir", "run", "save", "sc",
    "set_env", "store", "sx", "system", "tb", "time", "timeit", "unalias", "unload_ext",
    "uv", "who", "who_ls", "whos", "xdel", "xmode",
})
_AUTOMAGIC = re.compile(r"^(\s*)([A-Za-z_]\w*)(?:\s+(.*))?$")
# after the name: an assignment, a call, an attribute... is Python, not a magic
_PYTHON_REST = re.compile(r"^(?:=(?!=)|[(\[,:{;]|[-+*/|&]=)")


def automagic(line: str) -> str | None:
    """The indentation when ``line`` is an automagic (or ``obj?`` help) line, else None."""
    m = _AUTOMAGIC.match(line)
    stripped = line.strip()
    if m is not None and m.group(2) in AUTOMAGIC:
        rest = m.group(3) or ""
        if _PYTHON_REST.match(rest):
            return None
    elif not (stripped.endswith("?") and stripped.rstrip("?").replace(".", "").isidentifier()):
        return None
    try:
        quiet_parse(stripped)
    except SyntaxError:
        return line[: len(line) - len(line.lstrip())]
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


class JoinedNotebook:
    """The code of every code cell, joined; ``starts[i]`` is the joined line where cell i+1
    begins (code cells are numbered from 1 in their order in the notebook).

    Each cell's place in the code is kept (its first character), so that reading one cell,
    blanking one or mapping a position costs what that cell or a bisection costs, never a pass
    over the whole code: a notebook may hold hundreds of thousands of cells."""

    def __init__(self, code: str = "", starts: list[int] | None = None,
                 suppressions: list[suppress.Suppression] | None = None,
                 language: str = "python", offsets: list[int] | None = None) -> None:
        self.starts: list[int] = starts if starts is not None else []
        self.suppressions: list[suppress.Suppression] = (
            suppressions if suppressions is not None else [])
        self.language = language  # the kernel's language (kernelspec, language_info)
        self._base = code  # the joined code before any cell was blanked
        self._offsets = offsets if offsets is not None else _cell_offsets(code, self.starts)
        self._blanked: set[int] = set()
        self._code: str | None = code  # the code with the blanked cells emptied (built lazily)

    @property
    def code(self) -> str:
        """The joined code, every blanked cell an empty line per line it had."""
        if self._code is None:
            parts: list[str] = []
            at = 0
            for cell in sorted(self._blanked):
                first, last = self._span(cell)
                parts += (self._base[at:first], "\n" * self._lines(cell))
                at = last
            parts.append(self._base[at:])
            self._code = "".join(parts)
        return self._code

    def _span(self, cell: int) -> tuple[int, int]:
        """Where code cell ``cell`` (1-based) is in the code before blanking."""
        last = self._offsets[cell] if cell < len(self._offsets) else len(self._base)
        return self._offsets[cell - 1], last

    def _lines(self, cell: int) -> int:
        first, last = self._span(cell)
        return self._base.count("\n", first, last)

    def cell_code(self, cell: int) -> str:
        """The code of code cell ``cell`` (1-based) as joined (magics already ``pass``)."""
        if cell in self._blanked:
            return "\n" * self._lines(cell)
        first, last = self._span(cell)
        return self._base[first:last]

    def blank(self, cell: int) -> None:
        """Empty code cell ``cell`` (1-based), keeping its line count so positions hold. The
        code is made again once, when next read: blanking many cells costs one pass."""
        if 0 < cell <= len(self._offsets) and cell not in self._blanked:
            self._blanked.add(cell)
            self._code = None

    def pos(self, line: int, column: int) -> Pos:
        """Map a 1-based joined line and 0-based column to the cell and line a user sees."""
        if not self.starts:
            return Pos(line, column + 1)
        cell = max(0, bisect_right(self.starts, line) - 1)
        return Pos(line - self.starts[cell] + 1, column + 1, cell + 1)


def _cell_offsets(code: str, starts: list[int]) -> list[int]:
    """The offset in ``code`` of each 1-based line in ``starts`` (increasing)."""
    out: list[int] = []
    line, at = 1, 0
    for start in starts:
        while line < start and at != -1:
            at = code.find("\n", at) + 1 or -1
            line += 1
        out.append(at if at != -1 else len(code))
    return out


def notebook_language(data: dict[str, object]) -> str:
    """The language a notebook's kernel runs (``python`` when the metadata does not say):
    ``kernelspec.language``, else ``language_info.name``."""
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return "python"
    for key, sub in (("kernelspec", "language"), ("language_info", "name")):
        table = meta.get(key)
        if isinstance(table, dict) and isinstance(table.get(sub), str) and table[sub].strip():
            return str(table[sub]).strip().lower()
    return "python"


# Kernel languages whose cells are not Python. Others (``python3``, ``ipython``, Python
# supersets such as ``coconut``, or a language evallint does not know) are read as Python:
# a cell that does not parse is then left out with a note, as in any notebook.
OTHER_LANGUAGES = frozenset({
    "typescript", "javascript", "r", "julia", "scala", "java", "kotlin", "groovy", "c", "c++",
    "cpp", "c#", "csharp", "f#", "fsharp", "go", "rust", "swift", "dart", "ruby", "perl",
    "php", "lua", "bash", "sh", "shell", "zsh", "powershell", "sql", "haskell", "ocaml",
    "clojure", "elixir", "erlang", "matlab", "octave", "wolfram language", "mathematica",
    "stata", "sas", "spss", "nim", "zig", "prolog", "racket", "scheme", "common lisp",
})


def is_python(language: str) -> bool:
    """Are this kernel's cells Python (or close enough to read as Python)?"""
    return language.strip().lower() not in OTHER_LANGUAGES


def _inner_lines(src: str) -> set[int]:
    """0-based lines of ``src`` that continue a multi-line string or an open bracket: a line
    there that reads like a magic (``who ...`` in a docstring, ``run for run in runs`` inside
    a call's parentheses) is not a statement, so not a magic. Tokenizing stops quietly where
    the cell stops being Python (a magic IPython would rewrite): what was seen before still
    counts."""
    inside: set[int] = set()
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0], tok.end[0]))  # rows are 1-based
            elif tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth = max(0, depth - 1)
            elif tok.type == tokenize.NL and depth:
                inside.add(tok.start[0])  # the next line (row + 1, counted from 0)
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return inside


def _magic_indent(line: str) -> str | None:
    """The indentation of a line magic, shell escape or automagic line, else None. Most
    lines are none: a magic holds ``%`` or ``!``, an automagic line starts with a magic's
    name or ends with ``?``, which plain tests find before any pattern is tried."""
    if "%" in line or "!" in line:
        m = _MAGIC.match(line)
        if m:
            return m.group(1)
    words = line.split(None, 1)
    if not words or (words[0] not in AUTOMAGIC and not line.rstrip().endswith("?")):
        return None
    return automagic(line)


def _cell_lines(src: str) -> list[str]:
    """A code cell's lines as joined: magics and shell escapes ``pass``, a ``%%`` cell empty."""
    lines = src.splitlines() or [""]
    if lines[0].lstrip().startswith("%%"):
        return [""] * len(lines)
    out: list[str] = []
    cont = False  # a magic's line ended with a backslash: IPython joins the next line
    inner: set[int] | None = None  # tokenized only for a cell with a magic-like line
    for i, raw in enumerate(lines):
        if cont:
            out.append("")
            cont = raw.rstrip().endswith("\\")
            continue
        indent = _magic_indent(raw)
        if indent is not None:
            if inner is None:
                inner = _inner_lines(src)
            if i in inner:  # "who can re-route..." in a docstring, "run for run" in a call
                indent = None
        if indent is not None:
            out.append(f"{indent}pass")
            cont = raw.rstrip().endswith("\\")
        else:
            out.append(raw)
    return out


class _Joiner:
    """Code cells joined one by one as they are read; past ``limit`` bytes of joined code the
    notebook is not analysed (ParseError), before anything more of it is read."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.reset()

    def reset(self) -> None:
        """Forget the cells read (a later ``cells`` key replaces an earlier one, as in
        ``json.loads``)."""
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.offsets: list[int] = []
        self.suppressions: list[suppress.Suppression] = []
        self.line = 1
        self.size = 0  # bytes of joined code (UTF-8)
        self.chars = 0

    def add(self, cell: object) -> None:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            return
        number = len(self.starts) + 1
        src = cell.get("source", "")
        if isinstance(src, list):
            src = "".join(s for s in src if isinstance(s, str))
        if not isinstance(src, str):
            src = ""
        self.starts.append(self.line)
        self.offsets.append(self.chars)
        self.suppressions.extend(suppress.scan(src, cell=number))
        lines = _cell_lines(src)
        part = "\n".join(lines) + "\n"
        self.parts.append(part)
        self.line += len(lines)
        self.chars += len(part)
        self.size += len(part) if part.isascii() else len(part.encode("utf-8", "surrogatepass"))
        if self.limit is not None and self.size > self.limit:
            raise ParseError(  # the cells after are not read: the total is not known
                f"the notebook's code cells hold more than the {self.limit:,}-byte limit "
                f"(max-file-size): {self.size:,} bytes in its first {number:,} code cells; "
                "not analysed")

    def joined(self, language: str) -> JoinedNotebook:
        code = "".join(self.parts) if self.parts else "\n"
        self.parts = []
        return JoinedNotebook(code, self.starts, self.suppressions, language, self.offsets)


# Reading a notebook keeps only what is analysed: the JSON is walked key by key of the
# top-level object and cell by cell of its ``cells`` list (``raw_decode`` of one value at a
# time), so that a cell's dict and its outputs are dropped once read and the decoded tree of
# the whole notebook (several times its size on disk) is never held. The walk raises the
# errors ``json.loads`` would, at the same places.
_WS = re.compile(r"[ \t\n\r]*")
_DECODE = json.JSONDecoder().raw_decode


def _ws(text: str, at: int) -> int:
    m = _WS.match(text, at)
    return m.end() if m is not None else at


def _value(text: str, at: int) -> int:
    """Read (and drop) the JSON value at ``at``; the index after it."""
    return _DECODE(text, at)[1]


def _array(text: str, at: int, element: Callable[[str, int], int]) -> int:
    """Walk the JSON array at ``text[at] == '['``: ``element(text, i)`` reads the element at
    ``i`` and returns the index after it. The index after the array."""
    at = _ws(text, at + 1)
    if text.startswith("]", at):
        return at + 1
    while True:
        at = _ws(text, element(text, at))
        if text.startswith("]", at):
            return at + 1
        if not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _ws(text, at + 1)


def _object(text: str, at: int, member: Callable[[str, int], int]) -> int:
    """Walk the JSON object at ``text[at] == '{'``: ``member(key, i)`` reads the value at ``i``
    and returns the index after it. The index after the object."""
    at = _ws(text, at + 1)
    if text.startswith("}", at):
        return at + 1
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes",
                                       text, at)
        key, at = _DECODE(text, at)
        at = _ws(text, at)
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _ws(text, member(key, _ws(text, at + 1)))
        if text.startswith("}", at):
            return at + 1
        if not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _ws(text, at + 1)


def _skip(text: str, at: int) -> int:
    """Read (and drop) the JSON value at ``at`` one element or member at a time when it is
    an array or an object; the index after it."""
    if text.startswith("[", at):
        return _array(text, at, _value)
    if text.startswith("{", at):
        return _object(text, at, lambda _key, i: _value(text, i))
    return _value(text, at)


def _end(text: str, at: int) -> None:
    at = _ws(text, at)
    if at != len(text):
        raise json.JSONDecodeError("Extra data", text, at)


def join_cells(text: str, limit: int | None = None) -> JoinedNotebook:
    """Read notebook JSON and join its code cells; bad JSON raises ParseError. ``limit``: the
    most bytes of joined code analysed (max-file-size); past it, a ParseError, raised as soon
    as the cells read so far pass it."""
    try:
        return _join(text, limit)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid notebook JSON: {exc.msg}", exc.lineno, exc.colno) from None


def _join(text: str, limit: int | None) -> JoinedNotebook:
    if text.startswith("\ufeff"):  # as json.loads
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    joiner = _Joiner(limit)
    at = _ws(text, 0)
    if not text.startswith("{", at):  # JSON, but not a notebook (read one element at a time)
        _end(text, _skip(text, at))
        raise ParseError("not a Jupyter notebook: no 'cells' list")
    cells_ok = True
    meta: dict[str, object] | None = None

    def cell(text: str, at: int) -> int:
        value, end = _DECODE(text, at)
        joiner.add(value)
        return int(end)

    def top(key: str, at: int) -> int:
        nonlocal cells_ok, meta
        if key == "cells":
            joiner.reset()
            cells_ok = text.startswith("[", at)
            return _array(text, at, cell) if cells_ok else _value(text, at)
        if key == "metadata":
            if not text.startswith("{", at):
                meta = None
                return _value(text, at)
            found: dict[str, object] = {}

            def kernel(key: str, at: int) -> int:  # only what names the kernel's language
                if key not in ("kernelspec", "language_info"):
                    return _value(text, at)
                found[key], end = _DECODE(text, at)
                return int(end)

            end = _object(text, at, kernel)
            meta = found
            return end
        return _skip(text, at)

    _end(text, _object(text, at, top))
    if not cells_ok:
        raise ParseError("not a Jupyter notebook: no 'cells' list")
    language = notebook_language({"metadata": meta}) if meta is not None else "python"
    return joiner.joined(language)
