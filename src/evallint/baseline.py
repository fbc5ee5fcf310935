"""Baselines: adopt evallint on an existing project without fixing every old finding first.

A baseline (version 2) records each finding by its code, its file and its fingerprint
(:mod:`evallint.fingerprint`: the message without positions and a hash of the finding's own
line), with a count, so that:

- lines added or removed above or below a finding, elsewhere in the file or around it, leave
  it known;
- a finding whose own line changes, or whose message changes beyond its positions, comes
  back, and so does a *new* instance of a known finding (the count is used up);
- a file renamed (``git mv``, or any move) keeps its findings known: an entry whose file no
  longer exists matches a finding with the same code, message and line in a file the baseline
  does not name. A copy that keeps the old file has new findings.

Version-1 baselines (code, path, message) are still read and applied as they were written.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evallint.confine import command_line_file
from evallint.findings import Finding
from evallint.fingerprint import SCHEME, Print, Sources, fingerprints, without_own_name
from evallint.safefs import write_output
from evallint.source import DEFAULT_MAX_BYTES, read_bounded

VERSION = 2
VERSIONS = (1, 2)
Key = tuple[str, str, str]  # version 1: (code, path, message)


class BaselineError(Exception):
    """A baseline file that cannot be read."""


@dataclass(frozen=True)
class Entry:
    """One recorded finding (version 2)."""

    code: str
    path: str
    message: str  # the message without positions
    context: str  # the hash of the finding's line and its occurrence
    fingerprint: str
    count: int = 1


@dataclass
class Baseline:
    """A baseline as read: version 2's entries, or version 1's (code, path, message) counts."""

    version: int = VERSION
    entries: list[Entry] = field(default_factory=list)
    messages: Counter[Key] = field(default_factory=Counter)

    @property
    def note(self) -> str | None:
        """What to tell the user about this baseline, or None."""
        if self.version == 1:
            return ("the baseline is version 1, which matches findings by their message, "
                    "positions included: a line added above a finding makes it new again. "
                    "Write a new one with --write-baseline (version 2 survives such edits).")
        return None


MAX_BASELINE = 64 * 1024 * 1024  # a baseline larger than this was not written by evallint


def _key(f: Finding) -> Key:
    return (f.code, f.path, f.message)


def write_baseline(path: Path, findings: list[Finding], root: Path, *,
                   max_bytes: int = DEFAULT_MAX_BYTES, roots: tuple[str, ...] | None = None,
                   texts: Mapping[str, bytes] | None = None) -> int:
    """Record ``findings``; returns how many entries were written. The file is replaced, not
    written through (a symlink committed at its name is not followed). ``max_bytes``,
    ``roots`` and ``texts`` say how the findings' files are read (:class:`Sources`)."""
    prints = fingerprints(findings, Sources(max_bytes, roots, texts))
    counts = Counter((p.code, p.path, p.message, p.context, p.value) for p in prints)
    entries = [{"code": c, "path": p, "message": m, "context": x, "fingerprint": v, "count": n}
               for (c, p, m, x, v), n in sorted(counts.items())]
    doc = {"version": VERSION, "fingerprint": SCHEME, "findings": entries}
    text = json.dumps(doc, indent=2) + "\n"  # ASCII: a name that is not UTF-8 round-trips
    try:
        write_output(path, text.encode("utf-8"), root)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write the baseline: {exc.strerror or exc}") \
            from None
    return len(entries)


def read_baseline(path: Path, root: Path) -> Baseline:
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
    except RecursionError:
        raise BaselineError(f"{path}: not an evallint baseline (nested too deeply)") from None
    version = data.get("version") if isinstance(data, dict) else None
    if type(version) is not int or version not in VERSIONS:
        raise BaselineError(f"{path}: not an evallint baseline (version 1 or 2)")
    if version == 2 and data.get("fingerprint", SCHEME) != SCHEME:
        raise BaselineError(f"{path}: the baseline's fingerprints are not {SCHEME}'s; write a "
                            "new one with --write-baseline")
    entries = data.get("findings", [])
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: not an evallint baseline ('findings' is not a list)")
    out = Baseline(version=version)
    for i, e in enumerate(entries):
        try:
            count = int(e.get("count", 1))
            if version == 1:
                out.messages[(str(e["code"]), str(e["path"]), str(e["message"]))] += count
            else:
                out.entries.append(Entry(str(e["code"]), str(e["path"]), str(e["message"]),
                                         str(e["context"]), str(e["fingerprint"]), count))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
            raise BaselineError(f"{path}: malformed entry number {i + 1}") from None
    return out


def apply_baseline(findings: list[Finding], known: Baseline | Counter[Key], *,
                   max_bytes: int = DEFAULT_MAX_BYTES, roots: tuple[str, ...] | None = None,
                   texts: Mapping[str, bytes] | None = None) -> tuple[list[Finding], int]:
    """Drop findings the baseline knows (up to its counts); return the rest and how many went.
    ``max_bytes``, ``roots`` and ``texts`` say how the findings' files are read, as for
    :func:`write_baseline`."""
    if isinstance(known, Counter):
        known = Baseline(version=1, messages=known)
    if known.version == 1:
        return _apply_messages(findings, known.messages)
    prints = fingerprints(findings, Sources(max_bytes, roots, texts))
    left: Counter[tuple[str, str, str]] = Counter()
    for e in known.entries:
        left[(e.code, e.path, e.fingerprint)] += e.count
    matched = [False] * len(findings)
    for i, p in enumerate(prints):
        k = (p.code, p.path, p.value)
        if left[k] > 0:
            left[k] -= 1
            matched[i] = True
    _match_moved(known.entries, left, prints, matched)
    kept = [f for f, m in zip(findings, matched, strict=True) if not m]
    return kept, len(findings) - len(kept)


def _match_moved(entries: list[Entry], left: Counter[tuple[str, str, str]],
                 prints: list[Print], matched: list[bool]) -> None:
    """Renamed files: what is left of the entries whose file no longer exists matches the
    findings, not yet matched, of files the baseline does not name, by code, message (the
    file's own name left out) and line. The tree alone decides, in git or not: a rename that
    is committed (the usual pull request) is not in ``git diff HEAD``, and a copy that keeps
    the old file is no rename."""
    named = {e.path for e in entries}
    exists: dict[str, bool] = {}
    gone: Counter[tuple[str, str, str]] = Counter()
    for e in entries:
        k = (e.code, e.path, e.fingerprint)
        n = min(e.count, left[k])
        if n <= 0:
            continue
        if e.path not in exists:
            exists[e.path] = os.path.lexists(e.path)
        if not exists[e.path]:
            gone[(e.code, without_own_name(e.message, e.path), e.context)] += n
            left[k] -= n
    if not gone:
        return
    for i, p in enumerate(prints):
        if matched[i] or p.path in named:
            continue
        k = (p.code, without_own_name(p.message, p.path), p.context)
        if gone[k] > 0:
            gone[k] -= 1
            matched[i] = True


def _apply_messages(findings: list[Finding], known: Counter[Key]) -> tuple[list[Finding], int]:
    """Version 1: a finding is known by its code, path and message, positions included."""
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
