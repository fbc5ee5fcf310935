"""openai/evals model-graded specs: str.format fields, positions, allow-list, input_outputs."""

from __future__ import annotations

from pathlib import Path

from evallint.facts import Pos
from evallint.frontends.openai_evals_front import format_fields
from tests.conftest import lint_tree, write_files


def test_format_fields_lines_and_escapes() -> None:
    fields = format_fields("A {input}\n{{not}} {x.y} {z[0]}\n{0}", 10, 5)
    assert [(f.name, f.field, f.pos) for f in fields] == [
        ("input", "input", Pos(10, 7)), ("x", "x.y", Pos(11, 1)), ("z", "z[0]", Pos(11, 1))]


def test_unbalanced_braces_yield_no_fields() -> None:
    assert format_fields("Reply with {\"score\": 1", 1, 1) == []


def test_single_line_quoted_prompt_position(tmp_path: Path) -> None:
    write_files(tmp_path, {"registry/modelgraded/s.yaml":
                           'spec:\n  prompt: "Grade {completion} given {plan}"\n'})
    result = lint_tree(tmp_path, {"EL205"})
    assert [(f.line, f.column) for f in result.findings] == [(2, 37)]


def test_config_aliases_extend_the_allow_list(tmp_path: Path) -> None:
    write_files(tmp_path, {"registry/modelgraded/s.yaml":
                           "spec:\n  prompt: 'Q {question} A {completion}'\n"})
    assert lint_tree(tmp_path, {"EL205"}).findings
    clean = lint_tree(tmp_path, {"EL205"}, {"aliases": {"input": ["question"]}})
    assert clean.findings == []


def test_non_spec_entries_are_ignored(tmp_path: Path) -> None:
    write_files(tmp_path, {"registry/modelgraded/s.yaml": "spec:\n  choice_strings: YN\n"
                           "other: 3\n"})
    assert lint_tree(tmp_path, {"EL205", "EL901"}).findings == []


def test_unknown_fields_are_notes_signals_errors_counts_fine(tmp_path: Path) -> None:
    import re

    from evallint.findings import Severity

    write_files(tmp_path, {"registry/modelgraded/s.yaml":
                           'spec:\n  prompt: "Of {n} replies to {input} in {dialect}, given '
                           '{chat_history}, pick one of {completion}"\n'})
    result = lint_tree(tmp_path, {"EL205"})
    got = sorted((re.findall(r"renders '([^']+)'", f.message)[0], f.severity)
                 for f in result.findings)
    assert got == [("chat_history", Severity.ERROR), ("dialect", Severity.NOTE)]
