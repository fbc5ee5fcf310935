"""Every rule's VALID/INVALID examples from rules/*.yaml, run as tests (Fixit/semgrep style).

A rule cannot drift from its documentation: the examples in its YAML are what is tested.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evallint.registry import load_rules
from tests.conftest import lint_tree, write_files

METAS = load_rules()


def _cases(kind: str) -> list[Any]:
    out = []
    for code, meta in sorted(METAS.items()):
        for i, ex in enumerate(meta.tests.get(kind) or []):
            out.append(pytest.param(code, ex, id=f"{code}-{kind}-{i}-{ex.get('name', '')[:40]}"))
    return out


@pytest.mark.parametrize("code", sorted(METAS))
def test_rule_has_two_valid_and_two_invalid_examples(code: str) -> None:
    tests = METAS[code].tests
    assert len(tests.get("valid") or []) >= 2, f"{code} needs at least two valid examples"
    assert len(tests.get("invalid") or []) >= 2, f"{code} needs at least two invalid examples"


@pytest.mark.parametrize(("code", "example"), _cases("valid"))
def test_valid_example_is_clean(code: str, example: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path, example["files"])
    result = lint_tree(tmp_path, {code, *example.get("enable", [])}, example.get("config"))
    assert not result.tool_errors
    hits = [f for f in result.findings if f.code == code]
    assert hits == [], f"{code} fired on a valid example: {hits}"


@pytest.mark.parametrize(("code", "example"), _cases("invalid"))
def test_invalid_example_is_reported(code: str, example: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path, example["files"])
    result = lint_tree(tmp_path, {code, *example.get("enable", [])}, example.get("config"))
    assert not result.tool_errors
    hits = [f for f in result.findings if f.code == code]
    expected = example.get("expect") or []
    assert hits, f"{code} did not fire on an invalid example"
    only = next(iter(example["files"])) if len(example["files"]) == 1 else None
    for exp in expected:
        path = exp.get("path", only)
        match = [f for f in hits if f.path == path and f.line == exp["line"]
                 and ("column" not in exp or f.column == exp["column"])
                 and ("cell" not in exp or f.cell == exp["cell"])
                 and ("severity" not in exp or f.severity.value == exp["severity"])]
        assert match, f"{code}: expected a finding at {path}:{exp['line']}, got {hits}"
    if "count" in example:
        assert len(hits) == example["count"], hits


def test_every_rule_has_a_check_and_every_check_a_rule() -> None:
    """A rule file nothing reports is dead documentation; a check without a rule file has no
    docs and cannot be selected. The suppression rules (EL902-EL904) are the engine's own."""
    from evallint import engine
    from evallint.registry import FILE_CHECKS, PROJECT_CHECKS, load_checks

    load_checks()
    checked = {code for check in (*FILE_CHECKS, *PROJECT_CHECKS) for code in check.codes}
    engine_codes = {engine.UNPARSABLE, engine.UNUSED_SUPPRESSION, engine.UNKNOWN_SUPPRESSION,
                    engine.UNREASONED_SUPPRESSION}
    rules = set(load_rules())
    assert rules - checked - engine_codes == set()
    assert checked - rules == set()


def test_the_architecture_rule_table_is_generated_from_the_rule_files() -> None:
    """ARCHITECTURE.md's rule table is the output of `evallint rule --all --output-format
    table` between its markers, so a new rule cannot be left out of it."""
    from evallint.cli import rules_table

    text = (Path(__file__).resolve().parents[1] / "ARCHITECTURE.md").read_text()
    begin = text.index("<!-- rule-table:start")
    begin = text.index("\n", begin) + 1
    end = text.index("<!-- rule-table:end -->")
    table = rules_table(list(load_rules().values()))
    assert text[begin:end] == table
    assert set(re.findall(r"\bEL\d{3}\b", table)) == set(load_rules())


def test_the_precompiled_rules_match_the_rule_files() -> None:
    """rules/rules.compiled.json is what start-up reads; after editing a rule file, regenerate
    it with `python -m evallint.rulemeta` (a stale copy is ignored at run time, but then every
    run pays for the YAML)."""
    from evallint.rulemeta import COMPILED, compile_rules, rules_dir

    assert (rules_dir() / COMPILED).read_text(encoding="utf-8") == compile_rules()


def test_the_precompiled_vocabularies_match_the_data_files() -> None:
    """rules/data/data.compiled.json carries the vocabularies (judge words) the roles read
    at start-up without importing YAML; regenerate it with `python -m evallint.rulemeta`."""
    from evallint.rulemeta import DATA_COMPILED, compile_rules, rules_dir

    folder = rules_dir() / "data"
    assert (folder / DATA_COMPILED).read_text(encoding="utf-8") == compile_rules(folder)


def test_a_stale_or_broken_precompiled_copy_is_not_used(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules come from the YAML whenever the compiled copy was made from other files."""
    from evallint import rulemeta

    src = rulemeta.rules_dir()
    for p in src.glob("*.yaml"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / rulemeta.COMPILED).write_text(rulemeta.compile_rules(tmp_path))
    edited = tmp_path / "EL101.yaml"
    edited.write_text(edited.read_text().replace("\nsummary: ", "\nsummary: Edited. ", 1))
    monkeypatch.setattr(rulemeta, "rules_dir", lambda: tmp_path)
    for compiled in ("stale", "{not json", '{"digest": 1}'):
        if compiled != "stale":
            (tmp_path / rulemeta.COMPILED).write_text(compiled)
        rulemeta.load_rules.cache_clear()
        try:
            assert rulemeta.load_rules()["EL101"].summary.startswith("Edited. ")
        finally:
            rulemeta.load_rules.cache_clear()


def test_modules_outside_the_kind_table_register_nothing() -> None:
    """load_checks imports the modules of MODULE_KINDS (and any check module it misses); the
    other front-end modules (helpers, the lazily imported Jinja front-end) must register
    nothing, or what they register would be missing from a run."""
    import importlib

    from evallint.facts.modelpairs import SOURCES
    from evallint.frontend import FRONTENDS
    from evallint.registry import (
        FILE_CHECKS,
        MODULE_KINDS,
        PROJECT_CHECKS,
        load_checks,
        registering_modules,
    )

    load_checks()
    before = (dict(FRONTENDS), list(FILE_CHECKS), list(PROJECT_CHECKS), list(SOURCES))
    others = [name for name in registering_modules()
              if name not in MODULE_KINDS and name.startswith("evallint.frontends.")]
    assert "evallint.frontends.jinja_front" in others
    for name in others:
        importlib.reload(importlib.import_module(name))
    assert (dict(FRONTENDS), list(FILE_CHECKS), list(PROJECT_CHECKS), list(SOURCES)) == before
