"""`python manage.py eval_learning [--limit N] [--cases a,b] [--mode off|required|verified] [--file PATH]
[--json PATH]`; `--writes [--mode correct|approve_all|off]`: the write corpus (agent/learning_eval/writes.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agent.chat.runner import default_client_factory
from agent.learning_eval import run, writes
from foundation import config as hermes_config


class Command(BaseCommand):
    help = (
        "Run the labelled learning-quality cases through the real review path against the configured "
        "model, with the gate off, deterministic, and deterministic plus the verifier (the same prompt in each); print "
        "precision, recall, bad saves, held writes (and those that were correct), conflicts and duplicates left, "
        "skills created and tokens. With --writes: the corpus of single memory writes (correct and bad) through "
        "the memory tool, with the verifier answering from the corpus labels, approving everything, or off."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, help="run only the first N cases (with --writes: N of each file)")
        parser.add_argument("--cases", help="comma-separated case ids")
        parser.add_argument(
            "--mode",
            choices=sorted({*run.MODES, *writes.MODES}),
            action="append",
            help="gate mode(s): off, required (deterministic), verified (and the verifier); with --writes: correct, "
            "approve_all, off; default all",
        )
        parser.add_argument("--file", type=Path, help="a cases file of the same shape as the shipped one")
        parser.add_argument(
            "--writes",
            action="store_true",
            help="run the write corpus (agent/learning_eval/writes/) instead: no model is called",
        )
        parser.add_argument("--json", dest="json_path", help="write the full report as JSON here ('-' for stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["limit"] is not None and opts["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        ids = [i.strip() for i in (opts["cases"] or "").split(",") if i.strip()] or None
        if opts["writes"]:
            self._writes(ids, opts)
            return
        modes = tuple(opts["mode"] or run.MODES)
        wrong = [m for m in modes if m not in run.MODES]
        if wrong:
            raise CommandError(f"Mode {wrong[0]!r} is for --writes; the cases' modes are {', '.join(run.MODES)}.")
        try:
            cases = run.load_cases(opts["file"] or run.CASES_FILE, ids, opts["limit"])
            config = hermes_config.get()
        except (run.EvalError, OSError, ValueError, hermes_config.ConfigError) as exc:
            raise CommandError(str(exc)) from exc
        if not config.model_name:
            raise CommandError("No model configured: set model.name in config.yaml or HERMES_MODEL.")

        def progress(r: run.CaseResult) -> None:
            note = f" — error: {r.error}" if r.error else ""
            self.stderr.write(f"{r.mode:8} {r.case}: saved {len(r.saved)}, correct {r.correct}{note}")

        report = run.evaluate(cases, modes, default_client_factory, progress)
        self.stdout.write(run.table(report))
        self._json(report, opts["json_path"])

    def _writes(self, ids: list[str] | None, opts: dict[str, Any]) -> None:
        if opts["file"] is not None:
            raise CommandError("--file is a cases file for the review path; --writes runs its own corpus.")
        modes = tuple(opts["mode"] or writes.MODES)
        wrong = [m for m in modes if m not in writes.MODES]
        if wrong:
            raise CommandError(f"With --writes the modes are {', '.join(writes.MODES)} (not {wrong[0]!r}).")
        try:
            cases = writes.load(ids, opts["limit"])
        except (writes.CorpusError, OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc

        def progress(o: writes.Outcome) -> None:
            why = f": {o.reason[:160]}" if o.reason else ""
            self.stderr.write(f"{o.mode:11} {o.case}: {o.result}{why}")

        report = writes.evaluate(cases, modes, progress)
        self.stdout.write(writes.text(report))
        self._json(report, opts["json_path"])

    def _json(self, report: dict[str, Any], path: str | None) -> None:
        text = json.dumps(report, ensure_ascii=False, indent=2)
        if path == "-":
            self.stdout.write(text)
        elif path:
            Path(path).write_text(text, encoding="utf-8")
            self.stdout.write(f"Report written to {path}")
