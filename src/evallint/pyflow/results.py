"""What the Python analysis hands to the checks: flows, effective LLM calls, loops and events.

Checks read these and nothing else of the analysis, so importing them costs nothing at start-up
(the interpreter loads only when a project has Python to analyse)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from evallint.facts import Pos
from evallint.pyflow.summaries import Origin, chain_keys
from evallint.roles import Role

# How an unresolved model that is one variable is named (see ``callmodels.symbolic_model``).
SYMBOLIC = "the value of "


@dataclass
class Flow:
    """A labelled value reaching a sink: EL201 (raw), EL202 (generator context), EL203
    (rubric to generator)."""

    code: str
    path: str
    pos: Pos
    sink: str  # what the sink is: "the evaluator call `judge()`"
    origin: Origin | None
    detail: str = ""
    reasoning: tuple[str, ...] = ()
    name: str = ""  # the variable, for legitimate-by-design declarations
    evidence: tuple[str, ...] = ()
    related: tuple[tuple[str, Pos, str], ...] = ()


@dataclass
class LLMCall:
    """An effective LLM call: an SDK call, or a call of a helper that makes one."""

    path: str
    function: str
    pos: Pos
    callee: str
    role: Role
    evidence: tuple[str, ...]
    model: str | None
    model_where: str
    model_pos: Pos
    tools: tuple[str, ...]
    inputs_from: tuple[Origin, ...]  # generator outputs reaching its input
    own_role: bool = False  # the callee has a role of its own (generate(), judge())
    origin: Origin | None = None
    obj: tuple[str, str, int] | None = None  # the chat model object called (its constructor)
    obj_what: str = ""
    obj_at: tuple[str, Pos] | None = None


@dataclass
class LoopEvent:
    path: str
    function: str
    pos: Pos
    kind: str
    bounded: bool
    gen: tuple[Pos, ...]
    ev: tuple[Pos, ...]

    @property
    def refinement(self) -> bool:
        return bool(self.gen) and bool(self.ev)


@dataclass
class Event:
    """EL502/EL503/EL504/EL505 evidence: what was found (``kind``) and its facts (``facts``:
    names, places, modes), with related places. The wording is the check's
    (``checks/python_loop.py``), so a new message never touches the analysis."""

    code: str
    path: str
    pos: Pos
    kind: str
    facts: tuple[tuple[str, str], ...] = ()
    related: tuple[tuple[str, Pos, str], ...] = ()

    def fact(self, key: str) -> str:
        return dict(self.facts).get(key, "")


@dataclass
class Result:
    flows: list[Flow] = field(default_factory=list)
    calls: list[LLMCall] = field(default_factory=list)
    loops: list[LoopEvent] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    # the files the prefilter skipped that the analysis parsed (they import an LLM helper or
    # object): the graph reader reads their code too (a node function defined there)
    loaded: list[str] = field(default_factory=list)


def named_only(evidence: tuple[str, ...]) -> bool:
    """An evaluator known only by a name (its function's, its model object's): a graph node
    that ``assess_severity()`` names is a step of the pipeline as often as a judge of it. Its
    findings are warnings (a name is evidence, not proof)."""
    return all(ev.startswith(("function name `", "model `")) for ev in evidence)


# Role evidence that a name or a text gives (the rest is structure: a framework's slot, a
# harness, a team, a flow into the call)
_NAME_OR_TEXT = ("function name `", "model `", "prompt ", "system prompt ", "every LLM call in ",
                 "no data flow ")


def structural(evidence: tuple[str, ...]) -> bool:
    """Does a framework, a harness or a flow give the call its role (``the `evaluator=` of an
    EvaluatorOptimizerLLM``, ``a scorer the `evaluate()` harness runs``), not only names and
    texts? (The evidence is read by its wording, the one form the analysis gives it.)"""
    return any(not ev.startswith(_NAME_OR_TEXT) for ev in evidence)


def judge_named_only(result: Result, path: str, pos: Pos) -> bool:
    """Is the evaluator call made at a place (an event names the call its output comes from)
    known by names only, with the calls inside it when it is a helper's call (``critic(d)``
    is named; the prompt of the call inside ``critic`` may say what it does)?"""
    site = next((c for c in result.calls if c.role is Role.EVALUATOR and c.path == path
                 and c.pos == pos), None)
    if site is None:
        return False
    keys = set(chain_keys(site.origin))
    return all(named_only(c.evidence) for c in result.calls
               if c is site or (c.origin is not None and c.origin.key in keys))


def where(path: str, pos: Pos) -> str:
    name = PurePosixPath(path).name
    if pos.cell is not None:
        return f"{name}:cell {pos.cell}:{pos.line}"
    return f"{name}:{pos.line}"
