"""Suppression comments in every syntax, their reach, and what counts as unused."""

from __future__ import annotations

from evallint.suppress import scan


def test_jinja_comment_same_line() -> None:
    [s] = scan("{{ x }}  {# evallint: ignore[EL102] -- judge needs it #}\n")
    assert s.codes == ("EL102",)
    assert s.reason == "judge needs it"
    assert s.covers("EL102", 1, None)
    assert not s.covers("EL103", 1, None)
    assert not s.whole_file


def test_standalone_comment_covers_next_nonblank_line() -> None:
    text = "a\n<!-- evallint: ignore[EL105] -- wrapped by caller -->\n\n{{ output }}\n"
    [s] = scan(text)
    assert s.covers("EL105", 2, None)
    assert s.covers("EL105", 4, None)
    assert not s.covers("EL105", 1, None)


def test_trailing_comment_does_not_cover_next_line() -> None:
    [s] = scan("x = 1  # evallint: ignore[EL201] -- fine\ny = 2\n")
    assert not s.covers("EL201", 2, None)


def test_prefix_codes_and_multiple_codes() -> None:
    [s] = scan("# evallint: ignore[EL2, EL301] -- legacy loop\n")
    assert s.codes == ("EL2", "EL301")
    assert s.covers("EL203", 1, None) and s.covers("EL301", 1, None)
    assert not s.covers("EL302", 1, None)


def test_blanket_and_file_level() -> None:
    [s] = scan("{{! evallint: ignore -- generated file }}\n")
    assert s.codes == () and s.covers("EL999", 1, None)
    [f] = scan("line\n# evallint: ignore-file[EL501] -- offline script\n")
    assert f.whole_file and f.covers("EL501", 99, None)


def test_missing_reason_and_colon_reason() -> None:
    [a] = scan("{# evallint: ignore[EL101] #}\n")
    assert a.reason == ""
    [b] = scan("# evallint: ignore[EL101]: merged on purpose\n")
    assert b.reason == "merged on purpose"


def test_prose_mention_is_not_a_suppression() -> None:
    assert scan("Write `evallint: ignore[EL101]` in a comment to silence a rule.\n") == []


def test_cells_are_separate() -> None:
    [s] = scan("x = 1  # evallint: ignore[EL201] -- ok\n", cell=3)
    assert s.covers("EL201", 1, 3)
    assert not s.covers("EL201", 1, 2)
