"""Role inference: is a prompt, call or agent the generator, the evaluator, or unknown?

Roles are never guessed silently: every inference keeps the evidence that made it, so a
finding can say *why* evallint believes a file is a judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum


class Role(str, Enum):
    GENERATOR = "generator"
    EVALUATOR = "evaluator"
    UNKNOWN = "unknown"


@dataclass
class RoleInfo:
    """A role and the evidence for it, strongest first."""

    role: Role = Role.UNKNOWN
    evidence: list[str] = field(default_factory=list)
    explicit: bool = False  # stated by config or front matter, not inferred

    @property
    def is_evaluator(self) -> bool:
        return self.role is Role.EVALUATOR

    @property
    def is_generator(self) -> bool:
        return self.role is Role.GENERATOR


# Words that name the evaluator side. Matched as whole tokens of a name split on
# non-alphanumerics and camelCase, never as substrings ("scoreboard" is not "score").
EVALUATOR_WORDS = frozenset(
    {
        "evaluator", "evaluate", "evaluation", "eval", "evals", "judge", "judging", "grader",
        "grade", "grading", "critic", "critique", "rubric", "scorer", "score", "scoring",
        "reviewer", "review", "verifier", "verify", "rater", "rate", "rating", "assess",
        "assessor", "assessment",
    }
)
GENERATOR_WORDS = frozenset(
    {
        "generator", "generate", "generation", "writer", "write", "draft", "drafter",
        "answerer", "answer", "solver", "solve", "actor", "policy", "implementer", "implement",
        "builder", "coder", "optimizer", "refine", "refiner", "producer", "responder",
    }
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def name_tokens(name: str) -> list[str]:
    """Split ``judgePrompt_v2.md`` into ``['judge', 'prompt', 'v2', 'md']``."""
    parts: list[str] = []
    for chunk in _SPLIT.split(name):
        if chunk:
            parts.extend(p.lower() for p in _CAMEL.split(chunk) if p)
    return parts


def role_from_name(name: str) -> Role:
    """The role a name alone suggests; UNKNOWN when it suggests both or neither."""
    tokens = set(name_tokens(name))
    ev = bool(tokens & EVALUATOR_WORDS)
    gen = bool(tokens & GENERATOR_WORDS)
    if ev and not gen:
        return Role.EVALUATOR
    if gen and not ev:
        return Role.GENERATOR
    return Role.UNKNOWN


_ROLE_VALUES = {
    "evaluator": Role.EVALUATOR, "judge": Role.EVALUATOR, "grader": Role.EVALUATOR,
    "critic": Role.EVALUATOR, "eval": Role.EVALUATOR, "evaluate": Role.EVALUATOR,
    "evaluation": Role.EVALUATOR, "scorer": Role.EVALUATOR, "reviewer": Role.EVALUATOR,
    "rubric": Role.EVALUATOR, "verifier": Role.EVALUATOR,
    "generator": Role.GENERATOR, "generate": Role.GENERATOR, "generation": Role.GENERATOR,
    "writer": Role.GENERATOR, "actor": Role.GENERATOR, "solver": Role.GENERATOR,
    "refine": Role.GENERATOR, "refiner": Role.GENERATOR, "optimizer": Role.GENERATOR,
}


def role_from_value(value: object) -> Role:
    """Read an explicit role word such as front matter ``step: evaluator`` or ``role: judge``."""
    if not isinstance(value, str):
        return Role.UNKNOWN
    word = value.strip().lower()
    if word in _ROLE_VALUES:
        return _ROLE_VALUES[word]
    return role_from_name(word)


# What only the evaluator side produces. "generate_verdicts" and "write_feedback" name a judge's
# step: the production verb says how something is made, the artifact says which side makes it.
EVALUATOR_ARTIFACTS = frozenset(
    {"verdict", "verdicts", "judgement", "judgment", "judgements", "judgments", "feedback",
     "critique", "critiques", "score", "scores", "rating", "ratings", "grade", "grades",
     "evaluation", "evaluations", "reason", "reasons"}
)
# Generator words that only say something is produced; the object decides the side.
PRODUCTION_VERBS = frozenset({"generate", "generation", "write", "draft"})


def prompt_name_role(name: str) -> tuple[Role, str]:
    """The role a prompt's name states, with the token that states it.

    Like :func:`role_from_name`, but a production verb whose object is an evaluator artifact
    (``generate_verdicts``, ``generate_reason``, ``write_feedback``) is no generator evidence:
    such a name says nothing certain about the side, so it is unknown and content decides.
    """
    tokens = name_tokens(name)
    ev = [t for t in tokens if t in EVALUATOR_WORDS]
    gen = [t for t in tokens if t in GENERATOR_WORDS]
    if any(t in EVALUATOR_ARTIFACTS for t in tokens) and any(t in PRODUCTION_VERBS for t in gen):
        return Role.UNKNOWN, ""
    if ev and not gen:
        return Role.EVALUATOR, ev[0]
    if gen and not ev:
        return Role.GENERATOR, gen[0]
    return Role.UNKNOWN, ""
