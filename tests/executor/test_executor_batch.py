"""Batched judge mode: seeded stratified sample, item_id coverage, re-asks, ambiguous kept."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from evallint.executor.batch import sample_ids
from tests.executor.conftest import EVALUATOR_PROMPT, invoke, read_results
from tests.executor.messages_server import MessagesServer, Reply, message, message_texts


def write_judge_loop(root: Path, n: int, **judge: Any) -> Path:
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "judge.prompt.md").write_text(EVALUATOR_PROMPT)
    lines = [{"id": f"i{k}", "input": f"q{k}", "output": f"answer {k}",
              "tags": ["math" if k % 3 else "prose"]} for k in range(1, n + 1)]
    (root / "outputs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    spec = {"judge": {"prompt": "prompts/judge.prompt.md", "model": "claude-haiku-4-5",
                      "batch_size": 3, **judge},
            "pass_threshold": 0.7, "cases": "outputs.jsonl", "results": "judged.jsonl",
            "concurrency": 1}
    path = root / "judge.loop.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def item_ids(body: dict[str, Any]) -> list[str]:
    return re.findall(r'"item_id": "(i\d+)"', message_texts(body)[0])


def test_batches_cover_every_item_and_reask_missing(tmp_path: Path,
                                                    api_env: MessagesServer) -> None:
    server = api_env
    state = {"dropped": False}

    def judge(body: dict[str, Any], n: int) -> Reply:
        ids = item_ids(body)
        if not state["dropped"] and "i2" in ids:  # the first reply forgets i2
            state["dropped"] = True
            ids = [i for i in ids if i != "i2"]
        items: list[dict[str, Any]] = [
            {"item_id": i, "score": 0.8 if i != "i3" else 0.4, "pass": False,
             "feedback": f"fb {i}", "rubric_scores": {}, "failure_category": None,
             "suggested_fix": None, "ambiguous": i == "i4"} for i in ids]
        return message("Here you go:\n```json\n" + json.dumps(items) + "\n```")

    server.route(lambda b: True, judge)
    spec = write_judge_loop(tmp_path, 5)
    result = invoke(spec)
    assert result.exit_code == 0, result.stderr
    records = {r["case_id"]: r for r in read_results(tmp_path / "judged.jsonl")}
    assert sorted(records) == ["i1", "i2", "i3", "i4", "i5"]
    asked = [item_ids(b) for b in server.requests]
    assert asked == [["i1", "i2", "i3"], ["i2"], ["i4", "i5"]]  # i2 re-asked on its own
    assert records["i2"]["score"] == 0.8 and records["i2"]["reasks"] == 1
    assert records["i3"]["pass"] is False and records["i1"]["pass"] is True  # 0.7 threshold
    assert records["i4"]["ambiguous"] is True
    for body in server.requests:  # each item shows input and output only
        assert "<output>\\nanswer" in message_texts(body)[0]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ambiguous"] == 1 and summary["cases"] == 5


def test_item_never_returned_is_a_parse_error(tmp_path: Path, api_env: MessagesServer) -> None:
    def judge(body: dict[str, Any], n: int) -> Reply:
        items: list[dict[str, Any]] = [{"item_id": i, "score": 0.9, "pass": True, "feedback": "ok",
                  "rubric_scores": {}, "failure_category": None, "suggested_fix": None}
                 for i in item_ids(body) if i != "i1"]
        return message(json.dumps(items))

    api_env.route(lambda b: True, judge)
    spec = write_judge_loop(tmp_path, 2, max_reasks=1)
    assert invoke(spec).exit_code == 0
    records = {r["case_id"]: r for r in read_results(tmp_path / "judged.jsonl")}
    assert records["i1"]["score"] is None and records["i1"]["pass"] is False
    assert records["i1"]["parse_error"] == "item missing from the reply"
    assert records["i2"]["score"] == 0.9
    assert len(api_env.requests) == 2  # one batch, one re-ask


def test_stratified_sample_is_seeded_and_proportional(tmp_path: Path) -> None:
    spec = write_judge_loop(tmp_path, 30)
    cases = tmp_path / "outputs.jsonl"
    first = sample_ids(cases, 9, 42, "tags")
    assert first is not None and len(first) == 9
    assert first == sample_ids(cases, 9, 42, "tags")  # same seed, same sample
    assert first != sample_ids(cases, 9, 43, "tags")
    prose = {f"i{k}" for k in range(3, 31, 3)}  # 10 of 30 are prose → 3 of 9
    assert len(first & prose) == 3
    assert sample_ids(cases, 100, 1, "tags") is None  # larger than the file: everything
    assert spec.exists()
