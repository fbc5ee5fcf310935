"""A key given twice in a loop spec is an error with its line (YAML would keep the last)."""

from __future__ import annotations

import pytest

from evallint.executor.errors import SpecError
from evallint.executor.yamlmarks import load_located


def test_duplicate_key_named_with_line() -> None:
    with pytest.raises(SpecError) as exc:
        load_located("pass_threshold: 0.8\nmax_attempts: 3\npass_threshold: 0.9\n", "loop.yaml")
    assert "duplicate key 'pass_threshold'" in str(exc.value)
    assert exc.value.line == 3


def test_lines_of_nested_keys_and_items() -> None:
    doc = load_located("generator:\n  model: a\nchecks:\n  - type: length\n", "loop.yaml")
    assert doc.line("generator", "model") == 2
    assert doc.line("checks", 0) == 4
    assert doc.line("checks", 0, "missing") == 4
