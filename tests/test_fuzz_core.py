"""Property tests: the core text handling never raises on arbitrary input."""

from __future__ import annotations

import warnings

from hypothesis import given, settings
from hypothesis import strategies as st

from evallint import globs
from evallint.classify import classify
from evallint.source import LineIndex, SourceError, decode, offset_to_pos
from evallint.suppress import scan

FRAGMENTS = st.sampled_from([
    "evallint: ignore", "[EL1", "]", "--", "#", "{#", "#}", "<!--", "-->", "{{!", "}}", "\n",
    " ", "EL201", ",", "ignore-file", ":", "reason",
])
TEXT = st.one_of(st.text(), st.lists(FRAGMENTS, max_size=30).map("".join))


@settings(max_examples=200)
@given(TEXT)
def test_scan_never_raises_and_lines_are_in_range(text: str) -> None:
    n = len(text.splitlines())
    for s in scan(text):
        assert 1 <= s.line <= max(n, 1)
        assert all(1 <= ln <= max(n, 1) for ln in s.lines)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_decode_raises_only_source_error(data: bytes) -> None:
    try:
        text = decode(data)
    except SourceError as exc:
        assert exc.line >= 1 and exc.column >= 1
    else:
        assert isinstance(text, str)


@settings(max_examples=200)
@given(st.text(max_size=200), st.data())
def test_line_index_matches_offset_to_pos(text: str, data: st.DataObject) -> None:
    idx = LineIndex(text)
    off = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert idx.pos(off) == offset_to_pos(text, off)


@settings(max_examples=200)
@given(st.text(alphabet="ab/._-*?[]", max_size=30), st.text(alphabet="ab/._-", max_size=30))
def test_globs_and_classify_never_raise(pattern: str, path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning from ``re`` would reach users
        globs.match(path, pattern)
    classify(path or "x", "generator: 1\nevaluator: 2\n", templates=(pattern,))
