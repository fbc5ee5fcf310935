"""One role module: the same sentence is read the same way in every kind of file.

Each row is a sentence; each column a kind (a prompt file, an agent's body, a Python system
prompt, a Python user prompt). A kind may weigh a cue differently only where the role module's
per-kind table says so (agents need a scoring or reviewing cue for the weak judge nouns), and
Python text only ever makes a judge: a maker's text leaves the call to its other evidence.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.config import Config
from evallint.facts.agents import AgentFacts
from evallint.facts.prompt_files import PromptFileFacts
from evallint.frontends.agents_front import parse_agent
from evallint.frontends.prompt_files import parse_prompt_file
from evallint.frontends.python_front import parse_python
from evallint.pyflow.analysis import Analysis
from evallint.pyflow.ir import PythonFacts
from evallint.roles import Role, content_role, judge_text
from evallint.source import SourceFile

E, G, U = Role.EVALUATOR, Role.GENERATOR, Role.UNKNOWN

# sentence, prompt file, agent body, python
TABLE = [
    ("You are a strict verifier. Reply PASS or FAIL for the answer.", E, U, E),
    ("You are an impartial judge. Read the answer and give it a score from 1 to 10.", E, E, E),
    ("You're now the grader for this task.", E, E, E),
    ("Score the response below on a scale of 1 to 5.", E, U, E),
    ("You are the Refiner. Address every point of the critique of the response.", G, G, G),
    ("You are an expert developer. Implement the feature described below.", G, G, G),
    ("A judge will score the answer later, so write it carefully.", U, U, U),
    ("You are a helpful assistant. Answer the user's question.", U, U, U),
    ("You are a writer and also the judge of your own story.", U, U, U),
    ("You are a strict reviewer. Reply APPROVE or list the fixes the draft needs.", E, U, E),
    ("You are a teacher grading an essay submission. Give notes on it.", E, U, E),
    ("You are a code reviewer. Summarize the changes for the release notes.", U, U, U),
    ("You are judging a contest. Rank the responses from best to worst as JSON.", E, U, E),
    ("Which answer is better, A or B? Reply with the letter.", E, U, E),
    ("Rank the documents by relevance to the query.", U, U, U),
    ("Please evaluate the following outline against our criteria. Return JSON.", E, U, E),
    ("Check your answer against the guidelines before you reply.", U, U, U),
    ("Evaluate whether the summary is faithful to the document.", E, U, E),
    ("Determine if the candidate reply answers the customer's question.", E, U, E),
    ("Check if your draft follows the style guide, then send it.", U, U, U),
    ("Compare two chatbot responses to one question. Which is better? Return JSON.", E, U, E),
    ("Which is better for beginners, Python or Rust?", U, U, U),
    ("Evaluate this ad copy for:\n1. Clarity (1-10)\n2. Urgency (1-10)", E, U, E),
    ("Rate the documents for relevance (1-5) to the query.", U, U, U),
    ("你是一位严格的评估员。请给回答打分，1到10分。", E, E, E),
    ("당신은 어시스턴트의 마지막 응답을 평가하는 평가자입니다.", E, E, E),
    ("Você é um avaliador rigoroso. Dê uma nota de 1 a 10 à resposta.", E, E, E),
    ("Tus intereses son la cocina y los viajes: escribe una receta.", U, U, U),
    ("你是一个乐于助人的助手。请回答用户的问题。", U, U, U),
]


def _source(rel: str, text: str) -> SourceFile:
    return SourceFile(Path(rel), rel, text, text.encode())


def prompt_role(sentence: str) -> Role:
    facts = parse_prompt_file(_source("prompts/step.prompt.md", sentence + "\n\n{{ item }}\n"),
                              Config())
    assert isinstance(facts, PromptFileFacts)
    return facts.role.role


def agent_role(sentence: str) -> Role:
    text = ("---\nname: helper\ndescription: Helps with the task at hand.\ntools: Read\n---\n"
            + sentence + "\n")
    facts = parse_agent(_source(".claude/agents/helper.md", text), Config())
    assert isinstance(facts, AgentFacts)
    return facts.role.role


def python_roles(sentence: str) -> tuple[Role, Role]:
    """The role of a neutral call given the sentence as its system prompt, and as its prompt."""
    code = (
        "import anthropic\n\nclient = anthropic.Anthropic()\n\n\n"
        "def step_one(text):\n"
        f"    return client.messages.create(model='m', max_tokens=9, system={sentence!r},\n"
        "                                  messages=[{'role': 'user', 'content': text}])\n\n\n"
        "def step_two(text):\n"
        f"    return client.messages.create(model='m', max_tokens=9, messages=[\n"
        f"        {{'role': 'user', 'content': {sentence!r} + text}}])\n"
    )
    facts = parse_python(_source("steps.py", code), Config())
    assert isinstance(facts, PythonFacts)
    calls = {c.function: c.role for c in Analysis([facts], Config()).run().calls}
    return calls["step_one"], calls["step_two"]


@pytest.mark.parametrize(("sentence", "prompt", "agent", "python"), TABLE)
def test_one_sentence_one_reading_in_every_kind(sentence: str, prompt: Role, agent: Role,
                                                python: Role) -> None:
    assert prompt_role(sentence) is prompt
    assert agent_role(sentence) is agent
    assert python_roles(sentence) == (python, python)
    # the shared decision the kinds build on
    found = content_role(sentence)
    assert (found[0] if found else U) is prompt
    assert (judge_text(sentence) is not None) is (python is E)


def test_the_python_and_prompt_name_vocabularies_are_one() -> None:
    from evallint.roles import (
        AUDIT_WORDS,
        EVALUATOR_WORDS,
        STRONG_JUDGE_WORDS,
        WEAK_JUDGE_WORDS,
    )

    assert STRONG_JUDGE_WORDS <= EVALUATOR_WORDS
    assert WEAK_JUDGE_WORDS - EVALUATOR_WORDS == AUDIT_WORDS


@pytest.mark.parametrize(("sentence", "role"), [
    ("You're a modifications reviewer. Summarise the list of changes below.", None),
    ("You are a careful verifier. Restate the claim in plain words.", None),
    ("You are a code reviewer. Give the patch a score from 1 to 5.", E),
    ("You are a reviewer. Reply APPROVE or reject? Give a verdict.", E),
])
def test_a_reviewer_or_verifier_judges_only_beside_a_verdict(sentence: str,
                                                            role: Role | None) -> None:
    found = content_role(sentence)
    assert (found[0] if found else None) is role
    assert prompt_role(sentence) is (role or U)


def test_a_judged_thing_named_by_what_it_is_makes_a_judge_task() -> None:
    """"Grade the joke" judges a made thing (a noun of judge-words.yaml's candidates);
    writing one does not."""
    for text in ("Grade the joke: funny or not funny?", "Judge the recipe below.",
                 "Rate this haiku for imagery."):
        found = content_role(text)
        assert found is not None and found[0] is Role.EVALUATOR, text
    for text in ("Write a joke about cats.", "Tell me a story about the sea."):
        assert content_role(text) is None, text


def test_a_wrapper_named_after_the_sdk_call_has_no_role_and_a_score_maker_judges() -> None:
    """``timedGenerateObject`` wraps the SDK's generateObject (its name says which call, not
    which side); ``generateScore`` produces a judge's score."""
    from evallint.pyflow.relevance import function_role

    assert function_role("timedGenerateObject") is Role.UNKNOWN
    assert function_role("safe_generate_content") is Role.UNKNOWN
    assert function_role("generateScore") is Role.EVALUATOR
    assert function_role("generate_reply") is Role.GENERATOR  # (a method name, not a wrapper)


def test_the_quality_of_a_thing_made_is_judged_but_not_of_sources_or_products() -> None:
    for text in ("Use this agent after each chapter to evaluate overall text quality.",
                 "Assess the quality of the summary below."):
        found = content_role(text)
        assert found is not None and found[0] is Role.EVALUATOR, text
    for text in ("Evaluate the quality of the sources in search results carefully.",
                 "Evaluate flow quality and performance with larger datasets."):
        assert content_role(text) is None, text
