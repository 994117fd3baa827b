"""Learning runs (reviews) as records every server process can see: whether a session has one
queued or running, waiting for them, and failing the runs a dead process left behind.

The run's own state machine (queued -> running -> done | failed) is on the model
(`ReviewRun.start()`, `.finish()`, `.fail()`); this module holds the queries over many runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Exists, OuterRef

from knowledge.compiled_query import SessionRowQuery
from knowledge.history import session_ends, turns
from knowledge.history.waiting import Clock, Sleep, poll_until
from knowledge.history.workers import IN_QUEUE, is_alive
from knowledge.models import ChatSession, ReviewRun

log = logging.getLogger(__name__)

__all__ = [
    "IN_QUEUE",
    "adopt_orphans",
    "fail_stale",
    "is_active",
    "orphans",
    "recover_after_restart",
    "requeue_orphans",
    "title_and_review",
    "wait_idle",
]
STALE_REASON = "The server process running this review stopped before it finished (found at start-up)."


def is_active(session_id: str) -> bool:
    """A review of this session is queued or running (in any process)."""
    return ReviewRun.objects.filter(session_id=session_id, status__in=ReviewRun.ACTIVE).exists()


_TITLE_AND_REVIEW = SessionRowQuery(
    ChatSession,
    lambda pk: ChatSession.objects.filter(pk=pk).values_list(
        "title", Exists(ReviewRun.objects.filter(session_id=OuterRef("pk"), status__in=ReviewRun.ACTIVE))
    )[:1],
)


def title_and_review(session_id: str) -> tuple[str, bool]:
    """The chat's stored title and whether a review of it is queued or running, in one query:
    what the page learns after every turn (the person or the model may have renamed the chat)."""
    row = _TITLE_AND_REVIEW.row(session_id)
    return (str(row[0]), bool(row[1])) if row is not None else ("", False)


def wait_idle(session_id: str, timeout: float, *, clock: Clock = time.monotonic, sleep: Sleep = time.sleep) -> bool:
    """Block until this session has no queued or running review; False if `timeout` passed first."""
    return poll_until(lambda: not is_active(session_id), timeout, clock=clock, sleep=sleep)


def orphans() -> list[ReviewRun]:
    """Queued or running runs whose process is gone (runs waiting on the durable queue are not)."""
    active = ReviewRun.objects.filter(status__in=ReviewRun.ACTIVE).exclude(status="queued", worker=IN_QUEUE)
    return [run for run in active.only("pk", "worker", "status") if not run.worker or not is_alive(run.worker)]


def requeue_orphans(enqueue: Callable[[int], None]) -> list[int]:
    """The durable queue's recovery, when a queue worker starts: a review whose worker died
    (killed mid-review) goes back on the queue, to be run again from its conversation, once."""
    requeued = []
    for run in orphans():
        if ReviewRun.objects.filter(pk=run.pk, worker=run.worker, status__in=ReviewRun.ACTIVE).update(
            status="queued", worker=IN_QUEUE
        ):
            enqueue(run.pk)
            requeued.append(run.pk)
    return requeued


def adopt_orphans(worker: str) -> list[int]:
    """On a server's own threads: reviews whose process died are queued again for `worker`,
    which then runs them from their conversation; a live process racing for one loses, so each
    runs once."""
    return [
        run.pk
        for run in orphans()
        if ReviewRun.objects.filter(pk=run.pk, worker=run.worker, status__in=ReviewRun.ACTIVE).update(
            status="queued", worker=worker
        )
    ]


def fail_stale(reason: str = STALE_REASON) -> int:
    """Mark failed every queued or running run whose process is gone; returns how many."""
    failed = 0
    for run in orphans():
        failed += ReviewRun.objects.filter(pk=run.pk, worker=run.worker, status__in=ReviewRun.ACTIVE).update(
            status="failed", error=reason
        )
    return failed


def recover_after_restart() -> None:
    """At a server's or terminal's start: fail the reviews, free the turns and the session ends
    that a process which died left behind, so no run shows "running" forever and no chat stays
    "busy". On the durable queue, reviews and ends are the queue workers' to recover
    (`manage.py learning_worker` re-runs them)."""
    durable = settings.HERMES_QUEUE == "tasks"
    try:
        failed, freed = (0 if durable else fail_stale()), turns.release_dead()
        ends = 0 if durable else session_ends.free_orphans()
    except DatabaseError as exc:  # not migrated yet: nothing can be stale
        log.info("no stale work checked: %s", exc)
        return
    if failed or freed or ends:
        log.warning(
            "after a restart: %d unfinished review(s) marked failed, %d busy chat(s) freed, %d unfinished end(s) freed",
            failed,
            freed,
            ends,
        )
