"""Instruction files (skills, slash commands, ``AGENTS.md``, ``CLAUDE.md``): the model policies
their prose sets for the judges they dispatch.

Nothing else of these files is read: they are prose for a coding agent, not templates filled
with inputs, so their words give no variables, roles or contracts.
"""

from __future__ import annotations

from evallint.config import Config
from evallint.facts.agents import InstructionFacts
from evallint.frontend import frontend
from evallint.frontends.model_policy import model_policies
from evallint.kinds import FileKind
from evallint.marks import split_front_matter
from evallint.source import SourceFile


@frontend(FileKind.INSTRUCTIONS)
def parse_instructions(source: SourceFile, config: Config) -> InstructionFacts:
    """The body's same-model policies for judges (front matter, if any, is skipped)."""
    facts = InstructionFacts(path=source.rel, kind=FileKind.INSTRUCTIONS.value)
    text = source.text
    first = 1
    split = split_front_matter(text)
    if split is not None:
        first = split[2]
        text = "\n".join(text.splitlines()[first - 1:])
    facts.model_policies = model_policies(text, first)
    return facts
