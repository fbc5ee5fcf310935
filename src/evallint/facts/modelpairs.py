"""Model pairs: the facts that EL301/EL302 decide on, whatever kind of file names the models.

Every source of models (agent definitions, loop specs, prompt front matter, Python LLM calls)
emits ``(evaluator, generator)`` pairs through :func:`pair_source`; one check
(``checks/models.py``) decides I4 for all of them with one wording, so a team reads the same
finding for the same mistake in a spec, an agent folder or a Python loop.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from evallint.facts import Pos
from evallint.findings import Related
from evallint.registry import Context, Project


@dataclass(frozen=True)
class ModelEnd:
    """One side of a pair: who it is, where its model is named, and the model.

    ``model`` is the comparable id (aliases resolved) or None when unknown; ``shown`` is how a
    message names it (``claude-sonnet-4-5``, ``MODEL_NAME = 'gpt-4o'``)."""

    who: str
    path: str
    pos: Pos
    model: str | None
    shown: str


@dataclass(frozen=True)
class ModelPair:
    """An evaluator and a generator of one loop. ``shared`` names what both run on when they
    share it by construction (one chat model object), even with no model string known."""

    evaluator: ModelEnd
    generator: ModelEnd
    key: Hashable  # one finding per evaluator and rule
    related: tuple[Related, ...] = ()
    evidence: tuple[str, ...] = ()
    shared: str = ""
    hint: str = ""  # what to do, appended to the EL301 message
    # Set when a name alone makes the evaluator one and nothing but the loop's structure
    # names the generator: why, appended to the message; the finding is then a warning, and
    # no EL302 is drawn from it (a tier says nothing when the roles are a guess).
    weak: str = ""
    # Set when names alone make the evaluator one (its function's name, its model object's):
    # why; the EL301 finding is then a warning that says so (issue: a verdict that hangs on a
    # name is weaker evidence), while EL302 still compares the tiers.
    names_only: str = ""
    # Set when only where the two calls are written links them (the same file, a module
    # beside by import): no data flow, graph, harness or shared object. Why; the EL301 finding
    # is then a warning that says so (a file of several pipelines pairs steps of different ones).
    by_place: str = ""
    # Set when both ends run on a class's default model (``this.model = cfg.model || "x"``):
    # each instance may be built with another, and which instance each end runs on is not
    # followed. Why; the EL301 finding is then a warning that says so.
    defaulted: str = ""


PairSource = Callable[[Project, Context], Iterable[ModelPair]]
SOURCES: list[PairSource] = []


def pair_source(fn: PairSource) -> PairSource:
    """Register a function that lists the model pairs of a project (one per kind)."""
    SOURCES.append(fn)
    return fn
