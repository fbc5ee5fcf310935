"""Typed facts that front-ends extract and rules read.

Rules never look at raw text: a front-end turns each file into one of these objects, with
exact 1-based source positions. All facts are plain dataclasses, sent from the worker
processes by pickle (positions and the Python IR as their field values: see
:func:`pickled_by_fields`) and cached as plain data (:mod:`evallint.datacodec`).
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from evallint.roles import RoleInfo

_C = TypeVar("_C", bound=type)


def pickled_by_fields(cls: _C) -> _C:
    """Pickle a dataclass as its class and its field values, rebuilt by its ``__init__``.

    The default stores each object's fields by name and sets them one by one; a project's
    code trees are hundreds of thousands of positions and IR objects, sent from each worker to
    the parent, and this is about a third faster to write, and smaller (same objects back)."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    values = operator.attrgetter(*names)
    if len(names) == 1:
        def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
            return cls, (values(self),)
    else:
        def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
            return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment,method-assign]
    return cls


@pickled_by_fields
@dataclass(frozen=True)
class Pos:
    """A 1-based line and column in the file as the user sees it (cell for notebooks)."""

    line: int
    column: int = 1
    cell: int | None = None


@dataclass
class TemplateVar:
    """One variable reference that renders (or drives a block) in a template.

    ``path`` is the dotted access path from the root name: ``run.generator.scratchpad`` gives
    ``("run", "generator", "scratchpad")``; subscripts with constant keys are included
    (``steps[0]['text']`` gives ``("steps", "0", "text")``). ``kind`` says how it is used:
    ``output`` (``{{ x }}``), ``iter`` (what a ``for`` loops over), ``test`` (``if`` condition),
    ``section`` / ``inverted`` (mustache blocks), ``triple`` (unescaped mustache), ``arg``
    (argument of a call or filter), ``set`` (right side of ``{% set %}``).
    ``via`` names the local (loop target, ``set`` name, macro argument) through which an
    outer variable reached this reference, if any.
    ``delimited`` is True when the reference sits inside XML-like tags or a fenced block,
    so a model can tell the interpolated text from the instructions around it.
    """

    name: str
    path: tuple[str, ...]
    pos: Pos
    kind: str = "output"
    via: str | None = None
    delimited: bool = False
    filters: tuple[str, ...] = ()
    has_default: bool = False

    @property
    def dotted(self) -> str:
        return ".".join(self.path) if self.path else self.name


@dataclass
class TemplateRef:
    """A reference to another template: Jinja include/import/extends, mustache partial."""

    target: str
    kind: str  # include | import | from | extends | partial
    pos: Pos
    dynamic: bool = False  # target is an expression, not a literal


@dataclass
class Section:
    """A markdown heading and the role its text suggests."""

    title: str
    level: int
    pos: Pos
    role: str = "unknown"  # generator | evaluator | unknown, from the heading words


@dataclass
class TemplateFacts:
    """What a template dialect front-end (Jinja, mustache, str.format) found in a text."""

    dialect: str  # jinja | mustache | format | none
    variables: list[TemplateVar] = field(default_factory=list)
    refs: list[TemplateRef] = field(default_factory=list)
    locals: list[str] = field(default_factory=list)  # names bound inside: set, for, macro
    error: str | None = None  # parse error message; the variables are then best-effort
    error_pos: Pos | None = None


@dataclass
class FileFacts:
    """Facts common to every file kind. Front-ends subclass this for their own kinds."""

    path: str  # relative to the working directory, '/'-separated
    kind: str  # a FileKind value
    role: RoleInfo = field(default_factory=RoleInfo)
    # Legitimate-by-design declarations from the file itself: key -> reason.
    declarations: dict[str, str] = field(default_factory=dict)
    # None: the engine scans the raw text for suppression comments itself.
    suppressions: list[Any] | None = None


@dataclass
class PromptFacts(FileFacts):
    """A prompt file: plain template, markdown prompt with front matter, .prompty, .prompt."""

    front_matter: dict[str, Any] = field(default_factory=dict)
    front_matter_pos: Pos | None = None
    # Line of each top-level front-matter key, for positioned findings on metadata.
    front_matter_lines: dict[str, int] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    template: TemplateFacts = field(default_factory=lambda: TemplateFacts(dialect="none"))
    model: str | None = None
    model_pos: Pos | None = None
    # Output-contract evidence found in the body (JSON keys mentioned, "item_id", ...).
    contract_keys: list[str] = field(default_factory=list)
    body_start_line: int = 1
