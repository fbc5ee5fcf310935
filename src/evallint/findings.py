"""The one value every rule produces and every reporter consumes.

A finding is plain data (picklable, JSON-able) so that it can cross process boundaries and
live in the cache unchanged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    """How bad a finding is. Notes never fail a run; errors and warnings do by default."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "note": 1}[self.value]


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (the other end of a flow, the evidence of a role)."""

    path: str
    line: int
    column: int
    message: str
    cell: int | None = None  # notebooks: the code cell, with line counted inside it


@dataclass
class Finding:
    """One positioned report. ``line`` and ``column`` are 1-based as editors show them.

    ``cell`` is set for notebooks: the 1-based index of the code cell, with ``line`` counted
    inside that cell, which is what a user sees in Jupyter.
    """

    code: str
    message: str
    path: str
    line: int
    column: int
    severity: Severity = Severity.ERROR
    name: str = ""
    end_line: int | None = None
    end_column: int | None = None
    cell: int | None = None
    related: list[Related] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    fix: str | None = None

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        """Position, then code, then message: a total order, so that output never depends on
        the order in which checks or sets produced the findings."""
        return (self.path, self.cell or 0, self.line, self.column, self.code, self.message)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data
