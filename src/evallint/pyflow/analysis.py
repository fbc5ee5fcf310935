"""Project-level Python analysis: resolve calls, summarise helpers to a fixpoint, then follow
values from the generator's call to the evaluator's.

Each function is run by the abstract interpreter (:mod:`~evallint.pyflow.interp`) over
*labels* (see :class:`~evallint.pyflow.summaries.L`), callees first, until no summary changes;
quiet runs are replayed from their records (:mod:`~evallint.pyflow.replay`). One reporting pass
then collects the events (flows, LLM calls with roles and models, loops, parses, file opens)
that the checks in ``evallint/checks/python_*.py`` turn into findings.
"""
from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from functools import lru_cache
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from evallint import datacodec
from evallint.config import Config
from evallint.models import model_set
from evallint.pyflow import closures, frameworks, instances, llmcalls
from evallint.pyflow.build import TEXT_BLOCKS
from evallint.pyflow.callroles import own_role
from evallint.pyflow.cues import schema_has_score
from evallint.pyflow.interp import Interp
from evallint.pyflow.ir import Assign, FunctionIR, PythonFacts, Ref, Return, Val, walk_steps
from evallint.pyflow.parts import Part, builds_llm_object, relevant_modules
from evallint.pyflow.providers import (
    CAT,
    is_framework_package,
    package_marks,
    qualify,
)
from evallint.pyflow.relevance import DEFAULT_EXTRACT
from evallint.pyflow.replay import REPORT, Epoch, Replay, RunRecord
from evallint.pyflow.results import LoopEvent, Result
from evallint.pyflow.summaries import L, Lookup, Module, Summary, Tables, dotted_suffixes
from evallint.roles import Role


class Analysis:
    """Everything project-wide: tables, summaries, options; runs the interpreter."""

    def __init__(self, facts: list[PythonFacts], config: Config,
                 extract: Iterable[str] = DEFAULT_EXTRACT,
                 load: Callable[[PythonFacts], PythonFacts | None] | None = None,
                 part: Part | None = None,
                 tables: tuple[Tables, set[str]] | None = None,
                 replay: Replay | None = None) -> None:
        """``part``: solve only these modules (and what loading its files adds), reading the
        rest of ``facts`` for names; by default the whole project is one part. ``tables``: the
        tables of ``facts`` and their relevant modules, when already built (one per run).
        ``replay``: the quiet runs of the part's last solve, checked and reused, and those of
        this one recorded (:mod:`evallint.pyflow.replay`)."""
        CAT.use(config.model_docs)  # the project's own catalogue files, if any
        self.config = config
        self.extract = tuple(extract) + tuple(config.extract_functions)
        self._extractor: dict[str, bool] = {}
        self.summaries: dict[tuple[str, str], Summary] = {}
        # module-level names passed as a generator's system prompt / history, per file
        self._state: dict[str, Any] = {}  # the tables behind the read-only views below
        self.genctx: Mapping[str, dict[str, L]] = self._table("genctx", {})
        if tables is None:
            self.tables = Tables(facts)
            relevant = relevant_modules(self.tables)
        else:
            self.tables, relevant = tables
        # the relevant modules of the other parts: never solved here
        self.exclude = relevant - part.paths if part is not None else set()
        self.relevant = relevant - self.exclude
        self._stale: set[tuple[str, str]] = set()  # functions to run again (_load_importers)
        # callee -> the functions whose last run read its summary
        self._callers: dict[tuple[str, str], set[tuple[str, str]]] = {}
        # functions whose last run was quiet (``Interp.touched``), with the epoch it began at
        self._quiet: dict[tuple[str, str], tuple[int, bool]] = {}
        # functions whose last run met LLM values or changed the state, recorded or replayed
        self._bound: set[tuple[str, str]] = set()
        self.skipped = (list(part.skipped) if part is not None else
                        [f for f in facts if not f.analyzed and f.imported])
        self.load = load
        # evaluator calls (origin keys) whose output carries a numeric score: the prompt asks
        # for one, the structured-output class has a score field, or the code reads one
        self.scored: AbstractSet[tuple[str, str, int]] = self._table("scored", set())
        # helper call sites (origin keys) -> the keys of the dict it returns that are computed
        # in code (``Summary.computed_keys``)
        self.computed_fields: Mapping[tuple[str, str, int], frozenset[str]] = \
            self._table("computed_fields", {})
        # chat model objects (constructor or binding call key) -> (model, where it came from)
        self.chats: Mapping[tuple[str, str, int], tuple[str | None, str]] = \
            self._table("chats", {})
        # chat objects that are an evaluation framework's evaluator (uptrain ``EvalLLM``)
        self.framework: Mapping[tuple[str, str, int], str] = self._table("framework", {})
        # LLM calls that are evaluators by structure (their input holds another LLM call's
        # output and their result becomes a score, a verdict or a loop's decision): why
        self.structural: Mapping[tuple[str, str, int], str] = self._table("structural", {})
        # functions an evaluation framework runs as the task under evaluation (a dataset's
        # ``evaluate_sync(task)``): generators by structure, whatever they are called
        self.tasks: Mapping[tuple[str, str], str] = self._table("tasks", {})
        # functions an evaluation harness runs as a scorer on the task's output (see
        # :mod:`evallint.pyflow.harness`): evaluators by structure, whatever they are called
        self.scorer_fns: Mapping[tuple[str, str], str] = self._table("scorer_fns", {})
        # scorer function -> the task's output the harness hands it (its output parameter)
        self.harness_inputs: Mapping[tuple[str, str], frozenset[L]] = \
            self._table("harness_inputs", {})
        # function -> what its locals hold at the end of its run, for the functions nested in
        # it (see :mod:`evallint.pyflow.closures`)
        self.closures: Mapping[tuple[str, str], closures.Env] = self._table("closures", {})
        # LLM calls that read their own earlier output (a model refining its own work)
        self.self_fed: AbstractSet[tuple[str, str, int]] = self._table("self_fed", set())
        # chat model constructors whose model comes from a parameter of the function that
        # builds them (``def get_llm(role): return ChatOpenAI(model=cfg[role])``): each call
        # of that function makes another object, so two calls are not "one object"
        self.varying: AbstractSet[tuple[str, str, int]] = self._table("varying", set())
        self._static_chats: dict[tuple[str, str], frozenset[L]] = {}
        # key -> where an object is registered under it (see :meth:`registered`)
        self._registry: dict[str, list[tuple[Module, FunctionIR, Val]]] | None = None
        # what computing each answer looked up in the tables (for replay records)
        self._static_reads: dict[tuple[str, str], frozenset[Lookup]] = {}
        # framework objects (constructor key) that run an LLM, and their runs (call key ->
        # framework): see :mod:`evallint.pyflow.frameworks`
        self.fw_objects: Mapping[tuple[str, str, int], frameworks.FrameworkObject] = \
            self._table("fw_objects", {})
        self.fw_runs: Mapping[tuple[str, str, int], str] = self._table("fw_runs", {})
        # framework -> the model set for it as a whole (``dspy.configure(lm=...)``)
        self.ambient: Mapping[str, tuple[str | None, str]] = self._table("ambient", {})
        # graph state keys (``messages``) a generator node is run on: its message history,
        # which a node reading the state key as a whole reads (see ``flows.mark_state``)
        self.state_history: Mapping[str, L] = self._table("state_history", {})
        # graph state keys a node writes an LLM call's output to (``return {"draft":
        # reply.content}``): a node reading the key reads that output
        self.state_outputs: Mapping[str, frozenset[L]] = self._table("state_outputs", {})
        # state key -> the functions that read it (run again once a node has written it)
        self.state_readers: dict[str, set[tuple[str, str]]] = {}
        # module path -> whether its functions are graph nodes (flows; cleared with the tables)
        self.graph_modules: dict[str, bool] = {}
        self.result = Result()
        # The project-wide state above (but ``result``) changes only through ``set_state``,
        # ``add_state`` and ``set_genctx``, each change journaled: ``chain`` digests every
        # change so far, in order, and so names the state a run starts from (a run that met
        # LLM values is replayed only from the same state, see :mod:`evallint.pyflow.replay`).
        self.chain = ""
        self._ops: list[Op] | None = None  # the changes of the run being recorded
        self.replay = replay
        if replay is not None:
            replay.use(self.tables)

    # ------------------------------------------------------------------ project-wide state

    def _table(self, name: str, store: Any) -> Any:
        """A table of the project-wide state, kept here and shown read-only: every change
        goes through :meth:`set_state`, :meth:`add_state` or :meth:`set_genctx`, which
        journal it (a direct write raises, so no recogniser can change the state behind
        the replay cache's back)."""
        self._state[name] = store
        return _SetView(store) if isinstance(store, set) else MappingProxyType(store)

    def set_state(self, table: str, key: Any, value: Any, keep: bool = False) -> None:
        """``table[key] = value`` in one of the state's dicts (``chats``, ``framework``,
        ``structural``, ``fw_objects``, ``fw_runs``, ``ambient``, ``state_history``); ``keep``:
        only when ``key``
        is new. A write that changes nothing is no change."""
        store: dict[Any, Any] = self._state[table]
        old = store.get(key, _MISSING)
        if old is not _MISSING and (keep or old == value):
            return
        store[key] = value
        self._journal((table, key, value))

    def add_state(self, table: str, keys: Iterable[tuple[str, str, int]]) -> None:
        """Call keys into one of the state's sets (``scored``, ``self_fed``, ``varying``)."""
        store: set[tuple[str, str, int]] = self._state[table]
        for key in sorted(set(keys) - store):  # (in an order that is the same every time)
            store.add(key)
            self._journal((table, key, True))

    def set_genctx(self, path: str, name: str, label: L) -> None:
        """Module-level ``name`` of module ``path`` is given to a generator as context."""
        names = self._state["genctx"].setdefault(path, {})
        if names.get(name) == label:
            return
        names[name] = label
        self._journal(("genctx", (path, name), label))

    def add_result(self, kind: str, event: object) -> None:
        """One more of the reporting pass's events (``calls``, ``flows``, ``loops``,
        ``events`` of ``result``): later reporting runs read them too."""
        getattr(self.result, kind).append(event)
        self._journal(("result", kind, event))

    def apply(self, op: Op) -> None:
        """A change a recorded run made, made again."""
        table, key, value = op
        if table == "result":
            self.add_result(key, value)
        elif table == "genctx":
            self.set_genctx(key[0], key[1], value)
        elif table in ("scored", "self_fed", "varying"):
            self.add_state(table, (key,))
        else:
            self.set_state(table, key, value)

    def _journal(self, op: Op) -> None:
        if self._ops is not None:
            self._ops.append(op)
        if self.replay is None:  # nothing is recorded or replayed: no chain to keep
            return
        try:
            data = datacodec.canonical(op)
        except datacodec.CodecError:  # (never expected) a chain no record can match
            data = os.urandom(16)
        self.chain = hashlib.blake2b(self.chain.encode() + data, digest_size=16).hexdigest()

    # ------------------------------------------------------------------ relevance

    def _reexports_helper(self, mod: Module, helpers: set[tuple[str, str]]) -> bool:
        """Does ``mod`` import an LLM helper that its importers take from it (``import
        pkg.loop as loop`` then ``loop.solve()``, where ``pkg/loop.py`` imports ``solve``)?"""
        for target in mod.facts.imports.values():
            found = self.tables.function_name(target, mod.path)
            if found is not None and (found[0].path, found[1]) in helpers:
                return True
        return False

    def _load_importers(self) -> bool:
        """Parse the skipped files (no LLM words) that import an LLM helper of the project
        (a function whose summary calls an LLM or returns a chat model object), a module that
        defines one, or a module-level LLM object (an agent or chat model built in another
        module)."""
        if self.load is None or not self.skipped:
            return False
        # (a factory of chat model objects, ``getModel()``, is one: its callers run them)
        helpers = {key for key, s in self.summaries.items()
                   if s.llm or any(lb.kind == "chat" for lb in s.returns)}
        helper_modules = {path for path, _ in helpers}
        loaded: list[PythonFacts] = []
        rest: list[PythonFacts] = []
        tables = self.tables
        homes = self._model_homes()
        for f in self.skipped:
            # ``model=settings.JUDGE_MODEL`` with ``settings`` imported from a file that names
            # no LLM: the model's value is there
            hit = any(h == f.module or h.startswith(f.module + ".") for h in homes)
            for name in f.imported:
                if not tables.may_resolve(name):
                    continue
                found = tables.function_name(name, f.path)
                if found is not None and (found[0].path, found[1]) in helpers:
                    hit = True
                    break
                mod = tables.module(name, f.path)
                if mod is not None and mod.name.endswith(name) and (
                        mod.path in helper_modules or self._reexports_helper(mod, helpers)
                        or (mod.path in self.relevant and _holds_llm_object(mod))):
                    hit = True  # ``import graph`` then ``graph.llm.invoke(...)`` too
                    break
                const = tables.constant(name, f.path)
                if const is not None and const[0].path in self.relevant and \
                        builds_llm_object(const[0].facts, const[1]):
                    hit = True  # ``from agent import wikipedia_agent``: an LLM object
                    break
                if any((h := tables.function_name(f"{name}__{run}", f.path)) is not None
                       and (h[0].path, h[1]) in helpers
                       for run in CAT.step_runs):
                    hit = True  # ``import { checkNotes }``: a step whose work calls an LLM
                    break
                owner = tables.owner(name, f.path) if mod is None else None
                if owner is not None and owner.path in helper_modules and \
                        name.startswith(owner.name + ".") and any(
                        path == owner.path and fn.startswith(name[len(owner.name) + 1:] + ".")
                        for path, fn in helpers):
                    hit = True  # ``from bots.base import Bot``: a class with an LLM method
                    break
            if hit:
                x = self.load(f)
                if x is not None and x.analyzed:
                    loaded.append(x)
                    self.result.loaded.append(x.path)
            else:
                rest.append(f)
        self.skipped = rest
        if not loaded:
            return False
        # Functions whose imports now resolve elsewhere (or at all) run again, as do those of
        # modules importing them (constants and chat objects are read through imports);
        # summaries that change then reach their callers through the fixpoint. A lookup takes
        # the longest prefix of a name that names a module (by any dotted suffix of its
        # name): only an import with a prefix naming a module loaded now may move.
        added = _Names(f.module for f in loaded)
        before = {m.path: self._import_targets(m) for m in self.tables.modules
                  if added.prefix_of_any(m.facts.imports.values())}
        self.tables = Tables([m.facts for m in self.tables.modules] + loaded)
        self.graph_modules.clear()
        # static chat answers (and the lookups behind them) were read off the old tables
        self._static_chats.clear()
        self._static_reads.clear()
        self._registry = None
        if self.replay is not None:
            self.replay.use(self.tables)
        self.relevant = (relevant_modules(self.tables) | {f.path for f in loaded}) - self.exclude
        by_path = {m.path: m for m in self.tables.modules}
        stale = {f.path for f in loaded}
        stale |= {path for path, old in before.items()
                  if self._import_targets(by_path[path]) != old}
        frontier = set(stale)
        while frontier:  # the importers of what went stale, and theirs
            names = _Names(by_path[path].name for path in frontier)
            importers: set[str] = set()
            for m in self.tables.modules:
                if m.path in stale:
                    continue
                for value in m.facts.imports.values():
                    if names.prefix_of(value):
                        owner = self.tables.owner(value, m.path)
                        if owner is not None and owner.path in frontier:
                            importers.add(m.path)
                            break
            stale |= importers
            frontier = importers
        self._stale = {(m.path, f) for m in self.tables.modules if m.path in stale
                       for f in m.facts.function_names}
        return True

    def _model_homes(self) -> set[str]:
        """What the model arguments of the relevant modules' calls import (the qualified
        names their roots are imported as), and what the constants found there import in
        turn (``MODEL_CONFIG = {analysis: ANALYSIS_MODEL}`` with ``ANALYSIS_MODEL`` from a
        file of constants: each round of loading reaches one more of them)."""
        homes = {r for m in self.tables.modules if m.path in self.relevant
                 for r in m.facts.model_reads}
        tables = self.tables
        todo = sorted(homes)
        while todo and len(homes) < 512:
            h = todo.pop()
            found = tables.constant(h) if tables.may_resolve(h) else None
            if found is None:
                continue
            mod, name = found
            val = mod.facts.constants.get(name)
            for n in val.names if val is not None else ():
                root, _, rest = n.partition(".")
                target = mod.facts.imports.get(root)
                q = f"{target}.{rest}" if target and rest else target
                if q and q not in homes:
                    homes.add(q)
                    todo.append(q)
        return homes

    def _import_targets(self, m: Module) -> tuple[str | None, ...]:
        """The module each import of ``m`` resolves to in the current tables."""
        tables = self.tables
        owners = (tables.owner(value, m.path) if tables.may_resolve(value) else None
                  for value in m.facts.imports.values())
        return tuple(o.path if o is not None else None for o in owners)

    def static_chat(self, mod: Module, name: str, depth: int = 0) -> frozenset[L]:
        """Chat model labels of a module-level name or ``Class.attr`` (``llm = ChatOpenAI(...)``,
        ``chain = prompt | llm``, ``from setup import llm``), without interpreting the module."""
        key = (mod.path, name)
        hit = self._static_chats.get(key)
        outer = self.tables.trace
        if hit is not None:
            # a function's run that reads this name read what computing it looked up
            if outer is not None:
                outer.update(self._static_reads.get(key, ()))
            return hit
        self._static_chats[key] = frozenset()  # cycles
        out: frozenset[L] = frozenset()
        mine: set[Lookup] = set()
        self.tables.trace = mine
        try:
            # (the eager name set first: a name the module does not bind decodes nothing)
            val = mod.facts.constants.get(name) if name in mod.facts.constant_names else None
            if depth < 8 and val is not None:
                fn = mod.facts.functions.get(mod.facts.owners.get(name, ""))
                if fn is None and "." in name:  # ``self.rater = prompt | self.llm``: __init__'s
                    fn = mod.facts.functions.get(f"{name.split('.')[0]}.__init__")
                out = self.static_chat_val(mod, fn, val, depth + 1)
            elif depth < 8 and name.partition(".")[0] in mod.facts.imports:
                # ``from setup import llm``, or ``import setup`` read as ``setup.llm``
                root, _, rest = name.partition(".")
                target = mod.facts.imports[root]
                found = self.tables.constant(f"{target}.{rest}" if rest else target, mod.path)
                if found is not None:
                    out = self.static_chat(found[0], found[1], depth + 1)
            elif depth < 8 and name.count(".") == 1:
                out = self._inherited_chat(mod, name, depth)
        finally:
            self.tables.trace = outer
        self._static_chats[key] = out
        self._static_reads[key] = frozenset(mine)
        if outer is not None:
            outer.update(mine)
        return out

    def interp_of(self, mod: Module, name: str) -> Interp | None:
        """A quiet interpreter of the function that builds the module constant ``name`` (the
        module body, or a constructor for ``Class.attr``), to read what it was built with."""
        fn = mod.facts.functions.get(mod.facts.owners.get(name, ""))
        return Interp(self, mod, fn, report=False) if fn is not None else None

    def registered(self, method: str, key: str) -> frozenset[L]:
        """``mastra.getAgent("judge")``: the object registered under ``key`` on the
        framework's application object (``new Mastra({agents: {judge}})``, the catalogue's
        ``registry``), wherever in the project that is."""
        fw, classes, keyword = CAT.registries[method]
        if self._registry is None:
            self._registry = {}
            roots = {p.split(".")[0] for p in CAT.frameworks[fw].packages}
            for m in self.tables.modules:
                if roots.isdisjoint(m.facts.fw_roots):
                    continue  # (eager: no code tree decoded for a module that never calls it)
                for fn in m.facts.functions.values():
                    for c in fn.calls:
                        if c.func.rsplit(".", 1)[-1] not in classes:
                            continue
                        owner = CAT.framework_of(qualify(c.func, m.facts.imports))
                        v = c.kw(keyword)
                        if owner is None or owner.id != fw or v is None:
                            continue
                        for k, held in v.keys:
                            self._registry.setdefault(k, []).append((m, fn, held))
        out: set[L] = set()
        for m, fn, held in self._registry.get(key, ()):
            self.tables.module(m.name, m.path)  # (the run read that module: see replay)
            out |= self.static_chat_val(m, fn, held, 1)
        return frozenset(out)

    def _inherited_chat(self, mod: Module, name: str, depth: int) -> frozenset[L]:
        """``Class.attr`` set by a base class (``self.model`` made in the constructor of the
        class it extends, here or in the module it is imported from)."""
        cls, attr = name.split(".")
        bases = mod.facts.constants.get(f"{cls}.__bases__")
        for base in bases.names if bases is not None else ():
            target = mod.facts.imports.get(base.split(".")[0])
            if target is None:  # a class of this module
                found = self.static_chat(mod, f"{base}.{attr}", depth + 1)
            else:  # ``import { Example } from "./base"``: the class of another module
                home = self.tables.owner(target, mod.path)
                found = self.static_chat(home, f"{target.rsplit('.', 1)[-1]}.{attr}",
                                         depth + 1) if home is not None else frozenset()
            if found:
                return found
        return frozenset()

    def static_chat_val(self, mod: Module, fn: FunctionIR | None, val: Val,
                        depth: int) -> frozenset[L]:
        out: set[L] = set()
        for n in val.names:
            root = n.partition(".")[0]
            if fn is not None and root in fn.locals and root not in ("self", "cls"):
                # a local of the function that builds the object (``const critic =
                # makeCritic()`` before ``new Mastra({agents: {critic}})`` in ``init()``):
                # what it was last set to
                for held in _assigned(fn).get(root, ())[-1:] if depth < 8 else ():
                    out |= self.static_chat_val(mod, fn, held, depth + 1)
                continue
            out |= self.static_chat(mod, _static_name(n, fn), depth)
        if fn is None:
            return frozenset(out)
        for cid in val.calls:
            if cid >= len(fn.calls):
                continue
            c = fn.calls[cid]
            short = c.func.rsplit(".", 1)[-1]
            root = c.func.split(".")[0]
            qual = qualify(c.func, mod.facts.imports) if root in mod.facts.imports else ""
            row = CAT.object_row(qual) if qual else None
            if row is not None and row.kind == "chat":
                out |= llmcalls.chat_object(
                    Interp(self, mod, fn, report=False), c, mod, fn,
                    lambda v: self.resolve_ref(v.ref if v is not None else None, mod, None))
            elif row is not None and row.kind == "evaluator":
                out |= llmcalls.framework_object(Interp(self, mod, fn, report=False), c, row)
            elif row is not None and frameworks.is_framework_object(row) and \
                    self.framework_name(qual, mod.path):
                out |= frameworks.make_object(Interp(self, mod, fn, report=False), c, row,
                                              mod.path, fn.name)
            elif short in CAT.derive_methods:
                base = c.func.rsplit(".", 1)[0]
                inner = (self.static_chat_val(mod, fn, c.recv, depth + 1)
                         if c.recv is not None else
                         self.static_chat(mod, _static_name(base, fn), depth + 1))
                chats = [lb for lb in inner if lb.kind == "chat"]
                if chats:
                    out |= llmcalls.chat_bound(Interp(self, mod, fn, report=False), c, chats,
                                               mod, fn)
            elif row is None and depth < 8:
                out |= self._factory_chat(mod, fn, c.func, depth)
        return frozenset(out)

    def _factory_chat(self, mod: Module, fn: FunctionIR, func: str, depth: int
                      ) -> frozenset[L]:
        """``judge = make_judge()`` at module level or in a constructor, where the project's
        own ``make_judge`` returns ``Agent(...)``: what the factory returns, read from its
        ``return`` statements (a local it returns read from its assignment)."""
        qual = self._static_callee(mod, fn, func)
        found = self.tables.function(qual, mod.path) if qual else None
        if found is None or found[1] is fn:
            return frozenset()
        home, factory = found
        out: set[L] = set()
        for step in walk_steps(factory.body):
            if isinstance(step, Return):  # (a local it returns: read from its assignment)
                out |= self.static_chat_val(home, factory, step.value, depth + 1)
        return frozenset(lb for lb in out if lb.kind == "chat")

    def framework_name(self, qualified: str, near: str) -> bool:
        """``agents.Agent`` names the SDK unless the project's own ``agents`` package is
        something else (see :func:`~evallint.pyflow.providers.is_framework_package`); in a
        framework's own repository its package is the framework."""
        root = qualified.split(".")[0]
        if not package_marks(root):
            return True
        package = self.tables.module(root, near)
        return is_framework_package(root, package.facts if package is not None else None)

    def chat_schema_scored(self, mod: Module, vals: tuple[Val, ...]) -> bool:
        return schema_has_score(mod.facts.constants, vals)

    def summary(self, mod: Module, fn: FunctionIR) -> Summary:
        return self.summaries.get((mod.path, fn.name)) or Summary()

    def run(self) -> Result:
        """Summaries to a fixpoint, parse skipped importers of LLM helpers (and repeat), then
        one reporting pass."""
        self._fixpoint()
        for _ in range(4):
            if not self._load_importers():
                break
            self._fixpoint()
        for _ in range(2):  # a node that reads a state key another node wrote, once more
            seen = sum(len(v) for v in self.state_outputs.values())
            readers = {f for k in self.state_outputs
                       for f in self.state_readers.get(k.rpartition("|")[2], ())}
            if not readers:
                break
            self._stale |= readers
            self.state_readers = {}
            self._fixpoint()
            if sum(len(v) for v in self.state_outputs.values()) == seen:
                break
        for mod in self.tables.modules:
            if mod.path not in self.relevant:
                continue
            # A function whose last run met no LLM value, call or sink, under the same
            # project-wide state, has nothing to report: its reporting run would be the same.
            # (A module of quiet functions only is not even decoded.)
            epoch = self._epoch(mod.path)
            if all(self._quiet.get((mod.path, name)) == epoch
                   for name in mod.facts.function_order):
                continue
            for name in mod.facts.function_order:  # (a run may change the epoch)
                if self._quiet.get((mod.path, name)) != self._epoch(mod.path):
                    self._report(mod, name)
        self._dedupe()
        return self.result

    def _report(self, mod: Module, name: str) -> None:
        """The reporting run of function ``name``: replayed from the last solve when it
        begins in the same state (``chain``: the fixpoint and the reporting runs before it
        went the same way) and what it read holds, else interpreted and recorded."""
        key = (mod.path, name)
        rep = self.replay
        if rep is None:
            Interp(self, mod, mod.facts.functions[name], report=True).run()
            return
        replayed = rep.replay(self, key, mod, REPORT)
        if replayed is not None:
            for op in replayed.ops:
                self.apply(op)
            return
        interp = Interp(self, mod, mod.facts.functions[name], report=True)
        _, run, trace = self._recorded(key, mod, interp, bound=True)
        rep.record(key, replace(run, summary=_EMPTY_SUMMARY), trace, REPORT)

    def _recorded(self, key: tuple[str, str], mod: Module, interp: Interp,
                  bound: bool = False) -> tuple[Summary, RunRecord, set[Lookup]]:
        """Run ``interp`` watching what it reads and changes: its summary, its record, and
        the lookups it made. A quiet run holds in any state with the same epoch; one that met
        LLM values or changed the state (or any, with ``bound``) only in the very state it
        began in."""
        quiet_epoch, chain = self.quiet_epoch(mod.path), self.chain
        own = (self.summaries.get(key) or _EMPTY_SUMMARY).signature()
        trace: set[Lookup] = set()
        ops: list[Op] = []
        self.tables.trace, self._ops = trace, ops
        try:
            new = interp.run()
        finally:
            self.tables.trace, self._ops = None, None
        bound = bound or interp.touched or bool(ops)
        deps = tuple(sorted(interp.deps))
        return new, RunRecord(
            quiet_epoch, interp.prev_n, (), deps,
            tuple((self.summaries.get(d) or _EMPTY_SUMMARY).signature() for d in deps),
            new, () if interp.report else self._callee_names(mod, interp.fn), bound,
            interp.touched, chain if bound else "", own if bound else (), tuple(ops),
            interp.structural), trace

    def recorded_keys(self) -> set[tuple[str, str]]:
        """The functions whose last run in the fixpoint can be replayed in the next solve."""
        return set(self._quiet) | self._bound

    def _epoch(self, path: str) -> tuple[int, bool]:
        """The project-wide state a function of module ``path`` without LLM values reads: its
        own module's generator-context names (``Interp.read``), and whether any chat object
        exists (which turns on the static chat lookups; their answers do not depend on which
        chats exist). Both only grow. Everything else it could read needs an LLM value first."""
        names = self.genctx.get(path)
        return ((len(names) if names else 0) + len(self.state_history)
                + sum(len(v) for v in self.state_outputs.values())), bool(self.chats)

    def quiet_epoch(self, path: str) -> Epoch:
        """Everything project-wide that a function of module ``path`` reads while it meets
        no LLM value (as :meth:`_epoch`, with the names themselves, and whether framework
        objects or runs exist: ``Interp.access`` and ``llmcalls.dispatch`` look them up only
        then)."""
        names = self.genctx.get(path)
        return ((tuple(sorted(names)) if names else ()) +
                tuple(f"<state>.{k}" for k in sorted(self.state_history)) +
                tuple(f"<out>.{k}.{len(v)}" for k, v in sorted(self.state_outputs.items())),
                bool(self.chats),
                bool(self.fw_objects), bool(self.fw_runs))

    def _fixpoint(self) -> None:
        """A worklist over the call graph: a function is re-run when a callee's summary
        changes (or its own, which can change its calls' roles)."""
        funcs = {(m.path, name): m for m in self.tables.modules
                 if m.path in self.relevant for name in m.facts.function_order}
        # Again after loading importers: only what is new or may see them differently.
        queue = deque(k for k in self._callees_first(funcs)
                      if k not in self.summaries or k in self._stale)
        queued = set(queue)
        self._stale = set()
        callers = self._callers
        rep = self.replay
        runs: dict[tuple[str, str], int] = {}
        while queue:
            key = queue.popleft()
            queued.discard(key)
            runs[key] = runs.get(key, 0) + 1
            if runs[key] > 8:
                continue
            mod = funcs[key]
            epoch = self._epoch(mod.path)
            env = self.closures.get(key)
            replayed = (rep.replay(self, key, mod, runs[key]) if rep is not None and runs[key] < 8
                        else None)
            if replayed is not None:
                new, deps = replayed.summary, set(replayed.deps)
                if replayed.bound:  # its changes to the state again, in the same order
                    for op in replayed.ops:
                        self.apply(op)
                    self._bound.add(key)
                    if replayed.structural and key not in queued:
                        queue.append(key)
                        queued.add(key)
                else:
                    self._bound.discard(key)
                if replayed.touched:
                    self._quiet.pop(key, None)
                else:
                    self._quiet[key] = epoch
            else:
                new, deps = self._interpret(key, mod, mod.facts.functions[key[1]], queue,
                                            queued, epoch, runs[key])
            for dep in deps:
                callers.setdefault(dep, set()).add(key)
            if self.closures.get(key) != env:  # its nested functions read its locals
                for inner in closures.nested_in(mod, key[1]):
                    if (key[0], inner) not in queued and (key[0], inner) in funcs:
                        queue.append((key[0], inner))
                        queued.add((key[0], inner))
            # Before its first run a function reads as the empty summary (``summary()``), to
            # its callers and to itself: a first result equal to that changes nothing.
            old = self.summaries.get(key) or _EMPTY_SUMMARY
            self.summaries[key] = new
            if old.signature() != new.signature():
                again = list(callers.get(key, ()))
                # A function reads its own summary only through recursion and through the
                # count of its LLM calls (see ``callroles.role_of``).
                if key in deps or ((old.n_llm <= 1) != (new.n_llm <= 1)
                                   and own_role(self, mod, key[1])[0] is not Role.UNKNOWN):
                    again.append(key)
                for caller in again:
                    if caller not in queued and caller in funcs:
                        queue.append(caller)
                        queued.add(caller)

    def _interpret(self, key: tuple[str, str], mod: Module, fn: FunctionIR,
                   queue: deque[tuple[str, str]], queued: set[tuple[str, str]],
                   epoch: tuple[int, bool], run: int) -> tuple[Summary, set[tuple[str, str]]]:
        """One run of ``key`` in the fixpoint: its summary and the functions whose summaries
        it read. The run is recorded for the next solve when ``replay`` is on (but the last
        run of the eight a function may have)."""
        rep = self.replay
        interp = Interp(self, mod, fn, report=False)
        self._bound.discard(key)
        if rep is None:
            new = interp.run()
        else:
            new, record, trace = self._recorded(key, mod, interp)
            if run == 8:
                rep.forget(key)
            else:
                rep.record(key, record, trace, run)
                if record.bound:
                    self._bound.add(key)
        if interp.structural and key not in queued:  # its calls' roles changed: again
            queue.append(key)
            queued.add(key)
        if interp.touched or run == 8:
            self._quiet.pop(key, None)
        else:
            self._quiet[key] = epoch
        return new, interp.deps

    def _callee_names(self, mod: Module, fn: FunctionIR) -> tuple[str, ...]:
        """What ``fn``'s calls resolve to without labels, in order (see :meth:`_callees_first`)."""
        return tuple(name for c in fn.calls
                     if (name := self._static_callee(mod, fn, c.func)) is not None)

    def _callees_first(self, funcs: dict[tuple[str, str], Module]) -> list[tuple[str, str]]:
        """``funcs`` ordered so that a function comes after the project functions it calls
        (as far as names resolve without interpreting; cycles in any order), which lets most
        functions reach their final summary on their first run. A function with a replay
        record lists its calls from there: its module's code tree stays undecoded."""
        graph: dict[tuple[str, str], list[tuple[str, str]]] = {}
        rep = self.replay
        for key, mod in funcs.items():
            out: list[tuple[str, str]] = []
            names = rep.callees(key) if rep is not None else None
            if names is None:
                names = self._callee_names(mod, mod.facts.functions[key[1]])
            for name in names:
                if not self.tables.may_resolve(name):
                    continue
                found = self.tables.function_name(name, mod.path)
                if found is not None and (found[0].path, found[1]) in funcs:
                    out.append((found[0].path, found[1]))
            graph[key] = out
        order: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for start in funcs:
            if start in seen:
                continue
            seen.add(start)
            stack = [(start, iter(graph[start]))]
            while stack:
                node, it = stack[-1]
                for nxt in it:
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append((nxt, iter(graph[nxt])))
                        break
                else:
                    stack.pop()
                    order.append(node)
        # Module bodies first: they build the objects (a chat model, an agent) that functions
        # read as globals, as importing the module does before any function runs; a body that
        # calls its functions runs again when their summaries arrive.
        return [k for k in order if k[1] == "<module>"] + [k for k in order
                                                           if k[1] != "<module>"]

    @staticmethod
    def _static_callee(mod: Module, fn: FunctionIR, func: str) -> str | None:
        """The qualified name a call resolves to without labels (:meth:`Interp.resolve`)."""
        if not func or func.startswith("<expr>"):
            return None
        root, _, rest = func.partition(".")
        facts = mod.facts
        if root in fn.locals or any(p.name == root for p in fn.params):
            if rest and root in ("self", "cls") and fn.cls:
                return f"{mod.name}.{fn.cls}.{rest}"
            return None
        if root in facts.imports:
            target = facts.imports[root]
            return f"{target}.{rest}" if rest else target
        if f"{fn.name}.{root}" in facts.function_names:
            return f"{mod.name}.{fn.name}.{func}"
        if root in facts.function_names:
            return f"{mod.name}.{func}"
        return None

    def _dedupe(self) -> None:
        """Loops are interpreted twice: keep one record per place."""
        r = self.result
        r.calls = list({(c.path, c.function, c.pos, c.callee, c.origin.key if c.origin
                         else None): c for c in r.calls}.values())
        r.events = list({(e.code, e.path, e.pos): e for e in r.events}.values())
        r.loops = list({(lp.path, lp.function, lp.pos): LoopEvent(
            lp.path, lp.function, lp.pos, lp.kind, lp.bounded, tuple(dict.fromkeys(lp.gen)),
            tuple(dict.fromkeys(lp.ev))) for lp in r.loops}.values())

    # ------------------------------------------------------------------ config roles

    def configured_role(self, *names: str) -> tuple[Role, str] | None:
        for name in names:
            if not name:
                continue
            short = name.rsplit(".", 1)[-1]
            for pat in self.config.evaluator_functions:
                if fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(short, pat):
                    return Role.EVALUATOR, f"config evaluator-functions matches `{short}`"
            for pat in self.config.generator_functions:
                if fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(short, pat):
                    return Role.GENERATOR, f"config generator-functions matches `{short}`"
        return None

    def is_extractor(self, func: str) -> bool:
        if func == TEXT_BLOCKS:  # a comprehension that keeps the text blocks (build.py)
            return True
        hit = self._extractor.get(func)
        if hit is None:
            short_re, full_re = _extract_patterns(self.extract)
            hit = bool(short_re.match(func.rsplit(".", 1)[-1].lower()) or full_re.match(func))
            self._extractor[func] = hit
        return hit

    # ------------------------------------------------------------------ models

    def _each_model(self, ref: Ref, mod: Module, depth: int) -> tuple[str | None, str]:
        """The models of a list a loop runs a call on (``CONTESTANTS = ["gpt-4o", ...]``): a
        list display of model ids, here or imported."""
        if ref[0] == "strs":
            return _model_list(ref[1]), "each model of the list the loop goes through"
        if ref[0] != "name":
            return None, ""
        path = str(ref[1])
        val = mod.facts.constants.get(path) if path in mod.facts.constant_names else None
        root, _, rest = path.partition(".")
        if val is None and root in mod.facts.imports:  # ``ENTRANTS``, ``settings.ENTRANTS``
            target = mod.facts.imports[root]
            found = self.tables.constant(f"{target}.{rest}" if rest else target, mod.path)
            val = found[0].facts.constants[found[1]] if found is not None else None
        if val is None or val.names or val.calls or val.ref is not None:
            return None, ""
        return _model_list(val.strings), f"each model of `{path}`, which the loop goes through"

    def resolve_ref(self, ref: Ref | None, mod: Module, cls: str | None,
                    depth: int = 0) -> tuple[str | None, str]:
        """A model string for a symbolic ref, and where it came from (for messages)."""
        if ref is None or depth > 12:
            return None, ""
        if ref[0] == "lit":
            return str(ref[1]), ""
        if ref[0] == "each":  # each model of a list in turn: the set of them
            return self._each_model(ref[1], mod, depth)
        if ref[0] == "or":  # ``model || "gpt-4o"``: the value when it resolves, else the literal
            value, how = self.resolve_ref(ref[1], mod, cls, depth + 1)
            if value is not None:
                return value, how
            return str(ref[2][1]), f"the default after `{ref[1][1]} ||`" \
                if ref[1] and ref[1][0] == "name" else "the default after `||`"
        if ref[0] == "fmt":  # f"openai/{cfg.model}": the text around the value it resolves to
            value, how = self.resolve_ref(ref[2], mod, cls, depth + 1)
            return (f"{ref[1]}{value}{ref[3]}", how) if value is not None else (None, "")
        if ref[0] == "env":
            value, how = self.resolve_ref(ref[2], mod, cls, depth + 1)
            if value is None:
                documented = next(((v, shown) for k, v, shown in mod.facts.env_defaults
                                   if k == ref[1]), None)
                if documented is None:
                    return None, ""
                return documented[0], f"${ref[1]} in {documented[1]}, the documented setup"
            return value, f"default of ${ref[1]}" + (f", {how}" if how else "")
        if ref[0] == "name":
            inst = instances.as_instance(self, ref, mod)
            if inst is not None:
                ref, mod = inst[0], inst[1]
        if ref[0] == "new":
            return self.attr_default(ref, mod, depth)
        if ref[0] != "name":
            return None, ""
        path = str(ref[1])
        consts = mod.facts.constants
        candidates = [path]
        if cls and path.startswith(("self.", "cls.")):
            candidates.insert(0, f"{cls}.{path.split('.', 1)[1]}")
        for cand in candidates:
            if cand in consts:
                val = consts[cand]
                value, how = self.resolve_ref(val.ref, mod, cand.split(".")[0] if "." in cand
                                              else cls, depth + 1)
                if value is not None:
                    return value, f"{cand} = {how}" if how else cand
                value, how = self.init_default(val.ref, mod, cand, depth)
                if value is not None:
                    return value, how
        root, _, rest = path.partition(".")
        target = mod.facts.imports.get(root)
        if target:
            qual = f"{target}.{rest}" if rest else target
            found = self.tables.constant(qual, mod.path)
            if found is not None:
                other, name = found
                value, how = self.resolve_ref(other.facts.constants[name].ref, other, None,
                                              depth + 1)
                if value is not None:
                    return value, f"{name} in {PurePosixPath(other.path).name}" + (
                        f" = {how}" if how else "")
        return None, ""


    def attr_default(self, ref: Ref, mod: Module, depth: int) -> tuple[str | None, str]:
        """``get_settings().llm_model``: the default the class body gives the attribute."""
        found = instances.instance_attr(self, ref, mod)
        if found is None or found[1] not in found[0].facts.constant_names:
            return None, ""
        owner, key = found
        value, how = self.resolve_ref(owner.facts.constants[key].ref, owner,
                                      key.split(".")[0], depth + 1)
        if value is None:
            return None, ""
        return value, f"{key} in {PurePosixPath(owner.path).name}" + (f" = {how}" if how
                                                                        else "")

    def init_default(self, ref: Ref | None, mod: Module, attr: str,
                     depth: int) -> tuple[str | None, str]:
        """``self.model = model`` in ``__init__(self, model="llama-3")``: the attribute
        ``Class.model`` holds that parameter's default, so every method reading
        ``self.model`` runs on it unless a caller passes another."""
        cls = attr.split(".")[0]
        init = mod.facts.functions.get(f"{cls}.__init__")
        if init is None or ref is None or ref[0] != "name":
            return None, ""
        for p in init.params:
            if p.name == ref[1] and p.default is not None:
                value, how = self.resolve_ref(p.default.ref, mod, cls, depth + 1)
                if value is not None:
                    return value, (f"{attr}, default of `{p.name}` in `{cls}.__init__()`"
                                   + (f", {how}" if how else ""))
        return None, ""


def _holds_llm_object(mod: Module) -> bool:
    """Does the module build an agent or a chat model at module level (``llm = ChatOpenAI()``,
    ``chain = prompt | llm``)? A file importing the module may run it as ``mod.llm``."""
    owners = mod.facts.owners
    return any(owners[n] == "<module>" and builds_llm_object(mod.facts, n) for n in owners)


class _Names:
    """Module names by every dotted suffix, as the tables index them: which dotted names a
    lookup could resolve to one of these modules (a prefix of the name is such a suffix)."""

    def __init__(self, modules: Iterable[str]) -> None:
        self.suffixes = {s for name in modules for s in dotted_suffixes(name)}
        self.firsts = {s.partition(".")[0] for s in self.suffixes}

    def prefix_of(self, value: str) -> bool:
        if value.partition(".")[0] not in self.firsts:  # (most names stop here)
            return False
        parts = value.split(".")
        return any(".".join(parts[:i]) in self.suffixes for i in range(1, len(parts) + 1))

    def prefix_of_any(self, values: Iterable[str]) -> bool:
        return any(self.prefix_of(v) for v in values)


_EMPTY_SUMMARY = Summary()
_MISSING = object()
# A change to the project-wide state: (table, key, value); see ``Analysis.apply``.
Op = tuple[str, Any, Any]


@lru_cache(maxsize=16)
def _extract_patterns(extract: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The extraction globs as two regular expressions: lower-cased, for a call's last name
    (lower-cased), and as written, for its whole dotted name (what ``fnmatchcase`` of each
    glob would say, in one match instead of two per glob)."""
    never = "(?!)"
    short = "|".join(fnmatch.translate(p.lower()) for p in extract) or never
    full = "|".join(fnmatch.translate(p) for p in extract) or never
    return re.compile(short), re.compile(full)


class _SetView(AbstractSet[Any]):
    """A read-only view of one of the state's sets."""

    __slots__ = ("_store",)

    def __init__(self, store: set[Any]) -> None:
        self._store = store

    def __contains__(self, item: object) -> bool:
        return item in self._store

    def __iter__(self) -> Iterator[Any]:
        return iter(self._store)

    def __len__(self) -> int:
        return len(self._store)

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> frozenset[Any]:
        # ``view & other`` and the like make a plain frozenset, not another view
        return frozenset(it)


def _assigned(fn: FunctionIR) -> dict[str, list[Val]]:
    """What each local of ``fn`` is set to by a plain assignment, in order."""
    out: dict[str, list[Val]] = {}
    for step in walk_steps(fn.body):
        if isinstance(step, Assign) and len(step.targets) == 1 and not step.aug:
            out.setdefault(step.targets[0], []).append(step.value)
    return out


def _static_name(name: str, fn: FunctionIR | None) -> str:
    """The module-level name (or ``Class.attr``) a name read in ``fn`` stands for:
    ``self.llm`` in a method of ``SelfRAG`` is ``SelfRAG.llm``; ``llm.client`` is ``llm``."""
    root, _, rest = name.partition(".")
    if root in ("self", "cls") and rest and fn is not None and fn.cls:
        return f"{fn.cls}.{rest.split('.')[0]}"
    return root


def _model_list(strings: tuple[str, ...]) -> str | None:
    """A set model for a list of model ids, unless an element is no id (it has spaces)."""
    if not strings or len(strings) > 32 or any(not x or any(ch.isspace() for ch in x)
                                               for x in strings):
        return None
    return model_set(list(strings))
