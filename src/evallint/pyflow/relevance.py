"""The second prefilter, on the ``ast`` tree: can a module matter to the Python rules at all
(an SDK import or call, a role-named function, a model or prompt constant)? Files that cannot
are not analysed further."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from evallint.pyflow.providers import SDK_CALL_TEXT, SDK_ROOTS
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


_MODEL_HINTS = ("claude", "gpt-", "gemini", "o1", "o3", "o4", "haiku", "sonnet", "opus")



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
    return any(t in text for t in SDK_CALL_TEXT)


def _sdk_root(module: str) -> bool:
    """An LLM SDK, a LangChain package (``langchain_openai``, ``langchain.chat_models``) or
    LangGraph (a graph module wires the generator and the judge nodes into a loop)."""
    root = module.split(".")[0]
    return root in SDK_ROOTS or root.startswith(("langchain", "langgraph"))


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
