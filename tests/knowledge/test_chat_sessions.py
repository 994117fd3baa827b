"""The conditional changes of a session's row: each takes only when its condition holds, says
whether it took, and is one statement (no read of the row first), so two processes racing for
the same row cannot both win."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.history.workers import IN_QUEUE
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=12)


def _row(pk: str) -> ChatSession:
    return ChatSession.objects.get(pk=pk)


def _one_statement(change: Callable[[], Any]) -> Any:
    """What `change` returns, checked to be one UPDATE and nothing else."""
    with CaptureQueriesContext(connection) as queries:
        result = change()
    assert [q["sql"].split()[0] for q in queries.captured_queries] == ["UPDATE"]
    return result


def test_a_free_session_is_claimed_once_and_its_lease_renewed_only_by_its_holder() -> None:
    chat = ChatSession.objects.create()
    assert _one_statement(lambda: ChatSession.objects.claim_free_turn(chat.pk, "host:1", NOW, LATER))
    assert not ChatSession.objects.claim_free_turn(chat.pk, "host:2", NOW, LATER)
    assert (_row(chat.pk).turn_worker, _row(chat.pk).turn_started_at) == ("host:1", NOW)

    _one_statement(lambda: ChatSession.objects.renew_turn(chat.pk, "host:2", LATER + timedelta(seconds=1)))
    assert _row(chat.pk).turn_lease_until == LATER  # not the other worker's to renew
    ChatSession.objects.renew_turn(chat.pk, "host:1", LATER + timedelta(seconds=3))
    assert _row(chat.pk).turn_lease_until == LATER + timedelta(seconds=3)


def test_a_taken_turn_replaces_whatever_held_the_row() -> None:
    chat = ChatSession.objects.create()
    ChatSession.objects.claim_free_turn(chat.pk, "host:dead", NOW, LATER)
    _one_statement(lambda: ChatSession.objects.take_turn(chat.pk, "host:2", LATER, LATER + timedelta(seconds=12)))
    assert (_row(chat.pk).turn_worker, _row(chat.pk).turn_started_at) == ("host:2", LATER)


def test_leases_are_renewed_together_counting_those_still_held() -> None:
    mine, lost = ChatSession.objects.create(), ChatSession.objects.create()
    ChatSession.objects.claim_free_turn(mine.pk, "host:1", NOW, LATER)
    ChatSession.objects.claim_free_turn(lost.pk, "host:2", NOW, LATER)
    until = LATER + timedelta(seconds=3)
    assert _one_statement(lambda: ChatSession.objects.renew_turns([mine.pk, lost.pk], "host:1", until)) == 1
    assert (_row(mine.pk).turn_lease_until, _row(lost.pk).turn_lease_until) == (until, LATER)


def test_a_released_turn_forgets_its_start_and_a_lost_one_keeps_it() -> None:
    ended, lost = ChatSession.objects.create(), ChatSession.objects.create()
    for chat in (ended, lost):
        ChatSession.objects.claim_free_turn(chat.pk, "host:1", NOW, LATER)
    ChatSession.objects.release_turn(ended.pk, "host:2")  # another worker's release frees nothing
    assert _row(ended.pk).turn_worker == "host:1"
    _one_statement(lambda: ChatSession.objects.release_turn(ended.pk, "host:1"))
    assert (_row(ended.pk).turn_worker, _row(ended.pk).turn_started_at, _row(ended.pk).turn_lease_until) == (
        "",
        None,
        None,
    )

    assert not ChatSession.objects.give_up_turn(lost.pk, "host:1", LATER)  # a later turn of the same worker
    assert _one_statement(lambda: ChatSession.objects.give_up_turn(lost.pk, "host:1", NOW))
    assert (_row(lost.pk).turn_worker, _row(lost.pk).turn_started_at, _row(lost.pk).turn_lease_until) == (
        "",
        NOW,
        None,
    )


def test_a_dead_holder_is_freed_unless_another_took_the_session_since() -> None:
    chat = ChatSession.objects.create()
    ChatSession.objects.claim_free_turn(chat.pk, "host:2", NOW, LATER)
    assert _one_statement(lambda: ChatSession.objects.free_dead_turn(chat.pk, "host:dead")) == 0
    assert ChatSession.objects.free_dead_turn(chat.pk, "host:2") == 1
    assert _row(chat.pk).turn_worker == ""


def test_an_end_is_asked_once_claimed_by_one_and_handed_on_only_by_its_holder() -> None:
    chat = ChatSession.objects.create()
    assert _one_statement(lambda: ChatSession.objects.request_end(chat.pk, "new session", IN_QUEUE))
    assert not ChatSession.objects.request_end(chat.pk, "closed", "host:1")
    assert _one_statement(lambda: ChatSession.objects.claim_end(chat.pk, "host:1"))
    assert not ChatSession.objects.claim_end(chat.pk, "host:2")
    assert (_row(chat.pk).end_worker, _row(chat.pk).end_reason) == ("host:1", "new session")

    assert not _one_statement(lambda: ChatSession.objects.pass_end(chat.pk, "host:2", ""))
    assert ChatSession.objects.pass_end(chat.pk, "host:1", IN_QUEUE)
    assert _row(chat.pk).end_worker == IN_QUEUE

    ChatSession.mark_ended(chat.pk, "new session", NOW)
    assert not ChatSession.objects.pass_end(chat.pk, IN_QUEUE, "host:2")  # ended: nothing more to hand on
    assert not ChatSession.objects.claim_end(chat.pk, IN_QUEUE)


def test_the_models_title_replaces_only_the_first_messages() -> None:
    chat = ChatSession.objects.create()
    ChatSession.rename(chat.pk, "hi there", "message")
    assert _one_statement(lambda: ChatSession.objects.title_by_model(chat.pk, "Greetings"))
    assert (_row(chat.pk).title, _row(chat.pk).title_source) == ("Greetings", "model")

    ChatSession.rename(chat.pk, "My name for it", "person")
    assert not ChatSession.objects.title_by_model(chat.pk, "Another")
    assert (_row(chat.pk).title, _row(chat.pk).title_source) == ("My name for it", "person")
    assert not ChatSession.objects.title_by_model("no-such-chat", "Another")
