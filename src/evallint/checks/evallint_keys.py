"""EL905: a prompt file's ``evallint:`` front-matter block names a key evallint does not read.

A declaration that is mistyped (``legitmate:``) is silently a no-op otherwise: the exception
it meant to document is not granted, or the role it meant to state is guessed instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from evallint.facts import PromptFacts
from evallint.facts.prompt_files import EVALLINT_KEYS, PromptFileFacts
from evallint.findings import Finding
from evallint.kinds import TEMPLATE_KINDS
from evallint.registry import Context, file_check


@file_check("EL905", kinds=TEMPLATE_KINDS)
def unknown_evallint_keys(facts: PromptFacts, ctx: Context) -> Iterator[Finding]:
    """Each unknown key, by name, with the known key it is closest to."""
    if not isinstance(facts, PromptFileFacts):
        return
    for unknown in facts.unknown_keys:
        hint = (f"did you mean '{unknown.suggestion}'?" if unknown.suggestion
                else f"known keys: {', '.join(EVALLINT_KEYS)}")
        yield ctx.finding(
            "EL905", facts.path, unknown.pos,
            f"unknown key '{unknown.key}' in the front matter's 'evallint:' block, so it is "
            f"ignored ({hint})")
