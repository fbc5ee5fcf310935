"""``check --fix`` and ``--diff``: apply fixes, check again, repeat until nothing changes.

Every pass works on the texts in memory and re-checks the whole project from them (a fix in
one file can change a cross-file finding in another); files are written once, at the end, and
only by ``--fix``. A pass applies at most one fix per span; fixes that overlap wait for the next.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from evallint.config import Config
from evallint.discovery import FileTask
from evallint.engine import RunResult, _finish, analyze_supervised
from evallint.findings import Finding
from evallint.fixing import Fix, apply_fixes, fix_for, fixable_codes
from evallint.policy import all_metas
from evallint.source import SourceError, decode, is_utf16, read_bounded

MAX_PASSES = 4
_BOM = b"\xef\xbb\xbf"


@dataclass
class Texts:
    """The current text of each file a fix touched or asked about, and how to write it back."""

    tasks: dict[str, FileTask]
    max_bytes: int
    original: dict[str, str] = field(default_factory=dict)
    current: dict[str, str] = field(default_factory=dict)
    bom: set[str] = field(default_factory=set)

    def get(self, path: str) -> str | None:
        """The file's text now (None when it cannot be read as text)."""
        if path in self.current:
            return self.current[path]
        task = self.tasks.get(path)
        if task is None or Path(task.abspath).is_symlink():
            return None  # a fix never writes through a link (it would edit the target twice)
        try:
            data = read_bounded(task.abspath, self.max_bytes)
            text = decode(data, self.max_bytes)
        except (OSError, SourceError):
            return None
        if is_utf16(data):
            return None  # (a fix writes UTF-8: it would change the file's encoding too)
        if data.startswith(_BOM):
            self.bom.add(path)
        self.original[path] = self.current[path] = text
        return text

    def changed(self) -> list[str]:
        return sorted(p for p, t in self.current.items() if t != self.original[p])

    def encoded(self, path: str) -> bytes:
        data = self.current[path].encode("utf-8")
        return _BOM + data if path in self.bom else data


def available_fixes(findings: list[Finding], texts: Texts, unsafe: bool) -> dict[int, Fix]:
    """The fix each finding would get (by its index), safe ones only unless ``unsafe``."""
    codes = fixable_codes()
    out: dict[int, Fix] = {}
    for i, f in enumerate(findings):
        if f.code not in codes or f.cell is not None:
            continue
        text = texts.get(f.path)
        fix = fix_for(f, text) if text is not None else None
        if fix is not None and (fix.safe or unsafe):
            out[i] = fix
    return out


@dataclass
class FixOutcome:
    """What a fix run did: the check after it, how many fixes it applied, the texts."""

    result: RunResult
    fixed: int
    texts: Texts


def fix_project(result: RunResult, config: Config, enabled: set[str], *, unsafe: bool,
                jobs: int | None = None) -> FixOutcome:
    """Apply the fixes of ``result``'s findings until a pass changes nothing (or
    ``MAX_PASSES``), re-checking the project from the new texts after each pass."""
    texts = Texts({t.path: t for t in result.files}, config.max_file_size)
    fixed = 0
    for _ in range(MAX_PASSES):
        fixes = available_fixes(result.findings, texts, unsafe)
        by_path: dict[str, list[Fix]] = {}
        for i, fix in fixes.items():
            by_path.setdefault(result.findings[i].path, []).append(fix)
        changed = False
        for path, file_fixes in sorted(by_path.items()):
            text = texts.current[path]
            new, taken = apply_fixes(text, file_fixes)
            if new != text:
                texts.current[path] = new
                fixed += len(taken)
                changed = True
        if not changed:
            break
        result = recheck(result, texts, config, enabled, jobs)
    return FixOutcome(result, fixed, texts)


def recheck(previous: RunResult, texts: Texts, config: Config, enabled: set[str],
            jobs: int | None) -> RunResult:
    """The check of the same files, reading the changed ones from memory."""
    changed = set(texts.changed())
    work: list[FileTask | tuple[FileTask, bytes]] = [
        (t, texts.encoded(t.path)) if t.path in changed else t for t in previous.files]
    workers = jobs or os.cpu_count() or 1
    results = analyze_supervised(work, config, enabled, workers if len(work) >= 48 else 1)
    run = _finish(results, config, all_metas(config), enabled, 0)
    run.warnings = previous.warnings
    return run


def write_back(texts: Texts) -> list[str]:
    """Write every changed file in place; returns their paths. A path that has become a
    symbolic link since it was read is left alone."""
    written = []
    for path in texts.changed():
        target = Path(texts.tasks[path].abspath)
        if target.is_symlink():
            continue
        target.write_bytes(texts.encoded(path))
        written.append(path)
    return written


def unified_diff(texts: Texts) -> str:
    """One unified diff of every changed file, as ``--diff`` prints it."""
    out: list[str] = []
    for path in texts.changed():
        lines = difflib.unified_diff(texts.original[path].splitlines(keepends=True),
                                     texts.current[path].splitlines(keepends=True),
                                     fromfile=f"a/{path}", tofile=f"b/{path}")
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
