"""Accuracy of the Python analysis on shapes met in real repositories: rebinding kills old
values (comprehensions included), EL201 needs reasoning evidence, calls that classify the
user's input are not evaluators of the generator, notebooks follow cell order."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_python_flow import found, lint

GEN_HELPER = """\
import anthropic

client = anthropic.Anthropic()


def ask(messages, model="claude-sonnet-4-5"):
    r = client.messages.create(model=model, max_tokens=500, messages=messages)
    return r.content[0].text
"""


def notebook(*cells: str, language: str = "python") -> str:
    """A notebook whose code cells hold ``cells``."""
    return json.dumps({
        "cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [],
                   "execution_count": None} for c in cells],
        "metadata": {"kernelspec": {"name": language, "language": language}},
        "nbformat": 4, "nbformat_minor": 5})


def test_a_comprehension_reads_its_own_target_not_a_stale_variable(tmp_path: Path) -> None:
    loop = GEN_HELPER + """

def reasoned(topic):
    return [{"role": "user", "content": f"Think step by step about {topic}"}]


def scoring(text):
    return [{"role": "user", "content": f"You are a judge. Score the response: {text}"}]


topics = ["a", "b"]
drafts = [ask(reasoned(t)) for t in topics]
for draft in drafts:
    print(draft)
drafts = ["fixed text"]
verdicts = [ask(scoring(draft), model="claude-haiku-4-5") for draft in drafts]
"""
    result = lint(tmp_path, {"loop.py": loop}, {"EL201"})
    assert found(result) == []
    # the same comprehension over the generator's fresh output is reported
    fresh = loop.replace('drafts = ["fixed text"]\n', "")
    result = lint(tmp_path, {"loop.py": fresh}, {"EL201"})
    assert found(result) == [("EL201", "loop.py", 23)]


def test_el201_needs_evidence_that_the_output_holds_reasoning(tmp_path: Path) -> None:
    loop = GEN_HELPER + """

def judge_text(text):
    return ask([{"role": "user", "content": f"You are a judge. Score the response: {text}"}],
               model="claude-haiku-4-5")


def main(task):
    draft = ask([{"role": "user", "content": PROMPT + task}])
    return judge_text(draft)
"""
    plain = 'PROMPT = "Answer briefly: "\n'
    assert found(lint(tmp_path, {"loop.py": plain + loop}, {"EL201"})) == []
    tagged = 'PROMPT = "Reason inside <think> tags first, then answer: "\n'
    [f] = lint(tmp_path, {"loop.py": tagged + loop}, {"EL201"}).findings
    assert (f.line, f.severity.value) == (19, "error")
    assert "<think>" in f.message


def test_float_of_a_bool_made_from_judge_output_is_no_parse(tmp_path: Path) -> None:
    code = GEN_HELPER + """

def judge_it(answer):
    return ask([{"role": "user", "content": f"You are a judge. Say 1 or 0: {answer}"}],
               model="claude-haiku-4-5")


def row_score(answer):
    ok = judge_it(answer) == "1"
    return {"acc": float(ok), "raw": float(judge_it(answer))}
"""
    assert found(lint(tmp_path, {"m.py": code}, {"EL504"})) == [("EL504", "m.py", 18)]
