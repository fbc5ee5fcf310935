"""Grader reads: the facts that EL205 decides on, whatever framework declares the grader.

An eval framework shows its grader more than its own instructions: a promptfoo rubric renders
the test's ``vars``, an openai/evals model-graded spec formats sample fields into its prompt,
and Inspect's ``model_graded_qa(include_history=True)`` hands over the whole conversation. Each
framework lists what its graders read through :func:`grader_source`; one check
(``checks/graders.py``) decides, in one place, which reads carry generator-side context.

How much a name alone says depends on the framework, so each read carries its ``scope``:

* ``VARS``: a name is one of the test's own variables, which the prompt under test renders
  too; only a name that carries a generator-context signal is reported.
* ``FIELDS``: the grader should see only the input, the completion and the reference (or a
  name the spec maps); a signal is an error, any other name a note.
* ``HISTORY``: the grader is shown the whole conversation (a note: legitimate by design when
  the task is judged on the dialogue).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evallint.facts import FileFacts, Pos
from evallint.findings import Related
from evallint.registry import Context, Project

VARS = "vars"
FIELDS = "fields"
HISTORY = "history"


@dataclass(frozen=True, eq=False)
class GraderRead:
    """One thing a framework's grader is shown: where it is read, what, and by which grader."""

    owner: FileFacts  # the file whose declarations may make the read legitimate
    path: str  # where the finding points (a rubric kept in a file of its own: that file)
    pos: Pos
    grader: str  # as the message names it: "llm-rubric assertion", "model_graded_qa"
    name: str  # the name read (a dotted path's root, a field's name)
    dotted: str  # the read as written (``run.generator.notes``)
    parts: tuple[str, ...]  # the names a signal is looked for in (a dotted path's parts)
    scope: str  # VARS, FIELDS or HISTORY
    mapped: frozenset[str] = frozenset()  # FIELDS: names the spec maps to its own inputs
    related: tuple[Related, ...] = ()


GraderSource = Callable[[Project, Context], Iterable[GraderRead]]
SOURCES: list[GraderSource] = []


def grader_source(fn: GraderSource) -> GraderSource:
    """Register a function that lists what a framework's graders read in a project (one per
    framework)."""
    SOURCES.append(fn)
    return fn
