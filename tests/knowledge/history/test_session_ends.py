"""A session's end claimed on its row: asked once, taken by one worker, recovered when that
worker died (requeued on the durable queue, freed on the embedded default)."""

from __future__ import annotations

import socket

import pytest

from knowledge.history import session_ends
from knowledge.history.workers import this_worker
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db

DEAD = f"{socket.gethostname()}:999999999"  # no such pid on this host


def _row(session_id: str) -> tuple[str, str]:
    session = ChatSession.objects.get(pk=session_id)
    return session.end_worker, session.end_reason


def test_an_end_is_asked_for_once_and_taken_by_one_worker():
    session = ChatSession.objects.create()
    assert session_ends.request(session.pk, "new session", session_ends.IN_QUEUE)
    assert not session_ends.request(session.pk, "new session", session_ends.IN_QUEUE)
    assert session_ends.claim(session.pk, "host:1") == "new session"
    assert session_ends.claim(session.pk, "host:2") is None
    assert session_ends.claim(session.pk, "host:1") == "new session"  # its own claim, again
    assert _row(session.pk) == ("host:1", "new session")


def test_an_ended_session_is_neither_asked_nor_claimed_again():
    session = ChatSession.objects.create()
    session_ends.request(session.pk, "new session", session_ends.IN_QUEUE)
    ChatSession.objects.filter(pk=session.pk).update(ended_at="2026-12-01T00:00:00Z")
    assert session_ends.claim(session.pk, "host:1") is None
    assert not session_ends.request(session.pk, "closed", "host:1")


def test_a_failed_end_can_be_asked_for_again():
    session = ChatSession.objects.create()
    session_ends.request(session.pk, "new session", "host:1")
    session_ends.release(session.pk, "host:1")
    assert session_ends.request(session.pk, "new session", "host:1")


def test_an_end_whose_worker_died_goes_back_on_the_queue_once():
    dead, alive, waiting = (ChatSession.objects.create() for _ in range(3))
    session_ends.request(dead.pk, "new session", DEAD)
    session_ends.request(alive.pk, "new session", this_worker())
    session_ends.request(waiting.pk, "new session", session_ends.IN_QUEUE)
    enqueued: list[str] = []
    assert session_ends.requeue_orphans(enqueued.append) == [dead.pk]
    assert enqueued == [dead.pk]
    assert _row(dead.pk) == (session_ends.IN_QUEUE, "new session")
    assert session_ends.requeue_orphans(enqueued.append) == []


def test_on_the_embedded_default_a_dead_servers_end_is_freed():
    session = ChatSession.objects.create()
    session_ends.request(session.pk, "new session", DEAD)
    assert session_ends.free_orphans() == 1
    assert _row(session.pk)[0] == ""
    assert session_ends.request(session.pk, "new session", this_worker())


def test_on_a_servers_threads_a_dead_servers_end_is_adopted_by_one_live_one_which_may_claim_it():
    dead, alive = ChatSession.objects.create(), ChatSession.objects.create()
    session_ends.request(dead.pk, "new session", DEAD)
    session_ends.request(alive.pk, "new session", this_worker())
    assert session_ends.adopt_orphans("host:8") == [dead.pk]
    assert session_ends.adopt_orphans("host:9") == []  # the race's loser finds nothing left to take
    assert session_ends.claim(dead.pk, "host:9") is None
    assert session_ends.claim(dead.pk, "host:8") == "new session"
    assert _row(alive.pk)[0] == this_worker()
