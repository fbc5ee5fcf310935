"""Cheap positions and a second prefilter, from the standard ``ast`` tree of the same code.

libcst's ``PositionProvider`` regenerates the whole module to count lines and columns, which
costs more than the parse itself. ``ast`` nodes carry their positions for free, and ``ast``
parses about eight times faster than libcst. Both trees hold the same calls and statements in
the same source order, so the n-th ``Call`` of libcst (pre-order) is the n-th ``ast.Call`` by
start position. Each pair is verified (same callee text); on any mismatch the caller falls back
to ``PositionProvider``.

The ``ast`` tree also answers, before any CST is built, whether a file can matter to the
Python rules at all (an SDK import or call, a role-named function, a model or prompt constant).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

import libcst as cst

from evallint.roles import Role, name_tokens, role_from_name


def function_role(name: str) -> Role:
    """A function's role from its name; when the name has words of both roles
    (``judge_draft``, ``score_answer``) its first word, the verb, decides."""
    role = role_from_name(name)
    if role is Role.UNKNOWN:
        first = name_tokens(name)
        if first:
            return role_from_name(first[0])
    return role


# (line, 0-based column in characters, end line)
Span = tuple[int, int, int]

_STMT_PAIRS: tuple[tuple[type[cst.CSTNode], tuple[type[ast.AST], ...]], ...] = (
    (cst.Assign, (ast.Assign,)),
    (cst.AnnAssign, (ast.AnnAssign,)),
    (cst.AugAssign, (ast.AugAssign,)),
    (cst.Expr, (ast.Expr,)),
    (cst.Return, (ast.Return,)),
    (cst.Raise, (ast.Raise,)),
    (cst.Break, (ast.Break,)),
    (cst.Continue, (ast.Continue,)),
    (cst.Assert, (ast.Assert,)),
    (cst.If, (ast.If,)),
    (cst.For, (ast.For, ast.AsyncFor)),
    (cst.While, (ast.While,)),
    (cst.FunctionDef, (ast.FunctionDef, ast.AsyncFunctionDef)),
    (cst.Call, (ast.Call,)),
)
_CST_KIND = {c: i for i, (c, _) in enumerate(_STMT_PAIRS)}
_AST_KIND = {a: i for i, (_, types) in enumerate(_STMT_PAIRS) for a in types}
_CALL = _CST_KIND[cst.Call]

SDK_ROOTS = {"anthropic", "openai", "litellm"}
SDK_TAILS = ("messages", "completions", "responses", "completion", "acompletion", "batches")
_MODEL_HINTS = ("claude", "gpt-", "gemini", "o1", "o3", "o4", "haiku", "sonnet", "opus")


# Children in source order. libcst's own ``visit``/``children`` rebuild every node and cost
# more than the parse; a walk over the dataclass fields does not. Field order is source order
# except for these types.
_ORDER: dict[type[cst.CSTNode], tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
}
_SKIP_PREFIXES = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines",
                  "lines_after", "header", "footer", "colon", "equal", "star_tok", "dot",
                  "trailing", "first_line", "last_line", "newline", "indent", "asynchronous",
                  "operator", "lbrace", "rbrace", "lbracket", "rbracket", "prefix", "quote")
_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def _fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _ORDER.get(kind) or tuple(
            f.name for f in dataclasses.fields(kind)
            if not f.name.startswith(_SKIP_PREFIXES))
        _FIELDS[kind] = names
    return names


def _cst_preorder(module: cst.Module) -> list[list[cst.CSTNode]]:
    out: list[list[cst.CSTNode]] = [[] for _ in _STMT_PAIRS]
    stack: list[cst.CSTNode] = [module]
    node_type = cst.CSTNode
    while stack:
        node = stack.pop()
        kind = _CST_KIND.get(type(node))
        if kind is not None:
            out[kind].append(node)
        children: list[cst.CSTNode] = []
        for name in _fields(type(node)):
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                children.append(value)
            elif isinstance(value, (tuple, list)):
                children.extend(v for v in value if isinstance(v, node_type))
        children.reverse()
        stack.extend(children)
    return out


def _ast_sorted(tree: ast.AST) -> list[list[ast.AST]]:
    out: list[list[ast.AST]] = [[] for _ in _STMT_PAIRS]
    for node in ast.walk(tree):
        kind = _AST_KIND.get(type(node))
        if kind is not None:
            out[kind].append(node)
    for nodes in out:
        nodes.sort(key=lambda n: (n.lineno, n.col_offset,  # type: ignore[attr-defined]
                                  -(n.end_lineno or 0), -(n.end_col_offset or 0)))  # type: ignore[attr-defined]
    return out


def _callee(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_callee(node.value)}.{node.attr.value}"
    return "?"


def _ast_callee(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_ast_callee(node.value)}.{node.attr}"
    return "?"


def ast_positions(module: cst.Module, tree: ast.Module, code: str) -> (
    dict[cst.CSTNode, Span] | None
):
    """Spans of the calls and statements of ``module``; None when the trees do not pair up."""
    cst_nodes = _cst_preorder(module)
    ast_nodes = _ast_sorted(tree)
    lines: list[str] | None = None
    spans: dict[cst.CSTNode, Span] = {}
    for kind, (cs, asts) in enumerate(zip(cst_nodes, ast_nodes, strict=True)):
        if len(cs) != len(asts):
            return None
        for c, a in zip(cs, asts, strict=True):
            if kind == _CALL:
                assert isinstance(c, cst.Call) and isinstance(a, ast.Call)
                if _callee(c.func) != _ast_callee(a.func):
                    return None
            line = a.lineno  # type: ignore[attr-defined]
            col = a.col_offset  # type: ignore[attr-defined]
            if col:
                if lines is None:
                    lines = code.splitlines()
                text = lines[line - 1] if 0 < line <= len(lines) else ""
                if not text.isascii():
                    col = len(text.encode("utf-8")[:col].decode("utf-8", "replace"))
            spans[c] = (line, col, a.end_lineno or line)  # type: ignore[attr-defined]
    return spans


_SDK_CALL_TEXT = (".messages.create", ".messages.stream", ".messages.parse", "batches.create",
                  ".completions.create", ".completions.parse", ".responses.create",
                  ".responses.parse", ".responses.stream")


def needs_analysis(tree: ast.Module, text: str) -> bool:
    """Can this module matter to the Python rules? An SDK import or SDK-shaped call, a function
    named for a role, or a module-level model/prompt constant. Files that only import a helper
    module are caught later: the project analysis parses them on demand."""
    for node in _walk_defs(tree):
        if isinstance(node, ast.Import):
            if any(_sdk_root(a.name) for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and _sdk_root(node.module or ""):
                return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if function_role(node.name) is Role.EVALUATOR:
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _constant_matters(node):
            return True
    # a client passed in from elsewhere: the call's shape is the only evidence
    return any(t in text for t in _SDK_CALL_TEXT)


def _sdk_root(module: str) -> bool:
    """An LLM SDK or a LangChain package (``langchain_openai``, ``langchain.chat_models``)."""
    root = module.split(".")[0]
    return root in SDK_ROOTS or root.startswith("langchain")


def _walk_defs(tree: ast.Module) -> Iterator[ast.AST]:
    """Module-level statements, class bodies and function signatures (not function bodies)."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.ClassDef, ast.If, ast.Try, ast.With)):
            stack.extend(node.body)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(n for n in node.body if isinstance(
                n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)))


def _constant_matters(node: ast.Assign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for t in targets:
        if isinstance(t, ast.Name) and role_from_name(t.id) is not Role.UNKNOWN:
            return True
    value = node.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        low = value.value.lower()
        return len(low) < 80 and any(h in low for h in _MODEL_HINTS)
    if isinstance(value, ast.Dict):
        return any(isinstance(v, ast.Constant) and isinstance(v.value, str)
                   and len(v.value) < 80 and any(h in v.value.lower() for h in _MODEL_HINTS)
                   for v in value.values)
    return False
