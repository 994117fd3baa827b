"""A live process takes up what a dead one left: a server on its own threads runs a dead process's
review and session end itself, once; every round says the process is alive; a database away
for a moment skips a round without ending the rounds."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.test import override_settings

from agent import reclaim
from knowledge.history import presence, runs, session_ends
from knowledge.history.waiting import poll_until
from knowledge.history.workers import this_worker
from knowledge.models import ChatSession, Message, ReviewRun
from tests.conftest import write_config
from tests.knowledge.history.test_turns import _dead_worker
from tests.learning import is_flush, is_review_start

pytestmark = pytest.mark.django_db(transaction=True)


def _conversation() -> ChatSession:
    session = ChatSession.objects.create(user_turn_count=1)
    Message.objects.create(session=session, role="user", content="I deploy with Debian base images")
    Message.objects.create(session=session, role="assistant", content="Noted.")
    return session


def _left_by_a_dead_server() -> tuple[ReviewRun, ChatSession]:
    dead = _dead_worker()
    reviewed, ending = _conversation(), _conversation()
    run = ReviewRun.objects.create(session=reviewed, prompt_kind="memory", worker=dead, upto_message_id=None)
    assert run.start(dead)  # it was running when its process died
    assert session_ends.request(ending.pk, "new session", dead)  # its flush too
    return run, ending


def test_a_server_runs_the_review_and_the_end_a_dead_process_left_on_its_own_threads_once(llm, home):
    write_config(home, "memory:\n  flush_min_turns: 1\n")
    run, ending = _left_by_a_dead_server()
    taken = reclaim.on_threads()
    assert sorted(map(str, taken)) == sorted([str(run.pk), ending.pk])
    assert reclaim.on_threads() == []  # taken once: a second round (or process) finds nothing
    assert poll_until(lambda: ReviewRun.objects.get(pk=run.pk).status == "done", 30)
    assert poll_until(lambda: ChatSession.objects.get(pk=ending.pk).ended_at is not None, 30)
    assert ReviewRun.objects.get(pk=run.pk).worker == this_worker()
    assert ChatSession.objects.get(pk=ending.pk).end_worker == this_worker()
    bodies = llm.chat_requests()
    assert (len([b for b in bodies if is_review_start(b)]), len([b for b in bodies if is_flush(b)])) == (1, 1)


def test_on_the_durable_queue_a_server_leaves_them_to_the_learning_workers(home):
    run, ending = _left_by_a_dead_server()
    with override_settings(HERMES_QUEUE="tasks"):
        assert reclaim.on_threads() == []
    assert ReviewRun.objects.get(pk=run.pk).status == "running"
    assert ChatSession.objects.get(pk=ending.pk).end_worker == run.worker


def test_each_round_says_the_process_is_alive_and_returns_what_it_took(caplog):
    with caplog.at_level(logging.WARNING, logger="agent.reclaim"):
        assert reclaim.one_round(presence.LEARNING, lambda: [7]) == [7]
    (row,) = presence.alive(timedelta(minutes=1), presence.LEARNING)
    assert row.worker == this_worker()
    assert "took over 1 job(s) of a stopped process: [7]" in caplog.text


def test_a_round_with_the_database_away_is_skipped_and_logged(caplog):
    def away() -> list[int | str]:
        raise OperationalError("connection refused")

    with caplog.at_level(logging.WARNING, logger="agent.reclaim"):
        assert reclaim.one_round(presence.SERVER, away) == []
    assert "looking for the work of stopped processes failed" in caplog.text
    assert "connection refused" in caplog.text


def test_the_rounds_start_once_per_process():
    rounds: list[str] = []

    def recover(name: str) -> Callable[[], list[int | str]]:
        return lambda: rounds.append(name) or []  # type: ignore[func-returns-value]

    try:
        stop = reclaim.start("probe", recover("first"))
        assert stop is not None and rounds == ["first"]  # the first round runs at once
        assert reclaim.start("probe", recover("second")) is None
        stop.set()
    finally:
        reclaim._started.discard("probe")


def test_processes_racing_for_a_dead_processs_work_take_each_job_once():
    run, ending = _left_by_a_dead_server()
    taken: list[list[int | str]] = []
    start = threading.Barrier(4)

    def race(n: int) -> None:
        start.wait()
        try:
            taken.append([*runs.adopt_orphans(f"racer:{n}"), *session_ends.adopt_orphans(f"racer:{n}")])
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(str(job) for jobs in taken for job in jobs) == sorted([str(run.pk), ending.pk])
    assert ReviewRun.objects.get(pk=run.pk).worker.startswith("racer:")
    assert ChatSession.objects.get(pk=ending.pk).end_worker.startswith("racer:")
