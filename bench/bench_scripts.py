"""Benchmark TypeScript/JavaScript files beside Python: cold ``evallint check`` seconds per MB.

Builds two synthetic trees of the same shape (issue 39: "a JS/TS file costs about what a Python
file of the same size costs"): generated refinement loops calling an LLM SDK (a third of the
files) and plain utility modules (the rest), once written in Python and once in TypeScript.
Then prints, for each tree, the cold run (``--no-cache``, a fresh subprocess, default jobs) and
its seconds per MB; then the TypeScript tree again with a ``node_modules`` folder as large as
the tree beside it (it must cost nothing: discovery never enters it). ``--real DIR`` adds a
real tree (a fetched repository) and prints its figures per language.

    python bench/bench_scripts.py [--files 600] [--runs 3] [--real DIR ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY_LOOP = '''"""Refinement loop {i}."""
import json
from openai import OpenAI

client = OpenAI()
WRITER_{i} = "gpt-4o-mini"


def draft_{i}(task: str, notes: str = "") -> str:
    r = client.chat.completions.create(model=WRITER_{i}, messages=[
        {{"role": "system", "content": "You write release notes."}},
        {{"role": "user", "content": f"{{task}}\\n{{notes}}"}}])
    return r.choices[0].message.content or ""


def review_{i}(task: str, text: str) -> dict:
    r = client.chat.completions.create(model="gpt-4o", messages=[
        {{"role": "system", "content": "Score the notes from 1 to 10 as JSON."}},
        {{"role": "user", "content": f"<task>{{task}}</task><notes>{{text}}</notes>"}}])
    try:
        return json.loads(r.choices[0].message.content or "{{}}")
    except json.JSONDecodeError:
        return {{"score": 0}}


def improve_{i}(task: str) -> str:
    text = draft_{i}(task)
    for _ in range(3):
        verdict = review_{i}(task, text)
        if verdict.get("score", 0) >= 8:
            break
        text = draft_{i}(task, str(verdict.get("feedback", "")))
    return text
'''

TS_LOOP = '''// Refinement loop {i}.
import OpenAI from "openai";

const client = new OpenAI();
const WRITER_{i} = "gpt-4o-mini";

export async function draft{i}(task: string, notes = ""): Promise<string> {{
  const r = await client.chat.completions.create({{ model: WRITER_{i}, messages: [
    {{ role: "system", content: "You write release notes." }},
    {{ role: "user", content: `${{task}}\\n${{notes}}` }}] }});
  return r.choices[0].message.content ?? "";
}}

type Verdict{i} = {{ score?: number; feedback?: string }};

export async function review{i}(task: string, text: string): Promise<Verdict{i}> {{
  const r = await client.chat.completions.create({{ model: "gpt-4o", messages: [
    {{ role: "system", content: "Score the notes from 1 to 10 as JSON." }},
    {{ role: "user", content: `<task>${{task}}</task><notes>${{text}}</notes>` }}] }});
  try {{
    return JSON.parse(r.choices[0].message.content ?? "{{}}");
  }} catch {{
    return {{ score: 0 }};
  }}
}}

export async function improve{i}(task: string): Promise<string> {{
  let text = await draft{i}(task);
  for (let round = 0; round < 3; round++) {{
    const verdict = await review{i}(task, text);
    if ((verdict.score ?? 0) >= 8) break;
    text = await draft{i}(task, String(verdict.feedback ?? ""));
  }}
  return text;
}}
'''

PY_UTIL = '''"""Utilities {i}."""


def chunk_{i}(items: list[int], size: int) -> list[list[int]]:
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
    return out


class Cache{i}:
    def __init__(self) -> None:
        self.store: dict[str, int] = {{}}

    def get(self, key: str) -> int | None:
        return self.store.get(key)

    def put(self, key: str, value: int) -> None:
        if len(self.store) > 1000:
            self.store.clear()
        self.store[key] = value
'''

TS_UTIL = '''// Utilities {i}.
export function chunk{i}(items: number[], size: number): number[][] {{
  const out: number[][] = [];
  for (let start = 0; start < items.length; start += size) {{
    out.push(items.slice(start, start + size));
  }}
  return out;
}}

export class Cache{i} {{
  private store = new Map<string, number>();

  get(key: string): number | undefined {{
    return this.store.get(key);
  }}

  put(key: string, value: number): void {{
    if (this.store.size > 1000) this.store.clear();
    this.store.set(key, value);
  }}
}}
'''


def build(root: Path, files: int, lang: str) -> None:
    loop, util, ext = (PY_LOOP, PY_UTIL, ".py") if lang == "python" else (TS_LOOP, TS_UTIL,
                                                                          ".ts")
    for i in range(files):
        folder = root / f"pkg{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        text = loop.format(i=i) if i % 3 == 0 else util.format(i=i)
        (folder / f"mod{i}{ext}").write_text(text, encoding="utf-8")


def size_mb(root: Path, suffixes: tuple[str, ...]) -> float:
    total = 0
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "node_modules" and not d.startswith(".")]
        total += sum(os.path.getsize(os.path.join(dirpath, n)) for n in names
                     if n.endswith(suffixes))
    return total / 1e6


def cold(root: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "evallint", "check", "--no-cache", "-q", "."],
                       cwd=root, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def report(label: str, root: Path, suffixes: tuple[str, ...], runs: int) -> None:
    mb = size_mb(root, suffixes)
    secs = cold(root, runs)
    per = secs / mb if mb else float("nan")
    print(f"{label:<34} {mb:7.2f} MB  cold {secs:6.2f} s  {per:6.2f} s/MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=600)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--real", nargs="*", default=[])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        py, ts = Path(tmp) / "py", Path(tmp) / "ts"
        build(py, args.files, "python")
        build(ts, args.files, "typescript")
        print(f"{args.files} files per tree, median of {args.runs} cold runs (--no-cache)")
        report("python (synthetic)", py, (".py",), args.runs)
        report("typescript (synthetic)", ts, (".ts",), args.runs)
        build(ts / "node_modules" / "dep", args.files, "typescript")
        report("typescript + node_modules beside", ts, (".ts",), args.runs)
        shutil.rmtree(ts / "node_modules")
    for real in args.real:  # one run over both languages: their sizes beside its time
        root = Path(real)
        py_mb = size_mb(root, (".py",))
        js_mb = size_mb(root, (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"))
        secs = cold(root, args.runs)
        print(f"{root.name}: cold {secs:.2f} s over {js_mb:.2f} MB of TS/JS and {py_mb:.2f} MB "
              f"of Python ({secs / max(js_mb + py_mb, 1e-9):.2f} s/MB)")


if __name__ == "__main__":
    main()
