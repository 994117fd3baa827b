"""`python manage.py chat [--session NAME] [-m TEXT ...]` — the terminal chat (SPEC §8).

Answers stream to standard output; tool activity and errors go to standard error; the 💾
lines of background reviews go to standard output. With -m it runs the messages as turns,
waits (bounded) for pending reviews, ends the session (memory flush) and exits.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from agent import notify
from agent.config import ConfigError
from agent.llm import LLMError
from agent.loop import TextDelta, ToolFinished, ToolStarted, TurnDone, TurnError
from agent.review import wait_for_reviews
from agent.runner import AgentSession, InputTooLarge

REVIEW_WAIT_SECONDS = 120.0


def _ensure_database() -> None:
    """A first run in a new HERMES_HOME creates its database instead of failing on a missing table."""
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        call_command("migrate", verbosity=0, interactive=False)


class Command(BaseCommand):
    help = "Chat with the agent in the terminal."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--session", dest="session", default=None, help="resume or create the session NAME")
        parser.add_argument("-m", dest="messages", action="append", default=[], help="one turn (repeatable)")
        parser.add_argument("--review-wait", type=float, default=REVIEW_WAIT_SECONDS)

    def handle(self, *args: Any, **opts: Any) -> None:
        self._print_lock = threading.Lock()
        _ensure_database()
        try:
            agent = AgentSession.open(name=opts["session"], source="cli")
        except (ConfigError, LLMError) as exc:
            self._err(str(exc))
            sys.exit(2)
        unsubscribe = notify.subscribe(self._on_review(agent.session.pk))
        failed = False
        try:
            if opts["messages"]:
                for text in opts["messages"]:
                    failed = not self._turn(agent, text) or failed
                if not wait_for_reviews(agent.session.pk, opts["review_wait"]):
                    self._err("A background review is still running; it will be recorded when it finishes.")
            else:
                self._interactive(agent)
        finally:
            agent.end("cli exit")
            unsubscribe()
        if failed:
            sys.exit(1)

    # -- output -------------------------------------------------------------------------------
    def _out(self, text: str, end: str = "\n") -> None:
        with self._print_lock:
            sys.stdout.write(text + end)
            sys.stdout.flush()

    def _err(self, text: str) -> None:
        with self._print_lock:
            sys.stderr.write(f"error: {text}\n")
            sys.stderr.flush()

    def _on_review(self, session_id: str) -> notify.Listener:
        def listener(notice: notify.ReviewNotice) -> None:
            if notice.session_id != session_id:
                return
            if notice.line:
                self._out(notice.line)
            elif notice.error:
                with self._print_lock:
                    sys.stderr.write(f"review failed: {notice.error}\n")

        return listener

    # -- turns --------------------------------------------------------------------------------
    def _turn(self, agent: AgentSession, text: str) -> bool:
        """Run one turn; Ctrl-C interrupts it. Returns False if it ended in an error."""
        interrupt = threading.Event()

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            interrupt.set()

        previous = (
            signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None
        )
        ok = True
        streamed = False
        try:
            for event in agent.run_turn(text, interrupt):
                if isinstance(event, TextDelta):
                    with self._print_lock:
                        sys.stdout.write(event.text)
                        sys.stdout.flush()
                    streamed = True
                elif isinstance(event, ToolStarted):
                    if streamed:
                        self._out("")
                        streamed = False
                    with self._print_lock:
                        sys.stderr.write(f"  ⚙ {event.name}\n")
                elif isinstance(event, ToolFinished) and not event.ok:
                    with self._print_lock:
                        sys.stderr.write(f"  ⚠ {event.name} returned an error\n")
                elif isinstance(event, TurnError):
                    if streamed:
                        self._out("")
                        streamed = False
                    self._err(event.message)
                    ok = False
                elif isinstance(event, TurnDone):
                    if streamed:
                        self._out("")
                        streamed = False
                    if event.interrupted:
                        self._out("[interrupted]")
                    elif event.hit_limit:
                        self._err(f"Stopped after {event.iterations} model calls (agent.max_iterations).")
        except (InputTooLarge, LLMError) as exc:
            self._err(str(exc))
            ok = False
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        return ok

    def _interactive(self, agent: AgentSession) -> None:
        self._out(f"Session {agent.session.name or agent.session.pk}. Ctrl-C stops a reply, Ctrl-D ends the session.")
        while True:
            try:
                text = input("you> ")
            except EOFError:
                self._out("")
                return
            except KeyboardInterrupt:
                self._out("")
                continue
            if text.strip():
                self._turn(agent, text)
