"""EL501 for LangGraph: a generator/evaluator cycle closed by a conditional edge, unbounded."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.findings import Finding
from evallint.pyflow.project import graphs_for, rel
from evallint.pyflow.results import where
from evallint.registry import Context, Project, project_check


@project_check("EL501")
def langgraph_loops(project: Project, ctx: Context) -> Iterator[Finding]:
    for loop in graphs_for(project, ctx):  # [] when no module builds a graph
        if loop.bounded:
            continue
        (gen, gen_at), (ev, ev_at) = loop.generator, loop.evaluator
        sends = (f"sends the drafts of the generator node `{gen}` on to the evaluator node "
                 f"`{ev}`, which sends them back," if loop.after_generator else
                 f"sends the evaluator node `{ev}` back to the generator node `{gen}`")
        yield ctx.finding(
            "EL501", loop.path, loop.pos,
            f"graph cycle: the conditional edge at {where(loop.path, loop.pos)} {sends} and "
            f"its router `{loop.router}()` counts no attempts: keep an attempt counter in the "
            "state and route to END past a maximum (LangGraph's recursion limit stops the run "
            "with an error, not with the best attempt)",
            related=[rel(loop.path, gen_at, f"the generator node `{gen}` is added here"),
                     rel(loop.path, ev_at, f"the evaluator node `{ev}` is added here")])
