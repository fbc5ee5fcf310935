"""Quiet function runs, remembered from one solve of a part to the next.

Most functions of a part meet no LLM value when interpreted (926 of 1,104 runs in a large
evaluation library): their summary says only what they pass from parameters to their result,
and their runs are most of a part's interpretation time. After a one-line edit, the edited
part is solved again, and nearly all those runs would come out the same.

A quiet run is therefore recorded with everything it read that could differ in another solve:

- the text digest of its module and the project's module names (which decide how imports
  resolve);
- every lookup it made in the tables (another module's function, constant, owner), with the
  answer, and the text digest of each module an answer named;
- the summaries of the functions it called, as they were when it read them;
- the project-wide state a run without LLM values reads (``Analysis.quiet_epoch``); the
  static chat-object lookups it made found nothing, and their own lookups are among its own.

When the part is solved again, a function whose record still holds in the state of the solve
at the moment it is due to run gets its recorded summary without being interpreted: every
input of the interpretation is the same, so its result would be. Anything else, or a run that
touched an LLM value or changed project-wide state, is interpreted as before. The records are
kept per module in the result cache, under the module's digest; only the modules whose
records changed are written again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from evallint.pyflow.summaries import Lookup, Module, Summary, Tables

if TYPE_CHECKING:
    from evallint.pyflow.analysis import Analysis

FuncKey = tuple[str, str]
# (generator-context names of the module, chat objects exist, framework objects exist,
# framework runs exist): see ``Analysis.quiet_epoch``
Epoch = tuple[tuple[str, ...], bool, bool, bool]
_EMPTY = Summary()


@dataclass
class QuietRun:
    """What one quiet run of a function read, and the summary it produced."""

    epoch: Epoch
    prev_n: int  # LLM calls of the function's previous summary in that solve
    reads: tuple[int, ...]  # indices into ``QuietMemo.lookups``
    deps: tuple[FuncKey, ...]
    dep_sigs: tuple[tuple[object, ...], ...]  # each dependency's summary signature, as read
    summary: Summary
    callees: tuple[str, ...] = ()  # what its calls resolve to without labels, in order


@dataclass
class QuietMemo:
    """The quiet runs of one module's functions in the last solve of its part."""

    names: str  # the project's module names (``parts.names_digest``)
    digest: str  # the module's text digest
    digests: dict[str, str] = field(default_factory=dict)  # modules the lookups found
    lookups: list[Lookup] = field(default_factory=list)
    runs: dict[str, QuietRun] = field(default_factory=dict)  # function name -> run


# A module's stored records, by path and text digest (None: none stored).
Loader = Callable[[str, str], "QuietMemo | None"]


class Replay:
    """Checks the records of earlier solves and keeps those of this one."""

    def __init__(self, names: str, load: Loader) -> None:
        self.names = names
        self._load = load
        self._old: dict[str, QuietMemo | None] = {}
        self._checked: dict[tuple[str, int], bool] = {}  # (module, lookup index) -> holds
        # this solve's records: module -> function -> (run, the lookups it made)
        self._runs: dict[str, dict[str, tuple[QuietRun, tuple[Lookup, ...]]]] = {}
        self._dirty: set[str] = set()  # modules whose records changed
        self._digests: dict[str, str] = {}
        self._tables: Tables | None = None

    def use(self, tables: Tables) -> None:
        """The tables of the solve (again after it loads files): answers may change."""
        self._tables = tables
        self._digests = {m.path: m.facts.digest for m in tables.modules}
        self._checked = {}

    def _memo(self, path: str) -> QuietMemo | None:
        if path not in self._old:
            digest = self._digests.get(path, "")
            memo = self._load(path, digest) if digest else None
            ok = memo is not None and memo.names == self.names and memo.digest == digest
            self._old[path] = memo if ok else None
            if not ok:
                self._dirty.add(path)
        return self._old[path]

    def callees(self, key: FuncKey) -> tuple[str, ...] | None:
        """The recorded static callees of ``key`` (its module is unchanged), or None."""
        old = self._memo(key[0])
        run = old.runs.get(key[1]) if old is not None else None
        return run.callees if run is not None else None

    # ------------------------------------------------------------------ replaying

    def replay(self, an: Analysis, key: FuncKey, mod: Module) -> QuietRun | None:
        """The recorded run of ``key`` when all it read is as it was, else None."""
        old = self._memo(mod.path)
        run = old.runs.get(key[1]) if old is not None else None
        if run is None or old is None:
            return None
        if run.epoch != an.quiet_epoch(mod.path):
            return None
        prev = an.summaries.get(key)
        if (prev.n_llm if prev else 0) != run.prev_n:
            return None
        for i in run.reads:
            ok = self._checked.get((mod.path, i))
            if ok is None:
                ok = self._checked[(mod.path, i)] = self._holds(old, i)
            if not ok:
                return None
        for dep, sig in zip(run.deps, run.dep_sigs, strict=True):
            if (an.summaries.get(dep) or _EMPTY).signature() != sig:
                return None
        self._runs.setdefault(mod.path, {})[key[1]] = (
            run, tuple(old.lookups[i] for i in run.reads))
        return run

    def _holds(self, old: QuietMemo, i: int) -> bool:
        """Lookup ``i`` of ``old`` answers as it did, and what it found is unchanged."""
        if not 0 <= i < len(old.lookups) or self._tables is None:
            return False
        method, name, near, path, found = old.lookups[i]
        if self._tables.answer(method, name, near) != (path, found):
            return False
        return path is None or (bool(self._digests.get(path))
                                and old.digests.get(path) == self._digests.get(path))

    # ------------------------------------------------------------------ recording

    def record(self, key: FuncKey, run: QuietRun, trace: Iterable[Lookup]) -> None:
        """``run`` of ``key`` was quiet; ``trace``: the lookups it made."""
        self._runs.setdefault(key[0], {})[key[1]] = (run, tuple(sorted(trace)))
        self._dirty.add(key[0])

    def forget(self, key: FuncKey) -> None:
        """The last run of ``key`` was not quiet."""
        recorded = self._runs.get(key[0], {}).pop(key[1], None) is not None
        old = self._old.get(key[0])
        if recorded or (old is not None and key[1] in old.runs):
            self._dirty.add(key[0])

    def memos(self, quiet: Iterable[FuncKey]) -> dict[str, QuietMemo]:
        """The records of the modules whose records changed in this solve, each holding the
        functions whose last run was quiet."""
        keep: dict[str, list[str]] = {}
        for path, name in quiet:
            if path in self._dirty:
                keep.setdefault(path, []).append(name)
        out: dict[str, QuietMemo] = {}
        for path, names in keep.items():
            digest = self._digests.get(path, "")
            runs = self._runs.get(path, {})
            if not digest:
                continue
            memo = QuietMemo(self.names, digest)
            index: dict[Lookup, int] = {}
            for name in sorted(names):
                if name not in runs:
                    continue
                run, lookups = runs[name]
                reads = []
                for lookup in lookups:
                    i = index.get(lookup)
                    if i is None:
                        i = index[lookup] = len(memo.lookups)
                        memo.lookups.append(lookup)
                        found = lookup[3]
                        if found is not None and self._digests.get(found):
                            memo.digests[found] = self._digests[found]
                    reads.append(i)
                memo.runs[name] = replace(run, reads=tuple(reads))
            out[path] = memo
        return out
