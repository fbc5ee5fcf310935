"""Agent and evaluation frameworks, modelled from their public API.

A framework hides the LLM call behind an object: an OpenAI Agents SDK ``Agent`` run by
``Runner.run``, a pydantic-ai ``Agent`` with ``run_sync``, a dspy module called like a function
on the LM that ``dspy.configure`` set, an autogen agent or team with ``run``, a Gemini
``GenerativeModel`` with ``generate_content``, a pydantic-evals ``LLMJudge`` that the dataset
runs. Each object becomes a chat-object label (see :class:`FrameworkObject`); running it is an
effective LLM call with the role its variable, name, instructions or signature give it, on the
model it names or the framework's default. What a run hands back keeps the transcript apart:
``result.to_input_list()``, ``result.messages``, ``chat_history`` are the run's message
history (the generator's context, I2), while a dspy prediction's fields are extracted answers
and its ``reasoning``/``rationale`` field is the chain of thought (I3).

The functions here take the interpreter (:class:`evallint.pyflow.interp.Interp`) as their
first argument; the tables are plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from evallint.catalogue import ObjectRow
from evallint.facts import Pos
from evallint.pyflow import callmodels, callroles, effective, flows
from evallint.pyflow.ir import CallIR, FunctionIR, Val
from evallint.pyflow.providers import CAT, call_arg, model_value, qualify
from evallint.pyflow.results import SYMBOLIC, where
from evallint.pyflow.summaries import L, Origin, chat_of
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp

# Framework objects and their runs come from the catalogue (rules/models/*.yaml); what a row
# cannot say is a named hook below.


@dataclass(frozen=True)
class FrameworkObject:
    """A framework object that runs an LLM: which framework and what it is (``agent``,
    ``module``, ``team``, ``judge``, ``model``), its given name, its instructions or
    signature (role evidence), a typed output, tools, why its output holds reasoning, and
    a team's participants (constructor keys)."""

    framework: str
    kind: str
    name: str = ""
    system: Val | None = None
    structured: bool = False
    tools: tuple[str, ...] = ()
    reasoning: tuple[str, ...] = ()
    members: tuple[tuple[str, str, int], ...] = ()


def is_framework_object(row: ObjectRow) -> bool:
    """Is a catalogue object row a framework object made here (``agents.Agent``), not a chat
    model, an evaluator object (:mod:`~evallint.pyflow.llmcalls`) or a client handle?"""
    return row.kind not in ("chat", "evaluator", "client")


def is_configure(qualified: str) -> str | None:
    """The call that sets a framework's ambient model: ``dspy.configure(lm=...)``,
    ``pydantic_evals...set_default_judge_model(...)``, ``textgrad.set_backward_engine(...)``."""
    row = CAT.setter(qualified)
    return row.framework if row is not None else None


# ---------------------------------------------------------------- objects


def make_object(it: Interp, c: CallIR, row: ObjectRow, mod_path: str,
                fn_name: str) -> frozenset[L]:
    """A framework object's constructor (its catalogue row): a chat-object label on its
    model."""
    key = (mod_path, fn_name, c.id)
    an = it.an
    if key not in an.chats:
        an.set_state("chats", key, _object_model(it, c, row))
        an.set_state("fw_objects", key, _describe(it, c, row))
    here = key[:2] == (it.path, it.fn.name)
    if row.hook == "pydantic-evals-judge" and here:
        _llm_judge(it, c, key)  # an effective call, on every pass as any other call
    if row.hook == "evaluator-optimizer" and here:
        _evaluator_optimizer(it, c, key)
    if row.hook == "textgrad-forward" and here:
        _textgrad_engine_use(it, c, key, Role.GENERATOR)
    if row.scorers and here:
        _attached_scorers(it, c, row, key)
    if row.hook == "crewai-task":
        return _crew_task(it, c, key) if here else frozenset()
    what = f"the {CAT.frameworks[row.framework].label} `{c.func.rsplit('.', 1)[-1]}`"
    name = an.fw_objects[key].name
    return frozenset({L("chat", Origin(mod_path, c.pos, what + (f" `{name}`" if name else ""),
                                       key))})


def settings_arg(it: Interp, c: CallIR, keys: tuple[str, ...]) -> Val | None:
    """``new Agent(judgeConfig)`` with ``judgeConfig = {name, model, instructions}`` a
    constant of this module or one it imports: the value of the first of ``keys`` it sets."""
    if len(c.args) != 1 or c.kwargs or c.args[0].calls or len(c.args[0].names) != 1:
        return None
    name = c.args[0].names[0]
    if "." in name or name in it.fn.locals:
        return None
    home, const = it.mod, name
    if name not in it.mod.facts.constant_names:
        target = it.mod.facts.imports.get(name)
        found = it.an.tables.constant(target, it.path) if target else None
        if found is None:
            return None
        home, const = found
    consts = home.facts.constants
    for k in keys:
        if not k.startswith("#") and "." not in k and f"{const}.{k}" in home.facts.constant_names:
            return consts[f"{const}.{k}"]
    return None


def _object_model(it: Interp, c: CallIR, row: ObjectRow) -> tuple[str | None, str]:
    """The model an object names, the ambient one a configure call set, or the framework's
    default; (None, "") when it has none of its own (a dspy module runs on the configured
    LM, a team on its members', a textgrad module on the engine it is given)."""
    if row.hook == "textgrad-forward":
        engine = _engine_of(it, c)
        if engine is not None:
            return it.an.chats.get(engine.key, (None, ""))
        named = _engine_name(it, c)
        return (named, "the engine named by its model string") if named else (None, "")
    spec = row.model
    if spec is None:
        return None, ""
    val = model_value(spec, c)
    if val is None:
        val = settings_arg(it, c, spec.keywords)
    if val is not None:
        return model_in(it, val)
    if spec.ambient and row.framework in it.an.ambient:
        return it.an.ambient[row.framework]
    if spec.default is not None:
        return spec.default, spec.default_where
    return None, ""


def _engine_arg(c: CallIR) -> Val | None:
    """The engine a textgrad call is given (``engine=``, ``backward_engine=`` or first)."""
    return call_arg(c, ("engine", "backward_engine"), 0)


def _engine_name(it: Interp, c: CallIR) -> str | None:
    """``tg.set_backward_engine("gpt-4o")``, ``tg.BlackboxLLM("gpt-4o")``: an engine given by
    its model string (textgrad builds the engine itself)."""
    val = _engine_arg(c)
    if val is None or val.calls:
        return None
    found = callmodels.model_of_val(it, val)
    return found[0]


def _engine_of(it: Interp, c: CallIR) -> Origin | None:
    """The textgrad engine object a call is given (``engine=``, or its first argument)."""
    val = _engine_arg(c)
    if val is None:
        return None
    for n in val.names:
        for lb in it.read(n):
            if lb.kind == "chat" and lb.origin is not None and lb.origin.key in \
                    it.an.fw_objects and it.an.fw_objects[lb.origin.key].kind == "engine":
                return lb.origin
    return None


def _evaluator_optimizer(it: Interp, c: CallIR, key: tuple[str, str, int]) -> None:
    """mcp-agent's ``EvaluatorOptimizerLLM(optimizer=agent, evaluator=agent, llm_factory=F)``:
    both agents are turned into LLMs by the one factory, on one model; an evaluator given as
    an LLM object of its own is not reported."""
    factory = c.kw("llm_factory")
    ev = c.kw("evaluator")
    if factory is None or ev is None or len(factory.names) != 1 or ev.calls:
        return
    if any(lb.kind == "chat" for n in ev.names for lb in it.read(n)):
        return  # an LLM object built for the evaluator: its own model
    for sc in [*it.calls_in(ev), *(c for _, c in _global_calls(it, ev))]:
        row = CAT.object_row(qualify(sc.func, it.mod.facts.imports))
        if row is not None and row.kind == "client":
            return  # editor_llm = AnthropicAugmentedLLM(agent=editor): its own LLM
    model = f"{SYMBOLIC}llm_factory={factory.names[0]}"
    how = "one llm_factory makes the optimizer's and the evaluator's LLM"
    base = (it.path, it.fn.name, c.id)
    for role, k, what in ((Role.GENERATOR, (base[0], base[1], base[2] + _SECOND), "optimizer"),
                          (Role.EVALUATOR, base, "evaluator")):
        origin = Origin(it.path, c.pos, f"the {what} of `{c.func}()`", k)
        it.summary.n_llm += 1
        effective.record(it, c, c.func, role, (f"the `{what}=` of an EvaluatorOptimizerLLM",),
                         {}, model, how, (), origin, own_role=False)


_SECOND = effective.SECOND


def _attached_scorers(it: Interp, c: CallIR, row: ObjectRow, key: tuple[str, str, int]) -> None:
    """Evaluators attached to an object (``scorers: {quality: {scorer: strict}}``) judge each
    of its runs: the object's run, as the generator, and each scorer's judging of it, where
    the object is made."""
    val = call_arg(c, row.scorers)
    if val is None:
        return
    scorers = [lb for lb in it.eval(val) if lb.kind == "chat" and lb.origin is not None
               and lb.origin.key in it.an.framework]
    if not scorers:
        return
    info = it.an.fw_objects.get(key)
    named = (info.name if info is not None else "") or "the object"
    model, model_where = it.an.chats.get(key, (None, ""))
    short = c.func.rsplit(".", 1)[-1]
    # (of no named role: what its scorers judge, and nothing else's generator by place)
    run = effective.record_at(it, c, 1, f"run of the `{short}` object", Role.UNKNOWN,
                              ("the object its scorers judge",), {}, model, model_where)
    for i, lb in enumerate(sorted(scorers, key=lambda x: x.origin.key if x.origin else ())):
        assert lb.origin is not None
        s_model, s_where = it.an.chats.get(lb.origin.key, (None, ""))
        effective.record_at(it, c, i + 2, f"scorer attached to the `{short}` object",
                            Role.EVALUATOR,
                            (f"{lb.origin.what}, attached to {named} by its scorers",),
                            {"output": frozenset({L("gen", run)})}, s_model, s_where)


def _critic_of_other(it: Interp, c: CallIR) -> bool:
    """The module also answers with a ``BlackboxLLM`` on another engine (the model whose
    prompt is optimised): the backward engine critiques that model's outputs, not its own."""
    engine = _engine_arg(c)
    mine = set(engine.names) if engine is not None else set()
    for fn in it.mod.facts.functions.values():
        for call in fn.calls:
            if call.func.rsplit(".", 1)[-1] != "BlackboxLLM":
                continue
            val = call.kw("engine") or (call.args[0] if call.args else None)
            if val is not None and val.names and not set(val.names) & mine:
                return True
    return False


def _textgrad_engine_use(it: Interp, c: CallIR, key: tuple[str, str, int], role: Role) -> None:
    """textgrad runs an engine forward (``BlackboxLLM``, the optimizer) or as the critic
    (``set_backward_engine``): an effective call on that engine object, where it is set up."""
    engine = _engine_of(it, c)
    named = _engine_name(it, c)
    if engine is None and named is None:
        return
    model, model_where = (it.an.chats.get(engine.key, (None, "")) if engine is not None
                          else (named, "the engine named by its model string"))
    what = ("textgrad's backward engine writes the critique (the textual gradient)"
            if role is Role.EVALUATOR else f"textgrad `{c.func.rsplit('.', 1)[-1]}` runs the "
            "engine forward")
    origin = Origin(it.path, c.pos, f"`{c.func}()`", key)
    it.summary.n_llm += 1
    effective.record(it, c, c.func, role, (what,), {}, model, model_where, (), origin,
                     own_role=False, obj=engine)


def model_in(it: Interp, val: Val) -> tuple[str | None, str]:
    """A model string, or the ``model=`` of the client/model object built in the value
    (``OpenAIChatCompletionClient(model="gpt-4o")``, ``dspy.LM("openai/gpt-4o-mini")``)."""
    found = callmodels.model_of_val(it, val)
    if found[0] is not None:
        return found
    found = handle_model(it, val)
    if found[0] is not None:
        return found
    # no name: one variable (an environment variable, a settings field) is still one model
    return callmodels.symbolic_model(it, val)


def handle_model(it: Interp, val: Val, rows_only: bool = False) -> tuple[str | None, str]:
    """The model of a client/model object built in the value (``openai("gpt-4o")`` given
    to the Vercel AI SDK's ``generateText``); ``rows_only``: only objects the catalogue
    lists, not any call with a ``model=``."""
    work = [(it.fn, sc) for sc in it.calls_in(val)] + _global_calls(it, val)
    for i, (fn, sc) in enumerate(work):
        row = CAT.object_row(qualify(sc.func, it.mod.facts.imports)) or _provided(it, sc)
        if rows_only and (row is None or row.model is None):
            if row is None and i < 8:  # ``wrapModel(anthropic("claude-..."))``: a wrapper's
                work.extend((fn, fn.calls[cid]) for a in sc.args  # handle is the one wrapped
                            for cid in a.calls if cid < len(fn.calls))
            continue
        inner = model_value(row.model, sc) if row is not None and row.model is not None \
            else sc.kw("model") or sc.kw("model_name") or (sc.args[0] if sc.args else None)
        if inner is not None:
            found = callmodels.model_of_val(it, inner)
            if found[0] is not None:
                return found
    return _imported_handle(it, val, rows_only)


def _imported_handle(it: Interp, val: Val, rows_only: bool) -> tuple[str | None, str]:
    """``model: judgeModel`` with ``judgeModel = anthropic("claude-...")`` made in the module
    it is imported from: the handle's model, read there."""
    facts = it.mod.facts
    for n in val.names:
        root, _, rest = n.partition(".")
        if root in facts.constant_names or root not in facts.imports or \
                root in it.fn.locals or rest:
            continue
        found = it.an.tables.constant(facts.imports[root], it.path)
        if found is None or found[0] is it.mod:
            continue
        there = it.an.interp_of(found[0], found[1])
        if there is None:
            continue
        model = handle_model(there, Val(names=(found[1],)), rows_only)
        if model[0] is not None:
            return model[0], model[1] or f"{found[1]} in {found[0].path}"
    return None, ""


def _provided(it: Interp, sc: CallIR) -> ObjectRow | None:
    """The client row of a call on what a provider factory made (``const openai =
    createOpenAI({...})`` then ``openai("gpt-4o")`` or ``openai.chat("gpt-4o")``): the handle's
    model is the call's first argument."""
    head = Val(names=(sc.func.split(".")[0],))
    for made in [*it.calls_in(head), *(c for _, c in _global_calls(it, head))]:
        row = CAT.object_row(qualify(made.func, it.mod.facts.imports))
        if row is not None and row.kind == "provider":
            return row
    return None


def _global_calls(it: Interp, val: Val) -> list[tuple[FunctionIR, CallIR]]:
    """The calls a module-level name read in ``val`` was built with (``lm = dspy.LM(...)``),
    with the function (the module body) whose calls they are."""
    facts = it.mod.facts
    out: list[tuple[FunctionIR, CallIR]] = []
    for n in val.names:
        const = facts.constants.get(n)
        owner = facts.functions.get(facts.owners.get(n, ""))
        if const is not None and owner is not None:
            out.extend((owner, owner.calls[cid]) for cid in const.calls
                       if cid < len(owner.calls))
    return out


def _describe(it: Interp, c: CallIR, row: ObjectRow) -> FrameworkObject:
    name_val = call_arg(c, row.name) or settings_arg(it, c, row.name)
    name = name_val.text if name_val is not None and name_val.text else ""
    system = call_arg(c, row.instructions) or settings_arg(it, c, row.instructions)
    if system is not None and system.names:
        # read here, where its names mean something: the object may run in another module
        # (``reflect(judge_agent, ...)`` with the agent built by an imported factory)
        texts = tuple(t for t in callroles.prompt_texts(it, system, []) if t not in system.strings)
        if texts:
            system = replace(system, strings=(*system.strings, *texts))
    structured = row.always_structured or call_arg(c, row.structured) is not None
    short = c.func.rsplit(".", 1)[-1]
    reasoning = (row.reasoning.replace("{class}", short),) if row.reasoning else ()
    members: tuple[tuple[str, str, int], ...] = ()
    if row.members:
        keys: list[tuple[str, str, int]] = []
        for k in row.members:
            v = call_arg(c, (k,))
            # names and inline constructors alike (sub_agents=[writer, LoopAgent(...)])
            for lb in it.peek(v) if v is not None else ():
                if lb.kind == "chat" and lb.origin is not None:
                    keys.append(lb.origin.key)
        members = tuple(dict.fromkeys(keys))
    tv = call_arg(c, row.tools)
    tools = (tuple(tv.tool_names) + callmodels.const_tools(it, tv)) if tv is not None else ()
    keyword, grants = row.permissions
    mode = c.kw(keyword) if keyword else None
    if mode is not None:  # permission_mode="bypassPermissions": every tool runs unasked
        value = mode.text if mode.text is not None else callmodels.model_of_val(it, mode)[0]
        tools += dict(grants).get(value or "", ())
    if tv is not None and row.tool_instances:  # FileWriterTool(): the class says what it does
        tools += tuple(it.fn.calls[cid].func.rsplit(".", 1)[-1] for cid in tv.calls
                       if cid < len(it.fn.calls))
    return FrameworkObject(row.framework, row.kind, name, system, structured, tools, reasoning,
                           members)


def _crew_task(it: Interp, c: CallIR, key: tuple[str, str, int]) -> frozenset[L]:
    """A crewAI ``Task``: the crew runs it on its ``agent=``, with its description and the
    output of the tasks in ``context=`` as the prompt, so its construction is that agent's
    LLM call (the crew's ``kickoff`` only runs them in order)."""
    agent_val = c.kw("agent")
    chats = framework_chats(it, it.eval(agent_val)) if agent_val is not None else []
    if not chats:
        return frozenset()
    prompt_vals = [v for v in (c.kw("description"), c.kw("expected_output"), c.kw("context"))
                   if v is not None]
    inputs = {k: it.eval(v) for k, v in c.kwargs if k in ("description", "context")}
    return run_object(it, c, chats, agent_val, prompt_vals, inputs)


def _llm_judge(it: Interp, c: CallIR, key: tuple[str, str, int]) -> None:
    """A pydantic-evals ``LLMJudge``: the dataset runs it on every case's output, so its
    construction is the evaluator call (on its model or the default judge model)."""
    model, model_where = it.an.chats[key]
    origin = Origin(it.path, c.pos, f"`{c.func}()`", key)
    it.summary.n_llm += 1
    effective.record(it, c, c.func, Role.EVALUATOR, ("a pydantic-evals `LLMJudge`",), {},
                     model, model_where, (), origin, own_role=False)


def configure(it: Interp, qualified: str, c: CallIR) -> None:
    """``dspy.configure(lm=...)``: the LM every dspy module without its own runs on;
    ``tg.set_backward_engine(engine)``: that engine writes the critiques."""
    row = CAT.setter(qualified)
    if row is None:
        return
    framework = row.framework
    if row.hook == "textgrad-backward":
        if not _critic_of_other(it, c):
            _textgrad_engine_use(it, c, (it.path, it.fn.name, c.id), Role.EVALUATOR)
        return
    val = model_value(row.model, c)
    if val is None:
        return
    model, how = model_in(it, val)
    if model is not None:
        at = where(it.path, c.pos)
        it.an.set_state("ambient", framework, (
            model, f"{how + ', ' if how else ''}set as the ambient model at {at}"))


def set_lm(it: Interp, chats: list[L], lm: Val) -> None:
    """``module.set_lm(lm)``: that dspy module runs on its own LM, not the configured one
    (the frameworks whose catalogue file lists the method under ``set_model``)."""
    model = model_in(it, lm)
    if model[0] is None:
        return
    for lb in chats:
        fw = it.an.fw_objects[lb.origin.key].framework if lb.origin is not None else ""
        if fw and CAT.frameworks[fw].set_model:
            assert lb.origin is not None
            it.an.set_state("chats", lb.origin.key, (
                model[0], f"{model[1] + ', ' if model[1] else ''}set with `set_lm()` at "
                          f"{where(it.path, it.cur)}"))


def _block_model(it: Interp, run: CallIR, framework: str) -> tuple[str | None, str] | None:
    """``with dspy.context(lm=...):`` around the run (a catalogue ``context`` row of the
    object's framework): it uses that LM."""
    for cid, end in it.fn.withs:
        c = it.fn.calls[cid]
        if not (c.pos.cell == run.pos.cell and c.pos.line <= run.pos.line <= end):
            continue
        root = c.func.split(".")[0]
        target = it.mod.facts.imports.get(root, "")
        qualified = f"{target}{c.func[len(root):]}"
        row = CAT.setter(qualified, "context")
        val = model_value(row.model, c) if row is not None and row.framework == framework \
            else None
        if val is not None:
            found = model_in(it, val)
            if found[0] is not None:
                short = c.func.rsplit(".", 1)[-1]
                return found[0], (f"{found[1] + ', ' if found[1] else ''}set with "
                                  f"`{qualified.split('.')[0]}.{short}()` at "
                                  f"{where(it.path, c.pos)}")
    return None


# ---------------------------------------------------------------- runs


def framework_chats(it: Interp, labels: frozenset[L]) -> list[L]:
    """The framework objects among a value's labels."""
    return [lb for lb in labels if lb.kind == "chat" and lb.origin is not None
            and lb.origin.key in it.an.fw_objects]


def run_object(it: Interp, c: CallIR, chats: list[L], obj_val: Val | None,
               prompt_vals: list[Val], inputs: dict[str, frozenset[L]]) -> frozenset[L]:
    """One run of a framework object: an effective LLM call with the object's role and
    model; its result is generator or judge output that remembers the run (history)."""
    an = it.an
    chat, ctor = chat_of(chats)
    assert chat.origin is not None
    info = an.fw_objects[ctor.key]
    model, model_where = an.chats.get(chat.origin.key, (None, ""))
    if info.kind == "team" and model is None:
        models = {an.chats.get(k, (None, "")) for k in info.members}
        if len(models) == 1:
            model, model_where = models.pop()
    fw = CAT.frameworks[info.framework]
    run_cfg = call_arg(c, fw.run_config)
    if run_cfg is not None:  # a run-level config naming the model overrides the default
        found = model_in(it, run_cfg)
        defaults = {r.model.default for r in fw.objects if r.model is not None}
        if found[0] is not None and model in defaults:
            model, model_where = found
    if model is None and fw.context:
        model, model_where = _block_model(it, c, fw.id) or an.ambient.get(fw.id, (None, ""))
    elif model is None and info.framework in an.ambient:
        model, model_where = an.ambient[info.framework]
    if info.kind == "team":
        _team_members(it, c, info)
    names = [n for n in (obj_val.names if obj_val is not None else ())]
    if info.name:
        names.append("_".join(info.name.split()))
    role, evidence = callroles.role_of(it, c, None, Val(names=tuple(names)), info.system,
                                       prompt_vals)
    for labels in inputs.values():
        flows.note_slots(it, labels, "prompt", role)
    structured = info.structured or chat.flag
    reasoning = tuple(dict.fromkeys(info.reasoning + callroles.reasoning_evidence(
        it, c, model, info.system, prompt_vals)))
    it.summary.count_call(structured, reasoning,
                          None if callmodels.param_model(it, ctor) else model, model_where)
    origin = Origin(it.path, c.pos, f"`{c.func}()`", (it.path, it.fn.name, c.id), reasoning,
                    chat.origin if chat.origin is not ctor else None)
    an.set_state("fw_runs", origin.key, info.framework)
    effective.record(it, c, c.func, role, evidence, inputs, model, model_where, info.tools,
                     origin, own_role=False, obj=ctor)
    return effective.output(role, origin, structured)


def _team_members(it: Interp, c: CallIR, team: FrameworkObject) -> None:
    """A team run runs its members in turn, each seeing the others' turns: when a member's
    instructions make it a judge (a critic told to score the poem and say APPROVE), it and
    the other members are effective calls of their own, on their own models - the judge,
    and the generators whose turns it grades."""
    roles: list[tuple[int, tuple[str, str, int], FrameworkObject, Role, str]] = []
    for i, key in enumerate(_flat_members(it, team)[:12]):
        member = it.an.fw_objects.get(key)
        if member is None:
            continue
        role, evidence = (callroles.val_role(it, member.system, "instructions")
                          if member.system is not None else (Role.UNKNOWN, ()))
        roles.append((i, key, member, role, evidence[0] if evidence else ""))
    if not any(r is Role.EVALUATOR for *_, r, _ in roles):
        return
    for i, key, member, role, why in roles:
        if role is not Role.EVALUATOR:
            role, why = Role.GENERATOR, "its turns are what the team's judge grades"
        evidence = (why,)
        model, model_where = it.an.chats.get(key, (None, ""))
        name = f"the team member `{member.name}`" if member.name else "a team member"
        ckey = (it.path, it.fn.name, c.id + _SECOND * (i + 2))
        origin = Origin(it.path, c.pos, f"{name} in `{c.func}()`", ckey)
        it.summary.n_llm += 1
        effective.record(it, c, c.func, role, (f"{name}: {evidence[0]}",), {}, model,
                         model_where, member.tools, origin, own_role=False)


def _flat_members(it: Interp, team: FrameworkObject, depth: int = 0
                  ) -> list[tuple[str, str, int]]:
    """A team's members in turn order, a member team (ADK's LoopAgent inside a
    SequentialAgent) replaced by its own members."""
    out: list[tuple[str, str, int]] = []
    for key in team.members:
        member = it.an.fw_objects.get(key)
        if member is not None and member.kind == "team" and depth < 3:
            out.extend(_flat_members(it, member, depth + 1))
        else:
            out.append(key)
    return list(dict.fromkeys(out))


def run_entry(it: Interp, target: str, labels: frozenset[L]) -> None:
    """``root_agent = SequentialAgent(...)`` at module level (``target``, a name of the
    catalogue's ``entry_frameworks``): the framework's own CLI runs it (``adk run``), so a
    team there is run as if a runner were given it."""
    if it.fn.name != "<module>":
        return
    frameworks = CAT.entry_frameworks[target]
    chats = framework_chats(it, labels)
    inner = {k for lb in chats if lb.origin is not None
             for k in it.an.fw_objects[lb.origin.key].members}
    for lb in chats:
        assert lb.origin is not None
        info = it.an.fw_objects[lb.origin.key]
        if info.framework not in frameworks or info.kind != "team" or lb.origin.key in inner:
            continue
        path, fn, cid = lb.origin.key
        if (path, fn) == (it.path, it.fn.name) and cid < len(it.fn.calls):
            _team_members(it, it.fn.calls[cid], info)


def run_inputs(c: CallIR, args: list[frozenset[L]], kws: dict[str, frozenset[L]],
               skip_first: bool) -> tuple[list[Val], dict[str, frozenset[L]]]:
    """The prompt values and labelled inputs of a run (``Runner.run(agent, input)`` skips
    the agent)."""
    start = 1 if skip_first else 0
    prompts = list(c.args[start:]) + [v for k, v in c.kwargs if k in CAT.run_prompt]
    inputs = {f"#{i}": a for i, a in enumerate(args) if i >= start}
    inputs.update({k: v for k, v in kws.items() if k not in CAT.run_options})
    return prompts, inputs


def history(it: Interp, labels: frozenset[L], what: str, pos: Pos) -> frozenset[L] | None:
    """``result.to_input_list()``, ``result.messages``, ``team.messages``: the transcript of
    a generator's run (or of a team) is its context; None when no framework run is there."""
    out: set[L] = set()
    for lb in labels:
        o = lb.origin
        if o is None:
            continue
        run = lb.kind in ("gen", "llm") and o.key in it.an.fw_runs
        team = lb.kind == "chat" and o.key in it.an.fw_objects and \
            it.an.fw_objects[o.key].kind == "team"
        if run or team:
            origin = Origin(o.path, o.pos, f"the message history `{what}` of the run "
                            f"{o.what}", o.key)
            out.add(L("genctx", origin, name=what))
    return frozenset(out) if out else None


def field_access(it: Interp, lb: L, first: str) -> L | None:
    """A prediction's field (frameworks whose catalogue file lists ``fields``, dspy):
    ``reasoning``/``rationale`` is the chain of thought, any other field an extracted answer;
    None for labels that are not such run outputs."""
    o = lb.origin
    if o is None or lb.kind not in ("gen", "llm"):
        return None
    think = CAT.reasoning_fields.get(it.an.fw_runs.get(o.key, ""))
    if think is None:
        return None
    if first.lower() in think:
        return L(lb.kind, o, lb.idx, True, lb.name)
    return L("ans", o, name=first)
