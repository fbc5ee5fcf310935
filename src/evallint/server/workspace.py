"""Lint a workspace whose open files may differ from the disk (editor buffers).

One run is what ``evallint check .`` does from the workspace root, except that every open
document is analysed from its in-memory text: the project analysis (cross-file Python flows,
spec and agent checks) sees the buffers, files that are not open come from the result cache,
and a finding in a closed file caused by an edit in an open one is still computed (the server
shows diagnostics for open files only). The working directory must be the workspace root (the
server sets it), as for ``evallint check``: finding paths are relative to it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from evallint.config import Config, ConfigError
from evallint.discovery import DiscoveryError, FileTask, classify_path, discover
from evallint.engine import enabled_codes, run_check
from evallint.findings import Finding
from evallint.policy import all_metas, load_config_with_policies
from evallint.registry import RuleDataError, RuleMeta, SelectionError, load_checks


@dataclass
class Outcome:
    """One run: findings by absolute path (open documents only), and what to tell the user."""

    findings: dict[str, list[Finding]] = field(default_factory=dict)
    metas: dict[str, RuleMeta] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0  # files analysed, open or not
    cached: int = 0  # of which read from the result cache


@dataclass
class WorkspaceLinter:
    """Lints the open documents of one workspace (``root``) with the project around them.

    ``project=False`` analyses the open documents alone (for very large workspaces);
    ``use_cache`` reads and writes the result cache for files that are not open.
    """

    root: Path
    project: bool = True
    use_cache: bool = True
    metas: dict[str, RuleMeta] = field(default_factory=dict)
    # The project's file listing, kept between runs: a keystroke does not add files, and
    # walking a large tree (no git) on every pause in typing would cost more than the lint.
    _listing: tuple[str, list[FileTask]] | None = field(default=None, init=False, repr=False)

    def stale(self) -> None:
        """Forget the file listing (a file was opened, saved, created or deleted)."""
        self._listing = None

    def _tasks(self, cfg: Config, warnings: list[str]) -> list[FileTask]:
        key = f"{cfg.root}|{cfg.fingerprint()}"
        listing = self._listing
        if listing is None or listing[0] != key:
            listing = (key, discover(["."], cfg, warnings))
            self._listing = listing
        return list(listing[1])

    def lint(self, docs: dict[str, str]) -> Outcome:
        """Findings for the open documents ``docs`` (absolute path -> text). Never raises for
        bad input: a broken config or selection is an error in the outcome."""
        # Compared as real paths: the working directory is one, and a client may name a
        # file through a symlink (/tmp on macOS); the findings go back under its names.
        names = {os.path.realpath(p): p for p in docs}
        real = {r: docs[p] for r, p in names.items()}
        root = self.root.resolve()
        inside = {p: t for p, t in real.items() if _under(p, root)}
        outside = {p: t for p, t in real.items() if p not in inside}
        out = Outcome()
        try:
            load_checks()
            if inside:
                self._run(load_config_with_policies(root), inside, out, project=self.project)
            for path, text in outside.items():  # a file from elsewhere: its own config, alone
                self._run(load_config_with_policies(Path(path).parent), {path: text}, out,
                          project=False)
        except (ConfigError, DiscoveryError, SelectionError, RuleDataError) as exc:
            out.errors.append(str(exc))
        if not out.metas:
            from evallint.registry import load_rules

            out.metas = dict(load_rules())
        self.metas = out.metas
        out.findings = {names[p]: fs for p, fs in out.findings.items() if p in names}
        return out

    def _run(self, cfg: Config, docs: dict[str, str], out: Outcome, *, project: bool) -> None:
        metas = all_metas(cfg)
        out.metas = {**metas, **out.metas}
        enabled = enabled_codes(cfg, metas)
        tasks = self._tasks(cfg, out.warnings) if project else []
        buffers = _buffers(tasks, docs)
        known = {os.path.realpath(p) for p in buffers}
        for path in docs:
            if path in known:
                continue
            # Not in the project listing: excluded or git-ignored on disk (left alone, as
            # `check .` would), or a buffer not saved yet, or a file outside the workspace.
            if project and os.path.exists(path):
                continue
            kind = classify_path(Path(path), cfg)
            if kind is not None:
                tasks.append(FileTask(_display(path), path, kind))
                buffers[path] = docs[path]
        # Open documents are linted from their buffers (never cached: they change with every
        # keystroke); every other file comes from the result cache, as `check .` would.
        run = run_check([], cfg, enabled, tasks=tasks, buffers=buffers,
                        use_cache=self.use_cache and project)
        cached = run.cached_files
        out.errors += run.tool_errors
        out.files += len(tasks)
        out.cached += cached
        out.warnings += run.warnings
        for f in run.findings:
            path = os.path.realpath(f.path)
            if path in docs:
                out.findings.setdefault(path, []).append(f)


def _buffers(tasks: list[FileTask], docs: dict[str, str]) -> dict[str, str]:
    """Open documents' texts by the discovered task's path (``docs`` is keyed by real path;
    only tasks named like an open document pay for a ``realpath``)."""
    names = {os.path.basename(p) for p in docs}
    out: dict[str, str] = {}
    for t in tasks:
        if os.path.basename(t.abspath) in names:
            text = docs.get(os.path.realpath(t.abspath))
            if text is not None:
                out[t.abspath] = text
    return out


def _under(path: str, root: Path) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), str(root)]) == str(root)
    except ValueError:  # another drive
        return False


def _display(path: str) -> str:
    """The path as `check` shows it: relative to the working directory when inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel.replace(os.sep, "/")
