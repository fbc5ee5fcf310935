"""Property tests: the core text handling never raises on arbitrary input."""

from __future__ import annotations

import warnings
from pathlib import Path

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


def _pack_folder(root: Path) -> tuple[Path, dict[str, object]]:
    from evallint.cache import Store

    values: dict[str, object] = {"a" * 64: ["one", 1], "b" * 64: ["two", [2, 3]],
                                 "c" * 64: ["three" * 40]}
    store = Store(root, b"k" * 32, "salt")
    for key, value in values.items():
        store.put("files", key, value)
    store.flush()
    return next((root / "files").iterdir()), values


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=4000), st.binary(max_size=20)),
                max_size=4),
       st.integers(min_value=0, max_value=4000))
def test_a_damaged_pack_answers_the_right_value_or_a_miss_never_an_error(
        edits: list[tuple[int, bytes]], cut: int) -> None:
    """A pack in the project's cache folder may come from anyone: bytes overwritten, a cut
    short file; each entry then reads as what was stored or as a miss (its HMAC)."""
    import tempfile

    from evallint.cache import Store

    with tempfile.TemporaryDirectory() as tmp:
        pack, values = _pack_folder(Path(tmp))
        blob = bytearray(pack.read_bytes())
        for at, data in edits:
            at = min(at, len(blob))
            blob[at:at + len(data)] = data
        pack.write_bytes(bytes(blob[:max(cut, len(blob) // 2)]))
        store = Store(Path(tmp), b"k" * 32, "salt")
        for key, value in values.items():
            store.has("files", key)
            assert store.get("files", key) in (None, value)
        store.close()
