"""``evallint calibrate``: prove the evaluator on human-judged answers before trusting its scores.

Only the evaluator runs, and exactly as ``evallint run`` runs it: the same plan (prompt file,
model, parameters), the same rendering from ``input`` and ``output``, the same verdict parsing
with one re-ask, the score computed in code from the rubric weights, pass = score >= the spec's
threshold. Every case is asked ``repeats`` times through the executor's client (retries, cost
cap) with the spec's concurrency. Probes add what a loop cannot see on its own: each pair side by
side in both orders (position bias) and good answers padded with neutral filler (length bias).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evallint.calibset import CalibrationSet, LabelledCase
from evallint.executor import calibstats as st
from evallint.executor.batch import CONTRACT
from evallint.executor.client import MessagesClient
from evallint.executor.errors import ApiFailure, CostCapReached, RunError
from evallint.executor.extract import reply_text
from evallint.executor.loop import Runtime, evaluate, now_iso
from evallint.executor.plan import Plan
from evallint.executor.prices import CostBook
from evallint.executor.spec import Calibration
from evallint.executor.verdict import VerdictError, find_json, parse_verdict

# Content-free sentences: they make an answer longer without making it any better.
FILLER = (
    "There are several ways to look at this, and each of them leads back to the same point. "
    "It is worth taking a moment to consider the matter from more than one side. Different "
    "readers will approach it in different ways, and that is only to be expected. In the end, "
    "the details matter just as much as the overall picture does. Some people find it helpful "
    "to think it over for a while before coming to a view. Others prefer to return to it later "
    "with fresh eyes. Either way, the question deserves a little time and some patience. It is "
    "one of those topics that can be approached at many levels, depending on what one wants. "
)
PAD_MIN_CHARS = 400
SIDE_IDS = ("A", "B")


@dataclass(frozen=True)
class Ask:
    """One request: a pointwise grade (``output``) or a side-by-side grade (``first``/``second``).

    ``kind`` is ``labelled``, ``preferred``, ``rejected``, ``padded`` or ``side``; ``item`` is the
    calibration case id."""

    kind: str
    item: str
    repeat: int
    input: Any
    output: str = ""
    first: str = ""
    second: str = ""
    preferred_first: bool = True


@dataclass
class Answer:
    ask: Ask
    score: float | None = None  # computed in code; None on a parse error
    error: str | None = None
    first_score: float | None = None  # side-by-side only
    second_score: float | None = None


@dataclass
class CalibrationResult:
    passed: bool
    metrics: dict[str, Any]
    failures: list[str]
    rows: list[dict[str, Any]]
    requests: int
    cost_usd: float
    date: str = field(default_factory=now_iso)


def pad(output: str) -> str:
    """The answer followed by neutral filler, at least doubling it (and adding 400 chars)."""
    target = max(2 * len(output), len(output) + PAD_MIN_CHARS)
    filler = ""
    while len(output) + 2 + len(filler) < target:
        filler += FILLER
    return f"{output}\n\n{filler.strip()}"


def plan_asks(cases: CalibrationSet, cal: Calibration, threshold: float) -> list[Ask]:
    """Every request the calibration sends, repeats interleaved (round 1 of all cases first)."""
    asks: list[Ask] = []
    for r in range(1, cal.repeats + 1):
        for c in cases.labelled:
            asks.append(Ask("labelled", c.id, r, c.input, output=c.output))
            if cal.length_probe and c.good(threshold):
                asks.append(Ask("padded", c.id, r, c.input, output=pad(c.output)))
        for p in cases.pairs:
            asks.append(Ask("preferred", p.id, r, p.input, output=p.preferred))
            asks.append(Ask("rejected", p.id, r, p.input, output=p.rejected))
            if cal.length_probe:
                asks.append(Ask("padded", p.id, r, p.input, output=pad(p.preferred)))
            if cal.position_probe:
                asks.append(Ask("side", p.id, r, p.input, first=p.preferred, second=p.rejected,
                                preferred_first=True))
                asks.append(Ask("side", p.id, r, p.input, first=p.rejected, second=p.preferred,
                                preferred_first=False))
    return asks


def side_by_side_message(plan: Plan, ask: Ask) -> tuple[str, str]:
    """System and user text of a side-by-side request: both answers rendered through the
    evaluator template, sent as items A and B in the batched judge's format and contract."""
    items = []
    system = ""
    for item_id, text in zip(SIDE_IDS, (ask.first, ask.second), strict=True):
        rendered = plan.render_evaluator(ask.input, text)
        system = rendered.system
        items.append({"item_id": item_id, "content": rendered.user})
    user = "Items:\n" + json.dumps(items, ensure_ascii=False, indent=1) + "\n\n" + CONTRACT
    return system, user


async def _side_by_side(rt: Runtime, ask: Ask, costs: CostBook) -> Answer:
    ev = rt.plan.evaluator
    system, user = side_by_side_message(rt.plan, ask)
    error = "no reply"
    for _ in range(2):  # one re-ask, as for a pointwise verdict
        res = await rt.client.create_message(
            model=ev.model, system=system, messages=[{"role": "user", "content": user}],
            max_tokens=ev.max_tokens, temperature=ev.temperature)
        costs.add("evaluator", ev.model, res.usage, res.cost_usd)
        text, _ = reply_text(res.content)
        try:
            data = find_json(text, "[")
            if not isinstance(data, list):
                raise VerdictError("reply is not a JSON array")
            found = {str(o.get("item_id")): o for o in data if isinstance(o, dict)}
            missing = [i for i in SIDE_IDS if i not in found]
            if missing:
                raise VerdictError(f"item(s) {', '.join(missing)} missing from the reply")
            a, b = (parse_verdict(found[i], rt.plan.spec.rubric) for i in SIDE_IDS)
        except VerdictError as exc:
            error = str(exc)
            continue
        return Answer(ask, first_score=a.score, second_score=b.score)
    return Answer(ask, error=error)


async def ask_once(rt: Runtime, ask: Ask, costs: CostBook) -> Answer:
    """Send one calibration request the way ``run`` would grade that answer."""
    if ask.kind == "side":
        return await _side_by_side(rt, ask, costs)
    verdict, error = await evaluate(rt, ask.input, ask.output, costs)
    return Answer(ask, score=verdict.score if verdict else None, error=error)


async def run_asks(plan: Plan, client: MessagesClient, asks: list[Ask], concurrency: int,
                   progress: Any = None) -> tuple[list[Answer], float]:
    """All asks with ``concurrency`` workers. A spent cost cap or an API failure is a RunError:
    a calibration is complete or it is nothing."""
    rt = Runtime.build(plan, client, "calib-" + uuid.uuid4().hex[:8])
    costs = CostBook()
    pending: Iterator[Ask] = iter(asks)
    answers: list[Answer] = []

    async def worker() -> None:
        for ask in pending:
            answers.append(await ask_once(rt, ask, costs))
            if progress is not None:
                progress(len(answers), len(asks))

    workers = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    except CostCapReached as exc:
        raise RunError(f"{exc} after {len(answers)} of {len(asks)} calibration requests; the "
                       "calibration is incomplete and nothing was recorded") from None
    except ApiFailure as exc:
        raise RunError(f"{exc}; the calibration is incomplete and nothing was recorded") \
            from None
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return answers, costs.total


# ---------------------------------------------------------------------------- metrics


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _preference(p: float | None, r: float | None) -> float:
    """1 when the preferred answer outscores the rejected one, 0.5 on a tie, 0 otherwise (or
    when either grade failed: the loop could not have kept the right answer)."""
    if p is None or r is None:
        return 0.0
    return 1.0 if p > r else 0.5 if p == r else 0.0


def _winner(a: Answer) -> str | None:
    if a.first_score is None or a.second_score is None:
        return None
    if a.first_score == a.second_score:
        return "tie"
    return "first" if a.first_score > a.second_score else "second"


def compute(cases: CalibrationSet, answers: list[Answer], cal: Calibration,
            threshold: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The metrics and one row per calibration case, from the answers of every repeat."""
    by: dict[tuple[str, str], list[Answer]] = {}
    for a in answers:
        by.setdefault((a.ask.kind, a.ask.item), []).append(a)
    for group in by.values():
        group.sort(key=lambda a: (a.ask.repeat, a.ask.preferred_first))

    truth: list[bool] = []
    verdicts: list[bool] = []
    good_scores: list[float] = []
    bad_scores: list[float] = []
    errors = sum(1 for a in answers if a.error)
    flips = 0
    spreads: list[float] = []
    stable_items = 0
    length_gains: list[float] = []
    label_errors: list[float] = []
    rows: list[dict[str, Any]] = []

    def stability(scores: list[float | None]) -> tuple[bool, float | None]:
        nonlocal flips, stable_items
        passed = {s is not None and s >= threshold for s in scores}
        valid = [s for s in scores if s is not None]
        flip = len(passed) > 1
        spread = max(valid) - min(valid) if len(valid) >= 2 else None
        if len(scores) >= 2:
            stable_items += 1
            flips += flip
            if spread is not None:
                spreads.append(spread)
        return flip, spread

    def length(kind_item: tuple[str, str], base: list[float | None]) -> float | None:
        padded = [a.score for a in by.get(kind_item, []) if a.score is not None]
        original = [s for s in base if s is not None]
        if not padded or not original:
            return None
        gain = st.mean(padded) - st.mean(original)  # type: ignore[operator]
        length_gains.append(gain)
        return gain

    for c in cases.labelled:
        scores = [a.score for a in by.get(("labelled", c.id), [])]
        good = c.good(threshold)
        for s in scores:
            truth.append(good)
            verdicts.append(s is not None and s >= threshold)
            if s is not None:
                (good_scores if good else bad_scores).append(s)
        valid = [s for s in scores if s is not None]
        if valid and c.score not in (0.0, 1.0):
            label_errors.append(abs(st.mean(valid) - c.score))  # type: ignore[operator]
        flip, spread = stability(scores)
        gain = length(("padded", c.id), scores) if good else None
        rows.append(_labelled_row(c, good, scores, threshold, flip, spread, gain, by))

    pair_prefs: list[float] = []
    side_correct: list[float] = []
    first_wins: list[float] = []
    position_driven: list[float] = []
    for p in cases.pairs:
        ps = [a.score for a in by.get(("preferred", p.id), [])]
        rs = [a.score for a in by.get(("rejected", p.id), [])]
        prefs = [_preference(x, y) for x, y in zip(ps, rs, strict=False)]
        pair_prefs += prefs
        stability(ps)
        stability(rs)
        gain = length(("padded", p.id), ps)
        sides = by.get(("side", p.id), [])
        driven = []
        for r in range(1, cal.repeats + 1):
            both = [a for a in sides if a.ask.repeat == r]
            wins = {a.ask.preferred_first: _winner(a) for a in both}
            for a in both:
                w = _winner(a)
                if w in ("first", "second"):
                    first_wins.append(1.0 if w == "first" else 0.0)
                    side_correct.append(1.0 if (w == "first") == a.ask.preferred_first else 0.0)
                elif w == "tie":
                    side_correct.append(0.5)
                else:
                    side_correct.append(0.0)
            if len(wins) == 2:
                ab, ba = wins[True], wins[False]
                driven.append(1.0 if ab == ba and ab in ("first", "second") else 0.0)
        position_driven += driven
        rows.append({"id": p.id, "kind": "pair", "line": p.line,
                     "preferred_scores": ps, "rejected_scores": rs,
                     "preference": _r(st.mean(prefs)),
                     "side_by_side": [[a.ask.preferred_first, a.first_score, a.second_score]
                                      for a in sides],
                     "position_driven": _r(st.mean(driven)), "length_gain": _r(gain)})

    kappa = st.cohen_kappa(truth, verdicts)
    metrics: dict[str, Any] = {
        "labelled_cases": len(cases.labelled),
        "good_cases": sum(1 for c in cases.labelled if c.good(threshold)),
        "bad_cases": sum(1 for c in cases.labelled if not c.good(threshold)),
        "pairs": len(cases.pairs),
        "repeats": cal.repeats,
        "parse_errors": errors,
        "accuracy": _r(st.accuracy(truth, verdicts)),
        "balanced_accuracy": _r(st.balanced_accuracy(truth, verdicts)),
        "kappa": _r(kappa),
        "auc": _r(st.roc_auc(good_scores, bad_scores)),
        "label_mae": _r(st.mean(label_errors)),
        "preference_accuracy": _r(st.mean(pair_prefs)),
        "side_by_side_accuracy": _r(st.mean(side_correct)),
        "first_position_wins": _r(st.mean(first_wins)),
        "position_bias": _r(st.mean(position_driven)),
        "length_gain": _r(st.mean(length_gains)),
        "length_wins": _r(st.mean([1.0 if g > 0 else 0.0 for g in length_gains])),
        "flip_rate": _r(flips / stable_items) if stable_items else None,
        "score_spread": _r(st.mean(spreads)),
        "max_score_spread": _r(max(spreads)) if spreads else None,
        "good_scores": good_scores,
        "bad_scores": bad_scores,
    }
    return metrics, rows


def _labelled_row(c: LabelledCase, good: bool, scores: list[float | None], threshold: float,
                  flip: bool, spread: float | None, gain: float | None,
                  by: dict[tuple[str, str], list[Answer]]) -> dict[str, Any]:
    verdicts = [s is not None and s >= threshold for s in scores]
    agree = [v == good for v in verdicts]
    return {"id": c.id, "kind": "labelled", "line": c.line, "label": c.score, "good": good,
            "scores": scores, "agreement": _r(st.mean([1.0 if a else 0.0 for a in agree])),
            "flip": flip, "spread": _r(spread), "length_gain": _r(gain),
            "padded_scores": [a.score for a in by.get(("padded", c.id), [])],
            "errors": [a.error for a in by.get(("labelled", c.id), []) if a.error]}


# (metric, spec attribute, direction, what it needs when unmeasurable)
GATES = (
    ("auc", "min_auc", "min", "needs good and bad labelled cases"),
    ("kappa", "min_kappa", "min", "needs good and bad labelled cases"),
    ("balanced_accuracy", "min_balanced_accuracy", "min", "needs good and bad labelled cases"),
    ("flip_rate", "max_flip_rate", "max", None),
    ("score_spread", "max_score_spread", "max", None),
    ("preference_accuracy", "min_preference_accuracy", "min", None),
    ("position_bias", "max_position_bias", "max", None),
    ("length_gain", "max_length_gain", "max", None),
)


def judge(metrics: dict[str, Any], cal: Calibration) -> list[str]:
    """Every threshold the metrics miss, as ``metric value < bound`` lines. A required metric
    that could not be measured is a miss; pair and probe metrics apply only when measured."""
    failures = []
    for metric, attr, direction, needs in GATES:
        bound = getattr(cal, attr)
        if bound is None:
            continue
        value = metrics.get(metric)
        if value is None:
            if needs is not None:
                failures.append(f"{metric} cannot be measured ({needs}); {attr} is {bound:g}")
            continue
        if direction == "min":
            if value < bound:
                failures.append(f"{metric} {value:.3f} < {attr} {bound:g}")
        elif value > bound:
            failures.append(f"{metric} {value:.3f} > {attr} {bound:g}")
    return failures


# ---------------------------------------------------------------------------- fingerprint


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise RunError(f"{path}: cannot read: {exc.strerror}") from None


def fingerprint(plan: Plan, cal: Calibration, root: Path) -> dict[str, Any]:
    """What the calibration proved: the judge as it runs (prompt file, rubric weights, model,
    parameters, threshold) and the calibration set. Paths are relative to the config root."""
    ev = plan.evaluator
    rubric = json.dumps(plan.spec.rubric, sort_keys=True, separators=(",", ":"))
    return {
        "evaluator_prompt": {"path": _rel(ev.prompt.path, root),
                             "sha256": file_sha256(ev.prompt.path)},
        "rubric_sha256": sha256_text(rubric),
        "judge_model": ev.model,
        "judge_parameters": {"temperature": ev.temperature, "max_tokens": ev.max_tokens},
        "pass_threshold": plan.spec.pass_threshold,
        "calibration_set": {"path": _rel(cal.cases, root), "sha256": file_sha256(cal.cases)},
    }


def _rel(path: Path, root: Path) -> str:
    import os

    rel = os.path.relpath(path.resolve(), root.resolve())
    return Path(rel).as_posix()


def what_moved(record: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The parts of the judge that differ from the calibrated one, in words."""
    moved = []

    def sub(key: str, field_name: str) -> Any:
        value = record.get(key)
        return value.get(field_name) if isinstance(value, dict) else None

    if sub("evaluator_prompt", "sha256") != now["evaluator_prompt"]["sha256"]:
        moved.append(f"the evaluator prompt ({now['evaluator_prompt']['path']}) changed")
    if record.get("rubric_sha256") != now["rubric_sha256"]:
        moved.append("the rubric weights changed")
    if record.get("judge_model") != now["judge_model"]:
        moved.append(f"the judge model changed from {record.get('judge_model')} to "
                     f"{now['judge_model']}")
    if record.get("judge_parameters") != now["judge_parameters"]:
        moved.append(f"the judge parameters changed from {record.get('judge_parameters')} to "
                     f"{now['judge_parameters']}")
    if record.get("pass_threshold") != now["pass_threshold"]:
        moved.append(f"the pass threshold changed from {record.get('pass_threshold')} to "
                     f"{now['pass_threshold']}")
    if sub("calibration_set", "sha256") != now["calibration_set"]["sha256"]:
        moved.append(f"the calibration set ({now['calibration_set']['path']}) changed")
    return moved


def gate_problem(record: dict[str, Any] | None, now: dict[str, Any], cal: Calibration
                 ) -> str | None:
    """Why ``run`` must not start with this judge, or None when its calibration stands.

    A record whose metrics miss thresholds tightened since is refused as well."""
    if record is None:
        return "the evaluator has no calibration record; run `evallint calibrate` first"
    moved = what_moved(record, now)
    if moved:
        return ("the judge moved since it was calibrated on " + str(record.get("date", "?"))
                + ": " + "; ".join(moved) + "; run `evallint calibrate` again")
    if record.get("passed") is not True:
        failed = record.get("failures") or []
        return ("the last calibration failed" + (f" ({'; '.join(map(str, failed))})"
                                                  if failed else "")
                + "; improve the evaluator and run `evallint calibrate` again")
    metrics = record.get("metrics")
    if isinstance(metrics, dict):
        missed = judge(metrics, cal)
        if missed:
            return ("the recorded calibration misses the spec's current thresholds ("
                    + "; ".join(missed) + "); run `evallint calibrate` again")
    return None
