"""Inspect (``inspect_ai``) grader facts: model-graded scorers and custom scorers' models.

The Python front-end belongs to the data-flow rules; this helper reads only what the framework
rules need, with one libcst parse, and only for files whose text mentions ``inspect_ai``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from evallint.facts import Pos

GRADED = {"inspect_ai.scorer.model_graded_qa", "inspect_ai.scorer.model_graded_fact"}
SCORER_DECO = "inspect_ai.scorer.scorer"
GET_MODEL = "inspect_ai.model.get_model"


@dataclass
class InspectGrader:
    """A grader call: ``kind`` is ``graded`` (model_graded_*) or ``get_model`` (custom scorer)."""

    kind: str
    func: str
    pos: Pos
    has_model: bool
    has_role: bool
    include_history: bool = False
    history_pos: Pos | None = None


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


class _Scan(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.found: list[InspectGrader] = []
        self.scorer_depth = 0

    def _qual(self, node: cst.BaseExpression) -> str | None:
        name = _dotted(node)
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

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _dotted(alias.name)
            if full and full.startswith("inspect_ai"):
                local = alias.asname.name if alias.asname else None
                if isinstance(local, cst.Name):
                    self.aliases[local.value] = full
                else:
                    self.aliases[full.split(".")[0]] = full.split(".")[0]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        mod = _dotted(node.module) if node.module else None
        if not mod or not mod.startswith("inspect_ai") or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _dotted(alias.name)
            if not name:
                continue
            local = alias.asname.name if alias.asname else alias.name
            if isinstance(local, cst.Name):
                self.aliases[local.value] = f"{mod}.{name}"

    def _is_scorer(self, node: cst.FunctionDef) -> bool:
        for deco in node.decorators:
            expr = deco.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            if self._qual(target) == SCORER_DECO:
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._is_scorer(node) or self.scorer_depth:
            self.scorer_depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if self.scorer_depth:
            self.scorer_depth -= 1

    def _pos(self, node: cst.CSTNode) -> Pos:
        r = self.get_metadata(PositionProvider, node)
        return Pos(r.start.line, r.start.column + 1)

    def visit_Call(self, node: cst.Call) -> None:
        qual = self._qual(node.func)
        if qual is None:
            return
        kw = {a.keyword.value: a for a in node.args if a.keyword is not None}
        model = kw.get("model")
        has_model = model is not None and not (
            isinstance(model.value, cst.Name) and model.value.value == "None")
        if qual in GRADED:
            hist = kw.get("include_history")
            on = hist is not None and not (isinstance(hist.value, cst.Name)
                                           and hist.value.value in ("False", "None"))
            self.found.append(InspectGrader(
                "graded", qual.rsplit(".", 1)[1], self._pos(node), has_model,
                "model_role" in kw, on, self._pos(hist) if hist is not None and on else None))
        elif qual == GET_MODEL and self.scorer_depth:
            positional = any(a.keyword is None for a in node.args)
            self.found.append(InspectGrader("get_model", "get_model", self._pos(node),
                                            has_model or positional, "role" in kw))


def scan_inspect(text: str) -> list[InspectGrader]:
    """Grader calls of one Python file; [] when it does not use Inspect or does not parse."""
    if "inspect_ai" not in text:
        return []
    try:
        module = cst.parse_module(text)
        scan = _Scan()
        MetadataWrapper(module, unsafe_skip_copy=True).visit(scan)
    except (cst.ParserSyntaxError, RecursionError):
        return []
    return scan.found
