"""openai/evals model-graded specs: the grader template sees only input, completion, criteria
(EL205, decided in ``checks/graders.py``)."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts.graderreads import FIELDS, GraderRead, grader_source
from evallint.facts.openai_evals import OpenAIEvalsFacts
from evallint.kinds import FileKind
from evallint.registry import Context, Project


@grader_source
def spec_fields(project: Project, ctx: Context) -> Iterator[GraderRead]:
    """Each ``{field}`` of a spec's grader prompt, once per name, with the names the spec maps
    in its ``input_outputs``: as in evaluator templates (EL102/EL103), the check reports a
    generator-context signal as an error and any other name outside the allow-list as a
    note."""
    for facts in project.of_kind(FileKind.OPENAI_EVALS):
        if not isinstance(facts, OpenAIEvalsFacts):
            continue
        for spec in facts.specs:
            seen: set[str] = set()
            mapped = frozenset(spec.mapped)
            for f in spec.fields:
                if f.name not in seen:
                    seen.add(f.name)
                    yield GraderRead(facts, facts.path, f.pos, f"model-graded spec '{spec.name}'",
                                     f.name, f.field, (f.name,), FIELDS, mapped)
