"""Evaluation harnesses: the task and the scorers they are given as values.

braintrust's ``Eval("qa", {data, task, scores: [Factuality, politeness]})``, evalite's
``evalite("qa", {data, task, scorers})`` and LangSmith's ``evaluate(target, {evaluators})``
are handed functions, not outputs: the harness calls the task on each case and each scorer
on what the task returned. Those functions are a generator and evaluators by structure,
whatever they are called and however they are written (the catalogue's ``harness`` rows say
where each harness takes them):

- named (``task: answerQuestion``), or inline (an arrow function or a ``lambda``: the
  script lowering names an arrow function after its key, a lambda's body is its call);
- in a list or an object (``scorers: [tone, {name: "len", scorer: fn}]``);
- wrapped by a call that hands the function on (``createScorer({scorer: fn})``,
  ``partial(grade, rubric=R)``), or made by a factory of the project that returns one of
  its own nested functions (``makeJudge("gpt-4o")`` returning ``judge``);
- through a local or module-level name bound to any of those (a few steps at most).

A judge object among the scorers (a framework evaluator the harness runs itself) is an
evaluator call at the harness, on the object's model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evallint.catalogue import HarnessRow
from evallint.pyflow import callmodels, effective
from evallint.pyflow.ir import CallIR, FunctionIR, Return, Val, walk_steps
from evallint.pyflow.providers import CAT, call_arg
from evallint.pyflow.summaries import L, Module
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp

FnKey = tuple[str, str]
Found = tuple[Module, str]  # a function of a module
_DEPTH = 3  # names and wrappers followed from the harness's argument to a function


def harness_row(qualified: str) -> HarnessRow | None:
    """The harness row of an external call (``braintrust.Eval``), if a catalogue file that
    owns the module lists it."""
    short = qualified.rsplit(".", 1)[-1]
    return next((r for r in CAT.harness.get(short, ())
                 if CAT.frameworks[r.framework].owns(qualified)), None)


def note(it: Interp, c: CallIR, row: HarnessRow) -> None:
    """The harness call ``c``: its task functions are generators and its scorer functions
    evaluators (the ``tasks`` and ``scorer_fns`` tables); its judge objects judge here."""
    short = c.func.rsplit(".", 1)[-1]
    task = call_arg(c, row.task) if row.task else None
    tasks = values_of(it, task, it.fn) if task is not None else []
    for mod, name in tasks:
        it.an.set_state("tasks", (mod.path, name), f"the task the `{short}()` harness evaluates")
    scorers = call_arg(c, row.scorers) if row.scorers else None
    if scorers is None:
        return
    why = f"a scorer the `{short}()` harness runs on the task's output"
    found = values_of(it, scorers, it.fn)
    made = _task_output(it, tasks)
    for mod, name in found:
        if (mod.path, name) not in it.an.tasks:
            it.an.set_state("scorer_fns", (mod.path, name), why)
            if made:
                it.an.set_state("harness_inputs", (mod.path, name), made)
    # the scorers' own helpers (``checkRelevancy()`` splitting the output into statements,
    # then grading them) are steps of the scorers, unless the task calls them too
    task_side = _reach(it, tasks)
    for key in _reach(it, found):
        if key not in task_side and key not in it.an.tasks and key not in it.an.scorer_fns:
            it.an.set_state("scorer_fns", key, f"called by {why}")
    _judge_objects(it, c, scorers, short)
    _made_scorers(it, c, scorers, short)


def _made_scorers(it: Interp, c: CallIR, scorers: Val, short: str) -> None:
    """``scores=[make_rater("gpt-4.1")]``: a scorer a project factory made, whose model call
    reads the factory's parameter. The harness runs it here, on the model that factory call
    was given (the nested function alone cannot tell it)."""
    made = [it.fn.calls[cid] for cid in scorers.calls if cid < len(it.fn.calls)]
    for name in scorers.names:
        if "." not in name:  # (a factory call kept in a name of this module)
            made.extend(where.calls[cid] for v, where, home in _bound(it, name, it.fn, None)
                        if home is None for cid in v.calls if cid < len(where.calls))
    for i, call in enumerate(made):
        found = _function(it, call.func, None)
        if found is None:
            continue
        home, factory = found
        for _, inner in _returned(home, factory):
            s = it.an.summary(home, home.facts.functions[inner])
            if not s.llm or s.model.outer is None:
                continue
            p = factory.params[s.model.outer] if s.model.outer < len(factory.params) else None
            given = call.args[s.model.outer] if s.model.outer < len(call.args) else \
                call.kw(p.name) if p is not None else None
            if given is None:
                continue
            model, model_where = callmodels.field_model(it, given, s.model.path) \
                if s.model.path else callmodels.model_of_val(it, given)
            if model is None:
                continue
            effective.record_at(
                it, c, 64 + i, f"the scorer `{call.func}()` made, run by the `{short}()` harness",
                Role.EVALUATOR,
                (f"the scorer `{call.func}()` makes, a scorer of the `{short}()` harness",), {},
                model, model_where)


def _judge_objects(it: Interp, c: CallIR, scorers: Val, short: str) -> None:
    """Framework evaluator objects among the scorers (``evaluators=[correctness]`` where
    ``correctness = create_llm_as_judge(...)``): the harness runs each on the task's output."""
    judges = sorted((lb for lb in it.peek(scorers) if lb.kind == "chat" and lb.origin is not None
                     and (lb.origin.key in it.an.framework or _is_judge(it, lb))),
                    key=lambda lb: lb.origin.key if lb.origin is not None else ())
    for i, lb in enumerate(judges):
        assert lb.origin is not None
        model, model_where = it.an.chats.get(lb.origin.key, (None, ""))
        effective.record_at(it, c, i + 1, f"{lb.origin.what}, run by the `{short}()` harness",
                            Role.EVALUATOR,
                            (f"{lb.origin.what}, a scorer of the `{short}()` harness",), {},
                            model, model_where)


# What a harness hands a scorer as the task's output: a parameter of one of these names (the
# task's input, the expected answer and the example go to the others), else a lone parameter.
_OUTPUT_PARAMS = frozenset({"output", "outputs", "run", "response", "prediction", "completion",
                            "result", "answer", "actual", "generation"})


def output_params(fn: FunctionIR) -> list[str]:
    """The parameters of a scorer that receive the task's output."""
    named = [p.name for p in fn.params if p.name.lower() in _OUTPUT_PARAMS]
    if named:
        return named
    plain = [p.name for p in fn.params if p.name not in ("self", "cls") and not p.star]
    return plain if len(plain) == 1 else []


def _task_output(it: Interp, tasks: list[Found]) -> frozenset[L]:
    """The LLM output the task functions return (the generator's, by structure)."""
    out: set[L] = set()
    for mod, name in tasks:
        fn = mod.facts.functions.get(name) if name in mod.facts.function_names else None
        if fn is None:
            continue
        it.deps.add((mod.path, name))
        for lb in it.an.summary(mod, fn).returns:
            if lb.kind in ("gen", "llm", "ans") and lb.origin is not None:
                out.add(L("gen" if lb.kind == "llm" else lb.kind, lb.origin))
    return frozenset(out)


def _reach(it: Interp, start: list[Found], depth: int = 3) -> dict[FnKey, Found]:
    """The project functions ``start`` calls, and theirs (``depth`` levels), by key."""
    seen: dict[FnKey, Found] = {}
    frontier = list(start)
    for _ in range(depth):
        nxt: list[Found] = []
        for mod, name in frontier:
            fn = mod.facts.functions.get(name) if name in mod.facts.function_names else None
            for call in fn.calls if fn is not None else ():
                found = _function(it, call.func, mod)
                if found is None:
                    continue
                key = (found[0].path, found[1].name)
                if key not in seen:
                    seen[key] = (found[0], found[1].name)
                    nxt.append(seen[key])
        frontier = nxt
    return seen


def _is_judge(it: Interp, lb: L) -> bool:
    info = it.an.fw_objects.get(lb.origin.key) if lb.origin is not None else None
    return info is not None and info.kind in ("judge", "evaluator")


def values_of(it: Interp, val: Val, fn: FunctionIR, depth: int = 0,
              mod: Module | None = None, lambdas: bool = True) -> list[Found]:
    """The project functions a value holds (see the module's docstring); ``fn`` is the
    function whose calls the value's call ids index, ``mod`` the module it is written in
    (the interpreted one unless a name led to another module's constant); ``lambdas``: a
    project function called in the value is the function given (a lambda's body call) when
    it returns none of its own (else only a factory's nested functions count)."""
    out: dict[FnKey, Found] = {}
    for name in val.names:
        out.update(((m.path, n), (m, n)) for m, n in _named(it, name, fn, depth, mod, lambdas))
    for cid in val.calls:
        if cid < len(fn.calls):
            out.update(((m.path, n), (m, n)) for m, n in _through_call(
                it, fn.calls[cid], fn, depth, mod, lambdas))
    return list(out.values())


def _function(it: Interp, name: str, mod: Module | None) -> tuple[Module, FunctionIR] | None:
    if mod is None:
        kind, qual = it.resolve(name)
        return it.an.tables.function(qual, it.path) if kind in ("fn", "ext") else None
    if name in mod.facts.function_names:
        return mod, mod.facts.functions[name]
    root, _, rest = name.partition(".")
    target = mod.facts.imports.get(root)
    return it.an.tables.function(f"{target}.{rest}" if rest else target, mod.path) \
        if target else None


def _named(it: Interp, name: str, fn: FunctionIR, depth: int,
           mod: Module | None, lambdas: bool) -> list[Found]:
    found = _function(it, name, mod)
    if found is not None:
        return [(found[0], found[1].name)]
    if depth >= _DEPTH:
        return []
    out: list[Found] = []
    for v, where, in_mod in _bound(it, name.split(".")[0], fn, mod):
        out.extend(values_of(it, v, where, depth + 1, in_mod, lambdas))
    return out


def _bound(it: Interp, name: str, fn: FunctionIR, mod: Module | None
           ) -> list[tuple[Val, FunctionIR, Module | None]]:
    """What a name holds (``SCORERS[kind]``, ``checks.faithful``: what the root holds): the
    values a local was given here, else a module-level constant of ``mod`` (the interpreted
    module when None) or one it imports, each with the function whose calls it indexes and
    its module (None: the interpreted one)."""
    if mod is None and name in it.fn.locals:
        return [(v, it.fn, None) for v in it.local_vals.get(name, ())]
    const = _constant(it, mod or it.mod, name)
    if const is None:
        return []
    facts = const[0].facts
    val = facts.constants[const[1]]
    owner = facts.functions.get(facts.owners.get(const[1], ""))
    if owner is None and val.calls:
        return []
    # (a display of names has no calls to index)
    return [(val, owner or fn, None if const[0] is it.mod else const[0])]


def _constant(it: Interp, mod: Module, name: str) -> tuple[Module, str] | None:
    """A module-level name of ``mod``, or the constant of another module it imports."""
    if name in mod.facts.constants:
        return mod, name
    target = mod.facts.imports.get(name)
    return it.an.tables.constant(target, mod.path) if target else None


def _through_call(it: Interp, call: CallIR, fn: FunctionIR, depth: int,
                  mod: Module | None, lambdas: bool) -> list[Found]:
    """A call inside the value: a project factory gives the nested functions it returns
    (a lambda's body call, the function itself); any other call hands on the functions among
    its arguments (``createScorer({scorer: fn})``)."""
    found = _function(it, call.func, mod)
    if found is not None:
        home, callee = found
        returned = _returned(home, callee)
        return returned or ([(home, callee.name)] if lambdas else [])
    if depth >= _DEPTH:
        return []
    out: list[Found] = []
    on = (Val(names=(call.func.rsplit(".", 1)[0],)),) if "." in call.func else \
        (call.recv,) if call.recv is not None else ()
    for v in (*call.args, *(v for _, v in call.kwargs), *on):  # (``METRICS.items()``)
        out.extend(values_of(it, v, fn, depth + 1, mod, lambdas))
    return out


def _returned(mod: Module, fn: FunctionIR) -> list[Found]:
    """The functions nested in ``fn`` that it returns (``return judge``, ``return {run}``)."""
    names = mod.facts.function_names
    out: list[Found] = []
    for step in walk_steps(fn.body):
        if isinstance(step, Return):
            for n in (*step.value.names, *(n for _, v in step.value.keys for n in v.names)):
                inner = f"{fn.name}.{n}"
                if inner in names and all(x != inner for _, x in out):
                    out.append((mod, inner))
    return out


def called_through(it: Interp, c: CallIR) -> list[tuple[Module, FunctionIR]]:
    """``fn(out)`` where the local ``fn`` holds one of several project functions (``for name,
    fn in METRICS.items()``, ``scorer = SCORERS[kind]``), or ``WRITERS[key](topic)`` on a table
    of functions (a local or a module's constant): the functions it may be."""
    name = c.func[:-3] if c.func.endswith(".[]") else c.func
    if not name or "." in name or any(p.name == name for p in it.fn.params):
        return []
    if name == c.func and name not in it.fn.locals:
        return []
    found = values_of(it, Val(names=(name,)), it.fn, lambdas=False)
    return [(mod, mod.facts.functions[n]) for mod, n in found[:8]]
