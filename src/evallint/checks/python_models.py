"""The model pairs (EL301/EL302) and tool grants (EL401) of Python LLM calls."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.facts.toolgrants import ToolGrant, grant_source
from evallint.pyflow.graphs import GraphLink
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.project import graph_links_for, rel, result_for
from evallint.pyflow.results import SYMBOLIC, LLMCall, named_only, structural, where
from evallint.pyflow.summaries import chain_keys
from evallint.registry import Context, Project
from evallint.roles import Role
from evallint.toolcaps import writes


def _pairs(calls: list[LLMCall], near: dict[str, frozenset[str]] | None = None,
           links: list[GraphLink] | None = None) -> list[tuple[LLMCall, LLMCall, str]]:
    """(evaluator, generator, how) call pairs that belong to one loop: linked by a flow from
    the generator's output to the evaluator's input (``flow``), else by a graph whose state
    an LLM node writes and an evaluator node reads (``graph``, from ``links``: the generator
    end may be of no named role, the graph says what it is), else made in the same file
    (``file``), else (``near``: the modules beside each module by import) made in a module
    beside the evaluator's (``beside``), when no flow and no file links the evaluator to any
    generator."""
    by_key = {c.origin.key: c for c in calls if c.origin is not None}

    def compared(c: LLMCall) -> bool:
        # a helper call with a role of its own is compared when its model is the caller's
        # to pick: an unresolved variable here, or a parameter of the helper whose inner
        # call cannot tell (``check(answer, model=chosen)``)
        if not c.own_role or _symbolic(c):
            return True
        keys = list(chain_keys(c.origin))
        inner = by_key.get(keys[1]) if len(keys) > 1 else None
        return c.model is not None and inner is not None and _symbolic(inner)

    base_e = {c.origin.key: c for c in calls if c.role is Role.EVALUATOR
              and compared(c) and c.origin and (c.model or c.obj)}
    base_g = {c.origin.key: c for c in calls if c.role is not Role.EVALUATOR
              and compared(c) and c.origin and (c.model or c.obj)}
    # the evaluator calls made directly in each function: a call of that function is the
    # same evaluator even when what it returns is not their output (a step that parses it)
    inside: dict[tuple[str, str], list[Any]] = {}
    for c in calls:
        if c.role is Role.EVALUATOR and c.origin is not None and not c.origin.inner:
            inside.setdefault((c.path, c.function.rsplit(".", 1)[-1]), []).append(c.origin.key)

    # every evaluator call of each function, by its key (the helper a call's chain enters)
    runs_in: dict[tuple[str, str], list[Any]] = {}
    for c in calls:
        if c.role is Role.EVALUATOR and c.origin is not None:
            runs_in.setdefault(c.origin.key[:2], []).append(c.origin.key)

    def helper_calls(x: LLMCall, keys: list[Any]) -> list[Any]:
        """The evaluator calls made directly in the helper ``x`` calls by name."""
        callee = x.callee.split(".", 1)[1] if x.callee.startswith(("self.", "cls.")) \
            else x.callee  # (a method of its own class: ``self.check(draft)``)
        if callee and "." not in callee and (
                len(keys) == 1 or keys[1] not in base_e):  # a helper called by name
            found = [k for (_, fn), ks in inside.items() if fn == callee for k in ks]
            here = [k for k in found if k[0] == x.path]
            if here or len({k[0] for k in found}) == 1:  # its module's, or the one defining it
                return here or found
        return []

    def chain(x: LLMCall) -> list[Any]:
        keys = list(chain_keys(x.origin))
        return keys + helper_calls(x, keys)

    def innermost(keys: list[Any]) -> list[Any]:
        # one evaluator, one finding: a helper's call site and the call inside it are the
        # same evaluator; the innermost call on the model the call site runs speaks for the
        # chain (a helper whose model is its parameter is reported where it is given one)
        keys = [k for k in keys if k in base_e]
        return [k for k in keys if base_e[k].model == base_e[keys[0]].model][-1:] \
            if keys else []

    def evaluators(x: LLMCall) -> list[Any]:
        """The evaluators a call of ``x`` runs: its own chain's, and each other evaluator
        the helper it calls runs on what it is given (``review(draft)`` running a safety
        and a style critic: both read the draft)."""
        own = list(chain_keys(x.origin))
        out = innermost(own + helper_calls(x, own))
        for k in runs_in.get(own[1][:2], ()) if len(own) > 1 else ():
            if k not in own:
                out += [e for e in innermost(list(chain_keys(by_key[k].origin))) if e not in out]
        return out

    pairs: dict[tuple[object, object], str] = {}
    for x in calls:
        if x.role is not Role.EVALUATOR:
            continue
        e_keys = evaluators(x)
        # several generators reach this evaluator: one of its own file first, then the
        # outermost of a helper's chain (the writer the code calls, not the wrapper's retry
        # inside it), then the nearest one before it, so the finding names the same
        # generator on every run (the origins come out of sets)
        depth: dict[Any, int] = {}
        for o in x.inputs_from:
            for i, k in enumerate(chain_keys(o)):
                if k in base_g:
                    depth[k] = min(i, depth.get(k, i))
        g_keys = sorted(sorted(depth, key=lambda k: _place(base_g[k]), reverse=True),
                        key=lambda k: (base_g[k].path != x.path, depth[k]))
        for ek in e_keys:
            for gk in g_keys:
                pairs[(ek, gk)] = "flow"
    # An evaluator no flow links to a generator: the LLM node of a graph whose state reaches
    # the evaluator's node (the structure names the generator); else the named generators (a
    # call of unknown role is no generator of it: a document analyser's other prompts) of its
    # own file, else of the modules beside its own. A graph link whose evaluator is known by
    # a name only and whose generator has no role of its own comes last (a weak pair).
    chains = [chain(x) for x in calls if x.role is Role.EVALUATOR and x.origin is not None]

    def paired() -> set[Any]:
        """The evaluators paired so far, with every call of their chain (a helper's call
        site is the same evaluator as the call inside it)."""
        linked = {ek for ek, _ in pairs}
        return linked | {k for ks in chains if linked.intersection(ks) for k in ks}

    def graph_pairs(weak: bool) -> None:
        linked = paired()
        for link in links or ():
            for ek, e in base_e.items():
                if ek in linked or (e.path, e.function) != link.evaluator:
                    continue
                for gk, g in base_g.items():
                    if (g.path, g.function) == link.generator and \
                            weak == (named_only(e.evidence) and g.role is not Role.GENERATOR):
                        pairs[(ek, gk)] = "graph"

    graph_pairs(weak=False)
    _place_pairs(pairs, base_e, base_g, near, paired)
    graph_pairs(weak=True)
    return [(base_e[ek], base_g[gk], how)  # type: ignore[index,unused-ignore]
            for (ek, gk), how in pairs.items() if ek in base_e and gk in base_g]


def _place_pairs(pairs: dict[tuple[object, object], str], base_e: Mapping[Any, LLMCall],
                 base_g: Mapping[Any, LLMCall], near: dict[str, frozenset[str]] | None,
                 paired: Callable[[], set[Any]]) -> None:
    """The evaluators no flow and no graph links: the named generators of their own file,
    else of the modules beside theirs."""
    places = {"file": lambda e: {e.path},
              "beside": lambda e: near.get(e.path, frozenset()) if near else frozenset()}
    for how, scope in places.items():
        linked = paired()
        for ek, e in base_e.items():
            if ek in linked:
                continue
            paths = scope(e)
            for gk, g in base_g.items():
                if g.path in paths and g.role is Role.GENERATOR:
                    pairs[(ek, gk)] = how


def _symbolic(c: LLMCall) -> bool:
    """A call of a helper with a role of its own (``grade()``) whose model is one unresolved
    variable of the caller: the helper's inner call cannot tell, so this call is compared."""
    return c.model is not None and c.model.startswith(SYMBOLIC)


def _place(c: LLMCall) -> tuple[str, int, int, int]:
    return (c.path, c.pos.cell or 0, c.pos.line, c.pos.column)


def _model(c: LLMCall) -> str:
    if c.model is None:
        return c.obj_what or "an unresolved model"
    how = f", {c.model_where}" if c.model_where else ""
    return f"`{c.model}`{how}"


def _who(c: LLMCall, role: str, other: LLMCall) -> str:
    """How a message names one end: by its place, or, when both ends are one run (the
    members of a team run where the team is run), by what runs there."""
    at = where(c.path, c.pos)
    if _place(c) == _place(other) and c.origin is not None and c.origin.what:
        return f"the {role} {c.origin.what.removeprefix('the ')} at {at}"
    return f"the {role} call at {at}"


@pair_source
def python_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """Evaluator and generator calls of one loop (:func:`_pairs`) with a model or an object."""
    result = result_for(project, ctx)
    near = _beside(project)
    for e, g, how in _pairs(result.calls, near, graph_links_for(project, ctx)):
        if e.origin is not None and e.origin.key == (g.origin.key if g.origin else None):
            continue
        related = [rel(g.path, g.pos, f"the generator call ({_model(g)})")]
        shared = ""
        if e.obj is not None and e.obj == g.obj:
            shared = f"one chat model object, {e.obj_what}"
            if e.obj_at is not None:
                related.append(rel(*e.obj_at, "the chat model object both calls use"))
        yield ModelPair(
            ModelEnd(_who(e, "evaluator", g), e.path, e.pos, e.model, _model(e)),
            ModelEnd(_who(g, "generator", e), g.path, g.pos, g.model, _model(g)),
            key=e.origin.key if e.origin else None, related=tuple(related),
            evidence=tuple([f"evaluator: {x}" for x in e.evidence]
                           + [f"generator: {x}" for x in g.evidence]
                           + ([f"no data flow links them: the generator's module {g.path} "
                               f"sits beside the evaluator's by import"]
                              if how == "beside" else [])
                           + (["the graph's state carries the generator node's output to "
                               "the evaluator node"] if how == "graph" else [])),
            shared=shared,
            weak=("role from names only: a name alone makes the evaluator one, and the "
                  "graph's structure the generator" if how == "graph" and named_only(e.evidence)
                  and g.role is not Role.GENERATOR else ""),
            names_only=("role from names only: nothing but a name makes the evaluator one"
                        if named_only(e.evidence) else ""),
            by_place=("paired by place only: no data flow, graph or harness links the "
                      "evaluator to this generator" if how in ("file", "beside")
                      and not _built_together(e, g, how) else ""),
            defaulted=("both run on a class's default model: an instance may be built with "
                       "another, and which instance each runs on is not followed"
                       if not shared and _class_default(e) and _class_default(g) else ""))


# ``Claude.model = the default after `cfg.model ||```: an attribute the constructor sets from
# what it is given, this model only when nothing is
_CLASS_DEFAULT = re.compile(r"^[\w$]+\.[\w$]+ = the default after `[^`]+\|\|`")


def _class_default(c: LLMCall) -> bool:
    return bool(c.model_where and _CLASS_DEFAULT.match(c.model_where))


def _built_together(e: LLMCall, g: LLMCall, how: str) -> bool:
    """A framework made both ends one loop: a framework, harness or flow, not a name or a
    text, gives each its role, and they run at one call site (an evaluator-optimizer
    workflow, a team), on one object it made (textgrad's forward and backward engine), or in
    one file (a dataset's judge and the task the file evaluates on it)."""
    return structural(e.evidence) and structural(g.evidence) and (
        how == "file" or _place(e) == _place(g) or (e.obj is not None and e.obj == g.obj))


def _beside(project: Project) -> dict[str, frozenset[str]]:
    """Each Python file's neighbours by import: the project modules it imports, those that
    import it, and those imported by a module that imports it too (siblings)."""
    facts = [f for f in project.files.values() if isinstance(f, PythonFacts) and f.module]
    by_name = {f.module: f.path for f in facts}
    imports: dict[str, set[str]] = {}
    for f in facts:
        targets = f.imports.values() if f.analyzed else f.imported
        for t in targets:
            parts = t.split(".")
            for cut in range(len(parts), 0, -1):
                path = by_name.get(".".join(parts[:cut]))
                if path is not None:
                    if path != f.path:
                        imports.setdefault(f.path, set()).add(path)
                    break
    near: dict[str, set[str]] = {}
    for src, dsts in imports.items():
        for d in dsts:
            near.setdefault(src, set()).add(d)
            near.setdefault(d, set()).add(src)
        if len(dsts) <= 12:  # a module wiring a few others (not an __init__ of everything)
            for a in dsts:
                near.setdefault(a, set()).update(dsts - {a})
    return {k: frozenset(v) for k, v in near.items()}


@grant_source
def python_grants(project: Project, ctx: Context) -> Iterator[ToolGrant]:
    """The write/exec tools handed to an evaluator's LLM call (``tools=``, or a framework
    agent's tools)."""
    result = result_for(project, ctx)
    params = ctx.params("EL401")
    for c in result.calls:
        if c.role is not Role.EVALUATOR or not c.tools:
            continue
        yield ToolGrant(
            f"the evaluator call at {where(c.path, c.pos)}", c.path, c.pos,
            tuple(f"`{t}`" for t in dict.fromkeys(c.tools)
                  if t not in ("function", "custom") and writes(t, params)),
            evidence=tuple(c.evidence))
