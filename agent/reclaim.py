"""Work left by a process that died, taken up by a process still alive: periodically, not only
when a process starts, so a killed daphne worker or `learning_worker` is covered by the others
even when none of them restarts.

Each daphne worker (hermes_site/asgi.py) and each `learning_worker` calls `start()` once. It
runs one round at once, then one every HERMES_RECLAIM_SECONDS on a daemon thread. A round
- says this process is alive (knowledge/history/presence.py; the multi-worker system checks
  read it),
- removes attached images never sent and files no message names (knowledge/attachments.py),
- runs the skill curator's dry run when one is due (knowledge/skills/curator.py: a report waits in
  the inbox, no file changes; the skills lock lets one process write it), and
- runs the process's own recovery: a server with HERMES_QUEUE=threads takes the reviews and
  session ends whose process died and runs them on its own threads (`on_threads`); a
  `learning_worker` puts them back on the durable queue (its command's `recover`).
A job is taken by one conditional update of its row, so however many processes race for it,
one wins and it runs once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from django.conf import settings
from django.db import DatabaseError, close_old_connections

from agent import jobs, recall
from agent.chat import session_end
from agent.learning import review
from foundation import config as hermes_config
from knowledge import attachments
from knowledge.history import presence, runs, session_ends
from knowledge.history.workers import this_worker
from knowledge.skills import curator
from knowledge.skills.format import SkillError

log = logging.getLogger(__name__)

Recover = Callable[[], Sequence[int | str]]

_started: set[str] = set()
_started_lock = threading.Lock()


def on_threads() -> list[int | str]:
    """A server's recovery: with background jobs on this process's threads, the reviews and
    session ends of a process that died become this one's and run here. (On the durable queue
    the `learning_worker`s recover them.)"""
    if jobs.durable():
        return []
    me = this_worker()
    taken: list[int | str] = []
    for run_id in runs.adopt_orphans(me):
        jobs.start(review.review_task, run_id, kind="review")  # rebuilt from the run's conversation
        taken.append(run_id)
    for session_id in session_ends.adopt_orphans(me):
        jobs.start(session_end.end_task, session_id, kind="session-end")
        taken.append(session_id)
    return taken


def curate() -> None:
    """The curator's pass when one is due; a skills folder it cannot lock is tried next round."""
    try:
        curator.run_pass(hermes_config.refresh())
    except (SkillError, OSError) as exc:
        log.warning("the skill curator's pass failed (tried again next round): %s", exc)


def one_round(kind: str, recover: Recover) -> list[int | str]:
    """Say this process is alive, then recover what dead ones left; what was taken, by id.
    A database that is away (or not migrated yet) skips the round: the next one tries again."""
    try:
        presence.beat(kind)
        attachments.sweep()  # uploads never sent, and image files no message names any more
        curate()
        taken = list(recover())
    except DatabaseError as exc:
        log.warning("looking for the work of stopped processes failed (tried again in %ss): %s", _every(), exc)
        return []
    finally:
        close_old_connections()  # this thread keeps no connection between rounds
    if taken:
        log.warning("took over %d job(s) of a stopped process: %s", len(taken), taken)
    if kind == presence.LEARNING or not jobs.durable():
        recall.kick()  # past messages embedded in the background (agent/recall.py), one process at a time
    return taken


def reclaim_forever(stop: threading.Event, kind: str, recover: Recover, every: float) -> None:
    """A round every `every` seconds until `stop` is set."""
    while not stop.wait(every):
        one_round(kind, recover)


def start(kind: str, recover: Recover) -> threading.Event | None:
    """One round now, then the periodic rounds on a daemon thread; once per process and kind.
    Returns the event that stops the rounds (None when they run already)."""
    with _started_lock:
        if kind in _started:
            return None
        _started.add(kind)
    one_round(kind, recover)
    stop = threading.Event()
    thread = threading.Thread(
        target=reclaim_forever, args=(stop, kind, recover, _every()), name=f"reclaim-{kind}", daemon=True
    )
    thread.start()
    return stop


def _every() -> float:
    return float(settings.HERMES_RECLAIM_SECONDS)
