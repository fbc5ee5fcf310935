"""EL501-EL505 precision traps: what a well-built loop looks like must stay clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lint_tree, write_files

HELPERS = """\
import json
import anthropic
client = anthropic.Anthropic()


def generate(task, feedback=""):
    r = client.messages.create(model="claude-sonnet-4-5", max_tokens=9,
                               messages=[{"role": "user", "content": task + feedback}])
    return r.content[0].text.split("ANSWER:")[-1]


def judge(task, answer):
    r = client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                               messages=[{"role": "user", "content": answer}])
    return r.content[0].text
"""


def codes_for(tmp_path: Path, body: str, codes: set[str]) -> list[tuple[str, int]]:
    write_files(tmp_path, {"helpers.py": HELPERS, "run.py": "import json\nimport time\n"
                           "from helpers import generate, judge\n\n" + body})
    result = lint_tree(tmp_path, codes)
    assert not result.tool_errors
    return sorted((f.code, f.line) for f in result.findings if f.path == "run.py")


BOUNDED = [
    "def f(task, deadline):\n    while time.time() < deadline:\n"
    "        d = generate(task)\n        judge(task, d)\n",
    "def f(task, max_attempts=3):\n    n = 0\n    while n < max_attempts:\n        n += 1\n"
    "        judge(task, generate(task))\n",
    "def f(task):\n    n = 0\n    while True:\n        n += 1\n"
    "        judge(task, generate(task))\n"
    "        if n > 5:\n            raise RuntimeError('gave up')\n",
]


@pytest.mark.parametrize("body", BOUNDED)
def test_bounded_while_loops_are_clean(tmp_path: Path, body: str) -> None:
    assert codes_for(tmp_path, body, {"EL501"}) == []


def test_a_loop_exiting_on_the_judges_score_only_is_unbounded(tmp_path: Path) -> None:
    body = ("def f(task):\n    score = 0.0\n    while score < 0.8:\n"
            "        score = float(judge(task, generate(task)))\n")
    assert codes_for(tmp_path, body, {"EL501"}) == [("EL501", 7)]


def test_pass_flag_with_a_score_check_in_code_is_clean(tmp_path: Path) -> None:
    body = ("def f(task, threshold=0.8):\n    v = json.loads(judge(task, generate(task)))\n"
            "    if v['pass'] and v['score'] >= threshold:\n        return True\n")
    assert codes_for(tmp_path, body, {"EL503"}) == []


def test_json_of_non_judge_data_is_not_el504(tmp_path: Path) -> None:
    body = "def f(path):\n    with open(path) as fh:\n        return json.loads(fh.read())\n"
    assert codes_for(tmp_path, body, {"EL504"}) == []


def test_judge_json_validated_with_a_model_is_clean(tmp_path: Path) -> None:
    body = ("def f(task, Verdict):\n    data = json.loads(judge(task, 'x'))\n"
            "    return Verdict.model_validate(data)\n")
    assert codes_for(tmp_path, body, {"EL504"}) == []


def test_judge_json_unvalidated_is_el504_once(tmp_path: Path) -> None:
    body = ("def f(task):\n    data = json.loads(judge(task, 'x'))\n"
            "    again = json.loads(judge(task, 'y'))\n    return data, again\n")
    assert codes_for(tmp_path, body, {"EL504"}) == [("EL504", 6), ("EL504", 7)]


def test_write_mode_in_a_plain_loop_without_llm_is_clean(tmp_path: Path) -> None:
    body = ("def f(rows):\n    for i, row in enumerate(rows):\n"
            "        with open(f'part-{i}.txt', 'w') as fh:\n            fh.write(row)\n")
    assert codes_for(tmp_path, body, {"EL505"}) == []


def test_last_not_best_ignores_loops_without_an_evaluator(tmp_path: Path) -> None:
    body = ("def f(task):\n    d = ''\n    for _ in range(3):\n        d = generate(task + d)\n"
            "    return d\n")
    assert codes_for(tmp_path, body, {"EL502"}) == []


def test_well_built_loop_is_clean_for_every_python_rule(tmp_path: Path) -> None:
    body = """\
def refine(task, max_attempts=4, threshold=0.8):
    best, best_score = "", -1.0
    feedback = ""
    for attempt in range(max_attempts):
        answer = generate(task, feedback)
        try:
            verdict = json.loads(judge(task, answer))
        except json.JSONDecodeError:
            continue
        score = float(verdict.get("score", 0.0))
        if not 0.0 <= score <= 1.0:
            continue
        with open("results.jsonl", "a") as fh:
            fh.write(json.dumps({"attempt": attempt, "score": score}) + "\\n")
        if score > best_score:
            best, best_score = answer, score
        if score >= threshold:
            break
        feedback = str(verdict.get("feedback", ""))
    return best
"""
    codes = {"EL201", "EL202", "EL203", "EL301", "EL302", "EL401", "EL501", "EL502", "EL503",
             "EL504", "EL505"}
    assert codes_for(tmp_path, body, codes) == []
