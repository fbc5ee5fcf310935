"""An effective LLM call, recorded the same way whichever recogniser found it (an SDK call, a
chat model, a helper that makes LLM calls, a framework object run): the loops around it learn
its role, what reaches its input is checked (:mod:`~evallint.pyflow.flows`), and the reporting
pass keeps the call for the checks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evallint.pyflow import flows, loopfacts
from evallint.pyflow.callroles import prompt_texts
from evallint.pyflow.cues import SCORE_ASKED
from evallint.pyflow.ir import CallIR
from evallint.pyflow.results import LLMCall, where
from evallint.pyflow.summaries import L, Origin, first_origin
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp


# The n-th further effective call one call site makes (a run of the object it builds, each
# scorer attached to it or given to a harness): its own origin key, apart from the source's.
SECOND = 1 << 20


def record_at(it: Interp, c: CallIR, n: int, what: str, role: Role,
              evidence: tuple[str, ...], inputs: dict[str, frozenset[L]],
              model: str | None, model_where: str) -> Origin:
    """One more effective call made at call ``c`` (the ``n``-th), that the call's code does
    not show as a call of its own: a framework or a harness runs it there."""
    origin = Origin(it.path, c.pos, what, (it.path, it.fn.name, c.id + SECOND * n))
    it.summary.n_llm += 1
    record(it, c, c.func, role, evidence, inputs, model, model_where, (), origin, own_role=False)
    return origin


def record(it: Interp, c: CallIR, callee: str, role: Role, evidence: tuple[str, ...],
           inputs: dict[str, frozenset[L]], model: str | None, model_where: str,
           tools: tuple[str, ...], origin: Origin, own_role: bool,
           obj: Origin | None = None) -> None:
    """Record an effective LLM call: loops, sinks, and (when reporting) the call event."""
    it.touched = True
    # a call that reads another call's output may evaluate it (see ``Interp.note_verdict``),
    # unless it continues that call's conversation (its history or system prompt) or
    # reads its own earlier output: then it is the generator reflecting on its own work
    if any(lb.origin is not None and lb.origin.key == origin.key
           and lb.kind in ("gen", "llm", "ans", "judge")
           for labels in inputs.values() for lb in labels):
        it.an.add_state("self_fed", (origin.key,))
    if (role is not Role.EVALUATOR or origin.key in it.an.structural) and not any(
            lb.kind == "genctx" for labels in inputs.values() for lb in labels):
        src = first_origin(lb.origin for labels in inputs.values() for lb in labels
                           if lb.kind in ("gen", "llm", "ans") and lb.origin is not None
                           and lb.origin.key != origin.key)
        if src is not None:
            it.fed[origin.key] = src
            if role is Role.UNKNOWN and any(SCORE_ASKED in labels for labels in inputs.values()):
                _scored_reader(it, c, origin, src)
    r = "evaluator" if role is Role.EVALUATOR else "generator"
    it.called.add(r)
    it.call_roles.add(role)
    if role is Role.EVALUATOR and any(SCORE_ASKED in labels for labels in inputs.values()):
        it.an.add_state("scored", (origin.key,))
    for lid in it.loop_stack:
        gen, ev = it.loop_roles[lid]
        (ev if role is Role.EVALUATOR else gen).append(c.pos)
    if it.loop_stack:
        loopfacts.note_crossings(it, c.id, role is Role.EVALUATOR, inputs)
    flows.sink_check(it, c, role, inputs, f"`{callee}()`")
    if it.report:
        reach = tuple(lb.origin for labels in inputs.values() for lb in labels
                      if lb.origin is not None and (lb.kind in ("gen", "llm", "ans") or (
                          lb.kind == "genctx" and lb.origin.key in it.an.fw_runs)))
        model_pos = c.pos
        it.an.add_result("calls", LLMCall(
            it.path, it.fn.name, c.pos, callee, role, evidence, model, model_where,
            model_pos, tools, reach, own_role, origin, obj.key if obj else None,
            f"{obj.what} ({where(obj.path, obj.pos)})" if obj else "",
            (obj.path, obj.pos) if obj else None))


def output(role: Role, origin: Origin, structured: bool = False) -> frozenset[L]:
    """What an effective call returns to the code around it: the judge's output (``flag``:
    structured), the generator's, or the output of a call of no known role."""
    if role is Role.EVALUATOR:
        return frozenset({L("judge", origin, flag=structured)})
    return frozenset({L("gen" if role is Role.GENERATOR else "llm", origin)})


# A prompt that asks to change the text it is given: a reviser quoting the last score
# ("it scored 6/10, improve it") asks for a text, not for a score.
_REVISES = re.compile(r"\b(?:revise|rewrite|re-write|improve|refine|fix|edit|polish|update)\b",
                      re.IGNORECASE)


def _scored_reader(it: Interp, c: CallIR, origin: Origin, src: Origin) -> None:
    """A call of no named role that is given another LLM call's output and asked for a
    numeric score ("rate it from 1 to 10") evaluates that output, whatever it is called."""
    if origin.key in it.an.structural or origin.key in it.an.self_fed:
        return
    texts = prompt_texts(it, None, [*c.args, *(v for _, v in c.kwargs)])
    if any(_REVISES.search(t) for t in texts):
        return
    it.an.set_state("structural", origin.key, (
        f"its input holds the output of the LLM call at {where(src.path, src.pos)} and its "
        "prompt asks for a numeric score"))
    it.structural = True
