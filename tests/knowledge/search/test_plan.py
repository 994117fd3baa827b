"""Search planning: which index a query goes to (Chinese/Japanese/… to the trigram index), and
filter SQL that selects exactly the messages a person asked for, run on the real index."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from knowledge.models import ChatSession, Message
from knowledge.search.filters import Filters
from knowledge.search.plan import FTS_TABLE, MESSAGES, TRIGRAM_TABLE, plan_query
from knowledge.search.sanitize import parse_groups, parse_terms
from tests import dbs

# The SQLite FTS5 side (PostgreSQL's index is tested through the same search tests, knowledge/search/postgres.py).
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(dbs.on_postgres(), reason="FTS5 objects; PostgreSQL has its own index"),
]


def _plan(query: str, **filters):
    return plan_query(parse_terms(query), Filters(**filters))


def _ids(query: str, **filters) -> list[int]:
    plan = _plan(query, **filters)
    with connection.cursor() as cur:
        cur.execute(f"SELECT m.id FROM {plan.from_sql} WHERE {plan.where_sql} ORDER BY {plan.order_sql}", plan.params)
        return [row[0] for row in cur.fetchall()]


def test_latin_words_go_to_the_word_index_ranked_with_quoted_terms():
    plan = _plan('docker-compose "port mapping"')
    assert plan.table == FTS_TABLE and plan.ranked
    assert plan.match == '"docker-compose" "port mapping"'
    assert plan.order_sql == f"{FTS_TABLE}.rank" and not plan.needs_session


def test_unsegmented_text_goes_to_the_trigram_index():
    long = _plan("数据库迁移")
    assert long.table == TRIGRAM_TABLE and long.match == '"数据库迁移"'
    short = _plan("库")  # shorter than a trigram: scanned, not matched
    assert short.table == TRIGRAM_TABLE and short.match is None and not short.ranked
    assert short.needles == ["库"] and short.order_sql == f"{TRIGRAM_TABLE}.rowid DESC"
    mixed = _plan("postgres 数据库")
    assert mixed.table == TRIGRAM_TABLE and mixed.match == '"postgres" "数据库"'


def _message(session: ChatSession, role: str, content: str, when: datetime | None = None) -> int:
    m = Message.objects.create(session=session, role=role, content=content)
    if when is not None:
        Message.objects.filter(pk=m.pk).update(created_at=when)
    return m.pk


def test_filters_select_exactly_by_role_source_session_and_date():
    web, cli = ChatSession.objects.create(source="web"), ChatSession.objects.create(source="cli")
    day = timezone.make_aware(datetime(2026, 3, 10, 12, 0))
    a = _message(web, "user", "restart the docker daemon", day)
    b = _message(web, "assistant", "docker restarted", day + timedelta(days=1))
    c = _message(cli, "user", "docker on the terminal", day - timedelta(days=1))
    assert sorted(_ids("docker")) == sorted([a, b, c])
    assert _ids("docker", roles=["assistant"]) == [b]
    assert sorted(_ids("docker", sources=["web"])) == sorted([a, b]) and _plan("x", sources=["web"]).needs_session
    assert _ids("docker", session_id=cli.pk) == [c]
    assert sorted(_ids("docker", exclude_session_id=cli.pk)) == sorted([a, b])
    # A plain date covers that whole day; a datetime bound is exact.
    assert _ids("docker", date_from=date(2026, 3, 10), date_to=date(2026, 3, 10)) == [a]
    assert sorted(_ids("docker", date_to=day)) == sorted([a, c])
    assert _ids("docker", date_from=day + timedelta(seconds=1), roles=["assistant", "user"]) == [b]


def test_trigram_plans_find_substrings_and_short_terms():
    s = ChatSession.objects.create()
    hit = _message(s, "user", "我们明天迁移数据库")
    _message(s, "user", "今天天气很好")
    assert _ids("迁移数据库") == [hit]
    assert _ids("库") == [hit]


def test_alternatives_needing_both_indexes_are_a_union_of_what_each_finds():
    s = ChatSession.objects.create()
    english = Message.objects.create(session=s, role="user", content="deploy the api")  # not in the trigram index
    chinese = Message.objects.create(session=s, role="user", content="部署接口")
    both = Message.objects.create(session=s, role="user", content="deploy 部署")
    Message.objects.create(session=s, role="user", content="a redeploy only")  # the word, not a substring
    either = _plan_groups("deploy OR 部署")
    assert either.table == MESSAGES and not either.ranked and either.order_sql == "m.id DESC"
    assert _ids_of(either) == [both.id, chinese.id, english.id]
    assert _ids_of(_plan_groups("deploy -部署")) == [english.id]  # a Chinese exclusion of words


def _plan_groups(query: str):
    return plan_query(parse_terms(query), Filters(), parse_groups(query))


def _ids_of(plan) -> list[int]:
    with connection.cursor() as cur:
        cur.execute(f"SELECT m.id FROM {plan.from_sql} WHERE {plan.where_sql} ORDER BY {plan.order_sql}", plan.params)
        return [row[0] for row in cur.fetchall()]
