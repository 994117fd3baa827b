"""Where background jobs run (agent/jobs.py): on this process's threads by default, on the
durable queue with HERMES_QUEUE=tasks — carrying only ids, and only once the records they name
are committed."""

from __future__ import annotations

import logging
import threading

import pytest
from django.db import transaction
from django_tasks_db.models import DBTaskResult

from agent import jobs
from agent.chat import session_end, titles
from knowledge.history.waiting import poll_until
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)

ON_THE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["learning"]}}


def _first_exchange() -> ChatSession:
    session = ChatSession.objects.create(title="how do I ship", title_source="message")
    Message.objects.create(session=session, role="user", content="how do I ship?")
    Message.objects.create(session=session, role="assistant", content="Run the deploy script.")
    return session


def test_on_threads_the_task_runs_in_this_process_on_its_own_pool(llm, home):
    write_config(home, "chat:\n  auto_title: true\n")
    llm.push(Reply(text="Shipping"))
    session = _first_exchange()
    future = jobs.start(titles.title_task, session.pk, kind="title")
    assert future is not None
    future.result(timeout=30)
    assert ChatSession.objects.get(pk=session.pk).title == "Shipping"
    # What the caller already holds may run instead (a review reuses the live conversation).
    here = jobs.start(titles.title_task, session.pk, kind="title", here=lambda: threading.current_thread().name)
    assert here is not None and here.result(timeout=30).startswith("bg-title")
    assert not DBTaskResult.objects.exists()


def test_on_the_queue_a_job_carries_only_ids_and_waits_for_the_commit(home, settings):
    settings.HERMES_QUEUE, settings.TASKS = "tasks", ON_THE_QUEUE
    session = _first_exchange()
    with transaction.atomic():
        assert jobs.start(session_end.end_task, session.pk, kind="session-end") is None
        assert not DBTaskResult.objects.exists()  # a worker must find the committed rows
    (queued,) = DBTaskResult.objects.all()
    assert queued.task_path == "agent.chat.session_end.end_task"
    assert queued.queue_name == "learning"
    assert queued.args_kwargs == {"args": [session.pk], "kwargs": {}}


def test_an_unknown_kind_of_job_is_refused():
    with pytest.raises(ValueError, match="unknown kind of background job 'cleanup'"):
        jobs.start(titles.title_task, "x", kind="cleanup")


def test_a_job_that_raises_is_logged_with_its_traceback(caplog):
    def broken() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="agent.jobs"):
        future = jobs.start(titles.title_task, "x", kind="title", here=broken)
        assert future is not None
        with pytest.raises(RuntimeError):
            future.result(timeout=30)
        assert poll_until(lambda: "background job" in caplog.text, 10)
    assert "agent.chat.titles.title_task" in caplog.text or "title_task" in caplog.text
