"""``ast`` module -> :mod:`evallint.pyflow.ir`: one recursive pass over the standard tree, no
scope or qualified-name metadata (names resolve later from the import-alias table).

The analysis needs names, calls, assignments, string constants and positions, which ``ast``
gives at parse cost; libcst (several times slower to parse, and more again for positions) is
kept for rewriting source, where its lossless tree is needed. Columns are converted from
``ast``'s UTF-8 byte offsets to characters, as editors count them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from evallint.facts import Pos
from evallint.pyast import str_const
from evallint.pyflow.ir import (
    EMPTY,
    Assign,
    CallIR,
    Exit,
    ExprStep,
    FunctionIR,
    If,
    Loop,
    Param,
    Ref,
    Return,
    Step,
    Val,
)
from evallint.roles import name_tokens
from evallint.source import char_column

MAX_STR = 400  # characters kept of each string constant (role evidence reads the start)
MAX_STRINGS = 8
MAX_MATCHES = 4
# The longest literal a text test is kept for: a marker word or a short phrase (``"APPROVED"``,
# ``"no issues"``), not a paragraph.
MAX_MATCH_WORD = 24
# Text methods: ``"score" in reply.lower()`` tests the words of a text, not a mapping's keys.
_TEXT_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "casefold", "title"})
# A literal that names a key (``"score" in verdict``): a lowercase identifier.
_KEY_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_ORDER_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_MEMBER_OPS = (ast.In, ast.NotIn)
_VALIDATE_CALLS = {"isinstance", "parse_obj", "parse_raw", "TypeAdapter", "clamp", "clip", "isnan",
                   "isfinite"}

PosMap = Callable[[int, int], Pos]

# A prompt's output contract asking for a number: "score from 1 to 10", "rate it 1-10",
# "on a scale of 1 to 5", ``"score": <0-1>``, ``<score>``, "[[rating]]".
SCORE_TEXT = re.compile(
    r"\b(?:score|rating|rate|grade)\b[^.\n]{0,80}?(?:\d+(?:\.\d+)?\s*(?:-|–|to|and)\s*\d+|"
    r"out of \d+|/\s*\d+\b)|\bscale (?:of|from) \d|[\"']score[\"']\s*:|<score>|\[\[rating\]\]"
    r"|\bnumeric(?:al)? score\b|\b(?:integer|float|number) score\b",
    re.IGNORECASE,
)


_BUILTIN_TYPES = frozenset({"str", "int", "float", "bool", "bytes", "dict", "list", "tuple",
                            "set", "object", "Any", "None"})

# A class attribute only annotated (``judge_model: str``): the class has it, with no value
# (``__init__`` may give it one: ``self.x = ...`` replaces this placeholder).
_ANNOTATED = Val()


def merge(vals: Sequence[Val]) -> Val:
    """The value of an expression made of several parts (no longer a literal or a simple ref)."""
    vals = [v for v in vals if v is not EMPTY]
    if not vals:
        return EMPTY
    if len(vals) == 1:
        v = vals[0]
        return Val(v.names, v.calls, None, v.strings, v.tool_names, None, v.compares,
                   False, v.chained, v.scored, system=v.system, matches=v.matches)
    names: list[str] = []
    calls: list[int] = []
    strings: list[str] = []
    tools: list[str] = []
    compares: list[Val] = []
    system: list[str] = []
    matches: list[tuple[str, Val]] = []
    chained = scored = False
    for v in vals:
        system.extend(v.system)
        matches.extend(v.matches)
        names.extend(v.names)
        calls.extend(v.calls)
        strings.extend(v.strings)
        tools.extend(v.tool_names)
        compares.extend(v.compares)
        chained = chained or v.chained
        scored = scored or v.scored
    return Val(tuple(names), tuple(calls), None, tuple(strings[:MAX_STRINGS]), tuple(tools),
               None, tuple(compares), False, chained, scored, system=tuple(system),
               matches=tuple(matches[:MAX_MATCHES]))


# Every match of SCORE_TEXT holds one of these, in any case (their letters have no other case
# forms the pattern's IGNORECASE would also match, as it does 'ſ' for 's'): most string
# constants hold none, found by a few substring tests instead of the pattern tried at every
# position of the text.
_SCORE_LETTERS = ("core", "rat", "grade", "cale")  # score, rate/rating, grade, scale


def asks_score(text: str) -> bool:
    """Does this text ask for a numeric score? (the whole constant, not the truncated one)"""
    low = text.lower()
    return any(w in low for w in _SCORE_LETTERS) and bool(SCORE_TEXT.search(text))


def literal(text: str) -> Val:
    return Val(text=text, strings=(text[:MAX_STR],), ref=("lit", text),
               scored=asks_score(text))


@dataclass
class _Fn:
    """Per-function state while building."""

    name: str
    cls: str | None = None
    calls: list[CallIR] = field(default_factory=list)
    loops: int = 0
    try_depth: int = 0
    validates: bool = False
    best: bool = False
    locals: set[str] = field(default_factory=set)
    # ``with f(...):`` blocks: the id of the context call and the block's last line
    withs: list[tuple[int, int]] = field(default_factory=list)
    # steps made while building an expression (a comprehension binds its targets): they run
    # before the statement that holds the expression
    pending: list[Step] = field(default_factory=list)


class Builder:
    """Builds the facts of one module. ``pos_map`` turns (line, 0-based column in characters)
    into a Pos (notebooks map the joined code back to cells); None for a plain module, whose
    positions are its own (the commonest case, made here without a call per node)."""

    def __init__(self, tree: ast.Module, code: str, pos_map: PosMap | None) -> None:
        self.tree = tree
        self.pos_map = pos_map
        self._lines: list[str] | None = None
        self._code = code
        self._ascii = code.isascii()
        self.imports: dict[str, str] = {}
        self.constants: dict[str, Val] = {}
        self.functions: dict[str, FunctionIR] = {}
        self.owners: dict[str, str] = {}
        self.package = ""

    # ------------------------------------------------------------------ positions

    def pos(self, node: ast.AST) -> Pos:
        line: int = getattr(node, "lineno", 0)
        if not line:
            return Pos(1, 1)
        col: int = node.col_offset  # type: ignore[attr-defined]
        if col and not self._ascii:  # byte columns are character columns in ASCII source
            if self._lines is None:
                self._lines = self._code.splitlines()
            col = char_column(self._lines[line - 1] if 0 < line <= len(self._lines) else "",
                              col)
        return Pos(line, col + 1) if self.pos_map is None else self.pos_map(line, col)

    def end_line(self, node: ast.AST) -> int:
        end: int | None = getattr(node, "end_lineno", None)
        if not end:
            return 0
        return end if self.pos_map is None else self.pos_map(end, 0).line

    # ------------------------------------------------------------------ module

    def build(self, package: str) -> None:
        self.package = package
        fn = _Fn("<module>")
        body = self.block(self.tree.body, fn, module_level=True)
        self.functions["<module>"] = self._finish(fn, (), body, Pos(1, 1))

    def _finish(self, fn: _Fn, params: tuple[Param, ...], body: list[Step], pos: Pos,
                is_method: bool = False) -> FunctionIR:
        return FunctionIR(name=fn.name, params=params, body=body, calls=fn.calls, pos=pos,
                          is_method=is_method, cls=fn.cls, validates=fn.validates, best=fn.best,
                          locals=frozenset(fn.locals), withs=tuple(fn.withs))

    def block(self, stmts: Sequence[ast.stmt], fn: _Fn, module_level: bool = False,
              cls: str | None = None) -> list[Step]:
        out: list[Step] = []
        saved, fn.pending = fn.pending, []
        for stmt in stmts:
            n = len(out)
            self.statement(stmt, fn, out, module_level, cls)
            if fn.pending:  # a comprehension's bindings run before the statement using them
                out[n:n] = fn.pending
                fn.pending = []
        fn.pending = saved
        return out

    # ------------------------------------------------------------------ statements

    def statement(self, node: ast.stmt, fn: _Fn, out: list[Step], module_level: bool,
                  cls: str | None) -> None:
        if isinstance(node, ast.Assign):
            value = self.expr(node.value, fn)
            targets: list[str] = []
            weak = False
            for t in node.targets:
                names, w = self.target_names(t)
                targets.extend(names)
                weak = weak or w
                if module_level or cls:
                    self.record_constant(t, node.value, value, cls, fn)
                self.init_attr(t, value, fn)
            self._note_names(targets, fn)
            unpack = len(node.targets) == 1 and _flat_tuple(node.targets[0])
            out.append(Assign(tuple(targets), value, self.pos(node), weak=weak,
                              unpack=unpack))
        elif isinstance(node, ast.AnnAssign):
            if node.value is None:
                if cls and isinstance(node.target, ast.Name):  # a field the caller fills
                    self.constants.setdefault(f"{cls}.{node.target.id}", _ANNOTATED)
                return
            value = self.expr(node.value, fn)
            names, weak = self.target_names(node.target)
            if module_level or cls:
                self.record_constant(node.target, node.value, value, cls, fn)
            self.init_attr(node.target, value, fn)
            self._note_names(names, fn)
            out.append(Assign(tuple(names), value, self.pos(node), weak=weak))
        elif isinstance(node, ast.AugAssign):
            value = self.expr(node.value, fn)
            names, _ = self.target_names(node.target)
            out.append(Assign(tuple(names), value, self.pos(node), aug=True))
        elif isinstance(node, ast.Expr):
            out.append(ExprStep(self.expr(node.value, fn), self.pos(node),
                                yielded=isinstance(node.value, ast.Yield)))
        elif isinstance(node, ast.Return):
            val = self.expr(node.value, fn) if node.value is not None else EMPTY
            out.append(Return(val, self.pos(node)))
        elif isinstance(node, ast.Raise):
            if node.exc is not None:
                out.append(ExprStep(self.expr(node.exc, fn), self.pos(node)))
            out.append(Exit("raise", self.pos(node)))
        elif isinstance(node, ast.Break):
            out.append(Exit("break", self.pos(node)))
        elif isinstance(node, ast.Continue):
            out.append(Exit("continue", self.pos(node)))
        elif isinstance(node, ast.Assert):
            test = self.expr(node.test, fn)
            if test.compares or test.chained:
                fn.validates = True
            out.append(ExprStep(test, self.pos(node)))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                full = alias.name
                if alias.asname:
                    self.imports[alias.asname] = full
                else:
                    self.imports[full.split(".")[0]] = full.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node)
        else:
            self.compound(node, fn, out, module_level, cls)

    def _note_names(self, names: Sequence[str], fn: _Fn) -> None:
        for n in names:
            root = n.split(".")[0]
            fn.locals.add(root)
            # (a name holds the token only if it holds the letters: most names are not split)
            if "best" in n.lower() and "best" in name_tokens(n):
                fn.best = True

    def import_from(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        dots = node.level
        if dots:
            parts = self.package.split(".") if self.package else []
            keep = parts[: max(0, len(parts) - (dots - 1))]
            base = ".".join([*keep, base] if base else keep)
        for alias in node.names:
            name = alias.name
            if name == "*":
                return
            local = alias.asname or name
            self.imports[local] = f"{base}.{name}" if base else name

    def target_names(self, target: ast.expr) -> tuple[list[str], bool]:
        """Names an assignment target binds; ``weak`` for element targets (``d[k] = v``)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            names: list[str] = []
            for el in target.elts:
                sub, _ = self.target_names(el)
                names.extend(sub)
            return names, False
        if isinstance(target, ast.Starred):
            return self.target_names(target.value)
        if isinstance(target, ast.Subscript):
            path = self.path_of(target.value)
            return ([path] if path else []), True
        path = self.path_of(target)
        return ([path] if path else []), False

    def record_constant(self, target: ast.expr, node: ast.expr, value: Val, cls: str | None,
                        fn: _Fn) -> None:
        if not isinstance(target, ast.Name):
            return
        name = f"{cls}.{target.id}" if cls else target.id
        if cls and isinstance(node, ast.Call):
            value = self.field_default(node, fn) or value
        self.constants[name] = value
        if value.calls and fn.name == "<module>":
            self.owners[name] = fn.name
        else:
            self.owners.pop(name, None)
        if isinstance(node, ast.Dict):
            self.dict_constants(name, node)

    def _annotated_class(self, node: ast.expr | None) -> str | None:
        """The class an annotation names: ``LLMClient``, ``pkg.LLMClient``,
        ``Optional[LLMClient]``, ``LLMClient | None`` (not a builtin type)."""
        if isinstance(node, ast.Subscript):
            outer = self.path_of(node.value) or ""
            if self.imports.get(outer, outer) in ("Optional", "typing.Optional"):
                node = node.slice
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            node = node.left if not (isinstance(node.left, ast.Constant)) else node.right
        path = self.path_of(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return path if path and path not in _BUILTIN_TYPES else None

    def field_default(self, node: ast.Call, fn: _Fn) -> Val | None:
        """A class field declared through a field function (pydantic ``Field("gpt-4o")``,
        ``Field(default=...)``, dataclasses ``field(default=...)``): its default value."""
        func = self.path_of(node.func) or ""
        root, _, rest = func.partition(".")
        func = self.imports.get(root, root) + (f".{rest}" if rest else "")  # ``Field as F``
        if func.rsplit(".", 1)[-1] not in ("Field", "field"):
            return None
        for kw in node.keywords:
            if kw.arg == "default":
                return self.expr(kw.value, fn)
        if node.args and func.rsplit(".", 1)[-1] == "Field":
            return self.expr(node.args[0], fn)
        return None

    def dict_constants(self, prefix: str, node: ast.Dict) -> None:
        for key, val in zip(node.keys, node.values, strict=True):
            if str_const(key) is not None:
                self.constants[f"{prefix}.{str_const(key)}"] = self.expr(val, _Fn("<const>"))
                if isinstance(val, ast.Dict):
                    self.dict_constants(f"{prefix}.{str_const(key)}", val)

    def init_attr(self, target: ast.expr, value: Val, fn: _Fn) -> None:
        """``self.x = ...`` in ``__init__`` makes ``Class.x`` resolvable (defaults of params)."""
        if fn.cls is None or not fn.name.endswith(".__init__"):
            return
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self"):
            key = f"{fn.cls}.{target.attr}"
            if self.constants.get(key, _ANNOTATED) is _ANNOTATED:
                self.constants[key] = value
                if value.calls:
                    self.owners[key] = fn.name

    # ------------------------------------------------------------------ compound statements

    def compound(self, node: ast.stmt, fn: _Fn, out: list[Step], module_level: bool,
                 cls: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(node, fn, cls)
        elif isinstance(node, ast.ClassDef):
            bases = tuple(b for b in map(self.path_of, node.bases) if b)
            if bases:  # method calls on ``self`` are looked up in the bases too
                self.constants[f"{node.name}.__bases__"] = Val(names=bases)
            self.block(node.body, _Fn(f"<class {node.name}>"), module_level=False,
                       cls=node.name)
        elif isinstance(node, ast.If):
            out.append(self.if_stmt(node, fn, module_level))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            fn.loops += 1
            loop_id = fn.loops
            lbody = self.block(node.body, fn, module_level)
            lelse = self.block(node.orelse, fn, module_level)
            if isinstance(node, (ast.For, ast.AsyncFor)):
                targets, _ = self.target_names(node.target)
                self._note_names(targets, fn)
                out.append(Loop(loop_id, "for", tuple(targets), self.expr(node.iter, fn), None,
                                lbody, lelse, self.pos(node), self.end_line(node)))
            else:
                test = self.expr(node.test, fn)
                out.append(Loop(loop_id, "while", (), EMPTY, test, lbody, lelse, self.pos(node),
                                self.end_line(node)))
        elif isinstance(node, _TRY):
            assert isinstance(node, ast.Try) or hasattr(node, "handlers")
            node = cast(ast.Try, node)  # TryStar has the same fields
            fn.try_depth += 1
            out.extend(self.block(node.body, fn, module_level))
            fn.try_depth -= 1
            for handler in node.handlers:
                hb = self.block(handler.body, fn, module_level)
                out.append(If(EMPTY, hb, [], self.pos(handler)))
            out.extend(self.block(node.orelse, fn, module_level))
            out.extend(self.block(node.finalbody, fn, module_level))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                val = self.expr(item.context_expr, fn)
                if isinstance(item.context_expr, ast.Call) and val.calls:
                    fn.withs.append((val.calls[-1], self.end_line(node)))
                if item.optional_vars is not None:
                    names, _ = self.target_names(item.optional_vars)
                    self._note_names(names, fn)
                    out.append(Assign(tuple(names), val, self.pos(item.context_expr)))
                else:
                    out.append(ExprStep(val, self.pos(item.context_expr)))
            out.extend(self.block(node.body, fn, module_level))
        elif isinstance(node, ast.Match):
            out.append(ExprStep(self.expr(node.subject, fn), self.pos(node)))
            for case in node.cases:
                out.append(If(EMPTY, self.block(case.body, fn, module_level), [],
                              self.pos(case.pattern)))

    def if_stmt(self, node: ast.If, fn: _Fn, module_level: bool) -> If:
        test = self.expr(node.test, fn)
        body = self.block(node.body, fn, module_level)
        orelse = self.block(node.orelse, fn, module_level)
        return If(test, body, orelse, self.pos(node))

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: _Fn,
                 cls: str | None) -> None:
        if cls:
            qual = f"{cls}.{node.name}"
        elif outer.name != "<module>" and not outer.name.startswith("<class"):
            qual = f"{outer.name}.{node.name}"
        else:
            qual = node.name
        # a function nested in a method reads the instance the method does (``self.llm``
        # in a node callback defined in the method: a closure over ``self``)
        fn = _Fn(qual, cls=cls or outer.cls)
        params: list[Param] = []
        a = node.args
        scratch = _Fn("<defaults>")  # defaults run at definition time, not in the body
        positional = [*a.posonlyargs, *a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
        defaults += a.defaults
        for arg, dflt in zip(positional, defaults, strict=True):
            params.append(Param(arg.arg, self.expr(dflt, scratch) if dflt is not None else None,
                                annotation=self._annotated_class(arg.annotation)))
        if a.vararg is not None:
            params.append(Param(a.vararg.arg, None, star=True))
        for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            params.append(Param(arg.arg, self.expr(kw_default, scratch)
                                if kw_default is not None else None))
        if a.kwarg is not None:
            params.append(Param(a.kwarg.arg, None, star=True))
        for prm in params:
            fn.locals.add(prm.name)
        is_method = bool(cls) and bool(params) and params[0].name in ("self", "cls")
        body = self.block(node.body, fn)
        if qual in self.functions:  # redefined: keep the earlier one as qual#1, qual#2...
            n = 1
            while f"{qual}#{n}" in self.functions:
                n += 1
            self.functions[f"{qual}#{n}"] = replace(self.functions[qual], name=f"{qual}#{n}")
        self.functions[qual] = self._finish(fn, tuple(params), body, self.pos(node), is_method)

    # ------------------------------------------------------------------ expressions

    def path_of(self, node: ast.expr) -> str | None:
        """``a.b["k"][0].c`` -> ``a.b.k.0.c``; None when the root is not a name."""
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            base = self.path_of(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Subscript):
            base = self.path_of(node.value)
            if not base:
                return None
            idx = node.slice
            key = str_const(idx)
            if key is not None:
                return f"{base}.{key}"
            if isinstance(idx, ast.Constant) and type(idx.value) is int:
                return f"{base}.{idx.value}"
            if (isinstance(idx, ast.UnaryOp) and isinstance(idx.op, ast.USub)
                    and isinstance(idx.operand, ast.Constant)
                    and type(idx.operand.value) is int):
                return f"{base}.-{idx.operand.value}"
            return f"{base}.[]"
        return None

    def _env_ref(self, path: str) -> bool:
        root = path.split(".")[0]
        full = self.imports.get(root, root if root == "os" else "")
        return full in ("os", "os.environ") and (path.startswith(f"{root}.environ")
                                                 or full == "os.environ")

    def _indexes(self, node: ast.Subscript, fn: _Fn) -> list[Val]:
        """The values of a subscript's indexes (``x[a, b]``: both; slices are not indexes)."""
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [self.expr(p, fn) for p in parts if not isinstance(p, ast.Slice)]

    def expr(self, node: ast.expr | None, fn: _Fn) -> Val:
        if node is None:
            return EMPTY
        if isinstance(node, ast.Name):
            return Val(names=(node.id,), ref=("name", node.id))
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str):
                return literal(value)
            if value is True or (type(value) is int and value != 0):
                return Val(truthy=True)
            if value is False or value is None:
                return Val()
            return EMPTY
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            path = self.path_of(node)
            if path is not None:
                extra = EMPTY
                if isinstance(node, ast.Subscript) and path.endswith(".[]"):
                    extra = merge(self._indexes(node, fn))
                if self._env_ref(path) and isinstance(node, ast.Subscript):
                    key = path.rsplit(".", 1)[-1]
                    return Val(names=(path,), ref=("env", key, None))
                v = Val(names=(path,), ref=("name", path))
                return merge([v, extra]) if extra is not EMPTY else v
            inner = self.expr(node.value, fn)
            if isinstance(node, ast.Subscript):
                return merge([inner, *self._indexes(node, fn)])
            out = merge([inner])
            if inner.ref is not None and inner.ref[0] == "new":  # get_settings().llm_model
                rest = f"{inner.ref[2]}.{node.attr}" if inner.ref[2] else node.attr
                out.ref = ("new", inner.ref[1], rest)
            return out
        if isinstance(node, ast.Call):
            return self.instance_ref(node, self.call(node, fn))
        if isinstance(node, ast.JoinedStr):
            pieces: list[Val] = []
            texts: list[str] = []
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    texts.append(part.value)
                elif isinstance(part, ast.FormattedValue):
                    pieces.append(self.expr(part.value, fn))
            joined = "".join(texts)
            strings = Val(strings=(joined[:MAX_STR],),
                          scored=asks_score(joined)) if joined.strip() else EMPTY
            out = merge([strings, *pieces])
            if len(pieces) == 1 and pieces[0].ref is not None and not pieces[0].calls:
                # f"openai/{cfg.model}": the one value it is made of, with the text around
                at = next(i for i, p in enumerate(node.values)
                          if isinstance(p, ast.FormattedValue))
                around = ["".join(p.value for p in part if isinstance(p, ast.Constant)
                                  and isinstance(p.value, str))
                          for part in (node.values[:at], node.values[at + 1:])]
                out.ref = ("fmt", around[0], pieces[0].ref, around[1])
            return out
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left, fn)
            right = self.expr(node.right, fn)
            if left.text is not None and right.text is not None:
                return literal(left.text + right.text)
            return merge([left, right])
        if isinstance(node, ast.BoolOp):
            vals = [self.expr(item, fn) for item in node.values]
            ref = vals[0].ref
            for item in vals[1:]:  # left to right, as ``(a or b) or c``
                ref = self._bool_ref(ref, item.ref, isinstance(node.op, ast.Or))
            v = merge(vals)  # once: merging pairwise would be quadratic in a long chain
            return Val(v.names, v.calls, None, v.strings, v.tool_names, ref, v.compares,
                       False, v.chained, v.scored, system=v.system, matches=v.matches)
        if isinstance(node, ast.UnaryOp):
            v = merge([self.expr(node.operand, fn)])
            if isinstance(node.op, ast.Not):
                return Val(v.names, v.calls, None, v.strings, v.tool_names, None, v.compares,
                           False, v.chained, v.scored, True, v.system, matches=v.matches)
            return v
        if isinstance(node, ast.Compare):
            return self.comparison(node, fn)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.expr(el, fn) for el in node.elts]
            bare = [el.value if isinstance(el, ast.Starred) else el for el in node.elts]
            tools = [el.id for el in bare if isinstance(el, ast.Name)]
            tools += [v.text for v in items if v.text is not None]
            m = merge(items)
            system = m.system
            if isinstance(node, ast.Tuple) and len(items) == 2 and items[0].text in _SYSTEM_ROLES:
                system += items[1].names  # LangChain ("system", text) message pairs
            elts = tuple(items) if isinstance(node, ast.Tuple) and 2 <= len(items) <= 8 and \
                not any(isinstance(el, ast.Starred) for el in node.elts) else ()
            return Val(m.names, m.calls, None, m.strings, m.tool_names + tuple(tools), None,
                       m.compares, False, m.chained, m.scored, system=system, elts=elts,
                       matches=m.matches)
        if isinstance(node, ast.Dict):
            return self.dict_expr(node, fn)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            conds = self.comp_for(node.generators, fn)  # binds first: the element reads them
            comp_value = merge([self.expr(node.elt, fn), *conds])
            if any(_keeps_text_blocks(c, g.target) for g in node.generators for c in g.ifs):
                # [b.text for b in resp.content if b.type == "text"]: the answer without the
                # thinking blocks, an extraction whatever the code around it is called
                call = CallIR(id=len(fn.calls), func=TEXT_BLOCKS, args=(comp_value,), kwargs=(),
                              pos=self.pos(node), in_try=fn.try_depth > 0)
                fn.calls.append(call)
                return Val(calls=(call.id,))
            return comp_value
        if isinstance(node, ast.DictComp):
            conds = self.comp_for(node.generators, fn)
            return merge([self.expr(node.key, fn), self.expr(node.value, fn), *conds])
        if isinstance(node, ast.IfExp):
            return merge([self.expr(node.test, fn), self.expr(node.body, fn),
                          self.expr(node.orelse, fn)])
        if isinstance(node, (ast.Await, ast.NamedExpr, ast.Starred)):
            return self.expr(node.value, fn)
        if isinstance(node, ast.Yield):
            return self.expr(node.value, fn)
        return EMPTY

    def instance_ref(self, node: ast.Call, value: Val) -> Val:
        """``Settings()``, ``get_settings()``: a call of a plain name with no argument keeps
        the name it calls (``("new", "get_settings", "")``), so an attribute read
        on its result (``cfg.llm_model``) can resolve to the class attribute's default. With
        arguments (``("made", "Writer")``) only the calls of its methods are followed: the
        values it holds depend on the arguments."""
        func = self.path_of(node.func)
        if value.ref is not None or func is None or func.startswith("self."):
            return value
        if node.args or node.keywords:  # ``Writer(llm)``: its methods are known, not the
            return replace(value, ref=("made", func))  # values it holds
        return replace(value, ref=("new", func, ""))

    @staticmethod
    def _bool_ref(ref: Any, right: Any, is_or: bool) -> Any:
        """What ``left or right`` / ``left and right`` stands for, from the two sides' refs."""
        if ref and ref[0] == "env" and ref[2] is None and right is not None:
            return ("env", ref[1], right)
        if is_or and ref and ref[0] == "name" and right and right[0] in ("new", "made"):
            return right  # ``self.llm = llm or LLMClient()``: what the object is
        if is_or and ref and ref[0] == "name" and right and right[0] == "lit":
            return ("or", ref, right)  # ``model || "gpt-4o"``: the value, else the literal
        if is_or:
            return ref or right
        return None

    def comp_for(self, generators: list[ast.comprehension], fn: _Fn) -> list[Val]:
        """A comprehension's ``for`` clauses bind their targets to what they iterate (steps
        run before the statement), so its element reads this round's values, never a stale
        variable of the same name. Returns the values of its ``if`` clauses."""
        vals: list[Val] = []
        for comp in generators:
            it = self.expr(comp.iter, fn)
            names, _ = self.target_names(comp.target)
            self._note_names(names, fn)
            fn.pending.append(Assign(tuple(names), it, self.pos(comp.iter)))
            vals += [self.expr(c, fn) for c in comp.ifs]
        return vals

    def comparison(self, node: ast.Compare, fn: _Fn) -> Val:
        operands = [self.expr(node.left, fn)]
        operands += [self.expr(c, fn) for c in node.comparators]
        v = merge(operands)
        ordering = [op for op in node.ops if isinstance(op, _ORDER_OPS)]
        chained = len(ordering) >= 2
        if chained:
            fn.validates = True
        if any(isinstance(op, _MEMBER_OPS) for op in node.ops) and _key_check(node):
            fn.validates = True  # "score" in data: a key check
        if any(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == "type"
               for x in (node.left, *node.comparators)):
            fn.validates = True  # type(x) is int, typeof x === "number": a type check
        compares = (*v.compares, v) if ordering else v.compares
        return Val(v.names, v.calls, None, v.strings, v.tool_names, None, compares, False,
                   chained or v.chained, v.scored, True, v.system,
                   matches=(*v.matches, *_text_tests(node, operands))[:MAX_MATCHES])

    def dict_expr(self, node: ast.Dict, fn: _Fn) -> Val:
        vals: list[Val] = []
        tools: list[str] = []
        role = content = None
        keyed: list[tuple[str, Val]] = []
        spreads: list[Ref] = []
        for k, val in zip(node.keys, node.values, strict=True):
            if k is not None:
                key = self.expr(k, fn)
                value = self.expr(val, fn)
                vals += [key, value]
                if key.text is not None and key.text.isidentifier():
                    keyed.append((key.text, value))
                if key.text in ("name", "type") and value.text is not None:
                    tools.append(value.text)
                if key.text == "role":
                    role = value.text
                elif key.text == "content":
                    content = value
            else:  # ``**mapping``
                spread = self.expr(val, fn)
                vals.append(spread)
                if spread.ref is not None and spread.ref[0] == "name":
                    spreads.append(spread.ref)
        m = merge(vals)
        system = m.system
        if role in _SYSTEM_ROLES and content is not None:
            system += content.names
        # ``{...options, jsonMode: true}``: a key not written here is the spread mapping's
        ref: Ref | None = ("spread", spreads[0]) if len(spreads) == 1 else None
        return Val(m.names, m.calls, None, m.strings, m.tool_names + tuple(tools), ref,
                   m.compares, False, m.chained, m.scored, system=system, matches=m.matches,
                   keys=tuple(keyed[:16]))

    def call(self, node: ast.Call, fn: _Fn) -> Val:
        func = self.path_of(_generic_base(node.func))
        recv: Val | None = None
        if func is None:
            if isinstance(node.func, ast.Attribute):
                # get_client().messages.create(...): the attribute path after the call is kept
                # (``<expr>.messages.create``), so a method the catalogue knows by its dotted
                # suffix is known on any receiver
                attrs = [node.func.attr]
                inner = node.func.value
                while isinstance(inner, ast.Attribute) and self.path_of(inner) is None:
                    attrs.append(inner.attr)
                    inner = inner.value
                recv = self.expr(inner, fn)
                func = "<expr>." + ".".join(reversed(attrs))
            else:
                recv = self.expr(node.func, fn)
                func = ""
        last = func.rsplit(".", 1)[-1]
        args: list[Val] = []
        kwargs: list[tuple[str, Val]] = []
        star = False
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                star = True
            args.append(self.expr(arg, fn))
        for kw in node.keywords:
            v = self.expr(kw.value, fn)
            if kw.arg is None:  # ``**kwargs``
                star = True
                args.append(v)
            else:
                kwargs.append((kw.arg, v))
        # x.get("key"[, default]) reads x.key (and env lookups keep their default)
        if last == "get" and "." in func and not func.startswith("<expr>") and args and (
            args[0].text is not None
        ):
            base = func.rsplit(".", 1)[0]
            path = f"{base}.{args[0].text}"
            default = args[1] if len(args) > 1 else None
            if self._env_ref(base):
                ref = ("env", args[0].text, default.ref if default else None)
                return Val(names=(path,), ref=ref)
            v = Val(names=(path,), ref=("name", path))
            return merge([v, default]) if default is not None else v
        if (func in ("os.getenv", "getenv") or self.imports.get(func) == "os.getenv") and \
                args and args[0].text is not None:  # (also ``from os import getenv as env``)
            default = args[1] if len(args) > 1 else None
            return Val(ref=("env", args[0].text, default.ref if default else None))
        if "validate" in last.lower() or last in _VALIDATE_CALLS:
            fn.validates = True
        if last in ("max", "sorted", "min", "nlargest") and any(k == "key" for k, _ in kwargs):
            fn.best = True
        if last in ("argmax", "argsort") or (last == "index" and any(
                fn.calls[cid].func in ("max", "min") for a in args for cid in a.calls
                if cid < len(fn.calls))):
            fn.best = True  # scores.index(max(scores)), np.argmax(scores): the best one is picked
        if func == "min" and any(v.calls for v in args):
            fn.validates = True  # min(max(x, 0), 1): a clamp
        call = CallIR(id=len(fn.calls), func=func, args=tuple(args), kwargs=tuple(kwargs),
                      pos=self.pos(node), recv=recv, star=star, in_try=fn.try_depth > 0)
        fn.calls.append(call)
        if last in _SYSTEM_MESSAGES:  # SystemMessage(content=text): text is an instruction
            content = dict(kwargs).get("content") or (args[0] if args else EMPTY)
            return Val(calls=(call.id,), system=content.names)
        if last in ("startswith", "endswith") and len(node.args) == 1 and not kwargs:
            word = _short_literal(node.args[0])
            if word is not None:  # reply.startswith("LGTM"): a bool, a test of the text
                own = Val(calls=(call.id,))
                return Val(calls=(call.id,), boolean=True, matches=((word, own),))
        return Val(calls=(call.id,))


# The system slot of a message list: role names and message classes that carry instructions.
_SYSTEM_ROLES = frozenset({"system", "developer"})
_SYSTEM_MESSAGES = frozenset({"SystemMessage", "SystemMessagePromptTemplate"})

_TRY: tuple[type[ast.stmt], ...] = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


# the callee of the extraction a text-block filter stands for (Analysis.is_extractor)
TEXT_BLOCKS = "<text blocks>"


def _keeps_text_blocks(cond: ast.expr, target: ast.expr) -> bool:
    """``b.type == "text"`` on the comprehension's own variable: only the text blocks of a
    response are kept (thinking blocks left out)."""
    if not isinstance(cond, ast.Compare) or len(cond.ops) != 1 or \
            not isinstance(cond.ops[0], ast.Eq) or not isinstance(target, ast.Name):
        return False
    left, right = cond.left, cond.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    return isinstance(left, ast.Attribute) and left.attr == "type" and \
        isinstance(left.value, ast.Name) and left.value.id == target.id and \
        isinstance(right, ast.Constant) and right.value == "text"


def _short_literal(node: ast.expr) -> str | None:
    """The literal a text is tested against: a short string, or the first of a tuple, list or
    set of them (``reply in ("PASS", "OK")``); None for anything else."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        words = [str_const(el) for el in node.elts]
        if any(w is None for w in words):
            return None
        node = node.elts[0]
    text = str_const(node)
    if text is None or not text.strip() or len(text) > MAX_MATCH_WORD:
        return None
    if not any(ch.isalnum() for ch in text):
        return None  # ":" in line, "[" in action: a parse of the text's shape, no verdict word
    return text.strip()


def _text_tests(node: ast.Compare, operands: list[Val]) -> tuple[tuple[str, Val], ...]:
    """``"PASS" in reply``, ``reply.strip() == "OK"``, ``reply not in ("A", "B")``: each
    equality or membership test of a value against a short literal, as (literal, value)."""
    nodes = [node.left, *node.comparators]
    out: list[tuple[str, Val]] = []
    for i, op in enumerate(node.ops):
        if not isinstance(op, (ast.Eq, ast.NotEq, *_MEMBER_OPS)):
            continue
        left, right = nodes[i], nodes[i + 1]
        for lit, other, val in ((left, right, operands[i + 1]), (right, left, operands[i])):
            word = _short_literal(lit)
            if word is not None and _short_literal(other) is None and \
                    not isinstance(other, ast.Constant) and (val.names or val.calls):
                out.append((word, val))
                break
    return tuple(out)


def _key_check(node: ast.Compare) -> bool:
    """``"score" in verdict``: a test that a parsed reply has a key (validation evidence), as
    opposed to a test of a text's words (``"Score:" in reply``, ``"pass" in reply.lower()``):
    the literal is a lowercase identifier, and what it is looked up in is no text method's
    result."""
    key = str_const(node.left)
    if key is None or not _KEY_NAME.fullmatch(key):
        return False
    right = node.comparators[0]
    return not (isinstance(right, ast.Call) and isinstance(right.func, ast.Attribute)
                and right.func.attr in _TEXT_METHODS)


def _flat_tuple(target: ast.expr) -> bool:
    """``a, b = ...`` or ``self.x, y = ...``: one plain name or attribute per element, so each
    target can take its own element's value."""
    return isinstance(target, (ast.Tuple, ast.List)) and 2 <= len(target.elts) <= 8 and all(
        isinstance(el, (ast.Name, ast.Attribute)) for el in target.elts)


def _generic_base(func: ast.expr) -> ast.expr:
    """``Agent[None](...)``, ``Agent[Ctx, Out](...)``: a constructor called through its type
    parameters is the class itself. Only a capitalised class applied to type-like arguments
    (``None``, a capitalised name or attribute, a subscripted type, a tuple of those):
    ``handlers[i](...)`` and ``steps[0](...)`` call an element and stay what they are."""
    if not isinstance(func, ast.Subscript):
        return func
    base = func.value
    last = base.attr if isinstance(base, ast.Attribute) else base.id \
        if isinstance(base, ast.Name) else ""
    if not last[:1].isupper():
        return func
    items = func.slice.elts if isinstance(func.slice, ast.Tuple) else [func.slice]
    return base if all(_type_like(i) for i in items) else func


def _type_like(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.Name):
        return node.id[:1].isupper() or node.id in ("str", "int", "float", "bool", "dict",
                                                     "list", "bytes", "object")
    if isinstance(node, ast.Attribute):
        return node.attr[:1].isupper()
    if isinstance(node, ast.Subscript):
        return _type_like(node.value)
    return False
