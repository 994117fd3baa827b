"""hermes_site/sqlite: the writers of one server process queue for the database in Python."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F

from knowledge.models import ChatSession

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the embedded SQLite database only"),
]


def _in_thread(work: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_write_waits_for_the_open_transaction_of_another_thread_then_lands():
    session = ChatSession.objects.create(title="t")
    inside, done = threading.Event(), threading.Event()
    release = threading.Event()

    def long_transaction() -> None:
        with transaction.atomic():
            ChatSession.objects.filter(pk=session.pk).update(title="first")
            inside.set()
            release.wait(30)

    def second_writer() -> None:
        ChatSession.objects.filter(pk=session.pk).update(message_count=F("message_count") + 1)
        done.set()

    holder = _in_thread(long_transaction)
    assert inside.wait(30)
    writer = _in_thread(second_writer)
    assert not done.wait(0.3)  # queued behind the open transaction, not failed
    release.set()
    holder.join(30)
    writer.join(30)
    assert done.is_set()
    session.refresh_from_db()
    assert (session.title, session.message_count) == ("first", 1)
    assert not connection.write_lock.locked()


def test_many_threads_writing_at_once_all_land_and_the_lock_is_free_after():
    session = ChatSession.objects.create(title="t")

    def writes() -> None:
        for _ in range(10):
            with transaction.atomic():
                ChatSession.objects.filter(pk=session.pk).update(message_count=F("message_count") + 1)
            ChatSession.objects.filter(pk=session.pk).update(tool_call_count=F("tool_call_count") + 1)

    threads = [_in_thread(writes) for _ in range(8)]
    for t in threads:
        t.join(60)
    session.refresh_from_db()
    assert (session.message_count, session.tool_call_count) == (80, 80)
    assert not connection.write_lock.locked()


def test_a_failed_transaction_gives_the_lock_back():
    session = ChatSession.objects.create(title="t", name="taken")
    with pytest.raises(IntegrityError), transaction.atomic():
        ChatSession.objects.filter(pk=session.pk).update(title="changed")
        ChatSession.objects.create(title="other", name="taken")  # the name is unique
    assert not connection.write_lock.locked()
    session.refresh_from_db()
    assert session.title == "t"  # rolled back
    ChatSession.objects.filter(pk=session.pk).update(title="after")  # the next write gets in
    session.refresh_from_db()
    assert session.title == "after"
