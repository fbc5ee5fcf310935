"""Function runs, remembered from one solve of a part to the next.

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
input of the interpretation is the same, so its result would be.

A run that met LLM values, or changed the project-wide state, may read any of that state. It
is recorded *bound*: with ``Analysis.chain`` when it began (a digest of every change made to
the state so far in the solve, in order) and the changes it made, as the k-th run of its
function. In the next solve its k-th run replays it, making the same changes again, only at
the same chain: then the state is the very same. A function's run in the reporting pass is
recorded the same way (as its :data:`REPORT` run), the events it reported among its
changes. An edit that changes what the state holds (another model configured, a call moved)
therefore runs again everything after the first change. The records are kept per module
in the result cache, under the module's digest; only the modules whose records changed are
written again.
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
REPORT = "report"  # the run number of a function's run in the reporting pass


@dataclass
class RunRecord:
    """What one run of a function read, and the summary it produced; for a run that met LLM
    values (``touched``) or changed the project-wide state, also the state it began in and
    the changes it made (``bound``: it holds only in that very state)."""

    epoch: Epoch
    prev_n: int  # LLM calls of the function's previous summary in that solve
    reads: tuple[int, ...]  # indices into ``RunMemo.lookups``
    deps: tuple[FuncKey, ...]
    dep_sigs: tuple[tuple[object, ...], ...]  # each dependency's summary signature, as read
    summary: Summary
    callees: tuple[str, ...] = ()  # what its calls resolve to without labels, in order
    bound: bool = False
    touched: bool = False  # met LLM values: the reporting pass runs the function
    chain: str = ""  # ``Analysis.chain`` when it began: the whole project-wide state
    own: tuple[object, ...] = ()  # the signature of its own summary when it began
    ops: tuple[tuple[str, object, object], ...] = ()  # its changes to the state, in order
    structural: bool = False  # it found an evaluator by structure (it runs again)


@dataclass
class RunMemo:
    """The recorded runs of one module's functions in the last solve of its part."""

    names: str  # the project's module names (``parts.names_digest``)
    digest: str  # the module's text digest
    digests: dict[str, str] = field(default_factory=dict)  # modules the lookups found
    lookups: list[Lookup] = field(default_factory=list)
    # function name -> its last quiet run; ``name#k`` -> its k-th run, when bound;
    # ``name#report`` -> its reporting run
    runs: dict[str, RunRecord] = field(default_factory=dict)


# A module's stored records, by path and text digest (None: none stored).
Loader = Callable[[str, str], "RunMemo | None"]


class Replay:
    """Checks the records of earlier solves and keeps those of this one."""

    def __init__(self, names: str, load: Loader) -> None:
        self.names = names
        self._load = load
        self._old: dict[str, RunMemo | None] = {}
        self._checked: dict[tuple[str, int], bool] = {}  # (module, lookup index) -> holds
        # this solve's records: module -> function -> (run, the lookups it made)
        self._runs: dict[str, dict[str, tuple[RunRecord, tuple[Lookup, ...]]]] = {}
        self._dirty: set[str] = set()  # modules whose records changed
        self._digests: dict[str, str] = {}
        self._tables: Tables | None = None

    def use(self, tables: Tables) -> None:
        """The tables of the solve (again after it loads files): answers may change."""
        self._tables = tables
        self._digests = {m.path: m.facts.digest for m in tables.modules}
        self._checked = {}

    def _memo(self, path: str) -> RunMemo | None:
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
        if old is None:
            return None
        run = old.runs.get(key[1]) or old.runs.get(f"{key[1]}#1")
        return run.callees if run is not None else None

    # ------------------------------------------------------------------ replaying

    def replay(self, an: Analysis, key: FuncKey, mod: Module,
               nth: int | str = 1) -> RunRecord | None:
        """The recorded run of ``key`` (its ``nth`` in this solve, or its :data:`REPORT`ing
        run) when all it read is as it was, else None. A bound run is the ``nth`` of the last
        solve, which began in the same state if the solve has gone the same way so far; a
        quiet run, the last one."""
        old = self._memo(mod.path)
        if old is None:
            return None
        name = f"{key[1]}#{nth}"
        run = old.runs.get(name)
        if (run is None or run.chain != an.chain) and nth != REPORT:
            name = key[1]
            run = old.runs.get(name)
        if run is None:
            return None
        prev = an.summaries.get(key)
        if run.bound:
            if run.chain != an.chain or (prev or _EMPTY).signature() != run.own:
                return None
        elif run.epoch != an.quiet_epoch(mod.path) or (prev.n_llm if prev else 0) != run.prev_n:
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
        self._runs.setdefault(mod.path, {})[name] = (
            run, tuple(old.lookups[i] for i in run.reads))
        return run

    def _holds(self, old: RunMemo, i: int) -> bool:
        """Lookup ``i`` of ``old`` answers as it did, and what it found is unchanged."""
        if not 0 <= i < len(old.lookups) or self._tables is None:
            return False
        method, name, near, path, found = old.lookups[i]
        if self._tables.answer(method, name, near) != (path, found):
            return False
        return path is None or (bool(self._digests.get(path))
                                and old.digests.get(path) == self._digests.get(path))

    # ------------------------------------------------------------------ recording

    def record(self, key: FuncKey, run: RunRecord, trace: Iterable[Lookup],
               nth: int | str = 1) -> None:
        """``run``, the ``nth`` of ``key`` in this solve; ``trace``: the lookups it made."""
        # (a quiet run recorded earlier stays: what it read is checked as for any other)
        mine = self._runs.setdefault(key[0], {})
        mine[f"{key[1]}#{nth}" if run.bound else key[1]] = (run, tuple(sorted(trace, key=_order)))
        self._dirty.add(key[0])

    def forget(self, key: FuncKey) -> None:
        """The last run of ``key`` is not recorded (its eighth in the solve)."""
        recorded = self._runs.get(key[0], {}).pop(key[1], None) is not None
        old = self._old.get(key[0])
        if recorded or (old is not None and key[1] in old.runs):
            self._dirty.add(key[0])

    def memos(self, recorded: Iterable[FuncKey]) -> dict[str, RunMemo]:
        """The records of the modules whose records changed in this solve, each holding the
        runs of the ``recorded`` functions (those whose last run in the fixpoint was)."""
        keep: dict[str, set[str]] = {}
        for path, name in recorded:
            if path in self._dirty:
                keep.setdefault(path, set()).add(name)
        out: dict[str, RunMemo] = {}
        for path, names in keep.items():
            digest = self._digests.get(path, "")
            runs = self._runs.get(path, {})
            if not digest:
                continue
            memo = RunMemo(self.names, digest)
            index: dict[Lookup, int] = {}
            for name in sorted(runs):
                if name.partition("#")[0] not in names:
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


def _order(lookup: Lookup) -> tuple[str, ...]:
    """A lookup's place in a record (a lookup not answered has None where a path would be)."""
    return tuple("" if x is None else str(x) for x in lookup)
