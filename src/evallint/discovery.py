"""Find the files to check: git-aware (respects .gitignore), config excludes, kinds."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evallint import globs
from evallint.classify import classify
from evallint.config import DEFAULT_EXCLUDE, Config

# Only these endings can ever be a kind evallint reads; everything else is skipped unread.
CANDIDATE_SUFFIXES = frozenset(
    {
        ".py", ".ipynb", ".j2", ".jinja", ".jinja2", ".mustache", ".hbs", ".handlebars",
        ".prompty", ".prompt", ".md", ".markdown", ".txt", ".xml", ".tmpl", ".tpl", ".yaml",
        ".yml", ".json",
    }
)
_SNIFF = 4096


class DiscoveryError(Exception):
    """A path argument that does not exist, or a walk that cannot start."""


@dataclass(frozen=True)
class FileTask:
    path: str  # as shown to the user, relative to the working directory when possible
    abspath: str
    kind: str


def _display(p: Path) -> str:
    try:
        rel = os.path.relpath(p, Path.cwd())
    except ValueError:
        return p.as_posix()
    return p.as_posix() if rel.startswith("..") else rel.replace(os.sep, "/")


def _git_files(folder: Path) -> list[Path] | None:
    """Files git would consider under ``folder`` (tracked + untracked, not ignored)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "."],
            capture_output=True, check=True, timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [folder / name for name in out.decode("utf-8", "surrogateescape").split("\0") if name]


def _walk(folder: Path, exclude: list[str]) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames
                             if (d not in exclude and not d.startswith(".")) or d == ".claude")
        for name in sorted(filenames):
            found.append(Path(dirpath) / name)
    return found


def discover(paths: list[str], config: Config) -> list[FileTask]:
    """Every file under ``paths`` that evallint has a front-end for, in a stable order."""
    exclude = list(config.exclude or DEFAULT_EXCLUDE) + list(config.extend_exclude)
    templates = tuple(config.templates)
    tasks: dict[str, FileTask] = {}
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            raise DiscoveryError(f"{arg}: no such file or directory")
        if p.is_file():
            kind = _kind(p, config, templates)
            if kind:
                tasks.setdefault(str(p.resolve()), FileTask(_display(p), str(p.resolve()), kind))
            continue
        candidates = _git_files(p) if config.respect_gitignore and _in_git(p) else None
        if candidates is None:
            candidates = _walk(p, exclude)
        for f in candidates:
            if f.suffix.lower() not in CANDIDATE_SUFFIXES:
                continue
            rel_root = config.root_relative(_display(f))
            parts = rel_root.split("/")
            if any(globs.match(rel_root, pat) or pat in parts[:-1] for pat in exclude):
                continue
            if config.include and not globs.match_any(rel_root, config.include):
                continue
            if not f.is_file():
                continue
            kind = _kind(f, config, templates)
            if kind:
                tasks.setdefault(str(f.resolve()), FileTask(_display(f), str(f.resolve()), kind))
    return sorted(tasks.values(), key=lambda t: t.path)


def _in_git(folder: Path) -> bool:
    for parent in (folder.resolve(), *folder.resolve().parents):
        if (parent / ".git").exists():
            return True
    return False


def classify_path(p: Path, config: Config) -> str | None:
    """The kind of one path under this configuration (reads the head of YAML/markdown)."""
    return _kind(p, config, tuple(config.templates))


def _kind(p: Path, config: Config, templates: tuple[str, ...]) -> str | None:
    rel = config.root_relative(_display(p))
    head: str | None = None
    suffix = p.suffix.lower()
    if suffix in (".yaml", ".yml", ".md", ".markdown"):
        try:
            with p.open("rb") as fh:
                head = fh.read(_SNIFF).decode("utf-8", "replace")
        except OSError:
            head = None
    kind = classify(rel, head, templates=templates)
    return kind.value if kind else None
