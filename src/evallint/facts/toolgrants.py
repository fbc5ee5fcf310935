"""Tool grants: the facts that EL401 decides on, whatever kind of file gives the tools.

An evaluator may be handed tools by an agent's front matter (its ``tools:`` allow-list, or a
``disallowedTools:`` deny-list that leaves some), or by an LLM call's ``tools=`` in Python. Each
kind lists its evaluators' grants through :func:`grant_source`, with what each tool can do
(:mod:`evallint.toolcaps`); one check (``checks/tools.py``) words EL401 for all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evallint.facts import Pos
from evallint.registry import Context, Project


@dataclass(frozen=True)
class ToolGrant:
    """An evaluator given tools that write or execute: who it is, where the grant is made,
    and each such tool as the message shows it (``'Bash' runs any command``, ``run_shell``)."""

    who: str
    path: str
    pos: Pos | None  # None: the file itself (line 1)
    tools: tuple[str, ...]
    how: str = ""  # how the grant is made, when not by naming the tools
    evidence: tuple[str, ...] = ()


GrantSource = Callable[[Project, Context], Iterable[ToolGrant]]
SOURCES: list[GrantSource] = []


def grant_source(fn: GrantSource) -> GrantSource:
    """Register a function that lists the tool grants of a project's evaluators (one per
    kind)."""
    SOURCES.append(fn)
    return fn
