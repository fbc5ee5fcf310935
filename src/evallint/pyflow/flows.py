"""Where labels come from and where they must not go: the generator's context (its system
prompt and message history, I2) is marked at the generator's call, and a labelled value reaching
an evaluator's or a generator's input becomes a flow (EL201, EL202, EL203).

The functions here take the interpreter (:class:`evallint.pyflow.interp.Interp`) as their first
argument.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from evallint.facts import Pos
from evallint.pyflow.cues import name_tokens
from evallint.pyflow.ir import Assign, CallIR, Val, walk_steps
from evallint.pyflow.providers import CAT
from evallint.pyflow.results import Flow
from evallint.pyflow.summaries import L, Origin, ordered
from evallint.roles import EVALUATOR_WORDS, LABEL_TOKENS, Role, singular

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp


CTX_TOKENS = {"steps", "intermediate", "trace", "scratchpad", "trajectory", "transcript",
              "history", "toolcalls", "tool", "chain"}

# A name whose last word (an English compound's head) is one of these holds a document the
# words before it describe, not a run's working: ``chain_of_thought_paper``, ``trace_spec``.
_DOCUMENT_HEADS = frozenset({"paper", "pdf", "document", "doc", "article", "book", "manual",
                             "spec", "guide", "tutorial"})

_PATH_TOKENS = frozenset({"dir", "dirs", "path", "paths", "folder", "file", "filename",
                          "dirname", "root"})


def note_slots(it: Interp, labels: frozenset[L], slot: str, role: Role) -> None:
    if not slot:
        return
    for lb in labels:
        if lb.kind in ("param", "psan"):
            it.slots.setdefault(lb.idx, set()).add(slot)
            if role is not Role.UNKNOWN and slot in ("prompt", "system"):
                it.sinks.setdefault(lb.idx, set()).add(role.value)


def mark_genctx(it: Interp, c: CallIR, system: Val | None, messages: Val | None,
                role: Role) -> None:
    it.touched = True
    for what, val in (("system prompt", system), ("message history", messages)):
        if val is None or val.calls or len(val.names) != 1:
            continue
        name = val.names[0]
        if what == "message history" and val.ref is None:
            continue
        if set(name_tokens(name.rsplit(".", 1)[-1])) & _PATH_TOKENS:
            continue  # a folder or file the helper reads its prompt from, not the prompt
        genctx_label(it, c, name, what)


# The graph state keys that hold a conversation (LangGraph's ``MessagesState``): run on one,
# a generator node is run on its message history.
_HISTORY_KEYS = frozenset({"messages", "history", "conversation", "chat"})


def state_param(it: Interp) -> str | None:
    """The graph state a node function reads, in a module that uses LangGraph or LangChain:
    its first parameter (after ``self``)."""
    if it.state_arg is False:
        params = it.fn.params[1:] if it.fn.is_method else it.fn.params
        it.state_arg = params[0].name if params and it.fn.name != "<module>" and \
            _uses_graphs(it) else None
    return it.state_arg if isinstance(it.state_arg, str) else None


def _uses_graphs(it: Interp) -> bool:
    """The module uses LangGraph or LangChain, or imports a module that does (once per
    module while the tables stand)."""
    key = it.path
    found = it.an.graph_modules.get(key)
    if found is None:
        imports = it.mod.facts.imports.values()
        found = _graph_module(imports) or any(
            (m := it.an.tables.module(v, it.path) or it.an.tables.owner(v, it.path))
            is not None and _graph_module(m.facts.imports.values()) for v in imports)
        it.an.graph_modules[key] = found
    return found


def _graph_module(imports: Iterable[str]) -> bool:
    """A module that uses LangGraph or LangChain (the other way to know a node function:
    it imports the module that builds the graph)."""
    return any(v.startswith(("langgraph", "langchain")) for v in imports)


def state_key(it: Interp, name: str) -> str | None:
    """The history key of the graph state that ``name`` reads as a whole or sliced
    (``state["messages"]``, ``state["messages"][1:]``; not one message of it)."""
    parts = name.split(".")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "[]"):
        return None
    if not set(name_tokens(parts[1])) & _HISTORY_KEYS or parts[0] != state_param(it):
        return None
    return parts[1]


def state_scope(it: Interp) -> str:
    """The graph state a node's state parameter is annotated with, by its qualified name
    (``state: typeof JokeState.State``, ``state: ReviewState``): nodes of two graphs that both
    name a key ``joke`` read and write different states. Empty when it is not annotated."""
    name = state_param(it)
    p = next((p for p in it.fn.params if p.name == name), None) if name else None
    if p is None or not p.annotation:
        return ""
    root, _, rest = p.annotation.partition(".")
    base = it.mod.facts.imports.get(root) or f"{it.mod.name}.{root}"
    return f"{base}.{rest}" if rest else base


def state_written(it: Interp, key: str) -> frozenset[L]:
    """What the graph's nodes wrote to ``key`` of the state this node reads: its own state's
    and an unannotated writer's; a node whose state is not annotated reads every state's."""
    outs = it.an.state_outputs
    scope = state_scope(it)
    if scope:
        found = outs.get(f"{scope}|{key}", frozenset()) | outs.get(key, frozenset())
        return found or outs.get(f"{scope}|*", frozenset()) | outs.get("*", frozenset())
    found = frozenset().union(*(v for k, v in outs.items() if k.rpartition("|")[2] == key))
    return found or frozenset().union(*(v for k, v in outs.items()
                                        if k.rpartition("|")[2] == "*"))


def note_state_outputs(it: Interp, value: Val, whole: frozenset[L]) -> None:
    """A node returns ``{"draft": reply.content}``: the LLM output it writes to a state key
    is what another node reading that key reads (roles and pairs by data flow). A node that
    returns an LLM's parsed output as its whole update (``return JSON.parse(reply)``) writes
    its keys, whichever they are (``*``: a key no node names)."""
    items = [(k, it.peek(v)) for k, v in value.keys] if value.keys else \
        [("*", whole)] if value.calls else []
    scope = state_scope(it) if items else ""
    for key, read in items:
        key = f"{scope}|{key}" if scope else key
        labels = frozenset(lb for lb in read if lb.kind in ("gen", "llm", "ans", "judge")
                           and lb.origin is not None and lb.origin.key[:2] == (it.path, it.fn.name))
        if not labels:
            continue
        old = it.an.state_outputs.get(key, frozenset())
        if not labels <= old:
            it.an.set_state("state_outputs", key, old | labels)


def mark_state(it: Interp, c: CallIR, vals: list[Val]) -> None:
    """A call of no evaluator role run on a history key of the graph state (``llm.invoke(
    state["messages"])``): that key is the generator's message history for every node."""
    names = [n for val in vals for n in val.names]
    # (through a local it was copied to: ``const msgs = state.messages.map(...)``)
    names += [n for name in list(names) if "." not in name
              for v in it.local_vals.get(name, ()) for n in v.names]
    for name in names:
        key = state_key(it, name)
        if key is None or key in it.an.state_history:
            continue
        o = Origin(it.path, c.pos, f"the generator's message history, the graph state's "
                   f"`{key}`", (it.path, it.fn.name, c.id))
        it.an.set_state("state_history", key, L("genctx", o, name=f"state `{key}`"))


def genctx_label(it: Interp, c: CallIR, name: str, what: str) -> None:
    """Label ``name`` (a local, or a module-level name for every function) as the
    generator's ``what`` given to call ``c``."""
    o = Origin(it.path, c.pos, f"the generator's {what} `{name}`",
               (it.path, it.fn.name, c.id))
    if name in it.labels or name in it.fn.locals:
        it.labels[name] = it.labels.get(name, frozenset()) | {L("genctx", o, name=name)}
    else:
        it.an.set_genctx(it.path, name, L("genctx", o, name=name))


def mark_system_slot(it: Interp, c: CallIR, messages: list[Val]) -> None:
    """Names in the system slot of a generator's message list (``{"role": "system",
    "content": RULES}``, ``SystemMessage(content=...)``, ``("system", RULES)``, a module's
    ``SYSTEM = SystemMessage(...)``) are the generator's system prompt (I2)."""
    names: list[str] = []
    for val in messages:
        names += val.system
        names += [n for n in val.names if system_message_const(it, n)]
    for name in dict.fromkeys(names):
        if "." in name:
            continue
        it.touched = True
        genctx_label(it, c, name, "system prompt")


def system_message_const(it: Interp, name: str) -> bool:
    """Is the module-level ``name`` a system message (``SystemMessage(...)``)?"""
    val = it.mod.facts.constants.get(name)
    if val is None or not val.calls:
        return False
    owner = it.mod.facts.functions.get(it.mod.facts.owners.get(name, ""))
    return owner is not None and any(
        cid < len(owner.calls) and owner.calls[cid].func.rsplit(".", 1)[-1]
        in ("SystemMessage", "SystemMessagePromptTemplate") for cid in val.calls)


def sink_check(it: Interp, c: CallIR, role: Role, inputs: dict[str, frozenset[L]],
               sink: str) -> None:
    it.touched = True
    if not it.report:
        return
    if role is Role.EVALUATOR:
        for arg, labels in inputs.items():
            for lb in ordered(labels):
                if lb.kind in ("gen", "llm"):
                    flow(it, "EL201", c.pos, f"the evaluator call {sink}", lb, arg)
                elif lb.kind == "genctx":
                    flow(it, "EL202", c.pos, f"the evaluator call {sink}", lb, arg)
        ctx_names(it, c, sink)
    elif role is Role.GENERATOR:
        for arg, labels in inputs.items():
            for lb in ordered(labels):
                if lb.kind == "rubric":
                    flow(it, "EL203", c.pos, f"the generator call {sink}", lb, arg)


def ctx_names(it: Interp, c: CallIR, sink: str) -> None:
    vals = [v for k, v in c.kwargs if k not in CAT.non_content] + list(c.args)
    params = {p.name for p in it.fn.params}
    # a record handed whole to a project helper (``score({ trace })``): the helper reports
    # the fields of it its own evaluator reads
    kind, qual = it.resolve(c.func)
    helper = kind == "fn" or (kind == "ext" and it.an.tables.function_name(qual, it.path)
                              is not None)
    seen: set[int] = set()
    while vals:
        v = vals.pop()
        if any(lb.kind == "chat" and lb.origin is not None and lb.origin.key in it.an.framework
               for lb in it.peek(v)):
            continue  # the judges themselves (metrics=[...]), not what they are shown
        for cid in v.calls:
            if cid not in seen and cid < len(it.fn.calls):
                seen.add(cid)
                inner = it.fn.calls[cid]
                vals.extend(inner.args)
                vals.extend(x for _, x in inner.kwargs)
        for n in v.names:
            if (n.split(".")[0] in params or helper) and "." not in n:
                continue  # reported where the caller passes it, or where the helper reads it
            tokens = set(name_tokens(n))
            hit = tokens & CTX_TOKENS
            last = singular(list(name_tokens(n)))[-1:]
            if hit and last and last[0] in LABEL_TOKENS:
                continue  # a label of the trace (``trace.id``, ``steps.length``), not its content
            if "tool" in hit and not tokens & {"calls", "trace", "results", "uses"}:
                hit.discard("tool")
            if "chain" in hit and "thought" not in tokens:
                hit.discard("chain")
            if hit and last and last[0] in _DOCUMENT_HEADS:
                continue  # ``chainOfThoughtPaper``: a document about it (the head names it)
            if hit and (tokens & EVALUATOR_WORDS or tokens & {"reflection", "reflect"}):
                continue  # the evaluator's own conversation (``critic_history``)
            if hit and own_messages(it, c, n):
                continue
            if hit and hit <= {"history", "transcript"} and n.split(".")[0] in params and \
                    it.own_role is Role.EVALUATOR:
                continue  # a conversation evaluator: the chat it is given is its subject
            if hit:
                o = Origin(it.path, c.pos, f"`{n}`", (it.path, it.fn.name, -2))
                flow(it, "EL202", c.pos, f"the evaluator call {sink}",
                     L("genctx", o, name=n), n)


def own_messages(it: Interp, c: CallIR, name: str) -> bool:
    """A message list this function built itself from literals and parameters, that
    holds no other LLM call's output: the evaluator's own conversation, not a trace."""
    if "." in name or name in (p.name for p in it.fn.params):
        return False
    built = [st.value for st in walk_steps(it.fn.body)
             if isinstance(st, Assign) and name in st.targets]
    if not built or any(cid != c.id for v in built for cid in v.calls):
        return False  # built from another call's result (a run, a trace): not its own
    key = (it.path, it.fn.name, c.id)
    return not any(lb.kind in ("gen", "llm", "ans", "genctx") and lb.origin is not None
                   and lb.origin.key != key for lb in it.read(name))


def template_sink(it: Interp, c: CallIR, args: list[frozenset[L]],
                  kws: dict[str, frozenset[L]]) -> None:
    it.touched = True
    inputs = {f"#{i}": a for i, a in enumerate(args)}
    inputs.update(kws)
    if not it.report:
        for labels in inputs.values():
            for lb in labels:
                if lb.kind in ("param", "psan"):
                    it.sinks.setdefault(lb.idx, set()).add("evaluator")
        return
    for arg, labels in inputs.items():
        for lb in labels:
            if lb.kind in ("gen", "llm"):
                flow(it, "EL201", c.pos, "the evaluator template render "
                     f"`{c.func.replace('<expr>', '…')}()`", lb, arg)
            elif lb.kind == "genctx":
                flow(it, "EL202", c.pos, "the evaluator template render "
                     f"`{c.func.replace('<expr>', '…')}()`", lb, arg)


def flow(it: Interp, code: str, pos: Pos, sink: str, lb: L, arg: str) -> None:
    o = lb.origin
    key = (code, o.key if o else None, lb.name)
    if key in it.flows:
        return
    related: list[tuple[str, Pos, str]] = []
    inner = o.inner if o else None
    while inner is not None:
        related.append((inner.path, inner.pos, f"inside {inner.what}"))
        inner = inner.inner
    reasoning = o.reasoning if o and code == "EL201" else ()
    if lb.kind in ("gen", "llm") and lb.flag:
        reasoning = ("the value is the thinking/reasoning content itself", *reasoning)
    detail = arg if not arg.startswith("#") else ""
    it.flows[key] = Flow(code, it.path, pos, sink, o, detail, reasoning, lb.name,
                       (), tuple(related))
    it.an.add_result("flows", it.flows[key])
