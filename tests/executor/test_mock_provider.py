"""The mock provider (``--mock``, ``--mock-script``): the loop, calibration and the batch
transport run offline through the real client and SDK, and the mock is never chosen unless the
command line asks for it."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from evallint.executor.calibcli import calibrate
from evallint.executor.client import MessagesClient
from evallint.executor.mock import MockProvider, load_script, overlap
from evallint.executor.runner import RunOptions, execute, load_plan
from evallint.executor.spec import load_spec
from tests.executor.conftest import invoke, read_results, write_loop

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "fixtures" / "loop"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, a base URL that would fail if it were used, and no socket may connect."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the mock provider opened a connection: {args[1:]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the bundled demo loop (fixtures/loop); returns its spec."""
    shutil.copytree(LOOP, tmp_path / "loop", ignore=shutil.ignore_patterns("results"))
    return tmp_path / "loop" / "evallint.loop.yaml"


def run_cli(*args: str) -> Result:
    return invoke(Path(args[0]), *args[1:])


def calibrate_cli(*args: str) -> Result:
    return CliRunner().invoke(calibrate, list(args), catch_exceptions=False)


# ---------------------------------------------------------------------------- run


def test_the_demo_loop_runs_offline_end_to_end(demo: Path) -> None:
    result = run_cli(str(demo), "--mock")
    assert result.exit_code == 0, result.stderr
    err = result.stderr
    assert "mock provider (built-in replies): no network, no API key, every call costs $0" in err
    # the calibration gate is shown, not passed: a mock judge proves nothing
    assert "warning: a real run would not start: the evaluator has no calibration record" in err
    assert "--mock runs without it" in err
    assert "6/6 cases done, pass rate 100.0%, avg score 1.000, cost $0.0000 (24 mock calls; " \
           "nothing left this machine)" in err
    # refinement is visible in the progress lines: a first score below 0.85, then a pass
    assert "dns: accepted score 1.000 attempts 2 (0.750 → 1.000)" in err

    results = demo.parent / "results" / "mock" / "results.jsonl"  # not the real run's file
    assert not (demo.parent / "results" / "results.jsonl").exists()
    records = read_results(results)
    assert [r["case_id"] for r in records] == ["dns", "tls", "hash-salt", "cache", "gc",
                                               "idempotent"]
    expected = {json.loads(line)["id"]: json.loads(line)["expected"]
                for line in (LOOP / "cases.jsonl").read_text().splitlines() if line}
    for r in records:
        assert r["provider"] == "mock" and r["status"] == "accepted" and r["pass"] is True
        first, second = r["attempt_history"]
        assert first["score"] < 0.85 <= second["score"]
        assert first["output"].startswith("In short: ") and second["output"] == expected[
            r["case_id"]]
        assert "key terms" in first["feedback"] and first["failure_category"] == "incomplete"
        assert set(first["rubric_scores"]) == {"accuracy", "completeness", "clarity"}
        # the generator's thinking block was dropped before the judge saw the answer
        assert first["thinking_blocks_dropped"] == 1 and first["extraction"] == "answer_tag"
        assert r["total_cost_usd"] == 0.0
        for role in ("generator", "evaluator"):
            line = r["cost_breakdown"][role]
            assert line["calls"] == 2 and line["input_tokens"] > 0 and line["cost_usd"] == 0.0
            assert line["unpriced_calls"] == 0  # priced, at $0
    summary = json.loads((results.parent / "summary.json").read_text())
    assert summary["provider"] == "mock" and summary["mock_calls"] == 24
    assert summary["pass_rate"] == 1.0 and summary["complete"] is True
    assert summary["status_counts"] == {"accepted": 6}


def test_report_on_mock_results_says_so(demo: Path) -> None:
    from evallint.executor.report_html import report

    assert run_cli(str(demo), "--mock", "--quiet").exit_code == 0
    results = demo.parent / "results" / "mock" / "results.jsonl"
    out = CliRunner().invoke(report, [str(results)])
    assert out.exit_code == 0, out.stderr
    assert "(6 cases, pass rate 100.0%; 6 from the mock provider)" in out.stderr
    page = results.with_suffix(".html").read_text()
    assert "Mock provider:" in page and "6 of 6 records" in page


def test_the_mock_goes_through_the_real_client_and_sdk(demo: Path) -> None:
    """Same request building, same SDK, same accounting: only the HTTP transport differs."""
    import anthropic

    plan = load_plan(demo, RunOptions(mock=True, results=demo.parent / "out.jsonl"))
    provider = MockProvider.for_run(plan)
    seen: list[dict[str, Any]] = []
    handle = provider.handle

    def spy(method: str, path: str, body: bytes) -> Any:
        seen.append({"method": method, "path": path, "body": json.loads(body)})
        return handle(method, path, body)

    provider.handle = spy  # type: ignore[method-assign]
    client = MessagesClient.open(prices={}, max_cost_usd=None, max_retries=2, timeout_s=5,
                                 mock=provider)
    assert isinstance(client.sdk, anthropic.AsyncAnthropic)
    outcome = asyncio_run(execute(plan, RunOptions(quiet=True), client))
    asyncio_run(client.close())
    assert outcome.complete and outcome.finished == 6
    assert {(s["method"], s["path"]) for s in seen} == {("POST", "/v1/messages")}
    first = seen[0]["body"]
    assert first == client.params(model=first["model"], system=first["system"],
                                  messages=first["messages"], max_tokens=1024,
                                  temperature=None)
    assert provider.calls == 24 == len(seen)


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


def test_batch_mode_runs_offline(demo: Path) -> None:
    result = run_cli(str(demo), "--mock", "--batch", "--batch-poll", "0")
    assert result.exit_code == 0, result.stderr
    assert "message batch msgbatch_mock_" in result.stderr
    summary = json.loads((demo.parent / "results" / "mock" / "summary.json").read_text())
    assert summary["batches"]["submitted"] == 4 and summary["batches"]["requests"] == 24
    assert summary["pass_rate"] == 1.0


def test_batched_judge_mode_runs_offline(tmp_path: Path) -> None:
    from tests.executor.test_executor_batch import write_judge_loop

    spec = write_judge_loop(tmp_path, 4)
    lines = [json.loads(x) for x in (tmp_path / "outputs.jsonl").read_text().splitlines()]
    lines[0]["expected"] = lines[0]["output"]  # i1's output is exactly the reference
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = run_cli(str(spec), "--mock")
    assert result.exit_code == 0, result.stderr
    records = {r["case_id"]: r for r in read_results(tmp_path / "mock" / "judged.jsonl")}
    assert sorted(records) == ["i1", "i2", "i3", "i4"]
    assert records["i1"]["score"] == 1.0 and records["i1"]["pass"] is True
    assert all(r["status"] == "judged" and r["provider"] == "mock" for r in records.values())


# ---------------------------------------------------------------------------- calibrate


def test_calibrate_offline_shows_the_statistics_and_records_nothing(demo: Path) -> None:
    result = calibrate_cli(str(demo), "--mock")
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout
    assert "judge claude-haiku-4-5 (the mock provider's answer-key judge)" in out
    assert "cases: 12 good, 12 bad, 4 pair(s); 168 requests, $0.0000, 0 parse error(s)" in out
    for row in ("Cohen's kappa              1.000  >= 0.6      ok",
                "ROC AUC (good above bad)   1.000  >= 0.9      ok",
                "position bias              0.000  <= 0.1      ok",
                "flip rate                  0.000  <= 0.1      ok"):
        assert row in out
    assert "PASSED: the judge meets every threshold" in out
    assert "it proves nothing about yours and is not recorded" in out
    assert "nothing is recorded" in result.stderr
    assert not list(demo.parent.parent.rglob("evallint.lock"))
    assert not (ROOT / "evallint.lock").exists()
    # so the real gate still refuses (and never asks for a key first)
    real = run_cli(str(demo))
    assert real.exit_code == 1
    assert "not started: the evaluator has no calibration record" in real.stderr


def test_calibrate_json_offline(demo: Path) -> None:
    result = calibrate_cli(str(demo), "--mock", "--output-format", "json", "--quiet")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["provider"] == "mock" and data["requests"] == 168
    assert data["metrics"]["parse_errors"] == 0 and data["cost_usd"] == 0.0
    # a deterministic spread across repeats, so stability is measured on real numbers
    assert 0 < data["metrics"]["score_spread"] < 0.1


def test_calibrate_with_a_script(demo: Path, tmp_path: Path) -> None:
    """A scripted judge that passes one bad answer: the person and the judge part ways."""
    script = tmp_path / "lenient.yaml"
    script.write_text(yaml.safe_dump([{"role": "evaluator", "case": "b-checksum", "reply": {
        "json": {**VERDICT, "score": 0.95, "pass": True, "feedback": "fine",
                 "rubric_scores": dict.fromkeys(("accuracy", "completeness", "clarity"),
                                                0.95)}}}]))
    result = calibrate_cli(str(demo), "--mock-script", str(script))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"replies from {script}, the built-in ones for the rest" in result.stderr
    assert "disagreements with the person (1" in result.stdout, result.stdout
    assert "b-checksum (line 21, bad): scores 0.950, 0.950, 0.950" in result.stdout


def test_the_socket_guard_would_catch_a_real_request(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the same guard the mock tests run with, the real transport cannot connect: so
    the mock runs above opened no socket."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-guard")
    spec = write_loop(tmp_path, cases=1, max_retries=0)
    result = run_cli(str(spec))
    assert result.exit_code == 2
    assert "API error (APIConnectionError) calling claude-sonnet-4-6" in result.stderr


# ---------------------------------------------------------------------------- scripts


VERDICT = {"score": 0.3, "pass": False, "feedback": "scripted", "rubric_scores": {},
           "failure_category": "incomplete", "suggested_fix": None}


def test_the_bundled_reply_script(demo: Path) -> None:
    """fixtures/loop/mock-replies.yaml: a judge that never passes case gc (replies in order,
    the last repeating) and a 429 on the first HTTP question, retried by the client."""
    script = demo.parent / "mock-replies.yaml"
    result = run_cli(str(demo), "--mock-script", str(script), "--fail-under", "0.9")
    assert result.exit_code == 1, result.stderr
    assert f"replies from {script}, the built-in ones for the rest" in result.stderr
    assert "gc: max_attempts score 0.620 attempts 3 (0.490 → 0.620 → 0.620)" in result.stderr
    assert "failed: pass rate 83.3% is below --fail-under 90.0%" in result.stderr
    summary = json.loads((demo.parent / "results" / "mock" / "summary.json").read_text())
    assert summary["retries"] == 1 and summary["mock_calls"] == 27
    gc = next(r for r in read_results(demo.parent / "results" / "mock" / "results.jsonl")
              if r["case_id"] == "gc")
    assert [a["feedback"] for a in gc["attempt_history"]] == [
        "Say what 'no longer reachable' means.", "Better; give one concrete example.",
        "Better; give one concrete example."]


def test_jsonl_script_by_role_case_and_match(tmp_path: Path) -> None:
    spec = write_loop(tmp_path, cases=3, max_attempts=2)
    rules = [
        {"role": "generator", "case": "c1", "replies": ["<answer>first c1</answer>",
                                                       {"text": "<answer>second c1</answer>",
                                                        "thinking": "scripted"}]},
        {"role": "evaluator", "match": "second c1", "reply": {"json": {
            **VERDICT, "score": 0.95, "pass": True}}},
        {"role": "evaluator", "replies": [{"json": VERDICT}]},
    ]
    script = tmp_path / "replies.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    result = run_cli(str(spec), "--mock-script", str(script))
    assert result.exit_code == 0, result.stderr
    records = {r["case_id"]: r for r in read_results(tmp_path / "out" / "mock" / "results.jsonl")}
    c1 = records["c1"]["attempt_history"]
    assert [a["output"] for a in c1] == ["first c1", "second c1"]
    assert [a["score"] for a in c1] == [0.3, 0.95] and records["c1"]["pass"] is True
    # c2 and c3: the built-in generator, the scripted judge (the catch-all evaluator rule)
    for case in ("c2", "c3"):
        history = records[case]["attempt_history"]
        assert history[1]["output"] == f"answer {case[1]}" and records[case]["pass"] is False
        assert [a["feedback"] for a in history] == ["scripted", "scripted"]


def test_script_unmatched_error_and_errors_named_by_line(tmp_path: Path) -> None:
    spec = write_loop(tmp_path, cases=1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("- role: generator\n  reply: hi\n- role: judge\n  reply: hi\n")
    result = run_cli(str(spec), "--mock-script", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:3: role must be 'generator' or 'evaluator'" in result.stderr
    assert not (tmp_path / "out").exists()  # refused before any work

    script = tmp_path / "strict.yaml"
    script.write_text(yaml.safe_dump({"unmatched": "error", "rules": [
        {"role": "generator", "reply": "<answer>only the generator is scripted</answer>"}]}))
    result = run_cli(str(spec), "--mock-script", str(script))
    assert result.exit_code == 2
    assert "no rule answers this evaluator request for case c1 (unmatched: error)" in \
        result.stderr

    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text('{"role": "generator", "reply": "x"}\n{"reply": {"status": 302}}\n')
    with pytest.raises(Exception, match=r"bad\.jsonl:2: status must be 200"):
        load_script(bad_jsonl)


def test_a_scripted_server_error_is_retried_then_gives_up(tmp_path: Path) -> None:
    spec = write_loop(tmp_path, cases=1, max_retries=2)
    script = tmp_path / "down.yaml"
    script.write_text(yaml.safe_dump([{"role": "generator", "reply": {
        "status": 529, "retry_after": 0, "message": "scripted overload"}}]))
    result = run_cli(str(spec), "--mock-script", str(script))
    assert result.exit_code == 2
    assert "API error 529 (OverloadedError) calling claude-sonnet-4-6" in result.stderr
    assert "'overloaded_error', 'message': 'scripted overload'" in result.stderr
    assert "gave up after 3 tries" in result.stderr


# ---------------------------------------------------------------------------- never implicit


def test_the_mock_is_never_chosen_without_the_flag(demo: Path, tmp_path: Path) -> None:
    # the bundled loop, calibration off, no flag: still needs a key
    spec = demo.parent / "nocal.loop.yaml"
    spec.write_text(demo.read_text().replace("calibration:\n", "calibration_off:\n", 1)
                    .split("calibration_off:")[0] + "calibration: false\n")
    result = run_cli(str(spec))
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in result.stderr
    assert "mock" not in result.stderr.lower()
    # nor by the environment
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALLINT_MOCK", "1")
        mp.setenv("EVALLINT_PROVIDER", "mock")
        assert "ANTHROPIC_API_KEY is not set" in run_cli(str(spec)).stderr
    # nor by a model name
    named = write_loop(tmp_path / "named", cases=1)
    data = yaml.safe_load(named.read_text())
    data["generator"]["model"] = "mock/generator"
    data["evaluator"]["model"] = "mock/judge"
    named.write_text(yaml.safe_dump(data))
    for prompt in (tmp_path / "named" / "prompts").iterdir():
        prompt.write_text(prompt.read_text().replace("model: claude-sonnet-4-6\n", "")
                          .replace("model: claude-haiku-4-5\n", ""))
    result = run_cli(str(named))
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in result.stderr
    # nor by a spec key: a spec cannot ask for it at all
    keyed = write_loop(tmp_path / "keyed", cases=1, provider="mock")
    result = run_cli(str(keyed))
    assert result.exit_code == 2 and "unknown key 'provider'" in result.stderr
    # calibrate alike
    result = calibrate_cli(str(demo))
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in result.stderr


def test_real_and_mock_records_never_mix(tmp_path: Path) -> None:
    spec = write_loop(tmp_path, cases=2)
    shared = tmp_path / "shared.jsonl"
    assert run_cli(str(spec), "--mock", "--results", str(shared)).exit_code == 0
    assert load_spec(spec).results == tmp_path / "out" / "results.jsonl"
    # a real run resuming that file would count the mock's cases as done: refused (before any
    # request, so even with a key nothing is sent)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_API_KEY", "sk-ant-test-never-sent")
        result = run_cli(str(spec), "--results", str(shared))
    assert result.exit_code == 2
    assert f"{shared}:1: this results file holds mock-provider records" in result.stderr
    # and a mock run does not add to a real run's file
    real = tmp_path / "real.jsonl"
    real.write_text(json.dumps({"case_id": "c1", "pass": True}) + "\n")
    result = run_cli(str(spec), "--mock", "--results", str(real))
    assert result.exit_code == 2 and "holds real records" in result.stderr


def test_the_judge_scores_word_overlap() -> None:
    precision, recall, hit, total = overlap("In short: equal passwords hash",
                                            "So equal passwords hash differently")
    assert (hit, total) == (3, 4) and recall == 0.75
    assert precision == pytest.approx(3 / 4)  # "short" is not in the reference
