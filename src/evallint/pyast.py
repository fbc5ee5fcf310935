"""Two readings of ``ast`` nodes that every Python reader needs (IR builder, Inspect facts,
prompt strings): a dotted name path and a string constant; and the quiet parse they start from."""

from __future__ import annotations

import ast
import warnings


def quiet_parse(code: str) -> ast.Module:
    """``ast.parse(code)`` without the warnings the interpreter raises about the code itself
    (``SyntaxWarning: invalid escape sequence``): the user's file is not evallint's output,
    and newer interpreters print them to stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(code)


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a name or an attribute chain on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def str_const(node: ast.expr | None) -> str | None:
    """The text of a string constant, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None
