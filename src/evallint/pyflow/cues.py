"""Word lists the interpreter reads names and texts by, shared by its rooms: what a verdict
is called, what a name is made of, and whether a text makes its model a judge.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from evallint.pyflow.ir import Val
from evallint.pyflow.summaries import L
from evallint.roles import Role, judge_text, stated_identity
from evallint.roles import name_tokens as _name_tokens

# Keys of a judge's output that hold a number (reading one shows the judge gives a score).
SCORE_KEYS = {"score", "scores", "rating", "ratings", "points", "mark", "marks"}

PASS_KEYS = {"pass", "passed", "passes", "is_pass", "pass_", "passing", "success", "approved",
             "accept", "accepted", "is_correct", "correct", "ok"}

# A name that holds a verdict: an LLM call's result stored or read under one is a judgement
VERDICT_TOKENS = SCORE_KEYS | PASS_KEYS | {"verdict", "verdicts", "grade", "grades",
                                           "judgment", "judgement", "approval"}


@lru_cache(maxsize=65536)
def makes_judge(text: str) -> bool:
    """A text that makes the model it is given to a judge, read as every kind reads it
    (:func:`evallint.roles.judge_text`); cached, the interpreter asks for each string often."""
    return judge_text(text) is not None


@lru_cache(maxsize=65536)
def makes_maker(text: str) -> str:
    """The words by which a text says its model makes the work ("You are a news writer"),
    else ''; a text that names a judge too says neither."""
    cue = stated_identity(text)
    return cue.text.strip() if cue is not None and cue.role is Role.GENERATOR else ""


# A value made from a text that asks for a numeric score (see ``Val.scored``).
SCORE_ASKED = L("scoreq")


def schema_has_score(consts: Any, vals: Iterable[Val]) -> bool:
    """Does a structured-output class (``response_format=Verdict``) have a score field?

    Class attributes with a value (``score: int = Field(...)``) are module constants, so a
    ``Verdict.score`` key among them says the judge returns a score.
    """
    for v in vals:
        for n in v.names:
            prefix = n + "."
            if any(k.startswith(prefix) and set(name_tokens(k[len(prefix):])) & SCORE_KEYS
                   for k in consts):
                return True
    return False


def name_tokens(name: str) -> tuple[str, ...]:
    return tuple(_name_tokens(name))
