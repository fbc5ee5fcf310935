"""Facts of Claude Code agent definitions and permission files: what the agents front-end
reads and the agent checks decide on."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from evallint.facts import FileFacts, Pos


@dataclass
class ToolRef:
    """One tool grant: ``Bash`` or ``Bash(git diff:*)`` (``spec`` is the part in brackets)."""

    name: str
    spec: str | None
    pos: Pos

    @property
    def text(self) -> str:
        return f"{self.name}({self.spec})" if self.spec is not None else self.name


@dataclass(frozen=True)
class ModelPolicy:
    """A sentence of prose that puts a judge on the generator's model (EL305)."""

    pos: Pos  # where the same-model cue starts
    judge: str  # the word naming the judge ("reviewer")
    quote: str  # the sentence, clipped


@dataclass
class AgentFacts(FileFacts):
    """A sub-agent definition. ``tools`` is None when the front matter has no ``tools`` key."""

    name: str | None = None
    name_pos: Pos | None = None
    description: str = ""
    tools: list[ToolRef] | None = None
    tools_pos: Pos | None = None
    disallowed: list[ToolRef] | None = None
    disallowed_pos: Pos | None = None
    model: str | None = None
    model_pos: Pos | None = None
    front_matter_pos: Pos = field(default_factory=lambda: Pos(1, 1))
    # sentences of the body that dispatch a judge on the generator's model (EL305)
    model_policies: list[ModelPolicy] = field(default_factory=list)


@dataclass
class InstructionFacts(FileFacts):
    """A skill, a slash command or a project instruction file (``AGENTS.md``, ``CLAUDE.md``):
    prose that tells the session how to run its agents."""

    model_policies: list[ModelPolicy] = field(default_factory=list)


@dataclass
class SettingsFacts(FileFacts):
    """``.claude/settings.json`` / ``settings.local.json``: the permission rules that apply."""

    allow: list[ToolRef] = field(default_factory=list)
    deny: list[ToolRef] = field(default_factory=list)
    default_mode: str | None = None
    default_mode_pos: Pos | None = None

    @property
    def project_dir(self) -> str:
        """The folder that holds ``.claude/`` (the project the permissions apply to)."""
        return str(PurePosixPath(self.path).parent.parent)
