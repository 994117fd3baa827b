"""Learning runs as shared records: one review per session at a time across processes, the
runs a dead process left "running" are failed at start-up with a reason."""

from __future__ import annotations

import pytest

from knowledge.history import runs
from knowledge.models import ChatSession, ReviewRun
from tests.knowledge.history.test_turns import _dead_worker

pytestmark = pytest.mark.django_db(transaction=True)


def _run(session: ChatSession, **kw) -> ReviewRun:
    return ReviewRun.objects.create(session=session, prompt_kind="memory", **kw)


def test_a_second_review_of_a_session_waits_while_one_runs_in_another_process():
    s = ChatSession.objects.create()
    first, second = _run(s), _run(s)
    assert first.start("other-host:1")
    assert not second.start("this-host:2")
    assert ReviewRun.objects.get(pk=second.pk).status == "queued"
    first.finish(summary="Memory updated", changes=[{"message": "Memory updated"}], error="", duration_ms=5)
    assert second.start("this-host:2")
    assert runs.is_active(s.pk)


def test_reviews_of_different_sessions_run_at_once():
    a, b = ChatSession.objects.create(), ChatSession.objects.create()
    assert _run(a).start("h:1")
    assert _run(b).start("h:1")


def test_a_review_left_running_by_a_dead_process_is_failed_at_start_up_and_stops_blocking():
    s = ChatSession.objects.create()
    orphan = _run(s, worker=_dead_worker())
    assert orphan.start(orphan.worker)
    waiting = _run(s)
    assert waiting.start("h:1"), "a dead process's run does not hold the session"
    assert runs.fail_stale() == 1
    orphan.refresh_from_db()
    assert (orphan.status, orphan.error) == ("failed", runs.STALE_REASON)


def test_finish_records_failure_only_when_nothing_changed():
    s = ChatSession.objects.create()
    run = _run(s)
    run.finish(summary="Nothing to save.", changes=[], error="Model timed out", duration_ms=1)
    assert ReviewRun.objects.get(pk=run.pk).status == "failed"
    run2 = _run(s)
    run2.finish(summary="Memory updated", changes=[{"message": "Memory updated"}], error="limit", duration_ms=1)
    assert ReviewRun.objects.get(pk=run2.pk).status == "done"


def test_wait_idle_returns_once_no_review_is_active():
    s = ChatSession.objects.create()
    run = _run(s)
    ticks = iter(range(100))
    assert not runs.wait_idle(s.pk, 2, clock=lambda: float(next(ticks)), sleep=lambda _: None)
    run.fail("gave up")
    assert runs.wait_idle(s.pk, 2, clock=lambda: 0.0, sleep=lambda _: None)


def test_a_dead_processs_review_is_adopted_by_one_live_process_and_queued_for_it():
    s = ChatSession.objects.create()
    orphan = _run(s, worker=_dead_worker())
    assert orphan.start(orphan.worker)
    alive = _run(ChatSession.objects.create(), worker="this-host:7")
    assert runs.adopt_orphans("this-host:8") == [orphan.pk]
    assert runs.adopt_orphans("this-host:9") == []  # the race's loser finds nothing left to take
    orphan.refresh_from_db()
    assert (orphan.status, orphan.worker) == ("queued", "this-host:8")
    assert ReviewRun.objects.get(pk=alive.pk).worker == "this-host:7"


def test_the_page_learns_the_stored_title_and_a_running_review_in_one_read():
    s = ChatSession.objects.create(title="Kayak rentals")
    assert runs.title_and_review(s.pk) == ("Kayak rentals", False)
    run = ReviewRun.objects.create(session=s, prompt_kind="memory", status="running")
    ChatSession.objects.filter(pk=s.pk).update(title="Renamed elsewhere")
    assert runs.title_and_review(s.pk) == ("Renamed elsewhere", True)
    ReviewRun.objects.filter(pk=run.pk).update(status="done")
    assert runs.title_and_review(s.pk) == ("Renamed elsewhere", False)
    assert runs.title_and_review("gone") == ("", False)
