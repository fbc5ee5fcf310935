"""Loop-spec policy: thresholds, bounds, models, separate prompts, sampling, cost, immutability.

Every rule reads the positioned spec through :class:`LoopSpecFacts`, so the three dialects
(evallint, aiwg ``eval_config``, ``metric.judge``) share one implementation.
"""

from __future__ import annotations

import fnmatch
import math
import os
from collections.abc import Iterator
from typing import Any

from evallint import reads
from evallint.classify import project_root_of
from evallint.confine import inside_any
from evallint.facts.loopspec import JUDGE_BLOCKS, LoopSpecFacts, Ref, looks_like_path
from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.findings import Finding, Related
from evallint.kinds import FileKind
from evallint.registry import Context, Project, file_check, project_check

THRESHOLD_KEYS = (("pass_threshold",), ("eval_config", "pass_threshold"),
                  ("eval_config", "threshold"), ("metric", "judge", "pass_threshold"),
                  ("metric", "judge", "threshold"), ("metric", "threshold"),
                  ("metric", "pass_threshold"), ("judge", "pass_threshold"),
                  ("judge", "threshold"), ("evaluator", "pass_threshold"))
ATTEMPT_KEYS = (("max_attempts",), ("max_iterations",), ("eval_config", "max_attempts"),
                ("eval_config", "max_iterations"), ("loop", "max_attempts"))
COST_KEYS = ("max_cost_usd", "cost_cap", "cost_cap_usd", "budget_usd", "max_budget_usd",
             "max_cost", "cost_limit_usd")
COST_BLOCKS = ((), ("eval_config",), ("judge",), ("metric",), ("metric", "judge"),
               ("budget",), ("limits",))


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _loops(facts: LoopSpecFacts) -> bool:
    return isinstance(facts, LoopSpecFacts) and facts.is_loop


@file_check("EL603", "EL604", "EL605", "EL606", "EL607", "EL608", "EL609",
            kinds=[FileKind.LOOP_SPEC])
def spec_policy(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    if not _loops(facts):
        return
    yield from _thresholds(facts, ctx)
    yield from _attempts(facts, ctx)
    yield from _own_prompt(facts, ctx)
    yield from _sampling(facts, ctx)
    yield from _cost_cap(facts, ctx)
    yield from _immutable(facts, ctx)


def _thresholds(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    for path in THRESHOLD_KEYS:
        ref = facts.get(path)
        if ref is None:
            continue
        n = _num(ref.value)
        key = ".".join(map(str, path))
        if n is None:
            yield ctx.finding("EL603", facts.path, ref.pos,
                              f"{key} is {ref.value!r}, not a number in [0, 1]")
        elif math.isnan(n) or not 0 <= n <= 1:
            yield ctx.finding(
                "EL603", facts.path, ref.pos,
                f"{key} is {ref.value}, outside [0, 1]: scores are on a 0–1 scale, so the loop "
                "can never pass (or always passes)")


def _attempts(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    hi = int(ctx.params("EL604").get("max", 10))
    for path in ATTEMPT_KEYS:
        ref = facts.get(path)
        if ref is None:
            continue
        key = ".".join(map(str, path))
        n = _num(ref.value)
        if ref.value is None or n is None or math.isinf(n) or n <= 0:
            yield ctx.finding("EL604", facts.path, ref.pos,
                              f"{key} is {ref.value!r}: the refinement loop is unbounded")
        elif n != int(n) or not 1 <= n <= hi:
            yield ctx.finding("EL604", facts.path, ref.pos,
                              f"{key} is {ref.value}, outside 1–{hi}: each attempt is another "
                              "generate and evaluate round; past a few, scores stop improving")


def _own_prompt(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    gen = facts.role_ref("generator", "prompt")
    ev = facts.role_ref("evaluator", "prompt")
    if gen is None or ev is None or not (looks_like_path(gen.value) and
                                         looks_like_path(ev.value)):
        return
    if facts.resolve(gen.value) == facts.resolve(ev.value):
        yield ctx.finding(
            "EL605", facts.path, ev.pos,
            f"the evaluator prompt '{ev.value}' is the generator's prompt file: the judge's "
            "instructions and the generator's live in one file",
            related=[Related(facts.path, gen.pos.line, gen.pos.column, "the generator prompt")])


def _count(value: Any) -> float | None:
    n = _num(value)
    if n is not None:
        return n
    if isinstance(value, dict):
        for k in ("count", "n", "size", "sample_size"):
            if k in value:
                return _num(value[k])
    return None


def _sampling(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    for block in JUDGE_BLOCKS:
        judge = facts.get(block)
        if judge is None or not isinstance(judge.value, dict):
            continue
        size = facts.first(((*block, "sample_size"), (*block, "sample")))
        strat = facts.get((*block, "stratification"))
        if strat is not None and size is not None and _num(size.value) is not None:
            items = (list(strat.value.values()) if isinstance(strat.value, dict) else
                     strat.value if isinstance(strat.value, list) else [])
            counts = [_count(v) for v in items]
            if items and all(c is not None for c in counts):
                total = sum(c for c in counts if c is not None)
                if total != _num(size.value):
                    yield ctx.finding(
                        "EL606", facts.path, strat.pos,
                        f"stratification counts sum to {total:g}, but sample_size is "
                        f"{size.value}: the sample is not the stratified sample it claims",
                        related=[Related(facts.path, size.pos.line, size.pos.column,
                                         "sample_size")])
        single = facts.get((*block, "singleton_sample"))
        if single is not None and single.value not in (None, False, 0, "none", "off"):
            rubric = facts.get((*block, "singleton_rubric"))
            if rubric is None or not rubric.value:
                yield ctx.finding(
                    "EL607", facts.path, single.pos,
                    "singletons are sampled but there is no singleton_rubric: one-item "
                    "strata are graded with the batch rubric, which compares items")


def _cost_cap(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    for block in COST_BLOCKS:
        for key in COST_KEYS:
            ref = facts.get((*block, key))
            if ref is not None and ref.value is not None:
                return
    data = facts.doc.data
    first = next(iter(data)) if isinstance(data, dict) and data else None
    pos = facts.doc.pos(str(first)) if first is not None else None
    yield ctx.finding(
        "EL608", facts.path, pos,
        "no cost cap (max_cost_usd): a loop that retries and re-asks can spend without "
        "limit; set max_cost_usd")


def _scope(facts: LoopSpecFacts) -> tuple[Ref | None, Ref | None]:
    imm = facts.first((("immutable",), ("scope", "immutable"), ("harness", "immutable")))
    mut = facts.first((("mutable",), ("scope", "mutable"), ("harness", "mutable")))
    return imm, mut


def _listed(facts: LoopSpecFacts, target: str, ref: Ref | None) -> bool:
    if ref is None or not isinstance(ref.value, (list, str)):
        return False
    entries = [ref.value] if isinstance(ref.value, str) else ref.value
    for e in entries:
        if not isinstance(e, str):
            continue
        pat = facts.resolve(e)
        if target == pat or fnmatch.fnmatchcase(target, pat) or target.startswith(
                pat.rstrip("/*") + "/"):
            return True
    return False


def _immutable(facts: LoopSpecFacts, ctx: Context) -> Iterator[Finding]:
    imm, mut = _scope(facts)
    if imm is None and mut is None:
        return
    protect = [r for r in facts.rubric_refs()]
    ev = facts.role_ref("evaluator", "prompt")
    if ev is not None and looks_like_path(ev.value):
        protect.insert(0, ev)
    for block in JUDGE_BLOCKS:
        jp = facts.get((*block, "prompt"))
        if jp is not None and looks_like_path(jp.value) and jp.path != (ev.path if ev else ()):
            protect.append(jp)
    for r in protect:
        target = facts.resolve(r.value)
        if _listed(facts, target, mut):
            yield ctx.finding("EL609", facts.path, r.pos,
                              f"'{r.value}' is in the mutable scope: the optimiser may rewrite "
                              "the measurement harness it is scored by")
        elif imm is not None and not _listed(facts, target, imm):
            yield ctx.finding("EL609", facts.path, r.pos,
                              f"'{r.value}' is not listed as immutable, though the spec has an "
                              "immutable scope: the judge's prompt and rubric must not move")


@project_check("EL611")
def spec_references(project: Project, ctx: Context) -> Iterator[Finding]:
    """Files a spec names must exist."""
    for facts in project.of_kind(FileKind.LOOP_SPEC):
        if not isinstance(facts, LoopSpecFacts) or not facts.is_loop:
            continue
        refs = facts.prompt_refs() + facts.rubric_refs()
        cases = facts.first((("cases",), ("eval_config", "cases"), ("dataset",)))
        if cases is not None and looks_like_path(cases.value):
            refs.append(cases)
        if ctx.is_enabled("EL611"):
            for r in refs:
                target = facts.resolve(r.value)
                if not inside_any(target, ctx.config.roots):
                    yield ctx.finding("EL611", facts.path, r.pos,
                                      f"'{r.value}' lies outside the project: not read; a spec "
                                      "names the files of its own project")
                elif not reads.exists(target, ctx.config.roots):
                    yield ctx.finding("EL611", facts.path, r.pos,
                                      f"'{r.value}' does not exist (looked for {target})")


@pair_source
def spec_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """A loop spec's evaluator and generator models."""
    for facts in project.of_kind(FileKind.LOOP_SPEC):
        if not isinstance(facts, LoopSpecFacts) or not facts.is_loop:
            continue
        gen = facts.role_ref("generator", "model")
        ev = facts.role_ref("evaluator", "model")
        if gen is None or ev is None:
            continue
        yield ModelPair(
            ModelEnd("the evaluator", facts.path, ev.pos, ev.value, ev.value),
            ModelEnd("the generator", facts.path, gen.pos, gen.value, gen.value),
            key=facts.path,
            related=(Related(facts.path, gen.pos.line, gen.pos.column, "the generator's model"),))


def _calibration_threshold(facts: LoopSpecFacts) -> float:
    """The spec's pass threshold: numeric labels at or above it count as good."""
    ref = facts.get(("pass_threshold",))
    n = _num(ref.value) if ref is not None else None
    return n if n is not None and 0 < n <= 1 else 0.5


@project_check("EL612")
def calibration_set(project: Project, ctx: Context) -> Iterator[Finding]:
    """A spec that asks for calibration needs a calibration file with enough of each label."""
    specs = [f for f in project.of_kind(FileKind.LOOP_SPEC)
             if isinstance(f, LoopSpecFacts) and f.is_loop]
    if not specs:
        return  # and the calibration reader is never imported
    from evallint.calibset import CalibrationSetError, parse_calibration_set
    need = int(ctx.params("EL612").get("min_per_class", 10))
    for facts in specs:
        block = facts.get(("calibration",))
        if block is None or block.value is None or block.value is False:
            continue
        if not isinstance(block.value, dict):
            yield ctx.finding("EL612", facts.path, block.pos,
                              "calibration is not a mapping: name the calibration file as "
                              "calibration.cases, with the thresholds beside it")
            continue
        cases = facts.get(("calibration", "cases"))
        if cases is None or not isinstance(cases.value, str) or not cases.value.strip():
            yield ctx.finding("EL612", facts.path, block.pos,
                              "the spec asks for calibration but names no calibration file "
                              "(calibration.cases): the judge cannot be proven on anything")
            continue
        target = facts.resolve(cases.value)
        home = project_root_of(facts.path)
        if not inside_any(target, (os.path.realpath(home),) if home else ctx.config.roots):
            continue  # never read outside the project (docs/security.md)
        try:
            data = reads.read_file(target, ctx.config.max_file_size, ctx.config.roots)
        except FileNotFoundError:
            yield ctx.finding("EL612", facts.path, cases.pos,
                              f"calibration file '{cases.value}' does not exist (looked for "
                              f"{target})")
            continue
        except OSError:
            continue  # unreadable for another reason: not this rule's business
        if len(data) > ctx.config.max_file_size:
            continue  # too large to read here; `evallint calibrate` reads it in full
        try:
            found = parse_calibration_set(data.decode("utf-8", "replace"), target)
        except CalibrationSetError as exc:
            where = f"{target}:{exc.line}" if exc.line else target
            yield ctx.finding("EL612", facts.path, cases.pos,
                              f"calibration file '{cases.value}' cannot be used ({where}: "
                              f"{exc.message})")
            continue
        good, bad = found.counts(_calibration_threshold(facts))
        if good < need or bad < need:
            yield ctx.finding(
                "EL612", facts.path, cases.pos,
                f"calibration file '{cases.value}' has {good} good and {bad} bad labelled "
                f"case(s); at least {need} of each are needed for AUC and kappa to mean "
                "anything (pairs are not counted)")
