"""Baselines: adopt evallint on an existing project without fixing every old finding first.

A baseline records each finding by (code, path, message) — not by line, so unrelated edits that
move code do not resurrect old findings — with a count, so a *new* instance of the same finding
in the same file is still reported.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from evallint.findings import Finding

VERSION = 1
Key = tuple[str, str, str]


class BaselineError(Exception):
    """A baseline file that cannot be read."""


def _key(f: Finding) -> Key:
    return (f.code, f.path, f.message)


def write_baseline(path: Path, findings: list[Finding]) -> int:
    """Record ``findings``; returns how many entries were written."""
    counts = Counter(_key(f) for f in findings)
    entries = [{"code": c, "path": p, "message": m, "count": n}
               for (c, p, m), n in sorted(counts.items())]
    path.write_text(json.dumps({"version": VERSION, "findings": entries}, indent=2) + "\n",
                    encoding="utf-8")
    return len(entries)


def read_baseline(path: Path) -> Counter[Key]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}: invalid baseline JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise BaselineError(f"{path}: not an evallint baseline (version {VERSION})")
    out: Counter[Key] = Counter()
    for e in data.get("findings", []):
        try:
            out[(str(e["code"]), str(e["path"]), str(e["message"]))] += int(e.get("count", 1))
        except (KeyError, TypeError, ValueError):
            raise BaselineError(f"{path}: malformed entry {e!r}") from None
    return out


def apply_baseline(findings: list[Finding], known: Counter[Key]) -> tuple[list[Finding], int]:
    """Drop findings the baseline knows (up to its counts); return the rest and how many went."""
    left = Counter(known)
    kept: list[Finding] = []
    dropped = 0
    for f in findings:
        k = _key(f)
        if left[k] > 0:
            left[k] -= 1
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped
