"""Template rules on templates that live inside other files: JSONL/JSON prompt collections and
judge configs (inline templates, and the template files a config names).

The template rules themselves are the ones every template file gets (EL101-EL106 file checks,
EL601/EL602): this module only hands them the embedded templates' facts and adds where the
template was found. A template file a config names is owned by the config (it states the
role, model and dialect) unless evallint reads that file on its own with a known role: then
the file owns it and the config adds nothing, so nothing is reported twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from evallint.facts import FileFacts, Pos, PromptFacts
from evallint.facts.configs import ConfigPrompt, JudgeConfigFacts
from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.facts.prompt_collections import CollectionFacts
from evallint.findings import Finding, Related, Severity
from evallint.kinds import TEMPLATE_KINDS, FileKind
from evallint.registry import FILE_CHECKS, Context, Project, file_check, project_check
from evallint.roles import Role

TEMPLATE_CODES = ("EL101", "EL102", "EL103", "EL105", "EL106", "EL601", "EL602")
_ROLE_CODES = frozenset({"EL102", "EL103", "EL105", "EL106", "EL601", "EL602"})


def renders_output(prompts: Iterable[PromptFacts], ctx: Context) -> bool:
    """Does any of one judge's templates render the candidate output (an output alias)?"""
    names = {n.lower() for n in [
        "output", *(str(x) for x in ctx.params("EL105").get("output_names", [])),
        *ctx.config.aliases.get("output", [])]}
    return any(v.name.lower() in names for p in prompts for v in p.template.variables)


def template_findings(facts: PromptFacts, ctx: Context, anchor: Pos,
                      codes: Iterable[str] = TEMPLATE_CODES,
                      judges_output: bool = True) -> Iterator[Finding]:
    """What the template rules report on one embedded template.

    ``anchor`` replaces the file-level position (line 1) of EL601, which for an embedded
    template is where the template starts. ``judges_output`` False: the judge renders no
    candidate output at all (a retrieval-relevance or user-friction classifier), so what it
    renders is what it grades; EL102 is then a note, not an error, and EL103 ("neither the task
    input nor the output") has no ground: the graded item is one of its variables.
    """
    wanted = set(codes) & ctx.enabled
    kind = FileKind.PROMPT.value
    for check in FILE_CHECKS:
        if kind not in check.kinds or not set(check.codes) & wanted:
            continue
        for f in check.fn(facts, ctx):
            if f.code not in wanted or (f.code == "EL103" and not judges_output):
                continue
            if f.code == "EL102" and not judges_output and f.severity is not Severity.NOTE:
                f = dataclasses.replace(
                    f, severity=Severity.NOTE,
                    message=f"{f.message} (the judge renders no candidate output, so this is "
                    "probably the item it grades)")
            yield f
    if wanted & {"EL601", "EL602"}:
        from evallint.checks.templates import judge_contracts

        mini = Project(files={facts.path: facts}, config=ctx.config)
        for f in judge_contracts(mini, ctx):
            if f.code in wanted:
                yield dataclasses.replace(f, line=anchor.line, column=anchor.column) \
                    if f.code == "EL601" else f


@file_check(*TEMPLATE_CODES, kinds=[FileKind.PROMPT_COLLECTION])
def collection_templates(facts: CollectionFacts, ctx: Context) -> Iterator[Finding]:
    """The template rules on every prompt record of a JSONL/JSON collection."""
    for rec in facts.records:
        contract_done = False
        judged = renders_output(rec.prompts, ctx)
        for prompt in rec.prompts:
            anchor = _start(prompt, rec.pos)
            codes = [c for c in TEMPLATE_CODES
                     if not (contract_done and c in ("EL601", "EL602"))]
            found = list(template_findings(prompt, ctx, anchor, codes, judged))
            # One contract per record: its fields are one conversation.
            contract_done = contract_done or prompt.role.is_evaluator
            yield from found


def _start(prompt: PromptFacts, default: Pos) -> Pos:
    return Pos(prompt.body_start_line, 1) if prompt.body_start_line > 1 else default


@project_check(*TEMPLATE_CODES, "EL611")
def config_templates(project: Project, ctx: Context) -> Iterator[Finding]:
    """Judge configs: their inline templates and the template files they name."""
    reported: set[str] = set()  # template files already reported (several configs name one)
    for pf_config in sorted(project.of_kind(FileKind.PROMPTFOO), key=lambda f: f.path):
        yield from _named_prompts(pf_config, getattr(pf_config, "prompts", []), project, ctx,
                                  reported)
    for config in sorted(project.of_kind(FileKind.JUDGE_CONFIG), key=lambda f: f.path):
        if not isinstance(config, JudgeConfigFacts):
            continue
        for ref in config.missing:
            if "EL611" in ctx.enabled and ref.probable:
                yield ctx.finding(
                    "EL611", config.path, ref.pos,
                    f"{config.shape} config names the {ref.purpose} by an absolute path from "
                    f"another machine ('{ref.target}'); '{ref.probable}' in this project is "
                    "probably meant and was checked in its place: name it relative to the "
                    "config", severity=Severity.NOTE)
            elif "EL611" in ctx.enabled:
                yield ctx.finding(
                    "EL611", config.path, ref.pos,
                    f"{config.shape} config names the {ref.purpose} '{ref.target}', which does "
                    "not exist (looked in "
                    f"{', '.join(ref.tried) or 'the config folder'}): the judge prompt that "
                    "would run was never checked")
        yield from _named_prompts(config, config.prompts, project, ctx, reported)


def _named_prompts(config: FileFacts, prompts: list[ConfigPrompt], project: Project,
                   ctx: Context, reported: set[str]) -> Iterator[Finding]:
    """The template rules on the templates one config holds or names, once per template."""
    done: set[str] = set()  # judges whose output contract was checked
    judged = {judge: renders_output([e.facts for e in prompts if e.judge == judge], ctx)
              for judge in {e.judge for e in prompts}}
    for entry in prompts:
        prompt = entry.facts
        codes = _owned_codes(prompt, project)
        if not codes or (prompt.path != config.path and prompt.path in reported):
            continue
        if prompt.path != config.path:
            reported.add(prompt.path)
        if entry.judge in done:  # one contract per judge: its messages are one conversation
            codes = [c for c in codes if c not in ("EL601", "EL602")]
        if prompt.role.is_evaluator:
            done.add(entry.judge)
        rel = Related(config.path, entry.pos.line, entry.pos.column, entry.note)
        for f in template_findings(prompt, ctx, entry.anchor, codes, judged[entry.judge]):
            if f.path != config.path:
                f = dataclasses.replace(f, related=[*f.related, rel])
            yield f


def _owned_codes(prompt: PromptFacts, project: Project) -> list[str]:
    """The template codes the config reports on ``prompt``: all of them unless the file is
    read on its own; then only the role rules, and only if the file found no role itself."""
    own: FileFacts | None = project.files.get(prompt.path)
    if own is None or own is prompt or own.kind not in {k.value for k in TEMPLATE_KINDS}:
        return list(TEMPLATE_CODES)
    if own.role.role is not Role.UNKNOWN:
        return []
    return [c for c in TEMPLATE_CODES if c in _ROLE_CODES]


@pair_source
def collection_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """A collection holding a judge record and generator records: each judge with each
    generator of the same file (as prompt files of one folder), for the one models check."""
    for facts in project.of_kind(FileKind.PROMPT_COLLECTION):
        if not isinstance(facts, CollectionFacts):
            continue
        recs = [r for r in facts.records if r.prompts and r.model]
        gens = [r for r in recs if r.prompts[0].role.is_generator]
        for ev in (r for r in recs if r.prompts[0].role.is_evaluator):
            assert ev.model is not None
            at = ev.prompts[0].model_pos or ev.model_pos or ev.pos
            end = ModelEnd(f"judge record '{ev.name}'", facts.path, at, ev.model, ev.model)
            for g in gens:
                assert g.model is not None
                g_at = g.prompts[0].model_pos or g.model_pos or g.pos
                yield ModelPair(
                    end, ModelEnd(f"generator record '{g.name}'", facts.path, g_at, g.model,
                                  g.model),
                    key=(facts.path, at.line, at.column),
                    related=(Related(facts.path, g_at.line, g_at.column,
                                     f"generator model {g.model}"),),
                    evidence=tuple(ev.prompts[0].role.evidence),
                    hint="use a different, cheaper judge model")


@file_check("EL301", kinds=[FileKind.JUDGE_CONFIG])
def judge_config_models(facts: JudgeConfigFacts, ctx: Context) -> Iterator[Finding]:
    """A judge config whose judge model is one of the models it judges (arena-hard
    ``model_list``); the same model as the baseline it compares against is a note."""
    from evallint import models

    judges = [m for m in facts.models if m.use == "judge"]
    for judge in judges:
        for other in facts.models:
            if other.use == "judge" or not models.same_model(judge.model, other.model):
                continue
            rel = [Related(facts.path, other.pos.line, other.pos.column,
                           f"{'model under test' if other.use == 'tested' else 'baseline'} "
                           f"{other.model}")]
            if other.use == "tested":
                yield ctx.finding(
                    "EL301", facts.path, judge.pos,
                    f"the judge model {judge.model} is also a model under test "
                    f"(line {other.pos.line}): it grades its own answers", related=rel)
            else:
                yield ctx.finding(
                    "EL301", facts.path, judge.pos,
                    f"the judge model {judge.model} is the baseline's model (line "
                    f"{other.pos.line}): a same-model preference is likely in the comparisons "
                    "against the baseline (not the system under test)", related=rel,
                    severity=Severity.NOTE)
