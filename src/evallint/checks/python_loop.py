"""EL501-EL505 for Python: refinement loops that are unbounded, return the last attempt, trust
the judge's pass flag, parse judge output unchecked, or truncate their results file."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.findings import Finding
from evallint.pyflow.project import rel, result_for
from evallint.pyflow.results import where
from evallint.registry import Context, Project, project_check


@project_check("EL501", "EL502", "EL503", "EL504", "EL505")
def python_loops(project: Project, ctx: Context) -> Iterator[Finding]:
    result = result_for(project, ctx)
    if ctx.is_enabled("EL501"):
        for loop in result.loops:
            if not loop.refinement or loop.bounded:
                continue
            g, e = loop.gen[0], loop.ev[0]
            related = [rel(loop.path, g, "the generator is called here"),
                       rel(loop.path, e, "the evaluator is called here")]
            yield ctx.finding(
                "EL501", loop.path, loop.pos,
                f"refinement loop at {where(loop.path, loop.pos)} calls the generator "
                f"({where(loop.path, g)}) and the evaluator ({where(loop.path, e)}) with no "
                "bound on attempts: add a max_attempts counter", related=related)
    for ev in result.events:
        if ctx.is_enabled(ev.code):
            yield ctx.finding(ev.code, ev.path, ev.pos, ev.message,
                              related=[rel(p, pos, m) for p, pos, m in ev.related])
