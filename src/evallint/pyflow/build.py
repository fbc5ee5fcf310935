"""libcst module -> :mod:`evallint.pyflow.ir`: one recursive pass over the tree, no scope or
qualified-name metadata (names resolve later from the import-alias table), positions from a
single ``PositionProvider`` resolution on a wrapper that skips the deep copy."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from evallint.facts import Pos
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
    Return,
    Step,
    Val,
)
from evallint.pyflow.positions import Span
from evallint.roles import name_tokens

MAX_STR = 400  # characters kept of each string constant (role evidence reads the start)
MAX_STRINGS = 8
_ORDER_OPS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_MEMBER_OPS = (cst.In, cst.NotIn)
_VALIDATE_CALLS = {"isinstance", "parse_obj", "parse_raw", "TypeAdapter", "clamp", "clip"}

PosMap = Callable[[int, int], Pos]

# A prompt's output contract asking for a number: "score from 1 to 10", "rate it 1-10",
# "on a scale of 1 to 5", ``"score": <0-1>``, ``<score>``, "[[rating]]".
SCORE_TEXT = re.compile(
    r"\b(?:score|rating|rate|grade)\b[^.\n]{0,80}?(?:\d+(?:\.\d+)?\s*(?:-|–|to|and)\s*\d+|"
    r"out of \d+|/\s*\d+\b)|\bscale (?:of|from) \d|[\"']score[\"']\s*:|<score>|\[\[rating\]\]"
    r"|\bnumeric(?:al)? score\b|\b(?:integer|float|number) score\b",
    re.IGNORECASE,
)


def merge(vals: Sequence[Val]) -> Val:
    """The value of an expression made of several parts (no longer a literal or a simple ref)."""
    vals = [v for v in vals if v is not EMPTY]
    if not vals:
        return EMPTY
    if len(vals) == 1:
        v = vals[0]
        return Val(v.names, v.calls, None, v.strings, v.tool_names, None, v.compares,
                   False, v.chained, v.scored)
    names: list[str] = []
    calls: list[int] = []
    strings: list[str] = []
    tools: list[str] = []
    compares: list[Val] = []
    chained = scored = False
    for v in vals:
        names.extend(v.names)
        calls.extend(v.calls)
        strings.extend(v.strings)
        tools.extend(v.tool_names)
        compares.extend(v.compares)
        chained = chained or v.chained
        scored = scored or v.scored
    return Val(tuple(names), tuple(calls), None, tuple(strings[:MAX_STRINGS]), tuple(tools),
               None, tuple(compares), False, chained, scored)


def asks_score(text: str) -> bool:
    """Does this text ask for a numeric score? (the whole constant, not the truncated one)"""
    return bool(SCORE_TEXT.search(text))


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


class Builder:
    """Builds the facts of one module. ``pos_map`` turns (line, 0-based column) into a Pos."""

    def __init__(self, module: cst.Module, spans: Mapping[cst.CSTNode, Span],
                 pos_map: PosMap) -> None:
        self.positions = spans
        self.module = module
        self.pos_map = pos_map
        self.imports: dict[str, str] = {}
        self.constants: dict[str, Val] = {}
        self.functions: dict[str, FunctionIR] = {}
        self.owners: dict[str, str] = {}
        self.package = ""

    # ------------------------------------------------------------------ positions

    def pos(self, node: cst.CSTNode) -> Pos:
        span = self.positions.get(node)
        if span is None:
            return Pos(1, 1)
        return self.pos_map(span[0], span[1])

    def end_line(self, node: cst.CSTNode) -> int:
        span = self.positions.get(node)
        return self.pos_map(span[2], 0).line if span is not None else 0

    # ------------------------------------------------------------------ module

    def build(self, package: str) -> None:
        self.package = package
        fn = _Fn("<module>")
        body = self.block(self.module.body, fn, module_level=True)
        self.functions["<module>"] = self._finish(fn, (), body, Pos(1, 1))

    def _finish(self, fn: _Fn, params: tuple[Param, ...], body: list[Step], pos: Pos,
                is_method: bool = False) -> FunctionIR:
        return FunctionIR(name=fn.name, params=params, body=body, calls=fn.calls, pos=pos,
                          is_method=is_method, cls=fn.cls, validates=fn.validates, best=fn.best,
                          locals=frozenset(fn.locals))

    def block(self, stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement], fn: _Fn,
              module_level: bool = False, cls: str | None = None) -> list[Step]:
        out: list[Step] = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.small(small, fn, out, module_level, cls)
            elif isinstance(stmt, cst.BaseSmallStatement):
                self.small(stmt, fn, out, module_level, cls)
            else:
                self.compound(stmt, fn, out, module_level, cls)
        return out

    def suite(self, node: cst.BaseSuite, fn: _Fn, module_level: bool = False) -> list[Step]:
        if isinstance(node, cst.IndentedBlock):
            return self.block(node.body, fn, module_level)
        if isinstance(node, cst.SimpleStatementSuite):
            return self.block(node.body, fn, module_level)
        return []

    # ------------------------------------------------------------------ simple statements

    def small(self, node: cst.BaseSmallStatement, fn: _Fn, out: list[Step], module_level: bool,
              cls: str | None) -> None:
        if isinstance(node, cst.Assign):
            value = self.expr(node.value, fn)
            targets: list[str] = []
            weak = False
            for t in node.targets:
                names, w = self.target_names(t.target)
                targets.extend(names)
                weak = weak or w
                if module_level or cls:
                    self.record_constant(t.target, node.value, value, cls, fn)
                self.init_attr(t.target, node.value, value, fn)
            self._note_names(targets, fn)
            out.append(Assign(tuple(targets), value, self.pos(node), weak=weak))
        elif isinstance(node, cst.AnnAssign):
            if node.value is None:
                return
            value = self.expr(node.value, fn)
            names, weak = self.target_names(node.target)
            if module_level or cls:
                self.record_constant(node.target, node.value, value, cls, fn)
            self.init_attr(node.target, node.value, value, fn)
            self._note_names(names, fn)
            out.append(Assign(tuple(names), value, self.pos(node), weak=weak))
        elif isinstance(node, cst.AugAssign):
            value = self.expr(node.value, fn)
            names, _ = self.target_names(node.target)
            out.append(Assign(tuple(names), value, self.pos(node), aug=True))
        elif isinstance(node, cst.Expr):
            out.append(ExprStep(self.expr(node.value, fn), self.pos(node)))
        elif isinstance(node, cst.Return):
            val = self.expr(node.value, fn) if node.value is not None else EMPTY
            out.append(Return(val, self.pos(node)))
        elif isinstance(node, cst.Raise):
            if node.exc is not None:
                out.append(ExprStep(self.expr(node.exc, fn), self.pos(node)))
            out.append(Exit("raise", self.pos(node)))
        elif isinstance(node, cst.Break):
            out.append(Exit("break", self.pos(node)))
        elif isinstance(node, cst.Continue):
            out.append(Exit("continue", self.pos(node)))
        elif isinstance(node, cst.Assert):
            test = self.expr(node.test, fn)
            if test.compares or test.chained:
                fn.validates = True
            out.append(ExprStep(test, self.pos(node)))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                if not full:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.imports[alias.asname.name.value] = full
                else:
                    self.imports[full.split(".")[0]] = full.split(".")[0]
        elif isinstance(node, cst.ImportFrom):
            self.import_from(node)

    def _note_names(self, names: Sequence[str], fn: _Fn) -> None:
        for n in names:
            root = n.split(".")[0]
            fn.locals.add(root)
            if "best" in name_tokens(n):
                fn.best = True

    def import_from(self, node: cst.ImportFrom) -> None:
        base = _dotted(node.module) if node.module is not None else ""
        dots = len(node.relative)
        if dots:
            parts = self.package.split(".") if self.package else []
            keep = parts[: max(0, len(parts) - (dots - 1))]
            base = ".".join([*keep, base] if base else keep)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _dotted(alias.name)
            if not name:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports[local] = f"{base}.{name}" if base else name

    def target_names(self, target: cst.BaseExpression) -> tuple[list[str], bool]:
        """Names an assignment target binds; ``weak`` for element targets (``d[k] = v``)."""
        if isinstance(target, (cst.Tuple, cst.List)):
            names: list[str] = []
            for el in target.elements:
                sub, _ = self.target_names(el.value)
                names.extend(sub)
            return names, False
        if isinstance(target, cst.StarredElement):
            return self.target_names(target.value)
        if isinstance(target, cst.Subscript):
            path = self.path_of(target.value)
            return ([path] if path else []), True
        path = self.path_of(target)
        return ([path] if path else []), False

    def record_constant(self, target: cst.BaseExpression, node: cst.BaseExpression, value: Val,
                        cls: str | None, fn: _Fn) -> None:
        if not isinstance(target, cst.Name):
            return
        name = f"{cls}.{target.value}" if cls else target.value
        self.constants[name] = value
        if value.calls and fn.name == "<module>":
            self.owners[name] = fn.name
        else:
            self.owners.pop(name, None)
        if isinstance(node, cst.Dict):
            self.dict_constants(name, node)

    def dict_constants(self, prefix: str, node: cst.Dict) -> None:
        for el in node.elements:
            if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                key = el.key.evaluated_value
                if isinstance(key, str):
                    self.constants[f"{prefix}.{key}"] = self.expr(el.value, _Fn("<const>"))
                    if isinstance(el.value, cst.Dict):
                        self.dict_constants(f"{prefix}.{key}", el.value)

    def init_attr(self, target: cst.BaseExpression, node: cst.BaseExpression, value: Val,
                  fn: _Fn) -> None:
        """``self.x = ...`` in ``__init__`` makes ``Class.x`` resolvable (defaults of params)."""
        if fn.cls is None or not fn.name.endswith(".__init__"):
            return
        if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            key = f"{fn.cls}.{target.attr.value}"
            if key not in self.constants:
                self.constants[key] = value
                if value.calls:
                    self.owners[key] = fn.name

    # ------------------------------------------------------------------ compound statements

    def compound(self, node: cst.BaseStatement, fn: _Fn, out: list[Step], module_level: bool,
                 cls: str | None) -> None:
        if isinstance(node, cst.FunctionDef):
            self.function(node, fn, cls)
        elif isinstance(node, cst.ClassDef):
            name = node.name.value
            self.block(node.body.body, _Fn(f"<class {name}>"), module_level=False, cls=name)
        elif isinstance(node, cst.If):
            out.append(self.if_stmt(node, fn, module_level))
        elif isinstance(node, (cst.For, cst.While)):
            fn.loops += 1
            loop_id = fn.loops
            lbody = self.suite(node.body, fn, module_level)
            lelse = self.suite(node.orelse.body, fn, module_level) if node.orelse else []
            if isinstance(node, cst.For):
                targets, _ = self.target_names(node.target)
                self._note_names(targets, fn)
                out.append(Loop(loop_id, "for", tuple(targets), self.expr(node.iter, fn), None,
                                lbody, lelse, self.pos(node), self.end_line(node)))
            else:
                test = self.expr(node.test, fn)
                out.append(Loop(loop_id, "while", (), EMPTY, test, lbody, lelse, self.pos(node),
                                self.end_line(node)))
        elif isinstance(node, (cst.Try, cst.TryStar)):
            fn.try_depth += 1
            out.extend(self.suite(node.body, fn, module_level))
            fn.try_depth -= 1
            for handler in node.handlers:
                hb = self.suite(handler.body, fn, module_level)
                out.append(If(EMPTY, hb, [], self.pos(handler)))
            if node.orelse is not None:
                out.extend(self.suite(node.orelse.body, fn, module_level))
            if node.finalbody is not None:
                out.extend(self.suite(node.finalbody.body, fn, module_level))
        elif isinstance(node, cst.With):
            for item in node.items:
                val = self.expr(item.item, fn)
                if item.asname is not None:
                    names, _ = self.target_names(item.asname.name)
                    self._note_names(names, fn)
                    out.append(Assign(tuple(names), val, self.pos(item)))
                else:
                    out.append(ExprStep(val, self.pos(item)))
            out.extend(self.suite(node.body, fn, module_level))
        elif isinstance(node, cst.Match):
            out.append(ExprStep(self.expr(node.subject, fn), self.pos(node)))
            for case in node.cases:
                out.append(If(EMPTY, self.suite(case.body, fn, module_level), [],
                              self.pos(case)))

    def if_stmt(self, node: cst.If, fn: _Fn, module_level: bool) -> If:
        test = self.expr(node.test, fn)
        body = self.suite(node.body, fn, module_level)
        orelse: list[Step] = []
        if isinstance(node.orelse, cst.If):
            orelse = [self.if_stmt(node.orelse, fn, module_level)]
        elif isinstance(node.orelse, cst.Else):
            orelse = self.suite(node.orelse.body, fn, module_level)
        return If(test, body, orelse, self.pos(node))

    def function(self, node: cst.FunctionDef, outer: _Fn, cls: str | None) -> None:
        if cls:
            qual = f"{cls}.{node.name.value}"
        elif outer.name != "<module>" and not outer.name.startswith("<class"):
            qual = f"{outer.name}.{node.name.value}"
        else:
            qual = node.name.value
        fn = _Fn(qual, cls=cls)
        params: list[Param] = []
        p = node.params
        scratch = _Fn("<defaults>")  # defaults run at definition time, not in the body
        for param in (*p.posonly_params, *p.params):
            default = self.expr(param.default, scratch) if param.default is not None else None
            params.append(Param(param.name.value, default))
        if isinstance(p.star_arg, cst.Param):
            params.append(Param(p.star_arg.name.value, None, star=True))
        for param in p.kwonly_params:
            default = self.expr(param.default, scratch) if param.default is not None else None
            params.append(Param(param.name.value, default))
        if p.star_kwarg is not None:
            params.append(Param(p.star_kwarg.name.value, None, star=True))
        for prm in params:
            fn.locals.add(prm.name)
        is_method = bool(cls) and bool(params) and params[0].name in ("self", "cls")
        body = self.suite(node.body, fn)
        if qual in self.functions:  # redefined: keep the earlier one as qual#1, qual#2...
            n = 1
            while f"{qual}#{n}" in self.functions:
                n += 1
            self.functions[f"{qual}#{n}"] = replace(self.functions[qual], name=f"{qual}#{n}")
        self.functions[qual] = self._finish(fn, tuple(params), body, self.pos(node), is_method)

    # ------------------------------------------------------------------ expressions

    def path_of(self, node: cst.BaseExpression) -> str | None:
        """``a.b["k"][0].c`` -> ``a.b.k.0.c``; None when the root is not a name."""
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            base = self.path_of(node.value)
            return f"{base}.{node.attr.value}" if base else None
        if isinstance(node, cst.Subscript):
            base = self.path_of(node.value)
            if not base:
                return None
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                idx = node.slice[0].slice.value
                if isinstance(idx, cst.SimpleString):
                    key = idx.evaluated_value
                    if isinstance(key, str):
                        return f"{base}.{key}"
                if isinstance(idx, cst.Integer):
                    return f"{base}.{idx.value}"
                if isinstance(idx, cst.UnaryOperation) and isinstance(idx.expression,
                                                                      cst.Integer):
                    return f"{base}.-{idx.expression.value}"
            return f"{base}.[]"
        return None

    def _env_ref(self, path: str) -> bool:
        root = path.split(".")[0]
        full = self.imports.get(root, root if root == "os" else "")
        return full in ("os", "os.environ") and (path.startswith(f"{root}.environ")
                                                 or full == "os.environ")

    def expr(self, node: cst.BaseExpression | None, fn: _Fn) -> Val:
        if node is None:
            return EMPTY
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return Val(truthy=node.value == "True")
            return Val(names=(node.value,), ref=("name", node.value))
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            path = self.path_of(node)
            if path is not None:
                extra = EMPTY
                if isinstance(node, cst.Subscript) and path.endswith(".[]"):
                    extra = merge([self.expr(s.slice.value, fn) for s in node.slice
                                   if isinstance(s.slice, cst.Index)])
                if self._env_ref(path) and isinstance(node, cst.Subscript):
                    key = path.rsplit(".", 1)[-1]
                    return Val(names=(path,), ref=("env", key, None))
                v = Val(names=(path,), ref=("name", path))
                return merge([v, extra]) if extra is not EMPTY else v
            inner = self.expr(node.value, fn)
            if isinstance(node, cst.Subscript):
                parts = [self.expr(s.slice.value, fn) for s in node.slice
                         if isinstance(s.slice, cst.Index)]
                return merge([inner, *parts])
            return merge([inner])
        if isinstance(node, cst.Call):
            return self.call(node, fn)
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            return literal(value) if isinstance(value, str) else EMPTY
        if isinstance(node, cst.ConcatenatedString):
            cvalue = node.evaluated_value
            if isinstance(cvalue, str):
                return literal(cvalue)
            return merge([self.expr(node.left, fn), self.expr(node.right, fn)])
        if isinstance(node, cst.FormattedString):
            pieces: list[Val] = []
            texts: list[str] = []
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    texts.append(part.value)
                elif isinstance(part, cst.FormattedStringExpression):
                    pieces.append(self.expr(part.expression, fn))
            joined = "".join(texts)
            strings = Val(strings=(joined[:MAX_STR],),
                          scored=asks_score(joined)) if joined.strip() else EMPTY
            return merge([strings, *pieces])
        if isinstance(node, cst.BinaryOperation):
            left = self.expr(node.left, fn)
            right = self.expr(node.right, fn)
            if left.text is not None and right.text is not None:
                return literal(left.text + right.text)
            return merge([left, right])
        if isinstance(node, cst.BooleanOperation):
            left = self.expr(node.left, fn)
            right = self.expr(node.right, fn)
            v = merge([left, right])
            ref = left.ref
            if ref and ref[0] == "env" and ref[2] is None and right.ref is not None:
                ref = ("env", ref[1], right.ref)
            elif isinstance(node.operator, cst.Or):
                ref = ref or right.ref
            else:
                ref = None
            return Val(v.names, v.calls, None, v.strings, v.tool_names, ref, v.compares,
                       False, v.chained, v.scored)
        if isinstance(node, cst.UnaryOperation):
            v = merge([self.expr(node.expression, fn)])
            if isinstance(node.operator, cst.Not):
                return Val(v.names, v.calls, None, v.strings, v.tool_names, None, v.compares,
                           False, v.chained, v.scored, True)
            return v
        if isinstance(node, cst.Comparison):
            return self.comparison(node, fn)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            vals = [self.expr(el.value, fn) for el in node.elements]
            tools = [el.value.value for el in node.elements if isinstance(el.value, cst.Name)]
            tools += [v.text for v in vals if v.text is not None]
            m = merge(vals)
            return Val(m.names, m.calls, None, m.strings, m.tool_names + tuple(tools), None,
                       m.compares, False, m.chained, m.scored)
        if isinstance(node, cst.Dict):
            return self.dict_expr(node, fn)
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return merge([self.expr(node.elt, fn), *self.comp_for(node.for_in, fn)])
        if isinstance(node, cst.DictComp):
            return merge([self.expr(node.key, fn), self.expr(node.value, fn),
                          *self.comp_for(node.for_in, fn)])
        if isinstance(node, cst.IfExp):
            return merge([self.expr(node.test, fn), self.expr(node.body, fn),
                          self.expr(node.orelse, fn)])
        if isinstance(node, (cst.Await, cst.NamedExpr)):
            return self.expr(node.value if isinstance(node, cst.NamedExpr) else node.expression,
                             fn)
        if isinstance(node, cst.Yield):
            yv = node.value
            return self.expr(yv, fn) if isinstance(yv, cst.BaseExpression) else EMPTY
        if isinstance(node, cst.StarredElement):
            return self.expr(node.value, fn)
        if isinstance(node, cst.Integer) and node.value not in ("0",):
            return Val(truthy=True)
        return EMPTY

    def comp_for(self, comp: cst.CompFor, fn: _Fn) -> list[Val]:
        vals = [self.expr(comp.iter, fn)]
        vals += [self.expr(c.test, fn) for c in comp.ifs]
        if comp.inner_for_in is not None:
            vals += self.comp_for(comp.inner_for_in, fn)
        return vals

    def comparison(self, node: cst.Comparison, fn: _Fn) -> Val:
        operands = [self.expr(node.left, fn)]
        operands += [self.expr(c.comparator, fn) for c in node.comparisons]
        v = merge(operands)
        ordering = [c for c in node.comparisons if isinstance(c.operator, _ORDER_OPS)]
        chained = len(ordering) >= 2
        if chained:
            fn.validates = True
        if any(isinstance(c.operator, _MEMBER_OPS) for c in node.comparisons) and (
            isinstance(node.left, cst.SimpleString)
        ):
            fn.validates = True  # "score" in data: a key check
        compares = (*v.compares, v) if ordering else v.compares
        return Val(v.names, v.calls, None, v.strings, v.tool_names, None, compares, False,
                   chained or v.chained, v.scored, True)

    def dict_expr(self, node: cst.Dict, fn: _Fn) -> Val:
        vals: list[Val] = []
        tools: list[str] = []
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                key = self.expr(el.key, fn)
                value = self.expr(el.value, fn)
                vals += [key, value]
                if key.text in ("name", "type") and value.text is not None:
                    tools.append(value.text)
            else:
                vals.append(self.expr(el.value, fn))
        m = merge(vals)
        return Val(m.names, m.calls, None, m.strings, m.tool_names + tuple(tools), None,
                   m.compares, False, m.chained, m.scored)

    def call(self, node: cst.Call, fn: _Fn) -> Val:
        func = self.path_of(node.func)
        recv: Val | None = None
        if func is None:
            if isinstance(node.func, cst.Attribute):
                recv = self.expr(node.func.value, fn)
                func = "<expr>." + node.func.attr.value
            else:
                recv = self.expr(node.func, fn)
                func = ""
        last = func.rsplit(".", 1)[-1]
        args: list[Val] = []
        kwargs: list[tuple[str, Val]] = []
        star = False
        for arg in node.args:
            v = self.expr(arg.value, fn)
            if arg.star:
                star = True
                args.append(v)
            elif arg.keyword is not None:
                kwargs.append((arg.keyword.value, v))
            else:
                args.append(v)
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
        if func in ("os.getenv", "getenv") and args and args[0].text is not None:
            default = args[1] if len(args) > 1 else None
            return Val(ref=("env", args[0].text, default.ref if default else None))
        if "validate" in last.lower() or last in _VALIDATE_CALLS:
            fn.validates = True
        if last in ("max", "sorted", "min", "nlargest") and any(k == "key" for k, _ in kwargs):
            fn.best = True
        if func == "min" and any(v.calls for v in args):
            fn.validates = True  # min(max(x, 0), 1): a clamp
        call = CallIR(id=len(fn.calls), func=func, args=tuple(args), kwargs=tuple(kwargs),
                      pos=self.pos(node), recv=recv, star=star, in_try=fn.try_depth > 0)
        fn.calls.append(call)
        return Val(calls=(call.id,))


def provider_spans(module: cst.Module) -> dict[cst.CSTNode, Span]:
    """Spans from libcst's ``PositionProvider`` (one code generation pass): the fallback when
    the ``ast`` tree cannot be paired with the CST.

    ``MetadataWrapper.resolve`` also runs a batched visit of the whole tree even when no
    batchable provider is asked for (libcst 1.9), which costs about as much again; the
    provider is run directly here, with the wrapper as the fallback.
    """
    provider = PositionProvider()
    computed: Mapping[cst.CSTNode, CodeRange]
    try:
        provider._computed = {}
        provider._gen_impl(module)
        computed = provider._computed  # type: ignore[assignment]
    except AttributeError:  # pragma: no cover - a libcst without these internals
        computed = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {n: (r.start.line, r.start.column, r.end.line) for n, r in computed.items()}


def _dotted(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""
