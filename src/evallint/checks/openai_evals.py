"""openai/evals model-graded specs: the grader template sees only input, completion, criteria."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.checks.promptfoo import context_finding, grader_signal
from evallint.checks.templates import _as_list, _name_listed
from evallint.findings import Finding, Severity
from evallint.frontends.openai_evals_front import OpenAIEvalsFacts
from evallint.kinds import FileKind
from evallint.registry import Context, file_check


@file_check("EL205", kinds=[FileKind.OPENAI_EVALS])
def grader_template_fields(facts: OpenAIEvalsFacts, ctx: Context) -> Iterator[Finding]:
    """A ``{field}`` outside the allow-list and the spec's own ``input_outputs`` names.

    As in evaluator templates (EL102/EL103), only a generator-context signal is an error; a
    harness parameter (``{n}``, the number of completions shown) is fine, and any other name
    (``{language}``, a sample field) is a note to map, declare or remove.
    """
    params = ctx.params("EL205")
    allowed = {str(a) for a in params.get("allowed", [])}
    allowed |= set(ctx.config.allowed_evaluator_inputs)
    harness = _as_list(params.get("harness"))
    for spec in facts.specs:
        ok = allowed | set(spec.mapped)
        seen: set[str] = set()
        for f in spec.fields:
            if f.name in ok or f.name in seen or _name_listed(f.name, harness):
                continue
            seen.add(f.name)
            where = f"model-graded spec '{spec.name}'"
            sig = grader_signal(f.name, ctx, with_template_signals=True)
            if sig is not None:
                yield context_finding(ctx, facts, f.field, f.name,
                                      f"generator-context signal '{sig}'", f.pos, where)
                continue
            reason = ctx.legitimate(facts, f.name) or ctx.legitimate(facts, f.field)
            suffix = (f" (declared legitimate: {reason})" if reason else
                      "; map it in input_outputs, declare it legitimate, or remove it")
            yield ctx.finding(
                "EL205", facts.path, f.pos,
                f"the {where} grader's template renders '{f.field}', which is neither the "
                f"input, the completion nor the reference{suffix}",
                severity=Severity.NOTE)
