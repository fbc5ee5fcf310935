"""What a nested function sees of the function around it.

A judge written inside ``main()`` (``def evaluate(q, a): (prompt | evaluator).invoke(...)``),
a route handler's callback, a TypeScript ``async function grade()`` in a setup function: the
model objects, prompts and drafts it uses are the enclosing function's locals. A nested
function is interpreted on its own, so without this it reads those names as unknown and its
calls are not LLM calls at all.

The enclosing function's run ends by publishing what its locals hold (their labels, and the
objects they were made as) in the project-wide state (``closures``, journaled like every other
change, so the replay cache sees it); a nested function's run starts from that environment for
the names it does not bind itself. When the environment changes, the fixpoint runs the nested
functions again. Which calls built a captured name (a model handle, ``openai("gpt-4o")``) is
read from the enclosing function's code, which does not change within a solve.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from evallint.pyflow.ir import Assign, CallIR, FunctionIR, Ref, Val, walk_steps
from evallint.pyflow.summaries import L, Module

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp

# labels that name the enclosing function's own parameters: meaningless in another function
_OWN = frozenset({"param", "psan", "ppass", "psaid"})
Env = tuple[tuple[str, frozenset[L], Ref | None], ...]


def enclosing(mod: Module, name: str) -> str | None:
    """The function ``name`` is defined in (``main`` for ``main.grade``), if any."""
    funcs = mod.facts.functions
    head = name
    while "." in head:
        head = head.rsplit(".", 1)[0]
        if head in funcs:
            return head
    return None


def nested_in(mod: Module, name: str) -> tuple[str, ...]:
    """The functions defined directly in function ``name``."""
    return _children(mod.facts.function_names).get(name, ())


@lru_cache(maxsize=512)
def _children(names: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """Each name's direct children among ``names`` (once per module: a frozenset keeps its
    hash, so the cache costs a lookup per run)."""
    out: dict[str, list[str]] = {}
    for n in names:
        if "." in n:
            out.setdefault(n.rsplit(".", 1)[0], []).append(n)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def publish(it: Interp) -> None:
    """At the end of a run of a function with nested functions: what its locals hold."""
    if it.fn.name == "<module>" or not nested_in(it.mod, it.fn.name):
        return
    env: list[tuple[str, frozenset[L], Ref | None]] = []
    for name in sorted(it.labels):
        if "." in name or name not in it.fn.locals:
            continue
        labels = frozenset(lb for lb in it.labels[name] if lb.kind not in _OWN)
        ref = it.refs.get(name)
        made = ref if ref is not None and ref[0] in ("new", "made") else None
        if labels or made:
            env.append((name, labels, made))
    key = (it.path, it.fn.name)
    if env or key in it.an.closures:
        it.an.set_state("closures", key, tuple(env))


def bind(it: Interp) -> None:
    """At the start of a nested function's run: the enclosing functions' locals it does not
    bind itself (the nearest scope first); the parameters of the function it is defined in
    are known as such (a model one of them picks is the caller's to say)."""
    outer = enclosing(it.mod, it.fn.name)
    if outer is not None:
        for i, p in enumerate(it.mod.facts.functions[outer].params):
            if p.name not in it.fn.locals and p.name not in ("self", "cls"):
                it.refs.setdefault(p.name, ("outer", i))
    while outer is not None:
        env: Env = it.an.closures.get((it.path, outer), ())
        for name, labels, made in env:
            if name in it.fn.locals or name in it.labels:
                continue
            it.labels[name] = labels
            if made is not None:
                it.refs[name] = made
            it.touched = True  # what it read may change with the enclosing run: never quiet
        outer = enclosing(it.mod, outer)


def captured(it: Interp, name: str) -> tuple[FunctionIR, list[Val]] | None:
    """The enclosing function that binds ``name`` (the nearest) and what it assigns to it,
    for a name the running function does not bind itself."""
    if name in it.fn.locals:
        return None
    outer = enclosing(it.mod, it.fn.name)
    while outer is not None:
        fn = it.mod.facts.functions[outer]
        if name in fn.locals:
            return fn, _assigned(fn, name)
        outer = enclosing(it.mod, outer)
    return None


def _assigned(fn: FunctionIR, name: str) -> list[Val]:
    """What ``fn`` assigns to ``name`` (its whole value, not an element's)."""
    return [st.value for st in walk_steps(fn.body)
            if isinstance(st, Assign) and name in st.targets and not st.weak]


def captured_calls(it: Interp, name: str) -> list[CallIR]:
    """The calls an enclosing function assigned to ``name`` (``fast = claude("haiku")``), and
    to the names it was assigned from (``model = fast``)."""
    found = captured(it, name)
    if found is None:
        return []
    fn, vals = found
    out: list[CallIR] = []
    work, seen = [(v, 0) for v in vals], {name}
    while work:
        v, depth = work.pop()
        out.extend(fn.calls[cid] for cid in v.calls if cid < len(fn.calls))
        for n in v.names:
            if depth < 2 and "." not in n and n not in seen and n in fn.locals:
                seen.add(n)
                work.extend((x, depth + 1) for x in _assigned(fn, n))
    return out


def scoped_function(mod: Module, fn_name: str, root: str) -> str | None:
    """The nested function ``root`` a call in ``fn_name`` reaches: its own (``f.root``) or
    one of an enclosing function's (``main.judge`` called from ``main.run``)."""
    funcs = mod.facts.functions
    scope: str | None = fn_name
    while scope is not None and scope != "<module>":
        if f"{scope}.{root}" in funcs:
            return scope
        scope = enclosing(mod, scope)
    return None
