"""The change log: written only by the stores, read by the dashboard.

Each store calls `record()` while it still holds its file lock, so the log's order matches the
order of writes on disk. Undo (knowledge/undo.py) writes a change back through the store that owns
the file, so an undo goes through the same lock, limits and log as any write.
"""

from __future__ import annotations

from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance


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
    """A change cannot be written back (raised by knowledge/undo.py and the stores' restorers)."""
