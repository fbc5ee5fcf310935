"""Benchmark ``evallint run``: N cases × 3 attempts against the loopback server at 50 ms a call.

The server runs in its own process (so its threads do not share our GIL), and every size runs in
a fresh child process so peak memory is per run. Printed per size: wall time of the run beside
the ideal (the longest case's chain of calls × the number of waves of ``concurrency`` cases),
peak RSS, and the Python heap peak (tracemalloc, in a second run so it does not slow the timed
one). Usage: ``python bench/bench_run.py [--sizes 50,200,400] [--concurrency 16]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "executor" / "messages_server.py"
CALL_DELAY = 0.05
ATTEMPTS = 3
CALLS_PER_CASE = 2 * ATTEMPTS  # generate + evaluate per attempt

GENERATOR = """---
step: generator
model: claude-sonnet-4-6
---
## System
You answer briefly. Put the final answer in <answer> tags.

## User
<question>{{input}}</question>
"""

EVALUATOR = """---
step: evaluator
model: claude-haiku-4-5
---
## System
You grade answers. Reply with only a JSON object:
{"score": 0.0, "pass": false, "feedback": "...", "rubric_scores": {}, "failure_category": null,
"suggested_fix": null}

## User
<input>{{input}}</input>
<output>{{output}}</output>
"""


def write_loop(root: Path, cases: int, settings: str) -> Path:
    """The bench loop, written case by case (the cases file is never held in memory);
    ``settings`` are the spec's last lines (concurrency, mode, cost cap)."""
    (root / "prompts").mkdir()
    (root / "prompts" / "generator.prompt.md").write_text(GENERATOR)
    (root / "prompts" / "evaluator.prompt.md").write_text(EVALUATOR)
    with (root / "cases.jsonl").open("w") as fh:
        for i in range(cases):
            fh.write(json.dumps({"id": f"case-{i}", "input": f"question {i} " + "x" * 200,
                                 "expected": "y", "tags": [f"t{i % 4}"]}) + "\n")
    spec = root / "bench.loop.yaml"
    spec.write_text(
        "generator: {prompt: prompts/generator.prompt.md, model: claude-sonnet-4-6}\n"
        "evaluator: {prompt: prompts/evaluator.prompt.md, model: claude-haiku-4-5}\n"
        f"pass_threshold: 0.95\nmax_attempts: {ATTEMPTS}\ncases: cases.jsonl\n"
        f"results: out/results.jsonl\n{settings}"
    )
    return spec


def run_loop(cases: int, settings: str, trace: bool, **options: Any) -> dict[str, Any]:
    """Run the bench loop once in this process (a bench child) and check every result
    (streamed: the results file is never held in memory). Returns wall time, peak RSS, the
    heap peak (with ``trace``) and the run's outcome."""
    sys.path.insert(0, str(ROOT / "src"))
    from evallint.executor.plan import make_plan
    from evallint.executor.runner import RunOptions, execute
    from evallint.executor.spec import load_spec

    os.environ["ANTHROPIC_API_KEY"] = "bench-dummy-key"
    with tempfile.TemporaryDirectory() as tmp:
        plan = make_plan(load_spec(write_loop(Path(tmp), cases, settings)))
        if trace:
            tracemalloc.start()
        start = time.perf_counter()
        outcome = asyncio.run(execute(plan, RunOptions(quiet=True, **options)))
        wall = time.perf_counter() - start
        heap = tracemalloc.get_traced_memory()[1] if trace else 0
        count = 0
        with (Path(tmp) / "out" / "results.jsonl").open() as fh:
            for line in fh:
                assert json.loads(line)["attempts"] == ATTEMPTS, \
                    "every case must take 3 attempts"
                count += 1
    assert outcome.complete and count == cases, (outcome, count)
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall": wall, "rss_mb": rss_kb / 1024, "heap_mb": heap / 2**20, "outcome": outcome}


def child(cases: int, concurrency: int, url: str, trace: bool) -> dict[str, float]:
    r = run_loop(cases, f"concurrency: {concurrency}\nmax_cost_usd: 100\n", trace,
                 base_url=url)
    return {k: r[k] for k in ("wall", "rss_mb", "heap_mb")}


@contextmanager
def loopback_server(delay: float) -> Iterator[str]:
    """The test suite's Messages API server in its own process (its threads do not share our
    GIL); yields its URL and stops it on exit."""
    server = subprocess.Popen([sys.executable, str(SERVER), "--delay", str(delay)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    try:
        yield server.stdout.readline().strip()
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def run_child(script: str, cases: int, url: str, trace: bool, *options: str) -> dict[str, Any]:
    """``script --child cases --url url [options]`` in a fresh process (peak RSS per run)."""
    args = [sys.executable, script, "--child", str(cases), "--url", url, *options] + (
        ["--trace"] if trace else [])
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench child failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,200,400")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--child", type=int)
    parser.add_argument("--url")
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.concurrency, args.url, args.trace)))
        return

    with loopback_server(CALL_DELAY) as url:
        print(f"evallint run bench: {ATTEMPTS} attempts per case ({CALLS_PER_CASE} calls of "
              f"{CALL_DELAY * 1000:.0f} ms), concurrency {args.concurrency}, server {url}")
        print(f"{'cases':>6} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'peak RSS MB':>12} "
              f"{'heap peak MB':>13}")
        for n in (int(s) for s in args.sizes.split(",")):
            concurrency = ("--concurrency", str(args.concurrency))
            timed = run_child(__file__, n, url, False, *concurrency)
            traced = run_child(__file__, n, url, True, *concurrency)
            waves = math.ceil(n / args.concurrency)
            ideal = CALLS_PER_CASE * CALL_DELAY * waves
            print(f"{n:>6} {timed['wall']:>8.2f} {ideal:>8.2f} {timed['wall'] / ideal:>6.2f} "
                  f"{timed['rss_mb']:>12.1f} {traced['heap_mb']:>13.2f}", flush=True)

if __name__ == "__main__":
    main()
