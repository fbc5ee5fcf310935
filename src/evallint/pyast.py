"""Two readings of ``ast`` nodes that every Python reader needs (IR builder, Inspect facts,
prompt strings): a dotted name path and a string constant."""

from __future__ import annotations

import ast


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
