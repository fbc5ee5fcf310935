"""Inspect: graders that fall back to the model under test (I4) and history shown (I2 note,
decided with every framework's EL205 in ``checks/graders.py``).

A project check, because the Python front-end's facts are the data-flow rules' own; the Inspect
scan reads each Python file that mentions ``inspect_ai`` once (the front-end notes which do),
with its own small ``ast`` pass.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint import reads
from evallint.findings import Finding, Severity
from evallint.frontends.inspect_facts import InspectGrader, scan_inspect
from evallint.graderreads import HISTORY, GraderRead, grader_source
from evallint.kinds import FileKind
from evallint.pyflow.ir import PythonFacts
from evallint.registry import Context, Project, project_check

_SCANS: tuple[Project, list[tuple[PythonFacts, list[InspectGrader]]]] | None = None


def _graders(project: Project, ctx: Context) -> list[tuple[PythonFacts, list[InspectGrader]]]:
    """The Inspect graders of each Python file that mentions ``inspect_ai``, read once per
    project for both rules."""
    global _SCANS
    if _SCANS is not None and _SCANS[0] is project:
        return _SCANS[1]
    out = []
    for facts in project.of_kind(FileKind.PYTHON):
        if not (isinstance(facts, PythonFacts) and facts.uses_inspect):
            continue  # no Inspect here: not read again
        try:
            text = reads.read_file(facts.path, ctx.config.max_file_size).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.append((facts, scan_inspect(text)))
    _SCANS = (project, out)
    return out


@project_check("EL303")
def inspect_graders(project: Project, ctx: Context) -> Iterator[Finding]:
    """``model_graded_qa()`` / ``model_graded_fact()`` / ``get_model()`` in a scorer, no model."""
    for facts, graders in _graders(project, ctx):
        for g in graders:
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
    for facts, graders in _graders(project, ctx):
        for g in graders:
            if g.include_history:
                yield GraderRead(facts, facts.path, g.history_pos or g.pos, g.func,
                                 "include_history", "include_history", (), HISTORY)
