"""Model policies stated in prose: "dispatch the reviewer on the same model as the implementer".

Skills, ``AGENTS.md``/``CLAUDE.md`` and orchestrating agents say in words how a judge is
dispatched; when they tell it to run on the model of the work it grades, the judge is the
generator's model by policy, whatever the front matter of any one agent says (I4). Prose is
read sentence by sentence, never by a word anywhere in the file: a statement counts when one
sentence names the judge, a same-model cue ("the same model as ...", "inherits the session's
model", ``model: inherit``) and, for "same model", the side that made the work. A cue that is
negated ("never the same model", "a different model"), a sentence that explains the hazard
("if the judge runs on the same model, it rubber-stamps"), a question, and text under an
"anti-patterns"/"mistakes" heading or in fenced code state no policy.
"""

from __future__ import annotations

import re
from itertools import pairwise

from evallint.facts import Pos
from evallint.facts.agents import ModelPolicy
from evallint.frontends.template_text import fenced_spans
from evallint.roles import AGENT_MAKER_WORDS, JUDGE_NOUNS, MAKER_NOUNS
from evallint.source import LineIndex

# Who judges: the judge nouns (one vocabulary with the role reader), their plurals and the
# acts a dispatched step is named by ("the review subagent", "implementation and review").
_JUDGES = sorted(JUDGE_NOUNS | {"review", "evaluation", "grading", "judging", "critique"})
_JUDGE = re.compile(r"\b(" + "|".join(_JUDGES) + r")s?\b", re.I)
# Who made the work: the maker nouns of the role reader and the implementing step. The session
# that dispatches ("you", "the orchestrator") made the work only when it is said to: "the same
# model as you" counts, "the same model you ship" does not.
_MAKERS = sorted((MAKER_NOUNS | AGENT_MAKER_WORDS | {"implementation", "doer", "worker",
                                                     "executor"})
                 - {"planner", "generate"})
_MAKER = re.compile(r"\b(?:" + "|".join(_MAKERS) + r")s?\b"
                    r"|\bsame\s+model\s+as\s+(?:you|yourself|the\s+main\s+(?:agent|conversation))\b",
                    re.I)
# "the same model (as ...)": a model, not a family, provider or tier (those are EL302's).
_SAME = re.compile(r"\b(?:same|identical)\s+(?:underlying\s+|base\s+|llm\s+)?"
                   r"(?:model|llm)(?:\s+(?:id|name))?\b(?!\s*(?:family|families|provider|vendor"
                   r"|class|tier|size))", re.I)
# The session's model without naming it: inheriting it, or `model: inherit` in prose.
_INHERIT = re.compile(
    r"\binherit(?:s|ed|ing)?\s+(?:the\s+|your\s+)?(?:(?:parent|main|session|caller|"
    r"orchestrator|controller|conversation)(?:'s)?\s+)?(?:session\s+|conversation\s+)?model\b"
    r"|\bmodel\s*[:=]\s*[\"']?inherit\b"
    r"|\b(?:the\s+)?model\s+you\s+(?:are|'re)\s+(?:using|running(?:\s+on)?|on)\b", re.I)
# A model named as configuration (`model: opus`, `model="gpt-4.1"`).
_NAMED = re.compile(r"\bmodel\s*[:=]\s*[\"'`]?([A-Za-z][\w.:/-]*)", re.I)
# One list of roles the same words apply to: "for testers, implementers, and reviewers",
# "both the implementer and the reviewer".
_ROLE_ITEM = r"(?:(?:the|all|each)\s+)?[\w-]+(?:\s+(?:agents?|subagents?))?"
_COORD = re.compile(r"\b(?:for|both)\s+(" + _ROLE_ITEM
                    + r"(?:\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or)\s|&|/)\s*"
                    + _ROLE_ITEM + r")+)", re.I)


def _coordinated(sentence: str) -> bool:
    """Whether one list in ``sentence`` names both a judge and the side that made the work."""
    for m in _COORD.finditer(sentence):
        roles = m.group(1)
        if not re.search(r"\s(?:and|or)\s|&|/", roles):
            continue  # a list ends on a conjunction ("X, Y and Z"); "X, the Y runs" is none
        if _JUDGE.search(roles) and _MAKER.search(_JUDGE.sub(" ", roles)):
            return True
    return False


# Words that turn a cue around when they come just before it.
_NEGATORS = frozenset({"not", "never", "no", "avoid", "avoiding", "different", "differ",
                       "differs", "separate", "rather", "instead", "unlike", "other", "another",
                       "don't", "doesn't", "mustn't", "shouldn't", "isn't", "won't", "cannot",
                       "without", "forbid", "forbidden", "prohibit", "prohibited"})
_WORD = re.compile(r"[A-Za-z']+")
# A sentence that explains the hazard rather than setting the policy.
_HAZARD = re.compile(
    r"\b(?:if|otherwise|would|could|risk\w*|bias\w*|self-preference|self-grading|rubber[\s-]"
    r"stamp\w*|blind\s+spots?|problem\w*|pitfall\w*|mistake\w*|anti-?pattern\w*|wrong|bad|"
    r"inflat\w*|lenien\w*|flatter\w*|own\s+(?:work|output|answers?|code))\b|❌|⚠", re.I)
# Headings under which statements are counter-examples.
_COUNTER_HEADING = re.compile(
    r"anti-?patterns?|mistakes?|pitfalls?|avoid|don'?t|do\s+not|never|red\s+flags?|wrong|"
    r"\bbad\b|risks?|problems?|why\b|failure|smells?", re.I)
_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*)$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'*_`(\[]?[A-Z0-9])|\n[ \t]*\n")
_MARKUP = re.compile(r"[*_`]")


def model_policies(text: str, offset_line: int = 1) -> list[ModelPolicy]:
    """The sentences of ``text`` (markdown; line ``offset_line`` of its file is its first)
    that put a judge on the generator's model."""
    if "model" not in text.lower() or not _JUDGE.search(text):
        return []
    lines = LineIndex(text)
    fences = fenced_spans(text)
    headings = [(m.start(), m.group(2)) for m in _HEADING.finditer(text)]
    found: list[ModelPolicy] = []
    for start, end in _units(text):
        if any(a <= start < b for a, b in fences):
            continue
        sentence = text[start:end]
        if sentence.rstrip().endswith("?") or _under_counter_heading(headings, start):
            continue
        hit = _cue(sentence)
        if hit is None:
            continue
        judge = _JUDGE.search(sentence)
        if judge is None:
            continue
        line, col = lines.pos(start + hit)
        quote = " ".join(_MARKUP.sub("", sentence).split())
        found.append(ModelPolicy(Pos(line + offset_line - 1, col), judge.group(1).lower(),
                                 quote if len(quote) <= 160 else quote[:159] + "…"))
    return found


def _units(text: str) -> list[tuple[int, int]]:
    """Sentence spans: paragraphs and list items split at sentence ends."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    out: list[tuple[int, int]] = []
    for a, b in spans:
        # a list item or a table row starts a sentence of its own
        cut = a
        for m in _ITEM.finditer(text, a, b):
            if m.start() > cut:
                out.append((cut, m.start()))
            cut = m.start()
        out.append((cut, b))
    return [(a, b) for a, b in out if text[a:b].strip()]


# A list item's or a table row's marker ("- ", "2. ", "| ").
_MARK = r"(?:[-*+]|\d+[.)]|\|)"
_ITEM = re.compile(r"(?m)^[ \t]*" + _MARK + r"[ \t]")


def _under_counter_heading(headings: list[tuple[int, str]], start: int) -> bool:
    """Whether the nearest heading above ``start`` introduces counter-examples."""
    title = ""
    for at, text in headings:
        if at > start:
            break
        title = text
    return bool(title and _COUNTER_HEADING.search(title))


def _cue(sentence: str) -> int | None:
    """The offset of a same-model cue that sets a policy in ``sentence``, else None."""
    if _HAZARD.search(sentence):
        return None
    for m in _INHERIT.finditer(sentence):
        if _negated(sentence, m.start()):
            continue
        if _CONFIG.match(m.group(0)) or _directed(sentence[:m.start()]):
            return m.start()
    named = list(_NAMED.finditer(sentence))
    if len({m.group(1).lower() for m in named}) == 1 and _coordinated(sentence):
        # one model named for the judge and the maker alike: "always specify `model: opus`
        # for testers, implementers, and reviewers"
        m = named[0]
        if not _negated(sentence, m.start()) and _directed(sentence[:m.start()]):
            return m.start()
    for m in _SAME.finditer(sentence):
        if _negated(sentence, m.start()) or not _directed(sentence[:m.start()]):
            continue
        # "the same model" compares the judge with the maker only when the sentence names
        # the maker apart from the judge ("as the implementer", "for the coder and the critic")
        if _MAKER.search(_JUDGE.sub(" ", sentence)):
            return m.start()
    return None


# A directive: an imperative verb opening the sentence or a clause, or a modal of obligation.
# Without one a sentence describes ("every phase silently inherits one session model, so the
# judge then runs on the same model as the doer") rather than sets a policy.
_DIRECTIVE = re.compile(
    r"(?:^|[,:;(\u2014\u2013]\s*|\b(?:then|and|always|also|please|now|instead)\s+)"
    r"(?:use|dispatch|run|spawn|launch|start|invoke|call|give|pass|keep|set|let|have|send|hand|"
    r"delegate|assign|pick|choose|select|configure|route|point|spin\s+up)\b"
    r"|\b(?:must|should|shall|needs?\s+to|has\s+to|have\s+to|is\s+to|are\s+to|make\s+sure|"
    r"ensure|be\s+sure\s+to|always)\b", re.I)
_LEAD = re.compile(r"^\s*" + _MARK + r"?\s*")
# `model: inherit` written as configuration says what to set on its own.
_CONFIG = re.compile(r"model\s*[:=]", re.I)


def _directed(before: str) -> bool:
    """Whether the text before a cue gives an instruction."""
    return bool(_DIRECTIVE.search(_LEAD.sub("", _MARKUP.sub("", before), count=1)))


def _negated(sentence: str, at: int) -> bool:
    """Whether a negating word stands among the six words before ``at`` (or "never" and
    "must not" anywhere before it)."""
    before = [w.lower() for w in _WORD.findall(sentence[:at])]
    if any(w in _NEGATORS for w in before[-6:]):
        return True
    return "never" in before or any(a in ("must", "should") and b == "not"
                                    for a, b in pairwise(before))
