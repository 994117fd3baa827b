"""Recreate the full-text search objects if missing and repopulate the indexes.

For a database that already held messages before the search migration, after a restore, or
after a later migration remade `knowledge_message` (which drops its triggers). The SQL is the
search schema's (knowledge/search/schema.py), the same objects the migrations created.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection, transaction

from knowledge import search


class Command(BaseCommand):
    help = "Rebuild the full-text search indexes (word and trigram) from the stored messages."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--optimize", action="store_true", help="Merge index segments afterwards.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        with transaction.atomic(), connection.cursor() as cur:
            done = search.rebuild_index(cur, optimize=options["optimize"])
        trigram = "" if done.trigram is None else f"{done.trigram} with non-ASCII text in the trigram index; "
        self.stdout.write(
            f"Indexed {done.messages} messages ({trigram}top lists for {done.lists} common words)"
            f" in {time.monotonic() - started:.1f}s."
        )
