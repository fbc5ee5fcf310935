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


# Refinement is decided by data flow (issue 37): the evaluator's output comes back into the
# next attempt, or decides whether the loop goes on.

def test_an_evaluation_run_over_cases_is_not_a_refinement_loop(tmp_path: Path) -> None:
    body = ("def f(cases):\n    rows = {}\n    answer = ''\n    for case in cases:\n"
            "        answer = generate(case)\n        rows[case] = judge(case, answer)\n"
            "    return answer, rows\n")
    assert codes_for(tmp_path, body, {"EL502"}) == []


def test_a_retry_inside_each_case_is_not_a_refinement_loop(tmp_path: Path) -> None:
    body = ("def f(cases):\n    second = ''\n    for case in cases:\n"
            "        first = generate(case)\n        notes = judge(case, first)\n"
            "        second = generate(case, notes)\n    return second\n")
    assert codes_for(tmp_path, body, {"EL502"}) == []


def test_feedback_carried_to_the_next_attempt_makes_a_refinement_loop(tmp_path: Path) -> None:
    body = ("def f(task):\n    notes, draft = '', ''\n    for n in range(3):\n"
            "        draft = generate(task, notes)\n        notes = judge(task, draft)\n"
            "    return draft\n")
    assert codes_for(tmp_path, body, {"EL502"}) == [("EL502", 10)]


def test_feedback_given_before_the_attempt_it_judges_next_is_refinement(tmp_path: Path) -> None:
    body = ("def f(task):\n    draft = generate(task)\n    for n in range(3):\n"
            "        notes = judge(task, draft)\n        draft = generate(task, notes)\n"
            "    return draft\n")
    assert codes_for(tmp_path, body, {"EL502"}) == [("EL502", 10)]


def test_a_stop_decided_by_the_judges_words_makes_a_refinement_loop(tmp_path: Path) -> None:
    body = ("def f(task):\n    draft = ''\n    for n in range(3):\n"
            "        draft = generate(task)\n        if 'LOOKS GOOD' in judge(task, draft):\n"
            "            break\n    return draft\n")
    assert codes_for(tmp_path, body, {"EL502", "EL503"}) == [("EL502", 11), ("EL503", 9)]


@pytest.mark.parametrize(("ret", "flagged"), [
    ("trail", False),
    ("{'attempts': trail, 'rounds': n}", False),
    ("json.dumps(trail)", False),
    ("trail[-1]", True),
    ("{'attempts': trail, 'final': draft}", True),
])
def test_returning_every_attempt_is_not_returning_the_last(tmp_path: Path, ret: str,
                                                           flagged: bool) -> None:
    body = ("def f(task):\n    trail, notes, draft, n = [], '', '', 0\n    for n in range(3):\n"
            "        draft = generate(task, notes)\n        notes = judge(task, draft)\n"
            f"        trail.append(draft)\n    return {ret}\n")
    assert codes_for(tmp_path, body, {"EL502"}) == ([("EL502", 11)] if flagged else [])


def test_a_list_rebound_inside_the_loop_holds_the_last_attempt(tmp_path: Path) -> None:
    body = ("def f(task):\n    trail, notes = [], ''\n    for n in range(3):\n"
            "        draft = generate(task, notes)\n        notes = judge(task, draft)\n"
            "        trail = [draft]\n    return trail\n")
    assert codes_for(tmp_path, body, {"EL502"}) == [("EL502", 11)]


def test_a_word_test_beside_a_score_compared_in_code_is_no_text_stop(tmp_path: Path) -> None:
    body = ("def f(task):\n    draft = ''\n    for n in range(3):\n"
            "        draft = generate(task)\n        v = judge(task, draft)\n"
            "        ok = 'PASS' in v and len(v) > 3\n"
            "        strict = 'PASS' in v and v.count('!') >= 2\n"
            "        if strict:\n            break\n        if ok:\n            return draft\n"
            "    return draft\n")
    # a length compared is no score: ``ok`` is the judge's word; ``strict`` compares its text
    assert codes_for(tmp_path, body, {"EL503"}) == [("EL503", 14)]


def test_records_read_back_from_a_file_are_the_programs_own(tmp_path: Path) -> None:
    body = ("def f(tasks):\n    with open('verdicts.jsonl', 'w') as fh:\n        for t in tasks:\n"
            "            fh.write(json.dumps({'task': t, 'v': judge(t, 'x')}) + '\\n')\n"
            "    rows = [json.loads(line) for line in open('verdicts.jsonl')]\n"
            "    return [int(r['v']) for r in rows]\n")
    assert codes_for(tmp_path, body, {"EL504"}) == [("EL504", 10)]


def test_a_results_path_from_the_caller_of_a_helper_loop(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "helpers.py": HELPERS,
        "evalrun.py": ("import json\nfrom helpers import generate, judge\n\n\n"
                       "def evaluate_all(rows, out_path):\n    for row in rows:\n"
                       "        answer = generate(row)\n        verdict = judge(row, answer)\n"
                       "        with open(out_path, 'w') as fh:\n"
                       "            fh.write(json.dumps({'row': row, 'verdict': verdict}))\n"),
        "jobs/nightly.py": ("from evalrun import evaluate_all\n\n"
                            "evaluate_all(['a'], 'out/results.jsonl')\n"),
        "jobs/scratch.py": ("from evalrun import evaluate_all\n\n"
                            "evaluate_all(['a'], 'tmp/last.txt')\n"),
    })
    result = lint_tree(tmp_path, {"EL505"})
    assert not result.tool_errors
    found = [(f.path, f.line, [r.path for r in f.related]) for f in result.findings]
    assert found == [("evalrun.py", 9, ["jobs/nightly.py"])]


def test_feedback_kept_on_the_object_the_generator_reads_is_refinement(tmp_path: Path) -> None:
    body = ("class Reviser:\n    notes = ''\n\n    def write(self, task):\n"
            "        return generate(task, self.notes)\n\n    def run(self, task):\n"
            "        draft = ''\n        for n in range(3):\n            draft = self.write(task)\n"
            "            self.notes = judge(task, draft)\n        return draft\n")
    assert codes_for(tmp_path, body, {"EL502"}) == [("EL502", 16)]


def test_a_verdict_kept_on_each_case_object_is_no_feedback(tmp_path: Path) -> None:
    body = ("def f(cases):\n    answer = ''\n    for case in cases:\n"
            "        answer = generate(case)\n        case.verdict = judge(case, answer)\n"
            "    return answer\n")
    assert codes_for(tmp_path, body, {"EL502"}) == []
