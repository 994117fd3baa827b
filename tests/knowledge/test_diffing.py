"""Side-by-side diffs for the change log and the inbox: paired lines with numbers, context cut
around changes, plain text only."""

from __future__ import annotations

from knowledge.diffing import DiffRow, side_by_side


def test_a_changed_line_is_paired_with_its_old_version():
    rows = side_by_side("a\nb\nc", "a\nB\nc")
    assert rows == [
        DiffRow("equal", 1, "a", 1, "a"),
        DiffRow("replace", 2, "b", 2, "B"),
        DiffRow("equal", 3, "c", 3, "c"),
    ]


def test_uneven_replacements_show_the_extra_lines_as_inserted_or_deleted():
    assert [r.kind for r in side_by_side("x\ny", "X")] == ["replace", "delete"]
    grown = side_by_side("x", "X\nY")
    assert [r.kind for r in grown] == ["replace", "insert"]
    assert grown[1] == DiffRow("insert", None, "", 2, "Y")


def test_a_new_file_is_all_inserts_and_a_removed_one_all_deletes():
    assert [(r.kind, r.right_no) for r in side_by_side("", "one\ntwo")] == [("insert", 1), ("insert", 2)]
    assert [(r.kind, r.left_no) for r in side_by_side("one", "")] == [("delete", 1)]
    assert side_by_side("same", "same") == []  # nothing changed, nothing to show


def test_long_unchanged_runs_are_cut_to_the_context_with_a_skip_row():
    old = "\n".join(f"line {i}" for i in range(1, 31))
    new = old.replace("line 2\n", "line two\n").replace("line 28", "line twenty-eight")
    rows = side_by_side(old, new, context=1)
    assert [r.kind for r in rows] == ["equal", "replace", "equal", "skip", "equal", "replace", "equal"]
    assert rows[5] == DiffRow("replace", 28, "line 28", 28, "line twenty-eight")
    full = side_by_side(old, new, context=None)
    assert len(full) == 30 and "skip" not in {r.kind for r in full}


def test_hostile_text_stays_plain_text():
    rows = side_by_side("", "<script>alert(1)</script>")
    assert rows[0].right == "<script>alert(1)</script>"
