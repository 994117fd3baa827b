"""Near duplicates among memory entries: checked before a memory write is saved or queued, and
listed on the memory page, so nothing is known twice and near repeats are visible."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowledge.memory.ops import TARGETS
from knowledge.memory.store import MemoryStore
from knowledge.verification.similarity import Match, duplicate_pairs, fold_equal, nearest


def all_entries(store: MemoryStore) -> list[tuple[str, str]]:
    """(target, entry) for every entry of both memory files."""
    return [(t, e) for t in TARGETS for e in store.entries(t)]


def memory_duplicate(store: MemoryStore, target: str, operations: Sequence[Mapping[str, Any]]) -> str | None:
    """An error naming the similar entry when a new entry nearly repeats one of either file."""
    entries = all_entries(store)
    for op in operations:
        content = op.get("content")
        if op.get("action") not in ("add", "replace") or not isinstance(content, str) or not content.strip():
            continue
        old = op.get("old_text") if op.get("action") == "replace" else None
        candidates = [
            (where, e)
            for where, e in entries
            # The entry being replaced is not a duplicate of its own new text; an exact repeat in the
            # same file is the store's "already exists" no-op, not a refusal.
            if not (isinstance(old, str) and old and old in e) and not (where == target and fold_equal(e, content))
        ]
        match = nearest(content, candidates)
        if match is not None:
            label = TARGETS[match.where].label.lower()
            return (
                f"Not saved: this nearly repeats an entry already in the {label} ({match.where}): {match.text!r}. "
                f"Use action 'replace' with old_text from that entry to update it instead of adding another."
            )
    return None


def memory_duplicate_pairs(store: MemoryStore) -> list[tuple[Match, Match]]:
    return duplicate_pairs(all_entries(store))
