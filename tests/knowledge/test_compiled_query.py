"""Per-turn reads and writes whose SQL the ORM compiles once: the same rows as the queryset, for any id."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from knowledge.compiled_query import RowUpdate, SessionRowQuery
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db


def test_it_reads_each_chats_row_as_the_queryset_would_in_one_query():
    titles = SessionRowQuery(
        ChatSession, lambda pk: ChatSession.objects.filter(pk=pk).values_list("title", "pinned")[:1]
    )
    a = ChatSession.objects.create(title="Kayaks")
    b = ChatSession.objects.create(title="Tide tables", pinned=True)
    with CaptureQueriesContext(connection) as queries:
        assert titles.row(a.pk) == ("Kayaks", False)
        assert titles.row(b.pk) == ("Tide tables", True)
        assert titles.row("no-such-chat") is None
    assert len(queries) == 3


def test_an_update_sets_what_the_querysets_update_would_and_counts_the_rows_it_changed():
    holder = RowUpdate(("pk", "turn_worker"))
    a = ChatSession.objects.create(title="Kayaks", message_count=2)
    b = ChatSession.objects.create(title="Tide tables", turn_worker="other:1")
    when = datetime(2026, 5, 1, 12, 30, tzinfo=UTC)
    for chat in (a, b):  # the second run of each shape reuses the SQL compiled by the first
        taken = {"turn_worker": "me:1", "turn_started_at": when, "turn_lease_until": when + timedelta(minutes=1)}
        assert holder.run(ChatSession, (chat.pk, ""), taken) == (1 if chat is a else 0)
    a.refresh_from_db()
    assert (a.turn_worker, a.turn_started_at, a.turn_lease_until) == ("me:1", when, when + timedelta(minutes=1))
    assert ChatSession.objects.get(pk=b.pk).turn_worker == "other:1"  # held by another: not taken
    freed = {"turn_worker": "", "turn_lease_until": None, "turn_started_at": None}
    assert holder.run(ChatSession, (a.pk, "me:1"), freed) == 1
    a.refresh_from_db()
    assert (a.turn_worker, a.turn_started_at, a.turn_lease_until) == ("", None, None)


def test_counts_add_to_what_the_row_holds_and_other_expressions_still_go_through_the_orm():
    by_pk = RowUpdate()
    chat = ChatSession.objects.create(title="Kayaks", message_count=2, prompt_tokens=10)
    with CaptureQueriesContext(connection) as queries:
        for n in (1, 3):
            by_pk.run(
                ChatSession,
                (chat.pk,),
                {"message_count": F("message_count") + 1, "prompt_tokens": F("prompt_tokens") + n},
            )
        by_pk.run(ChatSession, (chat.pk,), {"completion_tokens": F("prompt_tokens") * 2, "title": "Sea kayaks"})
    assert len(queries) == 3  # one statement each
    chat.refresh_from_db()
    assert (chat.message_count, chat.prompt_tokens, chat.completion_tokens, chat.title) == (4, 14, 28, "Sea kayaks")
