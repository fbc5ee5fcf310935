"""End-to-end behaviour of ``evallint run`` against the loopback Messages server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.executor.conftest import (
    API_KEY,
    GEN_MARKER,
    JUDGE_SYSTEM,
    RUBRIC_MARKER,
    invoke,
    is_generator,
    is_judge,
    read_results,
    write_loop,
)
from tests.executor.messages_server import (
    MessagesServer,
    Reply,
    all_text,
    message,
    message_texts,
    verdict,
)


def previous_answer(body: dict[str, Any]) -> str | None:
    """The answer a refinement request shows back to the generator (None on attempt 1)."""
    texts = message_texts(body)
    return texts[1] if len(texts) > 1 else None


def by_attempt(texts: dict[int, str], thinking: str | None = "SECRET-THOUGHT-991") -> Any:
    """Answer texts[1] first, then the text after the previous answer (texts are distinct)."""
    after = {texts[k]: texts.get(k + 1, texts[k]) for k in texts}

    def respond(body: dict[str, Any], n: int) -> Reply:
        prev = previous_answer(body)
        text = texts[1] if prev is None else after[prev]
        return message(f"<reasoning>INLINE-REASONING-17</reasoning><answer>{text}</answer>",
                       thinking=thinking)
    return respond


def scores_by_output(table: dict[str, Reply]) -> Any:
    def respond(body: dict[str, Any], n: int) -> Reply:
        out = re.search(r"<output>\s*(.*?)\s*</output>", body["messages"][0]["content"], re.S)
        assert out is not None
        return table[out.group(1)]
    return respond


def test_isolation_and_best_attempt_kept(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "first try", 2: "second try", 3: "third try"}))
    server.route(is_judge, scores_by_output({
        "first try": verdict(0.7, feedback="FEEDBACK-ONE add an example"),
        "second try": verdict(0.8, feedback="FEEDBACK-TWO shorter please"),
        "third try": verdict(0.6, feedback="FEEDBACK-THREE worse"),
    }))
    spec = write_loop(tmp_path, cases=1, pass_threshold=0.95, concurrency=1)
    result = invoke(spec)
    assert result.exit_code == 0, result.stderr

    [record] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["output"] == "second try"  # best, not last
    assert record["score"] == 0.8
    assert record["best_attempt"] == 2
    assert record["attempts"] == 3
    assert record["status"] == "max_attempts"
    assert [a["score"] for a in record["attempt_history"]] == [0.7, 0.8, 0.6]

    judge_bodies = server.bodies(is_judge)
    gen_bodies = server.bodies(is_generator)
    assert len(judge_bodies) == 3 and len(gen_bodies) == 3
    for body in judge_bodies:
        text = all_text(body)
        assert GEN_MARKER not in text  # never the generator's system prompt
        assert "SECRET-THOUGHT-991" not in text  # never a thinking block
        assert "INLINE-REASONING-17" not in text and "<reasoning>" not in text
        assert "draft notes" not in text
        assert len(body["messages"]) == 1  # no history: input and output only
    for body in gen_bodies:
        text = all_text(body)
        assert RUBRIC_MARKER not in text and JUDGE_SYSTEM not in text  # never the rubric
    # Attempt 2 hears the feedback on attempt 1 and its own previous answer, nothing more.
    second = next(b for b in gen_bodies if previous_answer(b) == "first try")
    texts = message_texts(second)
    assert texts[1] == "first try"
    assert "FEEDBACK-ONE add an example" in texts[2]
    assert "FEEDBACK-TWO" not in all_text(second)
    third = next(b for b in gen_bodies if previous_answer(b) == "second try")
    assert message_texts(third)[1] == "second try"
    assert "FEEDBACK-TWO shorter please" in message_texts(third)[2]


def test_pass_is_computed_in_code(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "a1", 2: "a2", 3: "a3"}, thinking=None))
    # The judge claims pass with a low score, then denies pass with a high one.
    server.route(is_judge, scores_by_output({
        "a1": verdict(0.5, passed=True, feedback="meh"),
        "a2": verdict(0.9, passed=False, feedback="fine"),
        "a3": verdict(0.1),
    }))
    spec = write_loop(tmp_path, cases=1, concurrency=1)
    assert invoke(spec).exit_code == 0
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    first, second = record["attempt_history"]
    assert first["pass"] is False and first["llm_pass"] is True
    assert second["pass"] is True and second["llm_pass"] is False
    assert record["status"] == "accepted" and record["pass"] is True
    assert record["attempts"] == 2 and record["output"] == "a2"
    assert record["failure_category"] is None


def test_score_is_the_weighted_rubric_average(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "x", 2: "y", 3: "z"}, thinking=None))
    # The judge's overall score (0.99) is ignored: 0.75 * 0.6 + 1.0 * 0.4 = 0.85.
    server.route(is_judge, verdict(0.99, rubric={"accuracy": 0.75, "clarity": 1.0}))
    spec = write_loop(tmp_path, cases=1, rubric={"accuracy": 0.6, "clarity": 0.4},
                      pass_threshold=0.86, max_attempts=1)
    assert invoke(spec).exit_code == 0
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["score"] == 0.85
    assert record["pass"] is False


def test_statuses_converged_low_quality_and_oscillation(tmp_path: Path,
                                                        api_env: MessagesServer) -> None:
    server = api_env
    firsts = {"hi": "h1", "lo": "l1", "osc": "A", "up": "u1"}
    nexts = {"h1": "h2", "h2": "h3", "h3": "h4", "l1": "l2", "l2": "l3", "l3": "l4",
             "A": "B", "B": "A", "u1": "u2", "u2": "u3", "u3": "u4", "u4": "u5"}

    def generate(body: dict[str, Any], n: int) -> Reply:
        prev = previous_answer(body)
        if prev is None:
            question = re.search(r"<question>\s*(\w+)", message_texts(body)[0])
            assert question is not None
            return message(f"<answer>{firsts[question.group(1)]}</answer>")
        return message(f"<answer>{nexts[prev]}</answer>")

    scores = {"h": 0.8, "l": 0.2, "A": 0.5, "B": 0.6}
    ups = {"u1": 0.1, "u2": 0.3, "u3": 0.5, "u4": 0.7, "u5": 0.8}

    def judge(body: dict[str, Any], n: int) -> Reply:
        out = re.search(r"<output>\s*(\S+)\s*</output>", body["messages"][0]["content"])
        assert out is not None
        key = out.group(1)
        return verdict(ups[key] if key in ups else scores[key[0]], feedback=f"fix {key}")

    server.route(is_generator, generate)
    server.route(is_judge, judge)
    cases = [{"id": k, "input": k} for k in firsts]
    spec = write_loop(tmp_path, cases=cases, pass_threshold=0.95, max_attempts=5,
                      convergence={"window": 2, "min_gain": 0.05, "low_quality_below": 0.5})
    assert invoke(spec).exit_code == 0
    got = {r["case_id"]: r for r in read_results(tmp_path / "out" / "results.jsonl")}
    assert (got["hi"]["status"], got["hi"]["stop_reason"], got["hi"]["attempts"]) == (
        "converged", "plateau", 3)
    assert (got["lo"]["status"], got["lo"]["attempts"]) == ("converged_low_quality", 3)
    assert (got["osc"]["stop_reason"], got["osc"]["attempts"]) == ("oscillation", 3)
    assert got["osc"]["output"] == "B" and got["osc"]["status"] == "converged"
    assert (got["up"]["status"], got["up"]["attempts"], got["up"]["score"]) == (
        "max_attempts", 5, 0.8)


def test_record_shape_and_summary(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "good answer", 2: "x", 3: "y"}))
    server.route(is_judge, verdict(0.9, rubric={"accuracy": 0.9}, feedback="good"))
    spec = write_loop(tmp_path, cases=4)
    result = invoke(spec)
    assert result.exit_code == 0, result.stderr
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert sorted(r["case_id"] for r in records) == ["c1", "c2", "c3", "c4"]
    for key in ("version", "run_id", "case_id", "input", "output", "score", "pass", "feedback",
                "attempts", "attempt_history", "generator_model", "evaluator_model",
                "rubric_scores", "failure_category", "suggested_fix", "contamination_warning",
                "cost_breakdown", "total_cost_usd", "evaluated_at"):
        assert key in records[0], key
    r = records[0]
    assert r["generator_model"] == "claude-sonnet-4-6"
    assert r["evaluator_model"] == "claude-haiku-4-5"
    # Usage per call 100 in / 50 out; placeholder prices sonnet 3/15, haiku 1/5 per million.
    assert r["cost_breakdown"]["generator"]["calls"] == 1
    assert r["cost_breakdown"]["generator"]["cost_usd"] == 0.00105
    assert r["cost_breakdown"]["evaluator"]["cost_usd"] == 0.00035
    assert r["total_cost_usd"] == 0.0014
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["cases"] == 4 and summary["pass_rate"] == 1.0
    assert summary["complete"] is True and summary["average_attempts"] == 1.0
    assert summary["total_cost_usd"] == 0.0056
    assert "4/4 cases done" in result.stderr


def test_resume_skips_finished_and_repairs_torn_line(tmp_path: Path,
                                                     api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "ans", 2: "ans2", 3: "ans3"}))
    server.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=5)
    out = tmp_path / "out"
    out.mkdir()
    done = [{"case_id": f"c{i}", "run_id": "old", "score": 0.9, "pass": True, "attempts": 1,
             "status": "accepted"} for i in (1, 2)]
    torn = '{"case_id": "c3", "run_id": "old", "sco'
    (out / "results.jsonl").write_text("".join(json.dumps(d) + "\n" for d in done) + torn)
    result = invoke(spec)
    assert result.exit_code == 0, result.stderr
    assert "torn last line" in result.stderr
    records = read_results(out / "results.jsonl")
    ids = [r["case_id"] for r in records]
    assert sorted(ids) == ["c1", "c2", "c3", "c4", "c5"]  # each exactly once
    assert [r["run_id"] for r in records[:2]] == ["old", "old"]
    asked = {m for b in server.bodies(is_generator) for m in re.findall(r"question \d",
                                                                         all_text(b))}
    assert asked == {"question 3", "question 4", "question 5"}
    # A second run has nothing left to do and sends nothing.
    before = len(server.requests)
    assert invoke(spec).exit_code == 0
    assert len(server.requests) == before
    assert len(read_results(out / "results.jsonl")) == 5


def test_no_resume_sets_old_results_aside(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_generator, by_attempt({1: "a", 2: "b", 3: "c"}))
    api_env.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=2)
    assert invoke(spec).exit_code == 0
    assert invoke(spec, "--no-resume").exit_code == 0
    files = sorted(p.name for p in (tmp_path / "out").glob("results*.jsonl"))
    assert len(files) == 2 and "results.jsonl" in files
    assert len(read_results(tmp_path / "out" / "results.jsonl")) == 2


def test_concurrency_overlaps_requests(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.default_delay = 0.05
    server.route(is_generator, by_attempt({1: "a", 2: "b", 3: "c"}, thinking=None))
    server.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=8, concurrency=4)
    assert invoke(spec, "--quiet").exit_code == 0
    assert server.max_in_flight >= 2
    assert server.max_in_flight <= 4


def test_api_key_never_written_or_printed(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "a", 2: "b", 3: "c"}))
    server.route(is_judge, verdict(0.2))
    spec = write_loop(tmp_path, cases=2)
    ok = invoke(spec)
    sent = server.headers[0]
    assert API_KEY in (sent.get("x-api-key") or sent.get("authorization") or "")  # on the wire
    # An auth failure must not echo it either.
    server.routes.clear()
    from tests.executor.messages_server import error

    server.route(lambda b: True, error(401))
    failed = invoke(write_loop(tmp_path / "b", cases=1))
    assert failed.exit_code == 2
    assert "401" in failed.stderr and "Traceback" not in failed.stderr
    for text in (ok.stdout, ok.stderr, failed.stdout, failed.stderr):
        assert API_KEY not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(encoding="utf-8", errors="replace"), path


def test_rule_checks_run_before_the_judge(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "short", 2: "a long enough answer", 3: "z"}))
    server.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=1, concurrency=1,
                      checks=[{"type": "length", "min_chars": 10}])
    assert invoke(spec).exit_code == 0
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    first = record["attempt_history"][0]
    assert first["score"] == 0.0 and first["failure_category"] == "rule_check"
    assert len(server.bodies(is_judge)) == 1  # the failed check cost no judge call
    assert record["output"] == "a long enough answer" and record["pass"] is True
    assert "failed automatic checks" in message_texts(server.bodies(is_generator)[1])[2]


def test_cost_cap_stops_new_work_and_resume_finishes(tmp_path: Path,
                                                     api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, by_attempt({1: "a", 2: "b", 3: "c"}, thinking=None))
    server.route(is_judge, verdict(0.9))
    # 150 tokens per call at 10 $/M tokens in and out → $0.0015 per call, $0.003 per case.
    prices = {"claude-sonnet-4-6": {"input": 10.0, "output": 10.0},
              "claude-haiku-4-5": {"input": 10.0, "output": 10.0}}
    spec = write_loop(tmp_path, cases=6, concurrency=1, prices=prices)
    capped = invoke(spec, "--max-cost", "0.006")
    assert capped.exit_code == 2
    assert "cost cap" in capped.stderr and "Traceback" not in capped.stderr
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert len(records) == 2
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stopped"] == "cost_cap" and summary["cases_remaining"] == 4
    assert invoke(spec).exit_code == 0
    ids = [r["case_id"] for r in read_results(tmp_path / "out" / "results.jsonl")]
    assert sorted(ids) == [f"c{i}" for i in range(1, 7)]


def test_temperature_only_sent_when_the_sdk_has_it(tmp_path: Path,
                                                   api_env: MessagesServer) -> None:
    from evallint.executor.client import sdk_accepts

    api_env.route(is_generator, by_attempt({1: "a", 2: "b", 3: "c"}))
    api_env.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=1, evaluator={
        "prompt": "prompts/evaluator.prompt.md", "model": "claude-haiku-4-5", "temperature": 0.0})
    result = invoke(spec)
    assert result.exit_code == 0, result.stderr
    [judged] = api_env.bodies(is_judge)
    if sdk_accepts("temperature"):
        assert judged["temperature"] == 0.0
    else:
        assert "temperature" not in judged
        assert "temperature is not sent" in result.stderr
