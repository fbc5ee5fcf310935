"""Benchmark ``evallint check`` on a large Python corpus against read + ``ast.parse``.

Builds a corpus under a temporary folder (or uses ``--corpus DIR``): the interpreter's standard
library and this environment's site-packages (most of it unrelated to LLMs), plus a few hundred
generated evaluation-loop modules. Then prints, for the same files:

* read + ``ast.parse`` in one process (the baseline),
* ``evallint check --no-cache`` (cold), a first cached run (cold, writing the cache), and a
  second cached run (warm: nothing changed), each a fresh subprocess with default ``--jobs``,
* the peak resident memory of each evallint run (``getrusage(RUSAGE_CHILDREN)`` of a wrapper).

Goal (issue 3): cold within 2x of read+ast.parse, warm within 0.25x of cold.

    python bench/bench_check.py [--corpus DIR] [--max-files 4000] [--loops 300] [--jobs N]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

# Folders evallint's discovery skips by default (build, env, site-packages...) would hide files
# from it; the corpus is laid out under neutral names instead.
LOOP_TEMPLATE = '''\
"""Generated refinement loop {i}."""
import json
import {sdk}

client = {client}
GEN_MODEL = "{gen}"
JUDGE_MODEL = "{judge}"
JUDGE_PROMPT = "You are a strict judge. Score the answer from 0 to 1 as JSON."


def generate_{i}(task, feedback=""):
    resp = {create}(model=GEN_MODEL, {extra}messages=[
        {{"role": "user", "content": task + feedback}}])
    return {text}


def judge_{i}(task, answer):
    resp = {create}(model=JUDGE_MODEL, {extra}messages=[
        {{"role": "system", "content": JUDGE_PROMPT}},
        {{"role": "user", "content": f"{{task}}\\n{{answer}}"}}])
    return json.loads({text})


def refine_{i}(task):
    feedback = ""
    draft = ""
    for attempt in range({n}):
        draft = generate_{i}(task, feedback)
        verdict = judge_{i}(task, draft{extract})
        if verdict["score"] >= 0.8:
            break
        feedback = verdict["feedback"]
    return draft
'''
SDKS = [
    ("anthropic", "anthropic.Anthropic()", "client.messages.create", "max_tokens=900, ",
     "resp.content[0].text"),
    ("openai", "openai.OpenAI()", "client.chat.completions.create", "",
     "resp.choices[0].message.content"),
    ("litellm", "None", "litellm.completion", "", "resp.choices[0].message.content"),
]
MODELS = ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1", "gpt-4o", "gpt-4o-mini"]


def build_corpus(root: Path, max_files: int, loops: int, seed: int = 7) -> None:
    """Copy stdlib and site-packages .py files, then generate ``loops`` loop modules."""
    rng = random.Random(seed)
    sources = [("stdlib", Path(sysconfig.get_paths()["stdlib"])),
               ("thirdparty", Path(sysconfig.get_paths()["purelib"]))]
    files: list[tuple[str, Path, Path]] = []
    for name, base in sources:
        for p in sorted(base.rglob("*.py")):
            rel = p.relative_to(base)
            if "site-packages" in rel.parts or p.stat().st_size > 1_500_000:
                continue
            files.append((name, base, p))
    rng.shuffle(files)
    for name, base, p in files[:max_files]:
        rel = p.relative_to(base)
        target = root / name / Path(*[f"{part}_" if part in _EXCLUDED else part
                                      for part in rel.parts])
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(p, target)
        except OSError:
            continue
    for i in range(loops):
        sdk, client, create, extra, text = SDKS[i % len(SDKS)]
        body = LOOP_TEMPLATE.format(
            i=i, sdk=sdk, client=client, create=create, extra=extra, text=text,
            gen=rng.choice(MODELS), judge=rng.choice(MODELS), n=rng.randint(2, 6),
            extract="" if i % 2 else ".split('ANSWER:')[-1]")
        target = root / "loops" / f"pkg{i // 50}" / f"loop_{i}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")


_EXCLUDED = {".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "node_modules",
             "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox", ".nox",
             "build", "dist", "site-packages", ".evallint_cache", ".ipynb_checkpoints"}


def checked_files(corpus: Path) -> list[Path]:
    """The files evallint would check (its own discovery), for a like-for-like baseline."""
    out = subprocess.run(
        [sys.executable, "-m", "evallint", "check", "--show-files", "."],
        cwd=corpus, capture_output=True, text=True, check=False, env=ENV)
    files = []
    for line in out.stdout.splitlines():
        path = line.split()[0] if line.strip() else ""
        if path.endswith(".py") and (corpus / path).is_file():
            files.append(corpus / path)
    return files


def baseline(files: list[Path]) -> tuple[float, int]:
    """Seconds to read and ``ast.parse`` every file in one process; count of parse failures."""
    bad = 0
    start = time.perf_counter()
    for p in files:
        data = p.read_bytes()
        try:
            ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            bad += 1
    return time.perf_counter() - start, bad


_WRAPPER = """
import resource, subprocess, sys, time, json
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
dt = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": dt, "rc": p.returncode, "maxrss_kb": rss,
                  "stdout_bytes": len(p.stdout), "stderr": p.stderr.decode()[-400:]}))
"""


def snapshot_code(into: Path) -> dict[str, str]:
    """Copy evallint's code and rule data: the cache is salted with their modification times,
    so edits made in the working tree during a run would turn every warm run cold."""
    import evallint

    pkg = Path(evallint.__file__).resolve().parent
    shutil.copytree(pkg, into / "src" / "evallint",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    rules = pkg.parents[1] / "rules"
    if rules.is_dir():
        shutil.copytree(rules, into / "rules")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(into / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled once, not per run
    return env


ENV: dict[str, str] | None = None


def run_evallint(corpus: Path, cache: bool, jobs: int | None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "evallint", "check", ".", "--exit-zero", "-q",
           "--output-format", "json"]
    if not cache:
        cmd.append("--no-cache")
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], cwd=corpus,
                         capture_output=True, text=True, check=True, env=ENV)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, help="use this folder instead of building one")
    ap.add_argument("--max-files", type=int, default=4000, help="library files to copy")
    ap.add_argument("--loops", type=int, default=300, help="generated loop modules")
    ap.add_argument("--jobs", type=int, default=None, help="evallint --jobs (default: its own)")
    ap.add_argument("--keep", action="store_true", help="keep the built corpus")
    args = ap.parse_args()

    global ENV
    code_dir = tempfile.mkdtemp(prefix="evallint-bench-code-")
    ENV = snapshot_code(Path(code_dir))
    tmp: str | None = None
    if args.corpus:
        corpus = args.corpus.resolve()
    else:
        tmp = tempfile.mkdtemp(prefix="evallint-bench-")
        corpus = Path(tmp)
        t = time.perf_counter()
        build_corpus(corpus, args.max_files, args.loops)
        print(f"built corpus in {corpus} ({time.perf_counter() - t:.1f}s)")
    try:
        shutil.rmtree(corpus / ".evallint_cache", ignore_errors=True)
        files = checked_files(corpus)
        size = sum(p.stat().st_size for p in files)
        print(f"corpus: {len(files)} Python files, {size / 1e6:.1f} MB "
              f"(cpu cores: {os.cpu_count()})")
        base, bad = baseline(files)
        base, bad = min((base, bad), baseline(files))  # warm the page cache, take the best
        print(f"read + ast.parse (1 process):      {base:7.2f} s   ({bad} files do not parse)")
        cold = run_evallint(corpus, cache=False, jobs=args.jobs)
        print(f"evallint cold (--no-cache):        {cold['seconds']:7.2f} s   "
              f"peak RSS {int(cold['maxrss_kb']) / 1024:.0f} MB   "
              f"= {float(cold['seconds']) / base:.2f}x read+ast.parse")
        first = run_evallint(corpus, cache=True, jobs=args.jobs)
        print(f"evallint cold, writing the cache:  {first['seconds']:7.2f} s   "
              f"peak RSS {int(first['maxrss_kb']) / 1024:.0f} MB")
        warm = run_evallint(corpus, cache=True, jobs=args.jobs)
        print(f"evallint warm (cache, no change):  {warm['seconds']:7.2f} s   "
              f"peak RSS {int(warm['maxrss_kb']) / 1024:.0f} MB   "
              f"= {float(warm['seconds']) / float(cold['seconds']):.2f}x cold")
        for r in (cold, first, warm):
            if r["rc"] not in (0,):
                print(f"evallint exited {r['rc']}: {r['stderr']}")
        ok_cold = float(cold["seconds"]) <= 2 * base
        ok_warm = float(warm["seconds"]) <= 0.25 * float(cold["seconds"])
        print(f"goal cold <= 2x baseline: {'met' if ok_cold else 'NOT met'}; "
              f"goal warm <= 0.25x cold: {'met' if ok_warm else 'NOT met'}")
    finally:
        shutil.rmtree(code_dir, ignore_errors=True)
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
