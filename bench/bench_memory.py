"""Benchmark how peak memory grows with the size of a tree: 1, 2 and 4 copies of one tree.

Peak memory should grow only with what a run keeps (every file's facts, for the cross-file
checks, and the findings), not with the work done on the way. For each number of copies this
prints the files checked and the peak RSS (measured as ``bench_real.py`` measures it: the
largest of the evallint process and its children) of a cold run (``--no-cache``) and of a warm
run with nothing changed, each a fresh process, and the growth per copy.

    python bench/bench_memory.py TREE [--copies 1,2,4]

TREE is any folder (a tree ``bench_real.py --keep`` exported, for example); the copies are made
in a scratch folder and removed afterwards.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real import run  # a fresh process: its wall time, peak RSS, exit code, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--copies", default="1,2,4")
    args = ap.parse_args()
    counts = [int(c) for c in args.copies.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="evallint-memory-"))
    try:
        print(f"{'copies':>6} {'files':>7} {'cold MB':>8} {'warm MB':>8}")
        first: float | None = None
        for n in counts:
            root = scratch / f"x{n}"
            for i in range(n):
                shutil.copytree(args.tree, root / f"copy{i}", symlinks=True,
                                ignore=shutil.ignore_patterns(".git", ".evallint_cache"))
            _, cold, code, tail = run(root, "--no-cache")
            if code not in (0, 1):
                sys.exit(f"evallint failed on {n} copies: {tail}")
            run(root)  # fills the cache (in the copy's own cache folder)
            _, warm, _, _ = run(root)
            found = re.search(r"(\d+) files? checked", tail)
            files = found.group(1) if found else "?"
            print(f"{n:6d} {files:>7} {cold:8.1f} {warm:8.1f}")
            if first is None:
                first = cold
            elif n > counts[0]:
                print(f"{'':6} cold growth per extra copy: "
                      f"{(cold - first) / (n - counts[0]):.1f} MB")
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
