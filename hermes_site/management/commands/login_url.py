"""`python manage.py login_url [--host H] [--port P ...]` — print the login link of this home.

The link carries the home's login token (created on first use, owner-only), so a person who
started the dashboard's pieces by hand — daphne workers, a proxy in front of them — can log in
without reading the token file. One line per port, in the order given.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from hermes_site.access import login_url


class Command(BaseCommand):
    help = "Print the dashboard's login link (one per --port; default HERMES_PORT or 8765)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="The host name the browser uses.")
        parser.add_argument(
            "--port", type=int, action="append", help="A port a worker listens on (repeat for several)."
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        for port in opts["port"] or [int(os.environ.get("HERMES_PORT", "8765"))]:
            self.stdout.write(login_url(opts["host"], port))
