"""Calibration sets: answers a human has already judged, read from JSONL or YAML.

A case is either labelled (``input``, ``output``, ``label``: ``good``/``bad`` or a score in
[0, 1]) or a pair (``input``, ``preferred``, ``rejected``). The same reader serves
``evallint calibrate`` and the lint rule that counts good and bad cases, so both agree on what
the file holds. It imports nothing from the executor (the linter must not load the API SDK).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOOD_WORDS = frozenset({"good", "pass", "passed", "yes", "accept", "accepted", "correct"})
BAD_WORDS = frozenset({"bad", "fail", "failed", "no", "reject", "rejected", "incorrect"})
_KNOWN = frozenset({"id", "input", "output", "label", "preferred", "rejected", "note", "tags"})
MAX_BYTES = 50 * 1024 * 1024


class CalibrationSetError(ValueError):
    """The calibration file cannot be used; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class LabelledCase:
    """An answer with the human's verdict. ``score`` is the label as a number (good = 1)."""

    id: str
    input: Any
    output: str
    score: float
    line: int

    def good(self, threshold: float) -> bool:
        """Good means the human would pass it at the loop's own threshold."""
        return self.score >= threshold


@dataclass(frozen=True)
class PairCase:
    """Two answers to one input; the human prefers ``preferred``."""

    id: str
    input: Any
    preferred: str
    rejected: str
    line: int


@dataclass(frozen=True)
class CalibrationSet:
    labelled: tuple[LabelledCase, ...]
    pairs: tuple[PairCase, ...]

    def counts(self, threshold: float) -> tuple[int, int]:
        """How many labelled cases are good and how many bad at ``threshold``."""
        good = sum(1 for c in self.labelled if c.good(threshold))
        return good, len(self.labelled) - good


def label_score(raw: Any) -> float | None:
    """``good``/``bad`` (and synonyms), booleans, or a number in [0, 1]; None if none of these."""
    if isinstance(raw, bool):
        return 1.0 if raw else 0.0
    if isinstance(raw, int | float):
        value = float(raw)
        return value if 0.0 <= value <= 1.0 else None
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in GOOD_WORDS:
            return 1.0
        if word in BAD_WORDS:
            return 0.0
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def parse_case(raw: Any, line: int, index: int) -> LabelledCase | PairCase:
    """One case from its decoded mapping; errors name what is wrong."""
    if not isinstance(raw, dict):
        raise CalibrationSetError("a calibration case must be a mapping", line)
    unknown = sorted(str(k) for k in raw if k not in _KNOWN)
    if unknown:
        raise CalibrationSetError(f"unknown key(s) {', '.join(unknown)} (known: "
                                  f"{', '.join(sorted(_KNOWN))})", line)
    case_id = raw.get("id", f"case-{index}")
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or str(case_id) == "":
        raise CalibrationSetError("'id' must be a string or a number", line)
    if "input" not in raw:
        raise CalibrationSetError(f"case {case_id} has no 'input'", line)
    is_pair = "preferred" in raw or "rejected" in raw
    if is_pair:
        if "output" in raw or "label" in raw:
            raise CalibrationSetError(f"case {case_id} mixes a pair (preferred/rejected) with "
                                      "output/label; write them as two cases", line)
        if "preferred" not in raw or "rejected" not in raw:
            raise CalibrationSetError(f"pair {case_id} needs both 'preferred' and 'rejected'",
                                      line)
        return PairCase(str(case_id), raw["input"], _text(raw["preferred"]),
                        _text(raw["rejected"]), line)
    if "output" not in raw or "label" not in raw:
        raise CalibrationSetError(f"case {case_id} needs 'output' and 'label' (or "
                                  "'preferred' and 'rejected')", line)
    score = label_score(raw["label"])
    if score is None:
        raise CalibrationSetError(f"case {case_id}: label {raw['label']!r} is not good/bad or a "
                                  "score between 0 and 1", line)
    return LabelledCase(str(case_id), raw["input"], _text(raw["output"]), score, line)


def parse_calibration_set(text: str, name: str) -> CalibrationSet:
    """Decode a JSONL (``.jsonl``/``.ndjson``) or YAML calibration file held in ``text``."""
    jsonl = name.lower().endswith((".jsonl", ".ndjson"))
    rows = _jsonl_rows(text) if jsonl else _yaml_rows(text)
    labelled: list[LabelledCase] = []
    pairs: list[PairCase] = []
    seen: dict[str, int] = {}
    for index, (line, raw) in enumerate(rows, start=1):
        case = parse_case(raw, line, index)
        if case.id in seen:
            raise CalibrationSetError(f"duplicate case id '{case.id}' (first on line "
                                      f"{seen[case.id]})", line)
        seen[case.id] = line
        (pairs if isinstance(case, PairCase) else labelled).append(case)  # type: ignore[arg-type]
    if not seen:
        raise CalibrationSetError("the calibration file has no cases")
    return CalibrationSet(tuple(labelled), tuple(pairs))


def load_calibration_set(path: Path) -> CalibrationSet:
    """Read and parse a calibration file; unreadable files are CalibrationSetError too."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CalibrationSetError("calibration file not found") from None
    except OSError as exc:
        raise CalibrationSetError(f"cannot read the calibration file: {exc.strerror}") from None
    if len(data) > MAX_BYTES:
        raise CalibrationSetError("the calibration file is larger than 50 MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CalibrationSetError("the calibration file is not UTF-8") from None
    return parse_calibration_set(text, path.name)


def _jsonl_rows(text: str) -> list[tuple[int, Any]]:
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except ValueError as exc:
            raise CalibrationSetError(f"not valid JSON: {exc}", n) from None
    return rows


def _yaml_rows(text: str) -> list[tuple[int, Any]]:
    """A YAML list of cases, or a mapping with a ``cases`` list; each with its line."""
    from evallint.frontend import ParseError
    from evallint.marks import load_yaml

    try:
        doc = load_yaml(text)
    except ParseError as exc:
        raise CalibrationSetError(f"invalid YAML: {exc.message}", exc.line) from None
    data: Any = doc.data
    prefix: tuple[str | int, ...] = ()
    if isinstance(data, dict) and "cases" in data:
        data, prefix = data["cases"], ("cases",)
    if not isinstance(data, list):
        raise CalibrationSetError("a YAML calibration file is a list of cases (or a mapping "
                                  "with a 'cases' list)", 1)
    rows = []
    for i, item in enumerate(data):
        pos = doc.values.get((*prefix, i)) or doc.pos(*prefix)
        rows.append((pos.line if pos is not None else 1, item))
    return rows
