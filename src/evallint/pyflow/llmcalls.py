"""Recognising LLM calls: what a call the interpreter meets is (an SDK call, a chat model or a
framework object run, a helper that makes LLM calls, a parse or a loader) and the effective
call it makes.

The functions here take the interpreter (:class:`evallint.pyflow.interp.Interp`) as their first
argument, as :mod:`~evallint.pyflow.frameworks` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from evallint.catalogue import CallRow, ObjectRow
from evallint.pyflow import (
    callbacks,
    callmodels,
    callroles,
    closures,
    effective,
    flows,
    frameworks,
    harness,
    loopfacts,
)
from evallint.pyflow.cues import schema_has_score
from evallint.pyflow.ir import CallIR, FunctionIR, Val
from evallint.pyflow.providers import (
    CAT,
    call_arg,
    model_value,
    qualify,
    sdk_call_row,
)
from evallint.pyflow.results import where
from evallint.pyflow.summaries import (
    OPAQUE,
    L,
    Module,
    Origin,
    Summary,
    chain_keys,
    chat_of,
    first_origin,
)
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp


QUIET_CALLS = {"len", "print", "isinstance", "type", "id", "hash", "bool", "range", "sleep",
               "time", "perf_counter", "monotonic", "debug", "info", "warning", "error",
               "exception", "log", "write", "flush", "close", "dump"}

PARSE_CALLS = {"json.loads", "int", "float", "ast.literal_eval", "yaml.safe_load", "yaml.load",
               "orjson.loads", "ujson.loads", *loopfacts.NO_THROW_PARSES}

# the k-th function a call through a value may run is another call there (its own key, above
# those of the further calls ``effective.record_at`` makes at one call site)
_SHADOW = effective.SECOND * 16

_THINK_PATTERN = re.compile(r"think|reason|scratch|analysis|reflection", re.IGNORECASE)

_ANSWER_PATTERN = re.compile(r"answer|final|result|output|</think|####", re.IGNORECASE)

RE_MATCH_FUNCS = {"re.search", "re.match", "re.findall", "re.fullmatch", "re.finditer",
                  "regex.search", "regex.match", "regex.findall", "regex.fullmatch"}

RE_MATCH_METHODS = {"search", "match", "findall", "fullmatch", "finditer"}

_PATTERN_NAME = re.compile(r"pattern|regex|_re$|^re_|_rx$|^rx_|^pat_|_pat$", re.IGNORECASE)


def sanitize(labels: Iterable[L]) -> frozenset[L]:
    """A final-answer extraction: raw generator output becomes an extracted answer."""
    out: set[L] = set()
    for lb in labels:
        if lb.kind in ("gen", "llm"):
            out.add(L("ans", lb.origin))
        elif lb.kind == "param":
            out.add(L("psan", None, lb.idx))
        else:
            out.add(lb)
    return frozenset(out)


def _note_task(it: Interp, c: CallIR, short: str) -> None:
    """``dataset.evaluate_sync(answer_question)`` in a module using the framework whose
    catalogue file lists the method: the function given is the task under evaluation."""
    fw = CAT.frameworks[CAT.task_methods[short]]
    if not any(fw.owns(v) for v in it.mod.facts.imports.values()):
        return
    first = c.args[0]
    if len(first.names) != 1 or first.calls:
        return
    kind, name = it.resolve(first.names[0])
    found = it.an.tables.function(name, it.path) if kind in ("fn", "ext") else None
    if found is not None:
        it.an.set_state("tasks", (found[0].path, found[1].name),
                        f"the task `{c.func}()` evaluates")


def _judge_run(it: Interp, c: CallIR, args: list[frozenset[L]],
               kws: dict[str, frozenset[L]]) -> frozenset[L] | None:
    """A function that runs evaluator objects on what it is given: TruLens's
    ``Feedback(grader.relevance)`` (a method of the grader), deepeval's
    ``assert_test(case, [metric])`` and ``evaluate(cases, metrics=[...])`` (the metrics in
    its arguments); what else it is given (the test case) is the judge's input."""
    first = c.args[0] if c.args else None
    owner = first.names[0].rpartition(".")[0] if first is not None and len(first.names) == 1 \
        else ""
    labels = it.read(owner) if owner else frozenset().union(*args, *kws.values())
    chats = [lb for lb in labels if lb.kind == "chat" and lb.origin is not None
             and lb.origin.key in it.an.framework]
    if not chats:
        return None
    if owner:
        return chat_call(it, c, chats, [], {}, judge=True)
    # the metrics given are the judges, not what they grade: only the other arguments
    def graded(labels: frozenset[L]) -> frozenset[L]:
        return frozenset() if any(lb in chats for lb in labels) else labels

    return chat_call(it, c, chats, [graded(a) for a in args],
                     {k: graded(v) for k, v in kws.items()}, judge=True)


def _note_app(it: Interp, c: CallIR, keywords: tuple[str, ...]) -> None:
    """``TruApp(desk, feedbacks=[...])``, ``TruBasicApp(answer)``: the app a recorder wraps is
    under evaluation, so a function given, or every method of the class the object given was
    built from, is a generator by structure (the ``tasks`` table, as for a dataset's task)."""
    val = next((v for k in keywords if (v := c.kw(k)) is not None),
               c.args[0] if c.args else None)
    if val is None or len(val.names) != 1 or val.calls:
        return
    why = f"the app `{c.func.rsplit('.', 1)[-1]}()` records and evaluates"
    name = val.names[0]
    kind, qual = it.resolve(name)
    found = it.an.tables.function(qual, it.path) if kind in ("fn", "ext") else None
    if found is not None:
        it.an.set_state("tasks", (found[0].path, found[1].name), why)
        return
    for v in it.local_vals.get(name, ()):  # desk = HelpDesk(): the class's methods
        for cid in v.calls[:1]:
            ctor = it.fn.calls[cid].func if cid < len(it.fn.calls) else ""
            root, _, rest = ctor.partition(".")
            target = it.mod.facts.imports.get(root)
            mod = it.an.tables.owner(f"{target}.{rest}" if rest else target, it.path) \
                if target else it.mod
            cls = ctor.rsplit(".", 1)[-1]
            if mod is None or not cls:
                continue
            for fname in mod.facts.functions:
                if fname.startswith(cls + ".") and fname.count(".") == 1:
                    it.an.set_state("tasks", (mod.path, fname), why)


def sdk_kind(it: Interp, c: CallIR, kind: str, name: str) -> CallRow | None:
    """The catalogue row of a call that runs a model directly (an SDK call), or None."""
    keywords = frozenset(k for k, _ in c.kwargs)
    return sdk_call_row(c.func, name if kind == "ext" else None, keywords, it.mod.facts.imports)


def dispatch(it: Interp, c: CallIR, args: list[frozenset[L]], kws: dict[str, frozenset[L]],
             recv: frozenset[L]) -> frozenset[L]:
    bound = it.partial_of(c.func) if c.func and "." not in c.func else None
    if bound is not None:  # ask = partial(call_llm, model="..."); ask(prompt)
        c = CallIR(c.id, bound.args[0].names[0], (*bound.args[1:], *c.args),
                   (*bound.kwargs, *c.kwargs), c.pos, c.recv, c.star or bound.star,
                   c.in_try)
        args = [it.eval(a) for a in bound.args[1:]] + args
        kws = {**{k: it.eval(v) for k, v in bound.kwargs}, **kws}
    kind, name = it.resolve(c.func)
    sdk = sdk_kind(it, c, kind, name)
    if sdk is not None:
        return sdk_call(it, c, sdk, args, kws)
    row = CAT.object_row(name) if kind == "ext" else None  # one lookup for every object kind
    if row is not None and row.kind == "chat":
        return chat_object(it, c, it.mod, it.fn, lambda v: callmodels.model_of_val(it, v))
    if kind == "ext" and it.an.framework_name(name, it.path):
        if row is not None and frameworks.is_framework_object(row):
            return frameworks.make_object(it, c, row, it.path, it.fn.name)
        if frameworks.is_configure(name) is not None:
            frameworks.configure(it, name, c)
            return frozenset()
        if name in CAT.judge_functions:
            judged = _judge_run(it, c, args, kws)
            if judged is not None:
                return judged
        if name in CAT.app_functions:
            _note_app(it, c, CAT.app_functions[name])
        if CAT.harness:
            h = harness.harness_row(name)
            if h is not None:
                harness.note(it, c, h)
        if name in CAT.run_functions:
            # the object run: by keyword (Runner(agent=pipeline), query(options=opts)), else
            # the first argument (Runner.run(agent, input))
            run_by = CAT.run_object.get(CAT.run_functions[name], ())
            key = next((k for k in run_by if k in kws), None)
            obj = c.kw(key) if key is not None else c.args[0] if c.args else None
            if obj is not None:
                labels = kws[key] if key is not None else args[0]
                rest = {k: v for k, v in kws.items() if k != key}
                chats = frameworks.framework_chats(it, labels)
                if chats:
                    prompts, inputs = frameworks.run_inputs(c, args, rest,
                                                            skip_first=key is None)
                    return frameworks.run_object(it, c, chats, obj, prompts, inputs)
    if row is not None and row.kind == "evaluator":
        return framework_object(it, c, row)
    if it.an.is_extractor(c.func):
        return sanitize(frozenset().union(recv, *args, *kws.values()))
    if kind in ("fn", "ext", "method", "builtin") and c.func.rsplit(".", 1)[-1] in \
            CAT.step_methods:
        step = _step_work(it, c, kind, name)
        if step is not None:  # ``judgeFacts.run(input)``: the step's work function runs
            return user_call(it, c, step[0], step[1], args, kws)
    if kind in ("fn", "ext"):
        found = it.an.tables.function(name, it.path)
        if found is not None and (found[0].path in it.an.relevant
                                  or (found[0].path, found[1].name) in it.an.summaries):
            return user_call(it, c, found[0], found[1], args, kws)
        if found is None and kind == "ext" and (name.startswith(".") or (
                it.an.tables.may_resolve(name) and it.an.tables.owner(name, it.path) is None)):
            # a function of the project's own modules that were read no further (no LLM
            # words): what it makes of a judge's output (a pass flag computed in code, a
            # parsed and checked reply) cannot be told, so it is no longer the judge's own
            given = frozenset().union(recv, *args, *kws.values())
            if any(lb.kind == "judge" for lb in given):
                return frozenset(L("judge", lb.origin, lb.idx, True, OPAQUE)
                                 if lb.kind == "judge" else lb for lb in given)
        # (a function of a module with no LLM content is never solved: what it returns is
        # made of what it is given, as for a library's function)
    if kind == "method":
        callbacks.note_direct(it, c)
        handed = callbacks.targets(it, c)
        if handed:  # ``generate(x)`` on a parameter its callers hand functions to
            return _run_bound(it, c, handed, args, kws)
        targets = harness.called_through(it, c)
        if targets:  # ``fn(out)`` for each ``fn`` of ``METRICS``: each one may run here
            return _run_each(it, c, targets, args, kws)
    if it.an.fw_objects and kind in ("method", "fn") and it.callable_object(c.func):
        chats = [lb for lb in frameworks.framework_chats(it, it.read(c.func))
                 if lb.origin is not None
                 and it.an.fw_objects[lb.origin.key].framework in CAT.callable]
        if chats:
            prompts, inputs = frameworks.run_inputs(c, args, kws, skip_first=False)
            return frameworks.run_object(it, c, chats, Val(names=(c.func,)), prompts,
                                         inputs)
    short = c.func.rsplit(".", 1)[-1]
    everything = frozenset().union(recv, *args, *kws.values())
    if it.an.is_extractor(c.func):
        return sanitize(everything)
    if kind == "method":
        return method_call(it, c, short, args, kws, recv)
    if it.an.chats and short in CAT.object_methods and "." in c.func and any(
            lb.kind == "chat" for lb in it.read(c.func.rsplit(".", 1)[0])):
        return method_call(it, c, short, args, kws, recv)  # self.llm, an imported llm
    full = name if kind == "ext" else c.func
    if full in ("re.sub", "re.subn", "regex.sub") and c.args and c.args[0].text and \
            _THINK_PATTERN.search(c.args[0].text):
        return sanitize(everything)
    if full in RE_MATCH_FUNCS and c.args:
        if c.args[0].text and _ANSWER_PATTERN.search(c.args[0].text):
            everything = sanitize(everything)
        return loopfacts.regex_checked(loopfacts.regex_text(it, c.args[0]), everything)
    if (kind == "builtin" and short == "open") or full in ("io.open", "codecs.open"):
        it.note_open(c)
        everything |= loopfacts.read_back(it, c, on_object=False)
    elif it.stored and kind == "ext" and short in ("read_json", "read_csv"):
        everything |= loopfacts.read_back(it, c, on_object=False)
    if full in PARSE_CALLS or (kind == "builtin" and short in ("int", "float")):
        loopfacts.note_parse(it, c, args[0] if args else frozenset())
    if short in QUIET_CALLS and kind in ("builtin", "ext"):
        return frozenset()
    return everything | it.loader_labels(c)


def _run_bound(it: Interp, c: CallIR, bound: list[tuple[Module, FunctionIR]],
               args: list[frozenset[L]], kws: dict[str, frozenset[L]]) -> frozenset[L]:
    """A bound parameter's call running each function the call site handed over (the k-th
    as another call here)."""
    it.touched = True
    # (the helper's name is no evidence of the role of what it is handed: a function given to
    # ``evaluate_retrieval(retrieve, data)`` is the thing under evaluation, not a judge)
    own = it.own_role, it.own_evidence
    it.own_role, it.own_evidence = Role.UNKNOWN, ()
    try:
        return callbacks.not_returned(it, _run_each(it, c, bound, args, kws))
    finally:
        it.own_role, it.own_evidence = own


def _run_each(it: Interp, c: CallIR, targets: list[tuple[Module, FunctionIR]],
              args: list[frozenset[L]], kws: dict[str, frozenset[L]]) -> frozenset[L]:
    """Each project function one call may run, the k-th as another call here (those of
    modules the analysis reads)."""
    out: frozenset[L] = frozenset()
    for k, (mod, fn) in enumerate(targets):
        if mod.path in it.an.relevant or (mod.path, fn.name) in it.an.summaries:
            out |= user_call(it, c if k == 0 else replace(c, id=c.id + _SHADOW * k),
                             mod, fn, args, kws)
    return out


def method_call(it: Interp, c: CallIR, short: str, args: list[frozenset[L]],
                kws: dict[str, frozenset[L]], recv: frozenset[L]) -> frozenset[L]:
    base = c.func.rsplit(".", 1)[0]
    if not base.startswith("<expr>") and base:
        recv = recv | it.read(base)
    allargs = frozenset().union(*args, *kws.values())
    chats = [lb for lb in recv if lb.kind == "chat"]
    if short in CAT.registries and c.args and c.args[0].text:
        found = it.an.registered(short, c.args[0].text)  # mastra.getAgent("judge")
        if found:
            return found
    if it.an.fw_objects or it.an.fw_runs:
        out = framework_method(it, c, short, base, args, kws, recv)
        if out is not None:
            return out
    if chats and short in CAT.chat_run_methods:
        return chat_call(it, c, chats, args, kws)
    if not chats and (short in CAT.chat_run_methods or short in CAT.framework_methods) and \
            base and "." not in base:
        # ``judge_llm.invoke(...)``, ``agent.generate(...)`` on a parameter: the caller decides
        # what runs (see ``param_chat_run``); its reply is a new text, not the prompt passed
        # through (the caller's run stands for it), so only the object's labels go on
        ran = False
        for lb in recv:
            if lb.kind == "param" and lb.idx is not None:
                ran = True
                if lb.idx not in it.chat_params:
                    r, ev = callroles.role_of(
                        it, c, None, None, None,
                        [*c.args, *(v for k, v in c.kwargs if k == "input")])
                    it.chat_params[lb.idx] = (r.value, ev)
        if ran:
            return recv
    if chats and short in CAT.derive_methods:
        return chat_bound(it, c, chats, it.mod, it.fn)
    if short in CAT.task_methods and c.args:
        _note_task(it, c, short)
    if chats and short in CAT.judge_methods and any(
            lb.origin is not None and lb.origin.key in it.an.framework for lb in chats):
        return chat_call(it, c, chats, args, kws, judge=True)
    if short in ("append", "extend", "insert", "add", "update", "appendleft", "put"):
        if base and not base.startswith("<expr>"):
            it.labels[base] = it.labels.get(base, frozenset()) | allargs
        return frozenset()
    if short in ("split", "rsplit", "partition", "rpartition") and c.args and \
            c.args[0].text and _ANSWER_PATTERN.search(c.args[0].text):
        return sanitize(recv)
    if short in ("sub",) and c.recv is None and c.args:  # compiled_pattern.sub(...)
        return allargs | recv
    if short in ("format", "render", "format_map", "substitute", "safe_substitute"):
        if any(lb.kind == "rubric" for lb in recv):
            flows.template_sink(it, c, args, kws)
        return recv | allargs
    if short == "open" and ((c.args and c.args[0].text) or c.kw("mode")):
        it.note_open(c)
    if short in ("write_text",):
        it.note_open(c)
        loopfacts.note_stored(it, loopfacts.path_key(it, c, on_object=True), list(c.args))
    elif short in ("to_json", "to_csv") and c.args:  # a DataFrame of judge output saved
        loopfacts.note_stored(it, loopfacts.path_key(it, c, on_object=False),
                              [Val(names=(base,))] if base and not base.startswith("<expr>")
                              else [c.recv] if c.recv is not None else [])
    elif short in ("open", "read_text") and it.stored:
        recv = recv | loopfacts.read_back(it, c, on_object=True)
    if short in ("loads", "literal_eval"):
        loopfacts.note_parse(it, c, args[0] if args else frozenset())
    if short in RE_MATCH_METHODS and c.recv is None and base and c.args:
        text = loopfacts.regex_text(it, Val(names=(base,)))
        if text is not None or _PATTERN_NAME.search(base.rsplit(".", 1)[-1]):
            return loopfacts.regex_checked(text, allargs)
    loaded = it.loader_labels(c)
    if short in ("group", "groups") and c.recv is not None:
        return recv
    if short in QUIET_CALLS:
        return frozenset()
    return recv | allargs | loaded


def framework_method(it: Interp, c: CallIR, short: str, base: str, args: list[frozenset[L]],
                     kws: dict[str, frozenset[L]], recv: frozenset[L]
                     ) -> frozenset[L] | None:
    """``team.run(task=...)``, ``model.generate_content(...)``: a framework object's
    run; ``result.to_input_list()``: its transcript. None for any other method."""
    fw = frameworks.framework_chats(it, recv)
    runnable = [lb for lb in fw if lb.origin is not None and short in CAT.run_methods
                .get(it.an.fw_objects[lb.origin.key].framework, frozenset())]
    if runnable:
        prompts, inputs = frameworks.run_inputs(c, args, kws, skip_first=False)
        obj = Val(names=(base,)) if base and not base.startswith("<expr>") else None
        return frameworks.run_object(it, c, runnable, obj, prompts, inputs)
    if short in CAT.history_methods:
        return frameworks.history(it, recv, f"{base}.{short}()", c.pos)
    if short in CAT.set_model and fw and c.args:  # module.set_lm(lm): its own LM from now on
        frameworks.set_lm(it, fw, c.args[0])
        return frozenset()
    return None


def sdk_call(it: Interp, c: CallIR, row: CallRow, args: list[frozenset[L]],
             kws: dict[str, frozenset[L]]) -> frozenset[L]:
    """A call that runs a model directly; ``row`` says where its model and prompt are."""
    mpos, ppos = row.model_position, row.prompt_position
    model_val = call_arg(c, CAT.model_keywords) or (
        c.args[mpos] if mpos is not None and len(c.args) > mpos else None)
    if model_val is None and c.star:
        callmodels.forwarded_model(it, c)
    system_val = call_arg(c, CAT.system_keywords)
    prompt_vals = [v for k, v in c.kwargs if k in CAT.prompt_keywords]
    if ppos is not None and len(c.args) > ppos:
        prompt_vals.append(c.args[ppos])
    role, evidence = callroles.role_of(it, c, None, model_val, system_val, prompt_vals,
                                       [*args, *kws.values()])
    inputs = {k: v for k, v in kws.items() if k not in CAT.non_content}
    for i, a in enumerate(args):
        if i != mpos:
            inputs[f"#{i}"] = a
    for k, labels in kws.items():
        slot = ("system" if k in CAT.system_keywords else "model" if k in CAT.model_keywords
                else "tools" if k == "tools" else "prompt" if k not in CAT.non_content else "")
        flows.note_slots(it, labels, slot, role)
    for k, labels in inputs.items():
        if k.startswith("#"):
            flows.note_slots(it, labels, "prompt", role)
    model, model_where = callmodels.model_of_val(it, model_val)
    if model is None and model_val is not None and (model_val.calls or model_val.names):
        # model=openai("gpt-4o"), or a variable holding it
        model, model_where = frameworks.handle_model(it, model_val, rows_only=True)
    reasoning = callroles.reasoning_evidence(it, c, model, system_val, prompt_vals)
    # (JSON mode, ``response_format={"type": "json_object"}``, checks no schema: not structured)
    structured = any(k in CAT.structured_keywords and "json_object" not in v.strings
                     for k, v in c.kwargs) or \
        c.func.endswith(".parse")
    shown = (model, model_where) if model is not None else callmodels.symbolic_model(it, model_val)
    has_score = role is Role.EVALUATOR and schema_scored(
        it, [v for k, v in c.kwargs if k in CAT.structured_keywords])
    if role is not Role.EVALUATOR:
        flows.mark_genctx(it, c, system_val, c.kw("messages"), role)
        flows.mark_system_slot(it, c, prompt_vals)
        flows.mark_state(it, c, [*prompt_vals, *(v for k, v in c.kwargs if k == "messages")])
    it.summary.n_llm += 1
    it.summary.structured = it.summary.structured or structured
    if reasoning:
        it.summary.reasoning = tuple(dict.fromkeys(it.summary.reasoning + reasoning))
    if model_val is not None:
        ref = it.local_ref(model_val.ref)
        fallback = None
        if ref is not None and ref[0] == "or":  # ``model || "gpt-4o"`` on a parameter
            ref, fallback = ref[1], ref[2]
        if ref is not None and ref[0] == "param":
            callmodels.model_param(it, int(ref[1]), ref[2] if len(ref) > 2 else "")
            if fallback is not None and it.summary.model.default is None:
                it.summary.model.default = str(fallback[1])
                it.summary.model.default_where = (
                    f"the default after `||` in `{it.fn.name}()` ({where(it.path, c.pos)})")
        elif ref is not None and ref[0] == "outer":  # the enclosing function's parameter
            it.summary.model.outer = int(ref[1])
            it.summary.model.path = str(ref[2]) if len(ref) > 2 else ""
        elif model is not None:
            it.summary.model.fixed = model
            it.summary.model.fixed_where = model_where
    tv = c.kw("tools")
    tools = (tuple(tv.tool_names) + callmodels.const_tools(it, tv)) if tv is not None else ()
    origin = Origin(it.path, c.pos, f"`{c.func}()`", (it.path, it.fn.name, c.id),
                    reasoning)
    if has_score:
        it.an.add_state("scored", (origin.key,))
    effective.record(it, c, c.func, role, evidence, inputs, shown[0], shown[1], tools, origin,
                     own_role=False)
    if c.func.endswith("batches.create"):
        return frozenset()
    return effective.output(role, origin, structured)


def schema_scored(it: Interp, vals: list[Val]) -> bool:
    return schema_has_score(it.mod.facts.constants, vals)


def chat_object(it: Interp, c: CallIR, mod: Module, fn: FunctionIR,
                model_of: Callable[[Val | None], tuple[str | None, str]]) -> frozenset[L]:
    """A chat model constructor: ``ChatOpenAI(model=...)``, ``init_chat_model("...")``."""
    key = (mod.path, fn.name, c.id)
    row = CAT.object_row(qualify(c.func, mod.facts.imports))
    val = model_value(row.model if row is not None else None, c)
    if key not in it.an.chats:
        found = it.an.resolve_ref(val.ref, mod, fn.cls) if val is not None else (None, "")
        it.an.set_state("chats", key, found if found[0] is not None else model_of(val))
        if val is not None and it.fn is fn and fn.name != "<module>" and any(
                lb.kind == "param" and not (fn.is_method and lb.idx == 0)
                for lb in it.peek(val)):
            it.an.add_state("varying", (key,))
    ref = it.local_ref(val.ref) if val is not None and it.fn is fn else None
    if ref is not None and ref[0] == "param" and it.summary.model.param is None:
        # a factory that builds the object on its parameter (``baseModel(name)`` making
        # ``new ChatGoogleGenerativeAI({model: name})``): each call's argument picks the model
        callmodels.model_param(it, int(ref[1]), str(ref[2]) if len(ref) > 2 else "")
    what = f"the `{c.func.rsplit('.', 1)[-1]}` object"
    return frozenset({L("chat", Origin(mod.path, c.pos, what, key))})


def _one_object(it: Interp, ctor: Origin) -> Origin | None:
    """The constructor a call's chat object comes from, unless each call of the function
    that builds it makes another one (its model is that function's parameter)."""
    return None if ctor.key in it.an.varying else ctor


def framework_object(it: Interp, c: CallIR, row: ObjectRow) -> frozenset[L]:
    """An evaluation framework's evaluator (uptrain ``EvalLLM(Settings(model=...))``,
    LlamaIndex's ``FaithfulnessEvaluator(llm=...)``): a chat object whose ``evaluate()`` is
    an evaluator call on the model its catalogue row says it takes."""
    framework = row.framework
    it.touched = True
    key = (it.path, it.fn.name, c.id)
    if key not in it.an.chats:
        model: tuple[str | None, str] = (None, "")
        given = model_value(row.model, c)
        if given is not None:  # FaithfulnessEvaluator(llm=judge_llm)
            model = _object_or_model(it, given)
        elif row.model is not None and row.model.default is not None:
            model = row.model.default, row.model.default_where
        for v in (c.kw("settings"), *c.args[:1]) if row.settings else ():
            for sc in it.calls_in(v):
                if sc.func.rsplit(".", 1)[-1] in row.settings and sc.kw("model"):
                    model = callmodels.model_of_val(it, sc.kw("model"))
        it.an.set_state("chats", key, model)
        it.an.set_state("framework", key, framework)
    what = f"the {framework} `{c.func.rsplit('.', 1)[-1]}` evaluator"
    return frozenset({L("chat", Origin(it.path, c.pos, what, key))})


def _object_or_model(it: Interp, val: Val) -> tuple[str | None, str]:
    """The model of a chat object a value holds (``llm=gpt``), else of the value itself."""
    for n in val.names:
        for lb in it.read(n):
            if lb.kind == "chat" and lb.origin is not None and lb.origin.key in it.an.chats:
                return it.an.chats[lb.origin.key]
    return frameworks.model_in(it, val)


def chat_bound(it: Interp, c: CallIR, chats: list[L], mod: Module, fn: FunctionIR
               ) -> frozenset[L]:
    """``llm.with_structured_output(Verdict)``, ``llm.bind_tools(...)``: the same model."""
    structured = c.func.rsplit(".", 1)[-1] in CAT.derive_structured
    key = (mod.path, fn.name, c.id)
    out: set[L] = set()
    # (the wrapper's model is its first object's, by origin: ``getModel()`` may return one of
    # two, and the choice must not follow set order)
    for lb in sorted(chats, key=lambda x: tuple(chain_keys(x.origin))):
        assert lb.origin is not None
        it.an.set_state("chats", key, it.an.chats.get(lb.origin.key, (None, "")), keep=True)
        if structured and it.an.chat_schema_scored(mod, c.args[:1]):
            it.an.add_state("scored", (key,))
        o = Origin(mod.path, c.pos, lb.origin.what, key, (), lb.origin)
        out.add(L("chat", o, flag=lb.flag or structured))
    return frozenset(out)


def chat_call(it: Interp, c: CallIR, chats: list[L], args: list[frozenset[L]],
              kws: dict[str, frozenset[L]], judge: bool = False) -> frozenset[L]:
    """``llm.invoke(messages)`` (also through a bound or structured-output model);
    ``judge``: a framework evaluator's ``evaluate()``."""
    chat, ctor = chat_of(chats)
    assert chat.origin is not None
    model, model_where = it.an.chats.get(chat.origin.key, (None, ""))
    base = c.func.rsplit(".", 1)[0]
    obj = Val(names=(base,)) if base and not base.startswith("<expr>") else None
    prompt_vals = [*c.args, *(v for k, v in c.kwargs if k == "input")]
    role: Role
    evidence: tuple[str, ...]
    if judge:
        role, evidence = Role.EVALUATOR, (f"{chat.origin.what}: `{c.func}()`",)
    else:
        # a chain (``utility_prompt | llm``) carries its prompt template: what the template
        # says is the call's prompt as much as what ``invoke`` is given
        chain = obj if obj is not None else c.recv  # ``(prompt | llm).invoke(...)``
        texts = callroles.prompt_texts(it, None, [chain]) if chain is not None else []
        chained = [Val(strings=tuple(t for t in texts if len(t) > 40)[:8])] if texts else []
        role, evidence = callroles.role_of(it, c, None, obj, None, prompt_vals + chained,
                                           [*args, *kws.values()])
    inputs = {f"#{i}": a for i, a in enumerate(args)}
    # (an evaluator run is shown all it is given: ``scorer.run({input, output})``'s output is
    # the candidate, not the structured-output setting of an SDK call)
    skip = frozenset(CAT.model_keywords) if judge else CAT.non_content
    inputs.update({k: v for k, v in kws.items() if k not in skip and k != "config"})
    for labels in inputs.values():
        flows.note_slots(it, labels, "prompt", role)
    if role is not Role.EVALUATOR:
        flows.mark_system_slot(it, c, prompt_vals)
        flows.mark_state(it, c, prompt_vals)
    structured = any(lb.flag for lb in chats)
    reasoning = callroles.reasoning_evidence(it, c, model, None, prompt_vals)
    it.summary.count_call(structured, reasoning,
                          None if callmodels.param_model(it, ctor) else model, model_where)
    origin = Origin(it.path, c.pos, f"`{c.func}()`", (it.path, it.fn.name, c.id),
                    reasoning, chat.origin if chat.origin is not ctor else None)
    if role is Role.EVALUATOR and any(k in it.an.scored for k in chain_keys(chat.origin)):
        it.an.add_state("scored", (origin.key,))
    framework = it.an.framework.get(ctor.key)
    if judge and framework is not None:  # what its result's fields mean is the framework's
        it.an.set_state("fw_runs", origin.key, framework)
    effective.record(it, c, c.func, role, evidence, inputs, model, model_where, (), origin,
                     own_role=False, obj=_one_object(it, ctor))
    return effective.output(role, origin, structured)


_SCRIPT_KINDS = ("typescript", "javascript")


def _named(key: str, words: tuple[str, ...], stem: str) -> bool:
    """An options object's field for a slot: a keyword of it (``system``, ``messages``), or
    a name holding its stem (``systemPrompt``, ``userPrompt``)."""
    return key in words or stem in key.lower()


def _field_slots(key: str, slots: frozenset[str]) -> frozenset[str]:
    """The slots of a helper's options parameter that its field ``key`` fills: its system
    prompt field the system slot, its prompt fields the prompt slot, others (a key, a model)
    none."""
    out = set()
    if "system" in slots and _named(key, CAT.system_keywords, "system"):
        out.add("system")
    if "prompt" in slots and (_named(key, CAT.prompt_keywords, "prompt")
                              or key in ("user", "content", "text", "query", "question")):
        out.add("prompt")
    return frozenset(out | (slots - {"system", "prompt"}))


def _step_work(it: Interp, c: CallIR, kind: str, name: str
               ) -> tuple[Module, FunctionIR] | None:
    """The work function of a workflow step object a method of it runs (``judgeFacts.run(x)``
    where ``judgeFacts = pickaxe.tool({fn})``: the lowering wrote ``judgeFacts__fn``), here
    or in the module it is imported from; None for any other object's method."""
    base, _, method = (name if kind == "ext" else c.func).rpartition(".")
    if not base or c.func.count(".") != 1:
        return None  # (``a.b.run()``: not a step object's own method)
    if kind != "ext":
        if base in it.labels or base in it.fn.locals or base not in it.mod.facts.constant_names:
            return None
        base = f"{it.mod.name}.{base}"
    for run in CAT.step_methods.get(method, ()):
        found = it.an.tables.function(f"{base}__{run}", it.path)
        if found is not None and (found[0].path in it.an.relevant
                                  or (found[0].path, found[1].name) in it.an.summaries):
            return found
    return None


def user_call(it: Interp, c: CallIR, mod: Module, fn: FunctionIR, args: list[frozenset[L]],
              kws: dict[str, frozenset[L]]) -> frozenset[L]:
    if c.kwargs and not c.args and it.mod.facts.kind in _SCRIPT_KINDS and fn.params and \
            not fn.params[0].star and \
            not {p.name for p in fn.params} & set(kws) and \
            not (fn.is_method and "." in c.func):
        # ``callClaude({model, system, prompt})`` (an object literal, lowered as keywords)
        # to ``callClaude(options)`` or a step's ``fn: async (input) => ...``: the object is
        # its one argument
        obj = Val(names=tuple(n for _, v in c.kwargs for n in v.names),
                  calls=tuple(i for _, v in c.kwargs for i in v.calls), keys=c.kwargs)
        packed: Val | None = obj
        fields = kws
        c, args, kws = replace(c, args=(obj,), kwargs=()), [frozenset().union(*kws.values())], {}
    else:
        packed, fields = None, {}
    s = it.an.summary(mod, fn)
    it.deps.add((mod.path, fn.name))
    if s.computed_keys:
        it.call_keys[c.id] = s.computed_keys
    if s.forced_keys:
        it.call_forced[c.id] = s.forced_keys
    offset = 1 if fn.is_method and "." in c.func else 0
    names = [p.name for p in fn.params]
    by_param: dict[int, frozenset[L]] = {}
    vals: dict[int, Val] = {}
    for i, a in enumerate(args):
        j = i + offset
        if j < len(fn.params) and not fn.params[j].star:
            by_param[j] = a
            vals[j] = c.args[i]
    star = max((i for i, p in enumerate(fn.params) if p.star), default=None)
    for k, v in c.kwargs:
        if k in names:
            by_param[names.index(k)] = kws[k]
            vals[names.index(k)] = v
        elif star is not None:  # into the callee's ``**kwargs``
            by_param[star] = by_param.get(star, frozenset()) | kws[k]
            if k == "model" or star not in vals:
                vals[star] = v
    spec = callbacks.specialize(it, c, mod, fn, s, vals, by_param) \
        if s.called_params else None
    if spec is not None:  # it runs the functions handed to it: here, the ones this call hands
        s = spec
    extra = param_chat_run(it, c, s, mod, fn, by_param, vals) if s.chat_params and not s.llm \
        else frozenset()
    role: Role = Role.UNKNOWN
    evidence: tuple[str, ...] = ()
    # what the call hands the helper's system prompt and prompt
    sys_v = next((vals[i] for i, sl in s.slots.items() if "system" in sl and i in vals), None)
    prompt_vals = [vals[i] for i, sl in s.slots.items() if "prompt" in sl and i in vals]
    if packed is not None:
        # (one options object: its system and prompt fields, not its key or its model)
        sys_v = next((v for k, v in packed.keys
                      if "system" in _field_slots(k, frozenset({"system"}))), None) \
            if sys_v is not None else None
        prompt_vals = [v for k, v in packed.keys
                       if "prompt" in _field_slots(k, frozenset({"prompt"}))] \
            if prompt_vals else []
    conf = it.an.configured_role(f"{mod.name}.{fn.name}", fn.name)
    if conf is not None:
        role, evidence = conf[0], (conf[1],)
    elif {Role.GENERATOR, Role.EVALUATOR} <= s.own_call_roles or spec is not None:
        # a function that writes and judges (``reflect()`` running the whole loop) is the
        # loop: no one role of a call, whatever its name or its caller's says; as is one
        # running the functions this call hands it (their calls have their roles there)
        pass
    elif s.role is not Role.UNKNOWN:
        # (what it is given may say so too: ``evaluate(EVALUATOR_PROMPT, draft)``)
        role, evidence = s.role, (*s.role_evidence,
                                  *callroles.backing(it, s.role, sys_v, prompt_vals, None))
    elif s.llm and s.meta:
        it.meta = True  # a router's or prompt rewriter's helper: no role of the loop
    elif s.llm:
        model_v = vals.get(s.model.param) if s.model.param is not None else None
        role, evidence = callroles.role_of(it, c, f"{mod.name}.{fn.name}", model_v, sys_v,
                                           prompt_vals)
        if role is Role.UNKNOWN and s.own_call_roles == frozenset({Role.EVALUATOR}):
            role, evidence = Role.EVALUATOR, (f"every LLM call in `{fn.name}()` is an "
                                              "evaluator call",)
        elif role is Role.UNKNOWN and s.own_call_roles == frozenset({Role.GENERATOR}):
            role, evidence = Role.GENERATOR, (f"every LLM call in `{fn.name}()` is a "
                                              "generator call",)
    scorer = it.an.scorer_fns.get((it.path, it.fn.name))
    if role is Role.EVALUATOR and scorer is not None and scorer not in evidence:
        evidence = (*evidence, scorer)  # named a judge, and run as a scorer: structure too
    if s.llm or conf is not None:
        inputs: dict[str, frozenset[L]] = {}
        for j, labels in by_param.items():
            slots = s.slots.get(j, frozenset())
            if s.role is not Role.UNKNOWN or conf is not None or slots & {"prompt",
                                                                          "system"}:
                inputs[names[j]] = labels
            parts = [(labels, slots)] if packed is None or j != 0 else [
                (fields[k], _field_slots(k, slots)) for k, _ in packed.keys if k in fields]
            for part_labels, part_slots in parts:
                for lb in part_labels:
                    if lb.kind in ("param", "psan"):
                        for sl in part_slots:
                            it.slots.setdefault(lb.idx, set()).add(sl)
                        for r in s.sinks.get(j, frozenset()):
                            it.sinks.setdefault(lb.idx, set()).add(r)
        for lb in frozenset().union(*inputs.values()) if inputs else ():
            if lb.kind in ("param", "psan") and role is not Role.UNKNOWN:
                it.sinks.setdefault(lb.idx, set()).add(role.value)
        model, model_where = callmodels.helper_model(it, s, vals)
        if role is not Role.EVALUATOR:
            flows.mark_genctx(it, c, sys_v, None, role)
        tools: tuple[str, ...] = ()
        tv = c.kw("tools")
        if tv is not None:
            tools = tuple(tv.tool_names) + callmodels.const_tools(it, tv)
        inner = first_origin(lb.origin for lb in s.returns)
        prompts = [vals[i] for i, sl in s.slots.items() if sl & {"prompt", "system"}
                   and i in vals]
        reasoning = tuple(dict.fromkeys(
            s.reasoning + callroles.reasoning_evidence(it, c, model, None, prompts)))
        origin = Origin(it.path, c.pos, f"`{c.func}()`", (it.path, it.fn.name, c.id),
                        reasoning, inner)
        it.summary.n_llm += 1
        if reasoning:
            it.summary.reasoning = tuple(dict.fromkeys(it.summary.reasoning
                                                       + reasoning))
        if s.model.param is not None and s.model.param in vals:
            if not callmodels.passed_on(it, s, vals[s.model.param]) and model is not None:
                it.summary.model.fixed = model
                it.summary.model.fixed_where = model_where
        elif s.model.fixed or s.model.default:
            it.summary.model.fixed = model
            it.summary.model.fixed_where = model_where
        if model is None and s.model.outer is not None and \
                closures.enclosing(mod, fn.name) == it.fn.name and \
                s.model.outer < len(it.fn.params):  # a nested function on this one's parameter
            p = it.fn.params[s.model.outer]
            callmodels.model_param(it, s.model.outer, s.model.path)
            model, model_where = it.summary.model.default, it.summary.model.default_where
            if model is None:
                name = f"{p.name}.{s.model.path}" if s.model.path else p.name
                model, model_where = callmodels.symbolic_model(it, Val(names=(name,),
                                                                       ref=("name", name)))
        if model is None and s.model.outer is not None:  # (``agent.run(x)``, ``judge(x)``)
            model, model_where = _made_model(it, c, s, mod, fn)
        if model is None and s.model.param is not None and s.model.param in vals:
            given = vals[s.model.param]
            held = callmodels.field_of(given, s.model.path) if s.model.path else None
            if held is not None:  # the options literal's own field (``{model: CFG.judge}``)
                given = held
            elif s.model.path:  # one field of the settings object given (not the object)
                given = Val(names=tuple(f"{n}.{s.model.path}" for n in given.names[:1]),
                            ref=callmodels.with_path(given.ref, s.model.path))
            model, model_where = callmodels.symbolic_model(it, given)
        effective.record(it, c, c.func, role, evidence, inputs, model, model_where, tools, origin,
                         own_role=s.role is not Role.UNKNOWN or conf is not None)
        if s.computed_keys and it.an.computed_fields.get(origin.key) != s.computed_keys:
            it.an.set_state("computed_fields", origin.key, s.computed_keys)
    else:
        origin = None
        # a non-LLM helper: parameters that reach an LLM call inside it are still sinks
        for j, labels in by_param.items():
            for r in s.sinks.get(j, frozenset()):
                flows.sink_check(it, c, Role(r), {names[j]: labels}, f"`{c.func}()`")
                for lb in labels:
                    if lb.kind in ("param", "psan"):
                        it.sinks.setdefault(lb.idx, set()).add(r)
    if s.called_roles:
        it.touched = True
        it.called |= s.called_roles
        for lid in it.loop_stack:
            gen, ev = it.loop_roles[lid]
            if "evaluator" in s.called_roles and not s.llm:
                ev.append(c.pos)
            if "generator" in s.called_roles and not s.llm:
                gen.append(c.pos)
    if s.llm and Role.EVALUATOR in s.own_call_roles and len(s.own_call_roles) > 1:
        # a helper that both writes and judges (a workflow step that drafts and reviews):
        # a loop around its call refines, as one around both calls written in the loop
        # would (the call counted once above, by its role)
        for lid in it.loop_stack:
            gen, ev = it.loop_roles[lid]
            (gen if role is Role.EVALUATOR else ev).append(c.pos)
    if s.loop_writes:
        loopfacts.caller_writes(it, c, s.loop_writes, vals)
    if s.parses:
        loopfacts.helper_parses(it, c, s, by_param)
    if s.return_elts:
        it.call_elts[c.id] = tuple(returned(s, e, by_param, role, origin) | extra
                                   for e in s.return_elts)
    out = returned(s, s.returns, by_param, role, origin) | extra
    if not s.llm and s.model.param is not None:
        out = _made_here(it, c, s, mod, fn, vals, out)
    if s.computed_keys and not s.llm:
        # ``summarize(evaluation)`` returning ``{passed: e.score >= 3}``: those keys of what
        # it hands back are computed in code from the judge's output, not said by the judge
        for lb in out:
            if lb.kind == "judge" and lb.origin is not None:
                have = it.an.computed_fields.get(lb.origin.key, frozenset())
                if not s.computed_keys <= have:
                    it.an.set_state("computed_fields", lb.origin.key, have | s.computed_keys)
    return out


def _made_here(it: Interp, c: CallIR, s: Summary, mod: Module, fn: FunctionIR,
               vals: dict[int, Val], out: frozenset[L]) -> frozenset[L]:
    """The chat objects a factory builds on its parameter (``baseModel(modelName)``), made at
    this call on the model it is given: a model that resolves is this call's object's, and one
    that is this function's own parameter makes it a factory too (its callers pick)."""
    made = {lb for lb in out if lb.kind == "chat" and lb.origin is not None
            and lb.origin.key[:2] == (mod.path, fn.name)}
    if not made:
        return out
    model, model_where = callmodels.helper_model(it, s, vals)
    if model is None:
        if s.model.param is not None and s.model.param in vals and \
                it.summary.model.param is None:
            callmodels.passed_on(it, s, vals[s.model.param])
        return out
    key = (it.path, it.fn.name, c.id)
    it.an.set_state("chats", key, (model, model_where))
    # (re-rooted at this call: the object's model is the one given here)
    return (out - made) | {L("chat", Origin(it.path, c.pos, lb.origin.what, key, (), lb.origin),
                             flag=lb.flag) for lb in made if lb.origin is not None}


def _made_model(it: Interp, c: CallIR, s: Summary, mod: Module, fn: FunctionIR
                ) -> tuple[str | None, str]:
    """``agent.run(x)`` with ``agent = createAgent({model: ...})`` and ``run`` nested in
    ``createAgent`` on its parameter: the model the factory call was given."""
    root = c.func.split(".")[0]
    factory = closures.enclosing(mod, fn.name)
    facts = it.mod.facts
    held: list[Val]
    made_in: FunctionIR | None
    if root in it.local_vals:
        held, made_in = list(it.local_vals[root][-1:]), it.fn
    elif root in facts.constant_names and root not in it.fn.locals:
        held = [facts.constants[root]]
        made_in = facts.functions.get(facts.owners.get(root, ""))
    else:
        return None, ""
    assert s.model.outer is not None
    for val in held:
        for cid in val.calls:
            made = made_in.calls[cid] if made_in is not None and cid < len(made_in.calls) \
                else None
            if made is None or made.func.rsplit(".", 1)[-1] != (factory or "").rsplit(".", 1)[-1]:
                continue
            given = made.args[s.model.outer] if s.model.outer < len(made.args) else None
            path = s.model.path
            if given is None and s.model.outer == 0 and path and made.kwargs:
                # (a script's ``makeAgent({model, ...})``: the object literal is keywords)
                head, _, path = path.partition(".")
                given = made.kw(head)
            if given is not None:
                return callmodels.field_model(it, given, path) if path else \
                    callmodels.model_of_val(it, given)
    return None, ""


def param_chat_run(it: Interp, c: CallIR, s: Summary, mod: Module, fn: FunctionIR,
                   by_param: dict[int, frozenset[L]], vals: dict[int, Val]) -> frozenset[L]:
    """``evaluate(reply, rubric, judge_llm)`` where ``evaluate`` runs ``judge_llm.invoke``:
    the chat model object passed here runs at this call, on its own model, with the role the
    helper has (its name, else what it is given)."""
    for j, said, said_ev in s.chat_params:
        chats = [lb for lb in by_param.get(j, frozenset()) if lb.kind == "chat"
                 and lb.origin is not None and lb.origin.key in it.an.chats]
        if not chats:
            continue
        chat, ctor = chat_of(chats)
        assert chat.origin is not None
        names = [p.name for p in fn.params]
        given = {names[i]: labels for i, labels in by_param.items() if i != j and i < len(names)}
        if ctor.key in it.an.fw_objects:  # ``ask(judge_agent, prompt)``: the agent runs here
            return frameworks.run_object(it, c, chats, vals.get(j),
                                         [v for i, v in vals.items() if i != j], given)
        model, model_where = it.an.chats.get(chat.origin.key, (None, ""))
        role: Role
        evidence: tuple[str, ...]
        if Role(said) is not Role.UNKNOWN:  # "Rate this reply from 1 to 10" in the helper
            role, evidence = Role(said), said_ev
        elif s.role is not Role.UNKNOWN:
            role, evidence = s.role, s.role_evidence
        else:
            role, evidence = callroles.role_of(it, c, f"{mod.name}.{fn.name}", None, None,
                                               [v for i, v in vals.items() if i != j])
        evidence = (*evidence, f"runs {chat.origin.what} passed to `{fn.name}()`")
        origin = Origin(it.path, c.pos, f"`{c.func}()`", (it.path, it.fn.name, c.id))
        it.summary.count_call(False, (), model, model_where)
        # (own_role False: the model is picked here, by the object passed, and is compared)
        effective.record(it, c, c.func, role, evidence, given, model, model_where, (), origin,
                         own_role=False, obj=_one_object(it, ctor))
        return effective.output(role, origin)
    return frozenset()


def _tested(lb: L, passed: frozenset[L]) -> set[L]:
    """What a helper's test of a parameter (``ppass``: its pass field read, ``psaid``: its
    text tested against a word) is, given what the caller passes for it."""
    out: set[L] = set()
    for a in passed:
        if a.kind in ("param", "psan"):
            out.add(L(lb.kind, None, a.idx, name=lb.name))
        elif a.kind == "judge" and a.origin is not None and (lb.kind == "ppass" or not a.flag):
            out.add(L("pass" if lb.kind == "ppass" else "said", a.origin, name=lb.name))
        elif a.kind == "llm" and a.origin is not None and lb.kind == "psaid":
            out.add(L("said", a.origin, flag=True, name=lb.name))  # see loopfacts.text_tests
    return out


def returned(s: Summary, labels: frozenset[L], by_param: dict[int, frozenset[L]],
             role: Role, origin: Origin | None) -> frozenset[L]:
    """The caller's view of ``labels`` a helper returns: parameters replaced by the
    arguments, LLM outputs re-rooted at this call site with the role it has here."""
    out: set[L] = set()
    for lb in labels:
        if lb.kind == "param":
            out |= by_param.get(lb.idx, frozenset())
        elif lb.kind == "psan":
            out |= sanitize(by_param.get(lb.idx, frozenset()))
        elif lb.kind in ("ppass", "psaid"):  # the helper tests what the caller passes
            out |= _tested(lb, by_param.get(lb.idx, frozenset()))
        elif lb.kind in ("llm", "gen", "judge", "ans") and origin is not None:
            kind = lb.kind
            if kind == "llm" and role is Role.EVALUATOR:
                kind = "judge"
            elif kind == "llm" and role is Role.GENERATOR:
                kind = "gen"
            elif kind == "gen" and role is Role.EVALUATOR:
                kind = "judge"
            inner_r = lb.origin.reasoning if lb.origin else ()
            o = Origin(origin.path, origin.pos, origin.what, origin.key,
                       tuple(dict.fromkeys(origin.reasoning + inner_r)), lb.origin)
            out.add(L(kind, o, flag=lb.flag or (kind == "judge" and s.structured)))
        elif lb.kind == "genctx" and role is Role.EVALUATOR and origin is not None:
            continue  # the history of the helper's own call: here that is the judge's
        else:
            out.add(lb)
    return frozenset(out)
