"""Undo of skill changes: write a change's `before` back through the skill store's public API.

Undoing one file of a delete restores the whole folder (its files share a `batch`); undoing an
archive moves the folder back out of skills/.archive/ (and undoing a restore moves it in again);
a file already as it was is left alone, so undoing a whole review never writes twice.
knowledge/undo.py dispatches the undo of kind "skill" here.
"""

from __future__ import annotations

from knowledge import changelog
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.skills import archive
from knowledge.skills.files import Snap, prune_empty, safe_join, shown_text, snapshot, write_skill_file
from knowledge.skills.format import SKILL_FILE, SkillError, check_rel_path
from knowledge.skills.store import SkillStore


def restore(store: SkillStore, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
    """Put a change's `before` back; undoing one file of a delete restores the whole folder."""
    if change.action in ("disable", "enable"):
        store.set_enabled(change.target, change.action == "disable", prov, undoes=change)
        return KnowledgeChange.objects.filter(undoes=change).order_by("-id").first()
    if change.action in ("archive", "restore"):  # a folder moved into or out of skills/.archive/
        return archive.undo_move(store, change, prov)
    changes = [change]
    if change.action == "delete" and change.batch:
        changes = list(
            KnowledgeChange.objects.filter(
                kind="skill", target=change.target, action="delete", batch=change.batch
            ).order_by("id")
        )
    with store.locked():
        results = {c.pk: _restore_file(store, c, prov) for c in changes}
    return results.get(change.pk) or next((r for r in results.values() if r is not None), None)


def _restore_file(store: SkillStore, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
    root = store.root
    try:
        target = safe_join(root, check_rel_path(change.path, support_only=False), "the skills folder")
    except SkillError as exc:
        raise changelog.UndoError(f"Cannot undo: {exc}") from exc
    now = snapshot(target)
    if not change.existed_before:
        if not now.exists:
            return None  # already gone: nothing to undo
        target.unlink()
        prune_empty(target.parent, root)
        return store.record_change(change.target, "undo", prov, target, now, None, undoes=change)
    wanted = Snap(exists=True, text=change.before, is_b64=change.binary).raw()
    if now.exists and now.raw() == wanted:
        return None  # already as it was (e.g. the rest of a delete batch restored it)
    if target.name == SKILL_FILE and not now.exists:
        other = store.find(change.target)
        if other is not None and other.path != target.parent:
            raise changelog.UndoError(f"Cannot undo: a skill named '{change.target}' exists again elsewhere.")
    write_skill_file(target, wanted)
    return store.record_change(change.target, "undo", prov, target, now, shown_text(wanted), undoes=change)
