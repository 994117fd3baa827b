"""The change log: written only by the stores, read by the dashboard.

Each store calls `record()` while it still holds its file lock, so the log's order matches the
order of writes on disk. Undo is dispatched by kind to the store that owns the file
(`register_restorer`), so an undo goes through the same lock, limits and log as any write.
"""

from __future__ import annotations

from collections.abc import Callable

from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance

# kind -> fn(change, provenance) that writes change.before back through the owning store and
# returns the KnowledgeChange it recorded for that write.
Restorer = Callable[[KnowledgeChange, Provenance], KnowledgeChange | None]
_RESTORERS: dict[str, Restorer] = {}


def register_restorer(kind: str, fn: Restorer) -> None:
    _RESTORERS[kind] = fn


def record(
    *,
    kind: str,
    target: str,
    action: str,
    prov: Provenance,
    before: str,
    after: str,
    path: str = "",
    summary: str = "",
    batch: str = "",
    binary: bool = False,
    existed_before: bool = True,
    exists_after: bool = True,
    undoes: KnowledgeChange | None = None,
) -> KnowledgeChange:
    return KnowledgeChange.objects.create(
        kind=kind,
        target=target,
        action=action,
        actor=prov.actor,
        session_id=prov.session_id,
        review_id=prov.review_id,
        message_id=prov.message_id or next((m for _, m in prov.evidence if m), None),
        evidence=[{"quote": q, "message_id": m} for q, m in prov.evidence],
        path=path,
        before=before,
        after=after,
        existed_before=existed_before,
        exists_after=exists_after,
        summary=summary[:300],
        batch=batch,
        binary=binary,
        undoes=undoes,
    )


class UndoError(Exception):
    pass


def undo(change: KnowledgeChange, prov: Provenance | None = None) -> KnowledgeChange | None:
    """Write `change.before` back (recorded as an 'undo' change pointing at `change`)."""
    restorer = _RESTORERS.get(change.kind)
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
