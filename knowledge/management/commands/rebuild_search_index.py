"""Recreate the full-text search objects if missing and repopulate both indexes.

For a database that already held messages before the search migration, after a restore, or
after a later migration remade `knowledge_message` (which drops its triggers). The SQL is the
migration's own, so the command can never drift from what the migration creates.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection, transaction

from knowledge.search import top as search_top

_fts_migration = importlib.import_module("knowledge.migrations.0003_search_index")
_pg_migration = importlib.import_module("knowledge.migrations.0011_postgres_search_table_issue18")
_top_migration = importlib.import_module("knowledge.migrations.0012_search_top_issue16")
_pg_top_migration = importlib.import_module("knowledge.migrations.0015_search_top_postgres_issue18")


def rebuild_postgres(cursor: Any) -> int:
    """PostgreSQL: recreate the trigger and indexes if missing and recompute every row's entry."""
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending deferred checks
    for sql in _pg_migration.FORWARD + _pg_top_migration.FORWARD:
        cursor.execute(sql)
    cursor.execute("SELECT count(*) FROM knowledge_message")
    return int(cursor.fetchone()[0])


def rebuild_indexes(cursor: Any) -> dict[str, int]:
    """Run on any DB-API cursor (Django's or sqlite3's); returns the indexed row counts."""
    for sql in _fts_migration.TABLES_SQL + _fts_migration.TRIGGERS_SQL + _fts_migration.REBUILD_SQL:
        cursor.execute(sql)
    counts: dict[str, int] = {}
    for table in ("knowledge_message", _fts_migration.TRIGRAM):
        cursor.execute(f"SELECT count(*) FROM {table}")
        counts[table] = int(cursor.fetchone()[0])
    return counts


class Command(BaseCommand):
    help = "Rebuild the full-text search indexes (word and trigram) from the stored messages."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--optimize", action="store_true", help="Merge index segments afterwards.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        if connection.vendor == "postgresql":
            with transaction.atomic(), connection.cursor() as cur:
                count = rebuild_postgres(cur)
                lists = search_top.rebuild_lists(cur)
            self.stdout.write(
                f"Indexed {count} messages (top lists for {lists} common words) in {time.monotonic() - started:.1f}s."
            )
            return
        with transaction.atomic(), connection.cursor() as cur:
            counts = rebuild_indexes(cur)
            if options["optimize"]:
                for table in (_fts_migration.FTS, _fts_migration.TRIGRAM):
                    cur.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
            for sql in _top_migration.FORWARD_SQL:
                cur.execute(sql)
            lists = search_top.rebuild_lists(cur)
        self.stdout.write(
            f"Indexed {counts['knowledge_message']} messages "
            f"({counts[_fts_migration.TRIGRAM]} with non-ASCII text in the trigram index; "
            f"top lists for {lists} common words) in {time.monotonic() - started:.1f}s."
        )
