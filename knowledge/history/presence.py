"""Which processes serve this database, as each says itself: a row per daphne worker and per
`learning_worker`, renewed every few seconds by the process (agent/reclaim.py), naming its kind
and its HERMES_HOME.

A row's pid says whether the process still lives on this host (knowledge/history/workers.py);
`seen_at` says so for any host. The multi-worker system checks read these rows
(hermes_site/multi_worker_checks.py): a durable queue no `learning_worker` has served lately,
servers sharing the database in-memory channel layer or not, processes on another home.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils import timezone

from knowledge.history.workers import is_alive, this_worker

SERVER = "server"
LEARNING = "learning"
# Rows of processes gone this long are deleted by the next process that says it is alive.
FORGET_AFTER = timedelta(days=1)


class WorkerProcess(models.Model):
    KINDS = [(SERVER, "daphne worker"), (LEARNING, "learning_worker")]

    worker = models.CharField(max_length=200, primary_key=True)  # host:pid
    kind = models.CharField(max_length=10, choices=KINDS)
    home = models.TextField()
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField(db_index=True)

    class Meta:
        app_label = "knowledge"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.worker}"


def this_home() -> str:
    """This process's HERMES_HOME as every process records it: absolute, links resolved."""
    return str(Path(settings.HERMES_HOME).resolve())


def beat(kind: str, home: str | None = None, now: datetime | None = None) -> None:
    """This process is alive, of `kind`, serving `home` (its own by default); rows of processes
    gone are dropped."""
    now = now or timezone.now()
    home = home or this_home()
    me = this_worker()
    if not WorkerProcess.objects.filter(pk=me).update(seen_at=now, kind=kind, home=home):
        WorkerProcess.objects.update_or_create(
            worker=me, defaults={"kind": kind, "home": home, "started_at": now, "seen_at": now}
        )
    WorkerProcess.objects.filter(seen_at__lt=now - FORGET_AFTER).delete()
    gone = [w for w in WorkerProcess.objects.exclude(pk=me).values_list("pk", flat=True) if not is_alive(w)]
    WorkerProcess.objects.filter(pk__in=gone).delete()


def alive(within: timedelta, kind: str | None = None, now: datetime | None = None) -> list[WorkerProcess]:
    """The processes (of `kind`) seen in the last `within` whose pid still lives."""
    now = now or timezone.now()
    rows = WorkerProcess.objects.filter(seen_at__gte=now - within).order_by("worker")
    if kind is not None:
        rows = rows.filter(kind=kind)
    return [row for row in rows if is_alive(row.worker)]
