"""Functions handed to a project helper as values, run where the helper calls them.

``runWithRecursion(generate, evaluate, refine)``, ``run_suite(cases, answer_fn)``,
``improve(first, critique, rewrite)``: the helper is the loop or the harness, and the steps it
runs are the caller's functions. A helper's summary lists the parameters it calls
(``called_params``: directly, or by handing them on to a helper that calls its own). A call
that hands project functions to those parameters runs the helper once more, specialised to
this call site: its calls of those parameters run the functions handed over, as any helper
call runs. So the generator's output reaching the evaluator inside the helper is a flow, the
loop there has its roles, and what the helper returns is what those functions made, for this
caller only (another caller's functions are another specialisation).

The specialised run is part of the caller's run (its lookups, its state changes and the
summaries it reads are the caller's), under a name of its own (``helper@<digits>``, made from
the call site), so its calls are told apart from the helper's plain run and from other sites'.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from evallint.pyflow import harness
from evallint.pyflow.callroles import own_role
from evallint.pyflow.ir import Assign, CallIR, FunctionIR, Val, walk_steps
from evallint.pyflow.relevance import function_role
from evallint.pyflow.summaries import L, Module, Summary, chain_keys
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp

Site = tuple[str, str, int]  # the call that handed functions over (path, function, call id)
Bound = tuple[Module, FunctionIR]
_MAX_TARGETS = 8  # functions one parameter may stand for at one site
_MAX_DEPTH = 3  # helpers handing the functions on to helpers
_MADE = frozenset({"llm", "gen", "ans", "judge"})  # what an LLM call made


def chains_params(fn: FunctionIR) -> bool:
    """Does ``fn`` hand what one function it was given returns to another it was given
    (``evaluate(generate(x))``, ``draft = write(); verdict = judge(draft)``), or call one named
    for a role (``evaluate(draft)``)? Then it runs its callers' steps: a loop or a harness."""
    params = {p.name for p in fn.params if not p.star}
    by_call = {c.id: c.func for c in fn.calls if c.func in params}
    if not by_call:
        return False
    if any(function_role(f) is not Role.UNKNOWN for f in by_call.values()):
        return True
    made: dict[str, set[str]] = {}  # local -> the parameters whose results it holds

    def sources(v: Val) -> set[str]:
        out = {by_call[i] for i in v.calls if i in by_call}
        for n in v.names:
            out |= made.get(n.split(".")[0], set())
        return out

    for _ in range(2):  # (a loop's assignment reaches the calls before it the second time)
        for step in walk_steps(fn.body):
            if isinstance(step, Assign):
                got = sources(step.value)
                for t in step.targets:
                    if got - made.get(t, set()):
                        made.setdefault(t, set()).update(got)
    for c in fn.calls:
        if c.func in params and any(sources(a) - {c.func}
                                    for a in (*c.args, *(v for _, v in c.kwargs))):
            return True
    return False


def handed_to(imports: dict[str, str], functions: Mapping[str, FunctionIR]) -> tuple[str, ...]:
    """The imported names (qualified) a module calls with one of its own functions among the
    arguments (``iterate(make, rate)``, an arrow function the lowering named): the files
    defining them may run those functions (read by ``project._step_runners``)."""
    names = set(functions)
    out: dict[str, None] = {}
    for fn in functions.values():
        for c in fn.calls:
            root, _, rest = c.func.partition(".")
            target = imports.get(root)
            if not target:
                continue
            for v in (*c.args, *(v for _, v in c.kwargs)):
                if any(n in names or f"{fn.name}.{n}" in names for n in v.names):
                    out[f"{target}.{rest}" if rest else target] = None
                    break
    return tuple(out)


def param_index(fn: FunctionIR, name: str) -> int | None:
    """The position of parameter ``name`` of ``fn`` (None: not a parameter)."""
    return next((i for i, p in enumerate(fn.params) if p.name == name), None)


def note_direct(it: Interp, c: CallIR) -> None:
    """``generate(x)`` where ``generate`` is a parameter: the function calls it."""
    if c.func and "." not in c.func:
        i = param_index(it.fn, c.func)
        if i is not None:
            it.called_params.add(i)


def specialize(it: Interp, c: CallIR, mod: Module, fn: FunctionIR, s: Summary,
               vals: dict[int, Val], by_param: dict[int, frozenset[L]]) -> Summary | None:
    """The call ``c`` hands helper ``fn`` functions at parameters it calls: the helper's run
    with those functions bound, for this call (None: nothing of ours is handed over). A
    parameter of this function handed on keeps what it is bound to here (and this function
    calls it too, through the helper). A called parameter handed an LLM's output instead of a
    function (the script lowering runs a thunk, ``async () => { ... }``, where it is written)
    holds that output in the run: calling it gives it."""
    if it.depth >= _MAX_DEPTH:
        return None
    bindings: dict[str, list[Bound]] = {}
    seeds: dict[str, frozenset[L]] = {}
    for j in sorted(s.called_params):
        v = vals.get(j)
        if v is None or j >= len(fn.params):
            continue
        found: list[Bound] = []
        if len(v.names) == 1 and not v.calls:
            own = param_index(it.fn, v.names[0])
            if own is not None:  # handed on: ``runTestCase(case, testFunction)``
                it.called_params.add(own)
                found.extend(it.bindings.get(v.names[0], ()))
        # (a function handed by name, or an arrow function the lowering named; a value with
        # calls in it is what those calls made, not a function, however the calls were fed)
        named = harness.values_of(it, v, it.fn, lambdas=False) if not v.calls else []
        for m, name in named:
            f = m.facts.functions.get(name) if name in m.facts.function_names else None
            if f is not None and (m.path, name) != (mod.path, fn.name) and \
                    all(f is not g for _, g in found) and _makes_llm_calls(it, m, f):
                found.append((m, f))
        if found:
            bindings[fn.params[j].name] = found[:_MAX_TARGETS]
        elif any(lb.kind in _MADE for lb in by_param.get(j, ())):
            seeds[fn.params[j].name] = frozenset(
                lb for lb in by_param[j] if lb.kind in _MADE)
    if not bindings:
        return None
    site = (it.path, it.fn.name, c.id)
    # (a name of its own per site, in digits: no word of the caller's name is the helper's)
    tag = zlib.crc32(repr(site).encode()) % 1_000_000
    spec = type(it)(it.an, mod, replace(fn, name=f"{fn.name}@{tag}"), it.report)
    spec.own_role, spec.own_evidence = own_role(it.an, mod, fn.name)
    spec.own_configured = it.an.configured_role(fn.name, f"{mod.name}.{fn.name}") is not None
    spec.bindings, spec.depth, spec.seeds = bindings, it.depth + 1, seeds
    spec.sites = it.sites | {site}
    out = spec.run()
    it.deps |= spec.deps
    it.touched = True
    return out


def _makes_llm_calls(it: Interp, mod: Module, fn: FunctionIR) -> bool:
    """Does a function handed over call an LLM (itself or through helpers)? Only then does
    running it in the helper tell anything the helper's own run does not (a progress callback
    or a logger handed to a loop is run as any unknown function is)."""
    if mod.path not in it.an.relevant and (mod.path, fn.name) not in it.an.summaries:
        return False
    it.deps.add((mod.path, fn.name))
    return it.an.summary(mod, fn).llm


def targets(it: Interp, c: CallIR) -> list[Bound]:
    """The functions a call of a bound parameter runs (``generate(x)``)."""
    if not it.bindings or not c.func or "." in c.func:
        return []
    return list(it.bindings.get(c.func, ()))


def not_returned(it: Interp, labels: frozenset[L]) -> frozenset[L]:
    """What a handed function returns, less what the helper's call at this site (or an outer
    one) returned: a nested function reading its caller's locals after the call sees the
    helper's result, which would come round again on every run, its chain growing each time."""
    return frozenset(lb for lb in labels if not it.sites.intersection(chain_keys(lb.origin)))
