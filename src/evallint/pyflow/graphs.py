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
from evallint.roles import Role, name_tokens

_START, _END = "__start__", "__end__"
# Words that make a router's test an attempt bound (``state["attempts"] >= MAX``).
_COUNTER_WORDS = frozenset({"attempt", "attempts", "iteration", "iterations", "iter", "retries",
                            "retry", "tries", "count", "counter", "revision", "revisions",
                            "round", "rounds", "max", "limit", "loops", "num", "turns",
                            "cycles"})


@dataclass(frozen=True)
class GraphLoop:
    """A cycle through a generator node and an evaluator node, closed by a conditional edge."""

    path: str
    pos: Pos  # the add_conditional_edges call that closes the cycle
    generator: tuple[str, Pos]  # node name and where it is added
    evaluator: tuple[str, Pos]
    router: str
    bounded: bool


@dataclass
class _Graph:
    nodes: dict[str, tuple[str, Pos]]  # node -> (function name, where it is added)
    edges: dict[str, set[str]]
    routers: list[tuple[str, str, set[str], Pos]]  # (source, router function, targets, pos)


def graph_loops(modules: Iterable[PythonFacts], result: Result,
                tables: Tables | None = None) -> Iterator[GraphLoop]:
    """Every unbounded-or-bounded generator/evaluator cycle in the LangGraph graphs of
    ``modules`` (the check keeps the unbounded ones). ``tables``: the analysed modules'
    tables, when the caller traces what the graphs look up in them."""
    modules = [m for m in modules if m.analyzed]
    graph_modules = [m for m in modules if builds_graphs(m)]
    if not graph_modules:
        return
    roles = _node_roles(result)
    tables = tables if tables is not None else Tables(modules)
    for facts in graph_modules:
        for graph in _graphs(facts):
            yield from _cycles(facts, graph, _Roles(facts, tables, roles))


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
        where = self._locate(fn_name)
        found = self.roles.get(where, set()) if where else set()
        if not found:
            return None
        if Role.EVALUATOR in found:
            return Role.EVALUATOR
        if Role.GENERATOR in found:
            return Role.GENERATOR
        return function_role(fn_name.rsplit(".", 1)[-1])

    def _locate(self, fn_name: str) -> tuple[str, str] | None:
        fn = _function(self.facts, fn_name)
        if fn is not None:
            return self.facts.path, fn.name
        root, _, rest = fn_name.partition(".")
        target = self.facts.imports.get(root)
        if not target:
            return None
        found = self.tables.function_name(f"{target}.{rest}" if rest else target,
                                          self.facts.path)
        return (found[0].path, found[1]) if found is not None else None


def _cycles(facts: PythonFacts, g: _Graph, role: _Roles) -> Iterator[GraphLoop]:
    role_of = {node: role(fn) for node, (fn, _) in g.nodes.items()}
    edges = {k: set(v) for k, v in g.edges.items()}
    resolved: list[tuple[str, str, set[str], Pos]] = []
    for src, router, targets, pos in g.routers:
        if not targets:  # no path map: the router returns node names itself
            fn = _function(facts, router)
            targets = set(_returned_strings(fn)) if fn is not None else set()
        targets = {t for t in targets if t in g.nodes or t == _END}
        edges.setdefault(src, set()).update(targets)
        resolved.append((src, router, targets, pos))
    for src, router, targets, pos in resolved:
        if role_of.get(src) is not Role.EVALUATOR:
            continue
        for back in sorted(targets):
            if role_of.get(back) not in (Role.GENERATOR, Role.UNKNOWN) or \
                    not _reaches(edges, back, src):
                continue
            fn = _function(facts, router)
            bounded = fn is not None and _counts_attempts(fn)
            for node in (src, back):  # or a node of the cycle stops it by its own counter
                node_fn = _function(facts, g.nodes[node][0])
                bounded = bounded or (node_fn is not None and _node_counts(node_fn))
            yield GraphLoop(facts.path, pos, (back, g.nodes[back][1]), (src, g.nodes[src][1]),
                            router, bounded)


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


def _node_counts(fn: FunctionIR) -> bool:
    """A node that bounds the cycle itself: it returns early when a counter read from the
    state passes a limit (``if state["rounds"] >= 2: return {"done": True}``) and writes that
    counter back into the state it returns (``{"rounds": rounds + 1}``)."""
    local: dict[str, tuple[str, ...]] = {}
    written: set[str] = set()
    for s in walk_steps(fn.body):
        if isinstance(s, Assign):
            for t in s.targets:
                local[t] = s.value.names
        if isinstance(s, (Assign, Return)):
            written.update(x for x in s.value.strings if x.isidentifier())
    for s in walk_steps(fn.body):
        if not isinstance(s, If) or not s.test.compares or \
                not any(isinstance(x, Return) for x in s.body):
            continue
        for operand in s.test.compares:
            for name in operand.names:
                for path in (name, *local.get(name, ())):
                    key = path.rsplit(".", 1)[-1]
                    if key in written and set(name_tokens(key)) & _COUNTER_WORDS:
                        return True
    return False


def _counts_attempts(fn: FunctionIR) -> bool:
    """The router compares something against a bound, or reads an attempt counter."""
    for v in _vals(fn):
        if v.compares or v.chained:
            return True
        if any(set(name_tokens(n.replace(".", "_"))) & _COUNTER_WORDS for n in v.names):
            return True
        if any(set(name_tokens(s)) & _COUNTER_WORDS for s in v.strings):
            return True  # state["attempts"]: the key is a string constant
    return False

