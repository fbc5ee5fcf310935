"""Facts of Inspect (``inspect_ai``) grader calls, read by the Python front-end."""

from __future__ import annotations

from dataclasses import dataclass

from evallint.facts import Pos


@dataclass
class InspectGrader:
    """A grader call: ``kind`` is ``graded`` (model_graded_*) or ``get_model`` (custom scorer)."""

    kind: str
    func: str
    pos: Pos
    has_model: bool
    has_role: bool
    include_history: bool = False
    history_pos: Pos | None = None
