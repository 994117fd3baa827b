"""Titles matched as text through their own index, with the quotes a model puts around a recalled
title stripped."""

from __future__ import annotations

import pytest
from django.db import connection

from knowledge.models import ChatSession
from knowledge.search.schema import SESSIONS, TITLE_ROWS
from knowledge.search.titles import matching_sessions, sqlite_title_condition, unquote
from tests import dbs


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"fingerprint-login"', "fingerprint-login"),
        ("'deploy notes'", "deploy notes"),
        ("“部署问题”", "部署问题"),
        ('`"nested"`', "nested"),
        ('"unbalanced', '"unbalanced'),
        ('say "this" and "that"', 'say "this" and "that"'),  # quotes inside are the query's own
    ],
)
def test_unquote_strips_only_quotes_around_everything(query: str, expected: str) -> None:
    assert unquote(query) == expected


@pytest.mark.django_db
def test_every_term_of_an_alternative_is_in_the_title_newest_first() -> None:
    older = ChatSession.objects.create(title="Login with fingerprint")
    newer = ChatSession.objects.create(title="fingerprint-login")
    ChatSession.objects.create(title="fingerprint only")
    ChatSession.objects.filter(id=older.id).update(updated_at=newer.updated_at.replace(year=2020))
    assert [s.session_id for s in matching_sessions("fingerprint login", limit=5)] == [newer.id, older.id]
    assert matching_sessions("   ", limit=5) == []
    assert [s.session_id for s in matching_sessions("LOGIN", limit=1)] == [newer.id]


@pytest.mark.django_db
def test_the_title_index_follows_renames_and_deletions() -> None:
    renamed = ChatSession.objects.create(title="Kafka consumer lag")
    gone = ChatSession.objects.create(title="Kafka retention")
    renamed.title = "Postgres vacuum"
    renamed.save()
    gone.delete()
    assert matching_sessions("kafka", limit=5) == []
    assert [s.session_id for s in matching_sessions("vacuum", limit=5)] == [renamed.id]
    # A bulk update (no save signal) is followed too: the index is kept by the database itself.
    ChatSession.objects.filter(id=renamed.id).update(title="Redis eviction")
    assert [s.session_id for s in matching_sessions("eviction", limit=5)] == [renamed.id]
    assert matching_sessions("vacuum", limit=5) == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("title", "query"),
    [
        ("服务器部署", "部署"),  # two characters: shorter than a trigram
        ("Use snake_case names", "snake_case"),  # LIKE's own wildcard, matched literally
        ("100% uptime plan", "100%"),
        ("Go or Rust", "go"),
        ("Café MENU", "café menu"),
    ],
)
def test_short_terms_and_wildcard_characters_are_matched_as_text(title: str, query: str) -> None:
    wanted = ChatSession.objects.create(title=title)
    ChatSession.objects.create(title="Something else entirely")
    assert [s.session_id for s in matching_sessions(query, limit=5)] == [wanted.id]


@pytest.mark.django_db
def test_an_excluded_word_leaves_its_titles_out() -> None:
    kept = ChatSession.objects.create(title="Deploy with ansible")
    ChatSession.objects.create(title="Deploy with docker")
    assert [s.session_id for s in matching_sessions("deploy -docker", limit=5)] == [kept.id]


@pytest.mark.django_db
@pytest.mark.skipif(dbs.on_postgres(), reason="SQLite's title index")
@pytest.mark.parametrize("query", ["deploy", "deploy OR redis", "deploy -docker"])
def test_a_title_search_reads_the_index_not_every_session(query: str) -> None:
    found = sqlite_title_condition(query)
    assert found is not None
    with connection.cursor() as cur:
        cur.execute(
            f"EXPLAIN QUERY PLAN SELECT s.id FROM {SESSIONS} s JOIN {TITLE_ROWS} r ON r.session_id = s.id"
            f" WHERE {found[0]}",
            found[1],
        )
        plan = [row[-1] for row in cur.fetchall()]
    assert not any(step.split()[:2] in (["SCAN", "s"], ["SCAN", "r"]) for step in plan), plan
    assert any("VIRTUAL TABLE INDEX 0:L" in step for step in plan), plan  # the LIKE is the index's
