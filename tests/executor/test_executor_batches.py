"""``mode: batch``: the same loop through the Message Batches API of the loopback server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.executor.conftest import (
    API_KEY,
    GEN_MARKER,
    JUDGE_SYSTEM,
    RUBRIC_MARKER,
    generator_answers,
    invoke,
    is_generator,
    is_judge,
    read_results,
    write_loop,
)
from tests.executor.messages_server import (
    MessagesServer,
    all_text,
    error,
    expired,
    message,
    verdict,
)
from tests.executor.test_executor_loop import by_attempt, scores_by_output

ROOT = Path(__file__).resolve().parents[2]
FAST = ("--batch-poll", "0.01")
VOLATILE = {"run_id", "evaluated_at", "cost_breakdown", "total_cost_usd"}


def script(server: MessagesServer) -> None:
    """Deterministic per request: each case improves, then one regresses (best kept)."""
    server.route(is_generator, by_attempt({1: "first try", 2: "second try", 3: "third try"}))
    server.route(is_judge, scores_by_output({
        "first try": verdict(0.7, feedback="FEEDBACK-ONE add an example",
                             failure_category="incomplete"),
        "second try": verdict(0.8, feedback="FEEDBACK-TWO shorter please"),
        "third try": verdict(0.6, feedback="FEEDBACK-THREE worse"),
    }))


def stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in records),
                  key=lambda r: r["case_id"])


def test_batch_records_equal_direct_records(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    script(server)
    direct = write_loop(tmp_path / "direct", cases=5, pass_threshold=0.95)
    assert invoke(direct).exit_code == 0
    direct_records = read_results(tmp_path / "direct" / "out" / "results.jsonl")
    direct_calls = len(server.headers)
    assert direct_calls == 30 and not server.batch_creates

    server.requests.clear()
    batch = write_loop(tmp_path / "batch", cases=5, pass_threshold=0.95, mode="batch")
    result = invoke(batch, *FAST)
    assert result.exit_code == 0, result.stderr
    batch_records = read_results(tmp_path / "batch" / "out" / "results.jsonl")
    assert len(server.headers) == direct_calls  # not one direct call more
    assert stable(batch_records) == stable(direct_records)
    for d, b in zip(sorted(direct_records, key=lambda r: r["case_id"]),
                    sorted(batch_records, key=lambda r: r["case_id"]), strict=True):
        assert b["total_cost_usd"] == pytest.approx(d["total_cost_usd"] / 2)  # batch price
    # Waves: the generator calls of every case, then their evaluator calls, and so on.
    waves = server.batch_creates
    assert [sorted({cid.split("-")[1] for cid in wave}) for wave in waves] == [
        ["g1"], ["e1"], ["g2"], ["e2"], ["g3"], ["e3"]]
    assert all(len(wave) == 5 for wave in waves)
    summary = json.loads((tmp_path / "batch" / "out" / "summary.json").read_text())
    assert summary["mode"] == "batch" and summary["batches"]["submitted"] == 6
    assert result.stderr.count(": 5 request(s) submitted (l1-") == 6  # one line per batch


def test_batch_isolation(tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    script(server)
    spec = write_loop(tmp_path, cases=2, pass_threshold=0.95)
    assert invoke(spec, "--batch", *FAST).exit_code == 0  # the flag, not the spec
    assert server.batch_creates and not server.headers
    judge_bodies, gen_bodies = server.bodies(is_judge), server.bodies(is_generator)
    assert len(judge_bodies) == 6 and len(gen_bodies) == 6
    for body in judge_bodies:
        text = all_text(body)
        assert GEN_MARKER not in text and "SECRET-THOUGHT-991" not in text
        assert "INLINE-REASONING-17" not in text and len(body["messages"]) == 1
    for body in gen_bodies:
        assert RUBRIC_MARKER not in all_text(body) and JUDGE_SYSTEM not in all_text(body)
    [record, _] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["output"] == "second try" and record["best_attempt"] == 2


def test_transient_request_errors_and_expiry_are_resubmitted(
        tmp_path: Path, api_env: MessagesServer) -> None:
    server = api_env
    server.expire_batches = 1  # the whole first batch expires
    server.route(is_generator, [error(529), expired(),
                                message("<answer>fine answer</answer>")])
    server.route(is_judge, verdict(0.9, feedback="good"))
    spec = write_loop(tmp_path, cases=1, mode="batch")
    result = invoke(spec, *FAST)
    assert result.exit_code == 0, result.stderr
    [record] = read_results(tmp_path / "out" / "results.jsonl")
    assert record["pass"] is True and record["output"] == "fine answer"
    assert record["attempt_history"][0]["attempt"] == 1 and record["attempts"] == 1
    gen_waves = [w for w in server.batch_creates if w[0].endswith("-g1")]
    assert len(gen_waves) == 4  # expired batch, errored 529, expired request, success
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["batches"]["resubmitted"] == 3 and summary["retries"] == 3


def test_a_request_error_that_retries_cannot_fix_stops_the_run(
        tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_generator, error(400))
    spec = write_loop(tmp_path, cases=2, mode="batch")
    result = invoke(spec, *FAST)
    assert result.exit_code == 2
    assert "invalid_request_error" in result.stderr
    assert "request l1-g1 " in result.stderr or "request l2-g1 " in result.stderr
    assert API_KEY not in result.stderr


def test_requests_that_keep_expiring_give_up(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_generator, expired())
    spec = write_loop(tmp_path, cases=1, mode="batch", max_retries=2)
    result = invoke(spec, *FAST)
    assert result.exit_code == 2 and "expired; gave up after 3 tries" in result.stderr


def test_polls_until_the_batch_ends(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.batch_hold_s = 0.15
    generator_answers(api_env, "held answer")
    api_env.route(is_judge, verdict(0.95))
    spec = write_loop(tmp_path, cases=2, mode="batch")
    assert invoke(spec, "--batch-poll", "0.02").exit_code == 0
    assert api_env.batch_retrieves > 2 * len(api_env.batch_creates)  # in_progress, then ended


def test_cost_cap_stops_new_waves(tmp_path: Path, api_env: MessagesServer) -> None:
    generator_answers(api_env, "a", "b", "c")
    api_env.route(is_judge, verdict(0.3, feedback="again"))
    spec = write_loop(tmp_path, cases=2, mode="batch", max_cost_usd=0.001)
    result = invoke(spec, *FAST)
    assert result.exit_code == 2 and "cost cap" in result.stderr


def start(spec: Path, server: MessagesServer) -> subprocess.Popen[str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.url,
           "PYTHONPATH": str(ROOT / "src")}
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return subprocess.Popen([sys.executable, "-m", "evallint.executor", str(spec),
                             "--batch-poll", "0.02"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_killed_batch_run_picks_up_its_batches(tmp_path: Path, server: MessagesServer) -> None:
    server.batch_hold_s = 0.25  # long enough to kill while a batch is in flight
    script(server)
    spec = write_loop(tmp_path, cases=8, pass_threshold=0.95, mode="batch", batch_cases=4)
    ledger = tmp_path / "out" / "results.batches.jsonl"
    results = tmp_path / "out" / "results.jsonl"

    proc = start(spec, server)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the second window's first wave is submitted
        if ledger.exists() and '"l6-g2"' in ledger.read_text():
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    before = len(read_results(results))
    assert before == 4  # the first window finished, the second is in flight
    in_flight = len(server.batch_creates)

    proc = start(spec, server)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert API_KEY not in out + err
    # At least the g1, e1 and g2 waves of cases 5-8 (more if the kill landed late).
    picked = re.search(r"picking up (\d+) submitted message batch\(es\)", err)
    assert picked is not None and int(picked.group(1)) >= 3
    assert "resuming: 4 of 8" in err
    # Nothing was submitted twice: the replayed calls read the recorded batches.
    submitted = [cid for wave in server.batch_creates for cid in wave]
    assert len(submitted) == len(set(submitted)) == 48
    assert len(server.batch_creates) == 12 > in_flight
    records = read_results(results)
    assert sorted(r["case_id"] for r in records) == [f"c{i}" for i in range(1, 9)]
    assert len({json.dumps(r["attempt_history"]) for r in records}) == 1  # all alike
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["batches"]["recovered"] == int(picked.group(1))


def test_ledger_skips_torn_lines_and_finished_cases(tmp_path: Path) -> None:
    from evallint.executor.batches import BatchLedger

    path = tmp_path / "results.batches.jsonl"
    path.write_text(
        json.dumps({"batch_id": "b1", "requests": [["l1-g1", "c1", "f1"],
                                                   ["l2-g1", "c2", "f2"]]}) + "\n"
        + "not json\n" + json.dumps({"batch_id": "b2", "requests": "x"}) + "\n"
        + json.dumps({"batch_id": "b3", "requests": [["l2-e1", "c2", "f3"]]}) + "\n"
        + '{"batch_id": "b4", "requ', encoding="utf-8")
    ledger = BatchLedger(path)
    assert ledger.load({"c1"}) == 2
    assert ledger.take("l1-g1", "f1") is None  # c1 is finished
    assert ledger.take("l2-g1", "other") is None  # a different request body
    assert ledger.take("l2-g1", "f2") == "b1"
    assert ledger.take("l2-g1", "f2") is None  # once
    assert ledger.take("l2-e1", "f3") == "b3"


def test_batch_mode_is_for_the_refine_loop_only(tmp_path: Path) -> None:
    from tests.executor.test_executor_batch import write_judge_loop

    spec = write_judge_loop(tmp_path / "a", 2)
    flagged = invoke(spec, "--batch")
    assert flagged.exit_code == 2 and "batched judge mode" in flagged.stderr
    in_spec = write_judge_loop(tmp_path / "b", 2)
    in_spec.write_text(in_spec.read_text() + "mode: batch\n")
    assert invoke(in_spec).exit_code == 2
    bad = write_loop(tmp_path / "c", cases=1, mode="bulk")
    result = invoke(bad)
    assert result.exit_code == 2 and "mode must be 'direct' or 'batch'" in result.stderr


def test_no_resume_drops_the_ledger(tmp_path: Path, api_env: MessagesServer) -> None:
    generator_answers(api_env, "fine")
    api_env.route(is_judge, verdict(0.95))
    spec = write_loop(tmp_path, cases=2, mode="batch")
    assert invoke(spec, *FAST).exit_code == 0
    ledger = tmp_path / "out" / "results.batches.jsonl"
    assert len(ledger.read_text().splitlines()) == 2
    assert invoke(spec, "--no-resume", *FAST).exit_code == 0
    assert len(ledger.read_text().splitlines()) == 2  # the new run's batches only


def test_recorded_batches_that_are_gone_are_submitted_again(
        tmp_path: Path, api_env: MessagesServer) -> None:
    generator_answers(api_env, "fine")
    api_env.route(is_judge, verdict(0.95))
    spec = write_loop(tmp_path, cases=2, mode="batch")
    assert invoke(spec, *FAST).exit_code == 0
    (tmp_path / "out" / "results.jsonl").unlink()  # as if killed before any record
    api_env.batches.clear()  # and the server no longer knows the batches (404)
    result = invoke(spec, *FAST)
    assert result.exit_code == 0, result.stderr
    assert "picking up 2 submitted message batch(es)" in result.stderr
    assert len(read_results(tmp_path / "out" / "results.jsonl")) == 2
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["batches"]["recovered"] == 0 and summary["batches"]["submitted"] == 2


def test_a_stopping_run_sends_no_batch_for_cancelled_calls(
        tmp_path: Path, api_env: MessagesServer) -> None:
    # Case 1's generator call fails for good while case 2 is still waiting on its evaluator
    # wave: the run stops, and nothing is submitted for case 2 after that.
    def generator(body: dict[str, Any], n: int) -> Any:
        if "question 1" in all_text(body):
            return error(400)
        return message("<answer>fine answer</answer>")

    api_env.route(is_generator, generator)
    api_env.route(is_judge, verdict(0.3, feedback="again"))
    spec = write_loop(tmp_path, cases=2, mode="batch", max_retries=0)
    result = invoke(spec, *FAST)
    assert result.exit_code == 2
    assert api_env.batch_creates == [["l1-g1", "l2-g1"]]
