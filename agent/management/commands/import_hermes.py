"""`python manage.py import_hermes PATH` (folder or archive) and `--undo ID`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.transfer import hermes_import as transfer


class Command(BaseCommand):
    help = "Import the memories and skills of a Hermes Agent home (folder, .zip or .tar.gz), or undo an import."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", help="a HERMES_HOME folder, or a .zip / .tar.gz of one")
        parser.add_argument("--undo", type=int, metavar="ID", help="undo the import with this id")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["undo"] is not None:
                done = transfer.undo_import(options["undo"])
                self.stdout.write(f"Import #{options['undo']} undone: {len(done)} changes reverted.")
                return
            if not options["path"]:
                raise CommandError("Give the path of a Hermes home (folder or archive), or --undo ID.")
            report = transfer.import_path(Path(options["path"]))
        except transfer.TransferError as exc:
            raise CommandError(str(exc)) from exc
        for item in report.problems:
            self.stderr.write(f"{item.outcome}: {item.kind} {item.name}: {item.reason}")
        self.stdout.write(f"Import #{report.run_id}: {report.summary}.")
        self.stdout.write(f"Undo with: python manage.py import_hermes --undo {report.run_id}")
