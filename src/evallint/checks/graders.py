"""EL205 for every framework: what a framework's grader is shown beyond the task input, the
output and the reference (I2). The reads come from each framework's ``@grader_source``
(promptfoo rubrics, openai/evals model-graded specs, Inspect's scorers)."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts.graderreads import FIELDS, HISTORY, SOURCES, VARS, GraderRead
from evallint.findings import Finding, Severity
from evallint.registry import Context, Project, project_check
from evallint.signals import as_list, name_listed, signal_in


@project_check("EL205")
def grader_context(project: Project, ctx: Context) -> Iterator[Finding]:
    """Each read, decided by its scope: a signal is an error wherever it is read; an unknown
    name is the test's own variable in a promptfoo rubric and a note in a closed template; the
    whole conversation is a note."""
    params = ctx.params("EL205")
    allowed = {str(a) for a in params.get("allowed", [])} | set(
        ctx.config.allowed_evaluator_inputs)
    harness = as_list(params.get("harness"))
    for source in SOURCES:
        for read in source(project, ctx):
            if read.scope == HISTORY:
                yield ctx.finding(
                    "EL205", read.path, read.pos,
                    f"{read.grader}(include_history=True) shows the grader the whole "
                    "conversation, not just the input and the final output; legitimate by "
                    "design when the task is judged on the dialogue", severity=Severity.NOTE)
            elif read.scope == VARS:
                hit = next((h for part in read.parts if (h := grader_signal(part, ctx))), None)
                if hit is not None:
                    yield _context_finding(ctx, read, f"denied name '{hit}'")
            elif read.scope == FIELDS:
                if (read.name in allowed or read.name in read.mapped
                        or name_listed(read.name, harness)):
                    continue
                sig = grader_signal(read.name, ctx, with_template_signals=True)
                if sig is not None:
                    yield _context_finding(ctx, read, f"generator-context signal '{sig}'")
                    continue
                reason = _legitimate(ctx, read)
                suffix = (f" (declared legitimate: {reason})" if reason else
                          "; map it in input_outputs, declare it legitimate, or remove it")
                yield ctx.finding(
                    "EL205", read.path, read.pos,
                    f"the {read.grader} grader's template renders '{read.dotted}', which is "
                    f"neither the input, the completion nor the reference{suffix}",
                    severity=Severity.NOTE)


def grader_signal(name: str, ctx: Context, *, with_template_signals: bool = False) -> str | None:
    """The generator-context signal a grader-template name carries, matched like EL102.

    Whole tokens or token-aligned prefixes (``chat_history``, ``intermediate_steps``), never
    substrings; ``exact`` signals (``system``) only as the whole name, so ``operating_system``
    is not the system prompt; a name qualified by the evaluator's side (``evaluation_steps``)
    is the grader's own material. ``with_template_signals`` adds EL102's ``signals`` and
    ``exact`` (a grader template is an evaluator template).
    """
    p205, p102 = ctx.params("EL205"), ctx.params("EL102")
    if name_listed(name, as_list(p102.get("ignore"))):
        return None
    signals = as_list(p205.get("denied"))
    exact = as_list(p205.get("exact"))
    if with_template_signals:
        signals += as_list(p102.get("signals"))
        exact += as_list(p102.get("exact"))
    sig = signal_in(name, signals, exact, as_list(p102.get("evaluator_owned")))
    return sig.rstrip("*_") if sig is not None else None


def _context_finding(ctx: Context, read: GraderRead, why: str) -> Finding:
    """The error, or a note when the file or the config declares the read legitimate."""
    reason = _legitimate(ctx, read)
    if reason:
        return ctx.finding("EL205", read.path, read.pos,
                           f"the {read.grader} grader sees '{read.dotted}' (declared "
                           f"legitimate: {reason})", severity=Severity.NOTE,
                           related=read.related)
    return ctx.finding(
        "EL205", read.path, read.pos,
        f"the {read.grader} grader's template renders '{read.dotted}' ({why}), beyond the task "
        "input, the output and the reference: the judge sees generator-side context",
        related=read.related)


def _legitimate(ctx: Context, read: GraderRead) -> str | None:
    """Why the file or the config lets the grader see this read, by its name or as written."""
    return ctx.legitimate(read.owner, read.name) or ctx.legitimate(read.owner, read.dotted)
