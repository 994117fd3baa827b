"""`python manage.py serve [--port N] [--access-log]` — start the dashboard on 127.0.0.1 with daphne.

It says where it starts, then prints the login link once the port listens, as the last line on
screen: requests are not logged unless asked (`--access-log`, or HERMES_ACCESS_LOG=1), so the
link stays in view.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from foundation import config as hermes_config
from hermes_site.access import exposed_home_warning, login_url
from hermes_site.websocket_server import ANNOUNCE_ENV, command

TRUE_WORDS = ("1", "true", "yes", "on")


class Command(BaseCommand):
    help = "Serve the dashboard (HTTP and websockets) on 127.0.0.1."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=int(os.environ.get("HERMES_PORT", "8765")))
        parser.add_argument(
            "--access-log",
            action="store_true",
            default=os.environ.get("HERMES_ACCESS_LOG", "").lower() in TRUE_WORDS,
            help="Log every request (login tokens redacted); also HERMES_ACCESS_LOG=1.",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        host, port = opts["host"], opts["port"]
        # A fresh home has no tables yet: without this the link printed below would answer 500.
        call_command("migrate", interactive=False, verbosity=0)
        warning = exposed_home_warning(settings.HERMES_HOME)
        if warning:
            self.stderr.write(warning)
        hermes_config.write_defaults()  # first run: every setting in config.yaml, for a person to edit
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        self.stdout.write(f"==> Starting the dashboard on http://{shown}:{port}/ (the login link follows)")
        self.stdout.flush()
        # Through the project's launcher: daphne with websocket limits that match the chat socket's
        # own; it prints the login link once the port listens.
        argv = command(host, port, quiet=not opts["access_log"])
        os.execve(sys.executable, argv, {**os.environ, ANNOUNCE_ENV: f"Hermes dashboard: {login_url(host, port)}"})
