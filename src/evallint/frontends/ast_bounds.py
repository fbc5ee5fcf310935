"""Bounds on Python syntax trees, checked before any recursive walk sees them.

A file in a pull request can hold a tree thousands of levels deep that ``ast.parse`` accepts;
a recursive walk over it would overflow. The check below uses an explicit stack, so it cannot.
"""

from __future__ import annotations

import ast

from evallint.frontend import ParseError

MAX_DEPTH = 150  # syntax-tree depth; real code stays far below, the recursive builder may not
MAX_NODES = 400_000  # about a 2 MB file of dense code


def check_shape(tree: ast.AST) -> None:
    """Refuse trees deeper or larger than the analysis is built for, before the recursive
    walks see them (an explicit stack: this check itself cannot overflow)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH:
            line = getattr(node, "lineno", 1)
            raise ParseError(f"nested more than {MAX_DEPTH} levels deep: too deep to analyse",
                             line, getattr(node, "col_offset", 0) + 1)
        if nodes > MAX_NODES:
            raise ParseError(f"more than {MAX_NODES:,} syntax nodes: too large to analyse")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
