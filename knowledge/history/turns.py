"""A chat session's busy state (one turn at a time), kept on the session row so every server
process sharing the database agrees on it: a turn claimed by one daphne worker shows as busy
on a page served by another, and a second tab's message is refused wherever it arrives.

A claim is a lease held by a worker (knowledge/history/workers.py): renewed while the turn produces
events, released when it ends, and void once it expires or its process is gone, so a crashed
server never leaves a chat stuck "busy". Clocks are passed in (`now`) so tests need no sleeps.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from knowledge.history.waiting import Clock, Sleep, poll_until
from knowledge.history.workers import is_alive, this_worker
from knowledge.models import ChatSession

LEASE = timedelta(minutes=5)
# A running turn renews its lease at most this often (each renewal is a write).
RENEW_EVERY = timedelta(seconds=30)


def holds(session: ChatSession, now: datetime | None = None) -> bool:
    """Whether a live worker holds a turn of this session (as of the row given)."""
    now = now or timezone.now()
    lease = session.turn_lease_until
    return bool(session.turn_worker) and lease is not None and lease > now and is_alive(session.turn_worker)


def is_busy(session_id: str, now: datetime | None = None) -> bool:
    session = ChatSession.objects.filter(pk=session_id).only("turn_worker", "turn_lease_until").first()
    return session is not None and holds(session, now)


def claim(session_id: str, worker: str | None = None, now: datetime | None = None) -> bool:
    """Take the session for one turn; False if a live worker already holds it.

    Raises ChatSession.DoesNotExist for a deleted session.
    """
    worker = worker or this_worker()
    now = now or timezone.now()
    # The usual case, a free session, in one statement: no transaction, no read of the row first.
    free = ChatSession.objects.filter(pk=session_id, turn_worker="")
    if free.update(turn_worker=worker, turn_started_at=now, turn_lease_until=now + LEASE):
        return True
    with transaction.atomic():  # SQLite: IMMEDIATE, so two claimants cannot both read "free"
        session = ChatSession.objects.select_for_update().only("turn_worker", "turn_lease_until").get(pk=session_id)
        if holds(session, now):
            return False
        ChatSession.objects.filter(pk=session_id).update(
            turn_worker=worker, turn_started_at=now, turn_lease_until=now + LEASE
        )
    return True


def renew(session_id: str, worker: str | None = None, now: datetime | None = None) -> None:
    now = now or timezone.now()
    ChatSession.objects.filter(pk=session_id, turn_worker=worker or this_worker()).update(turn_lease_until=now + LEASE)


def release(session_id: str, worker: str | None = None) -> None:
    ChatSession.objects.filter(pk=session_id, turn_worker=worker or this_worker()).update(
        turn_worker="", turn_lease_until=None
    )


def wait_until_free(
    session_id: str, timeout: float, *, clock: Clock = time.monotonic, sleep: Sleep = time.sleep
) -> bool:
    """Block until no live worker holds a turn of this session; False if `timeout` passed first."""
    return poll_until(lambda: not is_busy(session_id), timeout, clock=clock, sleep=sleep)


def release_dead(now: datetime | None = None) -> int:
    """At start-up: free the sessions whose turn holder died or whose lease ran out."""
    now = now or timezone.now()
    freed = 0
    for session in ChatSession.objects.exclude(turn_worker="").only("turn_worker", "turn_lease_until"):
        if not holds(session, now):
            freed += ChatSession.objects.filter(Q(pk=session.pk), Q(turn_worker=session.turn_worker)).update(
                turn_worker="", turn_lease_until=None
            )
    return freed
