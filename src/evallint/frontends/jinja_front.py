"""Jinja2 → :class:`TemplateFacts` with exact line *and* column of every reference.

Parsing is Jinja's own (``Environment.parse``); Jinja nodes only carry a line, so the raw
lexer tokens are recorded while the parser consumes them (one lexing pass) and each ``Name``
node is matched to its token on that line, in source order. Whitespace control (``{%-``)
strips data tokens, so positions come from locating every raw token in the source, never
from joining token values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jinja2 import Environment, nodes
from jinja2.exceptions import TemplateSyntaxError
from jinja2.lexer import TokenStream

from evallint.facts import Pos, TemplateFacts, TemplateRef, TemplateVar
from evallint.frontend import ParseError
from evallint.frontends.template_text import TextMap, clamp_line, normalize_newlines

# Names that are never context variables: Jinja's own locals and default globals.
BUILTIN_NAMES = frozenset(
    {"loop", "self", "varargs", "kwargs", "caller", "super", "range", "dict", "lipsum",
     "cycler", "joiner", "namespace", "true", "false", "none", "True", "False", "None"}
)
_BLOCK_OPENERS = frozenset(
    {"for", "if", "macro", "call", "filter", "block", "with", "autoescape", "trans"}
)
_DICT_METHODS = frozenset({"items", "values", "keys"})

Token = tuple[int, str, str]


class _RecordingEnvironment(Environment):
    """Keeps the raw lexer tokens of the last parse, for columns and error positions."""

    last_tokens: list[Token]

    def _tokenize(
        self, source: str, name: str | None, filename: str | None = None,
        state: str | None = None,
    ) -> TokenStream:
        source = self.preprocess(source, name, filename)
        self.last_tokens = []
        raw = _record(self.lexer.tokeniter(source, name, filename, state), self.last_tokens)
        stream = TokenStream(self.lexer.wrap(raw, name, filename), name, filename)
        for ext in self.iter_extensions():
            filtered = ext.filter_stream(stream)
            stream = filtered if isinstance(filtered, TokenStream) else TokenStream(
                filtered, name, filename
            )
        return stream


def _record(tokens: Iterator[Token], into: list[Token]) -> Iterator[Token]:
    for tok in tokens:
        into.append(tok)
        yield tok


# Built once per process: parsing needs no filters or tests, so unknown ones are fine.
ENV = _RecordingEnvironment(
    extensions=["jinja2.ext.loopcontrols", "jinja2.ext.do", "jinja2.ext.i18n",
                "jinja2.ext.debug"],
)


@dataclass
class _Tok:
    line: int
    col: int
    offset: int
    type: str
    value: str


def _locate(text: str, tokens: list[Token], tmap: TextMap) -> list[_Tok]:
    """Find each raw token in the source, in order (stripped data is a prefix of the real text).

    Whitespace and data tokens only advance the cursor; the lexer's line number plus the
    token's offset give the column without a search over line starts.
    """
    out: list[_Tok] = []
    cur = 0
    find = text.find
    for line, typ, value in tokens:
        idx = find(value, cur) if value else cur
        if idx < 0:
            idx = cur
        cur = idx + len(value)
        if typ in ("whitespace", "data"):
            continue
        col = idx - tmap.offset(line, 1) + 1
        if col < 1 or idx >= tmap.offset(line + 1, 1) > tmap.offset(line, 1):
            # never trust a line number that disagrees with the offset
            p = tmap.pos(idx)
            line, col = p.line, p.column
        out.append(_Tok(line, col, idx, typ, value))
    return out


class _Columns:
    """Queues of candidate columns per (line, name) for references and block keywords."""

    def __init__(self, toks: list[_Tok]) -> None:
        self.names: dict[tuple[int, str], list[_Tok]] = {}
        self.keywords: dict[tuple[int, str], list[_Tok]] = {}
        self.block_begins: list[_Tok] = []
        prev: _Tok | None = None
        prev2: _Tok | None = None
        after_begin = False
        for tok in toks:
            if tok.type in ("comment", "comment_begin", "comment_end", "raw_begin", "raw_end"):
                continue
            if tok.type == "name":
                if after_begin:
                    self.keywords.setdefault((tok.line, tok.value), []).append(tok)
                elif not _is_member_name(prev, prev2):
                    self.names.setdefault((tok.line, tok.value), []).append(tok)
            if tok.type == "block_begin":
                self.block_begins.append(tok)
            after_begin = tok.type == "block_begin"
            prev2, prev = prev, tok

    def take(self, line: int, name: str) -> _Tok | None:
        queue = self.names.get((line, name))
        return queue.pop(0) if queue else None

    def keyword(self, line: int, word: str) -> _Tok | None:
        queue = self.keywords.get((line, word))
        return queue.pop(0) if queue else None


def _is_member_name(prev: _Tok | None, prev2: _Tok | None) -> bool:
    """Attribute, filter and test names are not references (``a.b``, ``x|f``, ``x is t``)."""
    if prev is None:
        return False
    if prev.type in ("dot", "pipe") or (prev.type == "operator" and prev.value in (".", "|")):
        return True
    if prev.type == "name" and prev.value == "is":
        return True
    return bool(prev.type == "name" and prev.value == "not" and prev2 is not None
                and prev2.type == "name" and prev2.value == "is")


@dataclass(frozen=True)
class _Origin:
    """What a local name stands for: an outer variable's path, reached through ``via``."""

    path: tuple[str, ...]
    via: str


class _Walker:
    """Walks a Jinja AST in source order, recording references, refs and locals."""

    def __init__(self, cols: _Columns, tmap: TextMap) -> None:
        self.cols = cols
        self.tmap = tmap
        self.vars: list[TemplateVar] = []
        self.refs: list[TemplateRef] = []
        self.locals: list[str] = []
        self.scopes: list[dict[str, _Origin | None]] = [{}]

    # ------------------------------------------------------------------ scopes
    def lookup(self, name: str) -> tuple[bool, _Origin | None]:
        for scope in reversed(self.scopes):
            if name in scope:
                return True, scope[name]
        return False, None

    def bind(self, name: str, origin: _Origin | None) -> None:
        self.scopes[-1][name] = origin
        if name not in self.locals:
            self.locals.append(name)

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    # ------------------------------------------------------------------ positions
    def name_pos(self, node: nodes.Name) -> tuple[Pos, int]:
        tok = self.cols.take(node.lineno, node.name)
        if tok is None:
            line = clamp_line(self.tmap.text, node.lineno)
            off = self.tmap.offset(line, 1)
            return Pos(line, 1), off
        return Pos(tok.line, tok.col), tok.offset

    def keyword_pos(self, line: int, word: str) -> Pos:
        tok = self.cols.keyword(line, word)
        if tok is None:
            return Pos(clamp_line(self.tmap.text, line), 1)
        return Pos(tok.line, tok.col)

    # ------------------------------------------------------------------ statements
    def stmts(self, body: list[nodes.Node]) -> None:
        for node in body:
            self.stmt(node)

    def stmt(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                if not isinstance(child, nodes.TemplateData):
                    self.expr(child, "output")
        elif isinstance(node, nodes.For):
            self.for_(node)
        elif isinstance(node, nodes.If):
            self.expr(node.test, "test")
            self.scoped(node.body)
            for elif_ in node.elif_:
                self.expr(elif_.test, "test")
                self.scoped(elif_.body)
            self.scoped(node.else_)
        elif isinstance(node, nodes.Assign):
            origin = self.origin_of(node.node)
            self.consume_targets(node.target)
            self.expr(node.node, "set")
            self.bind_targets(node.target, node.node, origin)
        elif isinstance(node, nodes.AssignBlock):
            self.consume_targets(node.target)
            if node.filter is not None:
                self.filter_chain(node.filter, "set")
            self.stmts(node.body)
            self.bind_targets(node.target, None, None)
        elif isinstance(node, nodes.Macro):
            self.keyword_pos(node.lineno, "macro")
            self.bind(node.name, None)
            self.push()
            self.params(node.args, node.defaults)
            for name in ("varargs", "kwargs", "caller"):
                self.bind(name, None)
            self.stmts(node.body)
            self.pop()
        elif isinstance(node, nodes.CallBlock):
            self.push()
            self.params(node.args, node.defaults)
            self.bind("caller", None)
            self.pop()
            self.expr(node.call, "output")
            self.push()
            for arg in node.args:
                self.bind(arg.name, None)
            self.stmts(node.body)
            self.pop()
        elif isinstance(node, nodes.FilterBlock):
            self.filter_chain(node.filter, "arg")
            self.stmts(node.body)
        elif isinstance(node, nodes.With):
            self.push()
            for target, value in zip(node.targets, node.values, strict=False):
                self.consume_targets(target)
                origin = self.origin_of(value)
                self.expr(value, "set")
                self.bind_targets(target, value, origin)
            self.stmts(node.body)
            self.pop()
        elif isinstance(node, (nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport)):
            self.template_ref(node)
        elif isinstance(node, nodes.Block):
            self.stmts(node.body)
        elif isinstance(node, nodes.ExprStmt):
            self.expr(node.node, "arg")
        else:
            for sub in node.iter_child_nodes():
                if isinstance(sub, nodes.Expr):
                    self.expr(sub, "arg")
                else:
                    self.stmt(sub)

    def scoped(self, body: list[nodes.Node]) -> None:
        self.stmts(body)

    def for_(self, node: nodes.For) -> None:
        self.consume_targets(node.target)
        origin = self.origin_of(node.iter)
        self.expr(node.iter, "iter")
        self.push()
        self.bind("loop", None)
        self.bind_targets(node.target, None, origin)
        if node.test is not None:
            self.expr(node.test, "test")
        self.stmts(node.body)
        self.pop()
        self.stmts(node.else_)

    def params(self, args: list[nodes.Name], defaults: list[nodes.Expr]) -> None:
        first_default = len(args) - len(defaults)
        for i, arg in enumerate(args):
            self.name_pos(arg)
            if i >= first_default:
                self.expr(defaults[i - first_default], "arg")
            self.bind(arg.name, None)

    def consume_targets(self, target: nodes.Node) -> None:
        """Use up the tokens of assignment targets so later references get the right column."""
        if isinstance(target, nodes.Name):
            self.name_pos(target)
        elif isinstance(target, nodes.NSRef):
            self.cols.take(target.lineno, target.name)
        elif isinstance(target, nodes.Tuple):
            for item in target.items:
                self.consume_targets(item)

    def bind_targets(self, target: nodes.Node, value: nodes.Node | None,
                     origin: _Origin | None) -> None:
        if isinstance(target, nodes.Name):
            self.bind(target.name, _Origin(origin.path, target.name) if origin else None)
        elif isinstance(target, nodes.Tuple):
            values = value.items if isinstance(value, nodes.Tuple) else None
            for i, item in enumerate(target.items):
                if values is not None and i < len(values):
                    self.bind_targets(item, values[i], self.origin_of(values[i]))
                else:
                    self.bind_targets(item, None, origin)

    def template_ref(self, node: nodes.Node) -> None:
        words: dict[type[nodes.Node], str] = {
            nodes.Include: "include", nodes.Extends: "extends", nodes.Import: "import",
            nodes.FromImport: "from",
        }
        word = words[type(node)]
        pos = self.keyword_pos(node.lineno, word)
        template = node.template  # type: ignore[attr-defined]
        targets: list[tuple[str, bool]] = []
        items = template.items if isinstance(template, (nodes.List, nodes.Tuple)) else [template]
        for item in items:
            if isinstance(item, nodes.Const) and isinstance(item.value, str):
                targets.append((item.value, False))
            elif isinstance(item, nodes.Const) and isinstance(item.value, (list, tuple)):
                targets.extend((str(v), False) for v in item.value)
            else:
                self.expr(item, "arg")
                targets.append((_describe(item), True))
        for target, dynamic in targets:
            self.refs.append(TemplateRef(target=target, kind=word, pos=pos, dynamic=dynamic))
        if isinstance(node, nodes.Import):
            self.bind(node.target, None)
        elif isinstance(node, nodes.FromImport):
            for name in node.names:
                self.bind(name[1] if isinstance(name, tuple) else name, None)

    # ------------------------------------------------------------------ expressions
    def origin_of(self, expr: nodes.Node) -> _Origin | None:
        """The outer variable an expression stands for (through attributes and filters)."""
        while isinstance(expr, nodes.Filter) and expr.node is not None:
            expr = expr.node
        chain = _chain(expr)
        if chain is None:
            return None
        root, rest = chain
        is_local, origin = self.lookup(root.name)
        if is_local:
            return _Origin(origin.path + rest, origin.via) if origin else None
        if root.name in BUILTIN_NAMES:
            return None
        return _Origin((root.name, *rest), root.name)

    def expr(self, node: nodes.Node, kind: str, filters: tuple[str, ...] = ()) -> None:
        chain = _chain(node)
        if chain is not None:
            self.reference(chain[0], chain[1], kind, filters)
            for sub in _dynamic_parts(node):
                self.expr(sub, "arg")
            return
        if isinstance(node, nodes.Filter):
            self.filter_chain(node, kind, filters)
        elif isinstance(node, nodes.Test):
            self.expr(node.node, "test")
            self.call_args(node)
        elif isinstance(node, nodes.CondExpr):
            self.expr(node.expr1, kind)
            self.expr(node.test, "test")
            if node.expr2 is not None:
                self.expr(node.expr2, kind)
        elif isinstance(node, nodes.Call):
            self.expr(node.node, "arg")
            self.call_args(node)
        elif isinstance(node, nodes.Keyword):
            self.cols.take(node.lineno, node.key)
            self.expr(node.value, kind)
        else:
            for child in node.iter_child_nodes():
                self.expr(child, kind)

    def filter_chain(self, node: nodes.Filter, kind: str, outer: tuple[str, ...] = ()) -> None:
        names: list[str] = []
        chain: list[nodes.Filter] = []
        cur: nodes.Node | None = node
        while isinstance(cur, nodes.Filter):
            names.append(cur.name)
            chain.append(cur)
            cur = cur.node
        names.reverse()
        if cur is not None:
            self.expr(cur, kind, tuple(names) + outer)
        for filt in reversed(chain):
            self.call_args(filt)

    def call_args(self, node: nodes.Filter | nodes.Test | nodes.Call) -> None:
        for arg in node.args:
            self.expr(arg, "arg")
        for kw in node.kwargs:
            if isinstance(kw, nodes.Keyword):
                self.cols.take(kw.lineno, kw.key)
            self.expr(kw.value, "arg")
        if node.dyn_args is not None:
            self.expr(node.dyn_args, "arg")
        if node.dyn_kwargs is not None:
            self.expr(node.dyn_kwargs, "arg")

    def reference(self, root: nodes.Name, rest: tuple[str, ...], kind: str,
                  filters: tuple[str, ...]) -> None:
        pos, offset = self.name_pos(root)
        is_local, origin = self.lookup(root.name)
        if is_local and origin is None:
            return
        if not is_local and root.name in BUILTIN_NAMES:
            return
        if origin is not None:
            name, path, via = origin.path[0], origin.path + rest, origin.via
        else:
            name, path, via = root.name, (root.name, *rest), None
        self.vars.append(TemplateVar(
            name=name, path=path, pos=pos, kind=kind, via=via,
            delimited=self.tmap.delimited(offset), filters=filters,
            has_default="default" in filters or "d" in filters,
        ))


def _chain(node: nodes.Node) -> tuple[nodes.Name, tuple[str, ...]] | None:
    """``a.b['c'].get('d')`` → (Name a, ("b", "c", "d")); None if not rooted at a load Name."""
    rest: list[str] = []
    cur: nodes.Node = node
    while True:
        if isinstance(cur, nodes.Getattr):
            rest.append(cur.attr)
            cur = cur.node
        elif isinstance(cur, nodes.Getitem):
            arg = cur.arg
            if isinstance(arg, nodes.Const) and isinstance(arg.value, (str, int)):
                rest.append(str(arg.value))
            else:
                rest.clear()  # a dynamic key: the path stops before it
            cur = cur.node
        elif (isinstance(cur, nodes.Call) and isinstance(cur.node, nodes.Getattr)
              and _is_accessor_call(cur)):
            attr = cur.node.attr
            if attr == "get":
                arg = cur.args[0]
                rest.append(str(arg.value) if isinstance(arg, nodes.Const) else "?")
            cur = cur.node.node
        else:
            break
    if isinstance(cur, nodes.Name) and cur.ctx == "load":
        return cur, tuple(reversed(rest))
    return None


def _is_accessor_call(call: nodes.Call) -> bool:
    assert isinstance(call.node, nodes.Getattr)
    attr = call.node.attr
    if attr in _DICT_METHODS:
        return not call.args and not call.kwargs
    return (attr == "get" and 1 <= len(call.args) <= 2 and isinstance(call.args[0], nodes.Const)
            and not call.kwargs)


def _dynamic_parts(node: nodes.Node) -> list[nodes.Node]:
    """Expressions inside an access chain that are references too (``a[b]``, ``a.get(k, d)``)."""
    out: list[nodes.Node] = []
    cur: nodes.Node = node
    while True:
        if isinstance(cur, nodes.Getattr):
            cur = cur.node
        elif isinstance(cur, nodes.Getitem):
            if not isinstance(cur.arg, nodes.Const):
                out.append(cur.arg)
            cur = cur.node
        elif isinstance(cur, nodes.Call) and isinstance(cur.node, nodes.Getattr):
            out.extend(cur.args[1:])
            cur = cur.node.node
        else:
            break
    out.reverse()
    return out


def _describe(node: nodes.Node) -> str:
    chain = _chain(node)
    if chain is not None:
        return ".".join((chain[0].name, *chain[1]))
    return f"<{type(node).__name__.lower()}>"


# ---------------------------------------------------------------------------- errors


def _error(exc: TemplateSyntaxError, text: str, toks: list[_Tok]) -> ParseError:
    message = (exc.message or "template syntax error").split("\n")[0]
    if "unexpected end of template" in message.lower():
        opener = _innermost_unclosed(toks)
        if opener is not None:
            tok, word = opener
            return ParseError(
                f"unexpected end of template: the '{word}' block opened here is never closed "
                f"(expected 'end{word}')", tok.line, tok.col,
            )
        tag = _unterminated_tag(toks)
        if tag is not None:
            return ParseError(f"unexpected end of template: this tag is never closed ({message})",
                              tag.line, tag.col)
    line = clamp_line(text, exc.lineno or 1)
    col = 1
    for tok in toks:
        if tok.line == line and tok.type in ("block_begin", "variable_begin"):
            col = tok.col
            break
    return ParseError(message, line, col)


def _unterminated_tag(toks: list[_Tok]) -> _Tok | None:
    opened: _Tok | None = None
    for tok in toks:
        if tok.type in ("block_begin", "variable_begin"):
            opened = tok
        elif tok.type in ("block_end", "variable_end"):
            opened = None
    return opened


def _innermost_unclosed(toks: list[_Tok]) -> tuple[_Tok, str] | None:
    stack: list[tuple[_Tok, str]] = []
    i = 0
    significant = toks
    while i < len(significant):
        tok = significant[i]
        if tok.type == "block_begin" and i + 1 < len(significant):
            word_tok = significant[i + 1]
            word = word_tok.value if word_tok.type == "name" else ""
            nxt = significant[i + 3] if i + 3 < len(significant) else None
            block_set = word == "set" and nxt is not None and (
                nxt.type == "block_end" or nxt.value == "|"
            )
            if word in _BLOCK_OPENERS or block_set:
                stack.append((tok, word))
            elif word.startswith("end"):
                closed = word[3:]
                for j in range(len(stack) - 1, -1, -1):
                    if stack[j][1] == closed:
                        del stack[j:]
                        break
        i += 1
    return stack[-1] if stack else None


# ---------------------------------------------------------------------------- entry point


def parse_jinja(text: str) -> TemplateFacts:
    """Parse a Jinja template (front matter already blanked out) into template facts.

    Raises :class:`ParseError` with the position of the problem on bad syntax.
    """
    text = normalize_newlines(text)
    tmap = TextMap.of(text)
    try:
        tree = ENV.parse(text)
    except TemplateSyntaxError as exc:
        raise _error(exc, text, _locate(text, ENV.last_tokens, tmap)) from None
    except RecursionError:
        raise ParseError("template too deeply nested to analyse") from None
    except Exception as exc:  # the lexer's own internal errors on pathological input
        raise ParseError(f"cannot parse template: {exc}") from None
    toks = _locate(text, ENV.last_tokens, tmap)
    walker = _Walker(_Columns(toks), tmap)
    try:
        walker.stmts(tree.body)
    except RecursionError:
        raise ParseError("template too deeply nested to analyse") from None
    return TemplateFacts(dialect="jinja", variables=walker.vars, refs=walker.refs,
                         locals=walker.locals)

