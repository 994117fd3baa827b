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

_fts_migration = importlib.import_module("knowledge.migrations.0003_search_index")


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
        with transaction.atomic(), connection.cursor() as cur:
            counts = rebuild_indexes(cur)
            if options["optimize"]:
                for table in (_fts_migration.FTS, _fts_migration.TRIGRAM):
                    cur.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
        self.stdout.write(
            f"Indexed {counts['knowledge_message']} messages "
            f"({counts[_fts_migration.TRIGRAM]} with non-ASCII text in the trigram index) "
            f"in {time.monotonic() - started:.1f}s."
        )
