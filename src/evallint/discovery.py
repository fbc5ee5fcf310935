"""Find the files to check: git-aware (respects .gitignore), config excludes, kinds."""

from __future__ import annotations

import os
import posixpath
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evallint import globs
from evallint.classify import MAX_COLLECTION_BYTES, classify, project_relative
from evallint.config import DEFAULT_EXCLUDE, Config
from evallint.fileindex import UNKNOWN, FileIndex

# Only these endings can ever be a kind evallint reads; everything else is skipped unread.
CANDIDATE_SUFFIXES = frozenset(
    {
        ".py", ".ipynb", ".j2", ".jinja", ".jinja2", ".mustache", ".hbs", ".handlebars",
        ".prompty", ".prompt", ".md", ".markdown", ".txt", ".xml", ".tmpl", ".tpl", ".yaml",
        ".yml", ".json", ".jsonl",
    }
)
_SNIFF = 4096
_JSON_SNIFF = 16384  # one judge prompt record can be longer than 4 KiB


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


def _git_files(folder: Path) -> list[str] | None:
    """Files git would consider under ``folder`` (tracked + untracked, not ignored), relative."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "."],
            capture_output=True, check=True, timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [name for name in out.decode("utf-8", "surrogateescape").split("\0") if name]


def _walk(folder: Path, exclude: set[str]) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames
                             if (d not in exclude and not d.startswith(".")) or d == ".claude")
        rel_dir = os.path.relpath(dirpath, folder)
        for name in sorted(filenames):
            found.append(name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/"))
    return found


_GLOB_CHARS = frozenset("*?[/")


def _escapes(abspath: str, roots: tuple[str, ...], link: bool | None = None) -> bool:
    """True for a symlink whose target lies outside every allowed root: the checked tree is
    untrusted, and a link to ``~/.ssh/id_rsa`` named ``prompt.txt`` must not be read (its text
    would show in findings). Only links pay for ``realpath``; ``link`` says whether it is one
    when the caller knows."""
    if not (os.path.islink(abspath) if link is None else link):
        return False
    real = os.path.realpath(abspath)
    return not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def discover(paths: list[str], config: Config, skipped: list[str] | None = None,
             index: FileIndex | None = None) -> list[FileTask]:
    """Every file under ``paths`` that evallint has a front-end for, in a stable order.

    Paths are joined as strings: on large trees ``Path.resolve``/``relpath`` per file cost
    more than everything else discovery does. Symlinks to files outside the project root
    (or the folder argument being walked) are left out and named in ``skipped``. With an
    ``index`` (a cached run), a file whose status is unchanged keeps the kind its head gave
    last time, unread.
    """
    index = index or FileIndex()
    note = skipped.append if skipped is not None else (lambda _msg: None)
    real_root = os.path.realpath(config.root)
    exclude = list(config.exclude or DEFAULT_EXCLUDE) + list(config.extend_exclude)
    plain = {pat.rstrip("/") for pat in exclude if not (set(pat.rstrip("/")) & _GLOB_CHARS)}
    patterned = [pat for pat in exclude if pat.rstrip("/") not in plain]
    templates = tuple(config.templates)
    cwd = os.getcwd()
    root_prefix = os.path.relpath(config.root, cwd).replace(os.sep, "/")
    tasks: dict[str, FileTask] = {}
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            raise DiscoveryError(f"{arg}: no such file or directory")
        if p.is_file():
            if _escapes(os.path.abspath(p), (real_root,)):
                note(f"{_display(p)}: not read: a symlink to a file outside the project")
                continue
            kind = _kind(p, config, templates)
            if kind:
                abspath = os.path.abspath(p)
                tasks.setdefault(abspath, FileTask(_display(p), abspath, kind))
            continue
        base = _display(p)
        base_abs = os.path.abspath(p)
        roots = (real_root, os.path.realpath(p))
        names = _git_files(p) if config.respect_gitignore and _in_git(p) else None
        if names is None:
            names = _walk(p, plain)
        for name in names:
            dot = name.rfind(".")
            if dot == -1 or name[dot:].lower() not in CANDIDATE_SUFFIXES:
                continue
            display = name if base == "." else posixpath.normpath(f"{base}/{name}")
            rel_root = (display if root_prefix == "." else
                        posixpath.relpath(display, root_prefix) if not display.startswith("/")
                        else config.root_relative(display))
            parts = rel_root.split("/")
            if plain.intersection(parts) or any(globs.match(rel_root, pat) for pat in patterned):
                continue
            if config.include and not globs.match_any(rel_root, config.include):
                continue
            abspath = os.path.join(base_abs, name)
            st = index.stat(abspath)
            if st is None:
                continue
            if _escapes(abspath, roots, index.is_link(abspath)):
                note(f"{display}: not read: a symlink to a file outside the project")
                continue
            kind = _indexed_kind(index, abspath, st, rel_root, templates)
            if kind:
                tasks.setdefault(abspath, FileTask(display, abspath, kind))
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
    return _kind_of(str(p), config.root_relative(_display(p)), templates)


def _indexed_kind(index: FileIndex, abspath: str, st: os.stat_result, rel: str,
                  templates: tuple[str, ...]) -> str | None:
    """The kind of a file, from the index when its head would have to be read for it."""
    suffix = _suffix(abspath)
    if suffix not in _SNIFFED:
        return _kind_of(abspath, rel, templates)
    # An agent definition is told by its path in its own project, which a new marker file
    # (pyproject.toml) changes without touching the file.
    context = (project_relative(abspath) or "") if suffix in (".md", ".markdown") else ""
    known = index.kind(abspath, st, context)
    if known != UNKNOWN:
        return known or None
    kind = _kind_of(abspath, rel, templates)
    index.note_kind(abspath, st, kind, context)
    return kind


_SNIFFED = frozenset({".yaml", ".yml", ".md", ".markdown", ".json", ".jsonl"})


def _suffix(path: str) -> str:
    """``Path(path).suffix.lower()`` without building a Path (discovery does this per file)."""
    name = posixpath.basename(path.replace(os.sep, "/"))
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def _kind_of(path: str, rel: str, templates: tuple[str, ...]) -> str | None:
    head: str | None = None
    suffix = _suffix(path)
    if suffix in (".yaml", ".yml", ".md", ".markdown"):
        try:
            with open(path, "rb") as fh:
                head = fh.read(_SNIFF).decode("utf-8", "replace")
        except OSError:
            head = None
    elif suffix in (".json", ".jsonl") and not os.path.basename(path).startswith(
            ("settings", "package")):
        head = _json_head(Path(path))
    kind = classify(rel, head, templates=templates, abspath=path)
    return kind.value if kind else None


def _json_head(p: Path) -> str | None:
    """The head of a small JSON/JSONL file (a prompt collection is small; data is not read)."""
    try:
        if p.stat().st_size > MAX_COLLECTION_BYTES:
            return None
        with p.open("rb") as fh:
            return fh.read(_JSON_SNIFF).decode("utf-8", "replace")
    except OSError:
        return None
