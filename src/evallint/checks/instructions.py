"""I4 in prose: instructions that dispatch a judge on the model of the work it grades.

A skill, a slash command, ``AGENTS.md`` or an orchestrating agent decides how the session runs
its reviewer; when its text says the reviewer runs on the implementer's model (or inherits the
session's), every judge it dispatches grades its own model's work, whatever any agent file says.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts import FileFacts
from evallint.facts.agents import AgentFacts, InstructionFacts
from evallint.findings import Finding
from evallint.kinds import FileKind
from evallint.registry import Context, file_check

_WHAT = {FileKind.AGENT.value: "this agent's instructions",
         FileKind.INSTRUCTIONS.value: "these instructions"}


@file_check("EL305", kinds=[FileKind.INSTRUCTIONS, FileKind.AGENT])
def same_model_policy(facts: FileFacts, ctx: Context) -> Iterator[Finding]:
    """One finding per sentence that puts a judge on the generator's model."""
    if not isinstance(facts, (InstructionFacts, AgentFacts)):
        return
    where = _WHAT.get(facts.kind, "these instructions")
    for policy in facts.model_policies:
        yield ctx.finding(
            "EL305", facts.path, policy.pos,
            f"{where} run the {policy.judge} on the model of the work it grades "
            f"(\"{policy.quote}\"): a judge on its own model's output shares its blind spots; "
            "name a different, cheaper model for the judge")
