"""One analysis per project, shared by every Python check of a run."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from evallint.facts import Pos
from evallint.findings import Related
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.parts import names_digest, plan, relevant_modules
from evallint.pyflow.relevance import DEFAULT_EXTRACT
from evallint.pyflow.results import Result
from evallint.pyflow.summaries import Tables
from evallint.registry import Context, Project

_LAST: tuple[Project, Result] | None = None


def result_for(project: Project, ctx: Context) -> Result:
    """The analysis of ``project`` (computed once, whichever Python check asks first). Each
    independent part (:mod:`evallint.pyflow.parts`) is read from the cache folder when none of
    its inputs changed since the last run, and solved again otherwise."""
    global _LAST
    if _LAST is not None and _LAST[0] is project:
        return _LAST[1]
    facts = [f for f in project.files.values() if isinstance(f, PythonFacts)]
    extract = ctx.params("EL201").get("extract_functions", list(DEFAULT_EXTRACT))
    result = Result()
    if any(f.analyzed for f in facts):
        result = _solve(facts, project, ctx, extract)
    _LAST = (project, result)
    return result


def _solve(facts: list[PythonFacts], project: Project, ctx: Context,
           extract: list[str]) -> Result:
    cache = ctx.cache
    digests = {f.path: f.digest for f in facts}
    names = names_digest(facts) if cache is not None else ""
    whole = ""
    if cache is not None:  # nothing changed: no planning either
        whole = cache.entry_key("whole", repr(extract), names, *(
            f"{path}\0{digest}" for path, digest in sorted(digests.items()) if digest))
        cached = cache.get("pyflow", whole)
        if isinstance(cached, Result):
            return cached
    tables = Tables(facts)
    parts = plan(facts, tables, relevant_modules(tables))
    results: list[Result] = []
    for part in parts:
        key = ""
        if cache is not None:
            key = cache.entry_key(repr(extract), names, *(
                f"{path}\0{digests.get(path, '')}" for path in sorted(part.inputs)))
            cached = cache.get("pyflow", key)
            if isinstance(cached, Result):
                results.append(cached)
                continue
        from evallint.pyflow.analysis import Analysis  # only when a part must be solved

        solved = Analysis(facts, project.config, extract, load=_load, part=part).run()
        if cache is not None:
            cache.put("pyflow", key, solved)
        results.append(solved)
    merged = merge(results, {f.path: i for i, f in enumerate(facts)})
    if cache is not None:
        cache.put("pyflow", whole, merged)
        cache.flush()
    return merged


def merge(results: list[Result], order: dict[str, int]) -> Result:
    """The parts' results as one, ordered by module (in a module: as found)."""
    out = Result()
    last = len(order)
    for res in results:
        out.flows += res.flows
        out.calls += res.calls
        out.loops += res.loops
        out.events += res.events
    for items in (out.flows, out.calls, out.loops, out.events):
        items.sort(key=lambda x: order.get(x.path, last))
    return out


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
