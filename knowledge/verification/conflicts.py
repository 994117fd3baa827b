"""Conflicts: a new entry about the same subject as an existing one that says something else.

Two entries are on the same subject when their topic terms (content words without the reviewer's
framing, CJK bigrams; numbers aside) overlap: at least one shared, and at least SUBJECT_OVERLAP of
the smaller set. Entries that name different things (server A / server B, db1 / db2, two paths)
are about different subjects; entries that differ only in a value (2-space / 4-space indents,
Postgres 15 / 16) cannot both hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from knowledge.verification import lexicon
from knowledge.verification.similarity import fold_equal, identifiers

SUBJECT_OVERLAP = 0.5
# A value rather than a name: a number, a version, a date, a size ("2-space", "v1.2", "16gb").
_VALUE = re.compile(r"^v?\d")


@dataclass(frozen=True)
class Conflict:
    where: str  # the file of the existing entry: "memory" | "user"
    text: str  # the existing entry
    values_only: bool  # they differ only in a value, so "both hold" cannot be true


def topic_terms(text: str) -> set[str]:
    return {t for t in lexicon.content_terms(text, framing=False) if not t[:1].isdigit()}


_STRONG = re.compile(r"\d|\w[./:@\\]\w|^\w$")


def _names(text: str) -> set[str]:
    """Names that single a thing out (server B, db1, a host, a path); a capitalised word such as an
    editor's name is more often the value the entries disagree on."""
    return {i for i in identifiers(text) if _STRONG.search(i) and not _VALUE.match(i)}


def same_subject(a: str, b: str) -> bool:
    ta, tb = topic_terms(a), topic_terms(b)
    shared = ta & tb
    if not shared or len(shared) / min(len(ta), len(tb)) < SUBJECT_OVERLAP:
        return False
    # Different names on the same kind of thing are two subjects (server A and server B).
    return not (_names(a) ^ _names(b))


def find(content: str, entries: Iterable[tuple[str, str]]) -> Conflict | None:
    """The existing entry the new `content` is on the same subject as but differs from, if any."""
    for where, entry in entries:
        if fold_equal(entry, content) or not same_subject(content, entry):
            continue
        values_only = topic_terms(content) == topic_terms(entry)
        return Conflict(where, entry, values_only)
    return None
