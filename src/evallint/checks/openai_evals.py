"""openai/evals model-graded specs: the grader template sees only input, completion, criteria."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.checks.promptfoo import context_finding
from evallint.findings import Finding
from evallint.frontends.openai_evals_front import OpenAIEvalsFacts
from evallint.kinds import FileKind
from evallint.registry import Context, file_check


@file_check("EL205", kinds=[FileKind.OPENAI_EVALS])
def grader_template_fields(facts: OpenAIEvalsFacts, ctx: Context) -> Iterator[Finding]:
    """A ``{field}`` outside the allow-list and the spec's own ``input_outputs`` names."""
    allowed = {str(a) for a in ctx.params("EL205").get("allowed", [])}
    allowed |= set(ctx.config.allowed_evaluator_inputs)
    for spec in facts.specs:
        ok = allowed | set(spec.mapped)
        for f in spec.fields:
            if f.name in ok:
                continue
            yield context_finding(ctx, facts, f.field, f.name, "not an allowed or mapped input",
                                  f.pos, f"model-graded spec '{spec.name}'")
