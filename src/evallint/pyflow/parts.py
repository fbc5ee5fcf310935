"""The project analysis in independent parts, so that an edit solves only its own part again.

Modules that neither import each other (directly or through a file the analysis may load) nor
share a framework's ambient model (``dspy.configure(lm=...)`` in one file reaches every dspy
module of the project) cannot affect each other's findings. Each part is solved on its own and
cached under the digests of what it can read: its modules, the modules they import
(transitively), the unanalysed files it may load, and the project's module names (which decide
how every import resolves). Planning reads only eager facts (names, imports, digests): no
module's code tree is decoded for a part whose result is cached.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.providers import CAT, ambient_roots, is_framework_package, qualify
from evallint.pyflow.summaries import Tables


@dataclass
class Part:
    """Relevant modules solved together (``paths``), the unanalysed files they may load
    (``skipped``), and every file whose facts the solve may read (``inputs``, for the key)."""

    paths: set[str] = field(default_factory=set)
    skipped: list[PythonFacts] = field(default_factory=list)
    inputs: set[str] = field(default_factory=set)


def relevant_modules(tables: Tables) -> set[str]:
    """Modules worth interpreting: those with an SDK-like call or a call of a framework the
    project does not hold itself, and those importing them (transitively). The rest of a large
    code base costs nothing beyond its parse."""
    relevant = {m.path for m in tables.modules if m.facts.calls_sdk or any(
        _framework(tables, root) for root in m.facts.fw_roots)}
    steps = any(m.facts.runs_steps for m in tables.modules)
    changed = True
    while changed:
        changed = False
        for m in tables.modules:
            mine = m.path in relevant
            if mine and not steps:
                continue
            for v in m.facts.imports.values():
                owner = tables.owner(v, m.path) if tables.may_resolve(v) else None
                if owner is None:
                    continue
                if not mine and owner.path in relevant:
                    relevant.add(m.path)
                    changed = mine = True
                if mine and owner.path not in relevant and owner.facts.runs_steps:
                    # (its function runs the functions it is handed: a relevant module's
                    # steps run there, ``runWithRecursion(generate, evaluate, refine)``)
                    relevant.add(owner.path)
                    changed = True
    return relevant


def _framework(tables: Tables, root: str) -> bool:
    package = tables.module(root)
    return is_framework_package(root, package.facts if package is not None else None)


class _Union:
    """Union-find over module paths: a part is a group joined by any link, whatever the
    order the links are found in."""

    def __init__(self) -> None:
        self.up: dict[str, str] = {}

    def find(self, x: str) -> str:
        up = self.up
        root = x
        while up.setdefault(root, root) != root:
            root = up[root]
        while up[x] != root:
            up[x], x = root, up[x]
        return root

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.up[rb] = ra


def plan(facts: list[PythonFacts], tables: Tables, relevant: set[str]) -> list[Part]:
    """The parts of the project, in the order of their first module in ``facts``."""
    union = _Union()
    by_path = {f.path: f for f in facts}
    for m in tables.modules:
        if m.path not in relevant:
            continue
        union.find(m.path)
        for v in m.facts.imports.values():
            owner = tables.owner(v, m.path) if tables.may_resolve(v) else None
            if owner is not None and owner.path in relevant:
                union.join(m.path, owner.path)
    for fw in ambient_roots():
        users = [m.path for m in tables.modules if m.path in relevant and fw in m.facts.fw_roots]
        for other in users[1:]:
            union.join(users[0], other)

    # An unanalysed file is loaded when it imports an LLM helper of a part (a function, or a
    # module defining one), or a file loaded before it; once loaded, it reads every module it
    # imports. The parts it may be loaded by, and those it then reads, become one.
    analysed = _Resolver(tables)
    skipped = [f for f in facts if not f.analyzed and f.imported]
    unanalysed = _Resolver(Tables([_as_analyzed(f) for f in skipped]))
    # file -> the relevant modules whose helpers load it (directly, then through other files)
    reach = {f.path: {m for name in f.imported for m in analysed.helpers(name, f.path)
                      if m in relevant} for f in skipped}
    after = {f.path: [o for name in f.imported for o in unanalysed.targets(name, f.path)
                      if o != f.path] for f in skipped}  # file -> the unanalysed files it imports
    changed = True
    while changed:  # over the small graph of unanalysed files only
        changed = False
        for path, others in after.items():
            for other in others:
                if not reach[other] <= reach[path]:
                    reach[path] |= reach[other]
                    changed = True
    for f in skipped:
        if reach[f.path]:
            reads = {m for name in f.imported for m in analysed.targets(name, f.path)
                     if m in relevant}  # once loaded
            first = next(iter(reach[f.path]))
            for mod in reach[f.path] | reads:
                union.join(first, mod)

    # A relevant module that imports a file a part loads because it runs an agent built in
    # that part (``from app.main import ask``, where app/main.py runs ``bot`` of app/brain.py)
    # is solved with that part (only then: other joins would make parts larger for nothing).
    agents = {f.path for f in skipped if any(
        analysed.llm_object(name, f.path) in relevant for name in f.imported)}
    for m in tables.modules:
        if m.path not in relevant:
            continue
        for v in m.facts.imports.values():
            for other in unanalysed.targets(v, m.path):
                if other in agents and reach.get(other):
                    union.join(m.path, next(iter(reach[other])))
    parts: dict[str, Part] = {}
    for f in facts:
        if f.path in relevant:
            parts.setdefault(union.find(f.path), Part()).paths.add(f.path)
    loaded_by = {f.path: union.find(next(iter(reach[f.path]))) for f in skipped
                 if reach[f.path]}
    for f in skipped:
        if f.path in loaded_by:
            parts[loaded_by[f.path]].skipped.append(f)
    # An analysed module outside every part that imports a file a part may load joins that
    # part's inputs (it becomes relevant when the file is loaded).
    extra: dict[str, set[str]] = {}
    for m in tables.modules:
        if m.path in relevant:
            continue
        for v in m.facts.imports.values():
            for other in unanalysed.targets(v, m.path):
                if other in loaded_by:
                    extra.setdefault(loaded_by[other], set()).add(m.path)
    edges: dict[str, list[str]] = {}
    for root, part in parts.items():
        start = set(part.paths) | {f.path for f in part.skipped} | extra.get(root, set())
        part.inputs = _closure(start, analysed, by_path, edges)
    return list(parts.values())


def holds_class(facts: PythonFacts, name: str) -> bool:
    """Does the module define class ``name`` with methods (read from the eager names)?"""
    prefix = f"{name}."
    return "." not in name and any(n.startswith(prefix) for n in facts.function_names)


def builds_llm_object(facts: PythonFacts, name: str, depth: int = 0) -> bool:
    """Is the module-level ``name`` built by a catalogue constructor (an agent, a chat
    model)? Only such a name links a file that imports it to the module's part. (An alias
    of such a name is one too: a script's ``export default worker``.)"""
    val = facts.constants.get(name)
    if val is None:
        return False
    if depth < 3 and any(builds_llm_object(facts, n, depth + 1) for n in val.names
                         if n != name and n in facts.constants):
        return True
    fn = facts.functions.get(facts.owners.get(name, ""))
    if fn is None:
        return False
    work, seen = list(val.calls), set()
    while work:  # the constructor, or the receiver of a derived model (``.bindTools(t)``)
        cid = work.pop()
        if cid in seen or cid >= len(fn.calls):
            continue
        seen.add(cid)
        c = fn.calls[cid]
        if CAT.object_row(qualify(c.func, facts.imports)) is not None:
            return True
        if c.recv is not None and c.func.rsplit(".", 1)[-1] in CAT.derive_methods:
            work.extend(c.recv.calls)
    return False


def _as_analyzed(f: PythonFacts) -> PythonFacts:
    """An unanalysed file as a name in a table (its imports are its ``imported`` names)."""
    return PythonFacts(path=f.path, kind=f.kind, module=f.module, analyzed=True)


class _Resolver:
    """Where imported names lead in one table, remembered per name and importing folder (only
    the folder of the importing file decides, see ``Tables.module``): a plan asks the same
    names for file after file."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._memo: dict[tuple[bool, str, str], list[str]] = {}

    def helpers(self, name: str, near: str) -> list[str]:
        """The modules through which importing ``name`` can make a file load (as
        ``Analysis._load_importers`` decides): the one defining it as a function or as a
        module-level object, or the module it names."""
        return self._lookup(False, name, near)

    def llm_object(self, name: str, near: str) -> str | None:
        """The module of a module-level agent or chat model ``name`` names, if it is one."""
        if not self.tables.may_resolve(name):
            return None
        const = self.tables.constant(name, near)
        return const[0].path if const is not None and builds_llm_object(
            const[0].facts, const[1]) else None

    def targets(self, name: str, near: str) -> list[str]:
        """The modules an imported name may resolve to: as :meth:`helpers`, or its owner
        (the module holding ``pkg.mod.Name``)."""
        return self._lookup(True, name, near)

    def _lookup(self, owner_too: bool, name: str, near: str) -> list[str]:
        tables = self.tables
        if not tables.may_resolve(name):
            return []  # no module of the project has a name that could start it (``os.path``)
        key = (owner_too, name, near.rpartition("/")[0])
        out = self._memo.get(key)
        if out is not None:
            return out
        out = self._memo[key] = []
        found = tables.function_name(name, near)
        if found is not None:
            out.append(found[0].path)
        const = tables.constant(name, near)  # a module-level agent (``wikipedia_agent``)
        if const is not None and builds_llm_object(const[0].facts, const[1]):
            out.append(const[0].path)
        for run in CAT.step_runs:
            step = tables.function_name(f"{name}__{run}", near)  # a step object's work
            if step is not None:
                out.append(step[0].path)
        mod = tables.module(name, near)
        if mod is not None:
            out.append(mod.path)
        elif not owner_too:  # ``from agents.base import Bot``: a class whose methods may call
            owner = tables.owner(name, near)
            if owner is not None and name.startswith(owner.name + ".") and \
                    holds_class(owner.facts, name[len(owner.name) + 1:]):
                out.append(owner.path)
        if owner_too:
            owner = tables.owner(name, near)
            if owner is not None:
                out.append(owner.path)
        return out


def _closure(start: set[str], resolver: _Resolver, by_path: dict[str, PythonFacts],
             edges: dict[str, list[str]]) -> set[str]:
    """``start`` and every analysed module reached from it through imports (``edges``: each
    file's import targets, filled as found and shared between parts)."""
    seen = set(start)
    stack = list(start)
    while stack:
        path = stack.pop()
        out = edges.get(path)
        if out is None:
            f = by_path.get(path)
            names = () if f is None else f.imports.values() if f.analyzed else f.imported
            out = edges[path] = [m for v in names for m in resolver.targets(v, path)]
        for mod in out:
            if mod not in seen:
                seen.add(mod)
                stack.append(mod)
    return seen


@dataclass
class StoredPlan:
    """A plan as the result cache keeps it: each part's modules, the unanalysed files it may
    load (by path) and its inputs; and the relevant modules."""

    parts: list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
    relevant: tuple[str, ...]

    @classmethod
    def of(cls, parts: list[Part], relevant: set[str]) -> StoredPlan:
        return cls([(tuple(sorted(p.paths)), tuple(f.path for f in p.skipped),
                     tuple(sorted(p.inputs))) for p in parts], tuple(sorted(relevant)))

    def restore(self, facts: list[PythonFacts]) -> tuple[list[Part], set[str]] | None:
        """The parts over ``facts`` (None when a file it names is not among them)."""
        by_path = {f.path: f for f in facts}
        out: list[Part] = []
        for paths, skipped, inputs in self.parts:
            loaded = [by_path.get(path) for path in skipped]
            if any(f is None for f in loaded):
                return None
            out.append(Part(set(paths), [f for f in loaded if f is not None], set(inputs)))
        return out, set(self.relevant)


def planning_digest(facts: list[PythonFacts]) -> str:
    """Everything :func:`relevant_modules` and :func:`plan` read of ``facts``: an edit inside
    a function body leaves it as it was, and the plan is then read from the cache."""
    h = hashlib.blake2b(digest_size=16)
    for f in facts:
        if f.analyzed:
            h.update(repr((f.path, f.module, 1, f.calls_sdk, f.runs_steps, f.fw_roots,
                           tuple(f.imports.values()), sorted(f.function_names))).encode())
        else:
            h.update(repr((f.path, f.module, 0, f.imported)).encode())
    return h.hexdigest()


def names_digest(facts: list[PythonFacts]) -> str:
    """The project's module names: how every import resolves, and which frameworks are the
    project's own."""
    h = hashlib.blake2b(digest_size=16)
    for f in sorted(facts, key=lambda f: f.path):
        h.update(f"{f.path}\0{f.module}\0{int(f.analyzed)}\n".encode())
    return h.hexdigest()
