"""``cases.jsonl``: lines ``{"id", "input", "expected", "tags"}`` (judge mode adds ``output``).

The file is validated in one pass before the first request (a typo on line 900 must not cost
899 cases' worth of calls first), keeping only the ids; the cases themselves are then streamed,
so memory stays flat in the number of cases.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evallint.executor.errors import SpecError


@dataclass(frozen=True)
class Case:
    id: str
    input: Any
    expected: Any = None
    tags: tuple[str, ...] = ()
    output: Any = None  # judge mode: the answer to grade
    extra: dict[str, Any] = field(default_factory=dict)


def _parse(line: str, n: int, path: Path, need_output: bool) -> Case:
    try:
        raw = json.loads(line)
    except ValueError as exc:
        raise SpecError(f"not valid JSON: {exc}", str(path), n) from None
    if not isinstance(raw, dict):
        raise SpecError("a case must be a JSON object", str(path), n)
    case_id = raw.get("id")
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or str(case_id) == "":
        raise SpecError("a case needs an 'id' (string or number)", str(path), n)
    if "input" not in raw:
        raise SpecError(f"case {case_id} has no 'input'", str(path), n)
    if need_output and "output" not in raw:
        raise SpecError(f"case {case_id} has no 'output' to judge", str(path), n)
    tags = raw.get("tags") or []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list):
        raise SpecError(f"case {case_id}: 'tags' must be a list", str(path), n)
    known = {"id", "input", "expected", "tags", "output"}
    return Case(id=str(case_id), input=raw["input"], expected=raw.get("expected"),
                tags=tuple(str(t) for t in tags), output=raw.get("output"),
                extra={k: v for k, v in raw.items() if k not in known})


def iter_cases(path: Path, *, need_output: bool = False) -> Iterator[tuple[int, Case]]:
    try:
        fh = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("cases file not found", str(path)) from None
    except OSError as exc:
        raise SpecError(f"cannot read cases file: {exc.strerror}", str(path)) from None
    with fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                yield n, _parse(line, n, path, need_output)


def validate_cases(path: Path, *, need_output: bool = False) -> int:
    """Check every line and that ids are unique; return the number of cases."""
    seen: dict[str, int] = {}
    for n, case in iter_cases(path, need_output=need_output):
        if case.id in seen:
            raise SpecError(f"duplicate case id '{case.id}' (first on line {seen[case.id]})",
                            str(path), n)
        seen[case.id] = n
    if not seen:
        raise SpecError("cases file has no cases", str(path))
    return len(seen)
