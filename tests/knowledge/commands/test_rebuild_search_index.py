"""`manage.py rebuild_search_index`: a database whose search objects are gone (older than the
search migration, restored, or remade) becomes searchable again, and stays in sync."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from knowledge.models import ChatSession, Message
from knowledge.search import schema, search_messages
from tests import dbs

# The SQLite FTS5 side (PostgreSQL's index is tested through the same search tests, knowledge/search/postgres.py).
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(dbs.on_postgres(), reason="FTS5 objects; PostgreSQL has its own index"),
]


def _ids(query: str) -> list[int]:
    return [hit.message_id for hit in search_messages(query).results]


def test_rebuild_recreates_both_indexes_and_their_triggers():
    s = ChatSession.objects.create(title="cache")
    latin = Message.objects.create(session=s, role="user", content="memcached eviction policy")
    chinese = Message.objects.create(session=s, role="assistant", content="缓存淘汰策略")
    with connection.cursor() as cur:
        for sql in schema.SQLITE_DROP:  # as a database from before the search migration
            cur.execute(sql)
    out = io.StringIO()
    call_command("rebuild_search_index", "--optimize", stdout=out)
    assert out.getvalue().startswith(
        "Indexed 2 messages (1 with non-ASCII text in the trigram index; top lists for 0 common words) in "
    )
    assert _ids("memcached") == [latin.pk]
    assert _ids("淘汰策略") == [chinese.pk]
    later = Message.objects.create(session=s, role="user", content="memcached again")  # triggers are back
    assert later.pk in _ids("memcached")
    Message.objects.filter(pk=latin.pk).delete()
    assert _ids("eviction") == []


def test_rebuilding_a_healthy_index_changes_no_result():
    s = ChatSession.objects.create()
    m = Message.objects.create(session=s, role="user", content="kubernetes ingress")
    call_command("rebuild_search_index", stdout=io.StringIO())
    call_command("rebuild_search_index", stdout=io.StringIO())
    assert _ids("ingress") == [m.pk]
