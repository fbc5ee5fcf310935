"""Inspect: graders that fall back to the model under test (I4) and history shown (I2 note).

A project check, because the Python front-end's facts are the data-flow rules' own; the Inspect
scan reads each Python file that mentions ``inspect_ai`` once (the front-end notes which do),
with its own small ``ast`` pass.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint import reads
from evallint.findings import Finding, Severity
from evallint.frontends.inspect_facts import scan_inspect
from evallint.kinds import FileKind
from evallint.pyflow.ir import PythonFacts
from evallint.registry import Context, Project, project_check


@project_check("EL303", "EL205")
def inspect_graders(project: Project, ctx: Context) -> Iterator[Finding]:
    """``model_graded_qa()`` / ``model_graded_fact()`` / ``get_model()`` in a scorer, no model."""
    for facts in project.of_kind(FileKind.PYTHON):
        if not (isinstance(facts, PythonFacts) and facts.uses_inspect):
            continue  # no Inspect here: not read again
        try:
            text = reads.read_file(facts.path, ctx.config.max_file_size).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for g in scan_inspect(text):
            if g.include_history and ctx.is_enabled("EL205"):
                yield ctx.finding(
                    "EL205", facts.path, g.history_pos or g.pos,
                    f"{g.func}(include_history=True) shows the grader the whole conversation, "
                    "not just the input and the final output; legitimate by design when the "
                    "task is judged on the dialogue", severity=Severity.NOTE)
            if g.has_model or g.has_role or not ctx.is_enabled("EL303"):
                continue
            what = (f"{g.func}() has no model=" if g.kind == "graded" else
                    "get_model() in a custom @scorer has no model and no role=")
            yield ctx.finding(
                "EL303", facts.path, g.pos,
                f"{what}: Inspect then grades with the model being evaluated, unless a "
                "'grader' model role is bound at run time; name a different, cheaper grader",
                default=Severity.WARNING)
