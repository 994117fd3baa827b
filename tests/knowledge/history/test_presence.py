"""Each server and queue worker says it is alive in the shared database, with its kind and home;
rows of processes that are gone do not count and are dropped."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.history import presence
from knowledge.history.presence import WorkerProcess
from knowledge.history.workers import this_worker
from tests.knowledge.history.test_turns import _dead_worker

pytestmark = pytest.mark.django_db


def test_a_process_that_beats_is_seen_alive_with_its_kind_and_home():
    start = timezone.now()
    presence.beat(presence.SERVER, "/srv/hermes", now=start)
    presence.beat(presence.SERVER, "/srv/hermes", now=start + timedelta(seconds=10))
    (row,) = presence.alive(timedelta(seconds=30), now=start + timedelta(seconds=20))
    assert (row.worker, row.kind, row.home) == (this_worker(), presence.SERVER, "/srv/hermes")
    assert (row.started_at, row.seen_at) == (start, start + timedelta(seconds=10))
    assert presence.alive(timedelta(seconds=30), presence.LEARNING, now=start) == []
    assert presence.alive(timedelta(seconds=5), now=start + timedelta(seconds=20)) == []  # not lately


def test_rows_of_dead_processes_do_not_count_and_are_dropped_at_the_next_beat():
    now = timezone.now()
    WorkerProcess.objects.create(worker=_dead_worker(), kind=presence.LEARNING, home="/h", started_at=now, seen_at=now)
    old = now - presence.FORGET_AFTER - timedelta(seconds=1)
    WorkerProcess.objects.create(worker="far-host:1", kind=presence.SERVER, home="/h", started_at=old, seen_at=old)
    assert presence.alive(timedelta(minutes=1), presence.LEARNING, now=now) == []
    presence.beat(presence.LEARNING, "/h", now=now)
    assert list(WorkerProcess.objects.values_list("worker", flat=True)) == [this_worker()]
