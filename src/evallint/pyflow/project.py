"""One analysis per project, shared by every Python check of a run."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from evallint.facts import Pos
from evallint.findings import Related
from evallint.pyflow.graphs import (
    GraphLink,
    GraphLoop,
    builds_graphs,
    graph_loops,
    node_roles_digest,
)
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.parts import (
    Part,
    StoredPlan,
    names_digest,
    plan,
    planning_digest,
    relevant_modules,
)
from evallint.pyflow.relevance import DEFAULT_EXTRACT
from evallint.pyflow.replay import Replay, RunMemo
from evallint.pyflow.results import Result
from evallint.pyflow.summaries import Lookup, Tables, dotted_suffixes
from evallint.registry import Context, Project
from evallint.workers import Forked

if TYPE_CHECKING:
    from evallint.cache import Store

_LAST: tuple[Project, Result] | None = None


def result_for(project: Project, ctx: Context) -> Result:
    """The analysis of ``project`` (computed once, whichever Python check asks first). Each
    independent part (:mod:`evallint.pyflow.parts`) is read from the cache folder when none of
    its inputs changed since the last run, and solved again otherwise."""
    global _LAST
    if _LAST is not None and _LAST[0] is project:
        return _LAST[1]
    # (in path order: the order files were read in must not change what is found)
    facts = sorted((f for f in project.files.values() if isinstance(f, PythonFacts)),
                   key=lambda f: f.path)
    extract = _extract(ctx)
    result = Result()
    if any(f.analyzed for f in facts):
        result = _solve(facts, project, ctx, extract)
    _LAST = (project, result)
    return result


_GRAPHS: tuple[Project, list[GraphLoop | GraphLink]] | None = None


def graphs_for(project: Project, ctx: Context) -> list[GraphLoop]:
    """The LangGraph cycles of ``project`` (EL501): see :func:`graph_facts`."""
    return [g for g in graph_facts(project, ctx) if isinstance(g, GraphLoop)]


def graph_links_for(project: Project, ctx: Context) -> list[GraphLink]:
    """The LLM nodes whose state reaches an evaluator node (EL301/EL302 pairs)."""
    return [g for g in graph_facts(project, ctx) if isinstance(g, GraphLink)]


def graph_facts(project: Project, ctx: Context) -> list[GraphLoop | GraphLink]:
    """The LangGraph cycles and links of ``project``, read off the graph modules' code trees
    and the analysis. Cached under the graph modules' contents and the roles the analysis
    found, with every lookup the graphs made in the other modules (a node function imported
    from elsewhere): an edit elsewhere that leaves those as they were decodes no graph
    module's tree."""
    global _GRAPHS
    if _GRAPHS is not None and _GRAPHS[0] is project:
        return _GRAPHS[1]
    # (in path order: the order files were read in must not change what is found)
    facts = sorted((f for f in project.files.values() if isinstance(f, PythonFacts)),
                   key=lambda f: f.path)
    graph_paths = [f.path for f in facts if builds_graphs(f)]
    if not graph_paths:
        return []
    result = result_for(project, ctx)
    # node functions and routers in files the prefilter skipped (no LLM words: a router, a
    # package's ``__init__`` re-exporting the nodes), or that only the analysis parsed
    wanted = _graph_reads(facts, set(graph_paths) | set(result.loaded))
    if wanted:
        facts = [(_load(f) or f) if f.path in wanted and not f.analyzed else f for f in facts]
    cache = ctx.cache
    key = ""
    if cache is not None:
        label = f"graphs\0{node_roles_digest(result)}"
        key = _keyer(facts, cache, _extract(ctx))(label, graph_paths)
        loops = _cached_graphs(cache.get("pyflow", key), facts)
        if loops is not None:
            _GRAPHS = (project, loops)
            return loops
    tables = Tables(facts)
    trace: set[Lookup] = set()
    tables.trace = trace
    loops = list(graph_loops(facts, result, tables))
    if cache is not None:
        cache.put("pyflow", key, (loops, sorted(trace, key=repr)))
    _GRAPHS = (project, loops)
    return loops


def _graph_reads(facts: list[PythonFacts], start: set[str], hops: int = 2) -> set[str]:
    """The skipped files the graph modules (and the files the analysis loaded) import, two
    imports deep: read too when the graphs are, so a router's code is known."""
    skipped = _skipped_by_name(facts)
    want = {p for p in start if p in {f.path for f in skipped.values()}}
    frontier = [f for f in facts if f.path in start]
    for _ in range(hops):
        found: list[PythonFacts] = []
        for f in frontier:
            for name in (f.imports.values() if f.analyzed else f.imported):
                hit = _skipped_file(skipped, name)
                if hit is not None and hit.path not in want:
                    want.add(hit.path)
                    found.append(hit)
        frontier = found
    return want


def _skipped_by_name(facts: list[PythonFacts], digested: bool = False
                     ) -> dict[str, PythonFacts]:
    """The files the prefilter skipped, by every dotted suffix of their module name (imports
    may be rooted anywhere); ``digested``: only those whose text digest is kept."""
    return {name: f for f in facts if not f.analyzed and f.module and (f.digest or not digested)
            for name in dotted_suffixes(f.module)}


def _skipped_file(skipped: dict[str, PythonFacts], name: str) -> PythonFacts | None:
    """The skipped file an imported dotted name leads to: its longest prefix naming one."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        hit = skipped.get(".".join(parts[:k]))
        if hit is not None:
            return hit
    return None


def _cached_graphs(entry: object, facts: list[PythonFacts]
                   ) -> list[GraphLoop | GraphLink] | None:
    """A stored (loops, lookups) whose every lookup answers as it did, else None (the
    tables to ask are built only when there is a lookup to check)."""
    if not (isinstance(entry, tuple) and len(entry) == 2):
        return None
    loops, lookups = entry
    if not (isinstance(loops, list) and all(isinstance(g, (GraphLoop, GraphLink)) for g in loops)
            and isinstance(lookups, list)):
        return None
    tables: Tables | None = None
    for lookup in lookups:
        if not (isinstance(lookup, tuple) and len(lookup) == 5
                and all(isinstance(x, str) for x in lookup[:3])):
            return None
        method, name, near, path, found = lookup
        if tables is None:
            tables = Tables(facts)
        if method not in _LOOKUPS or tables.answer(method, name, near) != (path, found):
            return None
    return loops


_LOOKUPS = frozenset({"module", "owner", "function_name", "constant"})


def _extract(ctx: Context) -> list[str]:
    return list(ctx.params("EL201").get("extract_functions", list(DEFAULT_EXTRACT)))


def _digested(facts: list[PythonFacts]) -> list[str]:
    return [f.path for f in facts if f.digest]


def _keyer(facts: list[PythonFacts], cache: Store, extract: list[str]
           ) -> Callable[[str, Iterable[str]], str]:
    """The cache key of a result read from some of ``facts`` (their contents), under the
    project's module names and the extraction functions."""
    digests = {f.path: f.digest for f in facts}
    names = names_digest(facts)

    def key(label: str, paths: Iterable[str]) -> str:
        return cache.entry_key(label, repr(extract), names, *(
            f"{path}\0{digests.get(path, '')}" for path in sorted(paths)))

    return key


def _solve(facts: list[PythonFacts], project: Project, ctx: Context,
           extract: list[str]) -> Result:
    cache = ctx.cache
    key = _keyer(facts, cache, extract) if cache is not None else None
    whole = ""
    if key is not None and cache is not None:  # nothing changed: no planning either
        whole = key("whole", _digested(facts))
        cached = cache.get("pyflow", whole)
        if isinstance(cached, Result):
            return cached
    tables = Tables(facts)
    runners = _step_runners(facts, tables, cache)
    if runners:
        facts = [runners.get(f.path, f) for f in facts]
        tables = Tables(facts)
    parts, relevant = _plan(facts, tables, cache)
    results: dict[int, Result] = {}
    keys: dict[int, str] = {}
    for i, part in enumerate(parts):
        if key is not None and cache is not None:
            keys[i] = key("part", part.inputs)
            cached = cache.get("pyflow", keys[i])
            if isinstance(cached, Result):
                results[i] = cached
    todo = [i for i in range(len(parts)) if i not in results]
    memos: dict[str, RunMemo] = {}
    if todo:
        from evallint.pyflow.analysis import Analysis  # only when a part must be solved

        names = names_digest(facts)

        def memo_key(path: str, digest: str) -> str:
            return (cache.entry_key("quiet", repr(extract), names, path, digest)
                    if cache is not None else "")

        def load_memo(path: str, digest: str) -> RunMemo | None:
            found = cache.get("pyflow", memo_key(path, digest)) if cache is not None else None
            return found if isinstance(found, RunMemo) else None

        def load(f: PythonFacts) -> PythonFacts | None:
            return _cached_load(f, cache)

        def solve(which: list[int]) -> list[tuple[Result, dict[str, RunMemo]]]:
            out: list[tuple[Result, dict[str, RunMemo]]] = []
            done_after = _last_use(which, parts, facts)
            for n, i in enumerate(which):
                replay = Replay(names, load_memo) if cache is not None else None
                an = Analysis(facts, project.config, extract, load=load, part=parts[i],
                              tables=(tables, relevant), replay=replay)
                res = an.run()
                out.append((res, replay.memos(an.recorded_keys()) if replay else {}))
                if n == len(which) - 1:
                    break  # the peak is behind: later readers (EL501's graphs) keep them
                for f in done_after.get(n, ()):  # decoded again if anything needs them
                    f.release_tree()
            return out

        mine, theirs = _split(todo, parts, facts) if ctx.workers > 1 else (todo, [])
        child = Forked(lambda: solve(theirs)) if theirs else None
        solved: list[tuple[int, tuple[Result, dict[str, RunMemo]]]] = []
        try:
            solved += zip(mine, solve(mine), strict=True)
            found = child.result() if child is not None else None
        finally:
            if child is not None:
                child.close()
        if theirs:  # the child's results, or solved here when the child failed
            solved += zip(theirs, found if found is not None else solve(theirs), strict=True)
        for i, (res, changed) in solved:
            results[i] = res
            memos.update(changed)
        if cache is not None:
            for i in todo:
                cache.put("pyflow", keys[i], results[i])
            for path, memo in memos.items():
                cache.put("pyflow", memo_key(path, memo.digest), memo)
    merged = merge([results[i] for i in range(len(parts))],
                   {f.path: i for i, f in enumerate(facts)})
    if cache is not None:
        cache.put("pyflow", whole, merged)
        cache.flush()
    return merged


def _plan(facts: list[PythonFacts], tables: Tables, cache: Store | None
          ) -> tuple[list[Part], set[str]]:
    """The parts and the relevant modules: from the cache when nothing planning reads has
    changed (the usual edit), else planned and stored."""
    if cache is None:
        relevant = relevant_modules(tables)
        return plan(facts, tables, relevant), relevant
    key = cache.entry_key("plan", planning_digest(facts))
    stored = cache.get("pyflow", key)
    found = stored.restore(facts) if isinstance(stored, StoredPlan) else None
    if found is not None:
        return found
    relevant = relevant_modules(tables)
    parts = plan(facts, tables, relevant)
    cache.put("pyflow", key, StoredPlan.of(parts, relevant))
    return parts, relevant


def _last_use(which: list[int], parts: list[Part], facts: list[PythonFacts]
              ) -> dict[int, list[PythonFacts]]:
    """The modules whose trees no part of ``which`` reads after the one at position ``n``
    (a module no part reads: after the first)."""
    last: dict[str, int] = {}
    for n, i in enumerate(which):
        for path in parts[i].inputs:
            last[path] = n
    out: dict[int, list[PythonFacts]] = {}
    for f in facts:
        if f.analyzed:
            out.setdefault(last.get(f.path, 0), []).append(f)
    return out


# Below this many functions to solve in the smaller half, a second process costs more than
# it saves (forking and sending the results back take a few milliseconds).
SPLIT_MIN_FUNCTIONS = 150


def _split(todo: list[int], parts: list[Part], facts: list[PythonFacts]
           ) -> tuple[list[int], list[int]]:
    """The parts to solve here and those for a second process: two halves of about equal
    work, or all here when the smaller half would be small (counted in functions). The work
    is the size of the modules' stored code trees when every module has one (a notebook's
    body is one function of hundreds of lines), else their number of functions."""
    functions = {f.path: len(f.function_names) + 1 for f in facts}
    trees = {f.path: f.stored_tree_size() for f in facts if f.analyzed}
    by_tree = all(trees.get(p) is not None for i in todo for p in parts[i].paths)
    size = {p: n for p, n in trees.items() if n is not None} if by_tree else functions
    weight = {i: sum(size.get(p, 1) for p in parts[i].paths) for i in todo}
    halves: tuple[list[int], list[int]] = ([], [])
    loads = [0, 0]
    for i in sorted(todo, key=lambda i: -weight[i]):
        side = 0 if loads[0] <= loads[1] else 1
        halves[side].append(i)
        loads[side] += weight[i]
    if min(sum(functions.get(p, 1) for i in half for p in parts[i].paths)
           for half in halves) < SPLIT_MIN_FUNCTIONS:
        return todo, []
    return sorted(halves[0]), sorted(halves[1])


def merge(results: list[Result], order: dict[str, int]) -> Result:
    """The parts' results as one, ordered by module (in a module: as found)."""
    out = Result()
    last = len(order)
    for res in results:
        out.flows += res.flows
        out.calls += res.calls
        out.loops += res.loops
        out.loaded += res.loaded
        out.events += res.events
    for items in (out.flows, out.calls, out.loops, out.events):
        items.sort(key=lambda x: order.get(x.path, last))
    return out


def _cached_load(f: PythonFacts, cache: Store | None) -> PythonFacts | None:
    """:func:`_load` through the cache: a skipped file the analysis loads is parsed once per
    content (one loaded by the forked second solver is not kept: cache writes wait in the
    process that made them)."""
    k = cache.entry_key("loaded", f.path, f.digest) if cache and f.digest else ""
    hit = cache.get("pyflow", k) if cache and k else None
    if isinstance(hit, PythonFacts):
        return hit
    found = _load(f)
    if cache and k and found is not None and found.digest == f.digest:
        cache.put("pyflow", k, found)
    return found


def _step_runners(facts: list[PythonFacts], tables: Tables, cache: Store | None
                  ) -> dict[str, PythonFacts]:
    """The files the prefilter skipped (no LLM word) that a relevant module imports and whose
    function runs the functions it is handed as steps (``cycle(produce, check, amend)``, see
    :mod:`evallint.pyflow.callbacks`), read: the relevant module's steps run there, whatever
    the helper's names are. By path; the others stay skipped."""
    skipped = _skipped_by_name(facts, digested=True)
    if not skipped:
        return {}
    want: dict[str, PythonFacts] = {}
    relevant = relevant_modules(tables)
    for m in tables.modules:
        if m.path not in relevant:
            continue
        for value in m.facts.handed_to:
            hit = _skipped_file(skipped, value)
            if hit is not None:
                want.setdefault(hit.path, hit)
    out: dict[str, PythonFacts] = {}
    for path, f in sorted(want.items()):
        found = _cached_load(f, cache)
        if found is not None and found.analyzed and found.runs_steps:
            out[path] = found
    return out


def _load(facts: PythonFacts) -> PythonFacts | None:
    """Parse a file the prefilter skipped; None when it cannot be read or parsed now."""
    from evallint.frontend import ParseError
    from evallint.frontends.python_front import build_facts
    from evallint.frontends.script_front import build_script_facts
    from evallint.source import SourceError, read_source

    try:
        source = read_source(Path(facts.path), facts.path)
        if facts.kind in ("typescript", "javascript"):
            return build_script_facts(source, force=True)
        return build_facts(source, force=True)
    except (SourceError, ParseError, RecursionError):
        return None


def rel(path: str, pos: Pos, message: str) -> Related:
    """A related place (in a notebook: the cell, with the line counted inside it)."""
    return Related(path, pos.line, pos.column, message, pos.cell)


def short(path: str) -> str:
    return PurePosixPath(path).name
