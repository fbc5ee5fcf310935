"""Retries, backoff, parse errors and API failures, through the real SDK."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evallint.executor.client import CostMeter, MessagesClient
from evallint.executor.plan import make_plan
from evallint.executor.prices import PriceTable
from evallint.executor.runner import RunOptions, RunOutcome, execute
from evallint.executor.spec import load_spec
from tests.executor.conftest import (
    API_KEY,
    generator_answers,
    invoke,
    is_generator,
    is_judge,
    read_results,
    write_loop,
)
from tests.executor.messages_server import (
    MessagesServer,
    error,
    malformed,
    message,
    message_texts,
    verdict,
)


def run_with_recorded_sleeps(spec: Path, server: MessagesServer) -> tuple[RunOutcome, list[float]]:
    """Run in-process with the backoff sleeps recorded (and skipped), to check the delays."""
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    async def go() -> RunOutcome:
        plan = make_plan(load_spec(spec))
        client = MessagesClient.create(api_key=API_KEY, prices=PriceTable.load({}),
                                       meter=CostMeter(None), max_retries=plan.spec.max_retries,
                                       timeout_s=10, base_url=server.url)
        client.sleep = fake_sleep
        try:
            return await execute(plan, RunOptions(quiet=True), client)
        finally:
            await client.close()

    return asyncio.run(go()), slept


def test_429_is_survived_and_retry_after_obeyed(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, [error(429, retry_after="7"), message("<answer>ok</answer>")])
    server.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=1)
    outcome, slept = run_with_recorded_sleeps(spec, server)
    assert outcome.complete
    assert slept == [7.0]  # the server's retry-after, not our own backoff
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["pass"] is True and record["output"] == "ok"
    assert len(server.bodies(is_generator)) == 2


def test_500_and_529_are_retried_with_backoff(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, [error(500), error(529), error(503), message("<answer>ok</answer>")])
    server.route(is_judge, verdict(0.9))
    spec = write_loop(tmp_path, cases=1)
    outcome, slept = run_with_recorded_sleeps(spec, server)
    assert outcome.complete and outcome.summary["retries"] == 3
    assert len(slept) == 3 and slept[0] < slept[1] < slept[2]  # exponential backoff


def test_retries_exhausted_is_a_tool_error(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_generator, error(500))
    spec = write_loop(tmp_path, cases=1, max_retries=1)
    result = invoke(spec)
    assert result.exit_code == 2
    assert "gave up after 2 tries" in result.stderr and "Traceback" not in result.stderr
    assert len(api_env.requests) == 2


def test_400_is_not_retried(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_generator, error(400))
    result = invoke(write_loop(tmp_path, cases=1))
    assert result.exit_code == 2 and "API error 400" in result.stderr
    assert len(api_env.requests) == 1


def test_malformed_http_body_is_retried(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.route(is_generator, [malformed(), message("<answer>ok</answer>")])
    server.route(is_judge, verdict(0.9))
    result = invoke(write_loop(tmp_path, cases=1), "--quiet")
    assert result.exit_code == 0, result.stderr
    assert len(server.bodies(is_generator)) == 2


def test_invalid_judge_json_retried_once_then_recorded(tmp_path: Path,
                                                       api_env: MessagesServer) -> None:
    server = api_env
    generator_answers(server, "ans")
    server.route(is_judge, message("I think it is quite good, 8/10."))
    spec = write_loop(tmp_path, cases=1, max_attempts=1)
    assert invoke(spec).exit_code == 0
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["score"] is None and record["pass"] is False  # never a default score
    assert record["failure_category"] == "evaluator_parse_error"
    assert "no JSON object" in record["parse_error"]
    judge_calls = server.bodies(is_judge)
    assert len(judge_calls) == 2  # asked once more, then given up
    retry = message_texts(judge_calls[1])
    assert retry[1] == "I think it is quite good, 8/10."
    assert "could not be used" in retry[2]


def test_invalid_judge_json_then_valid_is_scored(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    generator_answers(server, "ans")
    server.route(is_judge, [message('{"score": 1.7, "pass": true}'), verdict(0.9)])
    spec = write_loop(tmp_path, cases=1, max_attempts=1)
    assert invoke(spec).exit_code == 0
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["score"] == 0.9 and record["pass"] is True and record["parse_error"] is False
    assert "verdict lacks" in message_texts(server.bodies(is_judge)[1])[2]


def test_missing_api_key_is_a_tool_error(tmp_path: Path, server: MessagesServer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    result = invoke(write_loop(tmp_path, cases=1))
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY is not set" in result.stderr
    assert server.requests == []
