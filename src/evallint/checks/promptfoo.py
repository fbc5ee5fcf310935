"""promptfoo: grader resolution (I4), thinking shown to the grader (I3), rubric context (I2).

promptfoo picks the grader of a model-graded assertion from the assertion's ``provider``, then
the test's ``options.provider``, then ``defaultTest.options.provider``, and otherwise from its
own built-in default — which depends on the promptfoo version and on which API keys are set.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, replace

from evallint import models
from evallint.facts import Pos
from evallint.facts.graderreads import VARS, GraderRead, grader_source
from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.facts.promptfoo import (
    PfAssertion,
    PfGrader,
    PfProvider,
    PfTest,
    PromptfooFacts,
    target_file,
)
from evallint.findings import Finding, Related, Severity
from evallint.kinds import FileKind
from evallint.pyflow.results import SYMBOLIC, where
from evallint.registry import Context, Project, file_check, project_check


@dataclass
class _Graded:
    """A model-graded assertion with the file it is in and the grader that applies to it."""

    path: str
    assertion: PfAssertion
    grader: PfGrader | None
    source: str  # assertion | test | defaultTest | default
    grader_path: str = ""  # the file where the grader is set


def graded_types(ctx: Context) -> set[str]:
    return {str(t) for t in ctx.params("EL303").get("graded_types") or ()}


def _fragments(config: PromptfooFacts, project: Project) -> list[tuple[str, PromptfooFacts]]:
    """Included files (``file://`` targets, globs too) that evallint parsed, with purpose."""
    out = []
    base = posixpath.dirname(config.path)
    for inc in config.includes:
        target = inc.target.split(":", 1)[0] if not inc.target.startswith("/") else inc.target
        pattern = posixpath.normpath(posixpath.join(base, target)) if base else \
            posixpath.normpath(target)
        for path, facts in project.files.items():
            if isinstance(facts, PromptfooFacts) and path != config.path and (
                    path == pattern or fnmatch.fnmatchcase(path, pattern)):
                out.append((inc.purpose, facts))
    return out


def graded_assertions(config: PromptfooFacts, project: Project, ctx: Context) -> list[_Graded]:
    """Every model-graded assertion of a config (its own and its included tests), resolved."""
    types = graded_types(ctx)
    default: tuple[str, PfTest] | None = (
        (config.path, config.default_test) if config.default_test else None)
    tests: list[tuple[str, PfTest]] = [(config.path, t) for t in config.tests]
    for purpose, frag in _fragments(config, project):
        if purpose == "defaultTest" and frag.tests and default is None:
            default = (frag.path, frag.tests[0])
        elif purpose in ("tests", "scenarios"):
            tests += [(frag.path, t) for t in frag.tests]
    out: list[_Graded] = []
    dgrader = default[1].grader if default else None
    dpath = default[0] if default else config.path
    if default is not None:
        out += [_resolve(default[0], a, None, dgrader, dpath) for a in default[1].assertions
                if a.type in types]
    for path, t in tests:
        out += [_resolve(path, a, t.grader, dgrader, dpath) for a in t.assertions
                if a.type in types]
    return out


def _resolve(path: str, a: PfAssertion, tg: PfGrader | None, dg: PfGrader | None,
             dpath: str) -> _Graded:
    if a.grader is not None:
        return _Graded(path, a, a.grader, "assertion", path)
    if tg is not None:
        return _Graded(path, a, tg, "test", path)
    if dg is not None:
        return _Graded(path, a, dg, "defaultTest", dpath)
    return _Graded(path, a, None, "default", path)


def _configs(project: Project) -> Iterator[PromptfooFacts]:
    for f in project.of_kind(FileKind.PROMPTFOO):
        if isinstance(f, PromptfooFacts) and f.is_config:
            yield f


def _prov_rel(config: PromptfooFacts, p: PfProvider) -> Related:
    return Related(p.path or config.path, p.pos.line, p.pos.column,
                   f"provider under test '{p.id}'")


@project_check("EL303")
def grader_is_model_under_test(project: Project, ctx: Context) -> Iterator[Finding]:
    """A grader equal to a provider under test, or promptfoo's default grader left in charge."""
    params = ctx.params("EL303")
    defaults = [str(m) for m in params.get("default_graders", [])]
    vendors = {str(v) for v in params.get("default_grader_vendors", [])}
    for config in _configs(project):
        testing = [p for p in tested_providers(config, project, ctx) if p.model]
        graded = graded_assertions(config, project, ctx)
        seen: set[tuple[str, int, int]] = set()
        unset: list[_Graded] = []
        for g in graded:
            if g.grader is None:
                unset.append(g)
                continue
            if not g.grader.model:
                continue
            same = [p for p in testing if p.model and models.same_model(g.grader.model, p.model)]
            where = g.grader_path
            key = (where, g.grader.pos.line, g.grader.pos.column)
            if not same or key in seen:
                continue
            seen.add(key)
            yield ctx.finding(
                "EL303", where, g.grader.pos,
                f"the grader '{g.grader.id}' ({g.source} provider) is the provider under test "
                f"'{same[0].id}': the model grades its own output",
                related=[_prov_rel(config, p) for p in same])
        if not unset:
            continue
        candidates = [p for p in testing if p.vendor in vendors or not p.vendor]
        if not candidates:
            continue
        hits = [p for p in candidates if p.model
                and any(models.same_model(p.model, d) or
                        models.normalize(p.model).startswith(models.normalize(d) + "-2")
                        for d in defaults)]
        first = unset[0]
        n = len(unset)
        sole = len(config.providers) == 1 and bool(hits)
        lead = (f"the sole provider under test '{hits[0].id}' is itself one of promptfoo's "
                "default graders, so it very likely grades its own output; " if sole else
                f"provider under test '{hits[0].id}' is one of promptfoo's default graders; "
                if hits else "")
        message = (
            f"{n} model-graded assertion{'s' if n != 1 else ''} ({first.assertion.type}"
            f"{', …' if n > 1 else ''}) set{'s' if n == 1 else ''} no grader: {lead}"
            "promptfoo then uses its built-in default grader, chosen from the API keys present "
            "(an OpenAI GPT-4-class model such as gpt-4.1 or gpt-4o in recent versions, or a "
            "Claude Sonnet model when only an Anthropic key is set) — which can be the model "
            "under test; set defaultTest.options.provider to a different, cheaper model")
        yield ctx.finding(
            "EL303", first.path, first.assertion.pos, message,
            default=None if hits else Severity.WARNING,
            related=[_prov_rel(config, p) for p in candidates[:5]]
            + [Related(g.path, g.assertion.pos.line, g.assertion.pos.column,
                       "another assertion without a grader") for g in unset[1:6]])


@project_check("EL204")
def thinking_shown_to_grader(project: Project, ctx: Context) -> Iterator[Finding]:
    """A reasoning provider under test whose thinking is not hidden from model graders."""
    patterns = [str(p) for p in ctx.params("EL204").get("reasoning_models", [])]
    for config in _configs(project):
        graded = graded_assertions(config, project, ctx)
        if not graded:
            continue
        for p in config.providers:
            why = p.reasoning
            if why is None and p.model and models.is_reasoning_model(p.model, patterns):
                why = f"reasoning model '{p.model}'"
            if why is None or p.show_thinking is False:
                continue
            first = graded[0]
            where = [] if p.path is None else [Related(
                config.path, (config.providers_pos or Pos(1, 1)).line,
                (config.providers_pos or Pos(1, 1)).column,
                f"the promptfoo config whose providers come from {p.path}")]
            yield ctx.finding(
                "EL204", p.path or config.path, p.pos,
                f"provider under test '{p.id}' reasons ({why}) and does not set "
                "'showThinking: false': its reasoning can be part of the output that "
                f"{len(graded)} model-graded assertion(s) show to the grader",
                related=[Related(first.path, first.assertion.pos.line,
                                 first.assertion.pos.column, "a model-graded assertion"),
                         *where])


@grader_source
def rubric_reads(project: Project, ctx: Context) -> Iterator[GraderRead]:
    """The variables the rubric of each model-graded assertion renders (nunjucks, with the
    test's ``vars``): any of them is one of the test's own variables unless it carries a
    generator-context signal."""
    types = graded_types(ctx)
    for facts in project.of_kind(FileKind.PROMPTFOO):
        if not isinstance(facts, PromptfooFacts):
            continue
        tests = list(facts.tests) + ([facts.default_test] if facts.default_test else [])
        for t in tests:
            for a in t.assertions:
                if a.type not in types:
                    continue
                for v in a.rubric_vars:
                    related = () if v.file is None else (Related(
                        facts.path, a.pos.line, a.pos.column,
                        f"the {a.type} assertion that reads this rubric"),)
                    yield GraderRead(facts, v.file or facts.path, v.pos, f"{a.type} assertion",
                                     v.name, v.dotted, tuple(v.path), VARS, related=related)


@file_check("EL611", kinds=[FileKind.PROMPTFOO])
def missing_file_refs(facts: PromptfooFacts, ctx: Context) -> Iterator[Finding]:
    """A ``file://`` reference to a file that is not there: what it holds was never checked."""
    for m in facts.missing:
        if m.probable:
            yield ctx.finding(
                "EL611", facts.path, m.pos,
                f"promptfoo {m.purpose} reference 'file://{m.target}' is an absolute path from "
                f"another machine; '{m.probable}' in this project is probably meant and was "
                "read in its place: name it relative to the config", severity=Severity.NOTE)
            continue
        if m.ignored:
            yield ctx.finding(
                "EL611", facts.path, m.pos,
                f"promptfoo {m.purpose} reference 'file://{m.target}' names a file that is not "
                f"there and that {m.ignored} ignores (a file the project generates): what it "
                "will hold was not checked; check a generated copy, or keep one in the tree",
                severity=Severity.NOTE)
            continue
        yield ctx.finding(
            "EL611", facts.path, m.pos,
            f"promptfoo {m.purpose} reference 'file://{m.target}' names a file that does not "
            f"exist next to {posixpath.basename(facts.path)}: what it holds (providers, "
            "prompts, graders, rubrics) was never checked")


# ---------------------------------------------------------------------------- code graders

# assertion types whose ``value: file://...`` is code evallint analyses
_CODE_GRADERS = {"python": "python", "javascript": "javascript"}


@pair_source
def code_grader_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """A ``type: python`` or ``type: javascript`` assertion whose ``value: file://grader.py``
    (``grader.js``, ``grader.ts``) calls an LLM: that call grades the providers under test, so
    its model is compared with theirs (the grader in one file, the models under test in the
    config beside it, or in the provider's own code for a ``file://provider.js``)."""
    configs = [f for f in project.of_kind(FileKind.PROMPTFOO)
               if isinstance(f, PromptfooFacts) and f.is_config and f.providers]
    if not configs:
        return
    from evallint.pyflow.project import result_for

    result = result_for(project, ctx)
    for facts in configs:
        tests = [t for t in (facts.default_test, *facts.tests) if t is not None]
        providers = tested_providers(facts, project, ctx)
        for a in (a for t in tests for a in t.assertions):
            if a.type not in _CODE_GRADERS or not a.rubric_file:
                continue
            target = _beside(facts.path, a.rubric_file)
            # the model call itself, not the helpers that wrap it (``llm_eval()`` in get_assert)
            for call in (c for c in result.calls if c.path == target and c.model
                         and not c.own_role):
                assert call.model is not None
                end = ModelEnd(f"the promptfoo {_CODE_GRADERS[a.type]} grader call at "
                               f"{where(call.path, call.pos)}",
                               call.path, call.pos, call.model, f"`{call.model}`")
                for p in providers:
                    if not p.model:
                        continue
                    at = Related(p.path or facts.path, p.pos.line, p.pos.column,
                                 "the provider under test")
                    runs = Related(facts.path, a.pos.line, a.pos.column,
                                   "the assertion that runs this grader")
                    yield ModelPair(end, ModelEnd(f"provider under test '{p.id}'",
                                                  p.path or facts.path, p.pos, p.model, p.model),
                                    key=(call.path, call.pos.line, call.pos.column),
                                    related=(at, runs))


def _beside(config_path: str, ref: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(config_path), target_file(ref)))


def tested_providers(config: PromptfooFacts, project: Project, ctx: Context
                     ) -> list[PfProvider]:
    """The providers under test, a provider written as code (``id: file://provider.js``,
    ``file://provider.py``) with the model its LLM calls run on when they all run one."""
    out: list[PfProvider] = []
    result = None
    for p in config.providers:
        if p.model or not p.id or not p.id.strip().startswith("file://"):
            out.append(p)
            continue
        if result is None:
            from evallint.pyflow.project import result_for

            result = result_for(project, ctx)
        target = _beside(p.path or config.path, p.id.strip()[len("file://"):])
        models_run = {c.model for c in result.calls if c.path == target and c.model
                      and not c.model.startswith(SYMBOLIC)}
        out.append(replace(p, model=models_run.pop()) if len(models_run) == 1 else p)
    return out
