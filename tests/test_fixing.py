"""The edit primitives every fix and the editor server rely on."""

from evallint.fixing import TextEdit, apply_edits, line_offsets, offset_of, position_of


def test_apply_edits_in_position_order_and_drops_overlaps() -> None:
    text = "abcdef"
    edits = [TextEdit(4, 5, "E"), TextEdit(0, 1, "A"), TextEdit(0, 2, "zz")]
    assert apply_edits(text, edits) == "AbcdEf"


def test_insertion_at_end() -> None:
    assert apply_edits("x\n", [TextEdit(2, 2, "y\n")]) == "x\ny\n"


def test_offsets_round_trip() -> None:
    text = "one\ntwo\nthree"
    starts = line_offsets(text)
    off = offset_of(text, 3, 2, starts)
    assert text[off] == "h"
    assert position_of(off, starts) == (2, 1)
    assert offset_of(text, 99, 99, starts) == len(text)
