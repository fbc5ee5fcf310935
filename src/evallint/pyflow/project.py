"""One analysis per project, shared by every Python check of a run."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path, PurePosixPath

from evallint.facts import Pos
from evallint.findings import Related
from evallint.pyflow.analysis import DEFAULT_EXTRACT, Analysis, Result
from evallint.pyflow.ir import PythonFacts
from evallint.registry import Context, Project

_LAST: tuple[Project, Result] | None = None


def result_for(project: Project, ctx: Context) -> Result:
    """The analysis of ``project`` (computed once, whichever Python check asks first; read
    from the cache folder when no Python input changed since the last run)."""
    global _LAST
    if _LAST is not None and _LAST[0] is project:
        return _LAST[1]
    facts = [f for f in project.files.values() if isinstance(f, PythonFacts)]
    extract = ctx.params("EL201").get("extract_functions", list(DEFAULT_EXTRACT))
    if not any(f.analyzed for f in facts):
        result = Result()
    else:
        key = _key(facts, ctx, extract)
        cached = _read(ctx.cache_dir, key) if ctx.cache_dir is not None else None
        if cached is not None:
            result = cached
        else:
            result = Analysis(facts, project.config, extract, load=_load).run()
            if ctx.cache_dir is not None:
                _write(ctx.cache_dir, key, result)
    _LAST = (project, result)
    return result


def _key(facts: list[PythonFacts], ctx: Context, extract: list[str]) -> str:
    from evallint.engine import _code_salt

    h = hashlib.sha256(_code_salt().encode())
    h.update(ctx.config.fingerprint().encode())
    h.update(repr(extract).encode())
    for f in sorted((f for f in facts if f.digest), key=lambda f: f.path):
        h.update(f"{f.path}\0{f.digest}\0".encode())
    return h.hexdigest()


def _read(folder: Path, key: str) -> Result | None:
    try:
        with open(folder / "pyflow" / key, "rb") as fh:
            result = pickle.load(fh)
    except Exception:
        return None
    return result if isinstance(result, Result) else None


def _write(folder: Path, key: str, result: Result) -> None:
    target = folder / "pyflow" / key
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        for old in target.parent.iterdir():  # one entry: the last run's
            old.unlink(missing_ok=True)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except OSError:
        pass


def _load(facts: PythonFacts) -> PythonFacts | None:
    """Parse a file the prefilter skipped; None when it cannot be read or parsed now."""
    from evallint.frontend import ParseError
    from evallint.frontends.python_front import build_facts
    from evallint.source import SourceError, read_source

    try:
        source = read_source(Path(facts.path), facts.path)
        return build_facts(source, force=True)
    except (SourceError, ParseError, RecursionError):
        return None


def rel(path: str, pos: Pos, message: str) -> Related:
    """A related place (in a notebook: the cell, with the line counted inside it)."""
    return Related(path, pos.line, pos.column, message, pos.cell)


def short(path: str) -> str:
    return PurePosixPath(path).name
