"""Ending a chat in the background ("New chat"): its memory flush is a model call the
page must not wait for, so it runs as a background job (agent/jobs.py) — on this process's
threads, or on the durable queue carrying only the session's id — and exactly once per session
(the claim in knowledge/history/session_ends.py), even when asked twice or re-run after its queue worker
was killed. The terminal chat ends its session itself, before it exits.
"""

from __future__ import annotations

import logging

from django.db import close_old_connections
from django_tasks import task

from agent import jobs
from agent.chat import service as chat_service
from agent.chat.runner import AgentSession
from knowledge.history import session_ends, turns
from knowledge.history.workers import this_worker
from knowledge.models import ChatSession

log = logging.getLogger(__name__)

# Ending a session waits at most this long for its running turn to finish.
END_WAIT_SECONDS = 600.0


def end_in_background(session_id: str, reason: str = "new session") -> bool:
    """Ask for the session to be ended off the request path. False when it is ended already or
    being ended (by this request's twin in another tab, say)."""
    holder = session_ends.IN_QUEUE if jobs.durable() else this_worker()
    if not session_ends.request(session_id, reason, holder):
        log.info("session %s is already ended or being ended", session_id)
        return False
    jobs.start(end_task, session_id, kind="session-end")
    return True


def enqueue_end(session_id: str) -> None:
    end_task.enqueue(session_id)


@task(queue_name="learning")
def end_task(session_id: str) -> None:
    end_session(session_id, this_worker())


def end_session(session_id: str, worker: str) -> bool:
    """End the session if it is `worker`'s to end; True if this call ended it.

    A turn still streaming ("New chat" pressed during an answer) finishes first, on whichever
    server runs it; the flush then sees the whole conversation, and nothing is cut off."""
    reason = session_ends.claim(session_id, worker)
    if reason is None:
        log.info("session %s is ended, or being ended by another worker; nothing to do", session_id)
        return False
    try:
        if not turns.wait_until_free(session_id, END_WAIT_SECONDS):
            log.warning(
                "session %s still busy after %ss; ending it without waiting longer", session_id, END_WAIT_SECONDS
            )
        agent = chat_service.take_agent(session_id) or AgentSession.open(
            session_id=session_id, source="web", client_factory=chat_service.session_client_factory(session_id)
        )
        agent.end(reason)
        return True
    except ChatSession.DoesNotExist:
        log.info("session %s was deleted before it could be ended", session_id)
        return False
    except Exception:  # recorded in the log, and the end may be asked for again
        log.exception("ending session %s failed", session_id)
        session_ends.release(session_id, worker)
        return False
    finally:
        close_old_connections()
