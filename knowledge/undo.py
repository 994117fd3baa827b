"""Undo: write a change's `before` back through the store that owns the file, so an undo takes
the same lock, limits and change log as any write, and is itself recorded (and undoable).

This module imports the stores and dispatches by the change's kind; nothing registers itself at
import time, so what can be undone is read here, in one table.
"""

from __future__ import annotations

from collections.abc import Callable

from foundation import config as hermes_config
from knowledge.changelog import UndoError
from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.skills import undo as skill_undo
from knowledge.skills.store import SkillStore

__all__ = ["RESTORERS", "UndoError", "undo", "undo_review"]

# kind -> fn(change, provenance) that writes change.before back through the owning store and
# returns the KnowledgeChange it recorded for that write (None: the file was already as it was).
Restorer = Callable[[KnowledgeChange, Provenance], KnowledgeChange | None]


def _memory(change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
    return MemoryStore().restore(change, prov)


def _skill(change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
    # The current config: skills.disabled may have changed since the change was made.
    return skill_undo.restore(SkillStore(hermes_config.get()), change, prov)


RESTORERS: dict[str, Restorer] = {"memory": _memory, "skill": _skill}


def undo(change: KnowledgeChange, prov: Provenance | None = None) -> KnowledgeChange | None:
    """Write `change.before` back (recorded as an 'undo' change pointing at `change`)."""
    restorer = RESTORERS.get(change.kind)
    if restorer is None:
        raise UndoError(f"No store can undo changes of kind {change.kind!r}")
    return restorer(change, prov or Provenance(actor="undo"))


def undo_review(review_id: int, prov: Provenance | None = None) -> list[KnowledgeChange]:
    """Undo everything one review did, newest first, so each file ends as it was before it."""
    done: list[KnowledgeChange] = []
    changes = KnowledgeChange.objects.filter(review_id=review_id).exclude(actor="undo").order_by("-created_at", "-id")
    for change in changes:
        result = undo(change, prov)
        if result is not None:
            done.append(result)
    return done
