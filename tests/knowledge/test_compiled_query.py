"""A per-turn read whose SQL the ORM compiles once: the same rows as the queryset, for any id."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.compiled_query import SessionRowQuery
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
