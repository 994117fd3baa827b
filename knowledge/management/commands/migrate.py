"""Django's `migrate`, after bringing up to date the names under which earlier releases recorded
eight of knowledge's migrations (0008–0015).

Those migrations were once named with a ticket number after their name (`0011_postgres_search_table`
followed by `_issue` and a number). A database made then holds those names in `django_migrations`,
and Django would take the files, named without the number, for migrations never applied — and fail
on tables that are already there. Renaming the recorded rows before Django reads them lets those
databases migrate, without the old names living on in the migrations themselves. Every way this
project migrates goes through here: `manage.py migrate`, `serve` and `chat` (which call it), and
the test runner.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.recorder import MigrationRecorder

APP = "knowledge"
# A recorded name: the migration's name today, then the ticket suffix it once carried.
_RECORDED = re.compile(r"^(?P<name>\d{4}_\w+?)_issue\d+$")


def _names_on_disk() -> set[str]:
    folder = Path(apps.get_app_config(APP).path) / "migrations"
    return {path.stem for path in folder.glob("[0-9][0-9][0-9][0-9]_*.py")}


def rename_recorded_migrations(connection: BaseDatabaseWrapper) -> list[tuple[str, str]]:
    """Rename knowledge's rows recorded under an earlier name; returns the (old, new) pairs."""
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return []
    on_disk = _names_on_disk()
    renamed: list[tuple[str, str]] = []
    with transaction.atomic(using=connection.alias):
        rows = recorder.migration_qs.filter(app=APP)
        recorded = set(rows.values_list("name", flat=True))
        for old in sorted(recorded):
            match = _RECORDED.match(old)
            if not match or match["name"] not in on_disk:
                continue
            new = match["name"]
            if new in recorded:  # both recorded: the row under today's name is the one to keep
                rows.filter(name=old).delete()
            else:
                rows.filter(name=old).update(name=new)
            renamed.append((old, new))
    return renamed


class Command(DjangoMigrateCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        renamed = rename_recorded_migrations(connections[options["database"]])
        if renamed and options["verbosity"] >= 1:
            self.stdout.write(f"Brought {len(renamed)} recorded migration names up to date.")
        super().handle(*args, **options)
