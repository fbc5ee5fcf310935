"""Facts of prompt and template files (front matter, format contract, ``evallint:``
keys)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evallint.facts import Pos, PromptFacts


@dataclass
class UnknownKey:
    """A key of the front matter's ``evallint:`` block that evallint does not read (EL905)."""

    key: str  # as written, with its parents: ``legitimate[0].reasons``
    pos: Pos
    suggestion: str  # the known key it is closest to, or ""


@dataclass
class PromptFileFacts(PromptFacts):
    """PromptFacts plus what the template rules need beyond the shared fields."""

    # Where the template works on a batch of items ("for each item", a loop over items).
    batch_pos: Pos | None = None
    batch_evidence: str = ""
    # What the prompt says it evaluates ("Evaluate the cleaned context" → "context"): a variable
    # of that name is the item under evaluation, not the generator's context.
    subjects: list[str] = field(default_factory=list)
    # History variables framed as the user's own conversation (``conversation_inputs``): the
    # task input of a multi-turn judge, not the generator's context.
    conversation: list[str] = field(default_factory=list)
    # What the prompt says the output is judged against ("Context is the source of truth",
    # "grounded in the provided context"): a RAG judge's reference, not generator context.
    references: list[str] = field(default_factory=list)
    unknown_keys: list[UnknownKey] = field(default_factory=list)


@dataclass
class PyPromptFacts(PromptFileFacts):
    """A template found in a Python string (:mod:`evallint.frontends.pystrings`): what names it,
    how it is used, where it starts. A fact type, here so that reading one from the cache
    imports no front-end."""

    name: str = ""
    how: str = ""
    start: Pos = field(default_factory=lambda: Pos(1, 1))
    # The role comes from the enclosing function's name, not the string's own: too weak to
    # call a module merged (EL101).
    by_scope: bool = False
    # Variables the prompt hands over as the item it evaluates: a whole message of their own
    # (``{"role": "user", "content": "{{review}}"}``), or alone under a label that names the
    # candidate or what the prompt evaluates ("Essay:" in "Evaluate ... the following essay").
    # The check treats them as the subject unless they are named generator context.
    handed: list[str] = field(default_factory=list)
    # Variable names are code names that qualify a head noun ("user_query"): EL103 reads
    # the head (see checks/templates.evaluator_inputs).
    qualified_names: bool = True


FORMAT_KEY = "(format)"


# A JSON contract with names of its own: an example object, a schema, or "respond in JSON with
# the keys ...". Any such contract is explicit; which keys it holds is the loop's business.
JSON_KEY = "(json)"


# What the ``evallint:`` block may hold; anything else is reported (EL905), since a mistyped
# declaration would otherwise do nothing at all.
EVALLINT_KEYS = ("role", "legitimate")


LEGITIMATE_ITEM_KEYS = ("inputs", "input", "reason")
