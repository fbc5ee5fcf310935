"""Batched judge mode: grade existing outputs, ``batch_size`` items per request.

The sample is stratified and seeded (same file, same seed → same cases); every ``item_id`` sent
must come back with a valid verdict, and the missing ones are asked again on their own; an item
still missing after ``max_reasks`` is recorded as a parse error, never given a default score.
Each item is rendered through the judge template with only its ``input`` and ``output``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evallint.executor.cases import Case, iter_cases
from evallint.executor.extract import reply_text
from evallint.executor.loop import Runtime, now_iso
from evallint.executor.prices import CostBook
from evallint.executor.results import RESULT_VERSION
from evallint.executor.verdict import REQUIRED, Verdict, VerdictError, find_json, parse_verdict

CONTRACT = (
    "Grade each item independently. Reply with only a JSON array holding one object per item, "
    "with the keys item_id, " + ", ".join(REQUIRED) + " and ambiguous (true when the item "
    "cannot be graded with confidence)."
)


def stratum(case: Case, field: str) -> str:
    if field == "tags":
        return case.tags[0] if case.tags else "(untagged)"
    value = case.extra.get(field, case.expected if field == "expected" else None)
    return str(value) if value is not None else "(none)"


def sample_ids(path: Path, size: int | None, seed: int, field: str) -> set[str] | None:
    """A stratified, seeded sample of case ids (None means every case).

    Each stratum gets its proportional share (largest remainders round up), drawn with one
    ``random.Random(seed)`` over the strata in sorted order, so the sample is reproducible."""
    groups: dict[str, list[str]] = {}
    for _, case in iter_cases(path, need_output=True):
        groups.setdefault(stratum(case, field), []).append(case.id)
    total = sum(len(v) for v in groups.values())
    if size is None or size >= total:
        return None
    quotas = {k: size * len(v) / total for k, v in groups.items()}
    counts = {k: int(q) for k, q in quotas.items()}
    left = size - sum(counts.values())
    for k in sorted(quotas, key=lambda k: (-(quotas[k] - counts[k]), k))[:left]:
        counts[k] += 1
    rng = random.Random(seed)
    chosen: set[str] = set()
    for k in sorted(groups):
        chosen.update(rng.sample(groups[k], counts[k]))
    return chosen


def batches(cases: Iterable[Case], size: int) -> Iterable[list[Case]]:
    batch: list[Case] = []
    for case in cases:
        batch.append(case)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


async def judge_batch(rt: Runtime, batch: list[Case], batch_no: int) -> list[dict[str, Any]]:
    """Grade one batch, re-asking for missing or invalid items; return one record per item."""
    judge = rt.plan.evaluator
    spec = rt.plan.spec
    assert spec.judge is not None
    pending = {c.id: c for c in batch}
    verdicts: dict[str, Verdict] = {}
    problems: dict[str, str] = {}
    costs = {c.id: CostBook() for c in batch}
    reasks = 0
    system = ""
    for round_no in range(spec.judge.max_reasks + 1):
        if not pending:
            break
        reasks = round_no
        items = []
        for case in pending.values():
            rendered = rt.plan.render_evaluator(case.input, _text(case.output))
            system = rendered.system
            items.append({"item_id": case.id, "content": rendered.user})
        user = "Items:\n" + json.dumps(items, ensure_ascii=False, indent=1) + "\n\n" + CONTRACT
        res = await rt.client.create_message(
            model=judge.model, system=system, messages=[{"role": "user", "content": user}],
            max_tokens=judge.max_tokens, temperature=judge.temperature)
        share = (res.cost_usd / len(pending)) if res.cost_usd is not None else None
        usage_share = {k: v // len(pending) for k, v in res.usage.items()}
        for case_id in pending:
            costs[case_id].add("judge", judge.model, usage_share, share)
        text, _ = reply_text(res.content)
        try:
            data = find_json(text, "[")
        except VerdictError as exc:
            for case_id in pending:
                problems[case_id] = str(exc)
            continue
        if not isinstance(data, list):
            for case_id in pending:
                problems[case_id] = "reply is not a JSON array"
            continue
        for obj in data:
            item_id = str(obj.get("item_id")) if isinstance(obj, dict) else None
            if item_id is None or item_id not in pending:
                continue
            try:
                verdicts[item_id] = parse_verdict(obj, spec.rubric)
            except VerdictError as exc:
                problems[item_id] = str(exc)
                continue
            del pending[item_id]
        for case_id in pending:
            problems.setdefault(case_id, "item missing from the reply")
    return [_record(rt, case, verdicts.get(case.id), problems.get(case.id), costs[case.id],
                    batch_no, reasks) for case in batch]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _record(rt: Runtime, case: Case, verdict: Verdict | None, problem: str | None,
            costs: CostBook, batch_no: int, reasks: int) -> dict[str, Any]:
    threshold = rt.plan.spec.pass_threshold
    score = verdict.score if verdict else None
    passed = verdict is not None and verdict.score >= threshold
    return {
        "version": RESULT_VERSION,
        "run_id": rt.run_id,
        "case_id": case.id,
        "input": case.input,
        "output": case.output,
        "score": score,
        "pass": passed,
        "feedback": verdict.feedback if verdict else None,
        "attempts": 1,
        "attempt_history": [],
        "generator_model": case.extra.get("generator_model"),
        "evaluator_model": rt.plan.evaluator.model,
        "rubric_scores": verdict.rubric_scores if verdict else {},
        "failure_category": (None if passed else verdict.failure_category if verdict
                             else "evaluator_parse_error"),
        "suggested_fix": verdict.suggested_fix if verdict else None,
        "contamination_warning": None,
        "cost_breakdown": costs.as_dict(),
        "total_cost_usd": costs.total,
        "evaluated_at": now_iso(),
        "status": "judged" if verdict else "parse_error",
        "ambiguous": verdict.ambiguous if verdict else False,
        "llm_pass": verdict.llm_pass if verdict else None,
        "parse_error": problem if verdict is None else False,
        "batch": batch_no,
        "reasks": reasks,
        "expected": case.expected,
        "tags": list(case.tags),
    }
