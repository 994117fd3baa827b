"""`python manage.py eval_learning [--limit N] [--cases a,b] [--mode off|required|verified] [--json PATH]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agent.chat.runner import default_client_factory
from agent.learning_eval import run
from hermes_site import config as hermes_config


class Command(BaseCommand):
    help = (
        "Run the labelled learning-quality cases through the real review path against the configured "
        "model, with the gate off, deterministic, and deterministic plus the verifier (the same prompt in each); print "
        "precision, recall, bad saves, held writes (and those that were correct), conflicts and duplicates left, "
        "skills created and tokens."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, help="run only the first N cases")
        parser.add_argument("--cases", help="comma-separated case ids")
        parser.add_argument(
            "--mode",
            choices=run.MODES,
            action="append",
            help="gate mode(s): off, required (deterministic), verified (and the verifier); default all",
        )
        parser.add_argument("--file", type=Path, default=run.CASES_FILE, help="a cases file of the same shape")
        parser.add_argument("--json", dest="json_path", help="write the full report as JSON here ('-' for stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["limit"] is not None and opts["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        ids = [i.strip() for i in (opts["cases"] or "").split(",") if i.strip()] or None
        try:
            cases = run.load_cases(opts["file"], ids, opts["limit"])
            config = hermes_config.get()
        except (run.EvalError, OSError, ValueError, hermes_config.ConfigError) as exc:
            raise CommandError(str(exc)) from exc
        if not config.model_name:
            raise CommandError("No model configured: set model.name in config.yaml or HERMES_MODEL.")
        modes = tuple(opts["mode"] or run.MODES)

        def progress(r: run.CaseResult) -> None:
            note = f" — error: {r.error}" if r.error else ""
            self.stderr.write(f"{r.mode:8} {r.case}: saved {len(r.saved)}, correct {r.correct}{note}")

        report = run.evaluate(cases, modes, default_client_factory, progress)
        self.stdout.write(run.table(report))
        text = json.dumps(report, ensure_ascii=False, indent=2)
        if opts["json_path"] == "-":
            self.stdout.write(text)
        elif opts["json_path"]:
            Path(opts["json_path"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"Report written to {opts['json_path']}")
