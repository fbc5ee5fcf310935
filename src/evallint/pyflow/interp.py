"""The abstract interpreter: one function's steps over labels.

An assignment replaces a name's labels (so an extraction really cleans a value), branches join,
loops run twice so values carried across iterations are seen. What a call is, and what it means
for the loop, is decided in the rooms around this walk: :mod:`~evallint.pyflow.llmcalls`
(recognising LLM calls), :mod:`~evallint.pyflow.callroles` and
:mod:`~evallint.pyflow.callmodels` (a call's role and model), :mod:`~evallint.pyflow.flows`
(the generator's context and where labels must not arrive) and
:mod:`~evallint.pyflow.loopfacts` (stops, retries, parses and writes of a loop, I7).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from evallint.facts import Pos
from evallint.pyflow import (
    closures,
    flows,
    frameworks,
    harness,
    instances,
    llmcalls,
    loopfacts,
)
from evallint.pyflow.callroles import own_role
from evallint.pyflow.cues import (
    PASS_KEYS,
    SCORE_ASKED,
    SCORE_KEYS,
    VERDICT_TOKENS,
    makes_judge,
    name_tokens,
)
from evallint.pyflow.ir import (
    Assign,
    CallIR,
    Exit,
    ExprStep,
    FunctionIR,
    If,
    Loop,
    Ref,
    Return,
    Step,
    Val,
)
from evallint.pyflow.providers import CAT
from evallint.pyflow.relevance import makes_eval_artifacts
from evallint.pyflow.results import Flow, LoopEvent, where
from evallint.pyflow.summaries import OPAQUE, L, Module, Origin, Summary, chain_keys
from evallint.roles import EVALUATOR_WORDS, Role, role_from_name

if TYPE_CHECKING:
    from evallint.pyflow.analysis import Analysis


# (not ``object``: the Vercel AI SDK's generateObject hands its output back as ``.object``)
METADATA_ATTRS = {"usage", "id", "model", "stop_reason", "finish_reason", "role", "type",
                  "created", "index", "input_tokens", "output_tokens", "stop_sequence",
                  "system_fingerprint", "status"}

THINK_ATTRS = {"thinking", "reasoning", "reasoning_content", "redacted_thinking"}

PROMPTISH = {"prompt", "rubric", "criteria", "criterion", "template", "tmpl", "instructions",
             "instruction", "system", "guidelines", "checklist", "preamble", "sys"}

LOADER_TOKENS = {"open", "read", "load", "prompt", "template", "get", "text", "file", "path"}

_PATHLIKE = re.compile(r"^[\w./-]{1,120}$")

# labels that are only symbolic parameters (or what a test of one gives)
_PLAIN = frozenset({"param", "psan", "ppass", "psaid"})
# Fields that name or identify a record rather than hold its text: the name of the persona
# a generator's system prompt is built from is no part of that prompt's instructions.
_IDENTITY_FIELDS = frozenset({"name", "id", "title", "slug", "label", "key", "uuid", "email",
                              "username", "handle", "display_name", "displayname"})


def _bound_names(loop: Loop) -> set[str]:
    """Names a loop binds on each iteration: its targets and what its body assigns."""
    out = {t.split(".")[0] for t in loop.targets}
    stack: list[Step] = list(loop.body)
    while stack:
        st = stack.pop()
        if isinstance(st, Assign):
            out.update(t.split(".")[0] for t in st.targets)
        elif isinstance(st, If):
            stack.extend(st.body)
            stack.extend(st.orelse)
        elif isinstance(st, Loop):
            out.update(t.split(".")[0] for t in st.targets)
            stack.extend(st.body)
    return out


class Interp:
    """Interprets one function's steps over labels."""

    def __init__(self, an: Analysis, mod: Module, fn: FunctionIR, report: bool) -> None:
        self.an = an
        self.mod = mod
        self.fn = fn
        self.report = report
        self.path = mod.path
        self.labels: dict[str, frozenset[L]] = {}
        self.refs: dict[str, Ref] = {}
        self.call_out: dict[int, frozenset[L]] = {}
        self.call_loops: dict[int, tuple[int, ...]] = {}
        self.loop_stack: list[int] = []
        self.loop_roles: dict[int, tuple[list[Pos], list[Pos]]] = {}
        self.refinement: set[int] = set()
        # how a loop's evaluator output comes back (see ``loopfacts.refines``): the pass (1 or
        # 2) of each loop being interpreted, the flows between its evaluator and generator
        # calls with the pass each was first seen in, and the loops whose exit a judge decides
        self.loop_pass: dict[int, int] = {}
        self.crossings: dict[int, dict[tuple[Any, ...], int]] = {}
        self.decided: set[int] = set()
        self.exit_kinds: dict[int, frozenset[str]] = {}  # id(If) -> its exits (break, return)
        # files written with judge output (by the path's ref): what reading them back gives
        self.stored: dict[Ref, frozenset[L]] = {}
        # results files a loop here opens with "w" at a path a parameter gives: reported by
        # the caller that passes a results file's name (see ``loopfacts.loop_writes``)
        self.loop_writes: list[tuple[int, str, Pos, str, str]] = []
        # files opened (by call id): the loops around the open and the names those loops bind
        self.opens: dict[int, tuple[CallIR, tuple[int, ...], frozenset[str]]] = {}
        self.handles: dict[str, int] = {}  # file objects (and writers over them) -> open id
        self.open_refs: dict[int, Ref] = {}  # open id -> what its path is (a parameter ...)
        self.writes: set[tuple[int, tuple[int, ...]]] = set()  # (open id, loops at the write)
        self.loop_objs: dict[int, Loop] = {}
        self.stops: set[tuple[str, Pos]] = set()  # loop stops already reported
        self.parses: dict[Origin | None, list[tuple[CallIR, L]]] = {}
        self.param_parses: dict[int, list[CallIR]] = {}  # (see ``Summary.parses``)
        self.summary = Summary(pos=fn.pos)
        prev = an.summaries.get((mod.path, fn.name))
        self.prev_n = prev.n_llm if prev else 0
        self.returns: set[L] = set()
        # per element of the tuples returned (None: some return is not a tuple display)
        self.ret_elts: list[set[L]] | None = []
        # returned dict keys: (a comparison, computed in code) per return that has the key
        self.ret_keys: dict[str, list[tuple[bool, bool]]] = {}
        # call id -> the computed keys of the dict the helper it calls returns
        self.call_keys: dict[int, frozenset[str]] = {}
        # inside how many ifs on a count; the keys a return there sets to a constant; call
        # id -> the forced keys of the helper it calls
        self.counted_guard = 0
        self.ret_forced: set[str] = set()
        self.call_forced: dict[int, frozenset[str]] = {}
        # calls of helpers that return tuples: what each element holds (see ``elements``)
        self.call_elts: dict[int, tuple[frozenset[L], ...]] = {}
        self.slots: dict[int, set[str]] = {}
        self.sinks: dict[int, set[str]] = {}
        self.called: set[str] = set()
        self.call_roles: set[Role] = set()  # roles of the effective calls made here
        self.flows: dict[tuple[Any, ...], Flow] = {}
        self.deps: set[tuple[str, str]] = set()
        self.cur = fn.pos
        # met a value other than a parameter, an LLM call, a sink or a file opened: the
        # reporting pass must run this function (see ``Analysis.run``)
        self.touched = False
        # what local names were last assigned (a prompt built in the function)
        self.local_vals: dict[str, tuple[Val, ...]] = {}
        # an LLM call here rewrites a judge prompt, writes evaluations, or judges the input:
        # the function's name does not make it the loop's generator or evaluator
        self.meta = False
        # LLM calls (origin keys) whose input holds another LLM call's output: that output
        self.fed: dict[tuple[str, str, int], Origin] = {}
        self.structural = False  # this run found an evaluator by structure
        # parameters run as chat models here -> (role value, evidence) of the run's prompt
        self.chat_params: dict[int, tuple[str, tuple[str, ...]]] = {}
        self.called_params: set[int] = set()  # (see ``Summary.called_params``)
        # a run specialised to one call site (see :mod:`evallint.pyflow.callbacks`): the
        # functions its parameters are bound to, how many helpers deep, the call sites
        self.bindings: dict[str, list[tuple[Module, FunctionIR]]] = {}
        self.depth = 0
        self.sites: frozenset[tuple[str, str, int]] = frozenset()
        self.seeds: dict[str, frozenset[L]] = {}  # parameters holding the call's LLM output
        self.state_arg: str | bool | None = False  # see ``flows.state_param`` (False: not yet)
        self.own_configured = an.configured_role(
            fn.name, f"{mod.name}.{fn.name}") is not None
        self.own_role, self.own_evidence = own_role(an, mod, fn.name)

    # ------------------------------------------------------------------ driver

    def run(self) -> Summary:
        for i, p in enumerate(self.fn.params):
            self.labels[p.name] = frozenset({L("param", None, i)}) | self.seeds.get(
                p.name, frozenset())
            self.refs[p.name] = ("param", i)
        handed = self.an.harness_inputs.get((self.path, self.fn.name))
        if handed:  # a harness's scorer: its output parameter holds the task's output
            for name in harness.output_params(self.fn):
                self.labels[name] = self.labels[name] | handed
        closures.bind(self)
        self.block(self.fn.body)
        closures.publish(self)
        s = self.summary
        s.role, s.role_evidence = self.own_role, self.own_evidence
        if self.meta and not self.own_configured:  # its name says generator, its prompt not
            s.role, s.role_evidence = Role.UNKNOWN, ()
        s.meta = self.meta
        s.returns = frozenset(self.returns)
        if self.ret_elts:
            s.return_elts = tuple(frozenset(e) for e in self.ret_elts)
        s.forced_keys = frozenset(self.ret_forced)
        s.parses = loopfacts.unchecked_params(self)
        # (a key every return sets to a comparison or a constant: ``{success: true, data}``
        # from a wrapper's try and ``{success: false}`` from its catch is the code's word)
        s.computed_keys = frozenset(k for k, seen in self.ret_keys.items()
                                    if all(d for _, d in seen))
        # (in parameter order: which parameter is "the" system prompt must not follow set order)
        s.slots = {k: frozenset(v) for k, v in sorted(self.slots.items())}
        s.sinks = {k: frozenset(v) for k, v in self.sinks.items()}
        s.called_roles = frozenset(self.called)
        s.own_call_roles = frozenset(self.call_roles)
        s.llm = s.n_llm > 0
        if self.report:
            loopfacts.finish_report(self)
        s.loop_writes = tuple(dict.fromkeys((*self.loop_writes, *loopfacts.loop_writes(self))))
        s.chat_params = tuple((i, r, ev) for i, (r, ev) in sorted(self.chat_params.items()))
        s.called_params = frozenset(self.called_params)
        return s

    def block(self, steps: list[Step]) -> None:
        for step in steps:
            self.step(step)

    def snapshot(self) -> tuple[dict[str, frozenset[L]], dict[str, Ref]]:
        return dict(self.labels), dict(self.refs)

    def join(self, other: dict[str, frozenset[L]], other_refs: dict[str, Ref]) -> None:
        for k, v in other.items():
            self.labels[k] = self.labels.get(k, frozenset()) | v
        for k, r in other_refs.items():
            if self.refs.get(k, r) != r:
                self.refs.pop(k, None)
            elif k not in self.refs:
                self.refs[k] = r

    def step(self, step: Step) -> None:
        self.cur = step.pos
        if isinstance(step, Assign):
            value = self.eval(step.value)
            if self.opens or self.handles:
                self.note_handles(step)
            ref = self.local_ref(step.value.ref)
            per = self.elements(step.value, len(step.targets)) if step.unpack else None
            if self.fed and any(set(name_tokens(t.rsplit(".", 1)[-1])) & VERDICT_TOKENS
                                for t in step.targets):
                self.note_verdict(value, f"is stored as `{step.targets[0]}`", step.pos)
            if len(step.targets) == 1 and step.targets[0] in CAT.entry_frameworks:
                frameworks.run_entry(self, step.targets[0], value)
            for t in step.targets:
                old = self.local_vals.get(t, ()) if step.aug or step.weak else ()
                self.local_vals[t] = (*old, step.value)[-8:]
                if step.aug or step.weak:
                    self.labels[t] = self.labels.get(t, frozenset()) | value
                    self.refs.pop(t, None)
                else:
                    self.labels[t] = per[step.targets.index(t)] if per is not None else value
                    self._drop_children(t)
                    elts = step.value.elts
                    if ref is not None and len(step.targets) == 1:
                        self.refs[t] = ref
                    elif step.unpack and len(elts) == len(step.targets) and (
                            own := self.local_ref(elts[step.targets.index(t)].ref)) is not None:
                        self.refs[t] = own  # ``w, r = Writer(llm), Reviewer(llm)``
                    else:
                        self.refs.pop(t, None)
        elif isinstance(step, ExprStep):
            value = self.eval(step.value)
            if step.yielded:  # ``yield {"final": draft}`` after the loop hands the draft over
                loopfacts.check_last_not_best(self, step, value)
        elif isinstance(step, Return):
            value = self.eval(step.value)
            if flows.state_param(self) is not None:  # a graph node
                flows.note_state_outputs(self, step.value, value)
            self.returns |= value
            self.note_return_elts(step.value)
            made: tuple[int, ...] = ()  # the call whose dict this returns, if one
            if not step.value.keys and not step.value.names:
                made = step.value.calls
            elif not step.value.keys and not step.value.calls and len(step.value.names) == 1:
                # a local last set from a helper's dict (a workflow's last step's output)
                held = self.local_vals.get(step.value.names[0], ())
                made = held[-1].calls if held and not held[-1].names else ()
            if len(made) == 1:
                for k in self.call_keys.get(made[0], ()):  # a helper's dict
                    self.ret_keys.setdefault(k, []).append((True, True))
            for k, v in step.value.keys:  # (see ``Summary.computed_keys``)
                compared = bool(v.compares) or self._compared_local(v)
                decided = compared or not (v.names or v.calls)  # or a constant
                self.ret_keys.setdefault(k, []).append((compared, decided))
                if self.counted_guard and not (v.names or v.calls):
                    self.ret_forced.add(k)  # (see ``Summary.forced_keys``)
            loopfacts.check_last_not_best(self, step, value)
        elif isinstance(step, If):
            test = self.eval(step.test)
            loopfacts.check_pass_test(self, step.test, test, step.pos)
            if self.loop_stack:
                exits = self.exit_kinds.get(id(step))
                if exits is None:
                    exits = self.exit_kinds[id(step)] = loopfacts.exits(step.body) | \
                        loopfacts.exits(step.orelse)
                if exits:  # a return leaves every loop, a break the innermost
                    loopfacts.note_exit(self, test, self.loop_stack if "return" in exits
                                        else self.loop_stack[-1:], step.pos)
                    # the word stops the loop when its own branch leaves it, or the other one
                    # does at once (an ``elif`` deeper down is another word's test)
                    if loopfacts.exits(step.body) or loopfacts.exits(
                            [x for x in step.orelse if not isinstance(x, If)]):
                        loopfacts.check_text_stop(self, step.test, test, step.pos)
            if self.fed and self.loop_stack and (step.test.compares or step.test.strings) and any(
                    isinstance(x, Return) or (isinstance(x, Exit) and x.kind == "break")
                    for x in step.body):
                self.note_verdict(test, "decides when the loop stops", step.pos)
            elif self.fed and not self.loop_stack and self._decisive(step.test) and any(
                    isinstance(x, Return) or (isinstance(x, Exit) and x.kind == "raise")
                    for x in step.body):
                # a gate: `ok = "APPROVED" in review` then `if not ok: return`
                self.note_verdict(test, "decides whether the run goes on", step.pos)
            before = self.snapshot()
            guard = loopfacts.counter_test(self, step.test)
            self.counted_guard += guard
            self.block(step.body)
            self.counted_guard -= guard
            after_body = self.snapshot()
            self.labels, self.refs = dict(before[0]), dict(before[1])
            self.block(step.orelse)
            self.join(*after_body)
        elif isinstance(step, Loop):
            self.loop(step)
        elif isinstance(step, Exit):
            pass

    def elements(self, val: Val, n: int) -> list[frozenset[L]] | None:
        """What each of ``n`` unpacked elements holds, once ``val`` was evaluated: a tuple
        display element by element, or a helper call whose returns are tuples of ``n``.
        None when not known: then every target takes the whole value."""
        if len(val.elts) == n:
            return [self.peek(e) for e in val.elts]
        if len(val.calls) == 1 and not val.names:
            found = self.call_elts.get(val.calls[0])
            if found is not None and len(found) == n:
                return list(found)
        return None

    def note_return_elts(self, val: Val) -> None:
        """Keep the returned tuple's elements apart while every return is a tuple of one
        size; ``return`` / ``return None`` add nothing and do not spoil it."""
        if self.ret_elts is None or val == Val():
            return
        found = self.call_elts.get(val.calls[0]) if len(val.calls) == 1 else None
        size = len(val.elts) or (len(found) if found is not None else 0)
        per = self.elements(val, size) if size else None
        if per is None or (self.ret_elts and len(per) != len(self.ret_elts)):
            self.ret_elts = None
            return
        if not self.ret_elts:
            self.ret_elts = [set() for _ in per]
        for acc, labels in zip(self.ret_elts, per, strict=True):
            acc |= labels

    def note_open(self, c: CallIR) -> None:
        self.touched = True
        bound: set[str] = set()
        for lid in self.loop_stack:
            bound |= _bound_names(self.loop_objs[lid])
        self.opens[c.id] = (c, tuple(self.loop_stack), frozenset(bound))
        target = c.recv if c.recv is not None else (c.args[0] if c.args else None)
        ref = self.local_ref(target.ref) if target is not None else None
        if ref is not None:
            self.open_refs[c.id] = ref

    def note_handles(self, step: Assign) -> None:
        """``with open(p, "w") as fh``, ``writer = csv.writer(fh)``: names that write to a file."""
        for cid in step.value.calls:
            idx: int | None = cid if cid in self.opens else None
            if idx is None and cid < len(self.fn.calls):
                idx = self.handle_of(self.fn.calls[cid])
            if idx is not None:
                for t in step.targets:
                    self.handles[t] = idx

    def handle_of(self, c: CallIR) -> int | None:
        """The open file a call writes to or wraps: ``fh.write(...)``, ``json.dump(x, fh)``."""
        root = c.func.split(".")[0] if "." in c.func else ""
        if root in self.handles:
            return self.handles[root]
        for v in (*c.args, *(v for _, v in c.kwargs)):
            for n in v.names:
                if n in self.handles:
                    return self.handles[n]
        return None

    def _drop_children(self, target: str) -> None:
        prefix = target + "."
        for k in [k for k in self.labels if k.startswith(prefix)]:
            del self.labels[k]

    def loop(self, loop: Loop) -> None:
        self.loop_objs[loop.id] = loop
        self.loop_stack.append(loop.id)
        self.loop_roles.setdefault(loop.id, ([], []))
        entry = self.snapshot()
        for n in (1, 2):
            self.loop_pass[loop.id] = n
            if loop.kind == "for":
                it = self.eval(loop.iter)
                each = self._each(loop)
                for t in loop.targets:
                    self.labels[t] = it
                    if each is not None:
                        self.refs[t] = each
                    else:
                        self.refs.pop(t, None)
            elif loop.test is not None:
                test = self.eval(loop.test)
                loopfacts.check_pass_test(self, loop.test, test, loop.pos)
                loopfacts.note_exit(self, test, [loop.id], loop.pos)
                loopfacts.check_text_stop(self, loop.test, test, loop.pos)
                if self.fed and (loop.test.compares or loop.test.strings):
                    self.note_verdict(test, "decides whether the loop goes on", loop.pos)
            self.block(loop.body)
            self.join(*entry)
            entry = self.snapshot()
        self.loop_stack.pop()
        self.block(loop.orelse)
        gen, ev = self.loop_roles[loop.id]
        bounded = loopfacts.bounded(self, loop)
        if gen and ev and loopfacts.refines(self, loop.id):
            self.refinement.add(loop.id)
        if self.report:
            self.an.add_result("loops", LoopEvent(self.path, self.fn.name, loop.pos,
                                                  loop.kind, bounded, tuple(gen), tuple(ev)))

    def _each(self, loop: Loop) -> Ref | None:
        """``for m in MODELS`` / ``for (const m of ["gpt-4o", "o4-mini"])``: the target is
        each element in turn (``("each", what is iterated)``), for a model read from it."""
        if len(loop.targets) != 1:
            return None
        v = loop.iter
        if len(v.names) == 1 and not v.calls and v.names[0] in self.fn.locals:
            last = self.local_vals.get(v.names[0])  # ``const entrants = [...]`` here
            v = last[-1] if last else v
        if v.ref is None and not v.names and not v.calls and v.strings:
            return ("each", ("strs", tuple(v.strings)))
        ref = self.local_ref(v.ref)
        return ("each", ref) if ref is not None and ref[0] in ("name", "const") else None

    # ------------------------------------------------------------------ values

    def local_ref(self, ref: Ref | None) -> Ref | None:
        if ref is not None and ref[0] == "fmt":
            return ("fmt", ref[1], self.local_ref(ref[2]), ref[3])
        if ref is not None and ref[0] == "or":
            return ("or", self.local_ref(ref[1]), ref[2])
        if ref is not None and ref[0] == "spread":
            return ("spread", self.local_ref(ref[1]))
        if ref is None or ref[0] != "name":
            return ref
        if ref[1] in self.refs:
            return self.refs[ref[1]]
        root, _, rest = str(ref[1]).partition(".")
        made = self.refs.get(root) if rest else None
        if made is not None and made[0] == "new":  # cfg = get_settings(); cfg.llm_model
            return ("new", made[1], f"{made[2]}.{rest}" if made[2] else rest)
        if made is not None and made[0] == "param" and len(made) == 2 and \
                root not in ("self", "cls"):
            return ("param", made[1], rest)  # config.models.judge, config a parameter
        if made is not None and made[0] == "outer" and len(made) == 2:
            return ("outer", made[1], rest)
        return ref

    def peek(self, val: Val) -> frozenset[L]:
        """Labels of a value without re-running its calls (their last results are reused)."""
        out: set[L] = set()
        for n in val.names:
            out |= self.read(n)
        for c in val.calls:
            out |= self.call_out.get(c, frozenset())
        return frozenset(out)

    def eval(self, val: Val) -> frozenset[L]:
        out: set[L] = set()
        for n in val.names:
            out |= self.read(n)
        for c in val.calls:
            out |= self.call(c)
        if val.scored:
            out.add(SCORE_ASKED)
        if val.matches:
            out |= loopfacts.text_tests(self, val)
        for s in val.strings:
            if makes_judge(s):
                o = Origin(self.path, self.cur, "an evaluator prompt text",
                           (self.path, self.fn.name, -1))
                out.add(L("rubric", o, name="evaluator prompt text"))
                break
        if val.compares and any(lb.kind == "said" for lb in out) and \
                loopfacts.scored_in_code(self, val):
            # ``score >= T && !hasCritical``: code decides on the score, and a word the judge
            # wrote beside it (an issue's severity) is one more condition of that decision
            out = {lb for lb in out if lb.kind != "said"}
        if out and not self.touched:
            self.touched = any(lb.kind not in _PLAIN for lb in out)
        if val.boolean:  # a comparison's result is a bool: nothing of it is parsed later
            return frozenset(L(lb.kind, lb.origin, lb.idx, True, lb.name)
                             if lb.kind == "judge" and not lb.flag else lb for lb in out)
        return frozenset(out)

    def read(self, path: str) -> frozenset[L]:
        parts = path.split(".")
        labels = self.labels.get(path)  # the whole path first: most reads are plain names
        rest: list[str] = []
        if labels is None:
            for cut in range(len(parts) - 1, 0, -1):
                key = ".".join(parts[:cut])
                if key in self.labels:
                    labels = self.labels[key]
                    rest = parts[cut:]
                    break
        out: set[L] = set()
        if labels is None and self.fn.name == "<module>" and parts[0] in self.fn.locals:
            pass  # module code reads a name before its binding (a later cell): nothing yet
        elif labels is None:
            out |= self.global_labels(path)
            ctx = self.genctx_globals.get(parts[0])
            if ctx is not None:
                out.add(ctx)
            if self.an.chats:
                found = self.an.static_chat(self.mod, parts[0])
                if not found and len(parts) > 1 and parts[0] in ("self", "cls") and self.fn.cls:
                    # a function nested in a method: the instance it closes over
                    found = self.an.static_chat(self.mod, f"{self.fn.cls}.{parts[1]}")
                if not found and len(parts) > 1 and parts[0] in self.mod.facts.imports:
                    found = self.an.static_chat(self.mod, f"{parts[0]}.{parts[1]}")  # mod.llm
                out |= found
        else:
            out |= self.access(labels, rest)
            if self.an.chats and len(parts) > 1 and parts[0] in ("self", "cls") and self.fn.cls:
                out |= self.an.static_chat(self.mod, f"{self.fn.cls}.{parts[1]}")
        if self.is_rubric_name(path):
            o = Origin(self.path, self.cur, f"`{path}`", (self.path, self.fn.name, -1))
            out.add(L("rubric", o, name=path))
        if self.an.state_history and len(parts) > 1:  # a generator node's history
            hist = flows.state_key(self, path)
            if hist is not None and hist in self.an.state_history:
                out.add(self.an.state_history[hist])
        if len(parts) > 1 and parts[0] == flows.state_param(self):  # another node's output
            self.an.state_readers.setdefault(parts[1], set()).add((self.path, self.fn.name))
            written = flows.state_written(self, parts[1])
            if written:
                out |= written
        return frozenset(out)

    def _decisive(self, test: Val) -> bool:
        """A test that compares or matches (``"APPROVED" in review``, ``score < 7``,
        ``reply.startswith("OK")``), or a name last set from one: a verdict read from the
        output, not a check that it is there."""
        if test.compares or test.matches:
            return True
        return any(v.compares or v.matches for n in test.names
                   for v in self.local_vals.get(n, ())[-1:])

    def note_verdict(self, labels: frozenset[L], how: str, pos: Pos) -> None:
        """An LLM call of no named role whose input holds another LLM call's output and whose
        result ``how`` (becomes a score, a verdict, a loop's decision) evaluates that output.
        One such call only: a value made of several (outputs a helper passed through) says
        nothing of which of them judged."""
        fed = [lb for lb in labels if lb.kind in ("llm", "gen") and lb.origin is not None
               and lb.origin.key in self.fed]
        if len({lb.origin.key for lb in fed if lb.origin is not None}) > 1:
            return
        for lb in fed:
            o = lb.origin
            if o is None or o.key in self.an.structural or o.key in self.an.self_fed:
                continue
            src = self.fed[o.key]
            self.an.set_state("structural", o.key, (
                f"its input holds the output of the LLM call at {where(src.path, src.pos)} and "
                f"its result {how} ({where(self.path, pos)})"))
            self.structural = True
            self.touched = True

    def access(self, labels: frozenset[L], rest: list[str]) -> set[L]:
        if not rest:
            return set(labels)
        low = [r.lower() for r in rest]
        if self.fed and {t for r in low for t in name_tokens(r)} & VERDICT_TOKENS:
            self.note_verdict(labels, f"is read as `{'.'.join(rest)}`", self.cur)
        if (self.an.fw_runs or self.an.fw_objects) and len(low) == 1 and \
                low[0] in CAT.history_attributes:  # the transcript, not one message of it
            found = frameworks.history(self, labels, rest[0], self.cur)
            if found is not None:
                return set(found)
        out: set[L] = set()
        meta = bool(METADATA_ATTRS & set(low)) and not (THINK_ATTRS & set(low))
        think = bool(THINK_ATTRS & set(low))
        passed = bool(set(low) & PASS_KEYS)
        for lb in labels:
            if lb.kind == "stored":  # a field of a record read back: the judge's value
                lb = L("judge", lb.origin, flag=lb.flag)
            elif lb.kind in ("param", "psan") and passed:  # the caller's judge's pass flag?
                out.add(L("ppass", None, lb.idx, name=".".join(rest)))
            field = frameworks.field_access(self, lb, rest[0]) if self.an.fw_runs else None
            if field is not None:
                out.add(field)
                continue
            if lb.kind in ("llm", "gen", "judge") and meta:
                continue
            if lb.kind == "genctx" and low[-1] in _IDENTITY_FIELDS:
                continue  # ``fighter.name`` of the persona the system prompt was made from
            if lb.kind == "pass" and not passed:
                continue  # ``critique.medical`` of ``{medical, approved}``: not the flag
            if lb.kind in ("llm", "gen") and think and not lb.flag:
                out.add(L(lb.kind, lb.origin, lb.idx, True, lb.name))
                continue
            if lb.kind == "judge" and not lb.flag and self._computed(lb, rest):
                # a key the code sets (``{source: "retry"}`` once the score falls short): a
                # word tested in it is the code's, not the judge's (see ``text_tests``)
                lb = L("judge", lb.origin, lb.idx, True, lb.name)
            out.add(lb)
            if lb.kind == "judge" and lb.origin is not None and {
                    t for r in low for t in name_tokens(r)} & SCORE_KEYS:
                self.an.add_state("scored", chain_keys(lb.origin))
            if lb.kind == "judge" and passed and lb.name != OPAQUE and \
                    not self._computed(lb, rest):
                out.add(L("pass", lb.origin, name=".".join(rest)))
        return out

    def _compared_local(self, v: Val) -> bool:
        """A local the function set to a comparison (``const passes = weighted >= 3.0 &&
        gatesOk`` returned as ``{...evaluation, passes}``): the code decides it."""
        if v.calls or len(v.names) != 1 or "." in v.names[0]:
            return False
        held = self.local_vals.get(v.names[0], ())
        return bool(held) and all(x.compares for x in held)

    def _computed(self, lb: L, rest: list[str]) -> bool:
        """Is the field ``rest`` of a judge's result computed in code from its score:
        deepeval's ``success`` (score against the metric's threshold), or a key a project
        helper returns as a comparison or a constant (``approved: parsed.score >= 75``; its
        ``{ok: true, value}``, where ``value.ok`` is still the judge's)?"""
        if lb.origin is None:
            return False
        if len(rest) == 1 and rest[0] in self.an.computed_fields.get(lb.origin.key, ()):
            return True
        fw = self.an.fw_runs.get(lb.origin.key, "")
        return rest[-1].lower() in CAT.computed_fields.get(fw, frozenset())

    def global_labels(self, path: str) -> set[L]:
        root = path.split(".")[0]
        consts = self.mod.facts.constants
        val = consts.get(root)
        if val is None:
            imp = self.mod.facts.imports.get(root)
            if imp:
                found = self.an.tables.constant(imp, self.path)
                if found is not None:
                    val = found[0].facts.constants[found[1]]
        out: set[L] = {SCORE_ASKED} if val is not None and val.scored else set()
        if val is not None and val.text is not None and makes_judge(val.text):
            o = Origin(self.path, self.cur, f"`{root}` (an evaluator prompt)",
                       (self.path, self.fn.name, -1))
            out.add(L("rubric", o, name=root))
        return out

    @staticmethod
    @lru_cache(maxsize=65536)
    def is_rubric_name(path: str) -> bool:
        last = path.split(".")[-1] if "." in path else path
        if makes_eval_artifacts(last):
            return False  # the prompt of a tool that writes evaluations
        tokens = set(name_tokens(last))
        if "rubric" in tokens or ("criteria" in tokens and tokens & EVALUATOR_WORDS):
            return True
        return bool(tokens & EVALUATOR_WORDS) and bool(tokens & PROMPTISH) and not (
            tokens & {"model", "result", "results", "output", "response", "score", "scores"})

    # ------------------------------------------------------------------ calls

    def call(self, cid: int) -> frozenset[L]:
        c = self.fn.calls[cid]
        saved = self.cur
        args = [self.eval(a) for a in c.args]
        kws = {k: self.eval(v) for k, v in c.kwargs}
        recv = self.eval(c.recv) if c.recv is not None else frozenset()
        self.cur = saved
        self.call_loops[cid] = tuple(self.loop_stack)
        if self.handles:
            h = self.handle_of(c)
            if h is not None:
                self.writes.add((h, tuple(self.loop_stack)))
                loopfacts.write_to_handle(self, self.opens[h][0] if h in self.opens else None,
                                          c)
        out = llmcalls.dispatch(self, c, args, kws, recv)
        self.call_out[cid] = out
        if out and not self.touched:
            self.touched = any(lb.kind not in _PLAIN for lb in out)
        return out

    def resolve(self, func: str) -> tuple[str, str]:
        """(kind, name): ``sdk``/``fn``/``method`` (on a local value)/``ext``/``builtin``."""
        if not func or func.startswith("<expr>"):
            return "method", func
        root, _, rest = func.partition(".")
        if root in self.labels or root in self.fn.locals:
            if rest and root in ("self", "cls") and self.fn.cls:
                found = instances.self_method(self.an, self.mod, self.fn.cls, rest)
                return "fn", found or f"{self.mod.name}.{self.fn.cls}.{rest}"
            made = self.refs.get(root)
            if made is not None and made[0] in ("new", "made") and rest and "." not in rest:
                found = instances.local_method(self.an, self.mod, str(made[1]), rest)
                if found is not None:  # ``w = Writer(llm)`` then ``w.draft(...)``
                    return "fn", found
            if made is not None and made[0] == "made" and not rest and root not in (
                    "self", "cls"):
                found = instances.closure_function(self.an, self.mod, str(made[1]))
                if found is not None:  # ``judge = makeJudge(model)`` then ``judge(text)``
                    return "fn", found
            if made is not None and made[0] == "param" and rest and "." not in rest:
                i = made[1]
                p = self.fn.params[i] if isinstance(i, int) and i < len(self.fn.params) else None
                if p is not None and p.annotation:
                    found = instances.annotated_method(self.an, self.mod, p.annotation, rest)
                    if found is not None:  # ``def grade(client: Claude)``, ``client.send(x)``
                        return "fn", found
            return "method", func
        if root in self.mod.facts.imports:
            target = self.mod.facts.imports[root]
            return "ext", f"{target}.{rest}" if rest else target
        scope = closures.scoped_function(self.mod, self.fn.name, root)
        if root in self.mod.facts.functions or scope is not None:
            name = f"{scope}.{func}" if scope is not None else func
            if self.fn.name == "<module>" and not rest and f"{name}#1" in self.mod.facts.functions:
                name = self.definition_at(name)
            return "fn", f"{self.mod.name}.{name}"
        if rest and f"{root}.{rest}" in self.mod.facts.functions:
            return "fn", f"{self.mod.name}.{func}"  # a method reached through its class
        if root in self.mod.facts.constants:
            made = self.mod.facts.constants[root].ref
            if made is not None and made[0] in ("new", "made") and rest and "." not in rest:
                found = instances.closure_method(self.an, self.mod, str(made[1]), rest)
                if found is not None:  # ``agent = createAgent(cfg)`` then ``agent.run(x)``
                    return "fn", found
            if made is not None and made[0] == "made" and not rest:
                found = instances.closure_function(self.an, self.mod, str(made[1]))
                if found is not None:  # ``judge = makeJudge(model)`` then ``judge(text)``
                    return "fn", found
            return "method", func
        return "builtin", func

    def definition_at(self, name: str) -> str:
        """A function defined more than once (a notebook redefines ``grade()`` in a later
        cell): module-level code calls the definition made last before the call."""
        funcs = self.mod.facts.functions
        versions = [name] + [f"{name}#{i}" for i in range(1, 64) if f"{name}#{i}" in funcs]
        here = (self.cur.cell or 0, self.cur.line)
        before = [v for v in versions if (funcs[v].pos.cell or 0, funcs[v].pos.line) <= here]
        if not before:
            return name
        return max(before, key=lambda v: (funcs[v].pos.cell or 0, funcs[v].pos.line))

    def loader_labels(self, c: CallIR) -> frozenset[L]:
        """``Path("prompts/judge.md").read_text()``, ``load_prompt("grader")``: a judge prompt."""
        tokens = set(name_tokens(c.func))
        if not tokens & LOADER_TOKENS:
            return frozenset()
        for a in c.args:
            if a.text and _PATHLIKE.match(a.text):
                base = PurePosixPath(a.text).name
                if role_from_name(base) is Role.EVALUATOR and (
                        "/" in a.text or "." in a.text or tokens & {"prompt", "template"}):
                    o = Origin(self.path, c.pos, f"the evaluator prompt `{a.text}`",
                               (self.path, self.fn.name, c.id))
                    return frozenset({L("rubric", o, name=a.text)})
        return frozenset()

    def partial_of(self, name: str) -> CallIR | None:
        """The ``functools.partial(f, ...)`` call a name was last bound to, here or at module
        level, when it binds a function named by a plain path."""
        found: tuple[CallIR, Module, FunctionIR] | None = None
        vals = self.local_vals.get(name)
        if vals:
            v = vals[-1]
            if len(v.calls) == 1 and not v.names and v.calls[0] < len(self.fn.calls):
                found = (self.fn.calls[v.calls[0]], self.mod, self.fn)
        elif name not in self.fn.locals:
            facts = self.mod.facts
            const = facts.constants.get(name)
            owner = facts.functions.get(facts.owners.get(name, ""))
            if const is not None and owner is not None and len(const.calls) == 1 and \
                    const.calls[0] < len(owner.calls):
                found = (owner.calls[const.calls[0]], self.mod, owner)
        if found is None:
            return None
        call, mod = found[0], found[1]
        root = call.func.split(".")[0]
        qual = f"{mod.facts.imports.get(root, root)}{call.func[len(root):]}"
        if qual != "functools.partial" or not call.args or len(call.args[0].names) != 1 or \
                call.args[0].calls or call.args[0].names[0] == name:
            return None
        return call

    def callable_object(self, func: str) -> bool:
        """``qa(...)``, ``self.generate(...)``: a call of an object itself (a dspy module),
        not of one of its methods (``qa.set_lm(...)``)."""
        if not func or func.startswith("<expr>"):
            return False
        parts = func.split(".")
        return len(parts) == 1 or (len(parts) == 2 and parts[0] in ("self", "cls")) or \
            func in self.labels

    def calls_in(self, v: Val | None) -> list[CallIR]:
        """The calls a value is made of, directly or through the local names it reads."""
        if v is None:
            return []
        vals = [v, *(x for n in v.names for x in self.local_vals.get(n.split(".")[0], ()))]
        out = [self.fn.calls[cid] for x in vals for cid in x.calls if cid < len(self.fn.calls)]
        for n in v.names:
            root = n.split(".")[0]
            if root not in self.local_vals:
                out.extend(closures.captured_calls(self, root))
        return out

    @property
    def genctx_globals(self) -> Mapping[str, L]:
        return self.an.genctx.get(self.path) or {}
