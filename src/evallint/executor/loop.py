"""The refine loop for one case: generate → extract → rule checks → evaluate → feedback.

Isolation is structural here: the evaluator prompt is rendered from ``input`` and the
extracted answer only (no thinking, no system prompt, no history); the generator hears back the
evaluator's ``feedback`` string and its own previous answer, never the rubric or the evaluator
prompt. The loop is bounded, stops on pass, plateau or oscillation, and keeps the best attempt.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

from evallint.executor.cases import Case
from evallint.executor.client import CallResult
from evallint.executor.extract import extract_answer, reply_text
from evallint.executor.plan import Plan
from evallint.executor.prices import CostBook
from evallint.executor.results import RESULT_VERSION
from evallint.executor.rulechecks import run_checks
from evallint.executor.verdict import REQUIRED, Verdict, VerdictError, passes, verdict_from_text

REFINE = (
    "An independent reviewer read your previous answer and gave this feedback:\n"
    "<feedback>\n{feedback}\n</feedback>\n"
    "Write an improved answer to the original request that addresses the feedback."
)
FIX_JSON = (
    "Your reply could not be used: {error}. Reply with only the JSON object, with the keys "
    + ", ".join(REQUIRED) + "."
)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Transport(Protocol):
    """Where the loop's calls go: the Messages API one by one (MessagesClient) or in waves of
    message batches (BatchTransport). The loop cannot tell them apart."""

    @property
    def accepts_temperature(self) -> bool: ...

    async def create_message(self, *, model: str, system: str, messages: list[dict[str, Any]],
                             max_tokens: int, temperature: float | None,
                             tag: str = "") -> CallResult: ...


@dataclass
class Runtime:
    """What every case shares: the plan, the API client, the run id, contamination sentinels."""

    plan: Plan
    client: Transport
    run_id: str
    sentinels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def build(cls, plan: Plan, client: Transport, run_id: str) -> Runtime:
        sentinels: list[tuple[str, str]] = []
        if plan.generator is not None:
            sentinels += [(ln, "the generator's system prompt")
                          for ln in _long_lines(plan.generator.prompt.system)]
        sentinels += [(ln, "the evaluator prompt") for ln in
                      _long_lines(plan.evaluator.prompt.system)]
        return cls(plan, client, run_id, tuple(sentinels))

    def contamination(self, output: str) -> str | None:
        """A warning when the answer quotes a prompt the evaluator must not see through it."""
        for line, what in self.sentinels:
            if line in output:
                return f"the output quotes {what} ({line[:60]!r}), so the evaluator saw it"
        return None


def _long_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 40
            and "{{" not in ln and "{%" not in ln]


async def evaluate(rt: Runtime, case_input: Any, answer: str, costs: CostBook,
                   attempt: int = 1) -> tuple[Verdict | None, str | None]:
    """Ask the judge; an invalid reply is retried once, then returned as a parse error."""
    ev = rt.plan.evaluator
    rendered = rt.plan.render_evaluator(case_input, answer)
    messages: list[dict[str, Any]] = [{"role": "user", "content": rendered.user}]
    error = "no reply"
    for ask in range(2):
        res = await rt.client.create_message(model=ev.model, system=rendered.system,
                                             messages=messages, max_tokens=ev.max_tokens,
                                             temperature=ev.temperature,
                                             tag=f"e{attempt}" + (f"r{ask}" if ask else ""))
        costs.add("evaluator", ev.model, res.usage, res.cost_usd)
        text, _ = reply_text(res.content)
        try:
            return verdict_from_text(text, rt.plan.spec.rubric), None
        except VerdictError as exc:
            error = str(exc)
            messages = [*messages, {"role": "assistant", "content": text.strip() or "(empty)"},
                        {"role": "user", "content": FIX_JSON.format(error=error)}]
    return None, error


def stop_reason(history: list[dict[str, Any]], window: int, min_gain: float) -> str | None:
    """``plateau`` (no gain ≥ min_gain over the last ``window`` attempts) or ``oscillation``
    (an answer seen two attempts ago comes back, or scores swing up and down)."""
    outputs = [a["output"] for a in history]
    if len(outputs) >= 3 and outputs[-1] in outputs[:-2]:
        return "oscillation"
    scores = [a["score"] for a in history if a["score"] is not None]
    if len(scores) >= 4:
        d = [b - a for a, b in zip(scores[-4:-1], scores[-3:], strict=True)]
        if all(abs(x) >= min_gain for x in d) and d[0] * d[1] < 0 and d[1] * d[2] < 0:
            return "oscillation"
    if len(scores) > window and max(scores[-window:]) - max(scores[:-window]) < min_gain:
        return "plateau"
    return None


async def run_attempt(rt: Runtime, case: Case, n: int, previous: dict[str, Any] | None,
                      costs: CostBook) -> dict[str, Any]:
    """One attempt: generate (with the previous answer and its feedback on a retry), extract,
    rule checks, evaluate. The step both modes run; only ``rt.client`` differs."""
    spec, gen = rt.plan.spec, rt.plan.generator
    assert gen is not None
    first = rt.plan.render_generator(case.input)
    messages: list[dict[str, Any]] = [{"role": "user", "content": first.user}]
    if previous is not None and previous.get("feedback") is not None:
        messages += [
            {"role": "assistant", "content": previous["output"].strip() or "(no answer)"},
            {"role": "user", "content": REFINE.format(feedback=previous["feedback"])},
        ]
    res = await rt.client.create_message(model=gen.model, system=first.system,
                                         messages=messages, max_tokens=gen.max_tokens,
                                         temperature=gen.temperature, tag=f"g{n}")
    costs.add("generator", gen.model, res.usage, res.cost_usd)
    extracted = extract_answer(res.content, spec.extract)
    attempt: dict[str, Any] = {
        "attempt": n, "output": extracted.answer, "extraction": extracted.how,
        "thinking_blocks_dropped": extracted.dropped_thinking_blocks,
    }
    failures = run_checks(extracted.answer, spec.checks)
    if failures:
        attempt.update(score=0.0, passed=False, feedback="The answer failed automatic "
                       "checks: " + "; ".join(failures), rubric_scores={},
                       failure_category="rule_check", suggested_fix=None,
                       rule_check_failures=failures)
        return attempt
    verdict, error = await evaluate(rt, case.input, extracted.answer, costs, n)
    if verdict is None:
        attempt.update(score=None, passed=False, feedback=None, rubric_scores={},
                       failure_category="evaluator_parse_error", suggested_fix=None,
                       parse_error=error)
    else:
        attempt.update(score=verdict.score, passed=passes(verdict.score, spec.pass_threshold),
                       llm_score=verdict.llm_score, llm_pass=verdict.llm_pass,
                       feedback=verdict.feedback, rubric_scores=verdict.rubric_scores,
                       failure_category=verdict.failure_category,
                       suggested_fix=verdict.suggested_fix)
    return attempt


async def run_case(rt: Runtime, case: Case) -> dict[str, Any]:
    """Run one case to a stop and return its eval-result record (not yet written)."""
    spec = rt.plan.spec
    costs = CostBook()
    history: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None
    reason = "max_attempts"
    previous: dict[str, Any] | None = None
    for n in range(1, spec.max_attempts + 1):
        attempt = await run_attempt(rt, case, n, previous, costs)
        history.append(attempt)
        if attempt["score"] is not None and (best is None or attempt["score"] > best["score"]):
            best = attempt
        if attempt["passed"]:
            reason = "pass"
            break
        found = stop_reason(history, spec.convergence.window, spec.convergence.min_gain)
        if found:
            reason = found
            break
        previous = attempt
    return _record(rt, case, history, best, reason, costs)


def _record(rt: Runtime, case: Case, history: list[dict[str, Any]],
            best: dict[str, Any] | None, reason: str, costs: CostBook) -> dict[str, Any]:
    plan = rt.plan
    chosen = best if best is not None else history[-1]
    passed = bool(chosen["passed"])
    if reason == "pass":
        status = "accepted"
    elif reason in ("plateau", "oscillation"):
        low = best is None or best["score"] < plan.spec.convergence.low_quality_below
        status = "converged_low_quality" if low else "converged"
    else:
        status = "max_attempts"
    assert plan.generator is not None
    return {
        "version": RESULT_VERSION,
        "run_id": rt.run_id,
        "case_id": case.id,
        "input": case.input,
        "output": chosen["output"],
        "score": chosen["score"],
        "pass": passed,
        "feedback": chosen["feedback"],
        "attempts": len(history),
        "best_attempt": chosen["attempt"],
        "attempt_history": [_public(a) for a in history],
        "generator_model": plan.generator.model,
        "evaluator_model": plan.evaluator.model,
        "rubric_scores": chosen["rubric_scores"],
        "failure_category": None if passed else chosen["failure_category"],
        "suggested_fix": chosen["suggested_fix"],
        "contamination_warning": rt.contamination(chosen["output"]),
        "cost_breakdown": costs.as_dict(),
        "total_cost_usd": costs.total,
        "evaluated_at": now_iso(),
        "status": status,
        "stop_reason": reason,
        "parse_error": (next((a["parse_error"] for a in reversed(history)
                              if a.get("parse_error")), False) if best is None else False),
        "expected": case.expected,
        "tags": list(case.tags),
    }


def _public(attempt: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in attempt.items() if k != "passed"}
    out["pass"] = attempt["passed"]
    return out
