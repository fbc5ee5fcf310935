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
from evallint.pyflow.ir import (
    Assign,
    CallIR,
    Exit,
    ExprStep,
    If,
    Loop,
    Return,
    Step,
    Val,
    walk_steps,
)
from evallint.pyflow.results import Event, where
from evallint.pyflow.summaries import L, Summary, chain_keys, ordered
from evallint.roles import COUNTER_WORDS, Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp


# Patterns that capture free-form text: ``.*``, ``\S+``, ``[^}]*``, ``[\s\S]*``
_FREEFORM = re.compile(r"(?<!\\)\.[*+{]|\\[SWw][*+{]|\[\^[^\]]*\][*+{]|\[\\[sSdDwW]\\[sSdDwW]\]")

_QUEUE_TAKE = frozenset({"get", "get_nowait", "recv", "receive", "popleft", "pop"})
# What a person types (``input()``, a readline ``question()``/``prompt()``): a loop that stops
# on it is a conversation the user ends, not a refinement the judge ends.
_USER_INPUT = frozenset({"input", "raw_input", "prompt", "question", "readline"})


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
    if any(not judgey(it.peek(c)) or counted(c) for c in loop.test.compares):
        return True
    flags = {st.targets[0]: st.value.compares for st in walk_steps(loop.body)
             if isinstance(st, Assign) and len(st.targets) == 1 and st.value.compares}
    forced = {f"{st.targets[0]}.{k}" for st in walk_steps(loop.body)
              if isinstance(st, Assign) and len(st.targets) == 1 and len(st.value.calls) == 1
              for k in it.call_forced.get(st.value.calls[0], ())}
    return _exit_on_counter(it, loop.body, flags, forced) or _exit_on_queue(it, loop.body)


def counter_test(it: Interp, test: Val) -> int:
    """1 when ``test`` compares a count (``iteration > MAX_ITERATIONS``), else 0."""
    return int(any(counted(c) or (not judgey(it.peek(c)) and c.names) for c in test.compares))


def counted(v: Val) -> bool:
    """A compared value named as an attempt counter (``inputData.round``, ``state.attempts``):
    a field of the step's output that counts, not the judge's opinion."""
    return any(set(name_tokens(n.rsplit(".", 1)[-1])) & COUNTER_WORDS for n in v.names)


def _exit_on_queue(it: Interp, steps: list[Step]) -> bool:
    """A worker loop: it takes its next job from a queue (``job = q.get()``) and stops on
    what the queue hands it (``if job is None: break``), not on a judge's opinion; or a chat
    loop that stops on what the user types (``if query == "exit": break``)."""
    taken: set[str] = set()
    for st in walk_steps(steps):
        if isinstance(st, Assign) and len(st.value.calls) == 1 and not st.value.names:
            cid = st.value.calls[0]
            c = it.fn.calls[cid] if cid < len(it.fn.calls) else None
            short = c.func.rsplit(".", 1)[-1] if c is not None else ""
            if c is not None and ((short in _QUEUE_TAKE and "." in c.func) or (
                    short in _USER_INPUT and not judgey(it.peek(st.value)))):
                taken.update(st.targets)
        elif isinstance(st, If) and taken & _tested(it, st.test) and any(
                (isinstance(x, Exit) and x.kind == "break") or isinstance(x, Return)
                for x in st.body):
            return True
    return False


def _tested(it: Interp, test: Val) -> set[str]:
    """The names a test reads, also through a method of one (``user_input.lower() ==
    "exit"``)."""
    out = {n.split(".")[0] for n in test.names}
    todo = [cid for cid in test.calls if cid < len(it.fn.calls)]
    while todo:  # (``typed.strip().lower()``: through each receiver)
        c = it.fn.calls[todo.pop()]
        out.add(c.func.split(".")[0])
        if c.recv is not None:
            out.update(n.split(".")[0] for n in c.recv.names)
            todo.extend(cid for cid in c.recv.calls if cid < len(it.fn.calls))
    return out


def _exit_on_counter(it: Interp, steps: list[Step], flags: dict[str, tuple[Val, ...]],
                     forced: set[str]) -> bool:
    """An exit on a count: in the test, or in a flag the loop sets before it (``done =
    state.tries >= 3`` then ``if good or done: break``), or on a key the step sets to a
    constant once a count runs out (``forced``: the step forces the exit)."""
    for st in steps:
        if isinstance(st, If):
            exits = any(isinstance(s, (Exit, Return)) and getattr(s, "kind", "") != "continue"
                        for s in st.body)
            tests = [*st.test.compares, *(c for n in st.test.names for c in flags.get(n, ()))]
            if exits and any(not judgey(it.peek(c)) or counted(c) or forced & set(c.names)
                             for c in tests):
                return True
            if _exit_on_counter(it, st.body, flags, forced) or \
                    _exit_on_counter(it, st.orelse, flags, forced):
                return True
    return False


def judged(lb: L) -> bool:
    """Is ``lb`` the evaluator's output, or a flag or a word read from it?"""
    return lb.kind in ("judge", "pass") or (lb.kind == "said" and not lb.flag)


def _holds_judge(labels: frozenset[L]) -> bool:
    return any(judged(lb) for lb in labels)


def scored_in_code(it: Interp, test: Val) -> bool:
    """Does a test compare the judge's output in code (``verdict["score"] >= threshold``)?
    A comparison of anything else (an attempt counter, a list's length) does not count."""
    return any(_holds_judge(it.peek(c)) for c in test.compares)


def check_pass_test(it: Interp, test: Val, labels: frozenset[L], pos: Pos) -> None:
    if not it.report or scored_in_code(it, test):
        return
    for lb in ordered(labels):
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


def text_tests(it: Interp, val: Val) -> set[L]:
    """The tests of a text against a literal in ``val`` (``"APPROVED" in review``,
    ``review.strip() == "PASS"``, ``review.startswith("LGTM")``): for each of the
    evaluator's free-text outputs tested, a ``said`` label with the literal (a bool that the
    judge's own wording decides), for the text of an LLM call of no role a ``said`` label
    with ``flag`` set (when the test ends a loop, the call may be an evaluator by structure:
    ``Interp.note_verdict``), and for a parameter tested, a ``psaid`` label (the caller maps
    it to what it passes). Nothing when the same expression compares the judge's output in
    code too (``"PASS" in review and score >= 8``): a score decides with it."""
    if scored_in_code(it, val):
        return set()
    out: set[L] = set()
    for word, v in val.matches:
        for lb in it.peek(v):
            if lb.kind == "judge" and not lb.flag and lb.origin is not None:
                out.add(L("said", lb.origin, name=word))
            elif lb.kind == "llm" and lb.origin is not None:
                out.add(L("said", lb.origin, flag=True, name=word))
            elif lb.kind in ("param", "psan"):
                out.add(L("psaid", None, lb.idx, name=word))
    return out


def exits(steps: list[Step]) -> frozenset[str]:
    """How a branch can leave the loops around it: ``break`` (the innermost loop, not from
    inside a nested one) and ``return`` (every loop)."""
    out: set[str] = set()
    for st in steps:
        if isinstance(st, Return):
            out.add("return")
        elif isinstance(st, Exit) and st.kind == "break":
            out.add("break")
        elif isinstance(st, If):
            out |= exits(st.body) | exits(st.orelse)
        elif isinstance(st, Loop) and any(isinstance(x, Return) for x in walk_steps(st.body)):
            out.add("return")
    return frozenset(out)


def made_in(it: Interp, lid: int, lb: L) -> bool:
    """Was the value of ``lb`` produced by a call inside loop ``lid`` of this function?"""
    o = lb.origin
    return o is not None and o.key[0] == it.path and o.key[1] == it.fn.name and \
        lid in it.call_loops.get(o.key[2], ())


def note_exit(it: Interp, labels: frozenset[L], lids: list[int], pos: Pos) -> None:
    """A test that ends loops ``lids`` (a ``break`` or ``return`` under it, a ``while``
    test): when it reads the output of an evaluator called in the loop (its text, a score,
    a pass flag, a word it said), the judge decides whether the loop goes on."""
    for lid in lids:
        if lid not in it.decided and any(judged(lb) and made_in(it, lid, lb) for lb in labels):
            it.decided.add(lid)
    if it.fed:  # a word test of an LLM's text that ends the loop: an evaluator by structure?
        it.note_verdict(frozenset(L("llm", lb.origin) for lb in labels
                                  if lb.kind == "said" and lb.flag),
                        "decides when the loop stops", pos)


def note_crossings(it: Interp, cid: int, evaluator: bool, inputs: dict[str, frozenset[L]]
                   ) -> None:
    """An LLM call inside loops: the output of an evaluator of the loop reaching a
    generator's input (``j2g``), or a generator's output of the loop reaching an evaluator's
    (``g2j``), each with the pass of the loop's interpretation it was first seen in."""
    reach = list(inputs.values())
    if not evaluator:
        reach.append(_attributes_read(it, cid))
    for lid in it.loop_stack:
        seen = it.crossings.setdefault(lid, {})
        for labels in reach:
            for lb in labels:
                if (lb.kind in ("gen", "llm", "ans") if evaluator else judged(lb)) and \
                        lb.origin is not None and lb.origin.key[2] != cid and \
                        made_in(it, lid, lb):
                    seen.setdefault(("g2j" if evaluator else "j2g", cid, lb.origin.key),
                                    it.loop_pass.get(lid, 1))


def _attributes_read(it: Interp, cid: int) -> frozenset[L]:
    """What the attributes of the objects a call is given hold (``self.write(task)`` after
    ``self.notes = critique``, ``draft(state)`` after ``state.feedback = notes``): a method or
    a helper reads them, and the caller's labels of the object itself do not show them."""
    if cid >= len(it.fn.calls):
        return frozenset()
    c = it.fn.calls[cid]
    roots = {n.split(".")[0] for v in (*c.args, *(v for _, v in c.kwargs)) for n in v.names}
    if c.func.startswith(("self.", "cls.")):
        roots.add(c.func.split(".")[0])
    # (a loop's target is another object on each iteration: ``case.verdict = ...`` set on
    # one case is not read by the next one's attempt)
    roots -= {t.split(".")[0] for lid in it.loop_stack for t in it.loop_objs[lid].targets}
    if not roots:
        return frozenset()
    out: set[L] = set()
    for key, labels in it.labels.items():
        root, dot, _ = key.partition(".")
        if dot and root in roots:
            out |= labels
    return frozenset(out)


def refines(it: Interp, lid: int) -> bool:
    """A loop that calls a generator and an evaluator refines when the evaluator's output
    comes back into the next attempt: it decides whether the loop goes on, or it reaches a
    generator's input in the loop and the circle closes across iterations (a flow between
    the two first seen in the second pass of the loop: the feedback of one attempt reaches
    the next one, or the attempt the feedback produced is judged in the next iteration).
    A loop over cases that generates, judges and records each is an evaluation run."""
    if lid in it.decided:
        return True
    seen = it.crossings.get(lid, {})
    return any(k[0] == "j2g" for k in seen) and any(n == 2 for n in seen.values())


def check_text_stop(it: Interp, test: Val, labels: frozenset[L], pos: Pos) -> None:
    """A loop that stops when the evaluator's free text matches a word (``if reply ==
    "PASS": break``, ``"<OK>" in critique``, ``while "APPROVED" not in review``, a flag
    set from such a test): the judge's unvalidated words decide."""
    if not it.report or not it.loop_stack or scored_in_code(it, test):
        return
    gen, _ev = it.loop_roles[it.loop_stack[-1]]
    if not gen or ("EL503", pos) in it.stops:
        return  # no generator in the loop: a judge refining its own verdict
    said = sorted((lb for lb in labels if lb.kind == "said" and not lb.flag
                   and lb.origin is not None),
                  key=lambda lb: (lb.origin.key if lb.origin else ("", "", 0), lb.name))
    if said:
        o = said[0].origin
        assert o is not None
        it.stops.add(("EL503", pos))
        it.an.add_result("events", Event(
            "EL503", it.path, pos, "text-stop",
            (("at", where(o.path, o.pos)), ("word", said[0].name)),
            ((o.path, o.pos, "the evaluator's output comes from here"),)))


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
    # (a helper's ``float(match.group())``, ``Number(x) || 0`` coerce what they already
    # matched or default it: only a JSON or literal parse of a parameter is its caller's)
    whole = c.func.rsplit(".", 1)[-1] in ("loads", "literal_eval")
    for lb in labels:
        if lb.kind == "judge" and not lb.flag:
            it.parses.setdefault(lb.origin, []).append((c, lb))
        elif lb.kind in ("param", "psan") and lb.idx is not None and whole:
            it.param_parses.setdefault(lb.idx, []).append(c)


def unchecked_params(it: Interp) -> frozenset[int]:
    """The parameters this function parses with no error handling and no validation (see
    ``Summary.parses``)."""
    if it.fn.validates:
        return frozenset()
    return frozenset(i for i, cs in it.param_parses.items()
                     if not any(c.in_try and c.func not in NO_THROW_PARSES for c in cs))


def helper_parses(it: Interp, c: CallIR, s: Summary, by_param: dict[int, frozenset[L]]) -> None:
    """``parse_result(reply.text)`` where ``parse_result`` parses its parameter unchecked: the
    judge's text handed to it is parsed here, as if the parse were written at this call."""
    for j in s.parses:
        for lb in by_param.get(j, ()):
            if lb.kind == "judge" and not lb.flag:
                it.parses.setdefault(lb.origin, []).append((c, lb))


_APPENDS = frozenset({"append", "extend", "insert", "appendleft", "add", "put"})


def accumulators(it: Interp, lids: list[int]) -> set[str]:
    """Names that loops ``lids`` only add to (``history.append(...)``, ``log += [...]``),
    never bind anew inside: such a name holds every attempt, not the last one."""
    added: set[str] = set()
    bound: set[str] = set()
    for lid in lids:
        for cid, loops in it.call_loops.items():
            if lid in loops and cid < len(it.fn.calls):
                base, _, short = it.fn.calls[cid].func.rpartition(".")
                if short in _APPENDS and base and not base.startswith("<expr>"):
                    added.add(base)
        loop = it.loop_objs.get(lid)
        for st in walk_steps(loop.body) if loop is not None else ():
            if isinstance(st, Assign):
                if st.aug:
                    added.update(st.targets)
                elif not st.weak:
                    bound.update(st.targets)
    return added - bound


def _beyond(it: Interp, val: Val, skip: set[str], depth: int = 0) -> tuple[frozenset[L], bool]:
    """The labels of a returned value that do not come through the names in ``skip``, and
    whether it reads one of them: a call that makes a value of its own (an LLM call, a
    helper's) gives its result, any other call (``pd.DataFrame(history)``,
    ``json.dumps(...)``) what its arguments hold."""
    out: set[L] = set()
    seen = False
    for n in val.names:
        if n in skip:
            seen = True
        else:
            out |= it.read(n)
    for cid in val.calls:
        got = it.call_out.get(cid, frozenset())
        if depth >= 4 or cid >= len(it.fn.calls) or any(
                lb.origin is not None and lb.origin.key == (it.path, it.fn.name, cid)
                for lb in got):
            out |= got
            continue
        c = it.fn.calls[cid]
        for v in (*c.args, *(v for _, v in c.kwargs), *((c.recv,) if c.recv else ())):
            got, hit = _beyond(it, v, skip, depth + 1)
            out |= got
            seen = seen or hit
    return frozenset(out), seen


def check_last_not_best(it: Interp, step: Return | ExprStep, labels: frozenset[L]) -> None:
    if not it.report or it.fn.best:
        return
    # (in the order of the calls: the finding names the same attempt on every run)
    for lb in sorted(labels, key=lambda x: x.origin.key if x.origin else ("", "", -1)):
        if lb.kind not in ("gen", "llm", "ans") or lb.origin is None:
            continue
        if lb.origin.key[:2] != (it.path, it.fn.name):
            continue
        loops = it.call_loops.get(lb.origin.key[2], ())
        inside = [lid for lid in loops if lid in it.refinement
                  and lid not in it.loop_stack]
        if not inside:
            continue
        if _only_as_bool(it, step.value, lb):
            continue  # ``return {found: !!winner}``: whether there is one, not the attempt
        kept = accumulators(it, inside)  # ``return history``: every attempt, not the last
        if kept:
            rest, seen = _beyond(it, step.value, kept)
            if seen and lb not in rest:
                continue
        it.an.add_result("events", Event(
            "EL502", it.path, step.pos, "last-attempt",
            (("at", where(it.path, lb.origin.pos)),),
            ((it.path, lb.origin.pos, "the attempt is generated here"),)))
        return


def _only_as_bool(it: Interp, value: Val, lb: L) -> bool:
    """A returned record holds the attempt only in fields that are comparisons or negations
    (a bool: whether an attempt passed, not the attempt itself)."""
    if not value.keys:
        return False
    holding = [v for _, v in value.keys if lb in it.peek(v)]
    return bool(holding) and all(v.boolean for v in holding) and not any(
        lb in it.read(n) for n in value.names
        if not any(n in v.names for _, v in value.keys))


# ------------------------------------------------------------------ files


def open_mode(c: CallIR) -> str | None:
    """The mode a call opens a file in (``open(p, "w")``, ``write_text``), when literal."""
    mode = c.args[1].text if len(c.args) > 1 else None
    mv = c.kw("mode")
    if mv is not None:
        mode = mv.text
    if c.func.endswith("write_text"):
        mode = "w"
    return mode


def path_key(it: Interp, c: CallIR, on_object: bool) -> tuple[object, ...] | None:
    """What names the file a call opens, reads or writes: a literal path, a name, a
    parameter (``on_object``: the path is the object the method is called on, as in
    ``Path(p).read_text()``; else the call's first argument)."""
    if on_object:
        base = c.func.rpartition(".")[0]
        target = c.recv if c.recv is not None else (
            Val(names=(base,), ref=("name", base)) if base else None)
    else:
        target = c.args[0] if c.args else None
    if target is None:
        return None
    if target.text is not None:
        return ("lit", target.text)
    ref = it.local_ref(target.ref)
    if ref is not None and ref[0] in ("lit", "name", "param"):
        return tuple(ref)
    for tc in target.calls:  # Path("ratings.json"), Path(OUT_PATH)
        if tc < len(it.fn.calls) and it.fn.calls[tc].args:
            inner = it.fn.calls[tc].args[0]
            if inner.text is not None:
                return ("lit", inner.text)
            ref = it.local_ref(inner.ref)
            if ref is not None and ref[0] in ("lit", "name", "param"):
                return tuple(ref)
    return None


def _deep(it: Interp, val: Val, depth: int = 0) -> frozenset[L]:
    """What a value holds, through calls that hide it (``json.dumps(record)``)."""
    out = set(it.peek(val))
    if depth < 3:
        for cid in val.calls:
            if cid < len(it.fn.calls):
                c = it.fn.calls[cid]
                for v in (*c.args, *(v for _, v in c.kwargs)):
                    out |= _deep(it, v, depth + 1)
    return frozenset(out)


def note_stored(it: Interp, key: tuple[object, ...] | None, vals: list[Val]) -> None:
    """Judge output written to the file ``key`` names (``json.dump(rows, fh)``,
    ``fh.write(json.dumps(row))``, ``df.to_json(p)``): reading the file back gives it."""
    if key is None:
        return
    got = {L("stored", lb.origin, flag=lb.flag) for v in vals for lb in _deep(it, v)
           if lb.kind in ("judge", "stored") and lb.origin is not None}
    if got:
        it.stored[key] = it.stored.get(key, frozenset()) | got


def write_to_handle(it: Interp, oc: CallIR | None, c: CallIR) -> None:
    """A call that writes through a handle of the file ``oc`` opened."""
    if oc is None:
        return
    mode = open_mode(oc)
    if mode and mode[0] in "wa":
        note_stored(it, path_key(it, oc, on_object=not _opens_arg(oc)),
                    [*c.args, *(v for _, v in c.kwargs)])


def _opens_arg(c: CallIR) -> bool:
    """``open(path, ...)``, ``pd.read_json(path)``: the path is the first argument (not a
    method of a path object: ``Path(p).open()``)."""
    return c.recv is None and c.func.rsplit(".", 1)[-1] in ("open", "read_json", "read_csv") \
        and c.func.rpartition(".")[0] in ("", "io", "codecs", "pd", "pandas")


def read_back(it: Interp, c: CallIR, on_object: bool) -> frozenset[L]:
    """What reading a file back gives: the judge output written to it before (as ``stored``
    labels: the records themselves are the program's own, a field of one is the judge's)."""
    if not it.stored:
        return frozenset()
    mode = open_mode(c) if not c.func.endswith(("read_text", "read_json", "read_csv")) \
        else None
    if mode and not mode.startswith("r"):
        return frozenset()
    key = path_key(it, c, on_object)
    return it.stored.get(key, frozenset()) if key is not None else frozenset()


_RESULT_WORDS = frozenset({"result", "results", "records", "runs", "scores", "attempts", "evals"})
# Words that name a file as data to train or test on, not as the record of a run.
_DATA_WORDS = frozenset({"train", "training", "synthetic", "dataset", "finetune", "finetuning",
                         "demos", "demonstrations", "corpus"})


def path_words(it: Interp, target: Val, func: str = "") -> str:
    """The words of a path: its literals and names, the arguments of the calls that build
    it (``Path("results.jsonl")``, ``os.path.join(d, "scores.jsonl")``), what a name it
    reads was last given here, and a parameter's default (``out="results.jsonl"``)."""
    parts = [*target.strings, *target.names, func]
    vals = [target]
    defaults = {p.name: p.default for p in it.fn.params if p.default is not None}
    for n in target.names:
        vals += it.local_vals.get(n, ())[-1:]
        if n in defaults and n not in it.local_vals:
            vals.append(defaults[n])
    for v in vals[1:]:
        parts += [*v.strings, *v.names]
    for v in vals:
        for tc in v.calls:
            if tc < len(it.fn.calls):
                parts += [x for a in it.fn.calls[tc].args for x in (*a.strings, *a.names)]
    return " ".join(parts)


def resultish(words: str) -> bool:
    """A path named as the record of a run (``results.jsonl``, ``scores.csv``); a data set
    the run produces (``train_synthetic.jsonl``) is an export, not its log."""
    tokens = set(name_tokens(words))
    return bool(tokens & _RESULT_WORDS) or (
        ("jsonl" in tokens or ".jsonl" in words) and not tokens & _DATA_WORDS)


def _open_target(c: CallIR) -> Val:
    return c.recv if c.recv is not None else (c.args[0] if c.args else Val())


def loop_writes(it: Interp) -> tuple[tuple[int, str, Pos, str, str], ...]:
    """Files opened with "w" inside a per-case loop here that calls an LLM, at a path a
    parameter gives, whose name does not say results: whether each is a results file is
    the caller's to say, by the path it passes (see ``caller_writes``)."""
    out: list[tuple[int, str, Pos, str, str]] = []
    for cid, (c, loops, bound) in it.opens.items():
        ref = it.open_refs.get(cid)
        if not loops or ref is None or ref[0] != "param":
            continue
        mode = open_mode(c)
        target = _open_target(c)
        if not mode or not mode.startswith("w") or {
                n.split(".")[0] for n in target.names} & bound:
            continue
        if any(lid in it.refinement for lid in loops) or resultish(
                path_words(it, target, c.func)):
            continue  # reported here
        llm_loops = [lid for lid in loops if any(it.loop_roles.get(lid, ((), ())))]
        if llm_loops:
            out.append((int(ref[1]), it.path, c.pos, mode,
                        where(it.path, it.loop_objs[llm_loops[-1]].pos)))
    return tuple(out)


def caller_writes(it: Interp, c: CallIR, writes: tuple[tuple[int, str, Pos, str, str], ...],
                  vals: dict[int, Val]) -> None:
    """A call of a helper whose loop opens a file with "w" at the path parameter ``j``
    gives: a results file's name passed here makes it EL505 at the helper's ``open``; a
    parameter of this function passed on leaves it to this function's callers."""
    it.touched = True
    for j, path, pos, mode, loop_at in writes:
        v = vals.get(j)
        if v is None:
            continue
        ref = it.local_ref(v.ref)
        if ref is not None and ref[0] == "param":
            it.loop_writes.append((int(ref[1]), path, pos, mode, loop_at))
        elif it.report and resultish(path_words(it, v)):
            it.an.add_result("events", Event(
                "EL505", path, pos, "per-case", (("mode", mode), ("loop", loop_at)),
                ((it.path, c.pos, "the results file's path is passed here"),)))


# JavaScript's number parsers: a bad text gives NaN, no error, so a try around them checks
# nothing (``try { n = parseInt(reply) } catch {}`` validates no score)
NO_THROW_PARSES = frozenset({"parseInt", "parseFloat", "Number", "Number.parseInt",
                             "Number.parseFloat"})


def finish_report(it: Interp) -> None:
    for origin, items in it.parses.items():
        if any(c.in_try and c.func not in NO_THROW_PARSES for c, _ in items) or \
                it.fn.validates:
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
        mode = open_mode(c)
        if not mode or not mode.startswith("w"):
            continue
        target = _open_target(c)
        is_results = resultish(path_words(it, target, c.func))
        # a path made from what the loop binds (f"out/{case_id}.json") is one file per case
        fixed = not {n.split(".")[0] for n in target.names} & bound
        llm_loops = [lid for lid in loops if any(it.loop_roles.get(lid, ((), ())))]
        kind, loop_at = "", ""
        if fixed and any(lid in it.refinement for lid in loops):
            lid = next(lid for lid in loops if lid in it.refinement)
            kind, loop_at = "refinement", where(it.path, it.loop_objs[lid].pos)
        elif fixed and is_results and llm_loops:
            kind = "per-case"
            loop_at = where(it.path, it.loop_objs[llm_loops[-1]].pos)
        else:
            for h, wloops in sorted(it.writes):
                inner = wloops[len(loops):] if wloops[:len(loops)] == loops else ()
                if h != cid or not inner:
                    continue
                judged = any(it.loop_roles.get(lid, ((), ()))[1] for lid in inner)
                # (a loop that makes no LLM call writes what is already judged: a report
                # written once at the end, row by row, loses nothing to an interruption)
                calls = any(any(it.loop_roles.get(lid, ((), ()))) for lid in inner)
                if (is_results and has_eval and calls) or judged:
                    kind = "record-by-record"
                    loop_at = where(it.path, it.loop_objs[inner[0]].pos)
                    break
        if kind:
            it.an.add_result("events", Event(
                "EL505", it.path, c.pos, kind, (("mode", mode), ("loop", loop_at))))
