"""`python manage.py learning_worker` — run reviews, session ends (memory flush) and chat titles
from the durable queue.

With HERMES_QUEUE=tasks the servers put learning jobs on Django's task queue (the django-tasks
database backend) instead of their own threads; this command runs them, on this machine or
another one sharing the database and the knowledge files. Start as many as you like: each job
is claimed by one worker, and one review per session runs at a time across all of them.

A worker killed mid-review or mid-flush (a crash, a deploy, kill -9) leaves its job "running":
every live worker looks for such jobs when it starts and then every HERMES_RECLAIM_SECONDS
(agent/reclaim.py; 10 by default), so a review or session end goes back on the queue and is run
again from the stored conversation even when no worker restarts; it completes once, since only
one worker can take it back. The dead job's
half-written task record is marked failed. (A title job is not re-run: the chat keeps its first
message as its title.)
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorker
from django_tasks_db.models import DBTaskResult

from agent import reclaim
from agent.chat import session_end
from agent.learning import review
from knowledge.history import presence, runs, session_ends
from knowledge.history.workers import is_alive, this_worker


def recover() -> list[int | str]:
    """Put back on the queue the reviews and session ends whose worker died; close their dead
    task records."""
    requeued: list[int | str] = [*runs.requeue_orphans(review.enqueue_review)]
    requeued += session_ends.requeue_orphans(session_end.enqueue_end)
    for record in DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING):
        holder = record.worker_ids[-1] if record.worker_ids else ""
        if not is_alive(holder):
            DBTaskResult.objects.filter(pk=record.pk, status=TaskResultStatus.RUNNING).update(
                status=TaskResultStatus.FAILED, finished_at=timezone.now()
            )
    return requeued


class Command(DatabaseWorker):
    help = "Run the background jobs (reviews, session ends, chat titles) from the durable queue (HERMES_QUEUE=tasks)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        # This worker's id is its host and pid, so the next worker can tell it died.
        parser.set_defaults(queue_name="learning", worker_id=this_worker()[-64:], startup_delay=False)

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HERMES_QUEUE != "tasks":
            raise CommandError("HERMES_QUEUE is not 'tasks': the servers run learning jobs themselves.")
        # Now and every HERMES_RECLAIM_SECONDS: say this worker is alive, requeue dead ones' jobs.
        stop = reclaim.start(presence.LEARNING, recover)
        try:
            super().handle(*args, **options)
        finally:
            if stop is not None:
                stop.set()
