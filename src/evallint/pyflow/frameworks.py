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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evallint.facts import Pos
from evallint.pyflow import callmodels, callroles, effective, flows
from evallint.pyflow.ir import CallIR, Val
from evallint.pyflow.providers import CHAT_BIND, CHAT_INVOKE, PYDANTIC_EVALS_DEFAULT
from evallint.pyflow.results import SYMBOLIC, where
from evallint.pyflow.summaries import L, Origin, chat_of
from evallint.roles import Role

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp

# What an agent without an explicit model runs on: the framework's default. Two such agents
# share it (EL301), whatever the default is in the installed release.
AGENTS_SDK_DEFAULT = "openai-agents-sdk-default"
AGENTS_SDK_DEFAULT_WHERE = ("no `model=` on the Agent: the Agents SDK default model "
                            "(OPENAI_DEFAULT_MODEL)")
# crewAI: an Agent without ``llm=`` runs on the crew's default LLM (OPENAI_MODEL_NAME)
CREWAI_DEFAULT = "crewai-default-llm"
CREWAI_DEFAULT_WHERE = "no `llm=` on the crewAI Agent: the default LLM (OPENAI_MODEL_NAME)"

DSPY_MODULES = frozenset({"Predict", "ChainOfThought", "ReAct", "ProgramOfThought",
                          "MultiChainComparison", "ChainOfThoughtWithHint", "Refine",
                          "BestOfN"})
DSPY_REASONING = frozenset({"ChainOfThought", "ReAct", "ProgramOfThought",
                            "ChainOfThoughtWithHint", "MultiChainComparison"})
AUTOGEN_ROOTS = ("autogen_agentchat", "autogen", "pyautogen", "ag2")
AUTOGEN_AGENTS = frozenset({"AssistantAgent", "ConversableAgent", "CodeExecutorAgent"})
AUTOGEN_TEAMS = frozenset({"RoundRobinGroupChat", "SelectorGroupChat", "Swarm",
                           "MagenticOneGroupChat", "GroupChat", "GroupChatManager"})
# textgrad: objects that run the engine forward (answer, rewrite), and the call that makes an
# engine the critic (the backward engine writes the textual gradient, a critique).
TEXTGRAD_FORWARD = frozenset({"BlackboxLLM", "TextualGradientDescent", "TGD", "LLMCall"})
# Functions that run an object passed as their first argument.
RUN_FUNCS = frozenset({"agents.Runner.run", "agents.Runner.run_sync",
                       "agents.Runner.run_streamed"})
# Methods that run a framework object, by framework.
RUN_METHODS: dict[str, frozenset[str]] = {
    "pydantic_ai": frozenset({"run", "run_sync", "run_stream"}),
    "autogen": frozenset({"run", "run_stream", "initiate_chat", "a_initiate_chat",
                          "generate_reply", "on_messages"}),
    "gemini": frozenset({"generate_content", "generate_content_async", "send_message"}),
    "dspy": frozenset({"forward", "acall", "__call__"}),
}
FRAMEWORK_METHODS = frozenset().union(*RUN_METHODS.values())
# A run result's transcript: methods and attributes that give the whole message history.
HISTORY_METHODS = frozenset({"to_input_list", "all_messages", "new_messages"})
# methods of an object that may be a chat model or a framework object (``self.agent.run``)
OBJECT_METHODS = frozenset(CHAT_INVOKE | CHAT_BIND) | FRAMEWORK_METHODS | HISTORY_METHODS
HISTORY_ATTRS = frozenset({"chat_history", "messages", "inner_messages", "new_items",
                           "chat_messages"})
THINK_FIELDS = frozenset({"reasoning", "rationale", "thought", "thoughts", "trajectory"})
PROMPT_KWARGS = ("input", "task", "message", "contents", "prompt", "user_prompt")


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


def object_kind(qualified: str) -> tuple[str, str] | None:
    """``agents.Agent`` -> ("agents", "agent"); None for anything that is not a modelled
    framework object's constructor."""
    parts = qualified.split(".")
    root, last = parts[0], parts[-1]
    if root == "agents" and last == "Agent":
        return "agents", "agent"
    if root == "pydantic_ai" and last == "Agent":
        return "pydantic_ai", "agent"
    if root == "dspy" and last in DSPY_MODULES:
        return "dspy", "module"
    if root in AUTOGEN_ROOTS and last in AUTOGEN_AGENTS:
        return "autogen", "agent"
    if root in AUTOGEN_ROOTS and last in AUTOGEN_TEAMS:
        return "autogen", "team"
    if root == "crewai" and last in ("Agent", "Task"):
        return "crewai", last.lower()
    if root == "pydantic_evals" and last == "LLMJudge":
        return "pydantic_evals", "judge"
    if qualified.startswith("google.generativeai.") and last == "GenerativeModel":
        return "gemini", "model"
    if root == "mcp_agent" and last == "EvaluatorOptimizerLLM":
        return "mcp_agent", "evalopt"
    if root == "textgrad" and last == "get_engine":
        return "textgrad", "engine"
    if root == "textgrad" and last in TEXTGRAD_FORWARD:
        return "textgrad", "forward"
    return None


def is_configure(qualified: str) -> str | None:
    """The call that sets a framework's ambient model: ``dspy.configure(lm=...)``,
    ``pydantic_evals...set_default_judge_model(...)``, ``textgrad.set_backward_engine(...)``."""
    if qualified in ("dspy.configure", "dspy.settings.configure"):
        return "dspy"
    if qualified == "textgrad.set_backward_engine":
        return "textgrad"
    if qualified.split(".")[0] == "pydantic_evals" and qualified.endswith(
            "set_default_judge_model"):
        return "pydantic_evals"
    return None


def gemini_call(qualified: str, c: CallIR) -> bool:
    """``client.models.generate_content(model=..., contents=...)`` (google-genai)."""
    return qualified.split(".")[0] == "google" and c.func.endswith(
        "models.generate_content") and c.kw("model") is not None


# ---------------------------------------------------------------- objects


def make_object(it: Interp, c: CallIR, framework: str, kind: str, mod_path: str,
                fn_name: str) -> frozenset[L]:
    """A framework object's constructor: a chat-object label on its model."""
    key = (mod_path, fn_name, c.id)
    an = it.an
    if key not in an.chats:
        an.set_state("chats", key, _object_model(it, c, framework, kind))
        an.set_state("fw_objects", key, _describe(it, c, framework, kind))
    if framework == "pydantic_evals" and key[:2] == (it.path, it.fn.name):
        _llm_judge(it, c, key)  # an effective call, on every pass as any other call
    if framework == "mcp_agent" and key[:2] == (it.path, it.fn.name):
        _evaluator_optimizer(it, c, key)
    if framework == "textgrad" and kind == "forward" and key[:2] == (it.path, it.fn.name):
        _textgrad_engine_use(it, c, key, Role.GENERATOR)
    if framework == "crewai" and kind == "task":
        return _crew_task(it, c, key) if key[:2] == (it.path, it.fn.name) else frozenset()
    what = f"the {_LABEL.get(framework, framework)} `{c.func.rsplit('.', 1)[-1]}`"
    name = an.fw_objects[key].name
    return frozenset({L("chat", Origin(mod_path, c.pos, what + (f" `{name}`" if name else ""),
                                       key))})


_LABEL = {"agents": "Agents SDK", "pydantic_ai": "pydantic-ai", "dspy": "dspy",
          "autogen": "autogen", "pydantic_evals": "pydantic-evals", "gemini": "Gemini",
          "textgrad": "textgrad", "mcp_agent": "mcp-agent", "crewai": "crewAI"}


def _object_model(it: Interp, c: CallIR, framework: str, kind: str) -> tuple[str | None, str]:
    """The model an object names, or the framework's default; (None, "") when it has none
    of its own (a dspy module runs on the configured LM, a team on its members')."""
    if framework == "agents":
        val = c.kw("model")
        if val is None:
            return AGENTS_SDK_DEFAULT, AGENTS_SDK_DEFAULT_WHERE
        return _model_in(it, val)
    if framework == "pydantic_ai":
        val = c.kw("model") or (c.args[0] if c.args else None)
        return _model_in(it, val) if val is not None else (None, "")
    if framework == "autogen" and kind == "agent":
        val = c.kw("model_client") or c.kw("llm_config")
        return _model_in(it, val) if val is not None else (None, "")
    if framework == "crewai":
        if kind != "agent":
            return None, ""
        val = c.kw("llm")
        return _model_in(it, val) if val is not None else (CREWAI_DEFAULT, CREWAI_DEFAULT_WHERE)
    if framework == "pydantic_evals":
        val = c.kw("model")
        if val is not None:
            return _model_in(it, val)
        ambient = it.an.ambient.get("pydantic_evals")
        if ambient is not None:
            return ambient
        return PYDANTIC_EVALS_DEFAULT, ("no `model=` on the LLMJudge: pydantic-evals' default "
                                        "judge model")
    if framework == "gemini":
        val = c.kw("model_name") or c.kw("model") or (c.args[0] if c.args else None)
        return _model_in(it, val) if val is not None else (None, "")
    if framework == "textgrad" and kind == "engine":
        val = c.kw("engine_name") or c.kw("model") or (c.args[0] if c.args else None)
        return _model_in(it, val) if val is not None else (None, "")
    if framework == "textgrad":
        engine = _engine_of(it, c)
        return it.an.chats.get(engine.key, (None, "")) if engine is not None else (None, "")
    return None, ""


def _engine_of(it: Interp, c: CallIR) -> Origin | None:
    """The textgrad engine object a call is given (``engine=``, or its first argument)."""
    val = c.kw("engine") or c.kw("backward_engine") or (c.args[0] if c.args else None)
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
    model = f"{SYMBOLIC}llm_factory={factory.names[0]}"
    how = "one llm_factory makes the optimizer's and the evaluator's LLM"
    base = (it.path, it.fn.name, c.id)
    for role, k, what in ((Role.GENERATOR, (base[0], base[1], base[2] + _SECOND), "optimizer"),
                          (Role.EVALUATOR, base, "evaluator")):
        origin = Origin(it.path, c.pos, f"the {what} of `{c.func}()`", k)
        it.summary.n_llm += 1
        effective.record(it, c, c.func, role, (f"the `{what}=` of an EvaluatorOptimizerLLM",),
                         {}, model, how, (), origin, own_role=False)


_SECOND = 1 << 20  # a second effective call at one call site (its own origin key)


def _critic_of_other(it: Interp, c: CallIR) -> bool:
    """The module also answers with a ``BlackboxLLM`` on another engine (the model whose
    prompt is optimised): the backward engine critiques that model's outputs, not its own."""
    engine = c.kw("engine") or c.kw("backward_engine") or (c.args[0] if c.args else None)
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
    if engine is None:
        return
    model, model_where = it.an.chats.get(engine.key, (None, ""))
    what = ("textgrad's backward engine writes the critique (the textual gradient)"
            if role is Role.EVALUATOR else f"textgrad `{c.func.rsplit('.', 1)[-1]}` runs the "
            "engine forward")
    origin = Origin(it.path, c.pos, f"`{c.func}()`", key)
    it.summary.n_llm += 1
    effective.record(it, c, c.func, role, (what,), {}, model, model_where, (), origin,
                     own_role=False, obj=engine)


def _model_in(it: Interp, val: Val) -> tuple[str | None, str]:
    """A model string, or the ``model=`` of the client/model object built in the value
    (``OpenAIChatCompletionClient(model="gpt-4o")``, ``dspy.LM("openai/gpt-4o-mini")``)."""
    found = callmodels.model_of_val(it, val)
    if found[0] is not None:
        return found
    for sc in [*it.calls_in(val), *_global_calls(it, val)]:
        inner = sc.kw("model") or sc.kw("model_name") or (sc.args[0] if sc.args else None)
        if inner is not None:
            found = callmodels.model_of_val(it, inner)
            if found[0] is not None:
                return found
    return None, ""


def _global_calls(it: Interp, val: Val) -> list[CallIR]:
    """The calls a module-level name read in ``val`` was built with (``lm = dspy.LM(...)``)."""
    facts = it.mod.facts
    out: list[CallIR] = []
    for n in val.names:
        const = facts.constants.get(n)
        owner = facts.functions.get(facts.owners.get(n, ""))
        if const is not None and owner is not None:
            out.extend(owner.calls[cid] for cid in const.calls if cid < len(owner.calls))
    return out


def _describe(it: Interp, c: CallIR, framework: str, kind: str) -> FrameworkObject:
    name_val = c.kw("name") or (c.args[0] if framework == "autogen" and c.args else None)
    name = name_val.text if name_val is not None and name_val.text else ""
    system = (c.kw("instructions") or c.kw("system_message") or c.kw("system_prompt")
              or c.kw("rubric") or c.kw("system_instruction"))
    structured = c.kw("output_type") is not None or c.kw("result_type") is not None
    reasoning: tuple[str, ...] = ()
    members: tuple[tuple[str, str, int], ...] = ()
    if framework == "dspy":
        system = c.kw("signature") or (c.args[0] if c.args else None)
        structured = True  # a dspy prediction's fields are parsed by the adapter
        short = c.func.rsplit(".", 1)[-1]
        if short in DSPY_REASONING:
            reasoning = (f"`dspy.{short}` adds a reasoning field to its prediction",)
    if kind == "team":
        vals = [v for v in (c.kw("participants"), c.kw("agents"), *c.args[:1]) if v is not None]
        keys: list[tuple[str, str, int]] = []
        for v in vals:
            for n in v.names:
                for lb in it.read(n):
                    if lb.kind == "chat" and lb.origin is not None:
                        keys.append(lb.origin.key)
        members = tuple(dict.fromkeys(keys))
    tv = c.kw("tools")
    tools = (tuple(tv.tool_names) + callmodels.const_tools(it, tv)) if tv is not None else ()
    if framework == "crewai" and kind == "agent":
        # role= names the agent ("Senior Editor"); goal and backstory are its instructions;
        # tools are instances (FileWriterTool()): their class names say what they do
        role_val = c.kw("role")
        name = role_val.text if role_val is not None and role_val.text else name
        system = c.kw("backstory") or c.kw("goal") or system
        if tv is not None:
            tools += tuple(it.fn.calls[cid].func.rsplit(".", 1)[-1] for cid in tv.calls
                           if cid < len(it.fn.calls))
    return FrameworkObject(framework, kind, name, system, structured, tools, reasoning, members)


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


def configure(it: Interp, framework: str, c: CallIR) -> None:
    """``dspy.configure(lm=...)``: the LM every dspy module without its own runs on;
    ``tg.set_backward_engine(engine)``: that engine writes the critiques."""
    if framework == "textgrad":
        if not _critic_of_other(it, c):
            _textgrad_engine_use(it, c, (it.path, it.fn.name, c.id), Role.EVALUATOR)
        return
    val = c.kw("lm") or c.kw("model") or (c.args[0] if c.args else None)
    if val is None:
        return
    model, how = _model_in(it, val)
    if model is not None:
        at = where(it.path, c.pos)
        it.an.set_state("ambient", framework, (
            model, f"{how + ', ' if how else ''}set as the ambient model at {at}"))


def set_lm(it: Interp, chats: list[L], lm: Val) -> None:
    """``module.set_lm(lm)``: that dspy module runs on its own LM, not the configured one."""
    model = _model_in(it, lm)
    if model[0] is None:
        return
    for lb in chats:
        if lb.origin is not None and it.an.fw_objects[lb.origin.key].framework == "dspy":
            it.an.set_state("chats", lb.origin.key, (
                model[0], f"{model[1] + ', ' if model[1] else ''}set with `set_lm()` at "
                          f"{where(it.path, it.cur)}"))


def _dspy_context(it: Interp, run: CallIR) -> tuple[str | None, str] | None:
    """``with dspy.context(lm=...):`` around the run: it uses that LM."""
    for cid, end in it.fn.withs:
        c = it.fn.calls[cid]
        if not (c.pos.cell == run.pos.cell and c.pos.line <= run.pos.line <= end):
            continue
        root = c.func.split(".")[0]
        target = it.mod.facts.imports.get(root, "")
        if f"{target}{c.func[len(root):]}" == "dspy.context" and c.kw("lm") is not None:
            found = _model_in(it, c.kw("lm") or Val())
            if found[0] is not None:
                return found[0], (f"{found[1] + ', ' if found[1] else ''}set with "
                                  f"`dspy.context()` at {where(it.path, c.pos)}")
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
    run_cfg = c.kw("run_config")
    if run_cfg is not None and info.framework == "agents":
        found = _model_in(it, run_cfg)
        if found[0] is not None and model == AGENTS_SDK_DEFAULT:
            model, model_where = found
    if model is None and info.framework == "dspy":
        model, model_where = _dspy_context(it, c) or an.ambient.get("dspy", (None, ""))
    elif model is None and info.framework in an.ambient:
        model, model_where = an.ambient[info.framework]
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
    it.summary.count_call(structured, reasoning, model, model_where)
    origin = Origin(it.path, c.pos, f"`{c.func}()`", (it.path, it.fn.name, c.id), reasoning,
                    chat.origin if chat.origin is not ctor else None)
    an.set_state("fw_runs", origin.key, info.framework)
    effective.record(it, c, c.func, role, evidence, inputs, model, model_where, info.tools,
                     origin, own_role=False, obj=ctor)
    if role is Role.EVALUATOR:
        return frozenset({L("judge", origin, flag=structured)})
    return frozenset({L("gen" if role is Role.GENERATOR else "llm", origin)})


def run_inputs(c: CallIR, args: list[frozenset[L]], kws: dict[str, frozenset[L]],
               skip_first: bool) -> tuple[list[Val], dict[str, frozenset[L]]]:
    """The prompt values and labelled inputs of a run (``Runner.run(agent, input)`` skips
    the agent)."""
    start = 1 if skip_first else 0
    prompts = list(c.args[start:]) + [v for k, v in c.kwargs if k in PROMPT_KWARGS]
    inputs = {f"#{i}": a for i, a in enumerate(args) if i >= start}
    inputs.update({k: v for k, v in kws.items()
                   if k not in ("model", "run_config", "context", "max_turns", "config",
                                "hooks", "deps", "cancellation_token", "termination_condition",
                                "output_type", "usage_limits")})
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
    """A dspy prediction's field: ``reasoning``/``rationale`` is the chain of thought, any
    other field an extracted answer; None for labels that are not dspy run outputs."""
    o = lb.origin
    if o is None or lb.kind not in ("gen", "llm") or it.an.fw_runs.get(o.key) != "dspy":
        return None
    if first.lower() in THINK_FIELDS:
        return L(lb.kind, o, lb.idx, True, lb.name)
    return L("ans", o, name=first)
