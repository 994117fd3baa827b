"""What each review of a session learned, for the 💾 line the chat keeps under the answer it followed."""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.models import KnowledgeChange, PendingWrite, ReviewRun


@dataclass
class LearnedLine:
    run: ReviewRun
    changes: list[KnowledgeChange] = field(default_factory=list)
    waiting: int = 0

    @property
    def upto_message_id(self) -> int | None:
        return self.run.upto_message_id


def for_session(session_id: str) -> list[LearnedLine]:
    """Finished reviews of the session that changed something or left writes waiting, oldest first."""
    runs = ReviewRun.objects.filter(session_id=session_id, status="done", upto_message_id__isnull=False).order_by("id")
    lines = {run.pk: LearnedLine(run) for run in runs}
    if not lines:
        return []
    changes = KnowledgeChange.objects.filter(review_id__in=lines).exclude(actor="undo").prefetch_related("undone_by")
    for change in changes.order_by("id"):
        lines[change.review_id].changes.append(change)
    for pending in PendingWrite.objects.filter(review_id__in=lines, status="pending").values_list(
        "review_id", flat=True
    ):
        lines[pending].waiting += 1
    return [line for line in lines.values() if line.changes or line.waiting]
