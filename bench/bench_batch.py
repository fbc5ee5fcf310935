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
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_run import ATTEMPTS, loopback_server, run_child, run_loop


def child(cases: int, batch_cases: int, url: str, trace: bool) -> dict[str, float]:
    r = run_loop(cases, f"mode: batch\nbatch_cases: {batch_cases}\nmax_cost_usd: 1000\n",
                 trace, base_url=url, batch_poll_s=0.05)
    stats = r["outcome"].summary["batches"]
    return {"wall": r["wall"], "rss_mb": r["rss_mb"], "batches": stats["submitted"],
            "requests": stats["requests"], "heap_mb": r["heap_mb"]}


def run_size(cases: int, batch_cases: int, trace: bool = False) -> dict[str, Any]:
    """One size with a fresh server (its stored batches do not pile up across sizes)."""
    with loopback_server(0) as url:
        return run_child(__file__, cases, url, trace, "--batch-cases", str(batch_cases))


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
        r = run_size(n, args.batch_cases)
        heap = f" {run_size(n, args.batch_cases, True)['heap_mb']:>13.2f}" if args.trace else ""
        print(f"{n:>6} {r['wall']:>8.1f} {r['batches']:>8} {r['requests']:>9} "
              f"{r['rss_mb']:>12.1f}{heap}", flush=True)


if __name__ == "__main__":
    main()
