"""One analysis per project, shared by every Python check of a run."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from evallint.facts import Pos
from evallint.findings import Related
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.results import Result
from evallint.registry import Context, Project

_LAST: tuple[Project, Result] | None = None


def result_for(project: Project, ctx: Context) -> Result:
    """The analysis of ``project`` (computed once, whichever Python check asks first; read
    from the cache folder when no Python input changed since the last run)."""
    global _LAST
    if _LAST is not None and _LAST[0] is project:
        return _LAST[1]
    from evallint.pyflow.analysis import DEFAULT_EXTRACT, Analysis  # only when there is Python

    facts = [f for f in project.files.values() if isinstance(f, PythonFacts)]
    extract = ctx.params("EL201").get("extract_functions", list(DEFAULT_EXTRACT))
    if not any(f.analyzed for f in facts):
        result = Result()
    else:
        cache = ctx.cache
        key = _key(facts, ctx, extract) if cache is not None else ""
        cached = cache.get("pyflow", key) if cache is not None else None
        if isinstance(cached, Result):
            result = cached
        else:
            result = Analysis(facts, project.config, extract, load=_load).run()
            if cache is not None:  # one entry: the last run's
                cache.put("pyflow", key, result, replace_all=True)
    _LAST = (project, result)
    return result


def _key(facts: list[PythonFacts], ctx: Context, extract: list[str]) -> str:
    assert ctx.cache is not None
    parts = [repr(extract)]
    for f in sorted((f for f in facts if f.digest), key=lambda f: f.path):
        parts.append(f"{f.path}\0{f.digest}")
    return ctx.cache.entry_key(*parts)


def _load(facts: PythonFacts) -> PythonFacts | None:
    """Parse a file the prefilter skipped; None when it cannot be read or parsed now."""
    from evallint.frontend import ParseError
    from evallint.frontends.python_front import build_facts
    from evallint.source import SourceError, read_source

    try:
        source = read_source(Path(facts.path), facts.path)
        return build_facts(source, force=True)
    except (SourceError, ParseError, RecursionError):
        return None


def rel(path: str, pos: Pos, message: str) -> Related:
    """A related place (in a notebook: the cell, with the line counted inside it)."""
    return Related(path, pos.line, pos.column, message, pos.cell)


def short(path: str) -> str:
    return PurePosixPath(path).name
