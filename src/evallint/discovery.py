"""Find the files to check: git-aware (respects .gitignore), config excludes, kinds."""

from __future__ import annotations

import json
import os
import posixpath
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evallint import globs
from evallint.classify import classify, project_relative
from evallint.config import DEFAULT_EXCLUDE, Config
from evallint.confine import refused, run_roots, within
from evallint.deadline import BudgetExceeded, time_limit
from evallint.fileindex import UNKNOWN, FileIndex
from evallint.safefs import read_fd

# Only these endings can ever be a kind evallint reads; everything else is skipped unread.
CANDIDATE_SUFFIXES = frozenset(
    {
        ".py", ".ipynb", ".j2", ".jinja", ".jinja2", ".mustache", ".hbs", ".handlebars",
        ".prompty", ".prompt", ".md", ".markdown", ".txt", ".xml", ".tmpl", ".tpl", ".yaml",
        ".yml", ".json", ".jsonl", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs",
    }
)
_JSON_SNIFF = 16384  # at least this much of a JSON file decides its kind, and its first record
_JSON_FIRST_READ = 65536  # read first; more only when the first record is longer


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
    return not any(within(real, r) for r in roots)


def discover(paths: list[str], config: Config, skipped: list[str] | None = None,
             index: FileIndex | None = None) -> list[FileTask]:
    """Every file under ``paths`` that evallint has a front-end for, in a stable order.

    Paths are joined as strings: on large trees ``Path.resolve``/``relpath`` per file cost
    more than everything else discovery does. Nothing is read outside the run's roots
    (:mod:`evallint.confine`): a path argument that leads out of the project through a
    symlink, and a symlink under a walked folder to a file outside every root, are left out
    and named in ``skipped``. With an ``index`` (a cached run), a file whose status is
    unchanged keeps the kind its head gave last time, unread.
    """
    index = index or FileIndex()
    note = skipped.append if skipped is not None else (lambda _msg: None)
    roots = run_roots(config.root, paths)
    exclude = list(config.exclude or DEFAULT_EXCLUDE) + list(config.extend_exclude)
    plain = {pat.rstrip("/") for pat in exclude if not (set(pat.rstrip("/")) & _GLOB_CHARS)}
    patterned = [pat for pat in exclude if pat.rstrip("/") not in plain]
    templates = tuple(config.templates)
    cwd = os.getcwd()
    root_prefix = os.path.relpath(config.root, cwd).replace(os.sep, "/")
    tasks: dict[str, FileTask] = {}
    for arg in paths:
        p = Path(arg)
        if not os.path.lexists(p):
            raise DiscoveryError(f"{arg}: no such file or directory")
        why = refused(p, config.root)
        if why is not None:
            note(f"{_display(p)}: {why}")
            continue
        if not p.exists():
            raise DiscoveryError(f"{arg}: no such file or directory")
        if p.is_file():
            if _escapes(os.path.abspath(p), roots):
                note(f"{_display(p)}: not read: a symlink to a file outside the project")
                continue
            kind = _kind(p, config, templates)
            if kind:
                abspath = os.path.abspath(p)
                tasks.setdefault(abspath, FileTask(_display(p), abspath, kind))
            continue
        base = _display(p)
        base_abs = os.path.abspath(p)
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
            kind = _indexed_kind(index, abspath, st, rel_root, templates, config)
            if kind:
                tasks.setdefault(abspath, FileTask(display, abspath, kind))
    return sorted(tasks.values(), key=lambda t: t.path)


def _in_git(folder: Path) -> bool:
    for parent in (folder.resolve(), *folder.resolve().parents):
        if (parent / ".git").exists():
            return True
    return False


def classify_path(p: Path, config: Config) -> str | None:
    """The kind of one path under this configuration (reads the file's text for YAML,
    markdown and JSON)."""
    return _kind(p, config, tuple(config.templates))


def _kind(p: Path, config: Config, templates: tuple[str, ...]) -> str | None:
    return _kind_of(str(p), config.root_relative(_display(p)), templates,
                    config.max_file_size, config.time_budget)


def _indexed_kind(index: FileIndex, abspath: str, st: os.stat_result, rel: str,
                  templates: tuple[str, ...], config: Config) -> str | None:
    """The kind of a file, from the index when its text would have to be read for it."""
    suffix = _suffix(abspath)
    if suffix not in _SNIFFED:
        return _kind_of(abspath, rel, templates, config.max_file_size, config.time_budget)
    # An agent definition is told by its path in its own project, which a new marker file
    # (pyproject.toml) changes without touching the file.
    context = (project_relative(abspath) or "") if suffix in (".md", ".markdown") else ""
    known = index.kind(abspath, st, context)
    if known != UNKNOWN:
        return known or None
    kind = _kind_of(abspath, rel, templates, config.max_file_size, config.time_budget)
    if kind != UNCLASSIFIED:  # a timeout depends on the machine's load: never remembered
        index.note_kind(abspath, st, kind, context)
    return kind


_SNIFFED = frozenset({".yaml", ".yml", ".md", ".markdown", ".json", ".jsonl"})
# The kind of a file whose text could not be read for its kind within the time budget: it is
# checked as EL901 (never dropped, never a stall outside the budget).
UNCLASSIFIED = "unclassified"
UNCLASSIFIED_MESSAGE = ("not analysed: reading it to tell its kind took longer than the time "
                        "budget of {budget:g} s per file (time-budget)")


def _suffix(path: str) -> str:
    """``Path(path).suffix.lower()`` without building a Path (discovery does this per file)."""
    name = posixpath.basename(path.replace(os.sep, "/"))
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def _kind_of(path: str, rel: str, templates: tuple[str, ...], limit: int,
             budget: float) -> str | None:
    """The kind of ``path``. YAML, markdown and JSON are told by their text, which is read
    whole up to ``limit`` bytes (padding must not push what decides past a window), within
    ``budget`` seconds like any other work on the file."""
    suffix = _suffix(path)
    sniffed = suffix in (".yaml", ".yml", ".md", ".markdown") or (
        suffix in (".json", ".jsonl")
        and not os.path.basename(path).startswith(("settings", "package")))
    if not sniffed:
        kind = classify(rel, None, templates=templates, abspath=path)
        return kind.value if kind else None
    try:
        with time_limit(budget):
            head = _sniff(path, suffix, limit)
            kind = classify(rel, head, templates=templates, abspath=path)
    except BudgetExceeded:
        return UNCLASSIFIED
    return kind.value if kind else None


def _sniff(path: str, suffix: str, limit: int) -> str | None:
    """The text a file's kind is decided on, or None when it cannot be read.

    YAML and markdown: the whole file up to ``limit`` bytes; beyond, the lines of the rest
    that can matter (YAML keys, ``{$name}`` placeholders), streamed, at most ``limit`` more
    bytes of them. JSON and JSONL: the first records, however long (a collection is told by
    them), within the first ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        if suffix in (".json", ".jsonl"):  # most JSON is data: read on only for a long record
            data = read_fd(fd, min(limit, _JSON_FIRST_READ))
            head = _first_records(data[:limit].decode("utf-8", "replace"), suffix)
            if head is None and len(data) > _JSON_FIRST_READ < limit:
                while len(data) <= limit:
                    chunk = os.read(fd, min(limit + 1 - len(data), 1 << 20))
                    if not chunk:
                        break
                    data += chunk
                head = _first_records(data[:limit].decode("utf-8", "replace"), suffix)
            return head if head is not None else data[:_JSON_SNIFF].decode("utf-8", "replace")
        data = read_fd(fd, limit)
        if len(data) <= limit:
            return data.decode("utf-8", "replace")
        keep = _KEY_LINE if suffix in (".yaml", ".yml") else _DOLLAR_LINE
        cut = data.rfind(b"\n", 0, limit) + 1
        kept = [data[:cut]]
        carry, room = data[cut:], limit
        left = os.fstat(fd).st_size - len(data)
        while room > 0 and left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
            lines = (carry + chunk).split(b"\n")
            carry = lines.pop()
            for line in lines:
                if len(line) <= 4096 and keep(line):
                    kept.append(line + b"\n")
                    room -= len(line) + 1
        return b"".join(kept).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _KEY_LINE(line: bytes) -> bool:
    """A YAML line that may hold a key (a comment or a plain value line cannot decide)."""
    return b":" in line and not line.lstrip().startswith(b"#")


def _DOLLAR_LINE(line: bytes) -> bool:
    return b"{$" in line


def _first_records(text: str, suffix: str) -> str | None:
    """What a JSON or JSONL file's kind is decided on: its first ``_JSON_SNIFF`` characters,
    and, when its first record is longer (padding must not push a judge prompt's template
    out of the window), that record's own top-level fields as JSON. None when the first
    record does not end within ``text`` (read on)."""
    if len(text) <= _JSON_SNIFF:
        return text
    found = _first_record(text, suffix)
    if found is None:
        return None
    end, record = found
    head = text[:_JSON_SNIFF]
    if end <= _JSON_SNIFF or not isinstance(record, dict):
        return head
    own = {k: v for k, v in record.items() if not isinstance(v, (dict, list)) or k == "messages"}
    return head + "\n" + json.dumps(own, ensure_ascii=False)


_DECODER = json.JSONDecoder()


def _first_record(text: str, suffix: str) -> tuple[int, object] | None:
    """Where the first record of ``text`` ends, and the record: the first line of JSONL;
    the first element of a top-level JSON array, the first member's value of an object
    when that is an object (an object of records), else the whole object (one record of
    plain fields). Decoded by ``json`` itself; None when it does not end in ``text``."""
    body = text.lstrip()
    at = len(text) - len(body)
    try:
        if suffix == ".jsonl":
            end = text.find("\n", at)
            if end == -1:
                return None
            return end, _DECODER.raw_decode(text[:end], at)[0]
        if body.startswith("["):
            value, end = _DECODER.raw_decode(text, _skip_blank(text, at + 1))
            return int(end), value
        if body.startswith("{"):
            _key, after = _DECODER.raw_decode(text, _skip_blank(text, at + 1))
            colon = _skip_blank(text, after)
            if text[colon:colon + 1] == ":":
                value, end = _DECODER.raw_decode(text, _skip_blank(text, colon + 1))
                if isinstance(value, dict):
                    return int(end), value
            value, end = _DECODER.raw_decode(text, at)
            return int(end), value
    except (ValueError, RecursionError):
        return None
    return None


def _skip_blank(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at
