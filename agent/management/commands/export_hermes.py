"""`python manage.py export_hermes OUT.tar.gz`: memories, skills, sessions and messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.transfer import export as home_export


class Command(BaseCommand):
    help = "Export memories, skills and all sessions (JSON lines) as one .tar.gz."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out", help="the archive to write, e.g. hermes-export.tar.gz")
        parser.add_argument(
            "--layout",
            choices=home_export.LAYOUTS,
            default="wrapped",
            help="wrapped: everything under hermes-export/; home: memories/ and skills/ at the top, "
            "shaped like a Hermes home (sessions in dashboard-export/)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"]).expanduser()
        if not out.parent.is_dir():
            raise CommandError(f"The folder {out.parent} does not exist.")
        if out.is_dir():
            raise CommandError(f"{out} is a folder; give the archive's file name, e.g. {out / 'hermes-export.tar.gz'}")
        counts = home_export.export_to_path(out, options["layout"])
        self.stdout.write(f"Wrote {out}: {counts['sessions']} sessions, {counts['messages']} messages.")
