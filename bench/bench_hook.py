"""Benchmark what a commit pays with the pre-commit hook, on real trees.

The hook checks the whole repository whenever a relevant file is staged (findings are
cross-file). Each commit after the first therefore meets a tree that changed in a file or two:
with the result cache, that is a run after an edit; without it, a cold run of every file.

For each tree of ``bench_real.TREES`` (exported from its ``fetch``-ed mirror), this script
writes a ``.pre-commit-config.yaml`` with three local hooks on the same files the published hook
matches: ``evallint check`` (as ``.pre-commit-hooks.yaml`` runs it), ``evallint check
--no-cache``, and ``true`` (what pre-commit itself costs). Then, round by round, it makes a
one-line edit to an analysed Python file, stages it, and times ``pre-commit run <hook>`` for
each, a fresh process each time, as ``git commit`` starts it. The first cached run (the cache
still empty: a new clone's first commit) is timed apart.

    python bench/bench_hook.py [--mirrors /work/.mirror] [--only deepeval] [--runs 5]

``pre-commit`` must be importable by this interpreter (it is in the ``dev`` extra) and
``evallint`` installed beside it.
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

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_real  # a sibling script, not a package

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ("cached", "no-cache", "pre-commit alone")


def _published_files_pattern() -> str:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return str(hooks[0]["files"])


def write_config(tree: Path, evallint: Path) -> None:
    """The three local hooks, committed so that pre-commit sees a clean config."""
    files = _published_files_pattern()

    def hook(hid: str, entry: str) -> dict[str, object]:
        return {"id": hid, "name": hid, "entry": entry, "language": "system",
                "pass_filenames": False, "require_serial": True, "files": files}

    config = {"repos": [{"repo": "local", "hooks": [
        hook("cached", f"{evallint} check"),
        hook("no-cache", f"{evallint} check --no-cache"),
        hook("pre-commit alone", "true"),
    ]}]}
    (tree / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    bench_real.git(tree, "add", ".pre-commit-config.yaml")
    bench_real.git(tree, "commit", "-qm", "hooks")


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled once
    env["PYTHONSAFEPATH"] = "1"  # as bench_real: the tree's own modules never shadow ours
    return env


def run_hook(tree: Path, hook: str, home: Path) -> tuple[float, int]:
    """Wall time and exit status of ``pre-commit run <hook>`` on the staged change."""
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pre_commit", "run", hook], cwd=tree,
                       env=_env(home), capture_output=True, text=True, check=False)
    return time.perf_counter() - start, p.returncode


def bench_tree(tree: Path, runs: int, home: Path) -> dict[str, float]:
    """Median seconds of each hook over ``runs`` edits, and ``first``: the cached hook's run
    with an empty cache (empty: the tree has no Python file with an SDK call to edit)."""
    evallint = Path(sys.executable).parent / "evallint"
    write_config(tree, evallint)
    target = bench_real.python_to_edit(bench_real.evallint_files(tree))
    if target is None:
        return {}
    shutil.rmtree(tree / ".evallint_cache", ignore_errors=True)
    bench_real.append_edit(target, 0)
    bench_real.git(tree, "add", str(target))
    first, _ = run_hook(tree, "cached", home)  # the cache is empty: it fills it
    times: dict[str, list[float]] = {h: [] for h in HOOKS}
    for n in range(1, runs + 1):
        bench_real.append_edit(target, n)
        bench_real.git(tree, "add", str(target))
        for h in HOOKS:  # in turn, so that a slow spell falls on all three
            times[h].append(run_hook(tree, h, home)[0])
    return {"first": first, **{h: statistics.median(v) for h, v in times.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--only", default="", help="comma-separated tree names")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    names = [n for n in bench_real.TREES if not args.only or n in args.only.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="evallint-hook-"))
    home = scratch / "pre-commit-home"
    print(f"scratch: {scratch} (runs: {args.runs}, medians; each a `pre-commit run` of a "
          "staged one-line edit to an analysed Python file)")
    print(f"{'tree':<20}{'files':>6}{'no-cache s':>11}{'cached s':>10}{'speed-up':>9}"
          f"{'pre-commit s':>13}{'first s':>9}")
    try:
        for name in names:
            folder, commit = bench_real.TREES[name]
            mirror = args.mirrors / folder / "repo"
            if not mirror.exists():
                print(f"{name:<20} skipped: no mirror at {mirror}")
                continue
            tree = scratch / name
            bench_real.export(mirror, commit, tree)
            files = len(bench_real.listed(tree))
            r = bench_tree(tree, args.runs, home)
            if not r:
                print(f"{name:<20} skipped: no Python file with an SDK call to edit")
                continue
            cold, warm = r["no-cache"], r["cached"]
            print(f"{name:<20}{files:>6}{cold:>11.2f}{warm:>10.2f}{cold / warm:>8.1f}x"
                  f"{r['pre-commit alone']:>13.2f}{r['first']:>9.2f}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
