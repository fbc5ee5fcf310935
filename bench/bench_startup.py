"""Benchmark what a pre-commit hook pays on every commit: ``evallint check`` of one small file.

Each run is a fresh process (the installed console script), as the hook starts it, with the
cache off (``--no-cache``, as the hook runs). Prints, for a tiny Python file, a tiny Python file
with an SDK call, and a tiny prompt file: the median and the fastest of ``--runs`` runs, the
interpreter's own start-up beside them (``python -c pass``), and with ``--imports`` the modules
whose import costs most in one such run (``python -X importtime``, self time).

    python bench/bench_startup.py [--runs 21] [--imports]

Runs of the cases are interleaved, so that a slow spell of the machine falls on all of them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES: dict[str, tuple[str, str]] = {
    "python, no LLM call": ("a.py", "x = 1\n"),
    "python, an SDK call": ("judge.py", (
        "import anthropic\n\nclient = anthropic.Anthropic()\n\n\n"
        "def grade(answer):\n    r = client.messages.create(model='claude-haiku-4-5', "
        "max_tokens=9,\n        messages=[{'role': 'user', 'content': answer}])\n"
        "    return r.content[0].text\n")),
    "prompt file": ("prompts/judge.prompt.md", (
        "---\nmodel: claude-haiku-4-5\n---\nScore the <answer>{{ answer }}</answer> from 1 to "
        "5.\nReturn JSON with `score` and `feedback`.\n")),
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's run reads compiled bytecode
    return env


def _timed(cmd: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def _imports(cwd: Path, target: str, top: int) -> list[tuple[int, str]]:
    """The ``top`` modules by self import time (microseconds) in one run."""
    code = ("import sys\nfrom evallint.cli import main\n"
            f"sys.argv = ['evallint', 'check', '--no-cache', {target!r}]\nmain()\n")
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=cwd, env=_env(),
                       capture_output=True, text=True, check=False)
    rows = []
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if m:
            rows.append((int(m.group(1)), m.group(2)))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--imports", action="store_true", help="list the costliest imports")
    args = ap.parse_args()
    exe = shutil.which("evallint")
    if exe is None:
        sys.exit("evallint is not on PATH: install the project first (see README)")
    scratch = Path(tempfile.mkdtemp(prefix="evallint-startup-"))
    try:
        dirs = {}
        for i, (name, (rel, text)) in enumerate(CASES.items()):
            d = scratch / f"case{i}"
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(text, encoding="utf-8")
            dirs[name] = (d, rel)
            _timed([exe, "check", "--no-cache", rel], d)  # compile bytecode once
        times: dict[str, list[float]] = {name: [] for name in [*CASES, "python -c pass"]}
        for _ in range(args.runs):
            for name, (d, rel) in dirs.items():
                times[name].append(_timed([exe, "check", "--no-cache", rel], d))
            times["python -c pass"].append(_timed([sys.executable, "-c", "pass"], scratch))
        print(f"{'case':24} {'median s':>9} {'fastest s':>10}   ({args.runs} runs each)")
        for name, xs in times.items():
            print(f"{name:24} {statistics.median(xs):9.3f} {min(xs):10.3f}")
        if args.imports:
            d, rel = dirs["python, an SDK call"]
            print("\ncostliest imports (self time, one run, python, an SDK call):")
            for us, module in _imports(d, rel, 20):
                print(f"  {us / 1000:6.1f} ms  {module}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
