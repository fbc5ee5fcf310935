"""EL201-EL203 for Python: what reaches the evaluator, and what reaches the generator.

The data flow itself is computed once per project by :mod:`evallint.pyflow.analysis`; these
checks only word the findings, naming both ends of every flow.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint.findings import Finding, Related, Severity
from evallint.pyflow.project import rel, result_for
from evallint.pyflow.results import Flow, where
from evallint.registry import Context, Project, project_check
from evallint.roles import name_tokens
from evallint.signals import as_list


def _related(flow: Flow, origin_msg: str) -> list[Related]:
    out: list[Related] = []
    o = flow.origin
    if o is not None and o.key[2] >= 0:
        out.append(rel(o.path, o.pos, origin_msg))
    for path, pos, msg in flow.related:
        out.append(rel(path, pos, msg))
    return out


def _legit(flow: Flow, project: Project, ctx: Context, *names: str) -> str | None:
    facts = project.files.get(flow.path)
    if facts is None:
        return None
    for name in names:
        if name:
            reason = ctx.legitimate(facts, name)
            if reason:
                return reason
    return None


def _io_field(name: str, ctx: Context) -> bool:
    """``trace.userMessage``, ``run.output``: a field of the generator's record that names
    the task input or the final output (EL103's aliases), the very things a judge is given,
    whatever the record is called. (A name alone decides this EL202; one traced from the
    generator's call is reported whatever its field.)"""
    head, _, field = name.rpartition(".")
    if not head:
        return False
    snake = "_".join(name_tokens(field))
    params = ctx.params("EL103")
    words = {*as_list(params.get("input_aliases")), *as_list(params.get("output_aliases")),
             *ctx.config.aliases.get("input", []), *ctx.config.aliases.get("output", [])}
    # (a chat's user turn is its input, the assistant's the output)
    return snake in words or snake in ("assistant_message", "final_message", "last_message")


@project_check("EL201", "EL202", "EL203")
def python_flows(project: Project, ctx: Context) -> Iterator[Finding]:
    result = result_for(project, ctx)
    # a variable whose path from the generator is traced needs no second finding from its
    # name alone at the same evaluator call
    traced = {(f.path, f.pos, f.name) for f in result.flows if f.code == "EL202"
              and f.origin is not None and f.origin.key[2] >= 0}
    for flow in result.flows:
        if not ctx.is_enabled(flow.code):
            continue
        if flow.code == "EL202" and (flow.origin is None or flow.origin.key[2] < 0) and (
                (flow.path, flow.pos, flow.name) in traced or _io_field(flow.name, ctx)):
            continue
        o = flow.origin
        src = where(o.path, o.pos) if o is not None else "?"
        sink = where(flow.path, flow.pos)
        via = f" as `{flow.detail}`" if flow.detail else ""
        severity: Severity | None = None
        default: Severity | None = None  # weaker evidence: a warning unless configured
        if flow.code == "EL201":
            if not flow.reasoning:
                # no sign that the output holds reasoning (no thinking, no reasoning model or
                # instruction, no reasoning tags): the raw text is the answer itself
                continue
            msg = (f"generator output (generated at {src}) reaches {flow.sink} at {sink}{via} "
                   f"without a final-answer extraction; {flow.reasoning[0]}")
            related = _related(flow, "the generator call that produced it")
            legit = _legit(flow, project, ctx, "thinking", "reasoning", flow.name)
        elif flow.code == "EL202":
            what = o.what if o is not None else f"`{flow.name}`"
            if o is not None and o.key[2] >= 0:
                msg = (f"{what} (given to the generator at {src}) reaches {flow.sink} at "
                       f"{sink}; the evaluator should see only the task input and the output")
            else:
                msg = (f"{what} looks like the generator's context (steps, trace, history) and "
                       f"reaches {flow.sink} at {sink}; the evaluator should see only the task "
                       "input and the output (from a name only: no flow from the generator's "
                       "call is traced)")
                default = Severity.WARNING
            related = _related(flow, "the generator call that used it")
            legit = _legit(flow, project, ctx, flow.name, flow.name.split(".")[-1])
        else:
            what = o.what if o is not None else "the evaluator's rubric"
            msg = (f"{what} (the evaluator's prompt or rubric, at {src}) reaches {flow.sink} "
                   f"at {sink}; the generator should learn only the feedback string")
            related = _related(flow, "the rubric comes from here")
            legit = None
        if legit:
            msg += f" (declared legitimate: {legit})"
            severity = Severity.NOTE
        yield ctx.finding(flow.code, flow.path, flow.pos, msg, severity=severity, default=default,
                          related=related, evidence=list(flow.reasoning))
