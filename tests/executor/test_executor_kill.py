"""A run killed mid-way (SIGKILL, no cleanup) and started again finishes every case once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.executor.conftest import (
    API_KEY,
    generator_answers,
    is_judge,
    read_results,
    write_loop,
)
from tests.executor.messages_server import MessagesServer, verdict

ROOT = Path(__file__).resolve().parents[2]


def start(spec: Path, server: MessagesServer) -> subprocess.Popen[str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.url,
           "PYTHONPATH": str(ROOT / "src")}
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return subprocess.Popen([sys.executable, "-m", "evallint.executor", str(spec)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_killed_run_resumes_without_loss_or_duplicates(tmp_path: Path,
                                                       server: MessagesServer) -> None:
    server.default_delay = 0.03
    generator_answers(server, "first", "second", "third")
    server.route(is_judge, verdict(0.5, feedback="try again"))  # 3 attempts per case
    spec = write_loop(tmp_path, cases=16, concurrency=2)
    results = tmp_path / "out" / "results.jsonl"

    proc = start(spec, server)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    finished_before = len(read_results(results))
    assert 3 <= finished_before < 16  # killed mid-way

    proc = start(spec, server)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert API_KEY not in out + err
    ids = [r["case_id"] for r in read_results(results)]
    assert sorted(ids) == sorted(f"c{i}" for i in range(1, 17))  # every case exactly once
    assert f"resuming: {finished_before} of 16" in err
    assert len({r["run_id"] for r in read_results(results)}) == 2
