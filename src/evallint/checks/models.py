"""EL301/EL302 for every kind: the evaluator must not run on the generator's model (I4), and
by policy runs on a cheaper tier. The pairs come from each kind's ``@pair_source``."""

from __future__ import annotations

from collections.abc import Iterator

from evallint import models
from evallint.facts.modelpairs import SOURCES, ModelPair
from evallint.findings import Finding, Severity
from evallint.registry import Context, Project, project_check


def _same(p: ModelPair) -> bool:
    e, g = p.evaluator.model, p.generator.model
    return bool(p.shared) or bool(e and g and models.same_model(e, g))


@project_check("EL301", "EL302")
def evaluator_models(project: Project, ctx: Context) -> Iterator[Finding]:
    """One finding per evaluator: EL301 when a generator of its loop runs on its model (or on
    the same object), else EL302 when one runs on a tier that is not dearer."""
    families = ctx.params("EL302").get("families")
    fams = families if isinstance(families, list) else None
    groups: dict[object, list[ModelPair]] = {}
    for source in SOURCES:
        for pair in source(project, ctx):
            groups.setdefault((source.__qualname__, pair.key), []).append(pair)
    for pairs in groups.values():
        # a pair of named roles first: a weak one only when no other is the same model
        same = next((p for p in sorted(pairs, key=lambda p: bool(p.weak)) if _same(p)), None)
        if same is not None:
            yield _el301(same, ctx)
            continue
        dear = next((p for p in pairs if not p.weak and p.evaluator.model and p.generator.model
                     and models.is_cheaper(p.evaluator.model, p.generator.model, fams)
                     is False), None)
        if dear is not None:
            e, g = dear.evaluator, dear.generator
            yield ctx.finding(
                "EL302", e.path, e.pos,
                f"{e.who} runs on {e.shown}, not a cheaper tier than {g.who} ({g.shown})",
                related=dear.related, evidence=dear.evidence)


def _el301(p: ModelPair, ctx: Context) -> Finding:
    e, g = p.evaluator, p.generator
    if p.shared:
        message = f"{e.who} and {g.who} use {p.shared}" + (
            f" ({e.shown})" if e.model else "")
    elif (g.model or "").startswith(models.MODEL_SET) or (e.model or "").startswith(
            models.MODEL_SET):  # an arena: one contestant is the judge's own model
        message = (f"{e.who} runs on {e.shown}, and {g.who} runs on each of several models, "
                   f"that one among them ({g.shown}): the judge grades its own model's work")
    else:
        message = f"{e.who} runs on {e.shown}, the same model as {g.who} ({g.shown})"
    if p.hint:
        message += f"; {p.hint}"
    why = p.weak or p.names_only or p.by_place or p.defaulted
    if why:
        message += f" ({why})"
    return ctx.finding("EL301", e.path, e.pos, message, related=p.related, evidence=p.evidence,
                       default=Severity.WARNING if why else None)
