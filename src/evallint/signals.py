"""Matching template-variable names against signal lists (EL102, EL205): on name tokens,
never on substrings, so that a word in a longer name does not cry wolf."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evallint.roles import name_tokens, singular


def as_list(value: Any) -> list[str]:
    """A rule parameter as a list of strings (one string is a list of one)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return []


def signal_in(element: str, signals: Iterable[str], exact: Iterable[str] = (),
              owned: Iterable[str] = ()) -> str | None:
    """The signal that names ``element``, matched on name tokens, never on substrings.

    ``steps`` matches ``steps`` and ``reasoning_steps`` but not ``stepsize``; a pattern ending
    in ``*`` is a token-aligned prefix (``intermediate_*`` matches ``intermediate_steps``,
    ``draft*`` matches ``draft_v2`` and ``prev_drafts``); ``exact`` signals match only the
    whole name.
    """
    tokens = singular(name_tokens(element))
    if not tokens:
        return None
    low = element.lower().strip("_")
    for sig in exact:
        if low == sig.lower():
            return sig
    if set(tokens) & set(singular([o.lower() for o in owned])):
        # `evaluation_steps`, `judge_context`: the evaluator's own material, not the generator's.
        return None
    for sig in signals:
        if sig.endswith("*"):
            # singular like the name's tokens: "previous_*" must not lose to "previou"
            prefix = "_".join(singular(name_tokens(sig[:-1])))
            trailing = sig[:-1].endswith(("_", "-"))
            for i in range(len(tokens)):
                joined = "_".join(tokens[i:])
                if trailing and joined.startswith(prefix + "_"):
                    return sig
                if not trailing and joined.startswith(prefix):
                    return sig
            continue
        want = singular(name_tokens(sig))
        n = len(want)
        if n and any(tokens[i:i + n] == want for i in range(len(tokens) - n + 1)):
            return sig
    return None


def name_listed(name: str, names: Iterable[str]) -> bool:
    """``name`` is one of ``names`` (case-insensitive; ``x*`` is a prefix)."""
    low = name.lower()
    for item in names:
        item = item.lower()
        if item.endswith("*") and low.startswith(item[:-1]):
            return True
        if low == item:
            return True
    return False
