"""Facts of judge configs (the models they name, the prompts they hold) and of
pydantic-evals dataset judges."""

from __future__ import annotations

from dataclasses import dataclass, field

from evallint.facts import FileFacts, Pos
from evallint.facts.prompt_files import PromptFileFacts


@dataclass
class ConfigPrompt:
    """A judge template a config holds or names, with where the config does so."""

    facts: PromptFileFacts
    judge: str  # the judge (annotator, evaluator) it belongs to
    pos: Pos  # where the config names or holds it
    note: str  # the Related message on findings in a named file
    anchor: Pos = field(default_factory=lambda: Pos(1, 1))  # where the template starts


@dataclass
class MissingRef:
    target: str
    pos: Pos
    purpose: str
    tried: list[str] = field(default_factory=list)
    # an absolute path from another machine: the file of that name in this project that it
    # probably means (read in its place), else ""
    probable: str = ""


@dataclass
class ConfigModel:
    """A model a judge config names: the judge's, a model under test, or the baseline."""

    model: str
    pos: Pos
    use: str  # judge | tested | baseline


@dataclass
class JudgeConfigFacts(FileFacts):
    shape: str = ""
    models: list[ConfigModel] = field(default_factory=list)
    prompts: list[ConfigPrompt] = field(default_factory=list)
    missing: list[MissingRef] = field(default_factory=list)


@dataclass(frozen=True)
class DatasetJudge:
    """An LLMJudge of a pydantic-evals dataset file: its name, its ``model`` (None: the
    default judge model) and where it is (the model's value, else the ``LLMJudge`` key)."""

    name: str
    model: str | None
    pos: Pos
