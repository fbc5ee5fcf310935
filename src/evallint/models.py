"""Model identity and cost tiers, for I4 (same model) and the "evaluator is cheaper" policy.

Tier data lives in ``rules/EL302.yaml`` (parameters ``families``, read by
:func:`default_families`) so a user can override it from ``[tool.evallint.rules.EL302]``
without code.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

_DATE = re.compile(r"[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|latest|v\d+(?::\d+)?)$")
# litellm "anthropic/claude-...", openrouter "openai/gpt-4o"; bedrock ids are handled below.
_PROVIDER = re.compile(r"^(?:[a-z0-9_.-]+/)+")


# pydantic-ai's ``provider:model`` prefixes: ``openai:gpt-4o`` is the model ``gpt-4o``, the
# same model as a task that names it through another SDK, and in the same cost tier.
_COLON_PROVIDERS = frozenset({
    "openai", "openai-chat", "openai-responses", "anthropic", "google-gla", "google-vertex",
    "gemini", "groq", "mistral", "cohere", "bedrock", "deepseek", "grok", "huggingface",
    "heroku", "openrouter", "vercel", "azure", "fireworks", "together", "cerebras", "github",
    "moonshotai", "ollama", "litellm",
})


def without_provider(model: str) -> str:
    """The model id without a pydantic-ai ``provider:`` prefix (``openai:gpt-4o`` -> gpt-4o);
    anything else unchanged (``llama3:8b`` is an ollama tag, not a provider)."""
    head, sep, rest = model.partition(":")
    return rest.strip() if sep and rest.strip() and head.strip().lower() in _COLON_PROVIDERS \
        else model


def normalize(model: str) -> str:
    """Canonical form for comparing two model ids: lower case, provider prefix and date dropped.

    ``anthropic/claude-sonnet-4-5-20250929``, ``anthropic:claude-sonnet-4-5`` and
    ``claude-sonnet-4-5`` are the same model.
    """
    m = without_provider(model.strip()).lower()
    m = _PROVIDER.sub("", m)
    m = re.sub(r"^(?:us|eu|apac)\.anthropic\.", "", m)
    m = re.sub(r"^anthropic\.", "", m)
    prev = None
    while prev != m:
        prev = m
        m = _DATE.sub("", m)
    return m


# A call run on each model of a list in turn (an arena's contestants: ``for m in MODELS``):
# ``one of: gpt-4o, o4-mini``. Two calls are on the same model when the sets meet.
MODEL_SET = "one of: "


def model_set(models: list[str]) -> str | None:
    """The model string of a call run on each of ``models`` (one model: that model)."""
    found = list(dict.fromkeys(m.strip() for m in models if m.strip()))
    if not found:
        return None
    return found[0] if len(found) == 1 else MODEL_SET + ", ".join(found)


def members(model: str) -> list[str]:
    """The models a model string stands for (a set's members, else the one model)."""
    if model.startswith(MODEL_SET):
        return [m.strip() for m in model[len(MODEL_SET):].split(", ")]
    return [model]


def same_model(a: str, b: str) -> bool:
    if a.startswith(MODEL_SET) or b.startswith(MODEL_SET):
        return bool({normalize(m) for m in members(a)} & {normalize(m) for m in members(b)})
    return normalize(a) == normalize(b)


def default_families() -> list[dict[str, Any]]:
    """The shipped tiers: the ``families`` parameter of ``rules/EL302.yaml`` (one copy)."""
    from evallint.registry import load_rules

    fams = load_rules()["EL302"].params.get("families")
    return list(fams) if isinstance(fams, list) else []


def tier(model: str, families: list[dict[str, Any]] | None = None) -> tuple[str, int] | None:
    """(family, rank) of a model, lower rank cheaper; None when the model is not in a family.

    A tier word is matched as a whole '-'/'.'-separated token; the empty tier is the family's
    base model (``gpt-4o`` is base, ``gpt-4o-mini`` is mini).
    """
    fams = families or default_families()
    norm = normalize(model)
    tokens = re.split(r"[-_.:\s]+", norm)
    for fam in fams:
        prefix = str(fam["match"])
        head = tokens[0] if tokens else ""
        if not (head == prefix or (prefix == "o" and re.fullmatch(r"o\d+", head))
                or (prefix != "o" and norm.startswith(prefix))):
            continue
        tiers = [str(t) for t in fam["tiers"]]
        joined = "-".join(tokens)
        best: int | None = None
        for rank, word in enumerate(tiers):
            if word and (f"-{word}-" in f"-{joined}-"):
                best = rank if best is None or len(word) > len(tiers[best]) else best
        if best is None and "" in tiers:
            best = tiers.index("")
        if best is not None:
            return prefix, best
    return None


def is_cheaper(evaluator: str, generator: str, families: list[dict[str, Any]] | None = None) -> (
    bool | None
):
    """True if the evaluator's tier is below the generator's, False if not, None if unknown
    (a set of models has no one tier)."""
    if evaluator.startswith(MODEL_SET) or generator.startswith(MODEL_SET):
        return None
    a = tier(evaluator, families)
    b = tier(generator, families)
    if a is None or b is None or a[0] != b[0]:
        return None
    return a[1] < b[1]


def is_reasoning_model(model: str, patterns: list[str] | None = None) -> bool:
    """Does the model return its reasoning (``o3-mini``, ``deepseek-r1``, ``*-thinking``)?
    The patterns are EL204's ``reasoning_models`` parameter (one list, read by the Python
    analysis and the promptfoo checks), matched on the normalised id."""
    if patterns is None:
        from evallint.registry import load_rules

        patterns = [str(p) for p in load_rules()["EL204"].params.get("reasoning_models", [])]
    norm = normalize(model)
    return any(fnmatch.fnmatchcase(norm, p.lower()) for p in patterns)
