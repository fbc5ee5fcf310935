"""Inspect: graders that fall back to the model under test (I4) and history shown (I2 note,
decided with every framework's EL205 in ``checks/graders.py``).

The Python front-end finds the grader calls (:mod:`evallint.frontends.inspect_facts`, on the tree
it parsed); these are project checks because EL205 is one check for every framework.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts.graderreads import HISTORY, GraderRead, grader_source
from evallint.facts.inspect_graders import InspectGrader
from evallint.findings import Finding, Severity
from evallint.kinds import FileKind
from evallint.pyflow.ir import PythonFacts
from evallint.registry import Context, Project, project_check


def _graders(project: Project) -> Iterator[tuple[PythonFacts, InspectGrader]]:
    """The Inspect grader calls of each Python file, as its front-end read them."""
    for facts in project.of_kind(FileKind.PYTHON):
        if isinstance(facts, PythonFacts):
            for g in facts.inspect_graders:
                yield facts, g


@project_check("EL303")
def inspect_graders(project: Project, ctx: Context) -> Iterator[Finding]:
    """``model_graded_qa()`` / ``model_graded_fact()`` / ``get_model()`` in a scorer, no model."""
    for facts, g in _graders(project):
        if g.has_model or g.has_role:
            continue
        what = (f"{g.func}() has no model=" if g.kind == "graded" else
                "get_model() in a custom @scorer has no model and no role=")
        yield ctx.finding(
            "EL303", facts.path, g.pos,
            f"{what}: Inspect then grades with the model being evaluated, unless a "
            "'grader' model role is bound at run time; name a different, cheaper grader",
            default=Severity.WARNING)


@grader_source
def history_shown(project: Project, ctx: Context) -> Iterator[GraderRead]:
    """``include_history=True``: the grader is shown the whole conversation."""
    for facts, g in _graders(project):
        if g.include_history:
            yield GraderRead(facts, facts.path, g.history_pos or g.pos, g.func,
                             "include_history", "include_history", (), HISTORY)
