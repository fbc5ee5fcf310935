"""The metamorphic ratchet: evallint's verdicts survive semantics-preserving rewrites of the
projects they are made on, but for the known failures listed in known_failures.yaml.

A verdict lost that the list does not name is a regression: fix the analysis, or, when the
loss is understood, add an entry with the reason you found (``python bench/metamorphic.py
--why`` drafts it: the names the verdict hangs on). A listed failure that survives now fails
the test too: the analysis improved, remove its entry, so the list only shrinks.

With EVALLINT_SLOW_TESTS=1 (CI sets it) every rewrite runs on every Python invalid rule example
and on the fixtures; otherwise a fast subset: each rule's first Python invalid example, and the
fixtures.
"""

from __future__ import annotations

import os

import pytest

from tests.metamorphic import (
    FIXTURES,
    KNOWN_FILE,
    Run,
    all_cases,
    covers,
    describe,
    failing,
    fast_cases,
    fixture_case,
    load_known,
    measure,
    rule_cases,
)
from tests.metamorphic.rewrite import REWRITES

SLOW = bool(os.environ.get("EVALLINT_SLOW_TESTS"))


@pytest.fixture(scope="module")
def run() -> Run:
    cases = all_cases()
    return measure(cases if SLOW else fast_cases(cases), REWRITES, load_known())


def test_no_verdict_is_lost_but_the_known_failures(run: Run) -> None:
    known = load_known()
    new = {k: o for k, o in failing(run).items() if k not in known.failures}
    lines = [f"  - rule: {rule}\n    example: {example!r}\n    {rewrite}: ...  # "
             f"{describe(new[(rule, example, rewrite)], (rule, example, rewrite))}"
             for rule, example, rewrite in sorted(new)]
    assert not new, (
        f"{len(new)} verdict(s) lost under a rewrite that {KNOWN_FILE.name} does not list "
        "(a regression: a verdict must survive renaming what the project defines). Fix it, "
        "or add the entries with the reason (`python bench/metamorphic.py --why` finds the "
        "names it hangs on):\n" + "\n".join(lines))


def test_every_known_failure_still_fails(run: Run) -> None:
    known = load_known()
    lost = failing(run)
    fixed = sorted(k for k in known.failures if covers(run, k) and k not in lost)
    assert not fixed, (
        f"{len(fixed)} verdict(s) listed in {KNOWN_FILE.name} survive now: remove the "
        "entries (the list only shrinks):\n"
        + "\n".join(f"  {rule} | {example} | {rewrite}" for rule, example, rewrite in fixed))


def test_the_known_failures_name_real_examples_and_rewrites() -> None:
    """Each entry names a Python invalid example of its rule (or a fixture file) and gives a
    one-line reason; an example renamed in its rule file leaves a stale entry behind."""
    known = load_known()
    examples = {(c.rule, c.name) for c in rule_cases()}
    fixture_files = set(fixture_case().files)
    stale = []
    for (rule, example, rewrite), reason in {**known.failures, **known.opt_out}.items():
        assert rewrite in REWRITES
        assert reason.strip() and "\n" not in reason.strip(), (rule, example, rewrite)
        if example.startswith(FIXTURES + "/"):
            if example not in fixture_files:
                stale.append((rule, example))
        elif (rule, example) not in examples:
            stale.append((rule, example))
    assert not stale, f"{KNOWN_FILE.name} names examples that do not exist: {sorted(stale)}"
    assert not set(known.failures) & set(known.opt_out)
