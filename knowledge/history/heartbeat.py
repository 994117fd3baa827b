"""The heartbeat of a server process's running turns: their leases (knowledge/history/turns.py)
renewed every few seconds from a thread of their own.

Renewal does not wait for the turn to produce anything: a model that thinks for a minute before
its first token, or a tool that runs long, must not make a live turn look dead to the other
workers. Conversely, a process that dies (or freezes) stops beating, its leases run out within
`turns.LEASE`, and every worker mirroring one of its turns ends it for its tabs.

A lease this process no longer holds when it beats (it was frozen past the lease and another
worker freed the chat) means the turn has been given up for lost elsewhere: its `on_lost` is
called (the chat service interrupts the turn) so two turns never write one chat at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import close_old_connections
from django.utils import timezone

from knowledge.history import turns
from knowledge.history.workers import this_worker

log = logging.getLogger(__name__)

Now = Callable[[], datetime]


class LeaseKeeper:
    """The turns one process runs, and the thread that keeps their leases alive.

    `beat()` is one round; the thread, started with the first turn, calls it every `every`
    (default `turns.RENEW_EVERY`) until `stop()`. With `every=None` no thread starts: the caller
    beats (as the tests do, with their own clock)."""

    def __init__(
        self,
        *,
        worker: Callable[[], str] = this_worker,
        now: Now = timezone.now,
        every: timedelta | None = turns.RENEW_EVERY,
    ) -> None:
        self._worker = worker
        self._now = now
        self._every = every
        self._held: dict[str, Callable[[], None]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()

    def hold(self, session_id: str, on_lost: Callable[[], None]) -> None:
        """Keep this session's lease (just claimed by this process) alive until `drop()`."""
        with self._lock:
            self._held[session_id] = on_lost
            if self._every is not None and not self._stopped.is_set() and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="turn-heartbeat", daemon=True)
                self._thread.start()

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._held.pop(session_id, None)

    def held(self) -> list[str]:
        with self._lock:
            return list(self._held)

    def beat(self) -> set[str]:
        """Renew every lease held; the sessions whose lease was lost (their `on_lost` called)."""
        ids = self.held()
        lost = turns.renew_all(ids, self._worker(), self._now())
        for session_id in lost:
            with self._lock:
                on_lost = self._held.pop(session_id, None)
            if on_lost is not None:
                log.warning("turn of session %s lost its lease (this process stalled); stopping it", session_id)
                on_lost()
        return lost

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        assert self._every is not None
        every = self._every.total_seconds()
        while not self._stopped.wait(every):
            if not self.held():
                continue  # nothing to renew: no query
            try:
                close_old_connections()  # a connection the database dropped is replaced, not reused
                self.beat()
            except Exception:  # the next beat tries again; one failed UPDATE must not end the heartbeat
                log.exception("turn heartbeat failed; retrying in %.0f s", every)
