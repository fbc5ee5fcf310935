"""One analysis per project, shared by every Python check of a run."""

from __future__ import annotations

from pathlib import PurePosixPath

from evallint.facts import Pos
from evallint.findings import Related
from evallint.pyflow.analysis import DEFAULT_EXTRACT, Analysis, Result
from evallint.pyflow.ir import PythonFacts
from evallint.registry import Context, Project

_LAST: tuple[Project, Result] | None = None


def result_for(project: Project, ctx: Context) -> Result:
    """The analysis of ``project`` (computed once, whichever Python check asks first)."""
    global _LAST
    if _LAST is not None and _LAST[0] is project:
        return _LAST[1]
    facts = [f for f in project.files.values() if isinstance(f, PythonFacts) and f.analyzed]
    extract = ctx.params("EL201").get("extract_functions", list(DEFAULT_EXTRACT))
    result = Analysis(facts, project.config, extract).run() if facts else Result()
    _LAST = (project, result)
    return result


def rel(path: str, pos: Pos, message: str) -> Related:
    """A related place; Related has no cell, so a notebook's cell goes into the message."""
    if pos.cell is not None:
        message = f"{message} (cell {pos.cell})"
    return Related(path, pos.line, pos.column, message)


def short(path: str) -> str:
    return PurePosixPath(path).name
