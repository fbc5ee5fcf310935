"""A TypeScript/JavaScript tree -> the Python ``ast`` the Python analysis already reads.

The rules, the interpreter and the catalogue know evaluation loops in one language. A script is
lowered, node by node, into the Python tree of the same meaning, with the script's own lines
and columns, and then built and analysed exactly as a Python module is: one set of facts, one
set of rules, one catalogue. What the lowering decides:

- An object literal given first to a call is its keyword arguments
  (``client.messages.create({model, messages})`` is ``create(model=..., messages=...)``), except
  for a function of this file whose first parameter is a plain name (it gets the object). A
  destructured parameter (``function judge({ draft, rubric })``) is keyword parameters.
- Imports of a package the catalogue lists read as imports of the Python-side module its row
  names (``import Anthropic from "@anthropic-ai/sdk"`` is ``from anthropic import
  Anthropic``); relative and ``@/`` imports name the project's modules as
  :func:`~evallint.frontends.scriptparse.module_name` does.
- Functions written as arrows or callbacks become named functions (a callback is named after
  what it is given to: ``addNode("judge", async (s) => ...)`` defines ``judge``); ``xs.map(x =>
  e)`` is a list comprehension and a ``forEach``/``map`` with a body is a ``for`` loop over
  ``xs``; ``this`` is ``self``; a class field is a class attribute; a constructor's parameter
  properties are attributes set in ``__init__``.
- The language's own functions read as Python's through ``rules/data/script-builtins.yaml``
  (``JSON.parse`` is ``json.loads``, ``a.includes(b)`` is ``b in a``, ``xs.length`` is
  ``len(xs)``, ``fs.writeFileSync(p, s)`` writes ``s`` to the file ``p``).
- ``for (let i = 0; i < n; i++)`` is ``for i in range(0, n)``; any other ``for (;;)`` a
  ``while`` loop with its update at the end of the body; ``do {} while (c)`` a ``while True``
  loop that breaks when ``c`` fails; ``switch`` an ``if`` chain.
- Types, interfaces and type assertions are left out; ``await`` and ``!`` are transparent.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evallint.frontends.scriptparse import resolve_specifier
from evallint.scriptbuiltins import builtins

Node = Any  # a tree_sitter.Node

_SKIP_STATEMENTS = frozenset({
    "comment", "empty_statement", "interface_declaration", "type_alias_declaration",
    "enum_declaration", "ambient_declaration", "function_signature", "import_alias",
    "abstract_method_signature", "hash_bang_line", "debugger_statement", "declare",
})
_COMPARE = {"===": ast.Eq, "==": ast.Eq, "!==": ast.NotEq, "!=": ast.NotEq, "<": ast.Lt,
            "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "in": ast.In, "instanceof": ast.Is}
_BINARY = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "%": ast.Mod,
           "**": ast.Pow, "|": ast.BitOr, "&": ast.BitAnd, "^": ast.BitXor,
           "<<": ast.LShift, ">>": ast.RShift, ">>>": ast.RShift}
_AUG = {"+=": ast.Add, "-=": ast.Sub, "*=": ast.Mult, "/=": ast.Div, "%=": ast.Mod,
        "**=": ast.Pow, "|=": ast.BitOr, "&=": ast.BitAnd}
# what a fetch Response says of the HTTP exchange (not of the model's reply)
_HTTP_STATUS = frozenset({"ok", "status", "statusText", "headers", "redirected", "url"})
_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression",
                       "non_null_expression", "type_assertion", "await_expression"})
_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function",
                        "generator_function"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_HEX = re.compile(r"u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
# the roles a two-element array's first string names when the array is a chat message
_ROLES = frozenset({"system", "developer", "user", "human", "assistant", "ai", "placeholder"})
# ``type_params`` exists on definitions from Python 3.12 (and is required there by unparse)
_TYPE_PARAMS: dict[str, Any] = {"type_params": []} if sys.version_info >= (3, 12) else {}
# the most statements one callback or one file's hoisting may add (a bound on hostile input)
MAX_HOISTED = 10000


@dataclass
class _Scope:
    """Statements hoisted before the statement being lowered (callbacks made functions,
    ``map`` bodies made loops)."""

    pre: list[ast.stmt] = field(default_factory=list)


def _scalar_type(annotation: str) -> bool:
    """A parameter typed as one plain value (``string``, ``number | undefined``)."""
    parts = {p.strip() for p in annotation.split("|")}
    return bool(parts) and parts <= {"string", "number", "boolean", "undefined", "null",
                                     "bigint"}


class Lowerer:
    """Lowers one script. ``cat`` is the catalogue: its ``script_package`` maps an import
    specifier to the row's module and default export, ``script_methods`` renames the
    frameworks' methods (``withStructuredOutput``) to the rows' names, ``script_builders`` are
    the methods that hand back their receiver."""

    def __init__(self, text: bytes, rel: str, cat: Any) -> None:
        self.src = text
        self.rel = rel
        self.packages = cat.script_package
        self.renames: dict[str, str] = cat.script_methods
        self.builders: frozenset[str] = cat.script_builders
        self.table = builtins()
        self.scope = _Scope()
        self.hoisted = 0
        self.counter = 0
        # functions of this file by name -> their first parameter is destructured
        self.local_shapes: dict[str, bool] = {}
        self.imported: list[str] = []
        # per function being lowered: its parameter forwarded as keywords (see forwarded)
        self.forwarding: list[str] = []
        self.py_modules: set[str] = set()  # Python modules the built-ins lower to
        # the function's `const name = {...}` objects: handed whole to an SDK call, their
        # properties are its keywords (`create(params)` is `create(model=..., ...)`)
        self.objects: dict[str, Node] = {}
        self.expanding: set[int] = set()  # objects being spread into another (no cycles)
        self.forwards: dict[int, str | None] = {}  # forwarded(), by function node
        # workflow frameworks (see ``workflow_chain``); the step being declared (its name and
        # the key of its work function), and where each imported name comes from
        self.workflows: tuple[Any, ...] = tuple(getattr(cat, "script_workflows", ()))
        self.endpoints: tuple[tuple[str, str], ...] = tuple(getattr(cat, "script_endpoints", ()))
        # API requests lowered to SDK calls (by node), and the names holding their responses:
        # a response's ``ok``/``status`` are the HTTP exchange's, not the model's words
        self.requests: set[tuple[int, int]] = set()
        self.responses: set[str] = set()
        self.step_binding: tuple[str, str] | None = None
        self.import_origin: dict[str, tuple[str, str]] = {}
        # methods that make a class of an imported package (see ScriptPackage.factories) ->
        # the module and the class, and the imports the lowering adds for them
        self.factories: dict[str, tuple[str, str]] = {}
        self.added_imports: list[ast.stmt] = []

    # ------------------------------------------------------------------ helpers

    def text(self, node: Node) -> str:
        return str(node.text.decode("utf-8", "replace"))

    @staticmethod
    def at(pynode: Any, node: Node) -> Any:
        pynode.lineno = node.start_point[0] + 1
        pynode.col_offset = node.start_point[1]
        pynode.end_lineno = node.end_point[0] + 1
        pynode.end_col_offset = node.end_point[1]
        return pynode

    def at_span(self, pynode: Any, start: Node, end: Node) -> Any:
        """``pynode`` from where ``start`` begins to where ``end`` ends."""
        self.at(pynode, end)
        pynode.lineno = start.start_point[0] + 1
        pynode.col_offset = start.start_point[1]
        return pynode

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"_{stem}{self.counter}"

    @staticmethod
    def named(node: Node) -> Iterator[Node]:
        for c in node.named_children:
            if c.type != "comment":
                yield c

    # ------------------------------------------------------------------ module

    def module(self, root: Node) -> ast.Module:
        self._shapes(root)
        body = self.block(root.named_children)
        # the Python modules the lowered built-ins name (``json.loads``, ``os.getenv``),
        # imported as a Python module that uses them would
        imports: list[ast.stmt] = [ast.Import(names=[ast.alias(name=m)], lineno=1, col_offset=0)
                                   for m in sorted(self.py_modules)]
        return ast.Module(body=[*imports, *body], type_ignores=[])

    def _shapes(self, root: Node) -> None:
        for n in root.named_children:
            decl = n.child_by_field_name("declaration") if n.type == "export_statement" else n
            if decl is None:
                continue
            if decl.type in ("function_declaration", "generator_function_declaration"):
                name = decl.child_by_field_name("name")
                params = decl.child_by_field_name("parameters")
                if name is not None and params is not None:
                    self.local_shapes[self.text(name)] = self._destructures(params) or \
                        self.forwarded(decl) is not None
            elif decl.type in ("lexical_declaration", "variable_declaration"):
                for d in decl.named_children:
                    name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
                    if name is not None and value is not None and value.type in _FUNCTIONS \
                            and name.type == "identifier":
                        params = value.child_by_field_name("parameters")
                        self.local_shapes[self.text(name)] = params is not None and (
                            self._destructures(params) or self.forwarded(value) is not None)

    def forwarded(self, fn: Node) -> str | None:
        """``function complete(args) { return client.chat.completions.create(args) }``: the
        first parameter, handed whole to a call, is that call's keywords (as Python's
        ``def complete(**args): return create(**args)``); its name, else None. Asked when the
        file's shapes are read and again when the function is lowered: kept."""
        if fn.id not in self.forwards:
            self.forwards[fn.id] = self._forwarded(fn)
        return self.forwards[fn.id]

    def _forwarded(self, fn: Node) -> str | None:
        params = fn.child_by_field_name("parameters")
        pat = self.first_pattern(params)
        body = fn.child_by_field_name("body")
        if pat is None or body is None or pat.type != "identifier" or (
                pat.parent is not None and _scalar_type(self.text(
                    pat.parent.child_by_field_name("type") or pat).lstrip(": ?"))):
            return None  # ``draft(topic: string)`` hands on a text, not a call's options
        name = self.text(pat)
        stack, seen = [body], 0
        while stack and seen < 5000:
            n = stack.pop()
            seen += 1
            if n.type == "call_expression":
                args = n.child_by_field_name("arguments")
                items = list(self.named(args)) if args is not None else []
                callee = n.child_by_field_name("function")
                if len(items) == 1 and items[0].type == "identifier" and \
                        self.text(items[0]) == name and callee is not None and (
                            callee.type == "member_expression"
                            or self.text(callee) in self.import_origin):
                    # (a library's call: ``client.chat.completions.create(args)``,
                    # ``generateText(args)``; a project function's call is given a value)
                    return name
            stack.extend(n.named_children)
        return None

    def first_pattern(self, params: Node | None) -> Node | None:
        """The pattern of the first of these parameters (``x``, ``{ a, b }``); ``params`` is a
        function's parameter list or an arrow's lone parameter."""
        if params is None:
            return None
        first = params if params.type == "identifier" else next(iter(self.named(params)), None)
        if first is not None and first.type in ("required_parameter", "optional_parameter"):
            return first.child_by_field_name("pattern")
        return first

    def _destructures(self, params: Node) -> bool:
        first = next(iter(self.named(params)), None)
        if first is None:
            return True  # no parameter: an object argument is options nobody reads
        pat = first.child_by_field_name("pattern") or first
        if pat.type == "assignment_pattern":
            pat = pat.child_by_field_name("left") or pat
        return pat.type == "object_pattern"

    def block(self, nodes: Any) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for n in nodes:
            saved, self.scope = self.scope, _Scope()
            stmts = self.statement(n)
            out.extend(self.scope.pre)
            out.extend(stmts)
            self.scope = saved
        return out

    def body_of(self, node: Node | None) -> list[ast.stmt]:
        if node is None:
            return []
        if node.type == "statement_block":
            return self.block(node.named_children)
        return self.block([node])

    # ------------------------------------------------------------------ statements

    def statement(self, n: Node) -> list[ast.stmt]:
        t = n.type
        if t in _SKIP_STATEMENTS:
            return []
        if t == "import_statement":
            return self.import_statement(n)
        if t == "export_statement":
            decl = n.child_by_field_name("declaration")
            if decl is not None:
                return self.statement(decl)
            if n.child_by_field_name("source") is not None:
                return self.reexport(n)
            value = n.child_by_field_name("value")
            if value is not None:
                return self.assign_value("default", value, n)
            inner = [c for c in self.named(n) if c.type in _FUNCTIONS
                     or c.type.endswith("declaration")]
            return [s for c in inner for s in self.statement(c)]
        if t in ("lexical_declaration", "variable_declaration"):
            out: list[ast.stmt] = []
            for d in n.named_children:
                if d.type == "variable_declarator":
                    out.extend(self.declarator(d))
            return out
        if t in ("function_declaration", "generator_function_declaration"):
            name = n.child_by_field_name("name")
            return [self.function(self.text(name) if name else self.fresh("fn"), n)]
        if t in ("class_declaration", "abstract_class_declaration", "class"):
            return [self.class_def(n)]
        if t == "expression_statement":
            first: Node | None = next(iter(self.named(n)), None)
            return self.expression_statement(first) if first is not None else []
        if t == "return_statement":
            value = next(iter(self.named(n)), None)
            return [self.at(ast.Return(value=self.expr(value) if value is not None else None),
                            n)]
        if t == "throw_statement":
            value = next(iter(self.named(n)), None)
            return [self.at(ast.Raise(exc=self.expr(value) if value is not None else None,
                                      cause=None), n)]
        if t == "break_statement":
            return [self.at(ast.Break(), n)]
        if t == "continue_statement":
            return [self.at(ast.Continue(), n)]
        if t == "if_statement":
            return [self.if_statement(n)]
        if t == "for_statement":
            return self.for_statement(n)
        if t == "for_in_statement":
            return [self.for_in(n)]
        if t == "while_statement":
            test = self.expr(n.child_by_field_name("condition"))
            return [self.at(ast.While(test=test, body=self.nonempty(
                self.body_of(n.child_by_field_name("body")), n), orelse=[]), n)]
        if t == "do_statement":
            body = self.body_of(n.child_by_field_name("body"))
            cond = n.child_by_field_name("condition")
            stop = self.at(ast.If(test=self.at(ast.UnaryOp(op=ast.Not(), operand=self.expr(
                cond)), cond), body=[self.at(ast.Break(), cond)], orelse=[]), cond)
            return [self.at(ast.While(test=self.at(ast.Constant(True), n),
                                      body=[*body, stop], orelse=[]), n)]
        if t == "try_statement":
            return [self.try_statement(n)]
        if t == "switch_statement":
            return self.switch(n)
        if t == "statement_block":
            return self.block(n.named_children)
        if t == "labeled_statement":
            body = n.child_by_field_name("body")
            return self.statement(body) if body is not None else []
        if t in ("module", "internal_module"):  # a TypeScript namespace: its body
            body = n.child_by_field_name("body")
            return self.block(body.named_children) if body is not None else []
        return []

    def nonempty(self, body: list[ast.stmt], n: Node) -> list[ast.stmt]:
        return body or [self.at(ast.Pass(), n)]

    def import_statement(self, n: Node) -> list[ast.stmt]:
        src = n.child_by_field_name("source")
        if src is None:
            return []
        spec = self.string_value(src)
        module, default = self.module_of(spec)
        clause = next((c for c in n.named_children if c.type == "import_clause"), None)
        if clause is None:
            return []
        out: list[ast.stmt] = []
        for c in clause.named_children:
            if c.type == "identifier":  # the default export
                out.append(self.import_from(module, default or "default", self.text(c), n))
            elif c.type == "namespace_import":
                ident = next((x for x in c.named_children if x.type == "identifier"), None)
                if ident is not None:
                    out.append(self.at(ast.Import(names=[ast.alias(
                        name=module, asname=self.text(ident))]), n))
            elif c.type == "named_imports":
                for spec_node in c.named_children:
                    if spec_node.type != "import_specifier":
                        continue
                    name = spec_node.child_by_field_name("name")
                    alias = spec_node.child_by_field_name("alias")
                    if name is None:
                        continue
                    out.append(self.import_from(module, self.text(name),
                                                self.text(alias or name), n))
        return out

    def reexport(self, n: Node) -> list[ast.stmt]:
        """``export { draft, review as check } from "./steps"``: the names imported here (an
        index module hands on what another defines), with the work functions a workflow step
        of that name runs (``draft__execute``, see :meth:`run_step`)."""
        src = n.child_by_field_name("source")
        clause = next((c for c in n.named_children if c.type == "export_clause"), None)
        if src is None or clause is None:
            return []
        module, _ = self.module_of(self.string_value(src))
        runs = sorted({wf.run for wf in self.workflows})
        out: list[ast.stmt] = []
        for spec in clause.named_children:
            name = spec.child_by_field_name("name")
            alias = spec.child_by_field_name("alias")
            if spec.type != "export_specifier" or name is None:
                continue
            out.append(self.import_from(module, self.text(name), self.text(alias or name), n))
            out.extend(self.at(ast.ImportFrom(module=module, names=[ast.alias(
                name=f"{self.text(name)}__{run}", asname=f"{self.text(alias or name)}__{run}")],
                level=0), n) for run in runs)
        return out

    def import_from(self, module: str, name: str, local: str, n: Node) -> ast.stmt:
        self.imported.append(f"{module}.{name}")
        self.import_origin[local] = (module, name)
        return self.at(ast.ImportFrom(module=module, names=[ast.alias(name=name, asname=local)],
                                      level=0), n)

    def module_of(self, spec: str) -> tuple[str, str]:
        """The module an import specifier names (the catalogue's for a known package, the
        project's for a relative one), and the name of its default export."""
        own = resolve_specifier(spec, self.rel)
        if own is not None:
            return own, ""
        row = self.packages(spec)
        if row is not None:
            for method, cls in row.factories:
                self.factories.setdefault(method, (row.module, cls))
            return row.module, row.default
        return spec.removeprefix("node:"), ""

    def require(self, value: Node) -> str | None:
        """``require("m")``: the specifier, else None."""
        if value.type != "call_expression":
            return None
        fn = value.child_by_field_name("function")
        args = value.child_by_field_name("arguments")
        if fn is None or args is None or self.text(fn) != "require":
            return None
        first = next(iter(self.named(args)), None)
        return self.string_value(first) if first is not None and first.type == "string" \
            else None

    def declarator(self, d: Node) -> list[ast.stmt]:
        name = d.child_by_field_name("name")
        value = d.child_by_field_name("value")
        if name is None or value is None:
            return []
        value = self.unwrap(value)
        spec = self.require(value)
        if spec is not None:
            module, default = self.module_of(spec)
            if name.type == "identifier":
                if default:
                    return [self.import_from(module, default, self.text(name), d)]
                return [self.at(ast.Import(names=[ast.alias(name=module,
                                                            asname=self.text(name))]), d)]
            if name.type == "object_pattern":
                out = []
                for key, local, _ in self.pattern_fields(name):
                    out.append(self.import_from(module, key, local, d))
                return out
            return []
        if name.type == "identifier":
            parent = d.parent
            obj = value
            if obj.type == "ternary_expression":  # cond ? {...} : {...}: the first shape
                obj = self.unwrap(obj.child_by_field_name("consequence") or obj)
            if obj.type == "object" and parent is not None and \
                    parent.child(0) is not None and parent.child(0).type == "const":
                self.objects[self.text(name)] = obj  # const params = {...}
            run = self.step_run(value)
            if run is not None:  # const draft = createStep({id, execute}): draft__execute
                self.step_binding = (self.text(name), run)
                try:
                    return self.assign_value(self.text(name), value, d)
                finally:
                    self.step_binding = None
            out = self.assign_value(self.text(name), value, d)
            if (value.start_byte, value.end_byte) in self.requests:  # const res = await fetch()
                self.responses.add(self.text(name))
            return out
        target = self.target(name)
        if target is None:
            return []
        return self.destructure(name, self.expr(value), d)

    def assign_value(self, name: str, value: Node, n: Node) -> list[ast.stmt]:
        value = self.unwrap(value)
        if value.type in _FUNCTIONS:
            return [self.function(name, value)]
        chain = self.workflow_chain(value, name)
        if chain is not None:  # the chain's root, and the function it runs (hoisted)
            return [self.at(ast.Assign(targets=[self.at(ast.Name(id=name, ctx=ast.Store()), n)],
                                       value=chain), n)]
        if self.builder_chain(value, into=name) is not None:  # (its statements are hoisted)
            return []
        if value.type == "class":
            return [self.class_def(value, name)]
        return [self.at(ast.Assign(targets=[self.at(ast.Name(id=name, ctx=ast.Store()), n)],
                                   value=self.expr(value)), n)]

    def pattern_fields(self, pat: Node) -> Iterator[tuple[str, str, Node | None]]:
        """(key, local name, default) for each property of an object pattern."""
        for p in pat.named_children:
            if p.type == "shorthand_property_identifier_pattern":
                yield self.text(p), self.text(p), None
            elif p.type == "object_assignment_pattern":
                left, right = p.child_by_field_name("left"), p.child_by_field_name("right")
                if left is not None:
                    yield self.text(left), self.text(left), right
            elif p.type == "pair_pattern":
                key, val = p.child_by_field_name("key"), p.child_by_field_name("value")
                if key is None or val is None:
                    continue
                default = None
                if val.type == "assignment_pattern":
                    default = val.child_by_field_name("right")
                    val = val.child_by_field_name("left")
                if val is not None and val.type == "identifier":
                    yield self.key_text(key), self.text(val), default
            elif p.type == "rest_pattern":
                ident = next(iter(self.named(p)), None)
                if ident is not None:
                    yield "", self.text(ident), None

    def destructure(self, pat: Node, value: ast.expr, n: Node) -> list[ast.stmt]:
        """``const { a, b: c } = v``: a temporary holds ``v`` once; each name reads its key."""
        if pat.type == "array_pattern":
            target = self.target(pat)
            if target is None:
                return []
            return [self.at(ast.Assign(targets=[target], value=value), n)]
        tmp = self.fresh("d")
        out: list[ast.stmt] = [self.at(ast.Assign(
            targets=[self.at(ast.Name(id=tmp, ctx=ast.Store()), n)], value=value), n)]
        for key, local, default in self.pattern_fields(pat):
            read: ast.expr = self.at(ast.Name(id=tmp, ctx=ast.Load()), n)
            if key:
                read = self.at(ast.Attribute(value=read, attr=key, ctx=ast.Load()), n) \
                    if _IDENT.match(key) else self.at(ast.Subscript(
                        value=read, slice=ast.Constant(key), ctx=ast.Load()), n)
            if default is not None:
                read = self.at(ast.BoolOp(op=ast.Or(), values=[read, self.expr(default)]), n)
            out.append(self.at(ast.Assign(
                targets=[self.at(ast.Name(id=local, ctx=ast.Store()), n)], value=read), n))
        return out

    def target(self, n: Node) -> ast.expr | None:
        n = self.unwrap(n)
        t = n.type
        if t in ("identifier", "shorthand_property_identifier_pattern"):
            return self.at(ast.Name(id=self.text(n), ctx=ast.Store()), n)
        if t == "member_expression":
            obj = n.child_by_field_name("object")
            prop = n.child_by_field_name("property")
            if obj is None or prop is None:
                return None
            return self.at(ast.Attribute(value=self.expr(obj), attr=self.text(prop),
                                         ctx=ast.Store()), n)
        if t == "subscript_expression":
            obj = n.child_by_field_name("object")
            idx = n.child_by_field_name("index")
            if obj is None or idx is None:
                return None
            return self.at(ast.Subscript(value=self.expr(obj), slice=self.expr(idx),
                                         ctx=ast.Store()), n)
        if t == "array_pattern":
            elts = [x for x in (self.target(c) for c in self.named(n)) if x is not None]
            return self.at(ast.Tuple(elts=elts, ctx=ast.Store()), n)
        if t == "assignment_pattern":
            left = n.child_by_field_name("left")
            return self.target(left) if left is not None else None
        if t == "rest_pattern":
            inner = next(iter(self.named(n)), None)
            return self.target(inner) if inner is not None else None
        if t == "object_pattern":
            return self.at(ast.Name(id=self.fresh("d"), ctx=ast.Store()), n)
        return None

    def expression_statement(self, e: Node) -> list[ast.stmt]:
        e = self.unwrap(e)
        t = e.type
        checked = self.assertion(e)
        if checked is not None:
            return [checked]
        if t == "assignment_expression":
            left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
            if left is None or right is None:
                return []
            right = self.unwrap(right)
            exported = self.exported_name(left)
            if exported is not None and right.type in _FUNCTIONS:
                return [self.function(exported, right)]
            if left.type == "identifier":
                return self.assign_value(self.text(left), right, e)
            if left.type in ("object_pattern", "array_pattern"):
                return self.destructure(left, self.expr(right), e)
            target = self.target(left)
            if target is None:
                return [self.at(ast.Expr(value=self.expr(right)), e)]
            return [self.at(ast.Assign(targets=[target], value=self.expr(right)), e)]
        if t == "augmented_assignment_expression":
            left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
            op = e.child_by_field_name("operator")
            target = self.target(left) if left is not None else None
            if target is None or right is None or op is None:
                return []
            sym = self.text(op)
            if sym in _AUG:
                return [self.at(ast.AugAssign(target=target, op=_AUG[sym](),  # type: ignore[arg-type]
                                              value=self.expr(right)), e)]
            read = self.expr(left)  # ||=, ??=, &&=
            return [self.at(ast.Assign(targets=[target], value=self.at(ast.BoolOp(
                op=ast.Or(), values=[read, self.expr(right)]), e)), e)]
        if t == "update_expression":
            arg = e.child_by_field_name("argument")
            target = self.target(arg) if arg is not None else None
            if target is None:
                return []
            op = ast.Add() if "++" in self.text(e) else ast.Sub()
            return [self.at(ast.AugAssign(target=target, op=op,  # type: ignore[arg-type]
                                          value=self.at(ast.Constant(1), e)), e)]
        if t == "call_expression":
            loop = self.callback_loop(e, statement=True)
            if loop is not None:
                return loop[0]
        if t == "sequence_expression":
            return [s for c in self.named(e) for s in self.expression_statement(c)]
        return [self.at(ast.Expr(value=self.expr(e)), e)]

    def exported_name(self, left: Node) -> str | None:
        """``module.exports.judge = ...`` / ``exports.judge = ...``: ``judge``."""
        text = self.text(left)
        for head in ("module.exports.", "exports."):
            if text.startswith(head) and _IDENT.match(text[len(head):]):
                return text[len(head):]
        return None

    def if_statement(self, n: Node) -> ast.stmt:
        test = self.expr(n.child_by_field_name("condition"))
        body = self.nonempty(self.body_of(n.child_by_field_name("consequence")), n)
        alt = n.child_by_field_name("alternative")
        orelse: list[ast.stmt] = []
        if alt is not None:
            inner = next(iter(self.named(alt)), None) if alt.type == "else_clause" else alt
            orelse = self.body_of(inner)
        return self.at(ast.If(test=test, body=body, orelse=orelse), n)

    def for_statement(self, n: Node) -> list[ast.stmt]:
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        if cond is not None and cond.type == "expression_statement":
            cond = next(iter(self.named(cond)), None)
        step = n.child_by_field_name("increment")
        body = self.body_of(n.child_by_field_name("body"))
        counted = self.counted(init, cond, step)
        if counted is not None:
            var, lo, hi = counted
            rng = self.at(ast.Call(func=self.at(ast.Name(id="range", ctx=ast.Load()), n),
                                   args=[self.expr(lo), hi], keywords=[]), n)
            return [self.at(ast.For(target=self.at(ast.Name(id=var, ctx=ast.Store()), n),
                                    iter=rng, body=self.nonempty(body, n), orelse=[]), n)]
        out: list[ast.stmt] = self.statement(init) if init is not None and \
            init.type.endswith("declaration") else (
                self.expression_statement(init) if init is not None else [])
        test = self.expr(cond) if cond is not None else self.at(ast.Constant(True), n)
        tail = self.expression_statement(step) if step is not None else []
        out.append(self.at(ast.While(test=test, body=[*body, *tail] or [self.at(ast.Pass(), n)],
                                     orelse=[]), n))
        return out

    def counted(self, init: Node | None, cond: Node | None, step: Node | None
                ) -> tuple[str, Node, ast.expr] | None:
        """``let i = a; i < b; i++`` -> (i, a, b); ``i <= b`` gives ``b + 1``."""
        if init is None or cond is None or step is None:
            return None
        decls = [d for d in init.named_children if d.type == "variable_declarator"]
        if len(decls) != 1:
            return None
        name, lo = decls[0].child_by_field_name("name"), decls[0].child_by_field_name("value")
        if name is None or lo is None or name.type != "identifier":
            return None
        var = self.text(name)
        if step.type != "update_expression" or "++" not in self.text(step) or \
                self.text(step).replace("++", "").strip() != var:
            return None
        cond = self.unwrap(cond)
        if cond.type != "binary_expression":
            return None
        left, op, right = (cond.child_by_field_name(k) for k in ("left", "operator", "right"))
        if left is None or op is None or right is None or self.text(left) != var:
            return None
        if self.text(op) == "<":
            return var, lo, self.expr(right)
        if self.text(op) == "<=":
            return var, lo, self.at(ast.BinOp(left=self.expr(right), op=ast.Add(),
                                              right=self.at(ast.Constant(1), right)), right)
        return None

    def for_in(self, n: Node) -> ast.stmt:
        left = n.child_by_field_name("left")
        right = n.child_by_field_name("right")
        target = self.target(left) if left is not None else None
        if target is None:
            target = self.at(ast.Name(id=self.fresh("it"), ctx=ast.Store()), n)
        pre: list[ast.stmt] = []
        if left is not None and left.type == "object_pattern":  # for (const {a} of xs)
            tmp = target.id if isinstance(target, ast.Name) else self.fresh("it")
            pre = self.destructure(left, self.at(ast.Name(id=tmp, ctx=ast.Load()), n), n)
            pre = pre[1:]  # the temporary is the loop variable
            pre = [self.rebind(s, tmp) for s in pre]
        body = self.body_of(n.child_by_field_name("body"))
        iterable = self.expr(right) if right is not None else self.at(ast.List(
            elts=[], ctx=ast.Load()), n)
        return self.at(ast.For(target=target, iter=iterable,
                               body=self.nonempty([*pre, *body], n), orelse=[]), n)

    @staticmethod
    def rebind(stmt: ast.stmt, tmp: str) -> ast.stmt:
        """Point a destructuring read at the loop variable ``tmp``."""
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                    node.id.startswith("_d"):
                node.id = tmp
        return stmt

    def try_statement(self, n: Node) -> ast.stmt:
        body = self.nonempty(self.body_of(n.child_by_field_name("body")), n)
        handlers = []
        handler = n.child_by_field_name("handler")
        if handler is not None:
            param = handler.child_by_field_name("parameter")
            hbody = self.nonempty(self.body_of(handler.child_by_field_name("body")), handler)
            handlers.append(self.at(ast.ExceptHandler(
                type=None, name=self.text(param) if param is not None and
                param.type == "identifier" else None, body=hbody), handler))
        final = n.child_by_field_name("finalizer")
        finalbody = self.body_of(final.child_by_field_name("body")) if final is not None else []
        if not handlers and not finalbody:
            finalbody = [self.at(ast.Pass(), n)]
        return self.at(ast.Try(body=body, handlers=handlers, orelse=[], finalbody=finalbody), n)

    def switch(self, n: Node) -> list[ast.stmt]:
        value = n.child_by_field_name("value")
        body = n.child_by_field_name("body")
        if value is None or body is None:
            return []
        subject = self.expr(value)
        chain: list[ast.stmt] = []
        tail: list[ast.stmt] = []
        cases = [c for c in body.named_children if c.type in ("switch_case", "switch_default")]
        for case in reversed(cases):
            stmts = [c for c in case.children_by_field_name("body")]
            block = [s for s in self.block(stmts) if not isinstance(s, ast.Break)]
            if case.type == "switch_default":
                tail = block
                continue
            test_node = case.child_by_field_name("value")
            test = self.at(ast.Compare(left=subject, ops=[ast.Eq()],
                                       comparators=[self.expr(test_node)]), case)
            tail = [self.at(ast.If(test=test, body=self.nonempty(block, case),
                                   orelse=chain or tail), case)]
            chain = tail
        return tail

    # ------------------------------------------------------------------ definitions

    def params(self, node: Node | None) -> tuple[ast.arguments, list[ast.stmt]]:
        """Parameters, and the prologue a TypeScript parameter property needs
        (``constructor(private llm: Llm)`` sets ``self.llm``)."""
        args: list[ast.arg] = []
        defaults: list[ast.expr] = []
        kwonly: list[ast.arg] = []
        kw_defaults: list[ast.expr | None] = []
        vararg: ast.arg | None = None
        prologue: list[ast.stmt] = []
        if node is None:
            return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                 kw_defaults=[], kwarg=None, defaults=[]), []
        items = [node] if node.type == "identifier" else list(self.named(node))
        for p in items:
            pat = p.child_by_field_name("pattern") if p.type in (
                "required_parameter", "optional_parameter") else p
            if pat is None:
                continue
            default = p.child_by_field_name("value")
            if pat.type == "assignment_pattern":
                default = pat.child_by_field_name("right")
                pat = pat.child_by_field_name("left") or pat
            annotation = self.annotation(p)
            if pat.type == "identifier":
                arg = self.at(ast.arg(arg=self.text(pat), annotation=annotation), pat)
                if vararg is not None or kwonly:
                    kwonly.append(arg)
                    kw_defaults.append(self.expr(default) if default is not None else None)
                    continue
                args.append(arg)
                if default is not None:
                    defaults.append(self.expr(default))
                elif defaults:  # a required one after optional ones: give it None
                    defaults.append(self.at(ast.Constant(None), pat))
                if any(c.type in ("accessibility_modifier", "readonly") for c in p.children):
                    prologue.append(self.at(ast.Assign(targets=[self.at(ast.Attribute(
                        value=self.at(ast.Name(id="self", ctx=ast.Load()), pat),
                        attr=self.text(pat), ctx=ast.Store()), pat)], value=self.at(
                        ast.Name(id=self.text(pat), ctx=ast.Load()), pat)), pat))
            elif pat.type == "object_pattern":
                for key, local, dflt in self.pattern_fields(pat):
                    if not key:
                        continue
                    kwonly.append(self.at(ast.arg(arg=local, annotation=None), pat))
                    kw_defaults.append(self.expr(dflt) if dflt is not None else None)
            elif pat.type == "rest_pattern":
                inner = next(iter(self.named(pat)), None)
                if inner is not None and inner.type == "identifier":
                    vararg = self.at(ast.arg(arg=self.text(inner), annotation=None), pat)
            elif pat.type == "this":
                continue
            else:  # an array pattern: one positional parameter
                args.append(self.at(ast.arg(arg=self.fresh("p"), annotation=None), pat))
        return ast.arguments(posonlyargs=[], args=args, vararg=vararg, kwonlyargs=kwonly,
                             kw_defaults=kw_defaults, kwarg=None, defaults=defaults), prologue

    def annotation(self, p: Node) -> ast.expr | None:
        """A parameter's type when it names a class (``llm: ChatModel``)."""
        ann = p.child_by_field_name("type")
        if ann is None:
            return None
        inner = next(iter(self.named(ann)), None)
        if inner is not None and inner.type == "type_identifier":
            return self.at(ast.Name(id=self.text(inner), ctx=ast.Load()), inner)
        if inner is not None and inner.type == "type_query":  # typeof GraphState.State
            inner = next(iter(self.named(inner)), None)
        if inner is not None and inner.type in ("member_expression", "nested_type_identifier"):
            parts = self.text(inner).split(".")
            if all(x.isidentifier() for x in parts):
                out: ast.expr = self.at(ast.Name(id=parts[0], ctx=ast.Load()), inner)
                for part in parts[1:]:
                    out = self.at(ast.Attribute(value=out, attr=part, ctx=ast.Load()), inner)
                return out
        return None

    def function(self, name: str, n: Node, method: bool = False) -> ast.stmt:
        params = n.child_by_field_name("parameters") or n.child_by_field_name("parameter")
        arguments, prologue = self.params(params)
        forward = self.forwarded(n) if not method else None
        if forward is not None and arguments.args and arguments.args[0].arg == forward:
            arguments.kwarg = arguments.args.pop(0)  # def complete(**args)
            if arguments.defaults and len(arguments.defaults) > len(arguments.args):
                arguments.defaults.pop(0)
        self.forwarding.append(forward or "")
        saved_objects, self.objects = self.objects, dict(self.objects)  # (a closure sees them)
        if method:
            arguments.args.insert(0, self.at(ast.arg(arg="self", annotation=None), n))
        body_node = n.child_by_field_name("body")
        saved, self.scope = self.scope, _Scope()
        if body_node is None:
            body: list[ast.stmt] = []
        elif body_node.type == "statement_block":
            body = self.block(body_node.named_children)
        else:  # an arrow's expression body
            value = self.expr(body_node)
            body = [*self.scope.pre, self.at(ast.Return(value=value), body_node)]
        self.scope = saved
        self.forwarding.pop()
        self.objects = saved_objects
        return self.at(ast.AsyncFunctionDef(
            name=name, args=arguments, body=self.nonempty([*prologue, *body], n),
            decorator_list=[], returns=None, **_TYPE_PARAMS), n)

    def class_def(self, n: Node, name: str | None = None) -> ast.stmt:
        name_node = n.child_by_field_name("name")
        cname = self.text(name_node) if name_node is not None else (name or self.fresh("C"))
        bases: list[ast.expr] = []
        for h in n.named_children:
            if h.type == "class_heritage":
                for clause in h.named_children:
                    if clause.type == "extends_clause":
                        value = clause.child_by_field_name("value")
                        if value is not None:
                            bases.append(self.expr(value))
        body: list[ast.stmt] = []
        fields: list[ast.stmt] = []
        class_body = n.child_by_field_name("body")
        for m in (class_body.named_children if class_body is not None else ()):
            mname = m.child_by_field_name("name")
            if m.type == "method_definition" and mname is not None:
                key = self.key_text(mname)
                body.append(self.function("__init__" if key == "constructor" else key, m,
                                          method=True))
            elif m.type in ("public_field_definition", "field_definition") and mname is not None:
                value = m.child_by_field_name("value")
                key = self.key_text(mname)
                if value is None:
                    continue
                value = self.unwrap(value)
                if value.type in _FUNCTIONS:
                    body.append(self.function(key, value, method=True))
                elif value.type in ("call_expression", "new_expression") and not any(
                        c.type == "static" for c in m.children):
                    # an instance field made by a call (``model = new ChatOpenAI(...)``) is
                    # set on each instance before the constructor body runs
                    fields.append(self.at(ast.Assign(targets=[self.at(ast.Attribute(
                        value=self.at(ast.Name(id="self", ctx=ast.Load()), mname), attr=key,
                        ctx=ast.Store()), mname)], value=self.expr(value)), m))
                else:
                    body.append(self.at(ast.Assign(targets=[self.at(ast.Name(
                        id=key, ctx=ast.Store()), mname)], value=self.expr(value)), m))
        if fields:
            _init_fields(body, fields, self.at(ast.FunctionDef(
                name="__init__", args=_self_args(), body=[], decorator_list=[], returns=None,
                **_TYPE_PARAMS), n))
        return self.at(ast.ClassDef(name=cname, bases=bases, keywords=[],
                                    body=self.nonempty(body, n), decorator_list=[],
                                    **_TYPE_PARAMS), n)

    def key_text(self, key: Node) -> str:
        if key.type == "string":
            return self.string_value(key)
        return self.text(key).lstrip("#")

    # ------------------------------------------------------------------ expressions

    def unwrap(self, n: Node) -> Node:
        while n.type in _WRAPPERS:
            inner = next(iter(self.named(n)), None)
            if inner is None:
                return n
            n = inner
        return n

    def expr(self, n: Node | None) -> ast.expr:
        if n is None:
            return ast.Constant(None)
        n = self.unwrap(n)
        t = n.type
        if t == "identifier":
            name = self.text(n)
            if name == "undefined":
                return self.at(ast.Constant(None), n)
            return self.at(ast.Name(id=name, ctx=ast.Load()), n)
        if t == "this":
            return self.at(ast.Name(id="self", ctx=ast.Load()), n)
        if t in ("string",):
            return self.at(ast.Constant(self.string_value(n)), n)
        if t == "template_string":
            return self.template(n)
        if t == "number":
            return self.at(ast.Constant(_number(self.text(n))), n)
        if t in ("true", "false"):
            return self.at(ast.Constant(t == "true"), n)
        if t in ("null", "undefined"):
            return self.at(ast.Constant(None), n)
        if t == "regex":
            pattern = n.child_by_field_name("pattern")
            return self.at(ast.Constant(self.text(pattern) if pattern is not None else ""), n)
        if t == "member_expression":
            return self.member(n)
        if t == "subscript_expression":
            obj, idx = n.child_by_field_name("object"), n.child_by_field_name("index")
            if obj is not None and idx is not None and self.text(obj) in \
                    self.table.environment and self.unwrap(idx).type == "string":
                return self.env_read(self.string_value(self.unwrap(idx)), n)
            back = self.from_end(obj, idx)
            return self.at(ast.Subscript(value=self.expr(obj), slice=back if back is not None
                                         else self.expr(idx), ctx=ast.Load()), n)
        if t in ("call_expression", "new_expression"):
            return self.call(n)
        if t == "object":
            return self.object(n)
        if t == "array":
            elts = [self.expr(c) for c in self.named(n)]
            if len(elts) == 2 and isinstance(elts[0], ast.Constant) and \
                    elts[0].value in _ROLES:  # ["system", text]: a message pair
                return self.at(ast.Tuple(elts=elts, ctx=ast.Load()), n)
            return self.at(ast.List(elts=elts, ctx=ast.Load()), n)
        if t == "binary_expression":
            return self.binary(n)
        if t == "unary_expression":
            arg = n.child_by_field_name("argument")
            op = n.child_by_field_name("operator")
            sym = self.text(op) if op is not None else ""
            if sym == "!":
                return self.at(ast.UnaryOp(op=ast.Not(), operand=self.expr(arg)), n)
            if sym == "-":
                return self.at(ast.UnaryOp(op=ast.USub(), operand=self.expr(arg)), n)
            if sym == "typeof":  # ``typeof x === "number"``: Python's ``type(x)``, a type check
                return self.at(ast.Call(func=ast.Name(id="type", ctx=ast.Load()),
                                        args=[self.expr(arg)], keywords=[]), n)
            return self.expr(arg)
        if t == "update_expression":
            return self.expr(n.child_by_field_name("argument"))
        if t == "ternary_expression":
            return self.at(ast.IfExp(test=self.expr(n.child_by_field_name("condition")),
                                     body=self.expr(n.child_by_field_name("consequence")),
                                     orelse=self.expr(n.child_by_field_name("alternative"))),
                           n)
        if t in ("assignment_expression", "augmented_assignment_expression"):
            self.scope.pre.extend(self.expression_statement(n))
            left = n.child_by_field_name("left")
            return self.expr(left) if left is not None else ast.Constant(None)
        if t == "sequence_expression":
            items = list(self.named(n))
            for c in items[:-1]:
                self.scope.pre.extend(self.expression_statement(c))
            return self.expr(items[-1]) if items else ast.Constant(None)
        if t in _FUNCTIONS:
            return self.hoist(self.fresh("fn"), n)
        if t == "class":
            name = self.fresh("C")
            self.push(self.class_def(n, name))
            return self.at(ast.Name(id=name, ctx=ast.Load()), n)
        if t == "spread_element":
            inner = next(iter(self.named(n)), None)
            return self.at(ast.Starred(value=self.expr(inner), ctx=ast.Load()), n)
        if t in ("jsx_element", "jsx_self_closing_element", "jsx_fragment"):
            return self.at(ast.Constant(None), n)
        return self.at(ast.Constant(None), n)

    def env_read(self, var: str, n: Node) -> ast.expr:
        return self.at(ast.Call(func=self.dotted("os.getenv", n),
                                args=[self.at(ast.Constant(var), n)], keywords=[]), n)

    def from_end(self, obj: Node | None, idx: Node | None) -> ast.expr | None:
        """``xs[xs.length - k]``: the index ``-k`` (the last element, not the whole list)."""
        if obj is None or idx is None:
            return None
        idx = self.unwrap(idx)
        if idx.type != "binary_expression":
            return None
        left, op, right = (idx.child_by_field_name(k) for k in ("left", "operator", "right"))
        if left is None or op is None or right is None or self.text(op) != "-" or \
                right.type != "number" or self.text(left) != f"{self.text(obj)}.length":
            return None
        return self.at(ast.Constant(-int(_number(self.text(right)))), idx)

    def push(self, stmt: ast.stmt) -> None:
        if self.hoisted < MAX_HOISTED:
            self.scope.pre.append(stmt)
            self.hoisted += 1

    def hoist(self, name: str, fn: Node) -> ast.expr:
        """A function written where a value is: defined before the statement, named."""
        self.push(self.function(name, fn))
        return self.at(ast.Name(id=name, ctx=ast.Load()), fn)

    def string_value(self, n: Node) -> str:
        parts: list[str] = []
        for c in n.named_children:
            if c.type == "string_fragment":
                parts.append(self.text(c))
            elif c.type == "escape_sequence":
                parts.append(_unescape(self.text(c)))
        return "".join(parts)

    def template(self, n: Node) -> ast.expr:
        if not any(c.type == "template_substitution" for c in n.named_children):
            # no `${...}`: a plain string (its `{task}` are a template's fields, as in a
            # Python string constant)
            return self.at(ast.Constant("".join(
                self.text(c) if c.type == "string_fragment" else _unescape(self.text(c))
                for c in n.named_children if c.type in ("string_fragment", "escape_sequence"))),
                n)
        values: list[ast.expr] = []
        for c in n.named_children:
            if c.type == "string_fragment":
                values.append(self.at(ast.Constant(self.text(c)), c))
            elif c.type == "escape_sequence":
                values.append(self.at(ast.Constant(_unescape(self.text(c))), c))
            elif c.type == "template_substitution":
                inner = next(iter(self.named(c)), None)
                values.append(self.at(ast.FormattedValue(value=self.expr(inner), conversion=-1,
                                                         format_spec=None), c))
        return self.at(ast.JoinedStr(values=values), n)

    def member(self, n: Node) -> ast.expr:
        obj = n.child_by_field_name("object")
        prop = n.child_by_field_name("property")
        if obj is None or prop is None:
            return self.at(ast.Constant(None), n)
        attr = self.text(prop).lstrip("#")
        if self.text(obj) in self.table.environment:  # process.env.MODEL
            return self.env_read(attr, n)
        if attr in _HTTP_STATUS and obj.type == "identifier" and self.text(obj) in self.responses:
            return self.at(ast.Constant(True), n)  # res.ok of an API request
        attr = self.renames.get(attr, attr)
        py = self.table.properties.get(attr)
        if py is not None:  # xs.length -> len(xs)
            return self.at(ast.Call(func=self.at(ast.Name(id=py, ctx=ast.Load()), prop),
                                    args=[self.expr(obj)], keywords=[]), n)
        return self.at(ast.Attribute(value=self.expr(obj), attr=attr, ctx=ast.Load()), n)

    def object(self, n: Node) -> ast.Dict:
        keys: list[ast.expr | None] = []
        values: list[ast.expr] = []
        for c in self.named(n):
            if c.type == "pair":
                key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
                if key is None or value is None:
                    continue
                k = self.key_text(key) if key.type != "computed_property_name" else None
                keys.append(self.at(ast.Constant(k), key) if k is not None else
                            self.expr(next(iter(self.named(key)), None)))
                value = self.unwrap(value)
                fname = k if k and _IDENT.match(k) else self.fresh("fn")
                if self.step_binding is not None and k == self.step_binding[1]:
                    fname = f"{self.step_binding[0]}__{k}"
                    self.step_binding = None
                values.append(self.hoist(fname, value) if value.type in _FUNCTIONS
                              else self.expr(value))
            elif c.type == "shorthand_property_identifier":
                keys.append(self.at(ast.Constant(self.text(c)), c))
                values.append(self.at(ast.Name(id=self.text(c), ctx=ast.Load()), c))
            elif c.type == "spread_element":
                inner = next(iter(self.named(c)), None)
                spread = self.objects.get(self.text(inner)) if inner is not None and \
                    inner.type == "identifier" else None
                if spread is not None and spread.id not in self.expanding:  # {...BASE, t: 0}
                    self.expanding.add(spread.id)
                    base = self.object(spread)
                    self.expanding.discard(spread.id)
                    assert isinstance(base, ast.Dict)
                    keys.extend(base.keys)
                    values.extend(base.values)
                    continue
                keys.append(None)
                values.append(self.expr(inner))
            elif c.type == "method_definition":
                name = c.child_by_field_name("name")
                if name is None:
                    continue
                key = self.key_text(name)
                keys.append(self.at(ast.Constant(key), name))
                values.append(self.hoist(key if _IDENT.match(key) else self.fresh("fn"), c))
        return self.at(ast.Dict(keys=keys, values=values), n)

    def binary(self, n: Node) -> ast.expr:
        left = n.child_by_field_name("left")
        right = n.child_by_field_name("right")
        op_node = n.child_by_field_name("operator")
        op = self.text(op_node) if op_node is not None else ""
        lv, rv = self.expr(left), self.expr(right)
        if op in ("&&", "||", "??"):
            return self.at(ast.BoolOp(op=ast.And() if op == "&&" else ast.Or(),
                                      values=[lv, rv]), n)
        if op in _COMPARE:
            return self.at(ast.Compare(left=lv, ops=[_COMPARE[op]()], comparators=[rv]), n)
        return self.at(ast.BinOp(left=lv, op=_BINARY.get(op, ast.Add)(), right=rv), n)

    # ------------------------------------------------------------------ calls

    def callee_path(self, fn: Node) -> str:
        fn = self.unwrap(fn)
        if fn.type == "identifier":
            return self.text(fn)
        if fn.type == "member_expression":
            obj, prop = fn.child_by_field_name("object"), fn.child_by_field_name("property")
            if obj is not None and prop is not None:
                head = self.callee_path(obj)
                return f"{head}.{self.text(prop)}" if head else ""
        return ""

    def arguments(self, n: Node) -> list[Node]:
        args = n.child_by_field_name("arguments")
        if args is None:
            return []
        if args.type == "template_string":  # a tagged template
            return [args]
        return list(self.named(args))

    def call(self, n: Node) -> ast.expr:
        fn = n.child_by_field_name("function") or n.child_by_field_name("constructor")
        if fn is None:
            return self.at(ast.Constant(None), n)
        args = self.arguments(n)
        path = self.callee_path(fn)
        if path in self.table.transparent and len(args) == 1:
            inner = self.expr(args[0])
            if isinstance(inner, ast.List):  # Promise.all([a, b]): the pair
                return self.at(ast.Tuple(elts=inner.elts, ctx=ast.Load()), n)
            return inner
        if path in self.table.writers and len(args) >= 2:
            return self.writer(n, args, self.table.writers[path])
        request = self.api_request(path, args, fn, n)
        if request is not None:
            return request
        if path in self.table.functions:
            py = self.table.functions[path]
            return self.at(ast.Call(func=self.dotted(py, fn), args=[self.expr(a) for a in args],
                                    keywords=[]), n)
        chained = self.builder_chain(n)
        if chained is not None:
            return chained
        loop = self.callback_loop(n, statement=False)
        if loop is not None:
            stmts, collected = loop
            self.scope.pre.extend(stmts)
            return self.at(ast.Name(id=collected, ctx=ast.Load()), n)
        comp = self.comprehension(n)
        if comp is not None:
            return comp
        ufn = self.unwrap(fn)
        made = self.factory_call(ufn, args, fn, n)
        if made is not None:
            return made
        if ufn.type == "member_expression":
            prop = ufn.child_by_field_name("property")
            obj = ufn.child_by_field_name("object")
            method = self.text(prop) if prop is not None else ""
            py_method = self.table.methods.get(method)
            if py_method is not None and obj is not None:
                recv = self.expr(obj)
                if py_method == "in" and args:
                    return self.at(ast.Compare(left=self.expr(args[0]), ops=[ast.In()],
                                               comparators=[recv]), n)
                if py_method != "in":
                    return self.at(ast.Call(func=self.at(ast.Attribute(
                        value=recv, attr=py_method, ctx=ast.Load()), fn), args=[
                        self.expr(a) for a in args], keywords=[]), n)
            if self.table.operators.get(method) == "|" and obj is not None and len(args) == 1:
                return self.at(ast.BinOp(left=self.expr(obj), op=ast.BitOr(),
                                         right=self.expr(args[0])), n)  # a.pipe(b)
            if method in self.table.receiver_is_argument and obj is not None and \
                    len(args) <= 1:  # parts.join(sep) -> sep.join(parts)
                sep = self.expr(args[0]) if args else self.at(ast.Constant(","), n)
                return self.at(ast.Call(func=self.at(ast.Attribute(
                    value=sep, attr=method, ctx=ast.Load()), fn), args=[self.expr(obj)],
                    keywords=[]), n)
            if method == "at" and obj is not None and len(args) == 1:  # xs.at(-1)
                return self.at(ast.Subscript(value=self.expr(obj), slice=self.expr(args[0]),
                                             ctx=ast.Load()), n)
            if method in ("test", "exec") and obj is not None and \
                    self.unwrap(obj).type == "regex" and args:  # /x/.test(s)
                return self.at(ast.Call(func=self.dotted("re.search", fn), args=[
                    self.expr(obj), self.expr(args[0])], keywords=[]), n)
            if method in ("match", "matchAll") and obj is not None and args and \
                    self.unwrap(args[0]).type == "regex":  # s.match(/x/)
                return self.at(ast.Call(func=self.dotted("re.search", fn), args=[
                    self.expr(args[0]), self.expr(obj)], keywords=[]), n)
        if fn.type == "super":  # super(a, b): the base class's constructor
            func: ast.expr = self.at(ast.Attribute(value=self.at(ast.Call(
                func=self.at(ast.Name(id="super", ctx=ast.Load()), fn), args=[], keywords=[]),
                fn), attr="__init__", ctx=ast.Load()), fn)
        else:
            func = self.expr(fn)
        return self.at(ast.Call(func=func, **self.call_args(path, args, fn)), n)

    def member_call(self, n: Node) -> tuple[Node, Node, Node] | None:
        """``recv.method(...)``: the callee, its property and its receiver (None for a call
        of anything else)."""
        if n.type != "call_expression":
            return None
        fn = n.child_by_field_name("function")
        fn = self.unwrap(fn) if fn is not None else None
        if fn is None or fn.type != "member_expression":
            return None
        prop, obj = fn.child_by_field_name("property"), fn.child_by_field_name("object")
        return (fn, prop, obj) if prop is not None and obj is not None else None

    def builder_chain(self, n: Node, into: str | None = None) -> ast.expr | None:
        """``new StateGraph(S).addNode("a", f).addEdge(START, "a")``: the receiver is kept
        in a variable (``into``, the name the chain is assigned to, when there is one: later
        ``workflow.addEdge(...)`` statements build the same graph) and each builder call is a
        statement on it; the value is the variable (the chain hands back its receiver)."""
        parts = self.member_call(n)
        if parts is None:
            return None
        fn, prop, obj = parts
        method = self.renames.get(self.text(prop), self.text(prop))
        obj = self.unwrap(obj)
        if method not in self.builders or obj.type not in ("call_expression",
                                                           "new_expression"):
            return None
        recv = self.builder_chain(obj, into)
        if recv is None:
            tmp = into or self.fresh("b")
            self.scope.pre.append(self.at(ast.Assign(
                targets=[self.at(ast.Name(id=tmp, ctx=ast.Store()), obj)],
                value=self.expr(obj)), obj))
            recv = self.at(ast.Name(id=tmp, ctx=ast.Load()), obj)
        assert isinstance(recv, ast.Name)
        # each builder call stands where its method is written (``.addConditionalEdges(`` on
        # its own line), not where the chain starts
        func = self.at(ast.Attribute(value=self.at(ast.Name(id=recv.id, ctx=ast.Load()), prop),
                                     attr=method, ctx=ast.Load()), prop)
        call = self.at_span(ast.Call(func=func, **self.call_args(f"{recv.id}.{method}",
                                                                  self.arguments(n), fn)),
                            prop, n)
        self.scope.pre.append(self.at_span(ast.Expr(value=call), prop, n))
        return self.at(ast.Name(id=recv.id, ctx=ast.Load()), n)

    def assertion(self, e: Node) -> ast.stmt | None:
        """``expect(score).toBeLessThanOrEqual(10)`` (``.not`` too): ``assert score <= 10``."""
        table = self.table.assertions
        parts = self.member_call(e) if table else None
        if parts is None:
            return None
        _, prop, obj = parts
        op = (table or {}).get(self.text(prop))
        args = self.arguments(e)
        negated = False
        while obj is not None and obj.type == "member_expression":  # expect(x).not.toBe(y)
            negated = negated or self.text(obj.child_by_field_name("property") or obj) == "not"
            obj = obj.child_by_field_name("object")
        if op is None or obj is None or obj.type != "call_expression" or len(args) != 1:
            return None
        head = obj.child_by_field_name("function")
        inner = self.arguments(obj)
        if head is None or self.text(head) != self.table.assert_function or len(inner) != 1:
            return None
        ops = {"<=": ast.LtE(), "<": ast.Lt(), ">=": ast.GtE(), ">": ast.Gt(), "==": ast.Eq()}
        test: ast.expr = self.at(ast.Compare(left=self.expr(inner[0]), ops=[ops[op]],
                                             comparators=[self.expr(args[0])]), e)
        if negated:
            test = self.at(ast.UnaryOp(op=ast.Not(), operand=test), e)
        return self.at(ast.Assert(test=test, msg=None), e)

    def api_request(self, path: str, args: list[Node], fn: Node, n: Node) -> ast.expr | None:
        """``fetch("https://api.openai.com/v1/chat/completions", {body: JSON.stringify({model,
        messages})})``: the SDK call the endpoint stands for, with the body's keys as its
        keywords (the catalogue's ``script_endpoints``)."""
        where = (self.table.http_clients or {}).get(path)
        if where is None or len(args) < 2 or not self.endpoints:
            return None
        url = self.unwrap(args[0])
        text = self.string_value(url) if url.type == "string" else "".join(
            self.text(c) for c in url.named_children if c.type == "string_fragment") \
            if url.type == "template_string" else ""
        call = next((sdk for key, sdk in self.endpoints if key in text), None)
        body: Node | None = self.unwrap(args[1])
        if where == "init" and body is not None:
            body = self.object_key(body, "body")
            if body is not None and body.type == "call_expression" and \
                    self.text(body.child_by_field_name("function") or body) == "JSON.stringify":
                inner = self.arguments(body)
                body = self.unwrap(inner[0]) if inner else None
        if body is not None and body.type == "identifier" and self.text(body) in self.objects:
            body = self.objects[self.text(body)]
        if call is None or body is None or body.type not in ("object", "identifier"):
            return None
        root, _, rest = call.partition(".")
        func = self.imported_attr(root, rest, fn)
        if body.type == "identifier":  # JSON.stringify(payload): the request its caller built
            keywords = [self.at(ast.keyword(arg=None, value=self.expr(body)), body)]
        else:
            obj = self.object(body)
            keywords = [self.at(ast.keyword(arg=k.value, value=v), body)
                        for k, v in zip(obj.keys, obj.values, strict=True)
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)
                        and k.value.isidentifier()]
        self.requests.add((n.start_byte, n.end_byte))
        return self.at(ast.Call(func=func, args=[], keywords=keywords), n)

    def object_key(self, obj: Node, key: str) -> Node | None:
        """The value of ``key`` in an object literal (or a ``const`` one named here)."""
        if obj.type == "identifier" and self.text(obj) in self.objects:
            obj = self.objects[self.text(obj)]
        if obj.type != "object":
            return None
        for c in self.named(obj):
            if c.type == "pair":
                k = c.child_by_field_name("key")
                if k is not None and self.key_text(k) == key:
                    v = c.child_by_field_name("value")
                    return self.unwrap(v) if v is not None else None
            elif c.type == "shorthand_property_identifier" and self.text(c) == key:
                return c
        return None

    def factory_call(self, fn: Node, args: list[Node], at: Node, n: Node) -> ast.expr | None:
        """``genAI.getGenerativeModel({...})``: a package's method that makes one of its
        classes is a call of that class (its module imported under a name of its own)."""
        if fn.type != "member_expression" or not self.factories:
            return None
        prop = fn.child_by_field_name("property")
        found = self.factories.get(self.text(prop)) if prop is not None else None
        if found is None:
            return None
        module, cls = found
        func = self.imported_attr(module, cls, at)
        return self.at(ast.Call(func=func, **self.call_args(ast.unparse(func), args, at)), n)

    def imported_attr(self, module: str, path: str, at: Node) -> ast.expr:
        """``module.path`` read through an import the lowering adds (once per module, under a
        name of its own): what a factory method or an API request stands for."""
        alias = "_lowered_" + module.replace(".", "_")
        if not any(isinstance(s, ast.Import) and s.names[0].asname == alias
                   for s in self.added_imports):
            self.added_imports.append(ast.Import(names=[ast.alias(name=module, asname=alias)]))
        if f"{module}.{path}" not in self.imported:
            self.imported.append(f"{module}.{path}")
        func: ast.expr = self.at(ast.Name(id=alias, ctx=ast.Load()), at)
        for part in path.split("."):
            func = self.at(ast.Attribute(value=func, attr=part, ctx=ast.Load()), at)
        return func

    def step_run(self, value: Node) -> str | None:
        """The work function's key when ``value`` calls a workflow's step constructor."""
        if value.type != "call_expression":
            return None
        fn = value.child_by_field_name("function")
        name = self.text(fn).rsplit(".", 1)[-1] if fn is not None else ""
        return next((wf.run for wf in self.workflows if name in wf.step), None)

    def workflow_chain(self, n: Node, into: str = "") -> ast.expr | None:
        """``createWorkflow({...}).then(draft).dowhile(review, cond).commit()``: the chain is
        written as the function the workflow runs, hoisted before the statement (each step's
        work function handed the last step's output, a repeated step in a loop whose exit the
        condition decides); its value is the root call. A workflow kept in a name (``into``)
        runs as a step's work function does (``inner__execute``): another workflow may run
        it as one of its steps."""
        links: list[tuple[str, list[Node], Node]] = []
        cur = self.unwrap(n)
        parts = self.member_call(cur)
        while parts is not None:
            _, prop, obj = parts
            links.append((self.text(prop), self.arguments(cur), prop))  # (at the method)
            cur = self.unwrap(obj)
            parts = self.member_call(cur)
        if cur.type != "call_expression" or not links:
            return None
        root = cur.child_by_field_name("function")
        name = self.text(root).rsplit(".", 1)[-1] if root is not None else ""
        wf = next((w for w in self.workflows if name in w.start), None)
        if wf is None or not any(m in (*wf.then, *wf.again_while, *wf.again_until)
                                 for m, _, _ in links):
            return None
        var = wf.input
        body: list[ast.stmt] = []
        for method, args, node in reversed(links):
            step = self.run_step(wf, args[0], node) if args else None
            if step is None:
                continue
            if method in wf.then:
                body.append(step)
            elif (method in wf.again_while or method in wf.again_until) and len(args) > 1:
                prelude, test, counters = self.step_condition(wf, args[1])
                if method in wf.again_while:
                    test = self.at(ast.UnaryOp(op=ast.Not(), operand=test), args[1])
                leave = self.at(ast.If(test=test, body=[self.at(ast.Break(), args[1])],
                                       orelse=[]), args[1])
                # the engine's attempt count, as the code it stands for: zero before the
                # loop, one more after each run of the step
                body += [self.assign_name(c, ast.Constant(0), node) for c in counters]
                counted = [self.assign_name(c, ast.BinOp(
                    left=self.at(ast.Name(id=c, ctx=ast.Load()), node), op=ast.Add(),
                    right=self.at(ast.Constant(1), node)), node) for c in counters]
                body.append(self.at(ast.While(test=self.at(ast.Constant(True), node),
                                              body=[step, *counted, *prelude, leave],
                                              orelse=[]), node))
        if not body:
            return None
        # the workflow hands back its last step's output: a loop's last attempt when one
        # ends it (reported at the loop), else at the chain's last method
        loops = [at for m, _, at in links if m in (*wf.again_while, *wf.again_until)]
        end = loops[0] if loops and links[0][0] not in wf.then else links[0][2]
        body.append(self.at(ast.Return(value=self.at(ast.Name(id=var, ctx=ast.Load()), end)),
                            end))
        fname = f"{into}__{wf.run}" if into else self.fresh("workflow")
        self.push(self.at(ast.FunctionDef(
            name=fname, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=var)], vararg=None,
                                           kwonlyargs=[], kw_defaults=[], kwarg=None,
                                           defaults=[]),
            body=body, decorator_list=[], returns=None, **_TYPE_PARAMS), n))
        return self.expr(cur)

    def run_step(self, wf: Any, step: Node, at: Node) -> ast.stmt | None:
        """``<input> = <step>__<run>(<input>=<input>)`` for a step named in the chain (one
        imported from another module is imported under that name too)."""
        step = self.unwrap(step)
        if step.type != "identifier":
            return None
        local = self.text(step)
        work = f"{local}__{wf.run}"
        origin = self.import_origin.get(local)
        if origin is not None:
            self.push(self.at(ast.ImportFrom(module=origin[0], names=[ast.alias(
                name=f"{origin[1]}__{wf.run}", asname=work)], level=0), step))
            self.imported.append(f"{origin[0]}.{origin[1]}__{wf.run}")
        call = self.at(ast.Call(func=self.at(ast.Name(id=work, ctx=ast.Load()), step), args=[],
                                keywords=[ast.keyword(arg=wf.input, value=self.at(ast.Name(
                                    id=wf.input, ctx=ast.Load()), step))]), at)
        return self.assign_name(wf.input, call, at)

    def step_condition(self, wf: Any, cond: Node
                       ) -> tuple[list[ast.stmt], ast.expr, list[str]]:
        """A loop's condition: an arrow's expression read in place when it destructures the
        step's output or the engine's attempt count (``({ inputData }) => inputData.score <
        80``; a body that ends in its only ``return`` is read in place too, its other
        statements before the test, and so is a body of ``if (x) return true;`` tests, read
        as their disjunction), else the condition's function called with it. Also the locals
        the condition reads the attempt count as (``wf.counter``)."""
        cond = self.unwrap(cond)
        body = cond.child_by_field_name("body")
        params = cond.child_by_field_name("parameters") or cond.child_by_field_name(
            "parameter")
        pattern = self.first_pattern(params)
        fields = list(self.pattern_fields(pattern)) if pattern is not None and \
            pattern.type == "object_pattern" else []
        counters = [local for key, local, _ in fields if key in wf.counter]
        inline = cond.type in _FUNCTIONS and body is not None and (
            counters or any(local == wf.input for _, local, _ in fields))
        if inline and body is not None and body.type != "statement_block":
            return [], self.expr(body), counters
        parts = [c for c in body.named_children if c.type != "comment"] \
            if inline and body is not None else []
        if parts and parts[-1].type == "return_statement" and parts[-1].named_children and \
                not any(self.returns_in(c) for c in parts[:-1]):
            return self.block(parts[:-1]), self.expr(parts[-1].named_children[0]), counters
        tests = self.early_trues(parts)
        if tests is not None:
            return [], self.at(ast.BoolOp(op=ast.Or(), values=tests), cond) \
                if len(tests) > 1 else tests[0], counters
        if cond.type in _FUNCTIONS:
            func: ast.expr = self.hoist(self.fresh("condition"), cond)
        else:
            func = self.expr(cond)
        return [], self.at(ast.Call(func=func, args=[], keywords=[ast.keyword(
            arg=wf.input, value=self.at(ast.Name(id=wf.input, ctx=ast.Load()), cond))]),
            cond), []

    def early_trues(self, parts: list[Node]) -> list[ast.expr] | None:
        """``if (a) return true; if (b) return true; return c;``: the tests that make the
        condition hold (``a``, ``b``, then ``c`` unless it is ``false``), or None for any
        other body."""
        if not parts or parts[-1].type != "return_statement" or \
                not parts[-1].named_children:
            return None
        tests: list[ast.expr] = []
        for st in parts[:-1]:
            cons = st.child_by_field_name("consequence") if st.type == "if_statement" else None
            test = st.child_by_field_name("condition") if cons is not None else None
            if cons is None or test is None or st.child_by_field_name("alternative"):
                return None
            inner = [c for c in cons.named_children if c.type != "comment"] \
                if cons.type == "statement_block" else [cons]
            if len(inner) != 1 or inner[0].type != "return_statement" or \
                    [self.text(c) for c in inner[0].named_children] != ["true"]:
                return None
            tests.append(self.expr(test))
        last = parts[-1].named_children[0]
        if self.text(last) != "false":
            tests.append(self.expr(last))
        return tests or None

    def assign_name(self, name: str, value: ast.expr, at: Node) -> ast.stmt:
        return self.at(ast.Assign(targets=[self.at(ast.Name(id=name, ctx=ast.Store()), at)],
                                  value=self.at(value, at)), at)

    def returns_in(self, n: Node) -> bool:
        """Does ``n`` return (outside the functions declared in it)?"""
        if n.type == "return_statement":
            return True
        return any(self.returns_in(c) for c in n.named_children if c.type not in _FUNCTIONS)

    def call_args(self, path: str, args: list[Node], fn: Node) -> dict[str, Any]:
        """Positional and keyword arguments: a first object literal is keywords (see the
        module's docstring), with the label a callback is named by."""
        pos: list[ast.expr] = []
        kws: list[ast.keyword] = []
        label = ""
        if args and self.unwrap(args[0]).type == "string":
            label = self.string_value(self.unwrap(args[0]))
        if len(args) == 1 and self.forwarding and self.forwarding[-1] and \
                args[0].type == "identifier" and self.text(args[0]) == self.forwarding[-1]:
            return {"args": [], "keywords": [ast.keyword(arg=None, value=self.at(ast.Name(
                id=self.forwarding[-1], ctx=ast.Load()), args[0]))]}  # create(**args)
        if len(args) == 1 and args[0].type == "identifier" and \
                self.unwrap(fn).type == "member_expression" and self.text(args[0]) in self.objects:
            args = [self.objects[self.text(args[0])]]
        spread = bool(args) and self.unwrap(args[0]).type == "object" and (
            self.local_shapes.get(path, True) if "." not in path else True)
        for i, a in enumerate(args):
            a = self.unwrap(a)
            if i == 0 and spread:
                obj = self.object(a)
                assert isinstance(obj, ast.Dict)
                for k, v in zip(obj.keys, obj.values, strict=True):
                    if k is None:
                        kws.append(ast.keyword(arg=None, value=v))
                    elif isinstance(k, ast.Constant) and isinstance(k.value, str) and \
                            k.value.isidentifier():
                        kws.append(self.at(ast.keyword(arg=k.value, value=v), a))
                continue
            if a.type in _FUNCTIONS:
                name = label if _IDENT.match(label) and label.isidentifier() else \
                    self.fresh(f"{fn_label(path)}_callback")
                if path not in self.local_shapes and self.no_params(a):
                    # withRetry(() => client.messages.create(...)), step.do("grade", async () =>
                    # {...}): a wrapper that runs what it is given hands back its result; the
                    # body is read where it stands, so that what it reads of the function
                    # around it (a closure) is that function's own variables
                    pos.append(self.inline(a))
                    continue
                pos.append(self.hoist(name, a))
            elif a.type == "spread_element":
                inner = next(iter(self.named(a)), None)
                pos.append(self.at(ast.Starred(value=self.expr(inner), ctx=ast.Load()), a))
            else:
                pos.append(self.expr(a))
        return {"args": pos, "keywords": kws}

    def inline(self, fn: Node) -> ast.expr:
        """The value of running a parameterless callback here: its expression, or its block
        (hoisted before the statement) with each ``return v`` kept in a variable."""
        body = fn.child_by_field_name("body")
        if body is None:
            return self.at(ast.Constant(None), fn)
        if body.type != "statement_block":
            return self.expr(body)
        result = self.fresh("r")
        saved, self.scope = self.scope, _Scope()
        stmts = self.block(body.named_children)
        self.scope = saved

        def keep(node: ast.Return) -> Any:
            value = node.value if node.value is not None else ast.Constant(None)
            return ast.copy_location(ast.Assign(targets=[ast.copy_location(ast.Name(
                id=result, ctx=ast.Store()), node)], value=value), node)

        for st in stmts:
            out = _on_returns(st, keep)
            if out is not None:
                self.scope.pre.append(out)
        return self.at(ast.Name(id=result, ctx=ast.Load()), fn)

    def no_params(self, fn: Node) -> bool:
        params = fn.child_by_field_name("parameters")
        return fn.child_by_field_name("parameter") is None and (
            params is None or not any(True for _ in self.named(params)))

    def dotted(self, path: str, n: Node) -> ast.expr:
        head, *rest = path.split(".")
        if rest:
            self.py_modules.add(head)
        out: ast.expr = self.at(ast.Name(id=head, ctx=ast.Load()), n)
        for part in rest:
            out = self.at(ast.Attribute(value=out, attr=part, ctx=ast.Load()), n)
        return out

    def writer(self, n: Node, args: list[Node], mode: str) -> ast.expr:
        """``fs.writeFileSync(p, data)`` -> ``open(p, mode).write(data)``."""
        handle = self.at(ast.Call(func=self.at(ast.Name(id="open", ctx=ast.Load()), n),
                                  args=[self.expr(args[0]), self.at(ast.Constant(mode), n)],
                                  keywords=[]), n)
        return self.at(ast.Call(func=self.at(ast.Attribute(value=handle, attr="write",
                                                           ctx=ast.Load()), n),
                                args=[self.expr(args[1])], keywords=[]), n)

    def method_callback(self, n: Node) -> tuple[str, Node, Node] | None:
        """``xs.map(cb)``: the method, its receiver and the callback, when a method is given
        one argument and it is a function."""
        parts = self.member_call(n)
        args = self.arguments(n) if parts is not None else []
        if parts is None or len(args) != 1:
            return None
        _, prop, obj = parts
        cb = self.unwrap(args[0])
        return (self.text(prop), obj, cb) if cb.type in _FUNCTIONS else None

    def callback_params(self, cb: Node) -> Node | None:
        return self.first_pattern(cb.child_by_field_name("parameters")
                                  or cb.child_by_field_name("parameter"))

    def callback_loop(self, n: Node, statement: bool) -> tuple[list[ast.stmt], str] | None:
        """``xs.forEach(cb)`` (a statement), ``xs.map(cb)`` / ``for (const x of xs)`` with a
        block body: a ``for`` loop over ``xs`` running the body; ``map`` collects what the body
        returns in a list. The statements, and the list's name (empty for ``forEach``)."""
        found = self.method_callback(n)
        if found is None:
            return None
        method, obj, cb = found
        if method not in ("forEach", "map", "flatMap") or (method == "forEach" and not statement):
            return None
        body = cb.child_by_field_name("body")
        if body is None or (body.type != "statement_block" and method != "forEach"):
            return None  # map(x => expr) is a comprehension
        pat = self.callback_params(cb)
        loop_var = self.fresh("it")
        target: ast.expr = self.at(ast.Name(id=loop_var, ctx=ast.Store()), cb)
        if pat is not None and pat.type == "identifier":
            target = self.target(pat) or target
        pre: list[ast.stmt] = []
        if pat is not None and pat.type == "object_pattern":
            pre = [self.rebind(s, loop_var) for s in self.destructure(
                pat, self.at(ast.Name(id=loop_var, ctx=ast.Load()), cb), cb)[1:]]
        out: list[ast.stmt] = []
        collect = ""
        if method != "forEach":
            collect = self.fresh("m")
            out.append(self.at(ast.Assign(targets=[self.at(ast.Name(id=collect, ctx=ast.Store()),
                                                           n)],
                                          value=self.at(ast.List(elts=[], ctx=ast.Load()), n)),
                               n))
        saved, self.scope = self.scope, _Scope()
        if body.type == "statement_block":
            stmts = self.block(body.named_children)
        else:
            stmts = self.expression_statement(body)
            stmts = [*self.scope.pre, *stmts]
        self.scope = saved
        if collect:
            stmts = [self.collecting(s, collect) for s in stmts]
        iterable = self.expr(obj)
        out.append(self.at(ast.For(target=target, iter=iterable,
                                   body=self.nonempty([*pre, *stmts], cb), orelse=[]), n))
        return out, collect

    def collecting(self, stmt: ast.stmt, collect: str) -> ast.stmt:
        """A ``map`` body's ``return v`` -> ``collect.append(v); continue`` (nested
        functions keep their own returns)."""

        def append(node: ast.Return) -> Any:
            if node.value is None:
                return ast.copy_location(ast.Continue(), node)
            call = ast.copy_location(ast.Expr(value=ast.copy_location(ast.Call(
                func=ast.copy_location(ast.Attribute(value=ast.copy_location(ast.Name(
                    id=collect, ctx=ast.Load()), node), attr="append", ctx=ast.Load()),
                    node), args=[node.value], keywords=[]), node)), node)
            return [call, ast.copy_location(ast.Continue(), node)]

        out = _on_returns(stmt, append)
        return out if out is not None else stmt

    def comprehension(self, n: Node) -> ast.expr | None:
        """``xs.map(x => f(x))`` / ``xs.filter(x => p(x))``: a list comprehension."""
        found = self.method_callback(n)
        if found is None:
            return None
        method, obj, cb = found
        if method not in ("map", "filter", "flatMap", "some", "every", "find"):
            return None
        body = cb.child_by_field_name("body")
        if body is None or body.type == "statement_block":
            return None
        pat = self.callback_params(cb)
        target = self.target(pat) if pat is not None and pat.type == "identifier" else None
        if target is None:
            target = self.at(ast.Name(id=self.fresh("it"), ctx=ast.Store()), cb)
        value = self.expr(body)
        iterable = self.expr(obj)
        gen = ast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)
        if method in ("filter", "find", "some", "every"):
            gen.ifs = [value]
            assert isinstance(target, ast.Name)
            value = self.at(ast.Name(id=target.id, ctx=ast.Load()), cb)
        return self.at(ast.ListComp(elt=value, generators=[gen]), n)


def _on_returns(stmt: ast.stmt, replace: Callable[[ast.Return], Any]) -> ast.stmt | None:
    """``stmt`` with each ``return`` of its own replaced (those of a function or class inside
    it are theirs); None when the statement itself was replaced by several."""

    class Swap(ast.NodeTransformer):
        def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
            return node

        visit_AsyncFunctionDef = visit_FunctionDef
        visit_ClassDef = visit_FunctionDef

        def visit_Return(self, node: ast.Return) -> Any:
            return replace(node)

    out = Swap().visit(stmt)
    return out if isinstance(out, ast.stmt) else None


def fn_label(path: str) -> str:
    last = path.rsplit(".", 1)[-1]
    return last if _IDENT.match(last) and last.isidentifier() else "anonymous"


def _number(text: str) -> int | float:
    t = text.replace("_", "").rstrip("n")
    try:
        if t[:2].lower() in ("0x", "0o", "0b"):
            return int(t, 0)
        return int(t) if t.isdigit() else float(t)
    except ValueError:
        return 0


def _unescape(seq: str) -> str:
    body = seq[1:]
    if not body:
        return ""
    if body[0] in _ESCAPES and not body[1:2].isdigit():
        return _ESCAPES[body[0]]
    m = _HEX.match(body)
    if m is not None:
        code = int(m.group(1) or m.group(2) or m.group(3), 16)
        return chr(code) if code <= 0x10FFFF else ""
    if body[0] in "\r\n":  # a line continuation
        return ""
    return body[0]


def lower(root: Node, text: bytes, rel: str, cat: Any) -> tuple[ast.Module, list[str]]:
    """The Python tree of a script's tree, and the modules it imports (``module.name``)."""
    low = Lowerer(text, rel, cat)
    mod = low.module(root)
    for imp in low.added_imports:  # (the first line: what the file's own imports name)
        imp.lineno, imp.col_offset = 1, 0
    mod.body[:0] = low.added_imports
    ast.fix_missing_locations(mod)
    return mod, low.imported


def _self_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg="self")], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def _init_fields(body: list[ast.stmt], fields: list[ast.stmt], empty: ast.FunctionDef) -> None:
    """Instance fields first in the constructor (one is made when the class has none)."""
    init = next((st for st in body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and st.name == "__init__"), None)
    if init is None:
        empty.body = fields
        body.insert(0, empty)
    else:
        init.body[:0] = fields
