"""The role of an LLM call (generator, evaluator or neither) and the evidence for it: the
prompt texts it is given, its model, the names its result is stored under, and the function's
own name.

The functions here take the interpreter (:class:`evallint.pyflow.interp.Interp`) as their first
argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evallint.models import is_reasoning_model
from evallint.pyflow import closures
from evallint.pyflow.cues import makes_judge, makes_maker
from evallint.pyflow.ir import Assign, CallIR, FunctionIR, If, Return, Step, Val
from evallint.pyflow.relevance import PROMPT_HEADS, function_role
from evallint.pyflow.summaries import L, Module
from evallint.roles import Role, foreign_retrieval, name_tokens, role_from_name

if TYPE_CHECKING:
    from evallint.pyflow.analysis import Analysis
    from evallint.pyflow.interp import Interp

_REASON_TEXT = re.compile(
    r"step[- ]by[- ]step|<(?:thinking|think|scratchpad|reasoning|thoughts?)>|"
    r"chain[- ]of[- ]thought(?![- ](?:prompting|paper|method|technique))|think (?:it )?through|"
    r"reason (?:it )?through|show your (?:work|reasoning)|explain your reasoning|"
    r"think carefully|reason carefully|before answering, think",
    re.IGNORECASE,
)

# A call that rewrites the judge's prompt or writes evaluations: its prompt holds the rubric
# as the material it works on; it is neither the loop's generator nor its evaluator.
_META_TEXT = re.compile(
    r"\b(?:optimi[sz]e|rewrite|re-write|improve|condense|refine|shorten|revise|edit)\s+"
    r"(?:(?:a|an|the|this|that|given|following|existing|current|original|above|our|my)\s+)"
    r"{0,3}(?:llm-as-a-judge|judge|evaluation|evaluator|eval|grading|grader|scoring|rubric)\s+"
    r"prompts?\b|\b(?:write|generate|create|propose|draft|suggest)\s+(?:(?:a|an|the|some|"
    r"new|more|good|specific|\d+)\s+)*(?:assertions|evals|test cases|rubrics?|(?:evaluation|"
    r"grading|scoring) criteria|(?:evaluation|judge|grading) prompts?)\b"
    # a call that only restates given data in a shape ("Return the following data as a
    # structured object"): a formatter, neither side of the loop
    r"|^[^\S\n]*(?:return|format|convert|restate|output)\s+the\s+following\s+(?:data|information|"
    r"results?|values?|fields?)\s+(?:as|in|into)\s+(?:an?\s+)?(?:structured\s+object|json|"
    r"object|table|yaml)\b",
    re.IGNORECASE | re.MULTILINE,
)

# What an evaluator-looking call judges when it is not the generator's output: the user's
# input (a guardrail), a retrieved document, a human's answer (a tutor grading a student), or
# where a request goes (a router).
_INPUT_SUBJECT = re.compile(
    r"\b(?:user|customer|human)(?:'s)? (?:message|input|query|request|prompt)s?\b|"
    r"\bprompt[- ]injection|\bjailbreak|\bretrieved (?:document|doc|context|passage|chunk)s?\b|"
    r"\broute (?:the|this|each|a) (?:request|query|question|message)\b|\bwhich (?:agent|tool|"
    r"expert|department|team|worker|node|route) (?:should|to)\b|\bclassify the (?:user's )?"
    r"(?:intent|request|query)\b"
    # a retrieval grader: "how relevant is the following document to the query"
    r"|\brelevan(?:t|ce|cy)\s+(?:(?:is|are|of)\s+)?(?:the|this|each)\s+(?:following\s+|given\s+)?"
    r"(?:document|doc|passage|chunk|search\s+result)s?\b",
    re.IGNORECASE,
)

# A router or orchestrator: its output picks the next step, agent or tool; reading the other
# calls' outputs to decide where to go is not grading them.
_ROUTER_TEXT = re.compile(
    r"\b(?:orchestrat\w*|routing|router) agent\b|\b(?:decide|determine|choose|pick|select)\s+"
    r"(?:the\s+)?next\s+(?:step|agent|action|tool|node)s?\b|\bchoose\s+(?:one\s+of\s+)?the\s+"
    r"(?:available\s+)?(?:tools|agents|functions)\b|\bwhich\s+(?:agent|tool|function)\s+to\s+"
    r"call\b", re.IGNORECASE)

_HUMAN_ANSWER = re.compile(
    r"\b(?:student|learner|user|human|pupil|trainee|participant|applicant)(?:'s|s')? "
    r"(?:answer|response|reply|solution|essay|submission)s?\b", re.IGNORECASE)

# The generator's output named as what is judged ("the response", "the assistant's reply")
_OUTPUT_SUBJECT = re.compile(
    r"\b(?:the|this|its|their|an?|generated|final|candidate)\s+(?:\w+\s+)?(?:response|reply|"
    r"answer|output|completion|summary|submission|draft)s?\b", re.IGNORECASE)

_MODEL_OUTPUT = re.compile(
    r"\b(?:assistant|model|ai|chatbot|bot|llm|agent)(?:'s)?\s+(?:response|reply|answer|"
    r"output)s?\b|\b(?:generated|rendered|produced)\s+(?:[\w-]+\s+){0,2}?(?:response|answer|"
    r"output|text|code|html|content|copy|slides?|deck|presentation|document|article|story|essay|"
    r"post|summary|draft|page)s?\b", re.IGNORECASE)



def judges_input(texts: list[str]) -> bool:
    """Does an evaluator-looking prompt judge something other than the generator's output:
    the user's input, a retrieved document, a human's answer, a route? Only when it names no
    generator output as its subject (a judge of "the response" judges the generator)."""
    text = "\n".join(texts)
    human = _HUMAN_ANSWER.search(text) is not None
    if not text.isascii() and foreign_retrieval(text) and not _MODEL_OUTPUT.search(text):
        return True  # a retrieval grader written in another language
    if not (human or _INPUT_SUBJECT.search(text)):
        return False
    if _MODEL_OUTPUT.search(text):
        return False
    # "the answer" next to a student's answer is that answer
    rest = _HUMAN_ANSWER.sub(" ", text)
    return human or not _OUTPUT_SUBJECT.search(rest)


def own_role(an: Analysis, mod: Module, name: str) -> tuple[Role, tuple[str, ...]]:
    """The role a function's own name (or the config) gives it, and why."""
    own = an.configured_role(name, f"{mod.name}.{name}")
    if own is not None:
        return own[0], (own[1],)
    base = name.rsplit(".", 1)[-1]
    # a test function (``test_grader_sees_tools``) names what it tests, not a role
    r = function_role(base) if name != "<module>" and not base.startswith(
        ("test_", "Test")) else Role.UNKNOWN
    return r, ((f"function name `{base}`",) if r is not Role.UNKNOWN else ())


def reasoning_evidence(it: Interp, c: CallIR, model: str | None, system: Val | None,
                       prompts: list[Val]) -> tuple[str, ...]:
    out: list[str] = []
    thinking = c.kw("thinking")
    if thinking is not None and "disabled" not in thinking.strings:
        out.append("thinking is enabled (`thinking=`)")
    for k in ("reasoning_effort", "reasoning"):
        if c.kw(k) is not None:
            out.append(f"reasoning is enabled (`{k}=`)")
    if model and is_reasoning_model(model):
        out.append(f"`{model}` is a reasoning model")
    for t in prompt_texts(it, system, prompts):
        m = _REASON_TEXT.search(t)
        if m:
            out.append(f"the prompt asks it to reason (\"{m.group(0)}\")")
            break
    return tuple(out)


def prompt_texts(it: Interp, system: Val | None, prompts: list[Val]) -> list[str]:
    """The text of a call's prompt: its string constants, and those of what it is made
    of, a few steps back: local names, module constants (``SystemMessage(content=...)``
    at module level too), the arguments of the calls that build it (``TEMPLATE.format``,
    ``HumanMessage(...)``) and the strings of a project function that builds it."""
    texts: list[str] = []
    work: list[tuple[Val, FunctionIR | None, int, Module]] = [
        (v, it.fn, 0, it.mod) for v in (system, *prompts) if v is not None]
    seen: set[tuple[str, int] | tuple[str, int, str]] = set()
    while work and len(texts) < 64:
        v, fn, depth, mod = work.pop()
        texts.extend(v.strings)
        if depth >= 4:
            continue
        for n in v.names:
            root = n.split(".")[0]
            if root in ("self", "cls") and "." in n and fn is not None and fn.cls:
                root = f"{fn.cls}.{n.split('.')[1]}"  # self.chain: the class's attribute
            if fn is it.fn and root in it.local_vals:
                if ("local", id(it.local_vals[root])) not in seen:
                    seen.add(("local", id(it.local_vals[root])))
                    work.extend((x, fn, depth + 1, mod) for x in it.local_vals[root])
                continue
            if fn is it.fn and root not in fn.locals:
                held = closures.captured(it, root)  # a local of an enclosing function
                if held is not None:
                    if ("closure", id(held[0]), root) not in seen:
                        seen.add(("closure", id(held[0]), root))
                        work.extend((x, held[0], depth + 1, mod) for x in held[1])
                    continue
            if fn is not None and root in fn.locals:
                continue  # a parameter or a local not bound yet: not the module's constant
            home, name = mod, root
            if root not in mod.facts.constant_names and "." in n and root in mod.facts.imports:
                # ``import graph`` then ``graph.check.invoke(...)``: the other module's name
                found = it.an.tables.constant(
                    f"{mod.facts.imports[root]}.{n.split('.')[1]}", mod.path)
                if found is not None:
                    home, name = found
            cv = home.facts.constants.get(name) if name in home.facts.constant_names else None
            if cv is not None and ("const", id(cv)) not in seen:
                seen.add(("const", id(cv)))
                if cv.text is not None:
                    texts.append(cv.text)
                else:
                    owner = home.facts.functions.get(home.facts.owners.get(name, ""))
                    work.append((cv, owner, depth + 1, home))
        if fn is None:
            continue
        for cid in v.calls:
            if cid >= len(fn.calls) or ("call", id(fn.calls[cid])) in seen:
                continue
            c = fn.calls[cid]
            seen.add(("call", id(c)))
            if fn is it.fn:
                built = builder_texts(it, cid)
                if built:
                    texts.extend(built)
                    continue
            work.extend((a, fn, depth + 1, mod) for a in c.args)
            work.extend((a, fn, depth + 1, mod) for _, a in c.kwargs)
            base = c.func.rsplit(".", 1)[0] if "." in c.func else ""
            if base and not base.startswith("<expr>"):
                work.append((Val(names=(base,)), fn, depth + 1, mod))
    return texts


def builder_texts(it: Interp, cid: int) -> list[str]:
    """The string constants of a project function that builds a prompt
    (``ask(build_prompt(topic))``): what it assigns and returns, one level deep."""
    if cid >= len(it.fn.calls):
        return []
    kind, name = it.resolve(it.fn.calls[cid].func)
    if kind not in ("fn", "ext"):
        return []
    found = it.an.tables.function(name, it.path)
    if found is None:
        return []
    out: list[str] = []
    stack: list[Step] = list(found[1].body)
    while stack and len(out) < 32:
        st = stack.pop()
        if isinstance(st, (Assign, Return)):
            out.extend(st.value.strings)
        elif isinstance(st, If):
            stack.extend(st.body)
            stack.extend(st.orelse)
    return out


def role_of(it: Interp, c: CallIR, callee: str | None, model: Val | None, system: Val | None,
            prompts: list[Val], inputs: Iterable[frozenset[L]] = ()
            ) -> tuple[Role, tuple[str, ...]]:
    """Role of an LLM call from the strongest evidence available. ``inputs``: the labels of
    what the call is given (a text that grades "the user's submission" while it is given the
    generator's work grades the generator: a reflection graph hands the drafts over as the
    user's turns)."""
    conf = it.an.configured_role(callee or "", it.fn.name)
    if conf is not None:
        return conf[0], (conf[1],)
    texts = prompt_texts(it, system, prompts)
    if any(_META_TEXT.search(t) or _ROUTER_TEXT.search(t) for t in texts):
        it.meta = True
        return Role.UNKNOWN, ()
    scorer = it.an.scorer_fns.get((it.path, it.fn.name))
    if scorer is not None:  # the harness runs the function on the task's output: structure
        return Role.EVALUATOR, (scorer,)
    task = it.an.tasks.get((it.path, it.fn.name))
    if task is not None and not _text_makes_judge(system, prompts):
        return Role.GENERATOR, (task,)  # (the structure outranks the function's name)
    key = (it.path, it.fn.name, c.id)
    why = None if key in it.an.self_fed else it.an.structural.get(key)
    role, evidence = role_evidence(it, model, system, prompts, why)
    if role is Role.EVALUATOR and judges_input(texts) and not (
            _human_subject_only(texts) and _carries_generator_work(it, inputs)):
        it.meta = True
        return Role.UNKNOWN, ()
    if role is Role.EVALUATOR and evidence and all(e.startswith("function name `")
                                                   for e in evidence) and _reads_verdicts(inputs):
        # named a critic, but what it reads is a judge's output, not a candidate: it acts on
        # the critique (turns it into search queries, a revision), the flow outweighs a name
        return Role.UNKNOWN, ()
    return role, evidence


def _reads_verdicts(inputs: Iterable[frozenset[L]]) -> bool:
    """What the call is given holds a judge's output and no other LLM call's."""
    kinds = {lb.kind for labels in inputs for lb in labels}
    return "judge" in kinds and not kinds & {"gen", "llm", "ans"}


def _human_subject_only(texts: list[str]) -> bool:
    """The text's subject is a person's answer ("the user's submission"), not the user's
    message, query or a retrieved document (a guardrail or a retrieval grader)."""
    text = "\n".join(texts)
    return _HUMAN_ANSWER.search(text) is not None and _INPUT_SUBJECT.search(text) is None


def _carries_generator_work(it: Interp, inputs: Iterable[frozenset[L]]) -> bool:
    """What the call is given holds an LLM call's output or a generator node's history."""
    history = set(it.an.state_history.values())
    return any(lb.kind in ("gen", "llm", "ans") or lb in history
               for labels in inputs for lb in labels)


def role_evidence(it: Interp, model: Val | None, system: Val | None, prompts: list[Val],
                  structural: str | None = None) -> tuple[Role, tuple[str, ...]]:
    """The role from names and texts: the model's name, the system prompt, the
    function's own name, the call's structure (``structural``: why it evaluates another
    call's output), then the prompt."""
    if model is not None:
        for n in model.names:
            r = role_from_name(n.split(".")[-1])
            if r is Role.GENERATOR and _text_makes_judge(system, prompts):
                break  # "You are a strict grader" handed to `writer.ask()`: the text decides
            if r is not Role.UNKNOWN:
                return r, (f"model `{n}`", *backing(it, r, system, prompts, structural))
    if system is not None:
        r, ev = val_role(it, system, "system prompt")
        if r is not Role.UNKNOWN:
            return r, ev
    if it.own_role is not Role.UNKNOWN and it.prev_n <= 1 and not (
            it.own_role is Role.GENERATOR and _text_makes_judge(None, prompts)):
        # (a judge's own text outweighs a maker's name: `generateWritingScore()` whose
        # prompt says "You are an examiner. Score this essay" is a judge)
        return it.own_role, (*it.own_evidence,
                             *backing(it, it.own_role, None, prompts, structural))
    if structural is not None:
        return Role.EVALUATOR, (structural,)
    return _prompt_role(it, prompts)


def backing(it: Interp, role: Role, system: Val | None, prompts: list[Val],
             structural: str | None) -> tuple[str, ...]:
    """What beside a name makes an evaluator one (its structure, its instructions' or its
    prompt's text): a finding whose evaluator has such evidence is not "from names only"."""
    if role is not Role.EVALUATOR:
        return ()
    if structural is not None:
        return (structural,)
    if system is not None:
        r, ev = val_role(it, system, "system prompt")
        if r is Role.EVALUATOR:
            return ev
    r, ev = _prompt_role(it, prompts)
    return ev if r is Role.EVALUATOR else ()


def _prompt_role(it: Interp, prompts: list[Val]) -> tuple[Role, tuple[str, ...]]:
    roles: set[Role] = set()
    evs: list[str] = []
    for v in prompts:
        r, ev = val_role(it, v, "prompt")
        if r is not Role.UNKNOWN:
            roles.add(r)
            evs.extend(ev)
    if len(roles) == 1:
        return roles.pop(), tuple(evs)
    return Role.UNKNOWN, ()


def _text_makes_judge(system: Val | None, prompts: list[Val]) -> bool:
    """Does a literal text of the call's system prompt or prompt make its model a judge?
    (It outweighs the name of the variable the model object is kept in.)"""
    return any(makes_judge(s) for v in (system, *prompts) if v is not None for s in v.strings)


def val_role(it: Interp, v: Val, what: str) -> tuple[Role, tuple[str, ...]]:
    for s in v.strings:
        if makes_judge(s):
            return Role.EVALUATOR, (f"{what} text \"{s[:40].strip()}…\"",)
    for s in v.strings:  # "You are a news writer": the text, not a name, makes the maker
        said = makes_maker(s)
        if said:
            return Role.GENERATOR, (f"{what} text \"{said[:40]}\"",)
    roles: set[Role] = set()
    ev: list[str] = []
    for n in v.names:
        last = n.split(".")[-1] if "." in n else n
        r = role_from_name(last)
        if r is Role.UNKNOWN:
            const = it.mod.facts.constants.get(n.split(".")[0])
            if const is not None and const.text and makes_judge(const.text):
                r = Role.EVALUATOR
        if r is Role.GENERATOR and what == "prompt" and not set(name_tokens(last)) & \
                PROMPT_HEADS:
            continue  # a prompt made of `answer` or `policy` holds that text, it writes nothing
        if r is not Role.UNKNOWN and (r is Role.GENERATOR or it.is_rubric_name(n)
                                      or (r is Role.EVALUATOR and what == "system prompt")):
            roles.add(r)
            ev.append(f"{what} `{n}`")
        carried = sorted(f"{what} carries {lb.origin.what if lb.origin else 'a rubric'}"
                         for lb in it.peek(Val(names=(n,))) if lb.kind == "rubric")
        if carried:  # sorted: a set of labels has no stable order from run to run
            roles.add(Role.EVALUATOR)
            ev += carried
    for cid in v.calls:
        carried = sorted(f"{what} carries {lb.origin.what if lb.origin else 'a rubric'}"
                         for lb in it.call_out.get(cid, frozenset()) if lb.kind == "rubric")
        if carried:
            roles.add(Role.EVALUATOR)
            ev += carried
    if len(roles) == 1:
        return roles.pop(), tuple(dict.fromkeys(ev))
    return Role.UNKNOWN, ()
