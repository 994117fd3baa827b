"""Ending a chat session (its memory flush) exactly once, across server processes and
queue workers.

The claim is on the session row (`end_worker`): "" nobody asked yet; `IN_QUEUE` waiting for a
queue worker; else the worker (host:pid) ending it now. A second request ("New chat" pressed in
two tabs), a job delivered twice, or a job run again after its worker was killed finds the claim
taken or the session ended (`ended_at`), and does nothing. The end itself (flush, then
`ended_at`) is the runner's (agent/chat/runner.py `AgentSession.end`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from knowledge.history.workers import IN_QUEUE, is_alive
from knowledge.models import ChatSession

log = logging.getLogger(__name__)

__all__ = ["IN_QUEUE", "adopt_orphans", "claim", "release", "request", "requeue_orphans", "free_orphans"]


def request(session_id: str, reason: str, holder: str) -> bool:
    """Ask for the session to be ended, by `holder` (IN_QUEUE, or the worker that will do it).
    False when it is ended already, or being ended."""
    return ChatSession.objects.request_end(session_id, reason, holder)


def claim(session_id: str, worker: str) -> str | None:
    """Take the end for `worker`: the reason it was asked for, or None when it is not this
    worker's to do (ended, or held by another)."""
    if not ChatSession.objects.claim_end(session_id, worker):
        return None
    return ChatSession.objects.filter(pk=session_id).values_list("end_reason", flat=True).first() or "closed"


def release(session_id: str, worker: str) -> None:
    """An end that failed before the session was ended: it may be asked for again."""
    ChatSession.objects.pass_end(session_id, worker, "")


def _orphans() -> list[tuple[str, str]]:
    """(session id, worker) of ends held by a process that is gone."""
    held = ChatSession.objects.filter(ended_at__isnull=True).exclude(end_worker__in=("", IN_QUEUE))
    return [(pk, worker) for pk, worker in held.values_list("pk", "end_worker") if not is_alive(worker)]


def requeue_orphans(enqueue: Callable[[str], None]) -> list[str]:
    """The durable queue's recovery, when a queue worker starts: an end whose worker died
    (killed mid-flush) goes back on the queue, to be run again, once."""
    requeued = []
    for pk, worker in _orphans():
        if ChatSession.objects.pass_end(pk, worker, IN_QUEUE):
            enqueue(pk)
            requeued.append(pk)
    return requeued


def adopt_orphans(worker: str) -> list[str]:
    """On a server's own threads: ends whose worker died (killed mid-flush) become `worker`'s,
    which then runs them (claim() lets it); a live process racing for one loses, so each runs once."""
    return [pk for pk, dead in _orphans() if ChatSession.objects.pass_end(pk, dead, worker)]


def free_orphans() -> int:
    """On the embedded default, at a server's start: ends left by a process that died are freed,
    so the next "New chat" from that session asks again."""
    return sum(ChatSession.objects.pass_end(pk, worker, "") for pk, worker in _orphans())
