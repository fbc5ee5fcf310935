"""Facts of promptfoo configs: providers, tests, assertions and the files they include."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evallint.facts import FileFacts, Pos


@dataclass
class PfGrader:
    """A grader setting: the provider id it names (None for an inline object without id)."""

    id: str | None
    model: str | None
    pos: Pos
    via: str | None = None  # the file:// grader file whose provider id this is


@dataclass
class PfVar:
    """A template variable in rubric text (``{{ vars.context }}`` -> root 'vars')."""

    name: str
    path: tuple[str, ...]
    pos: Pos
    file: str | None = None  # the file:// rubric file it is in; None: this file

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


@dataclass
class PfAssertion:
    type: str  # without the ``not-`` prefix
    pos: Pos
    grader: PfGrader | None = None
    rubric_vars: list[PfVar] = field(default_factory=list)
    rubric_file: str | None = None  # ``value: file://rubric.txt``


@dataclass
class PfTest:
    grader: PfGrader | None = None
    assertions: list[PfAssertion] = field(default_factory=list)
    pos: Pos | None = None


@dataclass
class PfProvider:
    id: str | None
    model: str | None
    vendor: str
    pos: Pos
    reasoning: str | None = None  # why this provider reasons (model family or config key)
    show_thinking: bool | None = None
    path: str | None = None  # the file:// providers file it is defined in; None: the config


@dataclass
class PfInclude:
    purpose: str  # tests | defaultTest | providers | scenarios
    target: str  # the path after file://, relative to the including file
    pos: Pos


@dataclass
class PfMissing:
    """A ``file://`` reference to a file that is not there."""

    purpose: str
    target: str
    pos: Pos
    probable: str = ""  # an absolute path from another machine: the file probably meant
    ignored: str = ""  # the .gitignore that ignores it (a generated file the project drops)


@dataclass
class PromptfooFacts(FileFacts):
    is_config: bool = False
    providers: list[PfProvider] = field(default_factory=list)
    providers_pos: Pos | None = None
    default_test: PfTest | None = None
    tests: list[PfTest] = field(default_factory=list)
    includes: list[PfInclude] = field(default_factory=list)
    missing: list[PfMissing] = field(default_factory=list)
    # Prompt files under test (``prompts: [file://…]``), as generator templates.
    prompts: list[Any] = field(default_factory=list)


def target_file(target: str) -> str:
    """The file part of a ``file://`` target: ``provider.py:call_api`` names ``provider.py``."""
    head, sep, tail = target.rpartition(":")
    if sep and head and "/" not in tail and not tail.startswith("\\"):
        return head
    return target
