"""The evaluator's reply: parsed, validated against the scoring schema, and scored in code.

Nothing here trusts the judge's arithmetic or its ``pass``: the score is the weighted rubric
average (or the judge's ``score`` when there is no rubric), and pass is ``score >= threshold``.
An invalid reply is a :class:`VerdictError`, never a default score.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

REQUIRED = ("score", "pass", "feedback", "rubric_scores", "failure_category", "suggested_fix")


class VerdictError(ValueError):
    """The judge's reply is not the scoring schema; the message says what is wrong."""


@dataclass(frozen=True)
class Verdict:
    score: float  # computed in code
    llm_score: float
    llm_pass: bool
    feedback: str
    rubric_scores: dict[str, float]
    failure_category: str | None
    suggested_fix: str | None
    ambiguous: bool = False


_BLANKS = re.compile(r"\s*")


def _fenced(text: str) -> str | None:
    """The body of the first fenced block: what ``re.search(r"```(?:json)?\\s*\\n(.*?)\\n\\s*```",
    text, re.S)`` holds in its group, read with ``str.find`` (the pattern tried each newline of
    a run of blank lines as the closing one and read the rest of the run from each)."""
    at = text.find("```")
    while at != -1:
        info = at + 7 if text.startswith("json", at + 3) else at + 3
        run = _BLANKS.match(text, info)  # (each fence's own run of blanks: read once)
        blanks = run.end() if run else info
        opener = text.rfind("\n", info, blanks)  # the last newline first, as \s* is greedy
        if opener != -1:
            end = _closing_newline(text, opener + 1)
            if end != -1:
                return text[opener + 1:end]
            # an earlier opening newline: the last one closes it if a fence follows the blanks
            before = text.rfind("\n", info, opener)
            if before != -1 and text.startswith("```", blanks):
                return text[before + 1:opener]
            return None  # a later opening fence has fewer newlines after it to close with
        at = text.find("```", at + 1)
    return None


def _closing_newline(text: str, start: int) -> int:
    """The first newline at or after ``start`` that only blanks separate from a fence, or -1."""
    low = start  # no blank run before a fence reaches back past the previous fence
    fence = text.find("```", start + 1)
    while fence != -1:
        blanks = low + len(text[low:fence].rstrip())  # the blanks before this fence
        end = text.find("\n", blanks, fence)
        if end != -1:
            return end
        low = fence + 3
        fence = text.find("```", fence + 1)
    return -1


def find_json(text: str, opener: str = "{") -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the outermost braces."""
    closer = "}" if opener == "{" else "]"
    candidates = [text.strip()]
    fence = _fenced(text)
    if fence is not None:
        candidates.append(fence)
    start, end = text.find(opener), text.rfind(closer)
    if start != -1 and end > start:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise VerdictError("reply holds no JSON " + ("object" if opener == "{" else "array"))


def _unit(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise VerdictError(f"{what} must be a number")
    if not 0.0 <= value <= 1.0:
        raise VerdictError(f"{what} must be between 0 and 1, got {value}")
    return float(value)


def parse_verdict(data: Any, weights: dict[str, float]) -> Verdict:
    """Validate one verdict object and score it."""
    if not isinstance(data, dict):
        raise VerdictError("verdict must be a JSON object")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise VerdictError(f"verdict lacks {', '.join(missing)}")
    llm_score = _unit(data["score"], "score")
    if not isinstance(data["pass"], bool):
        raise VerdictError("pass must be true or false")
    if not isinstance(data["feedback"], str):
        raise VerdictError("feedback must be a string")
    raw_rubric = data["rubric_scores"]
    if not isinstance(raw_rubric, dict):
        raise VerdictError("rubric_scores must be an object")
    rubric = {str(k): _unit(v, f"rubric_scores.{k}") for k, v in raw_rubric.items()}
    for key in ("failure_category", "suggested_fix"):
        if data[key] is not None and not isinstance(data[key], str):
            raise VerdictError(f"{key} must be a string or null")
    ambiguous = data.get("ambiguous", False)
    if not isinstance(ambiguous, bool):
        raise VerdictError("ambiguous must be true or false")
    return Verdict(
        score=compute_score(llm_score, rubric, weights),
        llm_score=llm_score,
        llm_pass=data["pass"],
        feedback=data["feedback"],
        rubric_scores=rubric,
        failure_category=data["failure_category"],
        suggested_fix=data["suggested_fix"],
        ambiguous=ambiguous,
    )


def compute_score(llm_score: float, rubric: dict[str, float], weights: dict[str, float]) -> float:
    """Weighted rubric average; every weighted criterion must have been scored."""
    if weights:
        missing = [k for k, w in weights.items() if w > 0 and k not in rubric]
        if missing:
            raise VerdictError(f"rubric_scores lacks {', '.join(missing)}")
        total = sum(weights.values())
        return round(sum(rubric.get(k, 0.0) * w for k, w in weights.items()) / total, 6)
    if rubric:
        return round(sum(rubric.values()) / len(rubric), 6)
    return llm_score


def passes(score: float | None, threshold: float) -> bool:
    return score is not None and score >= threshold


def verdict_from_text(text: str, weights: dict[str, float]) -> Verdict:
    return parse_verdict(find_json(text, "{"), weights)
