"""How many of evallint's verdicts survive semantics-preserving rewrites (issue 36).

Runs evallint on every Python invalid example of ``rules/ELnnn.yaml`` (only the example's rule
enabled) and on the whole ``fixtures/broken`` tree (every default rule), before and after each
rewrite of ``tests/metamorphic/rewrite.py`` (neutral names, renamed modules, aliased imports,
reformatting, a function moved into a class, into another module), and prints, per rule and
per rewrite, how many verdicts survive, then the overall rate, the seconds spent, and the known
failures of ``tests/metamorphic/known_failures.yaml`` grouped by their cause.

    python bench/metamorphic.py [--rewrites names,aliases] [--rules EL301,EL501]
                                [--why] [--all]

``--why``: for each lost verdict the known failures do not list (``--all``: every lost one),
the names it hangs on (those whose rewriting alone loses it, or those any one of which, left
as it was, keeps it), as entries to check and paste into known_failures.yaml.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the suite lives in tests/ (it imports evallint, installed)

from tests.metamorphic import (  # noqa: E402 - after the path is set
    KNOWN_FILE,
    all_cases,
    covers,
    describe,
    diagnose,
    failing,
    load_known,
    measure,
    table,
)
from tests.metamorphic.rewrite import REWRITES  # noqa: E402


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rewrites", default=",".join(REWRITES))
    parser.add_argument("--rules", default="", help="rule codes (and 'fixtures') to run")
    parser.add_argument("--why", action="store_true")
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    rewrites = [r for r in args.rewrites.split(",") if r]
    unknown = [r for r in rewrites if r not in REWRITES]
    if unknown:
        parser.error(f"no such rewrite: {', '.join(unknown)} (known: {', '.join(REWRITES)})")
    rules = {r for r in args.rules.split(",") if r}
    known = load_known()
    cases = [c for c in all_cases() if not rules or c.rule in rules]
    start = time.perf_counter()
    run = measure(cases, rewrites, known)
    print(table(run))
    seconds = ", ".join(f"{k} {v:.1f}" for k, v in run.seconds.items())
    print(f"\nseconds: {seconds}; total {time.perf_counter() - start:.1f}")

    lost = failing(run)
    listed = {k for k in lost if k in known.failures}
    causes = Counter(known.failures[k].split(":", 1)[0] for k in listed)
    if causes:
        print(f"\nknown failures by cause ({KNOWN_FILE.relative_to(ROOT)}):")
        for cause, n in causes.most_common():
            print(f"  {n:4d}  {cause}")
    new = sorted(k for k in lost if k not in known.failures)
    fixed = sorted(k for k in known.failures if k not in lost and covers(run, k))
    if new:
        print(f"\n{len(new)} lost verdicts not in the known failures")
    if fixed:
        print(f"{len(fixed)} known failures that survive now (remove their entries)")
    if args.why:
        print("\nfailures:")
        for key in sorted(lost) if args.all else new:
            outcome = lost[key]
            why = diagnose(outcome, key) or describe(outcome, key)
            print(f"  - rule: {key[0]}\n    example: {_quote(key[1])}\n"
                  f"    {key[2]}: {_quote(why)}", flush=True)


if __name__ == "__main__":
    main()
