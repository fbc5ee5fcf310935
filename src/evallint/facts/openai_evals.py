"""Facts of openai/evals model-graded specs."""

from __future__ import annotations

from dataclasses import dataclass, field

from evallint.facts import FileFacts, Pos


@dataclass
class FormatField:
    name: str  # root name: ``input`` for ``{input[0]}`` or ``{input.text}``
    field: str  # the whole field expression
    pos: Pos


@dataclass
class GradedSpec:
    name: str
    pos: Pos
    fields: list[FormatField] = field(default_factory=list)
    mapped: list[str] = field(default_factory=list)  # names in input_outputs (keys and values)


@dataclass
class OpenAIEvalsFacts(FileFacts):
    specs: list[GradedSpec] = field(default_factory=list)
