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


def related(items: tuple[tuple[str, Pos, str], ...] | list[tuple[str, Pos, str]]) -> (
    list[Related]
):
    return [Related(path, pos.line, pos.column, msg) for path, pos, msg in items]


def short(path: str) -> str:
    return PurePosixPath(path).name
