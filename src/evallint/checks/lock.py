"""EL610: a pinned evaluator prompt or rubric changed (or vanished) since ``evallint lock``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from evallint import reads
from evallint.confine import Outside, inside_any
from evallint.facts import Pos
from evallint.findings import Finding, Related
from evallint.frontend import ParseError
from evallint.lockfile import current_pins, lock_path, sha256_of
from evallint.marks import load_yaml
from evallint.registry import Context, Project, project_check


def _display(path: Path) -> str:
    rel = os.path.relpath(path)
    return path.as_posix() if rel.startswith("..") else rel.replace(os.sep, "/")


@project_check("EL610")
def pinned_files(project: Project, ctx: Context) -> Iterator[Finding]:
    """Compare every pin in the lock file with the file on disk and its judge model."""
    target = lock_path(ctx.config)
    shown = _display(target)
    roots = ctx.config.roots
    try:
        data = reads.read_file(target, ctx.config.max_file_size, roots)
    except Outside:
        yield ctx.finding("EL610", shown, Pos(1, 1),
                          "the lock file is a symlink out of the project: not read, so nothing "
                          "it pins is checked; commit the lock file itself")
        return
    except OSError:
        return  # no lock file (or not a readable one): nothing is pinned
    try:
        doc = load_yaml(data.decode("utf-8"))
    except UnicodeDecodeError:
        return
    except ParseError as exc:
        yield ctx.finding("EL610", shown, Pos(exc.line, exc.column),
                          f"the lock file cannot be read ({exc.message}); regenerate it with "
                          "`evallint lock`")
        return
    files = doc.data.get("files") if isinstance(doc.data, dict) else None
    if not isinstance(files, dict):
        return
    now = current_pins(project, ctx.config)
    for rel, entry in sorted(files.items(), key=lambda kv: str(kv[0])):
        if not isinstance(entry, dict):
            continue
        entry_pos = doc.keys.get(("files", str(rel)), Pos(1, 1))
        path = ctx.config.root / str(rel)
        lock_rel = [Related(shown, entry_pos.line, entry_pos.column, "the approved pin")]
        if not inside_any(path, roots):
            yield ctx.finding(
                "EL610", shown, entry_pos,
                f"pinned file '{rel}' lies outside the project: not read; a lock file pins "
                "the judge prompts and rubrics of its own project only")
            continue
        digest = sha256_of(path, roots)
        if digest is None:
            yield ctx.finding(
                "EL610", shown, entry_pos,
                f"pinned file '{rel}' is missing: the approved judge prompt or rubric is gone; "
                "restore it, or re-approve the new harness with `evallint lock`")
            continue
        if digest != entry.get("sha256"):
            yield ctx.finding(
                "EL610", _display(path), Pos(1, 1),
                f"'{rel}' changed since it was approved (SHA-256 {str(entry.get('sha256'))[:12]}"
                f"… is now {digest[:12]}…): the measurement harness moved; review the change "
                "and re-approve it with `evallint lock`", related=lock_rel)
            continue
        pin = now.get(str(rel))
        locked_model = entry.get("judge_model")
        if pin is not None and locked_model and pin.judge_model and \
                pin.judge_model != locked_model:
            yield ctx.finding(
                "EL610", _display(path), Pos(1, 1),
                f"the judge model of '{rel}' changed from {locked_model} to {pin.judge_model} "
                "since it was approved; re-approve with `evallint lock`", related=lock_rel)
