"""Fixtures for the executor tests: a loopback Messages server and a loop written to disk."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from evallint.executor.cli import run
from tests.executor.messages_server import MessagesServer, message, system_contains

API_KEY = "sk-ant-test-DO-NOT-LEAK-5f1e2d3c4b5a"
GEN_MARKER = "GENSYS-7731 You are a concise assistant"
RUBRIC_MARKER = "RUBRIC-4412"
JUDGE_SYSTEM = "You grade answers"

GENERATOR_PROMPT = f"""---
step: generator
model: claude-sonnet-4-6
---
## System
{GEN_MARKER}. Think first, then give the final answer in <answer> tags.

## User
<question>
{{{{input}}}}
</question>
"""

EVALUATOR_PROMPT = f"""---
step: evaluator
model: claude-haiku-4-5
---
## System
{JUDGE_SYSTEM} for correctness. {RUBRIC_MARKER}: accuracy and clarity, each 0 to 1.
Reply with only a JSON object:
{{"score": 0.0, "pass": false, "feedback": "...", "rubric_scores": {{"accuracy": 0.0}},
"failure_category": null, "suggested_fix": null}}

## User
<input>
{{{{input}}}}
</input>
<output>
{{{{output}}}}
</output>
"""


def is_judge(body: dict[str, Any]) -> bool:
    return system_contains(JUDGE_SYSTEM)(body)


def is_generator(body: dict[str, Any]) -> bool:
    return system_contains(GEN_MARKER)(body)


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as srv:
        yield srv


@pytest.fixture
def api_env(server: MessagesServer, monkeypatch: pytest.MonkeyPatch) -> MessagesServer:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    return server


def write_loop(root: Path, *, cases: list[dict[str, Any]] | int = 3,
               generator_prompt: str = GENERATOR_PROMPT, evaluator_prompt: str = EVALUATOR_PROMPT,
               evaluator_name: str = "evaluator.prompt.md", **spec: Any) -> Path:
    """Write a loop (spec, prompts, cases) under ``root`` and return the spec's path."""
    prompts = root / "prompts"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "generator.prompt.md").write_text(generator_prompt, encoding="utf-8")
    (prompts / evaluator_name).write_text(evaluator_prompt, encoding="utf-8")
    if isinstance(cases, int):
        cases = [{"id": f"c{i}", "input": f"question {i}", "expected": f"answer {i}",
                  "tags": ["even" if i % 2 == 0 else "odd"]} for i in range(1, cases + 1)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases),
                                      encoding="utf-8")
    data: dict[str, Any] = {
        "generator": {"prompt": "prompts/generator.prompt.md", "model": "claude-sonnet-4-6"},
        "evaluator": {"prompt": f"prompts/{evaluator_name}", "model": "claude-haiku-4-5"},
        "pass_threshold": 0.85,
        "max_attempts": 3,
        "cases": "cases.jsonl",
        "results": "out/results.jsonl",
        "concurrency": 2,
        "max_cost_usd": 5.0,
    }
    data.update(spec)
    path = root / "evallint.loop.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def invoke(spec: Path, *args: str) -> Result:
    return CliRunner().invoke(run, [str(spec), *args], catch_exceptions=False)


def read_results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def generator_answers(server: MessagesServer, *texts: str, thinking: str | None = None) -> None:
    """The generator answers ``texts`` in turn (the last repeats), with a thinking block."""
    replies = [message(f"<thinking>draft notes</thinking><answer>{t}</answer>",
                       thinking=thinking) for t in texts]
    server.route(is_generator, replies)
