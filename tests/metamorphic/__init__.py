"""The metamorphic suite: evallint's verdicts before and after semantics-preserving rewrites.

"A verdict must survive renaming what the project defines" (design.md). The rewrites are in
:mod:`tests.metamorphic.rewrite`; this module runs evallint on every Python invalid example of
``rules/ELnnn.yaml`` (only the example's rule enabled, as ``tests/test_rule_examples.py`` does)
and on the whole ``fixtures/broken`` tree (every default rule), before and after each rewrite,
and compares the findings by (rule code, file path), the path of a moved or renamed module
mapped back; positions are not compared, lines move.

A rule example's verdict survives a rewrite when its set of (code, path) is the same after it.
In the fixtures, each (code, path) is a verdict of its own: it survives when it is still
reported, and a (code, path) that only the rewritten tree gets is a verdict changed as well.

``tests/metamorphic/known_failures.yaml`` lists the verdicts that do not survive today, each
with the reason found, and the examples that opt out of a rewrite;
``tests/metamorphic/test_survival.py`` holds evallint to that list and ``bench/metamorphic.py``
prints the table.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.metamorphic.rewrite import REWRITES, NotApplicable, is_python, rewrite_all

ROOT = Path(__file__).resolve().parents[2]
KNOWN_FILE = Path(__file__).with_name("known_failures.yaml")
FIXTURES = "fixtures/broken"

Verdict = tuple[str, str]  # (rule code, path)
Key = tuple[str, str, str]  # (rule, example, rewrite)


@dataclass(frozen=True)
class Case:
    """A project evallint runs on: a rule's invalid example, or the broken fixtures."""

    rule: str
    name: str
    files: dict[str, Any] = field(hash=False, compare=False)
    codes: frozenset[str] | None = None
    config: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    paths: tuple[str, ...] | None = None

    @property
    def fixture(self) -> bool:
        return self.rule == "fixtures"


@dataclass
class Outcome:
    case: Case
    rewrite: str
    applicable: bool
    before: frozenset[Verdict]
    after: frozenset[Verdict]
    opted_out: str | None = None
    scope: frozenset[Verdict] | None = None  # fixtures: the verdicts Python decides


    def units(self) -> Iterator[tuple[Key, bool]]:
        """Each verdict of the outcome, with whether it survived."""
        if not self.applicable or self.opted_out:
            return
        if not self.case.fixture:
            yield (self.case.rule, self.case.name, self.rewrite), self.before == self.after
            return
        for code, path in sorted(self.before ^ self.after | (self.scope or self.before)):
            yield (code, path, self.rewrite), (code, path) in self.before & self.after


def rule_cases() -> list[Case]:
    from evallint.registry import load_rules

    out = []
    for code, meta in sorted(load_rules().items()):
        for ex in meta.tests.get("invalid") or []:
            if not any(is_python(p) for p in ex["files"]):
                continue
            out.append(Case(code, ex.get("name", ""), ex["files"],
                            frozenset({code, *ex.get("enable", [])}), ex.get("config")))
    return out


def fixture_case() -> Case:
    base = ROOT / FIXTURES
    files = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(base.rglob("*")) if p.is_file()}
    return Case("fixtures", FIXTURES, files, None, None, (FIXTURES,))


def all_cases() -> list[Case]:
    return [*rule_cases(), fixture_case()]


def lint(case: Case, files: dict[str, Any]) -> frozenset[Verdict]:
    """evallint's findings on ``files`` as (code, path); a tool error is a verdict too."""
    from tests.conftest import lint_tree, write_files

    with tempfile.TemporaryDirectory(prefix="evallint-metamorphic-") as tmp:
        root = Path(tmp)
        write_files(root, files)
        result = lint_tree(root, set(case.codes) if case.codes is not None else None,
                           case.config, list(case.paths) if case.paths else None)
    found = {(f.code, f.path) for f in result.findings}
    found |= {("tool-error", str(e)) for e in result.tool_errors}
    return frozenset(found)


# ---------------------------------------------------------------------------------------------
# The known failures and opt-outs.


@dataclass
class Known:
    failures: dict[Key, str]
    opt_out: dict[Key, str]

    def opted_out(self, case: Case, rewrite: str) -> str | None:
        return self.opt_out.get((case.rule, case.name, rewrite))


def _expand(entries: Iterable[dict[str, Any]] | None, what: str) -> dict[Key, str]:
    """Entries name a rule and an example, then give a reason per rewrite (``names: ...``),
    or ``rewrites: [...]`` (or ``all``) with one ``reason``."""
    out: dict[Key, str] = {}
    for entry in entries or []:
        if not entry.get("rule") or not entry.get("example"):
            raise ValueError(f"{KNOWN_FILE.name}: {what} entry needs a rule and an example: "
                             f"{entry}")
        reasons = {k: v for k, v in entry.items() if k in REWRITES}
        if "rewrites" in entry:
            names = list(REWRITES) if entry["rewrites"] == "all" else entry["rewrites"]
            reasons.update(dict.fromkeys(names, entry.get("reason")))
        extra = set(entry) - {"rule", "example", "rewrites", "reason", *REWRITES}
        if extra or not reasons:
            raise ValueError(f"{KNOWN_FILE.name}: {what} entry names no rewrite (or an unknown "
                             f"key {sorted(extra)}): {entry}")
        for rw, reason in reasons.items():
            if rw not in REWRITES or not reason:
                raise ValueError(f"{KNOWN_FILE.name}: {what} entry: {rw!r} needs a known "
                                 f"rewrite and a reason: {entry}")
            key = (str(entry["rule"]), str(entry["example"]), rw)
            if key in out:
                raise ValueError(f"{KNOWN_FILE.name}: {what} entry listed twice: {key}")
            out[key] = str(reason)
    return out


def load_known(path: Path = KNOWN_FILE) -> Known:
    """The known failures and opt-outs: those of ``known_failures.yaml``, and the invalid rule
    examples that say in their rule file that their verdict must depend on a name the
    project chose (``depends_on_names: <why>``): they opt out of the ``names`` rewrite."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    opt_out = _expand(data.get("opt_out"), "opt_out")
    for key, reason in _name_dependent_examples().items():
        if key in opt_out:
            raise ValueError(f"{KNOWN_FILE.name}: opt_out entry also in the rule file: {key}")
        opt_out[key] = reason
    return Known(_expand(data.get("failures"), "failures"), opt_out)


def _name_dependent_examples() -> dict[Key, str]:
    from evallint.registry import load_rules

    out: dict[Key, str] = {}
    for code, meta in sorted(load_rules().items()):
        for ex in meta.tests.get("invalid") or []:
            why = ex.get("depends_on_names")
            if why:
                out[(code, ex.get("name", ""), "names")] = f"depends on names: {why}"
    return out


# ---------------------------------------------------------------------------------------------
# The measurement.


@dataclass
class Run:
    outcomes: list[Outcome]
    seconds: dict[str, float]  # linting before, rewriting, linting after each rewrite


def measure(cases: Iterable[Case], rewrites: Iterable[str] | None = None,
            known: Known | None = None) -> Run:
    """Lint each case, then each rewrite of it, in this process. A case's Python is parsed and
    analysed once for all its rewrites."""
    names = list(rewrites or REWRITES)
    known = known or Known({}, {})
    outcomes: list[Outcome] = []
    seconds = dict.fromkeys(["before", "rewriting", *names], 0.0)
    for case in cases:
        start = time.perf_counter()
        before = lint(case, case.files)
        scope = None
        if case.fixture:
            # only the verdicts that depend on the Python: those a tree without it lacks
            rest = {p: c for p, c in case.files.items() if not is_python(p)}
            scope = before - lint(case, rest)
        seconds["before"] += time.perf_counter() - start
        start = time.perf_counter()
        todo = [n for n in names if known.opted_out(case, n) is None]
        try:
            results = rewrite_all(case.files, todo)
        except NotApplicable:
            results = {}
        seconds["rewriting"] += time.perf_counter() - start
        for name in names:
            reason = known.opted_out(case, name)
            result = results.get(name)
            if reason is not None:
                outcomes.append(Outcome(case, name, True, before, before, reason, scope))
            elif result is None or not result.changed:
                outcomes.append(Outcome(case, name, False, before, before, None, scope))
            else:
                start = time.perf_counter()
                found = lint(case, result.files)
                after = frozenset((code, result.origin.get(path, path)) for code, path in found)
                outcomes.append(Outcome(case, name, True, before, after, None, scope))
                seconds[name] += time.perf_counter() - start
    return Run(outcomes, seconds)


def fast_cases(cases: list[Case]) -> list[Case]:
    """The subset every test run checks: each rule's first Python invalid example and the
    fixtures (the whole matrix runs when EVALLINT_SLOW_TESTS=1)."""
    seen: set[str] = set()
    out = []
    for case in cases:
        if case.fixture or case.rule not in seen:
            seen.add(case.rule)
            out.append(case)
    return out


def covers(run: Run, key: Key) -> bool:
    """Whether ``run`` measured the example and rewrite a known failure names."""
    rule, example, rewrite = key
    for o in run.outcomes:
        if o.rewrite != rewrite:
            continue
        if o.case.fixture and example.startswith(FIXTURES + "/"):
            return True
        if not o.case.fixture and (o.case.rule, o.case.name) == (rule, example):
            return True
    return False


def failing(run: Run) -> dict[Key, Outcome]:
    return {key: o for o in run.outcomes for key, ok in o.units() if not ok}


def describe(outcome: Outcome, key: Key | None = None) -> str:
    lost = sorted(outcome.before - outcome.after)
    gained = sorted(outcome.after - outcome.before)
    if outcome.case.fixture and key is not None:
        verdict = (key[0], key[1])
        return "lost" if verdict in outcome.before else "new finding"
    parts = []
    if lost:
        parts.append("lost " + ", ".join(f"{c} {p}" for c, p in lost))
    if gained:
        parts.append("new " + ", ".join(f"{c} {p}" for c, p in gained))
    return "; ".join(parts) or "unchanged"


# ---------------------------------------------------------------------------------------------
# The table.


def table(run: Run) -> str:
    names = list(dict.fromkeys(o.rewrite for o in run.outcomes))
    lines: list[str] = []

    def section(title: str, fixture: bool) -> tuple[int, int]:
        rows: dict[str, dict[str, list[int]]] = {}
        opted: dict[str, int] = {}
        gained: dict[str, int] = {}
        for o in run.outcomes:
            if o.case.fixture != fixture:
                continue
            if o.opted_out:
                opted[o.rewrite] = opted.get(o.rewrite, 0) + 1
                continue
            for (rule, example, rw), alive in o.units():
                if fixture and (rule, example) not in o.before:
                    gained[rw] = gained.get(rw, 0) + 1
                    continue
                cell = rows.setdefault(rule, {}).setdefault(rw, [0, 0])
                cell[0] += int(alive)
                cell[1] += 1
        if not rows:
            return 0, 0
        width = max(len(r) for r in rows) + 2
        lines.append(title)
        lines.append("rule".ljust(width) + "".join(n.rjust(11) for n in names) + "      total")
        total_ok = total_n = 0
        col: dict[str, list[int]] = {n: [0, 0] for n in names}
        for rule in sorted(rows):
            ok = sum(c[0] for c in rows[rule].values())
            n = sum(c[1] for c in rows[rule].values())
            total_ok += ok
            total_n += n
            cells = []
            for name in names:
                c = rows[rule].get(name)
                if c:
                    col[name][0] += c[0]
                    col[name][1] += c[1]
                cells.append((f"{c[0]}/{c[1]}" if c else "-").rjust(11))
            lines.append(rule.ljust(width) + "".join(cells) + f"{ok}/{n}".rjust(11))
        lines.append("all".ljust(width) + "".join(
            (f"{col[n][0]}/{col[n][1]}" if col[n][1] else "-").rjust(11) for n in names)
            + f"{total_ok}/{total_n}".rjust(11))
        if any(col[n][1] for n in names):
            lines.append("survival".ljust(width) + "".join(
                (f"{100 * col[n][0] / col[n][1]:.0f}%" if col[n][1] else "-").rjust(11)
                for n in names) + (f"{100 * total_ok / total_n:.0f}%" if total_n
                                   else "-").rjust(11))
        if opted:
            lines.append("opted out".ljust(width) + "".join(
                str(opted.get(n, 0)).rjust(11) for n in names))
        if gained:
            lines.append("new findings".ljust(width) + "".join(
                str(gained.get(n, 0)).rjust(11) for n in names))
        lines.append("")
        return total_ok, total_n

    a = section("Rule examples (a verdict: an example's set of (code, path)), survived/applicable",
                fixture=False)
    b = section("fixtures/broken (a verdict: one (code, path)), survived/reported before",
                fixture=True)
    ok, n = a[0] + b[0], a[1] + b[1]
    if n:
        lines.append(f"overall: {ok}/{n} verdicts survive ({100 * ok / n:.1f}%)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Why a verdict is lost: the names it hangs on.

NARROWABLE = ("names", "aliases", "to_class", "to_module")


def diagnose(outcome: Outcome, key: Key) -> str:
    """Which of the names a rewrite touched a lost verdict hangs on: those whose rewriting
    alone loses it, else those any one of which, left alone, keeps it. In the fixtures, the
    names of the verdict's own file first, then of the files beside it."""
    case, name = outcome.case, outcome.rewrite
    if name not in NARROWABLE:
        return ""
    rewrite = REWRITES[name]
    full = rewrite(case.files)
    verdict = (key[0], key[1]) if case.fixture else None

    def changed(only: set[str]) -> bool:
        result = rewrite(case.files, only=only)  # type: ignore[call-arg]
        if not result.changed:
            return False
        found = lint(case, result.files)
        after = frozenset((c, result.origin.get(p, p)) for c, p in found)
        if verdict is None:
            return after != outcome.before
        return (verdict in after) != (verdict in outcome.before)

    scopes: list[set[str] | None] = [None]
    if verdict is not None:
        folder = verdict[1].rpartition("/")[0]
        scopes = [{verdict[1], ""}, {p for p, _n in full.touched
                                     if p.rpartition("/")[0] == folder} | {""}]
    for where in scopes:
        candidates = list(dict.fromkeys(n for p, n in full.touched
                                        if where is None or p in where))
        necessary = [n for n in candidates if changed({n})]
        if necessary:
            return "alone: " + ", ".join(f"`{n}`" for n in necessary)
        if len(candidates) > 1:
            keeps = [n for n in candidates if not changed(set(candidates) - {n})]
            if keeps:
                return "any one kept keeps it: " + ", ".join(f"`{n}`" for n in keeps)
    return "only all together"
