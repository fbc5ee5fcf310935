"""Benchmark ``evallint run`` in batch mode: N cases × 3 attempts through the Message Batches
endpoints of the loopback server, to show memory flat in the number of cases.

Cases and results are streamed and at most ``batch_cases`` cases are in flight, so peak RSS
should not grow from 1,000 to 20,000 cases. The server runs in its own process (a fresh one per
size, so its stored batches do not pile up) and every size runs in a fresh child process so the
peak RSS is per run. Printed per size: wall time, message batches submitted, requests, peak RSS,
and with ``--trace`` the Python heap peak (tracemalloc, in a second run so it does not slow the
timed one). Usage: ``python bench/bench_batch.py [--sizes 1000,5000,20000] [--batch-cases 1000]
[--trace]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "executor" / "messages_server.py"
ATTEMPTS = 3
sys.path.insert(0, str(ROOT / "bench"))

from bench_run import EVALUATOR, GENERATOR  # noqa: E402


def write_loop(root: Path, cases: int, batch_cases: int) -> Path:
    """The bench loop, written case by case (the cases file is never held in memory)."""
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
        f"results: out/results.jsonl\nmode: batch\nbatch_cases: {batch_cases}\n"
        "max_cost_usd: 1000\n"
    )
    return spec


def child(cases: int, batch_cases: int, url: str, trace: bool) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "src"))
    from evallint.executor.plan import make_plan
    from evallint.executor.runner import RunOptions, execute
    from evallint.executor.spec import load_spec

    os.environ["ANTHROPIC_API_KEY"] = "bench-dummy-key"
    with tempfile.TemporaryDirectory() as tmp:
        plan = make_plan(load_spec(write_loop(Path(tmp), cases, batch_cases)))
        if trace:
            tracemalloc.start()
        start = time.perf_counter()
        outcome = asyncio.run(execute(plan, RunOptions(quiet=True, base_url=url,
                                                       batch_poll_s=0.05)))
        wall = time.perf_counter() - start
        heap = tracemalloc.get_traced_memory()[1] if trace else 0
        count = 0
        with (Path(tmp) / "out" / "results.jsonl").open() as fh:  # checked line by line
            for line in fh:
                record = json.loads(line)
                assert record["attempts"] == ATTEMPTS, "every case must take 3 attempts"
                count += 1
    assert outcome.complete and count == cases, (outcome, count)
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = outcome.summary["batches"]
    return {"wall": wall, "rss_mb": rss_kb / 1024, "batches": stats["submitted"],
            "requests": stats["requests"], "heap_mb": heap / 2**20}


def run_child(cases: int, batch_cases: int, trace: bool = False) -> dict[str, float]:
    server = subprocess.Popen([sys.executable, str(SERVER), "--delay", "0"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    try:
        args = [sys.executable, __file__, "--child", str(cases), "--batch-cases",
                str(batch_cases), "--url", url] + (["--trace"] if trace else [])
        out = subprocess.run(args, capture_output=True, text=True, check=False)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    if out.returncode != 0:
        raise SystemExit(f"bench child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--batch-cases", type=int, default=1000)
    parser.add_argument("--child", type=int)
    parser.add_argument("--url")
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.batch_cases, args.url, args.trace)))
        return
    print(f"evallint run --batch bench: {ATTEMPTS} attempts per case (6 calls), "
          f"batch_cases {args.batch_cases}, loopback Message Batches server")
    print(f"{'cases':>6} {'wall s':>8} {'batches':>8} {'requests':>9} {'peak RSS MB':>12}"
          + (f" {'heap peak MB':>13}" if args.trace else ""))
    for n in (int(s) for s in args.sizes.split(",")):
        r = run_child(n, args.batch_cases)
        heap = f" {run_child(n, args.batch_cases, True)['heap_mb']:>13.2f}" if args.trace else ""
        print(f"{n:>6} {r['wall']:>8.1f} {r['batches']:>8} {r['requests']:>9} "
              f"{r['rss_mb']:>12.1f}{heap}", flush=True)


if __name__ == "__main__":
    main()
