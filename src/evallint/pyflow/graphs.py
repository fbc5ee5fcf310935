"""Refinement loops built as LangGraph graphs rather than Python loops.

An evaluator-optimizer in LangGraph has no ``while``: a node that generates, a node that judges,
and a conditional edge whose router sends the state back to the generator when the judge says
"revise". Whether that cycle is bounded is decided in the router (an attempt counter compared
against a maximum). LangGraph's recursion limit ends the run with an error, not with the best
attempt, so it is not a bound a refinement loop should rely on.

This module reads the graph from the facts the Python front-end already keeps (calls on a graph
builder: ``add_node``, ``add_edge``, ``add_conditional_edges``) and the roles of the node
functions from the project analysis (their effective LLM calls). It parses nothing itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evallint.facts import Pos
from evallint.pyflow.ir import (
    Assign,
    FunctionIR,
    If,
    Loop,
    PythonFacts,
    Return,
    Val,
    walk_steps,
)
from evallint.pyflow.relevance import function_role
from evallint.pyflow.results import Result
from evallint.pyflow.summaries import Tables
from evallint.roles import COUNTER_WORDS, Role, name_tokens

_START, _END = "__start__", "__end__"
@dataclass(frozen=True)
class GraphLoop:
    """A cycle through a generator node and an evaluator node, closed by a conditional edge."""

    path: str
    pos: Pos  # the add_conditional_edges call that closes the cycle
    generator: tuple[str, Pos]  # node name and where it is added
    evaluator: tuple[str, Pos]
    router: str
    bounded: bool
    # the router's edge leaves the generator node (it sends each draft on to be judged or
    # ends the run) rather than the evaluator node
    after_generator: bool = False


@dataclass(frozen=True)
class GraphLink:
    """A node that runs an LLM (generator or of no known role) whose state reaches an
    evaluator node of the same graph: the evaluator grades what that node wrote, whatever
    either function is called. Each end is the node function's (path, name)."""

    path: str
    generator: tuple[str, str]
    evaluator: tuple[str, str]


@dataclass
class _Graph:
    nodes: dict[str, tuple[str, Pos]]  # node -> (function name, where it is added)
    edges: dict[str, set[str]]
    routers: list[tuple[str, str, set[str], Pos]]  # (source, router function, targets, pos)


def graph_loops(modules: Iterable[PythonFacts], result: Result,
                tables: Tables | None = None) -> Iterator[GraphLoop | GraphLink]:
    """Every unbounded-or-bounded generator/evaluator cycle in the LangGraph graphs of
    ``modules`` (the check keeps the unbounded ones), and every link from an LLM node to an
    evaluator node it reaches (the model pairs read them). ``tables``: the analysed modules'
    tables, when the caller traces what the graphs look up in them."""
    modules = [m for m in modules if m.analyzed]
    graph_modules = [m for m in modules if builds_graphs(m)]
    if not graph_modules:
        return
    roles = _node_roles(result)
    tables = tables if tables is not None else Tables(modules)
    for facts in graph_modules:
        for graph in _graphs(facts):
            node_role = _Roles(facts, tables, roles)
            yield from _cycles(facts, graph, node_role)
            yield from _links(facts, graph, node_role)


def builds_graphs(facts: PythonFacts) -> bool:
    """Whether a module may build a LangGraph graph (it imports langgraph): read from its
    eager facts, without decoding its code tree."""
    return facts.analyzed and any(v.split(".")[0] == "langgraph" for v in facts.imports.values())


def _graphs(facts: PythonFacts) -> Iterator[_Graph]:
    """One graph per builder variable (``builder.add_node(...)``) in each function."""
    by_builder: dict[tuple[str, str], _Graph] = {}
    for fn in facts.functions.values():
        for c in fn.calls:
            base, _, method = c.func.rpartition(".")
            if method not in ("add_node", "add_edge", "add_conditional_edges",
                              "set_entry_point", "set_finish_point") or not base:
                continue
            g = by_builder.setdefault((fn.name, base), _Graph({}, {}, []))
            args = [_node_ref(a) for a in c.args]
            if method == "add_node" and c.args:
                fn_val = c.args[1] if len(c.args) > 1 else c.args[0]
                name = args[0] if len(c.args) > 1 else _target_function(fn_val)
                target = _target_function(fn_val)
                if name and target:
                    g.nodes[name] = (target, c.pos)
            elif method == "add_edge" and len(args) == 2 and args[0] and args[1]:
                g.edges.setdefault(args[0], set()).add(args[1])
            elif method == "add_conditional_edges" and len(c.args) >= 2 and args[0]:
                router = _target_function(c.args[1]) or ""
                mapping = c.args[2] if len(c.args) > 2 else c.kw("path_map")
                targets = set(_strings_and_ends(mapping)) if mapping is not None else set()
                g.routers.append((args[0], router, targets, c.pos))
    yield from by_builder.values()


def _node_ref(v: Val) -> str | None:
    """A node named by a string, or START/END."""
    if v.text is not None:
        return v.text
    for n in v.names:
        last = n.rsplit(".", 1)[-1]
        if last in ("START", "END"):
            return _START if last == "START" else _END
    return None


def _target_function(v: Val) -> str | None:
    """The function a node or router refers to (``generate``, ``self.judge``)."""
    for n in v.names:
        return n.split(".", 1)[1] if n.startswith(("self.", "cls.")) else n
    return None


def _strings_and_ends(v: Val) -> Iterator[str]:
    yield from v.strings
    for n in v.names:
        if n.rsplit(".", 1)[-1] == "END":
            yield _END


def _function(facts: PythonFacts, name: str) -> FunctionIR | None:
    if name in facts.functions:
        return facts.functions[name]
    tail = "." + name
    return next((f for k, f in facts.functions.items() if k.endswith(tail)), None)


def node_roles_digest(result: Result) -> str:
    """A digest of what the graphs read of the analysis: the roles of each function's LLM
    calls (a cached graph result holds while they and the graph modules are unchanged)."""
    h = hashlib.blake2b(digest_size=16)
    for (path, function), roles in sorted(_node_roles(result).items()):
        h.update(f"{path}\0{function}\0{','.join(sorted(r.value for r in roles))}\n".encode())
    return h.hexdigest()


def _node_roles(result: Result) -> dict[tuple[str, str], set[Role]]:
    """(path, function) -> roles of the LLM calls it makes (directly or through helpers)."""
    out: dict[tuple[str, str], set[Role]] = {}
    for lc in result.calls:
        out.setdefault((lc.path, lc.function), set()).add(lc.role)
    return out


class _Roles:
    """The role of a node function, defined in the graph's module or imported into it."""

    def __init__(self, facts: PythonFacts, tables: Tables,
                 roles: dict[tuple[str, str], set[Role]]) -> None:
        self.facts = facts
        self.tables = tables
        self.roles = roles

    def __call__(self, fn_name: str) -> Role | None:
        """EVALUATOR or GENERATOR when the node's LLM calls (or, failing them, its name) say
        so, UNKNOWN for a node that calls an LLM in no known role, None for one that calls
        none. In a cycle with a judge, an LLM node of unknown role is what gets judged."""
        where = self.locate(fn_name)
        found = self.roles.get(where, set()) if where else set()
        if not found:
            return None
        if Role.EVALUATOR in found:
            return Role.EVALUATOR
        if Role.GENERATOR in found:
            return Role.GENERATOR
        return function_role(fn_name.rsplit(".", 1)[-1])

    def locate(self, fn_name: str) -> tuple[str, str] | None:
        """Where the node function is defined: its module's path and its name there."""
        fn = _function(self.facts, fn_name)
        if fn is not None:
            return self.facts.path, fn.name
        root, _, rest = fn_name.partition(".")
        target = self.facts.imports.get(root)
        if not target:
            return None
        qualified = f"{target}.{rest}" if rest else target
        found = self.tables.function_name(qualified, self.facts.path)
        if found is not None:
            return found[0].path, found[1]
        # a module with no LLM words is not analysed until the analysis loads it, and then
        # its calls carry its path: a function of that name in a module of that name
        module, _, name = qualified.rpartition(".")
        for path, function in self.roles:
            if function == name and module and \
                    f".{_module_of(path)}".endswith(f".{module}"):
                return path, function
        return None


    def function_ir(self, fn_name: str) -> FunctionIR | None:
        """The node function's code, in the graph's module or the analysed one it imports."""
        fn = _function(self.facts, fn_name)
        if fn is not None:
            return fn
        where = self.locate(fn_name)
        if where is None:
            return None
        mod = next((m for m in self.tables.modules if m.path == where[0]), None)
        return mod.facts.functions.get(where[1]) if mod is not None else None


def _module_of(path: str) -> str:
    """``pkg/nodes.py`` -> ``pkg.nodes`` (a package's ``__init__.py`` is the package)."""
    stem = path.rsplit(".", 1)[0].replace("/", ".")
    return stem.removesuffix(".__init__")


def _edges(facts: PythonFacts, g: _Graph
           ) -> tuple[dict[str, set[str]], list[tuple[str, str, set[str], Pos]]]:
    """The graph's edges, the conditional ones included, and each router with the nodes it
    may send the state to."""
    edges = {k: set(v) for k, v in g.edges.items()}
    resolved: list[tuple[str, str, set[str], Pos]] = []
    for src, router, targets, pos in g.routers:
        if not targets:  # no path map: the router returns node names itself
            fn = _function(facts, router)
            targets = set(_returned_strings(fn)) if fn is not None else set()
        targets = {t for t in targets if t in g.nodes or t == _END}
        edges.setdefault(src, set()).update(targets)
        resolved.append((src, router, targets, pos))
    return edges, resolved


def _cycles(facts: PythonFacts, g: _Graph, role: _Roles) -> Iterator[GraphLoop]:
    """A conditional edge that closes a cycle through an evaluator node and an LLM node:
    the router sits after the evaluator (it sends the work back) or after the generator (it
    sends each draft on to be judged, or ends the run)."""
    role_of = {node: role(fn) for node, (fn, _) in g.nodes.items()}
    edges, resolved = _edges(facts, g)
    seen: set[tuple[str, str]] = set()  # one cycle closed by two routers: reported once
    for src, router, targets, pos in resolved:
        for back in sorted(targets):
            if back == _END or not _reaches(edges, back, src):
                continue
            if role_of.get(src) is Role.EVALUATOR:
                ev, gen = src, back
                if role_of.get(gen) not in (Role.GENERATOR, Role.UNKNOWN):
                    continue
            elif role_of.get(src) in (Role.GENERATOR, Role.UNKNOWN):
                gen = src
                ev = next((n for n in sorted(g.nodes) if role_of.get(n) is Role.EVALUATOR
                           and _reaches(edges, back, n) and _reaches(edges, n, src)), "")
                if not ev:
                    continue
            else:
                continue
            if (gen, ev) in seen:
                continue
            seen.add((gen, ev))
            fn = role.function_ir(router)  # (a router imported from another module too)
            ev_fn = role.function_ir(g.nodes[ev][0])
            bounded = fn is not None and _counts_attempts(
                fn, _written(ev_fn) if ev_fn is not None else None)
            # or a node of the cycle stops it on a counter a node of the cycle keeps
            fns = [f for f in (role.function_ir(g.nodes[n][0]) for n in (ev, gen)) if f]
            kept = {k for f in fns for k in _written(f)}
            bounded = bounded or any(_node_counts(f, kept) for f in fns)
            yield GraphLoop(facts.path, pos, (gen, g.nodes[gen][1]), (ev, g.nodes[ev][1]),
                            router, bounded, after_generator=gen == src)


def _links(facts: PythonFacts, g: _Graph, role: _Roles) -> Iterator[GraphLink]:
    """Each LLM node whose state reaches an evaluator node (see :class:`GraphLink`)."""
    role_of = {node: role(fn) for node, (fn, _) in g.nodes.items()}
    edges, _ = _edges(facts, g)
    for ev in sorted(g.nodes):
        if role_of.get(ev) is not Role.EVALUATOR:
            continue
        ev_at = role.locate(g.nodes[ev][0])
        for gen in sorted(g.nodes):
            if gen == ev or role_of.get(gen) not in (Role.GENERATOR, Role.UNKNOWN) or \
                    not _reaches(edges, gen, ev):
                continue
            gen_at = role.locate(g.nodes[gen][0])
            if ev_at is not None and gen_at is not None:
                yield GraphLink(facts.path, gen_at, ev_at)


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        for nxt in edges.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _vals(fn: FunctionIR) -> Iterator[Val]:
    for s in walk_steps(fn.body):
        if isinstance(s, If):
            yield s.test
        elif isinstance(s, Loop):
            if s.test is not None:
                yield s.test
        else:
            value = getattr(s, "value", None)
            if isinstance(value, Val):
                yield value


def _returned_strings(fn: FunctionIR) -> Iterator[str]:
    for s in walk_steps(fn.body):
        if isinstance(s, Return):
            yield from s.value.strings


def _node_counts(fn: FunctionIR, kept: AbstractSet[str] = frozenset()) -> bool:
    """A node that bounds the cycle itself: when a counter read from the state passes a limit
    it returns early or sets what it returns (``if state["rounds"] >= 2: return {"done":
    True}``, ``if rounds >= 3: status = "accepted"``), and that counter is written back into
    the state, by this node (``{"rounds": rounds + 1}``) or another of the cycle (``kept``)."""
    local: dict[str, tuple[str, ...]] = {}
    written: set[str] = set(kept)
    for s in walk_steps(fn.body):
        if isinstance(s, Assign):
            for t in s.targets:
                local[t] = s.value.names
        if isinstance(s, (Assign, Return)):
            written.update(x for x in s.value.strings if x.isidentifier())
    for s in walk_steps(fn.body):
        # (it returns early, or sets what the router reads: ``if rounds >= 3: status = "ok"``)
        if not isinstance(s, If) or not s.test.compares or \
                not any(isinstance(x, (Return, Assign)) for x in s.body):
            continue
        for operand in s.test.compares:
            for name in operand.names:
                for path in (name, *local.get(name, ())):
                    key = path.rsplit(".", 1)[-1]
                    if key in written and set(name_tokens(key)) & COUNTER_WORDS:
                        return True
    return False


def _written(fn: FunctionIR) -> set[str]:
    """The state keys a node writes: the string keys of the dicts it returns; ``*`` when it
    returns what a call made as its whole update (``return JSON.parse(reply.content)``: the
    judge's own keys, whichever they are)."""
    out = {x for s in walk_steps(fn.body) if isinstance(s, (Assign, Return))
           for x in s.value.strings if x.isidentifier()}
    if any(isinstance(s, Return) and s.value.calls and not s.value.keys and not s.value.names
           for s in walk_steps(fn.body)):
        out.add("*")
    return out


def _counts_attempts(fn: FunctionIR, judged: set[str] | None = None) -> bool:
    """The router compares something against a bound, or reads an attempt counter. A test of
    what the evaluator node wrote (``judged``: its state keys, when its code is known) is no
    bound, whatever it compares (``state["score"] >= 8``: the judge may never get there),
    unless it counts (``len(state["messages"]) > 6``)."""
    local: dict[str, tuple[str, ...]] = {}
    for s in walk_steps(fn.body):
        if isinstance(s, Assign):
            for t in s.targets:
                local[t] = s.value.names
    for v in _vals(fn):
        if (v.compares or v.chained) and (judged is None or not v.compares or any(
                _bounds(fn, op, judged, local) for op in v.compares)):
            return True
        if any(set(name_tokens(n.replace(".", "_"))) & COUNTER_WORDS for n in v.names):
            return True
    return False


def _bounds(fn: FunctionIR, op: Val, judged: set[str],
            local: dict[str, tuple[str, ...]]) -> bool:
    """Is this side of a comparison a count (``len(...)``, a counter), or a value that is
    not the evaluator's own (a literal or a constant bounds nothing by itself)?"""
    if any(cid < len(fn.calls) and fn.calls[cid].func == "len" for cid in op.calls):
        return True
    paths = [p for n in op.names for p in (n, *local.get(n, ()))]
    if any(set(name_tokens(p.replace(".", "_"))) & COUNTER_WORDS for p in paths):
        return True
    keys = {part for p in paths for part in p.split(".")[1:]}
    state_read = any("." in p for p in paths)
    return state_read and not keys & judged and "*" not in judged

