"""`python manage.py chat [--session NAME] [-m TEXT ...]` — the terminal chat.

Answers stream to standard output; tool activity and errors go to standard error; the 💾
lines of background reviews go to standard output. With -m it runs the messages as turns,
waits (bounded) for pending reviews, ends the session (memory flush) and exits.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, ClassVar

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from agent.chat import live
from agent.chat.runner import AgentSession, InputTooLarge
from agent.chat.slash import refine_focus
from agent.learning import notify
from agent.learning.review import ReviewRefused, request_review, review_notice, wait_for_reviews
from agent.llm import LLMError, StopSignal
from agent.loop import ModelNotice, TextDelta, ToolFinished, ToolStarted, TurnDone, TurnError
from foundation.config import ConfigError, write_defaults
from knowledge import versions
from knowledge.history.runs import recover_after_restart
from knowledge.models import Message, ReviewRun
from knowledge.skills import outcomes

REVIEW_WAIT_SECONDS = 120.0
VERDICTS = {"/good": "good", "/bad": "bad"}


def dashboard_url(path: str) -> str:
    """A dashboard page's address where `manage.py serve` listens by default (HERMES_PORT)."""
    return f"http://127.0.0.1:{os.environ.get('HERMES_PORT', '8765')}{path}"


def review_line(notice: notify.ReviewNotice) -> str:
    """The toast's 💾 line; when writes wait for the person, with the inbox's address for them."""
    if notice.held:
        return f"{notice.line} — {dashboard_url(live.held_href(notice))}"
    return notice.line


def _ensure_database() -> None:
    """A first run in a new HERMES_HOME creates its database instead of failing on a missing table."""
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
        self._heard: set[int] = set()  # reviews whose notice this process printed
        self._started = timezone.now()
        _ensure_database()
        write_defaults()  # first run: every setting in config.yaml, for a person to edit
        recover_after_restart()
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
                    if not self._command(agent, text):
                        failed = not self._turn(agent, text) or failed
                if not wait_for_reviews(agent.session.pk, opts["review_wait"]):
                    self._err("A background review is still running; it will be recorded when it finishes.")
                self._print_reviews_run_elsewhere(agent.session.pk)
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
        self._note(f"error: {text}")

    def _note(self, text: str) -> None:
        with self._print_lock:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def _on_review(self, session_id: str) -> notify.Listener:
        def listener(notice: notify.ReviewNotice) -> None:
            if notice.session_id != session_id:
                return
            self._heard.add(notice.review_id)
            if notice.line:
                self._out(review_line(notice))
            elif notice.error:
                self._note(f"review failed: {notice.error}")
            elif notice.requested:  # asked for with /refine: it answers even when it found nothing
                self._out("💾 Review done: nothing new to save.")

        return listener

    def _print_reviews_run_elsewhere(self, session_id: str) -> None:
        """On the durable queue a review runs in a queue worker: its 💾 line is read back from its run."""
        done = ReviewRun.objects.filter(session_id=session_id, status="done", created_at__gte=self._started)
        for run in done.exclude(pk__in=self._heard).order_by("id"):
            notice = review_notice(run, session_id)
            if notice.line:
                self._out(review_line(notice))

    # -- turns --------------------------------------------------------------------------------
    def _turn(self, agent: AgentSession, text: str) -> bool:
        """Run one turn; Ctrl-C interrupts it. Returns False if it ended in an error."""
        interrupt = StopSignal()

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            interrupt.set()

        previous = (
            signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None
        )
        printer = _TurnPrinter(self)
        try:
            for event in agent.run_turn(text, interrupt):
                printer.handle(event)
        except (InputTooLarge, LLMError) as exc:
            self._err(str(exc))
            printer.ok = False
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        return printer.ok

    def _command(self, agent: AgentSession, text: str) -> bool:
        """A line that is a command rather than a message (True if handled)."""
        return self._verdict(agent, text) or self._refine(agent, text)

    def _refine(self, agent: AgentSession, text: str) -> bool:
        """`/refine [focus]`: the background review of this chat, now; its 💾 line follows as any review's."""
        focus = refine_focus(text)
        if focus is None:
            return False
        try:
            request_review(
                agent.session,
                focus,
                config=agent.config,
                registry=agent.registry,
                client_factory=agent.client_factory,
                snapshot=list(agent.messages),
            )
        except ReviewRefused as exc:
            self._err(str(exc))
            return True
        about = f", focusing on: {focus}" if focus else ""
        self._note(f"💾 Reviewing this chat now{about}. What it saves is printed when it finishes.")
        return True

    def _verdict(self, agent: AgentSession, text: str) -> bool:
        """`/good [words]` or `/bad [words]`: the person's verdict on the last answer (True if handled)."""
        word, _, note = text.strip().partition(" ")
        verdict = VERDICTS.get(word)
        if verdict is None:
            return False
        answer = (
            Message.objects.filter(session_id=agent.session.pk, role="assistant")
            .exclude(content="")
            .exclude(id__in=versions.off_path_of(agent.session.pk))
            .order_by("-id")
            .first()
        )
        if answer is None:
            self._err("There is no answer yet to give a verdict on.")
            return True
        outcomes.give_verdict(answer, verdict, note.strip())
        self._out(f"Noted {'👍' if verdict == 'good' else '👎'} on the last answer.")
        return True

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
            if text.strip() and not self._command(agent, text):
                self._turn(agent, text)


class _TurnPrinter:
    """One turn's events on the terminal: the answer streams to stdout; tool activity, errors and
    notes go to stderr, each on a line of its own (a streamed answer is ended first)."""

    def __init__(self, cmd: Command) -> None:
        self.cmd = cmd
        self.ok = True
        self.mid_line = False

    def handle(self, event: object) -> None:
        handler = self.HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _end_line(self) -> None:
        if self.mid_line:
            self.cmd._out("")
            self.mid_line = False

    def _text(self, e: TextDelta) -> None:
        self.cmd._out(e.text, end="")
        self.mid_line = True

    def _tool_started(self, e: ToolStarted) -> None:
        self._end_line()
        self.cmd._note(f"  ⚙ {e.name}")

    def _tool_finished(self, e: ToolFinished) -> None:
        if not e.ok:
            self.cmd._note(f"  ⚠ {e.name} returned an error")

    def _notice(self, e: ModelNotice) -> None:
        self._end_line()
        self.cmd._note(f"note: {e.text}")

    def _error(self, e: TurnError) -> None:
        self._end_line()
        self.cmd._err(e.message)
        self.ok = False

    def _done(self, e: TurnDone) -> None:
        self._end_line()
        if e.interrupted:
            self.cmd._out("[interrupted]")
        elif e.hit_limit:
            self.cmd._err(f"Stopped after {e.iterations} model calls (agent.max_iterations).")

    HANDLERS: ClassVar[dict[type, Callable[[_TurnPrinter, Any], None]]] = {
        TextDelta: _text,
        ToolStarted: _tool_started,
        ToolFinished: _tool_finished,
        ModelNotice: _notice,
        TurnError: _error,
        TurnDone: _done,
    }
