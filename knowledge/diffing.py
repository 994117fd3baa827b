"""Side-by-side line diffs for the change log and the approval inbox (difflib, no HTML).

Rows carry plain text only; templates auto-escape it, so a diff of hostile content shows the
content and never runs it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

# Enough context to see where a change sits without drowning a one-line edit in a long file.
CONTEXT_LINES = 3


@dataclass(frozen=True)
class DiffRow:
    kind: str  # "equal" | "replace" | "delete" | "insert" | "skip"
    left_no: int | None = None
    left: str = ""
    right_no: int | None = None
    right: str = ""


def side_by_side(before: str, after: str, context: int | None = CONTEXT_LINES) -> list[DiffRow]:
    """Rows pairing the old and new lines; unchanged runs are cut to `context` lines around changes."""
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    groups: list[Sequence[tuple[str, int, int, int, int]]]
    groups = [matcher.get_opcodes()] if context is None else list(matcher.get_grouped_opcodes(context))
    rows: list[DiffRow] = []
    for n, group in enumerate(groups):
        if n and context is not None:
            rows.append(DiffRow(kind="skip"))
        for tag, i1, i2, j1, j2 in group:
            rows.extend(_rows(tag, old, new, i1, i2, j1, j2))
    return rows


def _rows(tag: str, old: list[str], new: list[str], i1: int, i2: int, j1: int, j2: int) -> list[DiffRow]:
    rows = []
    for k in range(max(i2 - i1, j2 - j1)):
        i, j = i1 + k, j1 + k
        has_left, has_right = i < i2, j < j2
        kind = tag
        if tag == "replace" and not has_right:
            kind = "delete"
        elif tag == "replace" and not has_left:
            kind = "insert"
        rows.append(
            DiffRow(
                kind=kind,
                left_no=i + 1 if has_left else None,
                left=old[i] if has_left else "",
                right_no=j + 1 if has_right else None,
                right=new[j] if has_right else "",
            )
        )
    return rows
