"""Jupyter notebooks: code cells joined into one module, with a map back to (cell, line).

Cells run top to bottom in one namespace, so data flows across cells; joining them keeps that.
IPython magics and shell escapes (``%time``, ``!pip``, ``x = !ls``) are replaced by ``pass``
with the same indentation; a ``%%`` cell magic blanks its whole cell. With automagic on (the
default) IPython also runs ``cd ..``, ``pip install x``, ``load_ext autoreload`` as magics: a
line that starts with a magic's name and is not valid Python is one too. A cell that still does
not parse is blanked by the front-end (:meth:`JoinedNotebook.blank`) and reported as a note.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass, field

from evallint import suppress
from evallint.facts import Pos
from evallint.frontend import ParseError

_MAGIC = re.compile(r"^(\s*)(?:[%!]|[\w.,\s\[\]]+=\s*[%!])")
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
        ast.parse(stripped)
    except SyntaxError:
        return line[: len(line) - len(line.lstrip())]
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


@dataclass
class JoinedNotebook:
    """The code of every code cell, joined; ``starts[i]`` is the joined line where cell i+1
    begins (code cells are numbered from 1 in their order in the notebook)."""

    code: str
    starts: list[int] = field(default_factory=list)
    suppressions: list[suppress.Suppression] = field(default_factory=list)
    language: str = "python"  # the kernel's language (kernelspec, language_info)

    def cell_code(self, cell: int) -> str:
        """The code of code cell ``cell`` (1-based) as joined (magics already ``pass``)."""
        lines = self.code.split("\n")
        first = self.starts[cell - 1] - 1
        last = self.starts[cell] - 1 if cell < len(self.starts) else len(lines)
        return "\n".join(lines[first:last]) + "\n"

    def blank(self, cell: int) -> None:
        """Empty code cell ``cell`` (1-based), keeping its line count so positions hold."""
        lines = self.code.split("\n")
        first = self.starts[cell - 1] - 1
        last = self.starts[cell] - 1 if cell < len(self.starts) else len(lines) - 1
        for i in range(first, min(last, len(lines))):
            lines[i] = ""
        self.code = "\n".join(lines)

    def pos(self, line: int, column: int) -> Pos:
        """Map a 1-based joined line and 0-based column to the cell and line a user sees."""
        cell = 0
        for i, start in enumerate(self.starts):
            if start <= line:
                cell = i
            else:
                break
        if not self.starts:
            return Pos(line, column + 1)
        return Pos(line - self.starts[cell] + 1, column + 1, cell + 1)


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


def join_cells(text: str) -> JoinedNotebook:
    """Parse notebook JSON and join its code cells; bad JSON raises ParseError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid notebook JSON: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells", []), list):
        raise ParseError("not a Jupyter notebook: no 'cells' list")
    out: list[str] = []
    joined = JoinedNotebook(code="", language=notebook_language(data))
    line = 1
    number = 0
    for cell in data.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        number += 1
        src = cell.get("source", "")
        if isinstance(src, list):
            src = "".join(s for s in src if isinstance(s, str))
        if not isinstance(src, str):
            src = ""
        joined.starts.append(line)
        joined.suppressions.extend(suppress.scan(src, cell=number))
        lines = src.splitlines() or [""]
        if lines[0].lstrip().startswith("%%"):
            lines = [""] * len(lines)
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
        line += len(lines)
    joined.code = "\n".join(out) + "\n"
    return joined
