"""The search schema (knowledge/search/schema.py) builds the same objects as the migrations, so
`rebuild_search_index` restores exactly what a migrated database has — and a change to the
schema that no migration makes shows here."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from knowledge.search import schema
from tests import dbs

pytestmark = pytest.mark.django_db


def _normal(sql: str) -> str:
    return re.sub(r"\s+", " ", sql.replace("IF NOT EXISTS ", "")).strip()


def _sqlite_objects() -> dict[str, str]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') AND sql IS NOT NULL"
            # "_" is LIKE's one-character wildcard: escaped, so knowledge_messageattachment is not taken
            " AND (name LIKE %s ESCAPE '!' OR name LIKE %s OR tbl_name = %s)",
            ["knowledge!_message!_%", f"{schema.TITLES}%", schema.MESSAGES],
        )
        return {name: _normal(sql) for name, sql in cur.fetchall() if name != schema.MESSAGES}


def _pg_objects() -> dict[str, str]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'public' AND p.proname LIKE 'knowledge_%%'"
        )
        found = dict(cur.fetchall())
        cur.execute("SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname LIKE 'knowledge_%%'")
        found.update(cur.fetchall())
        cur.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'knowledge_message_search%%'"
            " OR indexname = 'knowledge_chatsession_title_trgm'"
        )
        found.update(cur.fetchall())
        cur.execute(
            "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
            " WHERE table_name LIKE 'knowledge_message_search%%' OR (table_name = 'knowledge_message'"
            " AND column_name LIKE 'search%%')"
        )
        found.update(cur.fetchall())
        return {name: _normal(sql) for name, sql in found.items()}


@pytest.mark.skipif(dbs.on_postgres(), reason="FTS5 objects")
def test_sqlite_schema_rebuilds_what_the_migrations_made() -> None:
    migrated = _sqlite_objects()
    assert {schema.FTS, schema.TRIGRAM, schema.VIEW, schema.FTS_TOP, schema.TITLES, schema.TITLE_ROWS,
            *schema.SQLITE_TRIGGERS} <= set(migrated)  # fmt: skip
    with connection.cursor() as cur:
        for sql in schema.SQLITE_DROP:
            cur.execute(sql)
        assert _sqlite_objects() == {}
        counts = schema.rebuild_sqlite(cur)
    assert _sqlite_objects() == migrated
    assert counts == {schema.MESSAGES: 0, schema.TRIGRAM: 0}


@pytest.mark.skipif(not dbs.on_postgres(), reason="PostgreSQL's index")
def test_postgres_schema_rebuilds_what_the_migrations_made() -> None:
    migrated = _pg_objects()
    assert {"knowledge_message_vector", "knowledge_message_search_sync", "knowledge_message_search_removed"} <= set(
        migrated
    )
    with connection.cursor() as cur:
        cur.execute(f"DROP TABLE {schema.PG_TOP}")
        cur.execute("DROP FUNCTION knowledge_message_vector(text, text, jsonb) CASCADE")
        assert schema.rebuild_postgres(cur) == 0
    assert _pg_objects() == migrated
