"""EL401 for every kind: an evaluator must not hold tools that write or execute (I5). The
grants come from each kind's ``@grant_source``."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts.toolgrants import SOURCES
from evallint.findings import Finding
from evallint.registry import Context, Project, project_check


@project_check("EL401")
def evaluator_tools(project: Project, ctx: Context) -> Iterator[Finding]:
    """One finding per grant, in one wording for agents and Python calls alike."""
    for source in SOURCES:
        for grant in source(project, ctx):
            if grant.tools:
                yield ctx.finding(
                    "EL401", grant.path, grant.pos,
                    f"{grant.who} is given write/exec tools{grant.how}: "
                    f"{'; '.join(grant.tools)}; an evaluator should only read",
                    evidence=list(grant.evidence))
