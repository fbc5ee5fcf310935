"""Inspect (``inspect_ai``) grader facts: model-graded scorers and custom scorers' models.

The Python front-end runs this scan on the tree it parsed (or parses for it, when the LLM
prefilter skipped the file), only for files whose text mentions ``inspect_ai``; the facts travel
and are cached with the file's other facts.
"""

from __future__ import annotations

import ast

from evallint.facts import Pos
from evallint.facts.inspect_graders import (
    InspectGrader,
)
from evallint.pyast import dotted
from evallint.source import char_column

GRADED = {"inspect_ai.scorer.model_graded_qa", "inspect_ai.scorer.model_graded_fact"}
SCORER_DECO = "inspect_ai.scorer.scorer"
GET_MODEL = "inspect_ai.model.get_model"


def _is_off(node: ast.expr) -> bool:
    """``None`` (or ``False``): the argument is given but switched off."""
    return isinstance(node, ast.Constant) and node.value in (None, False)


class _Scan:
    """One walk over the module: Inspect imports, then grader calls in and out of scorers."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.aliases: dict[str, str] = {}
        self.found: list[InspectGrader] = []

    def _qual(self, node: ast.expr) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return None
        qual = f"{base}.{rest}" if rest else base
        for private in ("._model", "._scorer", "._metric"):  # inspect_ai.scorer._model.x
            qual = qual.replace(private, "")
        return qual

    def _pos(self, node: ast.expr | ast.keyword) -> Pos:
        line = node.lineno
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Pos(line, char_column(text, node.col_offset) + 1)

    def _is_scorer(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if self._qual(target) == SCORER_DECO:
                return True
        return False

    def walk(self, node: ast.AST, in_scorer: int = 0) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("inspect_ai"):
                    local = alias.asname or alias.name.split(".")[0]
                    self.aliases[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if mod.startswith("inspect_ai"):
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{mod}.{alias.name}"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if in_scorer or self._is_scorer(node):
                in_scorer += 1
        elif isinstance(node, ast.Call):
            self.call(node, in_scorer)
        for child in ast.iter_child_nodes(node):
            self.walk(child, in_scorer)

    def call(self, node: ast.Call, in_scorer: int) -> None:
        qual = self._qual(node.func)
        if qual is None:
            return
        kw = {k.arg: k for k in node.keywords if k.arg is not None}
        model = kw.get("model")
        has_model = model is not None and not (isinstance(model.value, ast.Constant)
                                               and model.value.value is None)
        if qual in GRADED:
            hist = kw.get("include_history")
            on = hist is not None and not _is_off(hist.value)
            self.found.append(InspectGrader(
                "graded", qual.rsplit(".", 1)[1], self._pos(node), has_model,
                "model_role" in kw, on, self._pos(hist) if hist is not None and on else None))
        elif qual == GET_MODEL and in_scorer:
            positional = bool(node.args) or any(k.arg is None for k in node.keywords)
            self.found.append(InspectGrader("get_model", "get_model", self._pos(node),
                                            has_model or positional, "role" in kw))


def scan_inspect(text: str, tree: ast.Module | None = None) -> list[InspectGrader]:
    """Grader calls of one Python file; [] when it does not use Inspect or does not parse (the
    Python front-end reports that file's syntax error). ``tree``: the file already parsed by
    the front-end, walked again instead of parsed again."""
    if "inspect_ai" not in text:
        return []
    try:
        if tree is None:
            from evallint.pygrammar import parse_module  # (a newer grammar, when Python refuses)

            tree = parse_module(text)
        scan = _Scan(text)
        scan.walk(tree)  # recursive: the interpreter's own limit bounds it (RecursionError)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return scan.found
