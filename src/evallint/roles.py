"""Role inference: is a prompt, call or agent the generator, the evaluator, or unknown?

Roles are never guessed silently: every inference keeps the evidence that made it, so a
finding can say *why* evallint believes a file is a judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Any


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


# ---------------------------------------------------------------------------- name words
#
# One vocabulary for names (files, functions, variables, agents), with per-kind weights:
#
# | kind                          | judge words that decide alone | need a text cue      |
# |-------------------------------|-------------------------------|----------------------|
# | Python names, prompt names    | EVALUATOR_WORDS               | (none)               |
# | agent names                   | STRONG_JUDGE_WORDS            | WEAK_JUDGE_WORDS     |
#
# An agent catalogue names its code reviewers, test verifiers and auditors with the weak words,
# and those agents build or check code rather than grade a generator's work, so an agent needs
# a scoring or reviewing cue in its description for them. Makers: GENERATOR_WORDS for Python and
# prompt names; AGENT_MAKER_WORDS for agents, whose names are nouns ("developer", "author")
# rather than the verbs a function is named with.

# A name whose head noun is a plan or a route (``create_review_plan``, an agent called
# ``planner``): the judge word before it is its modifier, and the maker of a plan is not the
# maker of the work a judge grades.
PLAN_HEADS = frozenset({"plan", "plans", "planner", "planning", "schedule", "agenda",
                        "outline", "router", "routing", "route"})

# Tokens that make an agent a judge on their own.
STRONG_JUDGE_WORDS = frozenset({
    "evaluator", "evaluate", "evaluation", "eval", "evals", "judge", "judging", "grader",
    "grade", "grading", "critic", "critique", "rubric", "scorer", "scoring", "rater",
    "assessor",
})
# Tokens that name a judge only with a scoring or reviewing cue (agents).
WEAK_JUDGE_WORDS = frozenset({"reviewer", "review", "verifier", "verify", "assess",
                              "assessment", "score", "rating", "auditor", "audit", "checker",
                              "inspector", "validator", "validate", "validation"})
# Weak words that count for agents only: in code they name type checkers and input validators.
AUDIT_WORDS = frozenset({"auditor", "audit", "checker", "inspector", "validator", "validate",
                         "validation"})
# Words that name the evaluator side in Python and prompt names. Matched as whole tokens of a
# name split on non-alphanumerics and camelCase, never as substrings ("scoreboard" is not
# "score"). The auditing words are left out: in code they name type and spell checkers.
EVALUATOR_WORDS = (STRONG_JUDGE_WORDS | WEAK_JUDGE_WORDS | {"rate"}) - AUDIT_WORDS
# The last word of a name that makes it a label of a thing, not the thing: `step_name`,
# `plan.title`, `history_length` render what the step, plan or history is called or how long
# it is, none of its content.
LABEL_TOKENS = frozenset({"name", "title", "id", "label", "count", "number", "index", "type",
                          "status", "length", "size", "len", "num", "kind"})
# Words that name an attempt counter or its bound: a loop's or a router's test on such a
# value (``state["attempts"] >= MAX``, ``inputData.round >= 3``) bounds the loop.
COUNTER_WORDS = frozenset({"attempt", "attempts", "iteration", "iterations", "iter", "retries",
                           "retry", "tries", "count", "counter", "revision", "revisions",
                           "round", "rounds", "max", "limit", "loops", "num", "turns",
                           "cycles"})
GENERATOR_WORDS = frozenset(
    {
        "generator", "generate", "generation", "writer", "write", "draft", "drafter",
        "answerer", "answer", "solver", "solve", "actor", "policy", "implementer", "implement",
        "builder", "coder", "optimizer", "refine", "refiner", "producer", "responder",
    }
)
AGENT_MAKER_WORDS = frozenset({
    "generator", "generate", "generation", "writer", "drafter", "answerer", "solver", "actor",
    "implementer", "implementor", "builder", "coder", "developer", "refiner", "producer",
    "responder", "author",
})

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def name_tokens(name: str) -> list[str]:
    """Split ``judgePrompt_v2.md`` into ``['judge', 'prompt', 'v2', 'md']``."""
    return list(_tokens(name))


def singular(tokens: list[str]) -> list[str]:
    """``rubrics`` is ``rubric``, ``steps`` is ``step``: plurals never hide a signal."""
    return [t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t
            for t in tokens]


@lru_cache(maxsize=16384)
def _tokens(name: str) -> tuple[str, ...]:
    """Memoised: the analysis asks again for the same few thousand names of a project."""
    parts: list[str] = []
    for chunk in _SPLIT.split(name):
        if chunk:
            parts.extend(p.lower() for p in _CAMEL.split(chunk) if p)
    return tuple(parts)


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


# ---------------------------------------------------------------------------- text evidence
#
# One vocabulary and one set of sentence cues for every kind of file: a prompt file, an agent's
# body, a Python string handed to an SDK and a template named from a config read the same
# sentence the same way (tests/test_roles.py feeds one table of sentences through each kind).
# What differs per kind is only how much a cue weighs next to the kind's other evidence (a
# file name, an agent's description, a call's structure), which each front-end decides.

@lru_cache(maxsize=1)
def _judge_words() -> dict[str, Any]:
    """``rules/data/judge-words.yaml``: the English nouns below and the other languages
    (read precompiled, as the rules are: a run that needs no YAML imports none)."""
    from evallint.rulemeta import DATA_COMPILED, _compiled_docs, rules_dir

    return dict(_compiled_docs(rules_dir() / "data", DATA_COMPILED)["judge-words.yaml"])


def _english(key: str) -> frozenset[str]:
    return frozenset(str(w).lower() for w in _judge_words()["english"][key])


# Nouns that name the judge when the text says who the model is ("You are a strict verifier").
JUDGE_NOUNS = _english("judges")
# Judge nouns that also name people who only read or check ("a modifications reviewer" who
# summarises): as an identity they make a judge only with a verdict or judging cue beside them.
WEAK_JUDGE_NOUNS = _english("weak_judges")
# Nouns that name the side that makes the work ("You are the Refiner").
MAKER_NOUNS = _english("makers")
# What a judge is told to judge: the candidate's text ("Grade the joke").
CANDIDATE_NOUNS = _english("candidates")


def _identity(nouns: frozenset[str]) -> re.Pattern[str]:
    return re.compile(
        r"(?:\byou(?:'re|\s+are)\s+(?:now\s+|acting\s+as\s+)?|\b(?:please\s+)?be\s+)"
        r"(?:an?|the)\s+(?:[\w-]+\s+){0,3}?"
        r"[*_]{0,2}(?:[\w-]+\s+)?(" + "|".join(sorted(nouns)) + r")\b", re.I)


JUDGE_IDENTITY = _identity(JUDGE_NOUNS)
MAKER_IDENTITY = _identity(MAKER_NOUNS)
# "Score the response", "Evaluate each answer": an instruction to judge the candidate's text.
# Also the participle after who the model is: "You are a teacher grading an essay submission".
JUDGE_TASK = re.compile(
    r"(?:\b(evaluate|grade|score|assess|rate|judge|critique)|(?<=\byou are )(?:an?|the)\s+"
    r"(?:[\w-]+\s+){1,3}?(grading|evaluating|scoring|assessing|rating|judging|critiquing))\s+"
    r"(?:the|this|each|a|an)\s+"
    r"(?:[\w-]+\s+){0,2}?(" + "|".join(sorted(CANDIDATE_NOUNS)) + r")s?\b", re.I)
# A judging verb addressed to the model with a scale: "Grade the essay from 1 to 10", "You
# rate each reply on a scale of 1-5". The scale makes the verb a verdict to give whatever the
# object is called (JUDGE_TASK knows only the candidate nouns).
JUDGE_SCALED_TASK = re.compile(
    r"(?:^|(?<=[.!?:;,\n])|\byou\s+)[^\S\n]*(?:please\s+)?"
    r"(grade|score|rate|evaluate|assess|judge)\s+(?!(?:from|between|on|out|each|all)\b)"
    r"(?:[\w'-]+,?\s+){1,6}?"
    r"(?:(?:from|between|out\s+of)\s+\d+|on\s+a\s+(?:\d+[-\u2013]point\s+)?scale\b"
    r"|\d+\s*(?:-|\u2013|/)\s*\d+\b)", re.I | re.M)
# A judging verb on a thing made, whose criteria follow with their scales: "Evaluate this
# marketing copy for:\n1. Clarity (1-10)" (the scale may be anywhere after the verb).
JUDGE_LISTED_TASK = re.compile(
    r"(?:^|(?<=[.!?:;\n]))[^\S\n]*(?:please\s+)?(evaluate|grade|score|rate|assess|critique)\s+"
    r"(?:this|the|each|these)\s+(?:[\w-]+\s+){0,3}?(?:[\w-]+)\s*(?:for|on|against|using|by)\b"
    r"(?=[\s\S]{0,400}?\(\s*\d+\s*(?:-|\u2013|to|/)\s*\d+\s*\))", re.I | re.M)
# A comparison of candidates that picks or orders them: "Rank the responses", "Which answer is
# better?", "Choose the better reply" (a pairwise or ranking judge).
JUDGE_COMPARE_TASK = re.compile(
    r"\b(rank|compare)\s+(?:the|these|both|all|each\s+of\s+the|(?:the\s+)?two)\s+"
    r"(?:[\w-]+\s+){0,2}?"
    r"(?:responses|answers|outputs|completions|submissions|drafts|replies|summaries|essays|"
    r"translations)\b"
    r"|\b(which)\s+(?:of\s+the\s+(?:two\s+)?)?(?:response|answer|output|completion|reply|draft|"
    r"summary|translation)s?\s+is\s+(?:better|best|more\s+\w+)\b"
    r"|\b(which)\s+(?:one\s+)?is\s+better\b(?=[^.\n]{0,80}(?:\bA\b|\bB\b|\{|json|reply|"
    r"answer|respond|return))"
    r"|\b(pick|choose|select)\s+the\s+(?:better|best)\s+(?:one|response|answer|output|"
    r"completion|reply|draft|summary|translation)\b", re.I)
# An instruction to rework one's own candidate: "Rewrite your draft", "Revise the answer below"
# (a refining generator, when nothing in the text judges).
MAKER_TASK = re.compile(
    r"(?:^|(?<=[.!?:;\n]))[^\S\n]*(?:please\s+)?(rewrite|revise|improve|rework|polish|refine)\s+"
    r"(?:your|the|this)\s+(?:[\w-]+\s+){0,2}?(?:" + "|".join(sorted(CANDIDATE_NOUNS)) +
    r")s?\b", re.I | re.M)
# A judgement asked of the candidate's text: "Evaluate whether the summary is faithful to the
# document", "Determine if the answer is correct" (one's own, "check if your answer ...", is not).
JUDGE_WHETHER_TASK = re.compile(
    r"\b(evaluate|assess|judge|determine|decide|verify|check)\s+(?:whether|if)\s+"
    r"(?:the|this|each|a|an)\s+(?:[\w-]+\s+){0,2}?(?:" + "|".join(sorted(CANDIDATE_NOUNS)) +
    r")s?\s+(?:is|are|was|were|does|do|has|have|contains?|answers?|follows?|meets?|matches|"
    r"addresses|satisfies|correctly|accurately|fully|adequately)\b", re.I)
# The quality of a thing made, judged: "evaluate overall text quality", "assess the quality of
# the summary", "rate the translation quality", "grade the clarity of this answer".
_MADE_THING = "(?:" + "|".join(sorted(CANDIDATE_NOUNS | {"text", "writing", "prose"})) + ")s?"
_QUALITY = "(?:" + "|".join(sorted(_english("qualities"))) + ")"
JUDGE_QUALITY_TASK = re.compile(
    r"\b(evaluate|assess|rate|grade|judge|score)\s+(?:the\s+|its\s+|their\s+)?(?:overall\s+)?"
    rf"(?:{_MADE_THING}\s+{_QUALITY}\b|{_QUALITY}\s+of\s+(?:the\s+|this\s+|each\s+|its\s+)?"
    rf"{_MADE_THING}\b)", re.I)
# Work measured against a standard: "Evaluate the outline against our criteria" (a check of
# one's own work, "check your answer against the guidelines", is a maker's habit, not a judge).
JUDGE_CRITERIA_TASK = re.compile(
    r"\b(evaluate|assess|check|review|grade|judge|score|rate|audit)\s+"
    r"(?:(?!your\b|yourself\b)[\w'-]+\s+){0,8}?against\s+(?:the|our|these|this|a|its)\s+"
    r"(?:[\w-]+\s+){0,2}?(?:criteria|criterion|rubric|requirements|guidelines|standards|"
    r"checklist)\b", re.I)
# A scale or a rubric: supports a judge, never makes one on its own.
SCALE_CUES = (
    re.compile(r"\bon a scale (?:of|from)\s+\d+|\bscore (?:from|between)\s+\d+\s*(?:-|–|to|and)"
               r"\s*\d+|\b\d+\s*(?:-|–|to)\s*\d+\s+scale\b", re.I),
    re.compile(r"\brubric\b", re.I),
)
# A verdict the text asks for: what makes a reviewer's or verifier's text a judge's.
# (Also a reply keyword that accepts the work: "Reply APPROVE or give fixes", "Answer YES or
# give advice": the one word is a verdict.)
VERDICT_CUE = re.compile(
    r"\b(?:PASS|FAIL)\b|(?i:\bpass/fail\b|\bverdicts?\b|\bscores?\b|\bgrades?\b|\brating\b|"
    r"\bcorrect or incorrect\b|\bapprove or reject\b|\baccept or reject\b)|"
    r"\b(?i:reply|answer|respond|say|output|return)\s+(?:(?i:with|only)\s+)*[\"'`*]*"
    r"(?:APPROVED?|ACCEPT(?:ED)?|LGTM|YES)\b")
_REPORTED = frozenset({"will", "would", "may", "might", "to", "who", "which", "that", "then",
                       "later", "must", "should", "can", "shall"})


@dataclass(frozen=True)
class Cue:
    """A sentence of the text that states a role: where it is and what it says."""

    role: Role
    start: int
    end: int
    text: str
    word: str = ""  # the noun or verb that carries it ("verifier", "score")

    @property
    def snippet(self) -> str:
        return snippet(self.text)


def snippet(text: str) -> str:
    """One line of at most 60 characters, for evidence messages."""
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def reported_speech(text: str, start: int) -> bool:
    """'a judge will score the answer' describes a judge; it does not instruct one."""
    before = [w.lower() for w in text[max(0, start - 40):start].split()]
    if before[-2:-1] in (["is"], ["are"]) and before[-1] == "to":
        return False  # "Your task is to evaluate the code" sets the task
    if before and before[-1] == "to" and re.search(
            r"\b(?:use|call|invoke)\s+(?:this|the)\s+(?:agent|subagent|assistant)\b",
            text[max(0, start - 160):start], re.I):
        return False  # "Use this agent after the draft to evaluate ...": what it is for
    if before and before[-1] == "who":
        wide = text[max(0, start - 80):start].lower().split()
        if any(wide[i:i + 2] == ["you", "are"] for i in range(len(wide) - 1)):
            return False  # "You are a judge on ... who assesses each call": the persona's task
    return bool(before) and before[-1] in _REPORTED


def first_direct(pattern: re.Pattern[str], text: str, role: Role) -> Cue | None:
    """The first match of ``pattern`` that instructs the model rather than describes someone."""
    for m in pattern.finditer(text):
        if not reported_speech(text, m.start()):
            word = (m.group(1) or "").lower() if m.groups() else ""
            return Cue(role, m.start(), m.end(), m.group(0), word)
    return None


@dataclass(frozen=True)
class _Language:
    window: int
    you: tuple[str, ...]
    nouns: tuple[str, ...]
    retrieval: tuple[str, ...]
    answer: tuple[str, ...]


@lru_cache(maxsize=1)
def _languages() -> tuple[_Language, ...]:
    """The judge words of other languages (``rules/data/judge-words.yaml``)."""
    data = _judge_words()
    return tuple(_Language(int(d["window"]), tuple(w.lower() for w in d["you"]),
                           tuple(w.lower() for w in d["nouns"]),
                           tuple(w.lower() for w in d.get("retrieval") or ()),
                           tuple(w.lower() for w in d.get("answer") or ()))
                 for d in data["languages"].values())


_SENTENCE_END = re.compile(r"[.!?\n。！？]")


def foreign_identity(text: str) -> Cue | None:
    """A judge's identity stated in another language ("你是一位评估员", "Você é um
    avaliador"): a "you are" phrase with a judge noun after it in the same sentence."""
    low = text.lower()
    for lang in _languages():
        for you in lang.you:
            start = low.find(you)
            while start >= 0:
                if you.isascii() and not _word_at(low, start, len(you)):
                    start = low.find(you, start + 1)  # "eres" inside "intereses"
                    continue
                span = low[start:start + len(you) + lang.window]
                stop = _SENTENCE_END.search(span, len(you))
                span = span[:stop.start()] if stop else span
                for noun in lang.nouns:
                    at = span.find(noun, len(you))
                    if at >= 0 and (not noun.isascii() or _word_at(span, at, len(noun))):
                        end = start + at + len(noun)
                        return Cue(Role.EVALUATOR, start, end, text[start:end], noun)
                start = low.find(you, start + 1)
    return None


def _word_at(text: str, at: int, size: int) -> bool:
    """A word of its own there (``juge`` is not the start of ``jugement``)."""
    before = text[at - 1] if at > 0 else " "
    after = text[at + size] if at + size < len(text) else " "
    return not before.isalnum() and not after.isalnum()


def foreign_retrieval(text: str) -> bool:
    """Does a text in another language grade a retrieved document ("检索到的文档"), and no
    answer?"""
    low = text.lower()
    return any(any(p in low for p in lang.retrieval) and not any(a in low for a in lang.answer)
               for lang in _languages())


def stated_identity(text: str) -> Cue | None:
    """Who the text says the model is ("You are a grader"); None when it says neither, or
    both sides (as :func:`content_role` reads such a text)."""
    judge = first_direct(JUDGE_IDENTITY, text, Role.EVALUATOR)
    maker = first_direct(MAKER_IDENTITY, text, Role.GENERATOR)
    if judge is not None and maker is not None:
        return None
    return judge or maker or (foreign_identity(text) if not text.isascii() else None)


def content_role(text: str) -> tuple[Role, list[Cue]] | None:
    """The role a text states directly, or None when it states none.

    The stated identity beats a task verb ("You are the Refiner ... address every point of the
    critique of the response" is the generator); a text that names both sides is UNKNOWN with
    both cues; a judging task on the candidate's text ("Score the response") is a judge. A
    reviewer or verifier is a judge only beside a verdict, a judging task or a scale. Scale and
    rubric cues only add evidence to a judge found otherwise.
    """
    judge = first_direct(JUDGE_IDENTITY, text, Role.EVALUATOR)
    maker = first_direct(MAKER_IDENTITY, text, Role.GENERATOR)
    if judge is None and maker is None and not text.isascii():
        judge = foreign_identity(text)  # "你是一位评估员", "Você é um avaliador"
    if judge is not None and maker is not None:
        return Role.UNKNOWN, [judge, maker]
    if maker is not None:
        return Role.GENERATOR, [maker]
    task = first_direct(JUDGE_TASK, text, Role.EVALUATOR) or _scaled_task(text) or \
        _verdict_question(text) or first_direct(JUDGE_COMPARE_TASK, text, Role.EVALUATOR) or \
        first_direct(JUDGE_CRITERIA_TASK, text, Role.EVALUATOR) or \
        first_direct(JUDGE_WHETHER_TASK, text, Role.EVALUATOR) or \
        first_direct(JUDGE_QUALITY_TASK, text, Role.EVALUATOR)
    if judge is not None and judge.word in WEAK_JUDGE_NOUNS and task is None:
        verdict = VERDICT_CUE.search(text)
        if verdict is None and not scale_cues(text):
            judge = None
    cues = [c for c in (judge, task) if c is not None]
    if not cues:
        rework = first_direct(MAKER_TASK, text, Role.GENERATOR)
        return (Role.GENERATOR, [rework]) if rework is not None else None
    return Role.EVALUATOR, cues


# What a scaled rating of these grades is not a model's output: a retrieved document, the
# user's query, a person's CV or application (a ranker or a screener, not a judge).
_NOT_OUTPUT = re.compile(r"\b(?:documents?|docs?|passages?|chunks?|contexts?|query|queries|"
                         r"questions?|cvs?|resumes?|r\u00e9sum\u00e9s?|applications?|applicants?|"
                         r"profiles?|search\s+results?|retrieval)\b", re.I)


def _scaled_task(text: str) -> Cue | None:
    """A judging verb with a scale whose object is not an input (see :data:`_NOT_OUTPUT`)."""
    for m in (*JUDGE_SCALED_TASK.finditer(text), *JUDGE_LISTED_TASK.finditer(text)):
        if not reported_speech(text, m.start()) and not _NOT_OUTPUT.search(m.group(0)):
            return Cue(Role.EVALUATOR, m.start(), m.end(), m.group(0), m.group(1).lower())
    return None


# A question about a made thing, answered with a verdict: "Is this explanation correct? Reply
# PASS or FAIL", "Does the reply follow the policy? Answer YES or NO".
_ARTIFACT_QUESTION = re.compile(
    r"(?:^|(?<=[.!?:;\n]))[^\S\n]*(?:is|are|does|do)\s+(?:the|this|these|each)\s+"
    r"(?:[\w-]+\s+){0,2}?(answer|response|reply|explanation|summary|draft|output|completion|"
    r"essay|translation|solution|story|code|report|article|post|email)s?\b[^?\n]{0,160}\?",
    re.I | re.M)
_VERDICT_FORMAT = re.compile(
    r"\b(?:reply|answer|respond|output|return|say)\s+(?:with\s+)?(?:only\s+)?['\"]?"
    r"(?:PASS|YES|CORRECT|TRUE|APPROVED?)['\"]?\s+or\s+['\"]?(?:FAIL|NO|INCORRECT|FALSE|REJECT(?:ED)?)"
    r"\b", re.I)


def _verdict_question(text: str) -> Cue | None:
    """A question about a made thing, and a verdict format to answer it in."""
    if not _VERDICT_FORMAT.search(text):
        return None
    for m in _ARTIFACT_QUESTION.finditer(text):
        if not reported_speech(text, m.start()):
            return Cue(Role.EVALUATOR, m.start(), m.end(), m.group(0).strip(), m.group(1).lower())
    return None


def scale_cues(text: str, skip: Callable[[int], bool] | None = None) -> list[Cue]:
    """Scale and rubric mentions (``skip`` leaves out offsets such as headings)."""
    out: list[Cue] = []
    for pattern in SCALE_CUES:
        m = next((m for m in pattern.finditer(text) if skip is None or not skip(m.start())),
                 None)
        if m:
            out.append(Cue(Role.EVALUATOR, m.start(), m.end(), m.group(0)))
    return out


def judge_text(text: str) -> Cue | None:
    """The cue by which a text handed to a model makes that model a judge, else None: the
    shared :func:`content_role` decision, or a "grading rubric" the text sets out."""
    found = content_role(text)
    if found is not None:
        role, cues = found
        return cues[0] if role is Role.EVALUATOR else None
    m = _GRADING_RUBRIC.search(text)
    return Cue(Role.EVALUATOR, m.start(), m.end(), m.group(0)) if m else None


_GRADING_RUBRIC = re.compile(r"\b(?:grading|scoring|evaluation) rubric\b", re.I)

# ---------------------------------------------------------------- judging another's work
#
# What a judge's instructions say, whatever the file is called: review (evaluate, assess,
# audit ...) work that someone else made, and give a verdict. Each of the three is a phrase of
# the text; together they make a judge, apart they do not (a reviewer that fixes what it finds
# is a maker; a text that only mentions a review is not one).

_IMPERATIVE_JUDGING = re.compile(
    r"(?:^|(?<=[.!?:;\n])|(?<=\bthen)|(?<=\band)|(?<=\bfirst)|(?<=\bnow)|(?<=\bplease)"
    r"|(?<=\d\.)|(?<=[-*]))[^\S\n]*"
    r"(review|evaluate|assess|audit|inspect|critique|grade|score|rate|judge|verify|validate|"
    r"check|examine|(?:perform|conduct|do|carry\s+out|write)\s+an?\s+(?:[\w-]+\s+){0,2}?"
    r"(?:review|audit|assessment|evaluation|critique))\b",
    re.I | re.M)
# Work someone else made: "the document the writer produced", "the change the implementer
# made", "the other agent's output", "the pull request", "the submitted patch".
_MAKER = (r"(?:writer|implementer|implementor|author|developer|generator|engineer|agent|model|"
          r"assistant|coder|builder|drafter|producer|student|candidate|contributor|team|user|"
          r"previous\s+(?:step|agent|stage))")
_MADE = (r"(?:produced|wrote|written|made|generated|implemented|created|submitted|proposed|"
         r"drafted|changed|modified|built|delivered|returned|prepared)")
_OTHERS_WORK = re.compile(
    rf"\b{_MAKER}(?:'s|s')?\s+(?:[\w-]+\s+){{0,2}}?(?:has\s+|have\s+|just\s+)?{_MADE}\b"
    rf"|\b{_MADE}\s+by\s+(?:the\s+|an?\s+)?(?:[\w-]+\s+){{0,2}}?{_MAKER}\b"
    rf"|\b{_MAKER}'s\s+(?:[\w-]+\s+){{0,2}}?(?:work|output|answer|response|code|changes?|"
    r"document|draft|patch|diff|plan|implementation|submission)\b"
    r"|\bthe\s+(?:proposed|submitted|pending|incoming)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:change|changes|patch|diff|pull\s+request|pr|document|draft|design)\b"
    r"|\b(?:the|this|each)\s+(?:pull\s+request|pr|diff|patch|submission|candidate)\b",
    re.I)
_VERDICT_ASKED = re.compile(
    r"\b(?:decide|determine|conclude|state)\s+(?:whether|if)\b|\bconclude\s+with\b"
    r"|\b(?:APPROVE|REJECT|SHIP|HOLD|LGTM|BLOCK)\b|\bapproved?\s+or\s+(?:reject|block)"
    r"|\bready\s+(?:to|for)\s+(?:merge|ship|release|publish)|\bgo\s*/\s*no[\s-]go\b"
    r"|\b(?:give|assign|return|output)\s+(?:a|an|the)\s+(?:[\w-]+\s+)?"
    r"(?:score|verdict|grade|rating)\b")
# A reviewer that mends what it finds makes the work: "fix the issues", "apply the changes".
_MENDS = re.compile(
    r"(?:^|(?<=[.!?:;,\n])|(?<=\bthen)|(?<=\band))[^\S\n]*(?:fix|repair|implement|refactor|"
    r"rewrite|"
    r"apply|resolve|patch|correct|edit)\s+(?:the|these|those|any|all|each|every)\s+"
    r"(?:[\w-]+\s+){0,2}?(?:issues?|problems?|bugs?|findings?|code|changes?|fix(?:es)?|"
    r"errors?|comments?|document)\b",
    re.I | re.M)


def judges_others_work(text: str) -> Cue | None:
    """A text that tells the model to review work another party made and to give a verdict
    (``Review the document the writer produced ... decide whether it is ready``): the cue is
    the judging instruction. None when any of the three is missing, or when the text also
    tells the model to fix what it finds (then it makes the work)."""
    task = next((m for m in _IMPERATIVE_JUDGING.finditer(text)
                 if not reported_speech(text, m.start(1))), None)
    if task is None or not _OTHERS_WORK.search(text) or not _VERDICT_ASKED.search(text):
        return None
    if _MENDS.search(text):
        return None
    end = text.find("\n", task.end())
    return Cue(Role.EVALUATOR, task.start(1), end if end != -1 else len(text),
               text[task.start(1):end if end != -1 else len(text)], task.group(1).lower())


# ---------------------------------------------------------------------------- headings

# A heading (or a partial's name) that names a role in so many words: "## Evaluator",
# "Step 2 — Judge the draft", "Generate Questions System Prompt".
# A heading names a role only in so many words: an agent noun ("## Judge prompt", "# Grader"),
# or an activity that opens the heading followed by a prompt word or an object ("## Evaluation
# prompt", "## Grading rubric", "# Step 2: Judge the draft"). A bare "## Evaluation", "Critique
# and Feedback", "Evaluation Dimensions" or "... on Evaluation Section" only mention it.
HEADING_EVALUATOR_AGENTS = frozenset(
    {"evaluator", "judge", "grader", "critic", "scorer", "rater", "verifier", "reviewer",
     "assessor"}
)
HEADING_EVALUATOR_ACTS = frozenset(
    {"evaluation", "evaluate", "judging", "judge", "grading", "grade", "critique", "scoring",
     "score", "rate", "assess", "assessment", "rubric", "verify", "review"}
)
HEADING_GENERATOR_AGENTS = frozenset(
    {"generator", "writer", "solver", "actor", "drafter", "producer", "implementer", "refiner"}
)
HEADING_GENERATOR_ACTS = frozenset({"generation", "generate", "write", "solve", "refine",
                                    "produce", "implement"})
# Words that may follow an activity that opens a heading: "Evaluation prompt", "Judge the draft".
_PROMPT_WORDS = frozenset(
    {"prompt", "prompts", "step", "stage", "phase", "instructions", "instruction", "rubric",
     "template", "system", "node", "pass", "round", "role", "agent", "the", "this", "a", "an",
     "each", "every", "all", "its", "your"}
)
_STEP_WORDS = frozenset({"step", "stage", "phase", "part", "round"})
# An agent noun after these is where material came from ("Feedback from the judge").
_PROVENANCE = frozenset({"from", "by", "of"})
# (a separator is tried at the first blank of a run, never again inside it: a blank after a
# blank starts nothing, so a long run of blanks is read once, not once per blank)
_CLAUSES = re.compile(r"(?:(?<!\s)|(?!\s))\s*(?::|\s[-–—|]\s|[–—|])\s*")
# "## Generator output" in a judge prompt is the material under evaluation, not a prompt;
# "## Evaluator feedback" in a refiner prompt is the material it revises.
_MATERIAL = frozenset(
    {"output", "outputs", "response", "responses", "answer", "answers", "result", "results",
     "attempt", "attempts", "draft", "drafts", "submission", "completion", "text", "feedback",
     "critique", "critiques", "verdict", "verdicts", "score", "scores", "notes", "comments"}
)


def heading_role(title: str) -> str:
    """The role a heading (or a partial's name) states in so many words, else unknown."""
    ev = gen = False
    # In a step heading ("Step 2 — Evaluate") a bare activity names the step.
    stepped = name_tokens(title)[:1] == ["step"]
    for clause in _CLAUSES.split(title):
        words = name_tokens(clause)
        ev = ev or _clause_names(words, HEADING_EVALUATOR_AGENTS, HEADING_EVALUATOR_ACTS, stepped)
        gen = gen or _clause_names(words, HEADING_GENERATOR_AGENTS, HEADING_GENERATOR_ACTS,
                                   stepped)
    if ev and not gen:
        return Role.EVALUATOR.value
    if gen and not ev:
        return Role.GENERATOR.value
    return Role.UNKNOWN.value


def _clause_names(words: list[str], agents: frozenset[str], acts: frozenset[str],
                  stepped: bool = False) -> bool:
    """Does one clause of a heading name the role (not merely mention its activity)?"""
    while words and (words[0] in _STEP_WORDS or words[0].isdigit()):
        words = words[1:]  # "Step 2: ..." / "Step 2 Judge the draft"
    if not words:
        return False
    for i, w in enumerate(words):
        if w not in agents:
            continue
        after = words[i + 1] if i + 1 < len(words) else ""
        before = words[max(0, i - 2):i]
        if after not in _MATERIAL and not set(before) & _PROVENANCE:
            return True
    first, rest = words[0], words[1:]
    # A bare "## Evaluation" or "## Critique" is as often the material a refiner receives.
    if first in acts and (rest[0] in _PROMPT_WORDS if rest else stepped):
        return True
    # "Evaluate Node System Prompt", "Generate Questions System Prompt": a prompt named for
    # its step.
    return words[-1] in ("prompt", "instructions") and first in acts
