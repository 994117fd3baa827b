"""Near duplicates of what is already known: checked before a memory or skill write is saved or
queued, and listed on the memory page (SPEC §10, "No duplicates, visible conflicts")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowledge.memory_ops import TARGETS
from knowledge.memory_store import MemoryStore
from knowledge.similarity import THRESHOLD, Match, duplicate_pairs, fold_equal, nearest, similarity
from knowledge.skill_format import SkillError, parse_skill_md
from knowledge.skills import SkillStore


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


def _name_words(name: str) -> str:
    return name.replace("-", " ").replace("_", " ").replace(".", " ")


def skill_duplicate(store: SkillStore, name: str, content: str) -> str | None:
    """An error naming the existing skill a new one nearly repeats (by name or description)."""
    try:
        description = parse_skill_md(content).description
    except SkillError:
        return None  # the store's own validation reports the format problem
    for info in store.list():
        if info.name == name:
            continue  # the store refuses the same name itself
        same_name = similarity(_name_words(name), _name_words(info.name)) >= THRESHOLD
        same_text = bool(description and info.description) and similarity(description, info.description) >= THRESHOLD
        if same_name or same_text:
            return (
                f"Not created: skill '{info.name}' already covers this ({info.description[:160]!r}). "
                f"Patch or edit '{info.name}' with what you learned instead of creating a near duplicate."
            )
    return None


def memory_duplicate_pairs(store: MemoryStore) -> list[tuple[Match, Match]]:
    return duplicate_pairs(all_entries(store))
