"""Baselines: adopt evallint on an existing project without fixing every old finding first.

A baseline records each finding by (code, path, message) — not by line, so unrelated edits that
move code do not resurrect old findings — with a count, so a *new* instance of the same finding
in the same file is still reported.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from evallint.confine import command_line_file
from evallint.findings import Finding
from evallint.safefs import write_output
from evallint.source import read_bounded

VERSION = 1
Key = tuple[str, str, str]


class BaselineError(Exception):
    """A baseline file that cannot be read."""


def _key(f: Finding) -> Key:
    return (f.code, f.path, f.message)


MAX_BASELINE = 64 * 1024 * 1024  # a baseline larger than this was not written by evallint


def write_baseline(path: Path, findings: list[Finding], root: Path) -> int:
    """Record ``findings``; returns how many entries were written. The file is replaced, not
    written through (a symlink committed at its name is not followed)."""
    counts = Counter(_key(f) for f in findings)
    entries = [{"code": c, "path": p, "message": m, "count": n}
               for (c, p, m), n in sorted(counts.items())]
    text = json.dumps({"version": VERSION, "findings": entries}, indent=2) + "\n"
    try:
        write_output(path, text.encode("utf-8"), root)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write the baseline: {exc.strerror or exc}") \
            from None
    return len(entries)


def read_baseline(path: Path, root: Path) -> Counter[Key]:
    """The baseline at ``path``: a regular file of at most ``MAX_BASELINE`` bytes that does
    not lead out of the project through a symlink (its text would show in errors)."""
    why = command_line_file(str(path), root, "baseline")
    if why is not None:
        raise BaselineError(why)
    try:
        raw = read_bounded(path, MAX_BASELINE)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    if len(raw) > MAX_BASELINE:
        raise BaselineError(f"{path}: not an evallint baseline (over {MAX_BASELINE:,} bytes)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: not an evallint baseline (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}: invalid baseline JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise BaselineError(f"{path}: not an evallint baseline (version {VERSION})")
    out: Counter[Key] = Counter()
    entries = data.get("findings", [])
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: not an evallint baseline ('findings' is not a list)")
    for i, e in enumerate(entries):
        try:
            out[(str(e["code"]), str(e["path"]), str(e["message"]))] += int(e.get("count", 1))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BaselineError(f"{path}: malformed entry number {i + 1}") from None
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
