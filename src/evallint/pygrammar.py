"""Python source of any grammar from 3.8 to 3.14 as an ``ast`` tree, on any interpreter >= 3.10.

``parse_module(code)`` is ``ast.parse(code)`` for every file the running interpreter can read.
Only when it raises SyntaxError, the source is parsed with libcst (imported then, never at
start-up), which reads the grammar of every version up to 3.14; if libcst accepts it, the
constructs newer than the interpreter are rewritten, in the text, into older syntax that means
the same to the analysis, and that text is parsed by ``ast``:

========================================  ==========  ========================================
construct                                 new in      rewritten as
========================================  ==========  ========================================
``except* E:``                            3.11        ``except  E:`` (the star becomes a blank)
``x[*Ts]``, ``*args: *Ts``                3.11        ``x[ Ts]``, ``*args:  Ts`` (the same)
``def f[T](x)``, ``class C[T]:``          3.12        ``def f(x)``, ``class C:``
``type X[T] = list[T]``                   3.12        ``X = list[T]``
f-strings of PEP 701 (nested quotes,      3.12        the same f-string in the old grammar:
comments, backslashes, newlines, any                  nested strings re-quoted, a triple quote
depth)                                                when a field spans lines, comments and
                                                      line continuations in fields dropped
``[T = int]`` (a type parameter default)  3.13        ``[T]`` (dropped with the list before 3.12)
``except A, B:``                          3.14        ``except (A, B):``
``t"..."`` (a template string)            3.14        ``f"..."``
========================================  ==========  ========================================

An f-string stays an f-string (a ``JoinedStr``, its literals intact: ``state["topic"]`` is read
as ``state['topic']``). Where the old grammar cannot write a nested string at all (a backslash
escape inside a field, such as ``"\\n".join(...)``; more levels of nesting than four quote kinds
allow; a format spec nested three deep), that one string is written as an expression of the same
value: ``chr(10)`` for the characters no literal may hold there, ``+`` between the pieces, and a
nested f-string left without a quote as ``format(...)`` calls; see ``_Strings``.

Lines are never joined or split, so every line number is the file's own. Each edit is recorded
(line, original columns, replacement) and the columns of the tree's nodes on an edited line are
mapped back to the original text (``col_offset`` and ``end_col_offset``, UTF-8 bytes as ``ast``
gives them). A source libcst refuses too, or whose rewrite ``ast`` still refuses, raises the
interpreter's own SyntaxError, message and position unchanged; so does a source nested deeper
than libcst's native parser can take without crashing the process (``_too_deep``, a token scan
run first). The fallback costs a file about 17 times its ``ast.parse`` (0.12 s a 1,000 lines).
"""

from __future__ import annotations

import ast
import re
import sys
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from evallint.pyast import quiet_parse

# the newest grammar rewritten here: an interpreter at least as new needs no fallback
NEWEST = (3, 14)

_NEWLINE = re.compile(r"\r\n?|\n")
_QUOTES = ('"', "'", '"""', "'''")
_INF = 1 << 30
_DEGRADE = 1000  # the cost of writing a string as an expression (a changed quote costs 1)


def parse_module(code: str) -> ast.Module:
    """``ast.parse(code)``; a module in a grammar newer than the interpreter's is read through
    libcst (see the module's docstring). Raises what ``ast.parse`` raises."""
    try:
        return quiet_parse(code)
    except SyntaxError as err:
        return parse_newer(code, err)


def parse_newer(code: str, error: SyntaxError) -> ast.Module:
    """The tree of ``code``, which ``ast.parse`` refused with ``error``, read as the newer
    grammar it may be in; else ``error`` is raised again, as Python gave it."""
    if sys.version_info[:2] < NEWEST:
        rewritten = rewrite(code, sys.version_info[:2])
        tree = rewritten.parse() if rewritten is not None else None
        if tree is not None:
            return tree
    raise error


class Rewritten:
    """A source rewritten into an older grammar: ``code``, and the column map back."""

    def __init__(self, original: str, code: str,
                 edits: list[tuple[int, int, str]], alias_starts: dict[int, int]) -> None:
        self.original = original
        self.code = code
        self.edits = edits  # (start, end, text) on the original's character offsets, in order
        self._alias_starts = alias_starts  # offset of a type alias's name -> of its ``type``
        # line -> [(orig_start, orig_end, new_start, new_end)] in characters
        self.lines: dict[int, list[tuple[int, int, int, int]]] = {}
        self._line_edits()

    def _line_edits(self) -> None:
        starts = _line_starts(self.original)
        shift: dict[int, int] = {}  # line -> new minus original columns so far
        for start, end, text in self.edits:
            line = bisect_right(starts, start)
            col = start - starts[line - 1]
            olds = _NEWLINE.split(self.original[start:end])
            news = text.split("\n")
            for i, (old, new) in enumerate(zip(olds, news, strict=True)):
                ocol = col if i == 0 else 0
                delta = shift.get(line + i, 0)
                self.lines.setdefault(line + i, []).append(
                    (ocol, ocol + len(old), ocol + delta, ocol + delta + len(new)))
                shift[line + i] = delta + len(new) - len(old)

    def parse(self) -> ast.Module | None:
        """The tree of the rewritten code with the original's columns; None when ``ast``
        refuses it."""
        try:
            tree = quiet_parse(self.code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        self.fix_positions(tree)
        return tree

    def fix_positions(self, tree: ast.AST) -> None:
        if not self.lines:
            return
        old_lines = _NEWLINE.split(self.original)
        new_lines = _NEWLINE.split(self.code)
        cache: dict[tuple[int, int, bool], int] = {}

        def move(line: int, col: int, end: bool) -> int:
            key = (line, col, end)
            if key not in cache:
                new, old = new_lines[line - 1], old_lines[line - 1]
                chars = _char_col(new, col)
                mapped = _map_col(self.lines[line], chars, end)
                cache[key] = len(old[:mapped].encode("utf-8", "surrogatepass"))
            return cache[key]

        aliases = self._alias_columns(old_lines)
        for node in ast.walk(tree):
            line = getattr(node, "lineno", None)
            if line is None or not hasattr(node, "col_offset"):
                continue
            if line in self.lines:
                node.col_offset = move(line, node.col_offset, False)
            end_line = getattr(node, "end_lineno", None)
            end_col = getattr(node, "end_col_offset", None)
            if end_line in self.lines and end_col is not None:
                setattr(node, "end_col_offset", move(end_line, end_col, True))  # noqa: B010
            if aliases and isinstance(node, ast.Assign):
                # ``type X = int`` read as ``X = int``: the statement starts at ``type``
                at = aliases.get((line, node.col_offset))
                if at is not None:
                    node.col_offset = at

    def _alias_columns(self, old_lines: list[str]) -> dict[tuple[int, int], int]:
        if not self._alias_starts:
            return {}
        starts = _line_starts(self.original)
        out: dict[tuple[int, int], int] = {}
        for name_at, type_at in self._alias_starts.items():
            line = bisect_right(starts, name_at)
            text = old_lines[line - 1]
            col = len(text[:name_at - starts[line - 1]].encode("utf-8", "surrogatepass"))
            out[(line, col)] = len(text[:type_at - starts[line - 1]].encode(
                "utf-8", "surrogatepass"))
        return out


def rewrite(code: str, version: tuple[int, int]) -> Rewritten | None:
    """``code`` in the grammar of Python ``version`` (at least 3.10), or None: libcst refuses
    it, nothing in it is newer than ``version``, or a construct cannot be written for it."""
    if _too_deep(code):
        return None
    try:
        import libcst as cst
    except ImportError:  # pragma: no cover - a dependency
        return None
    limit = sys.getrecursionlimit()
    try:
        module = cst.parse_module(code)
        # (the codegen pass recurses over the tree: a few frames a level, DEPTH levels at most;
        # on Python 3.12 its fixed C recursion limit stops it near 750 levels: no rewrite)
        sys.setrecursionlimit(max(limit, 10 * DEPTH))
        found = _scan(module, version)
        edits = _Edits(code, version, found).all()
    except Exception:  # libcst's ParserSyntaxError; _GiveUp; a construct not known here
        return None
    except BaseException as exc:  # a panic in libcst's parser (pyo3's PanicException)
        if type(exc).__name__ != "PanicException":
            raise
        return None
    finally:
        sys.setrecursionlimit(limit)
    if not edits:
        return None
    edits.sort(key=lambda e: (e[0], e[1]))
    out: list[str] = []
    at = 0
    for start, end, text in edits:
        if start < at:  # overlapping edits: no safe rewrite
            return None
        out.append(code[at:start])
        out.append(text)
        at = end
    out.append(code[at:])
    return Rewritten(code, "".join(out), edits, found.alias_starts)


class _GiveUp(Exception):
    """A construct that cannot be written in the older grammar: the original error stands."""


# ---------------------------------------------------------------------------- the depth guard

# The deepest nesting read through libcst. Its native parser recurses on the machine stack and
# crashes the process (a segmentation fault, no exception) past a few thousand levels: about
# 3,300 ``lambda:``, 1,000 nested f-strings, 5,500 ``.attr`` or 7,000 unary operators on an
# 8 MiB stack. CPython itself refuses expressions past about 2,000 levels and brackets past
# 200 (MAXLEVEL), so a file this deep is no Python of any version: its own SyntaxError stands.
DEPTH = 1000
BRACKETS = 200

_CODE = re.compile(r"""
    (?P<cont>\\(?:\r\n?|\n))
  | (?P<nl>\r\n?|\n)
  | (?P<com>\#[^\r\n]*)
  | (?P<str>(?P<pre>[rRbBuUfFtT]{0,3})(?P<q>'''|\"\"\"|'|"))
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<sep>[,;])
  | (?P<colon>:(?!=))
  | (?P<op>\*\*|//|<<|>>|[<>=!]=|->|:=|[-+*/%@&|^~<>.!=]
      |\b(?:and|or|not|lambda|if|else|await|in|is|for|yield)\b)
  | \w+|[ \t\f]+|.
""", re.VERBOSE | re.DOTALL)
# the rest of a plain string after its opening quote (escapes skipped; a one-quote string that
# a line break ends before its quote is left there, as Python's tokenizer would refuse it)
_PLAIN = {
    "'": re.compile(r"(?:\\.|[^\\'\r\n])*'?", re.DOTALL),
    '"': re.compile(r'(?:\\.|[^\\"\r\n])*"?', re.DOTALL),
    "'''": re.compile(r"(?:\\.|[^\\']|'(?!''))*(?:'''|\Z)", re.DOTALL),
    '"""': re.compile(r'(?:\\.|[^\\"]|"(?!""))*(?:"""|\Z)', re.DOTALL),
}
# the literal text of an f-string: up to a field's brace, its closing quote or (one quote) the
# end of the line
_FTEXT = {
    "'": re.compile(r"(?:\\.|\{\{|\}\}|[^\\{}'\r\n])*", re.DOTALL),
    '"': re.compile(r'(?:\\.|\{\{|\}\}|[^\\{}"\r\n])*', re.DOTALL),
    "'''": re.compile(r"(?:\\.|\{\{|\}\}|[^\\{}']|'(?!''))*", re.DOTALL),
    '"""': re.compile(r'(?:\\.|\{\{|\}\}|[^\\{}"]|"(?!""))*', re.DOTALL),
}
_SPEC = re.compile(r"[^{}]*")


def _too_deep(code: str, limit: int = DEPTH) -> bool:
    """Could some expression of ``code`` nest deeper than ``limit``? A scan of its tokens (the
    f-strings of PEP 701 too: a field is code, where a quote starts a nested string) that
    counts, in each bracket, the operators, keywords, strings and brackets since its last comma,
    on top of the count where the bracket opened: never below the depth of the tree."""
    # frames: [kind, the count where it opened, the count in it since its last comma, quote]
    frames: list[list[Any]] = [["code", 0, 0, ""]]
    nest = 0  # brackets open, an f-string's fields included (as Python's tokenizer counts)
    at, end = 0, len(code)
    while at < end:
        if nest > BRACKETS:
            return True
        frame = frames[-1]
        kind = frame[0]
        if kind == "fstr":  # the literal text of an f-string
            at = _FTEXT[frame[3]].match(code, at).end()  # type: ignore[union-attr]
            if at >= end:
                break
            ch = code[at]
            if ch == "{":
                frames.append(["field", frame[1] + 1, 0, ""])
                nest += 1
                at += 1
            elif ch == "}":  # a lone brace (Python refuses it): read on as text
                at += 1
            elif ch in "\r\n":  # a one-quote f-string unterminated on its line
                frames.pop()
            else:
                frames.pop()
                at += len(frame[3])
            continue
        if kind == "spec":  # a format spec: text, and fields in braces
            at = _SPEC.match(code, at).end()  # type: ignore[union-attr]
            if at >= end:
                break
            if code[at] == "{":
                frames.append(["field", frame[1] + 1, 0, ""])
                nest += 1
            else:
                frames.pop()  # the spec, and the field it ends
                if frames[-1][0] == "field":
                    frames.pop()
                    nest -= 1
            at += 1
            continue
        m = _CODE.match(code, at)
        assert m is not None  # (its last branch matches any character)
        at = m.end()
        group = m.lastgroup
        if group is None or group in ("com", "cont"):
            continue
        if group == "nl":
            if len(frames) == 1:  # the end of a statement
                frame[2] = 0
            continue
        if group == "sep":
            frame[2] = 0
            continue
        if group == "close":
            if (kind == "field" and m.group() == "}") or (kind == "code" and len(frames) > 1):
                frames.pop()
                nest -= 1
            continue
        if group == "colon":
            if kind == "field":
                frames.append(["spec", frame[1] + frame[2], 0, ""])
            continue
        frame[2] += 1
        depth = frame[1] + frame[2]
        if depth > limit:
            return True
        if group == "open":
            frames.append(["code", depth, 0, ""])
            nest += 1
        elif group == "str":
            quote = m.group("q")
            if {"f", "t"} & set(m.group("pre").lower()):
                frames.append(["fstr", depth, 0, quote])
            else:
                at = _PLAIN[quote].match(code, at).end()  # type: ignore[union-attr]
    return False


# ---------------------------------------------------------------------------- positions

def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def _char_col(line: str, byte_col: int) -> int:
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", "ignore"))


def _map_col(edits: list[tuple[int, int, int, int]], col: int, end: bool) -> int:
    """A column of the rewritten line -> the original's. Inside a replacement: its start (for
    a node's start) or its end (for a node's end); a start where text was deleted is after it,
    an end there before it."""
    delta = 0
    for ostart, oend, nstart, nend in edits:
        if (col <= nstart) if end else (col < nstart):
            return col - delta
        if (col <= nend) if end else (col < nend):
            return oend if end else ostart
        delta = nend - oend
    return col - delta


# ---------------------------------------------------------------------------- the scan

class _Found:
    """What one codegen pass over the libcst tree found, with character offsets."""

    def __init__(self) -> None:
        self.spans: dict[int, tuple[int, int]] = {}  # id(node) -> whitespace-inclusive span
        self.syn: dict[int, tuple[int, int]] = {}  # id(node) -> span without parentheses
        self.strings: list[tuple[Any, Any]] = []  # (string node, enclosing f/t-string or None)
        # id(part) -> the implicit concatenation (``"a" "b"``) it is a part of, inside fields
        self.concat_of: dict[int, Any] = {}
        self.field_noise: list[Any] = []  # comments and line continuations inside fields
        self.statements: list[Any] = []  # nodes of the statement-level constructs
        self.alias_starts: dict[int, int] = {}


_STATE_CLASS: Any = None


def _state_class() -> Any:
    """A libcst codegen state that only counts characters, and records the offsets of the
    nodes the rewrite reads (libcst's own PositionProvider records line and column for every
    node, several times slower: the fallback would cost a file far more than its parse)."""
    global _STATE_CLASS
    if _STATE_CLASS is not None:
        return _STATE_CLASS
    import libcst as cst
    from libcst._nodes.internal import CodegenState

    fstrings = (cst.FormattedString, cst.TemplatedString)
    strings = (cst.SimpleString, *fstrings)
    parts = (cst.FormattedStringText, cst.TemplatedStringText, cst.FormattedStringExpression,
             cst.TemplatedStringExpression)

    class OffsetState(CodegenState):
        def __init__(self, module: Any, version: tuple[int, int], found: _Found) -> None:
            super().__init__(default_indent=module.default_indent,
                             default_newline=module.default_newline)
            self.offset = 0
            self.found = found
            self.version = version
            self.want: set[int] = set()
            self.pending: list[tuple[Any, int]] = []
            self.open: list[Any] = []  # the f/t-strings being generated, outermost first
            self.old_fstrings = version < (3, 12)
            # before 3.12 every string (the f-strings and what they nest); then t-strings only
            self.strings = strings if self.old_fstrings else (cst.TemplatedString,)
            self.kinds = {*self.strings, cst.ConcatenatedString, cst.FunctionDef, cst.ClassDef,
                          cst.TypeAlias, cst.ExceptHandler}
            if version < (3, 11):
                self.kinds.update((cst.ExceptStarHandler, cst.Index, cst.Annotation))

        def add_indent_tokens(self) -> None:
            for token in self.indent_tokens:
                self.offset += len(token)

        def add_token(self, value: str) -> None:
            self.offset += len(value)

        def pop_trailing_newline(self) -> None:
            pass  # the end of the module: no offset is taken after it

        @contextmanager
        def record_syntactic_position(self, node: Any, *, start_node: Any = None,
                                      end_node: Any = None) -> Iterator[None]:
            if type(node) in self.strings or id(node) in self.want:
                start = self.offset
                yield
                self.found.syn[id(node)] = (start, self.offset)
            else:
                yield

        def before_codegen(self, node: Any) -> None:
            kind = type(node)
            if (kind in self.kinds or self.open or id(node) in self.want) and self._wanted(
                    node, kind):
                self.pending.append((node, self.offset))

        def after_codegen(self, node: Any) -> None:
            if self.pending and self.pending[-1][0] is node:
                _, start = self.pending.pop()
                self.found.spans[id(node)] = (start, self.offset)
            if self.open and self.open[-1] is node:
                self.open.pop()

        def _wanted(self, node: Any, kind: Any) -> bool:
            if kind in self.strings:
                if self.old_fstrings:
                    self.found.strings.append((node, self.open[-1] if self.open else None))
                    if kind in fstrings:
                        self.open.append(node)
                else:
                    self.found.strings.append((node, None))
                return True
            if self.open:
                if kind is cst.ConcatenatedString:
                    self.found.concat_of[id(node.left)] = node
                    self.found.concat_of[id(node.right)] = node
                    self.want.add(id(node))
                    return True
                if kind in parts:
                    if kind in (cst.FormattedStringExpression, cst.TemplatedStringExpression):
                        self.want.add(id(node.expression))
                        if node.equal is not None:
                            self.want.add(id(node.equal))
                    return True
                if self.old_fstrings and (kind is cst.Comment or (
                        kind is cst.SimpleWhitespace and "\\" in node.value)):
                    self.found.field_noise.append(node)
                    return True
            if id(node) in self.want:
                return True
            return self._statement(node, kind)

        def _statement(self, node: Any, kind: Any) -> bool:
            version = self.version
            if kind in (cst.FunctionDef, cst.ClassDef, cst.TypeAlias):
                params = node.type_parameters
                if kind is cst.TypeAlias and version < (3, 12):
                    self.found.statements.append(node)
                    self.want.add(id(node.name))
                    if params is not None:
                        self.want.add(id(params))
                    return True
                if params is not None and version < (3, 13):
                    self.found.statements.append(node)
                    self.want.add(id(params))
                    if version < (3, 12) and kind is not cst.TypeAlias:
                        ws = node.whitespace_after_type_parameters
                        self.want.add(id(ws))
                        lpar = getattr(node, "lpar", None)
                        if isinstance(lpar, cst.LeftParen):
                            self.want.add(id(lpar))
                    elif version >= (3, 12):
                        for param in params.params:
                            if param.default is not None:
                                self.want.update((id(param.param), id(param.default)))
                return False
            if kind is cst.ExceptHandler and version < (3, 14):
                typ = node.type
                if isinstance(typ, cst.Tuple) and not typ.lpar:
                    self.found.statements.append(node)
                    self.want.add(id(typ))
                return False
            if version < (3, 11):
                if kind is cst.ExceptStarHandler:
                    self.found.statements.append(node)
                    self.want.add(id(node.whitespace_after_star))
                elif kind is cst.Index and node.star:
                    self.found.statements.append(node)
                    return True
                elif kind is cst.Annotation and isinstance(node.annotation, cst.StarredElement):
                    self.found.statements.append(node)
                    self.want.add(id(node.annotation))
            return False

    _STATE_CLASS = OffsetState
    return OffsetState


def _scan(module: Any, version: tuple[int, int]) -> _Found:
    found = _Found()
    state = _state_class()(module, version, found)
    module._codegen(state)
    return found


# ---------------------------------------------------------------------------- the edits

class _Edits:
    def __init__(self, code: str, version: tuple[int, int], found: _Found) -> None:
        self.code = code
        self.version = version
        self.found = found
        self.out: list[tuple[int, int, str]] = []

    def all(self) -> list[tuple[int, int, str]]:
        import libcst as cst

        self.cst = cst
        for node in self.found.statements:
            self._statement(node)
        if self.found.strings:
            _Strings(self).run()
        return self.out

    # ------------------------------------------------------------------ helpers

    def span(self, node: Any) -> tuple[int, int]:
        return self.found.spans[id(node)]

    def syn(self, node: Any) -> tuple[int, int]:
        return self.found.syn.get(id(node)) or self.found.spans[id(node)]

    def expect(self, at: int, text: str) -> None:
        if self.code[at:at + len(text)] != text:
            raise _GiveUp(f"expected {text!r} at {at}")

    def replace(self, start: int, end: int, text: str) -> None:
        """Replace ``code[start:end]`` by ``text``, which must hold as many line breaks."""
        if len(_NEWLINE.findall(self.code[start:end])) != text.count("\n"):
            raise _GiveUp("an edit would join or split lines")
        if start != end or text:
            self.out.append((start, end, text))

    def blank(self, start: int, end: int, first: str = "", last: str = "") -> None:
        """Replace ``code[start:end]`` by ``first``, its line breaks, and ``last``."""
        breaks = len(_NEWLINE.findall(self.code[start:end]))
        self.replace(start, end, first + "\n" * breaks + last)

    # ------------------------------------------------------------------ statements

    def _statement(self, node: Any) -> None:
        cst = self.cst
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.TypeAlias)):
            if isinstance(node, cst.TypeAlias) and self.version < (3, 12):
                self._type_alias(node)
            elif self.version < (3, 12):
                self._drop_type_params(node)
            else:
                self._drop_defaults(node.type_parameters)
        elif isinstance(node, cst.ExceptHandler):
            start, end = self.span(node.type)
            self.replace(start, start, "(")
            self.replace(end, end, ")")
        elif isinstance(node, cst.ExceptStarHandler):
            star = self.span(node.whitespace_after_star)[0] - 1
            self.expect(star, "*")
            self.replace(star, star + 1, " ")
        elif isinstance(node, cst.Index):
            star = self.span(node)[0]
            self.expect(star, "*")
            self.replace(star, star + 1, " ")
        elif isinstance(node, cst.Annotation):
            star = self.syn(node.annotation)[0]
            self.expect(star, "*")
            self.replace(star, star + 1, " ")

    def _type_alias(self, node: Any) -> None:
        """``type X[T] = V`` -> ``X = V``; with parameters over several lines ``(X\\n) = V``."""
        start = self.span(node)[0]
        self.expect(start, "type")
        name_start = self.span(node.name)[0]
        if _NEWLINE.search(self.code, start, name_start):
            raise _GiveUp("a line break after 'type'")
        params = node.type_parameters
        if params is None:
            self.replace(start, name_start, "")
            self.found.alias_starts[name_start] = start
            return
        pstart, pend = self.span(params)
        if _NEWLINE.search(self.code, pstart, pend):
            self.replace(start, name_start, "(")
            self.blank(pstart, pend, "", ")")
        else:
            self.replace(start, name_start, "")
            self.found.alias_starts[name_start] = start
            self.replace(pstart, pend, "")

    def _drop_type_params(self, node: Any) -> None:
        """``def f[T](x)`` -> ``def f(x)``; over several lines, the ``[`` becomes the ``(``
        (``def f(\\n\\nx)``, ``class C(\\n\\n):``) so that the line breaks stay in brackets."""
        cst = self.cst
        pstart, pend = self.span(node.type_parameters)
        if not _NEWLINE.search(self.code, pstart, pend):
            self.replace(pstart, pend, "")
            return
        ws_start, ws_end = self.span(node.whitespace_after_type_parameters)
        if _NEWLINE.search(self.code, ws_start, ws_end):
            raise _GiveUp("a line break after the type parameters")
        if isinstance(node, cst.FunctionDef):
            self.expect(ws_end, "(")
            self.blank(pstart, ws_end + 1, "(")
        elif isinstance(node.lpar, cst.LeftParen):
            lpar = self.span(node.lpar)[0]
            self.expect(lpar, "(")
            self.blank(pstart, lpar + 1, "(")
        else:
            self.blank(pstart, pend, "(", ")")

    def _drop_defaults(self, params: Any) -> None:
        for param in params.params:
            if param.default is not None:
                self.blank(self.span(param.param)[1], self.span(param.default)[1])


# ---------------------------------------------------------------------------- f-strings

class _Str:
    """One string literal of the source: a plain string, bytes, or an f/t-string."""

    def __init__(self, node: Any, edits: _Edits) -> None:
        cst = edits.cst
        code = edits.code
        self.node = node
        self.start, self.end = edits.syn(node)
        self.fstring = not isinstance(node, cst.SimpleString)
        head = node.start if self.fstring else node.value[:len(node.prefix) + len(node.quote)]
        self.quote: str = node.quote
        self.prefix: str = head[:len(head) - len(self.quote)]
        letters = self.prefix.lower()
        self.raw = "r" in letters
        self.bytes = "b" in letters
        self.template = "t" in letters
        self.children: list[_Str] = []
        self.texts: list[tuple[int, int]] = []  # spans of the literal parts (specs included)
        self.fields: list[Any] = []  # every field of this string, nested in specs too
        body = (self.start + len(head), self.end - len(self.quote))
        edits.expect(self.start, head)
        edits.expect(body[1], self.quote)
        self.body = body
        self.multiline = bool(_NEWLINE.search(code, self.start, self.end))
        concat = None  # the outermost implicit concatenation it is a part of
        up = edits.found.concat_of.get(id(node))
        while up is not None:
            concat, up = up, edits.found.concat_of.get(id(up))
        self.concat = concat

    def text_sources(self, code: str) -> list[str]:
        if not self.fstring:
            return [code[self.body[0]:self.body[1]]]
        return [code[s:e] for s, e in self.texts]


class _Strings:
    """The f-strings and t-strings of the module, in the grammar of ``version``.

    Before 3.12 an f-string is one string token: a field cannot hold its quote, a backslash, a
    comment, nor a line break unless the string is triple-quoted. Each outermost f-string keeps
    its quote where it can; the strings nested in its fields take quote kinds none of the
    strings around them use (a search over the four kinds, fewest changes first, then fewest
    strings written as expressions). A field that spans lines makes its string (and every one
    around it) triple-quoted; comments inside fields are dropped, a line continuation there
    becomes a blank. A nested string no quote kind can write (it holds a backslash escape, or
    every kind is taken) is written as an expression of the same value (see ``_pieces``)."""

    def __init__(self, edits: _Edits) -> None:
        self.e = edits
        self.code = edits.code
        self.version = edits.version
        self.old = self.version < (3, 12)
        self.templates = self.version < NEWEST
        self.by_id: dict[int, _Str] = {}
        self.tops: list[_Str] = []
        self.memo: dict[tuple[int, frozenset[str]], tuple[int, Any]] = {}

    def run(self) -> None:
        cst = self.e.cst
        for node, parent in self.e.found.strings:
            if isinstance(node, cst.SimpleString) and parent is None:
                continue  # a plain string outside any f-string is the same in every grammar
            s = _Str(node, self.e)
            self.by_id[id(node)] = s
            if parent is None:
                self.tops.append(s)
            else:
                self.by_id[id(parent)].children.append(s)
        for s in self.by_id.values():
            if s.fstring and self.old:
                self._parts(s)
        if self.old:
            for noise in self.e.found.field_noise:
                self._noise(noise)
        for s in self.tops:
            if not self.old:  # (only t-strings were collected, each on its own)
                self._prefix(s)
                continue
            cost, plan = self._plan(s, frozenset())
            if cost >= _INF:
                raise _GiveUp("an f-string the old grammar cannot hold")
            self.e.out.extend(self._emit(s, plan, frozenset()))

    def _prefix(self, s: _Str, out: list[tuple[int, int, str]] | None = None) -> None:
        """``t"..."`` -> ``f"..."`` (the letter only: the columns do not move)."""
        if s.template and self.templates:
            at = s.start + s.prefix.lower().index("t")
            letter = "f" if self.code[at] == "t" else "F"
            (self.e.out if out is None else out).append((at, at + 1, letter))

    def _parts(self, s: _Str) -> None:
        cst = self.e.cst
        spans = self.e.found.spans

        def walk(parts: Any) -> None:
            for part in parts:
                if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                    s.texts.append(spans[id(part)])
                else:
                    s.fields.append(part)
                    if part.format_spec:
                        walk(part.format_spec)

        walk(s.node.parts)

    def _noise(self, node: Any) -> None:
        start, end = self.e.span(node)
        if isinstance(node, self.e.cst.Comment):
            self.e.replace(start, end, "")
        else:  # a line continuation inside a field: the brackets hold the line break
            for i in range(start, end):
                if self.code[i] == "\\":
                    self.e.replace(i, i + 1, " ")

    # ------------------------------------------------------------------ the plan

    def _field_lines(self, s: _Str) -> bool:
        spans = self.e.found.spans
        return any(_NEWLINE.search(self.code, *spans[id(f)]) for f in s.fields)

    def _needs_triple(self, s: _Str) -> bool:
        if s.fstring and self._field_lines(s):
            return True
        return len(s.quote) == 3 and any(
            _NEWLINE.search(t) for t in s.text_sources(self.code))

    def _fits(self, s: _Str, q: str, top: bool) -> bool:
        """Can ``s`` be written with the quote ``q`` by changing only its quotes (and, for an
        outermost f-string, escaping that quote in its literal text)?"""
        if len(q) == 1 and self._needs_triple(s):
            return False
        texts = s.text_sources(self.code)
        if top:
            return not (s.raw and q[0] != s.quote[0] and any(q[0] in t for t in texts))
        for t in texts:
            if "\\" in t:
                return False
            if q[0] in t and not (q == s.quote and len(q) == 3):
                return False
        return True

    def _spec_ok(self, s: _Str, q: str) -> bool:
        """May the fields of ``s``, written as they are inside an f-string quoted ``q`` nested
        in a field, keep their format specs?"""
        spans = self.e.found.spans
        cst = self.e.cst
        for f in s.fields:
            for part in f.format_spec or ():
                if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                    text = self.code[slice(*spans[id(part)])]
                    if "\\" in text or q[0] in text:
                        return False
        return True

    def _plan(self, s: _Str, around: frozenset[str]) -> tuple[int, Any]:
        key = (id(s.node), around)
        if key in self.memo:
            return self.memo[key]
        best: tuple[int, Any] = (_INF, None)
        top = not around
        for q in _candidates(s.quote):
            if _conflict(q, around) or not self._fits(s, q, top):
                continue
            cost, subs = self._children(s, around | {q})
            cost += q != s.quote
            if cost < best[0]:
                best = (cost, ("quote", q, subs))
        if not top and best[0] >= _DEGRADE and (
                not s.multiline or not s.fstring):
            options: tuple[str | None, ...] = (*_candidates(s.quote), None)
            for piece_quote in options:
                if piece_quote is not None and (_conflict(piece_quote, around)
                                                or len(piece_quote) == 3):
                    continue
                if s.fstring and piece_quote is not None and not self._spec_ok(s, piece_quote):
                    continue
                inner = around | {piece_quote} if (
                    s.fstring and piece_quote is not None) else around
                cost, subs = self._children(s, inner)
                cost += _DEGRADE
                if cost < best[0]:
                    best = (cost, ("pieces", piece_quote, subs))
        self.memo[key] = best
        return best

    def _children(self, s: _Str, around: frozenset[str]) -> tuple[int, list[Any]]:
        total, subs = 0, []
        for c in s.children:
            cost, plan = self._plan(c, around)
            total += cost
            subs.append(plan)
            if total >= _INF:
                break
        return total, subs

    # ------------------------------------------------------------------ the edits

    def _emit(self, s: _Str, plan: Any, around: frozenset[str]) -> list[tuple[int, int, str]]:
        mode, q, subs = plan
        inner = around | {q} if (mode == "quote" or (s.fstring and q is not None)) else around
        out: list[tuple[int, int, str]] = []
        concats: dict[int, Any] = {}
        for c, sub in zip(s.children, subs, strict=True):
            out.extend(self._emit(c, sub, inner))
            if sub[0] == "pieces" and c.concat is not None:
                concats[id(c.concat)] = c.concat
        for concat in concats.values():  # ``"a" "\n"`` -> ``("a"+chr(10))``
            out.extend(self._explicit(concat))
        if s.fstring and not (mode == "pieces" and q is None):
            out = self._deep_specs(s, out)  # (``format()`` pieces write any depth of spec)
        if mode == "pieces":
            return [(s.start, s.end, self._render(s, q, out))]
        self._prefix(s, out)
        if q != s.quote:
            out.append((s.start + len(s.prefix), s.body[0], q))
            out.append((s.body[1], s.end, q))
            if not around and s.fstring and q[0] != s.quote[0] and not s.raw:
                for start, end in s.texts:
                    out.extend(_escapes(self.code, start, end, q[0]))
        return out

    def _explicit(self, concat: Any) -> list[tuple[int, int, str]]:
        """An implicit concatenation one of whose parts is written as an expression: a ``+``
        after each part but the last, the whole in parentheses (the same value)."""
        parts: list[Any] = []

        def flatten(node: Any) -> None:
            if isinstance(node, self.e.cst.ConcatenatedString):
                flatten(node.left)
                flatten(node.right)
            else:
                parts.append(node)

        flatten(concat)
        start, end = self.e.syn(concat)
        out = [(start, start, "("), (end, end, ")")]
        out.extend((self.e.syn(p)[1],) * 2 + ("+",) for p in parts[:-1])
        return out

    def _deep_specs(self, s: _Str, inner: list[tuple[int, int, str]]
                    ) -> list[tuple[int, int, str]]:
        """Before 3.12 a field in a format spec cannot have fields in its own spec
        (``{x:{y:{z}}}``): that field is written ``{format((y), format((z)))}``."""
        cst = self.e.cst
        spans = self.e.found.spans
        for f in s.node.parts:
            for part in getattr(f, "format_spec", None) or ():
                if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                    continue
                if not any(not isinstance(p, (cst.FormattedStringText, cst.TemplatedStringText))
                           for p in part.format_spec or ()):
                    continue
                start, end = spans[id(part)]
                if _NEWLINE.search(self.code, start, end):
                    raise _GiveUp("a deep format spec over several lines")
                mine = [e for e in inner if start <= e[0] and e[1] <= end]
                inner = [e for e in inner if not (start <= e[0] and e[1] <= end)]
                text = "{" + _join(self._field(part, mine)) + "}"
                inner.append((start, end, text))
        return inner

    # ------------------------------------------------------------------ strings as pieces

    def _render(self, s: _Str, q: str | None, inner: list[tuple[int, int, str]]) -> str:
        """``s`` as an expression of the same value no quote kind of ``around`` appears in:
        literals quoted ``q`` (or none), ``chr(n)`` for the characters they cannot hold, the
        fields of an f-string inside such literals, or as ``format()`` calls without ``q``."""
        if not s.fstring:
            return self._plain(s, q)
        pieces: list[str] = []
        current: list[str] = []
        quoted = q is not None
        spans = self.e.found.spans
        cst = self.e.cst

        def close() -> None:
            if current:
                pieces.append("f" + q + "".join(current) + q)  # type: ignore[operator]
                current.clear()

        for part in s.node.parts:
            if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                start, end = spans[id(part)]
                value = _text_value(self.code[start:end], s)
                for ch in value:
                    if quoted and _writable(ch, q):
                        current.append(ch * 2 if ch in "{}" else ch)
                    else:
                        close()
                        pieces.append(f"chr({ord(ch)})")
            elif quoted:
                start, end = spans[id(part)]
                current.append(_apply(self.code, start, end, inner))
            else:
                pieces.extend(self._field(part, inner))
        close()
        return _join(pieces) if pieces else "str()"

    def _field(self, f: Any, inner: list[tuple[int, int, str]]) -> list[str]:
        """One field ``{e!c:spec}`` as pieces: ``format(c((e)), spec)``."""
        cst = self.e.cst
        spans = self.e.found.spans
        start = spans[id(f)][0]
        pieces: list[str] = []
        conversion = f.conversion
        if f.equal is not None:  # ``{x=}``: the text of the field, then its repr
            debug = self.code[start + 1:spans[id(f.equal)][1]]
            pieces.extend(f"chr({ord(ch)})" for ch in debug)
            if conversion is None and not f.format_spec:
                conversion = "r"
        expr = "(" + _apply(self.code, *spans[id(f.expression)], inner) + ")"
        if conversion:
            expr = {"r": "repr", "s": "str", "a": "ascii"}[conversion] + expr
        spec: list[str] = []
        for part in f.format_spec or ():
            if isinstance(part, (cst.FormattedStringText, cst.TemplatedStringText)):
                text = self.code[slice(*spans[id(part)])]
                if "\\" in text:
                    raise _GiveUp("an escape in a format spec")
                spec.extend(f"chr({ord(ch)})" for ch in text.replace("{{", "{")
                            .replace("}}", "}"))
            else:
                spec.extend(self._field(part, inner))
        pieces.append(f"format({expr}, {_join(spec)})" if spec else f"format({expr})")
        return pieces

    def _plain(self, s: _Str, q: str | None) -> str:
        """A plain string or bytes literal as pieces; over several lines, each line's pieces
        stay on that line (the pieces are in brackets)."""
        code = self.code
        letters = "".join(c for c in s.prefix if c.lower() in "bu")
        out: list[str] = []  # pieces, and "\n" for a line break of the source
        if not s.multiline:
            value = ast.literal_eval(code[s.start:s.end])
            out.extend(_pieces(value, q, letters))
        else:
            body = code[s.body[0]:s.body[1]]
            lines = _NEWLINE.split(body)
            for i, seg in enumerate(lines):
                last = i == len(lines) - 1
                joined = False
                if not s.raw and not last and (len(seg) - len(seg.rstrip("\\"))) % 2:
                    seg, joined = seg[:-1], True  # a backslash-newline: no character
                value = _segment_value(seg, s, letters)
                out.extend(_pieces(value, q, letters))
                if not last:
                    if not joined:
                        out.extend(_pieces(b"\n" if s.bytes else "\n", None, letters))
                    out.append("\n")
        if not any(p != "\n" for p in out):
            out.insert(0, "bytes()" if s.bytes else "str()")
        return _join(out)


def _candidates(quote: str) -> tuple[str, ...]:
    return (quote, *(q for q in _QUOTES if q != quote))


def _conflict(q: str, around: frozenset[str]) -> bool:
    """Does quote ``q`` end one of the strings ``around`` it (old grammar)?"""
    return any(a in q if len(a) == 1 else a == q for a in around if a is not None)


def _escapes(code: str, start: int, end: int, quote: str) -> Iterator[tuple[int, int, str]]:
    """A backslash before each ``quote`` of ``code[start:end]`` not escaped already."""
    i = start
    while i < end:
        ch = code[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            yield (i, i, "\\")
        i += 1


def _apply(code: str, start: int, end: int, edits: list[tuple[int, int, str]]) -> str:
    out, at = [], start
    for s, e, text in sorted(x for x in edits if start <= x[0] and x[1] <= end):
        if s < at:
            raise _GiveUp("overlapping edits")
        out.append(code[at:s])
        out.append(text)
        at = e
    out.append(code[at:end])
    text = "".join(out)
    if _NEWLINE.search(text):
        raise _GiveUp("a field over several lines in a string written as pieces")
    return text


def _writable(ch: str, q: str | None) -> bool:
    """May ``ch`` stand as itself in a literal quoted ``q`` inside an old f-string's field?"""
    return q is not None and (ch.isprintable() or ch == "\t") and ch != "\\" and ch != q[0]


def _pieces(value: str | bytes, q: str | None, letters: str) -> list[str]:
    out: list[str] = []
    if isinstance(value, bytes):
        run: list[str] = []  # writable characters
        raw: list[int] = []  # bytes no literal may hold there

        def flush() -> None:
            if run:
                out.append(letters + q + "".join(run) + q)  # type: ignore[operator]
                run.clear()
            if raw:
                out.append(f"bytes(({', '.join(map(str, raw))},))")
                raw.clear()

        for b in value:
            ch = chr(b)
            if b < 128 and _writable(ch, q):
                if raw:
                    flush()
                run.append(ch)
            else:
                if run:
                    flush()
                raw.append(b)
        flush()
        return out
    run_s: list[str] = []
    for ch in value:
        if _writable(ch, q):
            run_s.append(ch)
        else:
            if run_s:
                out.append(letters + q + "".join(run_s) + q)  # type: ignore[operator]
                run_s.clear()
            out.append(f"chr({ord(ch)})")
    if run_s:
        out.append(letters + q + "".join(run_s) + q)  # type: ignore[operator]
    return out


def _join(pieces: list[str]) -> str:
    """``(a+b\\n+c)``: pieces joined by ``+``, a "\\n" piece a line break between them."""
    if len(pieces) == 1:
        return pieces[0]
    out, first = ["("], True
    for p in pieces:
        if p == "\n":
            out.append("\n")
            continue
        if not first:
            out.append("+")
        out.append(p)
        first = False
    out.append(")")
    return "".join(out)


def _text_value(text: str, s: _Str) -> str:
    """The value of one literal part of an f-string (``{{`` is ``{``, escapes decoded)."""
    text = text.replace("{{", "{").replace("}}", "}")
    if s.raw:
        return text
    value = _segment_value(text, s, "")
    assert isinstance(value, str)
    return value


def _segment_value(seg: str, s: _Str, letters: str) -> str | bytes:
    """The value of a piece of a literal's body that holds no line break."""
    if s.raw:
        return seg.encode("latin-1") if s.bytes else seg
    wrap = s.quote[0] * 3
    value: str | bytes = ast.literal_eval(f"{letters}{wrap}{seg}X{wrap}")
    return value[:-1]


__all__ = ["NEWEST", "Rewritten", "parse_module", "parse_newer", "rewrite"]
