"""Project tables for Python: modules by name, functions by qualified name, helper summaries.

A *summary* says what a function does with its parameters and what it returns, as far as
evaluation loops care: whether it calls an LLM (directly or through other helpers), which
parameter becomes the prompt, the system prompt or the model (and the model's default), which
parameters reach a generator's or an evaluator's input, and what kind of value it returns (a raw
generator response, an extracted answer, judge output). Summaries are computed to a fixpoint
over the call graph, across modules, in :mod:`evallint.pyflow.analysis`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from evallint.facts import Pos
from evallint.pyflow.ir import FunctionIR, PythonFacts
from evallint.roles import Role


@dataclass(frozen=True)
class Origin:
    """Where a value was produced: a call site (``path``, ``pos``), what it is, and why the
    producer is believed to reason (for I3 severity). ``inner`` is the call inside a helper."""

    path: str
    pos: Pos
    what: str
    key: tuple[str, str, int]  # (path, function, call id)
    reasoning: tuple[str, ...] = ()
    inner: Origin | None = None


# The ``name`` of a judge label that passed through a function of the project's own modules
# that were not read (no LLM words): what that function made of the judge's output (a pass
# flag computed from the score, a checked parse) cannot be told (its ``flag`` is set too).
OPAQUE = "through a function not read"


@dataclass(frozen=True)
class L:
    """A label on a value. Kinds:

    ``llm`` output of an LLM call of unknown role; ``gen`` generator output; ``ans`` a
    generator's extracted final answer; ``judge`` evaluator output (``flag``: already validated
    by the SDK, e.g. structured output); ``pass`` a pass/fail flag read from judge output;
    ``rubric`` the evaluator's prompt or criteria; ``genctx`` the generator's system prompt or
    message history; ``param``/``psan`` parameter ``idx`` (``psan``: after an extraction);
    ``scoreq`` made from a text that asks for a numeric score (a judge's output contract);
    ``said`` a bool made by testing the evaluator's free text against a word (``name``:
    ``"APPROVED" in review``); ``stored`` judge output written to a file and read back (the
    records: a field of one is the judge's output again); ``ppass``/``psaid`` a pass field
    read from, a word tested in, parameter ``idx`` (the caller maps them to ``pass``/``said``).
    """

    kind: str
    origin: Origin | None = None
    idx: int = 0
    flag: bool = False
    name: str = ""


def chat_of(chats: list[L]) -> tuple[L, Origin]:
    """The chat object a call runs on (the first by origin, a stable choice among several)
    and the constructor call that built it (through bound or structured-output wrappers)."""
    # (by the whole chain: two objects a factory may return share the wrapper's key)
    chat = min(chats, key=lambda lb: tuple(chain_keys(lb.origin)) if lb.origin else ())
    assert chat.origin is not None
    ctor = chat.origin
    while ctor.inner is not None:
        ctor = ctor.inner
    return chat, ctor


@dataclass
class ModelInfo:
    """How a helper picks its model: from parameter ``param`` (default ``default``), or fixed.
    ``path``: the field of that parameter that names it (``config.models.judge``: the
    parameter is a settings object)."""

    param: int | None = None
    default: str | None = None
    default_where: str = ""
    fixed: str | None = None
    fixed_where: str = ""
    path: str = ""
    # the enclosing function's parameter that picks it (a nested function's call on
    # ``model``, a parameter of the function it is defined in)
    outer: int | None = None


@dataclass
class Summary:
    # (Fields in the order of how often they differ from their defaults in real projects: the
    # result cache leaves out trailing defaults, and most summaries set only ``pos``.)
    pos: Pos | None = None
    returns: frozenset[L] = frozenset()
    role: Role = Role.UNKNOWN
    role_evidence: tuple[str, ...] = ()
    llm: bool = False
    n_llm: int = 0
    called_roles: frozenset[str] = frozenset()
    # the roles of the LLM calls made in the function itself, as decided there
    own_call_roles: frozenset[Role] = frozenset()
    model: ModelInfo = field(default_factory=ModelInfo)
    structured: bool = False
    slots: dict[int, frozenset[str]] = field(default_factory=dict)
    reasoning: tuple[str, ...] = ()
    # Every return is a tuple display of this many elements: what each element holds, so the
    # caller's ``text, history = f()`` keeps them apart (empty: not known element-wise).
    return_elts: tuple[frozenset[L], ...] = ()
    sinks: dict[int, frozenset[str]] = field(default_factory=dict)  # param -> roles reached
    # its LLM call routes, rewrites a judge prompt or judges the input (``Interp.meta``): a
    # call of it is no evaluator of the generator, whatever its input and result
    meta: bool = False
    # Files a per-case loop here (or in a helper it passes a parameter on to) opens with "w"
    # at the path parameter ``idx`` gives: (idx, module path, the open's place, mode, where
    # the loop is). The caller that passes a results file's name makes them EL505.
    loop_writes: tuple[tuple[int, str, Pos, str, str], ...] = ()
    # parameters whose value it runs as a chat model (``judge_llm.invoke(...)``), with the
    # role the run's own prompt gives it (a Role value, its evidence): a caller that passes a
    # chat model object makes that run, on that object's model
    chat_params: tuple[tuple[int, str, tuple[str, ...]], ...] = ()
    # keys of the dicts it returns whose value is computed in code, a comparison or a
    # constant in every return (``{"score": s, "approved": s >= 75}``): the caller's read of
    # ``result.approved`` is no word of the judge's
    computed_keys: frozenset[str] = frozenset()
    # keys of the dicts it returns set to a constant under a test of a count (``if (round >
    # MAX) return {...state, score: 10}``): a loop that stops on such a key is bounded
    forced_keys: frozenset[str] = frozenset()
    # parameters it parses (``json.loads``, ``JSON.parse``) with no error handling and no
    # validation: a caller that hands it a judge's text parses that text unchecked (EL504)
    parses: frozenset[int] = frozenset()
    # parameters it calls as functions, or hands on to a helper that calls them (see
    # :mod:`evallint.pyflow.callbacks`): a caller handing a function there runs it here
    called_params: frozenset[int] = frozenset()

    def count_call(self, structured: bool, reasoning: tuple[str, ...], model: str | None,
                   model_where: str) -> None:
        """One more LLM call made here: whether it returns structured output, why it is
        believed to reason, and the model it runs on (which the function then fixes)."""
        self.n_llm += 1
        self.structured = self.structured or structured
        if reasoning:
            self.reasoning = tuple(dict.fromkeys(self.reasoning + reasoning))
        if model is not None:
            self.model.fixed = model
            self.model.fixed_where = model_where

    def signature(self) -> tuple[object, ...]:
        return (self.llm, self.role, self.returns, tuple(sorted(self.slots.items())),
                tuple(sorted(self.sinks.items())), self.model.param, self.model.path,
                self.model.outer, self.model.default, self.model.fixed, self.reasoning,
                self.called_roles, self.structured,
                self.n_llm, self.return_elts, self.meta, self.own_call_roles, self.loop_writes,
                self.chat_params, self.computed_keys, self.forced_keys, self.parses,
                self.called_params)


@dataclass
class Module:
    facts: PythonFacts
    name: str

    @property
    def path(self) -> str:
        return self.facts.path


def dotted_suffixes(name: str) -> list[str]:
    """``a.b.c`` -> ``a.b.c``, ``b.c``, ``c``: the names the tables know a module by."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


_AMBIGUOUS = object()
_MISSING = object()

# A lookup in the tables and its answer: (method, name, near, module path found or None, the
# function's or constant's name in it or "").
Lookup = tuple[str, str, str, str | None, str]


class Tables:
    """Modules indexed by every dotted suffix of their name (imports may be rooted anywhere).

    When several modules share a suffix (``helpers`` in two folders), the one nearest the
    importing file wins: the longest common directory prefix.
    """

    def __init__(self, facts: list[PythonFacts]) -> None:
        self.modules: list[Module] = [Module(f, f.module) for f in facts if f.analyzed]
        self.by_name: dict[str, list[Module]] = {}
        # Lookups are asked again and again with the same names while the analysis runs
        # (every import of every module, every call); a table never changes once built.
        self._owners: dict[str, list[Module]] = {}  # the modules of the longest prefix
        self._function_names: dict[tuple[str, str], tuple[Module, str] | None] = {}
        self._reexports: dict[tuple[str, str], tuple[Module, str] | None] = {}
        self._plain_functions: dict[str, tuple[Module, str] | object | None] = {}
        self._components: frozenset[str] | None = None
        # While set, every lookup is added here with its answer (a function's interpretation
        # records what it read of other modules: see :mod:`evallint.pyflow.replay`).
        self.trace: set[Lookup] | None = None
        for mod in self.modules:
            for suffix in dotted_suffixes(mod.name):
                self.by_name.setdefault(suffix, []).append(mod)

    @property
    def components(self) -> frozenset[str]:
        """Every component of every module name: a dotted name whose first component is not
        among them resolves to no module (its every prefix misses ``by_name``)."""
        if self._components is None:
            self._components = frozenset(part for m in self.modules
                                         for part in m.name.split("."))
        return self._components

    def may_resolve(self, name: str) -> bool:
        """False when no lookup of the dotted ``name`` can find a module of the project (its
        first component names none): most imports name the standard library or a package.
        For loops outside an interpretation only: a skipped lookup is not traced."""
        return name.partition(".")[0] in self.components

    def module(self, name: str, near: str = "") -> Module | None:
        found = self._module(name, near)
        if self.trace is not None:
            self.trace.add(("module", name, near, found.path if found else None, ""))
        return found

    def _module(self, name: str, near: str) -> Module | None:
        found = self.by_name.get(name)
        if not found:
            return None
        if len(found) == 1 or not near:
            return found[0]
        return max(found, key=lambda m: (_common(m.path, near), -len(m.path)))

    def owner(self, qualified: str, near: str = "") -> Module | None:
        """The module that ``pkg.mod.name`` lives in: its longest prefix naming a module."""
        mod = self._owner(qualified, near)
        if self.trace is not None:
            self.trace.add(("owner", qualified, near, mod.path if mod else None, ""))
        return mod

    def _owner(self, qualified: str, near: str) -> Module | None:
        found = self._owners.get(qualified)
        if found is None:
            found = []
            parts = qualified.split(".")
            for cut in range(len(parts), 0, -1):
                found = self.by_name.get(".".join(parts[:cut])) or []
                if found:
                    break
            self._owners[qualified] = found
        if not found:
            return None
        if len(found) == 1 or not near:
            return found[0]
        return max(found, key=lambda m: (_common(m.path, near), -len(m.path)))

    def function_name(self, qualified: str, near: str = "") -> tuple[Module, str] | None:
        """``pkg.helpers.llm_call`` or ``pkg.helpers.Client.ask`` -> the module and the
        function's name in it, without decoding any module's code tree."""
        found = self._function_name(qualified, near)
        if self.trace is not None:
            self._note("function_name", qualified, near, found)
        return found

    def _note(self, method: str, name: str, near: str, found: tuple[Module, str] | None) -> None:
        assert self.trace is not None
        self.trace.add((method, name, near, *((found[0].path, found[1]) if found else (None, ""))))

    def _function_name(self, qualified: str, near: str, hops: int = 0
                       ) -> tuple[Module, str] | None:
        """The function a dotted name reaches, also through a re-export: ``from pkg import
        judge`` where ``pkg`` itself imports ``judge`` from ``pkg.judges`` (a few hops)."""
        found = self._function_direct(qualified, near)
        if found is not None or hops >= 4:
            return found
        key = (qualified, near.rpartition("/")[0])  # as _function_direct: the folder decides
        if hops == 0 and key in self._reexports:
            return self._reexports[key]
        found = self._reexported(qualified, near, hops)
        if hops == 0:
            self._reexports[key] = found
        return found

    def _reexported(self, qualified: str, near: str, hops: int) -> tuple[Module, str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            mod = self._module(".".join(parts[:cut]), near)
            if mod is None:
                continue
            first, _, more = ".".join(parts[cut:]).partition(".")
            target = mod.facts.imports.get(first)
            if target and target != qualified:
                return self._function_name(f"{target}.{more}" if more else target, mod.path,
                                           hops + 1)
            return None
        return None

    def _function_direct(self, qualified: str, near: str) -> tuple[Module, str] | None:
        plain = self._plain_functions.get(qualified, _MISSING)
        if plain is _MISSING:
            plain = self._plain_functions[qualified] = self._function_name_anywhere(qualified)
        if plain is not _AMBIGUOUS:
            return plain  # type: ignore[return-value]
        key = (qualified, near.rpartition("/")[0])  # only the folder decides (``_common``)
        if key in self._function_names:
            return self._function_names[key]
        found: tuple[Module, str] | None = None
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            mod = self._module(".".join(parts[:cut]), near)
            if mod is not None and ".".join(parts[cut:]) in mod.facts.function_names:
                found = mod, ".".join(parts[cut:])
                break
        self._function_names[key] = found
        return found

    def _function_name_anywhere(self, qualified: str) -> tuple[Module, str] | object | None:
        """:meth:`function_name` where no two modules share a name on the way (the importing
        file's place cannot matter), else ``_AMBIGUOUS``."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            found = self.by_name.get(".".join(parts[:cut]))
            if not found:
                continue
            if len(found) > 1:
                return _AMBIGUOUS
            rest = ".".join(parts[cut:])
            if rest in found[0].facts.function_names:
                return found[0], rest
        return None

    def function(self, qualified: str, near: str = "") -> tuple[Module, FunctionIR] | None:
        """As :meth:`function_name`, with the function itself."""
        found = self.function_name(qualified, near)
        if found is None:
            return None
        return found[0], found[0].facts.functions[found[1]]

    def answer(self, method: str, name: str, near: str) -> tuple[str | None, str]:
        """What a lookup recorded in :attr:`trace` answers now (its last two fields)."""
        if method == "module" or method == "owner":
            mod = self._module(name, near) if method == "module" else self._owner(name, near)
            return (mod.path if mod else None), ""
        found = (self._function_name(name, near) if method == "function_name"
                 else self._constant(name, near))
        return (found[0].path, found[1]) if found else (None, "")

    def constant(self, qualified: str, near: str = "") -> tuple[Module, str] | None:
        found = self._constant(qualified, near)
        if self.trace is not None:
            self._note("constant", qualified, near, found)
        return found

    def _constant(self, qualified: str, near: str, hops: int = 0) -> tuple[Module, str] | None:
        """The module-level name a dotted name reaches, also through a re-export (a folder's
        ``index.ts`` that hands on ``export { judge } from "./judge"``; a few hops)."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            mod = self._module(".".join(parts[:cut]), near)
            if mod is None:
                continue
            name = ".".join(parts[cut:])
            if name in mod.facts.constant_names:
                return mod, name
            first, _, more = name.partition(".")
            target = mod.facts.imports.get(first)
            if target and target != qualified and hops < 4:
                return self._constant(f"{target}.{more}" if more else target, mod.path,
                                      hops + 1)
        return None


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


def ordered(labels: Iterable[L]) -> list[L]:
    """Labels in one order whatever order the set was built in: the first flow of a call
    is the one its finding names, so it must not depend on how the set came together (two
    labels of one call may differ in the helper calls inside it: the whole chain decides)."""
    return sorted(labels, key=lambda lb: (lb.kind, lb.name or "", tuple(chain_keys(lb.origin)),
                                          lb.idx if lb.idx is not None else -1))


def first_origin(origins: Iterable[Origin | None]) -> Origin | None:
    """One of ``origins`` whatever order they come in (they come out of label sets, whose
    order depends on the hash seed): the shortest chain of helper calls first (a wrapper's
    direct call before its retry that calls the wrapper again), then by the chain's keys."""
    return min(((tuple(chain_keys(o)), o) for o in origins if o is not None),
               key=lambda pair: (len(pair[0]), pair[0]), default=((), None))[1]


def chain_keys(o: Origin | None) -> list[tuple[str, str, int]]:
    """The call keys of an origin and of the helper calls inside it."""
    keys = []
    while o is not None:
        keys.append(o.key)
        o = o.inner
    return keys
