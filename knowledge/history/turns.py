"""A chat session's busy state (one turn at a time), kept on the session row so every server
process sharing the database agrees on it: a turn claimed by one daphne worker shows as busy
on a page served by another, and a second tab's message is refused wherever it arrives.

A claim is a lease held by a worker (knowledge/history/workers.py): renewed every few seconds by
the process's heartbeat (knowledge/history/heartbeat.py) whether or not the model is sending
anything, released when the turn ends, and void once it expires or its process is gone, so a
crashed server never leaves a chat stuck "busy". A socket mirroring a turn run elsewhere asks
`check()` whether that turn is still alive. Clocks are passed in (`now`) so tests need no sleeps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from django.db import transaction
from django.utils import timezone

from knowledge.history.waiting import Clock, Sleep, poll_until
from knowledge.history.workers import is_alive, this_worker
from knowledge.models import ChatSession

# Short, so a turn whose server died is noticed within seconds by the other workers (a holder
# on this host is noticed at once: its pid is gone); renewed four times per lease, so a
# renewal delayed by a busy database does not let a live turn look dead.
LEASE = timedelta(seconds=12)
# The heartbeat renews every lease of its process this often (one UPDATE for all of them).
RENEW_EVERY = timedelta(seconds=3)


@dataclass(frozen=True)
class Holder:
    """One turn's claim: who took it and when (a later turn of the same worker is another one)."""

    worker: str
    started_at: datetime | None


TurnState = Literal["running", "ended", "lost"]


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
    if ChatSession.objects.claim_free_turn(session_id, worker, now, now + LEASE):
        return True
    with transaction.atomic():  # SQLite: IMMEDIATE, so two claimants cannot both read "free"
        session = ChatSession.objects.select_for_update().only("turn_worker", "turn_lease_until").get(pk=session_id)
        if holds(session, now):
            return False
        ChatSession.objects.take_turn(session_id, worker, now, now + LEASE)
    return True


def renew(session_id: str, worker: str | None = None, now: datetime | None = None) -> None:
    now = now or timezone.now()
    ChatSession.objects.renew_turn(session_id, worker or this_worker(), now + LEASE)


def renew_all(session_ids: list[str], worker: str | None = None, now: datetime | None = None) -> set[str]:
    """Renew the leases of these sessions in one statement; the ids whose lease this worker no
    longer holds (another worker took a lease it had let expire) are returned."""
    if not session_ids:
        return set()
    worker = worker or this_worker()
    now = now or timezone.now()
    if ChatSession.objects.renew_turns(session_ids, worker, now + LEASE) == len(set(session_ids)):
        return set()
    held = ChatSession.objects.filter(pk__in=session_ids, turn_worker=worker)
    return set(session_ids) - set(held.values_list("pk", flat=True))


def holder(session_id: str) -> Holder | None:
    """Who holds a turn of this session now (alive or not), or None when nobody does."""
    row = ChatSession.objects.filter(pk=session_id).values_list("turn_worker", "turn_started_at").first()
    if row is None or not row[0]:
        return None
    return Holder(row[0], row[1])


def check(session_id: str, turn: Holder, now: datetime | None = None) -> TurnState:
    """What became of the turn `turn` names: still "running"; "ended" (released, as every
    finished turn is; the session may hold a newer turn now); or "lost": its lease ran out or its
    process died while it ran. A lost turn's lease is freed here, so the next message is taken."""
    now = now or timezone.now()
    row = ChatSession.objects.filter(pk=session_id).only("turn_worker", "turn_started_at", "turn_lease_until").first()
    if row is None:
        return "ended"  # deleted under the turn, which says so itself
    if row.turn_started_at != turn.started_at:
        return "ended"  # released (which clears the start) or claimed again since
    if not row.turn_worker:
        return "lost"  # freed by another worker that noticed first (the start is kept for this)
    if row.turn_worker != turn.worker:
        return "ended"
    if holds(row, now):
        return "running"
    ChatSession.objects.give_up_turn(session_id, turn.worker, turn.started_at)
    return "lost"


def release(session_id: str, worker: str | None = None) -> None:
    """The turn ended: the session is free. Its start is cleared, so a socket watching the turn
    tells this from a turn given up for lost (`check`)."""
    ChatSession.objects.release_turn(session_id, worker or this_worker())


def wait_until_free(
    session_id: str, timeout: float, *, clock: Clock = time.monotonic, sleep: Sleep = time.sleep
) -> bool:
    """Block until no live worker holds a turn of this session; False if `timeout` passed first."""
    return poll_until(lambda: not is_busy(session_id), timeout, clock=clock, sleep=sleep)


def release_dead(now: datetime | None = None) -> int:
    """Free the sessions whose turn holder died or whose lease ran out (at start-up)."""
    now = now or timezone.now()
    freed = 0
    for session in ChatSession.objects.exclude(turn_worker="").only("turn_worker", "turn_lease_until"):
        if not holds(session, now):
            freed += ChatSession.objects.free_dead_turn(session.pk, session.turn_worker)
    return freed
