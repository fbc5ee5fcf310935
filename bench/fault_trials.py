"""Fault trials for ``evallint run``: SIGKILL at random moments, then resume; count the damage.

Each trial writes a fresh loop (``--cases`` cases, three attempts each) against the loopback
Messages API server (its own process, ``tests/executor/messages_server.py``), starts
``evallint run`` in a child process, kills it with SIGKILL after a random delay, and in every
other trial also tears the last line of ``results.jsonl`` in half (what a kill in the middle of
a write leaves). Then it runs the same command again to completion and checks the results file:
every case exactly once (no loss, no duplicate), every line JSON, and a torn tail repaired (the
resume says so). Prints one line per trial and the totals. Nothing here is a test: it prints.

    python bench/fault_trials.py [--trials 20] [--cases 24] [--seed 7] [--batch]

With ``--batch`` the loop runs in batch mode (four cases a wave, message batches held in
progress by the server for ``--batch-hold`` seconds, so kills land while batches are in flight)
and each trial also reports how many submitted batches the resume picked up.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "executor" / "messages_server.py"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_run import write_loop  # noqa: E402  (a sibling script, not a package)


def _env(url: str) -> dict[str, str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": "fault-trial-dummy-key", "ANTHROPIC_BASE_URL": url,
           "PYTHONPATH": str(ROOT / "src")}
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return env


BATCH = False  # --batch: every run in batch mode


def _command(spec: Path) -> list[str]:
    extra = ["--batch-poll", "0.01"] if BATCH else []
    return [sys.executable, "-m", "evallint.executor", str(spec), *extra]


def _loop(root: Path, cases: int) -> Path:
    spec = write_loop(root, cases, concurrency=4)
    if BATCH:
        spec.write_text(spec.read_text() + "mode: batch\nbatch_cases: 4\n")
    return spec


def _tear(results: Path) -> bool:
    """Cut the last record in half, as a kill during its write would. False if none."""
    data = results.read_bytes() if results.exists() else b""
    if not data.endswith(b"\n"):
        return False
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    if len(data) - start < 4:
        return False
    results.write_bytes(data[: start + (len(data) - start) // 2])
    return True


def _records(results: Path) -> int:
    try:
        return results.read_bytes().count(b"\n")
    except OSError:
        return 0


def trial(n: int, rng: random.Random, url: str, cases: int) -> dict[str, object]:
    """One kill: after a random number of finished cases (0 .. cases-1) and a random slice of
    one call's delay more, so kills land before, between and during the writes of records."""
    with tempfile.TemporaryDirectory(prefix="evallint-fault-") as tmp:
        spec = _loop(Path(tmp), cases)
        results = Path(tmp) / "out" / "results.jsonl"
        target = rng.randrange(cases)
        proc = subprocess.Popen(_command(spec), env=_env(url), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        start = time.perf_counter()
        while _records(results) < target and proc.poll() is None:
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.08))
        delay = time.perf_counter() - start
        finished_first = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        before = results.read_text(encoding="utf-8", errors="replace").count("\n") \
            if results.exists() else 0
        torn = n % 2 == 1 and _tear(results)
        resume = subprocess.run(_command(spec), env=_env(url), capture_output=True, text=True,
                                timeout=600, check=False)
        lines = results.read_text(encoding="utf-8").splitlines() if results.exists() else []
        bad_json = 0
        ids: list[str] = []
        for line in lines:
            try:
                ids.append(str(json.loads(line)["case_id"]))
            except (ValueError, KeyError, TypeError):
                bad_json += 1
        expected = {f"case-{i}" for i in range(cases)}
        lost = len(expected - set(ids))
        duplicated = len(ids) - len(set(ids))
        repaired = "torn last line" in resume.stderr
        picked = re.search(r"picking up (\d+) submitted message batch", resume.stderr)
        return {"trial": n + 1, "kill_after_s": round(delay, 2), "killed_mid_run": not
                finished_first, "records_before_kill": before, "torn": torn,
                "repair_reported": repaired, "resume_exit": resume.returncode, "lost": lost,
                "duplicated": duplicated, "bad_lines": bad_json,
                **({"batches_picked_up": int(picked.group(1)) if picked else 0}
                   if BATCH else {})}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--delay", type=float, default=0.02, help="server delay per call, s")
    parser.add_argument("--batch", action="store_true", help="run the loop in batch mode")
    parser.add_argument("--batch-hold", type=float, default=0.05,
                        help="seconds the server keeps a message batch in progress")
    args = parser.parse_args()
    global BATCH
    BATCH = args.batch
    rng = random.Random(args.seed)
    server = subprocess.Popen([sys.executable, str(SERVER), "--delay", str(args.delay),
                               "--batch-hold", str(args.batch_hold)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    try:
        # How long one uninterrupted run takes, so kills land anywhere inside it.
        with tempfile.TemporaryDirectory(prefix="evallint-fault-") as tmp:
            spec = _loop(Path(tmp), args.cases)
            start = time.perf_counter()
            subprocess.run(_command(spec), env=_env(url), capture_output=True, check=True)
            full = time.perf_counter() - start
        mode = " --batch" if BATCH else ""
        print(f"fault trials: {args.trials} SIGKILLs of `evallint run{mode}` ({args.cases} cases "
              f"x 3 attempts, server delay {args.delay * 1000:.0f} ms, uninterrupted run "
              f"{full:.2f} s)")
        totals = {"lost": 0, "duplicated": 0, "bad_lines": 0, "torn": 0, "repaired": 0,
                  "mid_run": 0, "failed_resumes": 0, "picked_up": 0}
        for n in range(args.trials):
            r = trial(n, rng, url, args.cases)
            print(json.dumps(r), flush=True)
            totals["lost"] += int(r["lost"])  # type: ignore[call-overload]
            totals["duplicated"] += int(r["duplicated"])  # type: ignore[call-overload]
            totals["bad_lines"] += int(r["bad_lines"])  # type: ignore[call-overload]
            totals["torn"] += bool(r["torn"])
            totals["repaired"] += bool(r["torn"] and r["repair_reported"])
            totals["mid_run"] += bool(r["killed_mid_run"])
            totals["failed_resumes"] += r["resume_exit"] != 0
            totals["picked_up"] += int(r.get("batches_picked_up", 0))  # type: ignore[call-overload]
        print(f"trials {args.trials}, killed mid-run {totals['mid_run']}, "
              f"torn tails made {totals['torn']} (repair reported {totals['repaired']}), "
              f"lost cases {totals['lost']}, duplicated cases {totals['duplicated']}, "
              f"broken lines after resume {totals['bad_lines']}, "
              f"failed resumes {totals['failed_resumes']}"
              + (f", batches picked up {totals['picked_up']}" if BATCH else ""))
    finally:
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
