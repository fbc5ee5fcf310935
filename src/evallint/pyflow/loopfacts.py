"""Loop facts (I7): whether a refinement loop is bounded, how it stops, whether it keeps the
last attempt instead of the best, parses of a judge's output and result files written inside
it. They become the events of EL502 to EL505; the wording is the checks'.

The functions here take the interpreter (:class:`evallint.pyflow.interp.Interp`) as their first
argument.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evallint.facts import Pos
from evallint.pyflow.cues import name_tokens
from evallint.pyflow.ir import Assign, CallIR, Exit, If, Loop, Return, Step, Val, walk_steps
from evallint.pyflow.results import Event, where
from evallint.pyflow.summaries import L, chain_keys
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp


# Patterns that capture free-form text: ``.*``, ``\S+``, ``[^}]*``, ``[\s\S]*``
_FREEFORM = re.compile(r"(?<!\\)\.[*+{]|\\[SWw][*+{]|\[\^[^\]]*\][*+{]|\[\\[sSdDwW]\\[sSdDwW]\]")

_QUEUE_TAKE = frozenset({"get", "get_nowait", "recv", "receive", "popleft", "pop"})


def judgey(labels: frozenset[L]) -> bool:
    return any(lb.kind in ("judge", "pass", "llm", "gen", "ans") for lb in labels)


def bounded(it: Interp, loop: Loop) -> bool:
    if loop.kind == "for":
        for cid in loop.iter.calls:
            func = it.fn.calls[cid].func.rsplit(".", 1)[-1]
            if func in ("count", "cycle") or (func == "repeat"
                                              and len(it.fn.calls[cid].args) < 2):
                return False
        return True
    assert loop.test is not None
    if any(not judgey(it.peek(c)) for c in loop.test.compares):
        return True
    return _exit_on_counter(it, loop.body) or _exit_on_queue(it, loop.body)


def _exit_on_queue(it: Interp, steps: list[Step]) -> bool:
    """A worker loop: it takes its next job from a queue (``job = q.get()``) and stops on
    what the queue hands it (``if job is None: break``), not on a judge's opinion."""
    taken: set[str] = set()
    for st in walk_steps(steps):
        if isinstance(st, Assign) and len(st.value.calls) == 1 and not st.value.names:
            cid = st.value.calls[0]
            if cid < len(it.fn.calls) and it.fn.calls[cid].func.rsplit(".", 1)[-1] in \
                    _QUEUE_TAKE and "." in it.fn.calls[cid].func:
                taken.update(st.targets)
        elif isinstance(st, If) and taken & set(st.test.names) and any(
                (isinstance(x, Exit) and x.kind == "break") or isinstance(x, Return)
                for x in st.body):
            return True
    return False


def _exit_on_counter(it: Interp, steps: list[Step]) -> bool:
    for st in steps:
        if isinstance(st, If):
            exits = any(isinstance(s, (Exit, Return)) and getattr(s, "kind", "") != "continue"
                        for s in st.body)
            if exits and any(not judgey(it.peek(c)) for c in st.test.compares):
                return True
            if _exit_on_counter(it, st.body) or _exit_on_counter(it, st.orelse):
                return True
    return False


def check_pass_test(it: Interp, test: Val, labels: frozenset[L], pos: Pos) -> None:
    if not it.report or test.compares:
        return
    for lb in labels:
        # a binary judge (is_correct, no score) decides by design: only a judge that also
        # gives a score should have its pass computed from that score
        if lb.kind == "pass" and lb.origin is not None and (
                it.an.scored & set(chain_keys(lb.origin))):
            o = lb.origin
            rel = ((o.path, o.pos, "the evaluator's output comes from here"),)
            it.an.add_result("events", Event(
                "EL503", it.path, pos, "pass-field",
                (("field", lb.name or ""), ("at", where(o.path, o.pos))), rel))
            return


def check_text_stop(it: Interp, test: Val, pos: Pos) -> None:
    """A loop that stops when the evaluator's free text matches a word (``if reply ==
    "PASS": break``, ``"<OK>" in critique``): the judge's unvalidated words decide."""
    if not it.report or test.compares or not test.boolean or not it.loop_stack:
        return
    gen, _ev = it.loop_roles[it.loop_stack[-1]]
    if not gen or ("EL503", pos) in it.stops:
        return  # no generator in the loop: a judge refining its own verdict
    words = [w for w in test.strings if w.strip() and len(w) <= 24]
    if not words:
        return
    for lb in it.peek(test):  # before the comparison turned the labels into a bool
        if lb.kind == "judge" and not lb.flag and lb.origin is not None:
            o = lb.origin
            it.stops.add(("EL503", pos))
            it.an.add_result("events", Event(
                "EL503", it.path, pos, "text-stop",
                (("at", where(o.path, o.pos)), ("word", words[0].strip())),
                ((o.path, o.pos, "the evaluator's output comes from here"),)))
            return


def regex_text(it: Interp, v: Val) -> str | None:
    """The pattern of a regex call: a literal, a module constant or ``re.compile("…")``."""
    if v.text is not None:
        return v.text
    module = it.mod.facts.functions.get("<module>")
    for n in v.names:
        const = it.mod.facts.constants.get(n)
        if const is None:
            continue
        if const.text is not None:
            return const.text
        for cid in const.calls:
            if module is not None and cid < len(module.calls):
                call = module.calls[cid]
                if call.func.endswith("compile") and call.args and call.args[0].text:
                    return call.args[0].text
    return None


def regex_checked(pattern: str | None, labels: frozenset[L]) -> frozenset[L]:
    """A regex match over judge output: what it captures has the pattern's shape (a
    number, a fixed word), so parsing it is validated, unless the pattern captures
    free-form text (``{.*}``) or is unknown."""
    if pattern is None or _FREEFORM.search(pattern):
        return labels
    return frozenset(L(lb.kind, lb.origin, lb.idx, True, lb.name) if lb.kind == "judge"
                     else lb for lb in labels)


def note_parse(it: Interp, c: CallIR, labels: frozenset[L]) -> None:
    if c.args and c.args[0].boolean:
        return  # int(a == b): a bool, nothing is parsed
    for lb in labels:
        if lb.kind == "judge" and not lb.flag:
            it.parses.setdefault(lb.origin, []).append((c, lb))


def check_last_not_best(it: Interp, step: Return, labels: frozenset[L]) -> None:
    if not it.report or it.fn.best:
        return
    for lb in labels:
        if lb.kind not in ("gen", "llm", "ans") or lb.origin is None:
            continue
        if lb.origin.key[:2] != (it.path, it.fn.name):
            continue
        loops = it.call_loops.get(lb.origin.key[2], ())
        inside = [lid for lid in loops if lid in it.refinement
                  and lid not in it.loop_stack]
        if inside:
            it.an.add_result("events", Event(
                "EL502", it.path, step.pos, "last-attempt",
                (("at", where(it.path, lb.origin.pos)),),
                ((it.path, lb.origin.pos, "the attempt is generated here"),)))
            return


_RESULT_WORDS = frozenset({"result", "results", "records", "runs", "scores", "attempts", "evals"})
# Words that name a file as data to train or test on, not as the record of a run.
_DATA_WORDS = frozenset({"train", "training", "synthetic", "dataset", "finetune", "finetuning",
                         "demos", "demonstrations", "corpus"})


def finish_report(it: Interp) -> None:
    for origin, items in it.parses.items():
        if any(c.in_try for c, _ in items) or it.fn.validates:
            continue
        c, _ = items[0]
        rel = ((origin.path, origin.pos, "the evaluator's output comes from here"),) \
            if origin else ()
        it.an.add_result("events", Event(
            "EL504", it.path, c.pos, "unchecked-parse",
            (("at", where(origin.path, origin.pos) if origin else "?"), ("func", c.func)),
            rel))
    has_eval = any(lc.path == it.path and lc.role is Role.EVALUATOR
                   for lc in it.an.result.calls)
    for cid, (c, loops, bound) in it.opens.items():
        mode = c.args[1].text if len(c.args) > 1 else None
        mv = c.kw("mode")
        if mv is not None:
            mode = mv.text
        if c.func.endswith("write_text"):
            mode = "w"
        if not mode or not mode.startswith("w"):
            continue
        target = c.recv if c.recv is not None else (c.args[0] if c.args else Val())
        parts = [*target.strings, *target.names, c.func]
        for tc in target.calls:  # Path("results.jsonl").open("w")
            if tc < len(it.fn.calls):
                parts += [x for v in it.fn.calls[tc].args for x in (*v.strings, *v.names)]
        names = " ".join(parts)
        tokens = set(name_tokens(names))
        # (a data set the run produces, "train_synthetic.jsonl", is an export, not its log)
        resultish = bool(tokens & _RESULT_WORDS) or (
            ("jsonl" in tokens or ".jsonl" in names) and not tokens & _DATA_WORDS)
        # a path made from what the loop binds (f"out/{case_id}.json") is one file per case
        fixed = not {n.split(".")[0] for n in target.names} & bound
        llm_loops = [lid for lid in loops if any(it.loop_roles.get(lid, ((), ())))]
        kind, loop_at = "", ""
        if fixed and any(lid in it.refinement for lid in loops):
            lid = next(lid for lid in loops if lid in it.refinement)
            kind, loop_at = "refinement", where(it.path, it.loop_objs[lid].pos)
        elif fixed and resultish and llm_loops:
            kind = "per-case"
            loop_at = where(it.path, it.loop_objs[llm_loops[-1]].pos)
        else:
            for h, wloops in sorted(it.writes):
                inner = wloops[len(loops):] if wloops[:len(loops)] == loops else ()
                if h != cid or not inner:
                    continue
                judged = any(it.loop_roles.get(lid, ((), ()))[1] for lid in inner)
                if (resultish and has_eval) or judged:
                    kind = "record-by-record"
                    loop_at = where(it.path, it.loop_objs[inner[0]].pos)
                    break
        if kind:
            it.an.add_result("events", Event(
                "EL505", it.path, c.pos, kind, (("mode", mode), ("loop", loop_at))))
