"""The browser chat's synchronous side: live agents per session, turns run on worker threads,
and the stored conversation shaped for the page.

The websocket consumer stays a translator: it asks this module to start a turn, and receives
the turn's frames (plain dicts, in order) through the `emit` callback it passes in. Everything
here runs in ordinary threads, so the ORM is used directly.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.db import close_old_connections
from django.utils import timezone

from agent.chat.frames import Frame
from agent.chat.runner import (
    CURRENT_FIELDS,
    AgentSession,
    InputTooLarge,
    TurnSaved,
    TurnStarted,
    default_client_factory,
)
from agent.learning import review
from agent.llm import LLMError
from agent.loop import (
    ModelCalled,
    ModelClient,
    ModelNotice,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from agent.tools.results import MAX_RESULT_CHARS, stored_ok
from hermes_site import config as hermes_config
from hermes_site.config import Config
from hermes_site.rendering import render_markdown
from knowledge.history import turns
from knowledge.models import AnswerFeedback, ChatSession, Message

log = logging.getLogger(__name__)

Emit = Callable[[Frame | None], None]  # None marks the end of a turn's frames

BUSY_MESSAGE = "A reply is still being written… wait for it to finish or press Stop."

# Turns run here, not on the event loop: the runner is a blocking generator (HTTP + ORM).
# A turn spends nearly all its time waiting for the model (a real model streams for seconds),
# so threads, not cores, bound how many chats answer at once: with 8 the 9th chat waited for a
# free thread and 20 chats at a real model's pace got 37% of the possible turns/s (bench/live.py).
# Idle threads cost only their stacks; each keeps one SQLite connection.
TURN_THREADS = 128
_turn_pool = ThreadPoolExecutor(max_workers=TURN_THREADS, thread_name_prefix="chat-turn")


# -- turns: busy state in the database, agents cached per process ---------------------------------
#
# Whether a session is busy is a lease on its row (knowledge/history/turns.py), so every server process
# agrees. What stays in this process is what only this process can have: the interrupt flag of a
# turn running on one of its threads, and a bounded cache of live agents (a cache: each turn
# checks the agent against the stored session and reopens it if another process moved on).


class _Agents:
    """At most `size` live agents, least recently used evicted (and their HTTP clients closed)."""

    # As many as turns can run at once: with 64, 100 chats taking turns in rotation evicted one
    # another, and every turn reopened its session (all its messages read, its tools rebuilt).
    def __init__(self, size: int = TURN_THREADS) -> None:
        self.size = size
        self._agents: OrderedDict[str, AgentSession] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str, row: dict[str, Any] | None = None) -> AgentSession:
        """`row`: the session's columns just read (AgentSession.is_current), or None to read them."""
        with self._lock:
            agent = self._agents.pop(session_id, None)
        if agent is None or not agent.is_current(row):
            if agent is not None:
                agent.close()
            agent = AgentSession.open(
                session_id=session_id, source="web", client_factory=session_client_factory(session_id)
            )
        with self._lock:
            self._agents[session_id] = agent
            evicted = [self._agents.popitem(last=False)[1] for _ in range(max(0, len(self._agents) - self.size))]
        for old in evicted:
            old.close()
        return agent

    def pop(self, session_id: str) -> AgentSession | None:
        with self._lock:
            return self._agents.pop(session_id, None)


def _stored_model(session_id: str) -> str:
    return ChatSession.objects.filter(pk=session_id).values_list("model", flat=True).first() or ""


def session_client_factory(session_id: str) -> Callable[[Config, str | None], ModelClient]:
    """Clients for the model chosen for this chat (ChatSession.model), read when one is made."""

    def factory(config: Config, model: str | None = None) -> ModelClient:
        return default_client_factory(config, model or _stored_model(session_id) or None)

    return factory


_agents = _Agents()


def _agent_for_turn(session_id: str) -> AgentSession:
    """The cached agent, with a client for the chat's model even if it was changed since (on
    any server process). Called while this turn holds the session's lease, so no turn is using
    the client that gets closed."""
    # One read of the row for both checks (each query costs more in Django than in SQLite).
    row = ChatSession.objects.filter(pk=session_id).values(*CURRENT_FIELDS, "model").first()
    if row is None:
        raise ChatSession.DoesNotExist(f"chat session {session_id} does not exist")
    agent = _agents.get(session_id, row)
    stored = row["model"] or ""
    if stored != agent.session.model:
        agent.session.model = stored
        agent.close()
    return agent


# Interrupt flags of the turns running on this process's threads, by session id.
_running: dict[str, threading.Event] = {}
_running_lock = threading.Lock()


def try_begin_turn(session_id: str) -> threading.Event | None:
    """Claim the session for a turn; None when a turn (from any tab, on any server) is running.

    Raises ChatSession.DoesNotExist for a deleted session."""
    if not turns.claim(session_id):
        return None
    interrupt = threading.Event()
    with _running_lock:
        _running[session_id] = interrupt
    return interrupt


def stop_turn(session_id: str) -> bool:
    """Interrupt the session's turn if it runs in this process (other processes get the stop
    through the session's channel group, see consumers.ChatConsumer.chat_stop)."""
    with _running_lock:
        interrupt = _running.get(session_id)
    if interrupt is None:
        return False
    interrupt.set()
    return True


def is_busy(session_id: str) -> bool:
    return turns.is_busy(session_id)


def _finish_turn(session_id: str) -> None:
    with _running_lock:
        _running.pop(session_id, None)
    turns.release(session_id)


def take_agent(session_id: str) -> AgentSession | None:
    """This process's live agent of the session, no longer cached (the session is being ended)."""
    return _agents.pop(session_id)


def forget(session_id: str) -> None:
    """The session was deleted: stop its turn here and drop its cached agent."""
    stop_turn(session_id)
    agent = _agents.pop(session_id)
    if agent is not None:
        agent.close()


# -- a turn, as frames ---------------------------------------------------------------------------


def _tool_finished(e: ToolFinished) -> Frame:
    # Tool results can be long (file listings, search results); the card shows a readable head.
    result = e.result if len(e.result) <= MAX_RESULT_CHARS else e.result[:MAX_RESULT_CHARS] + "\n… (truncated)"
    return {
        "type": "tool_finished",
        "call_id": e.call_id,
        "name": e.name,
        "result": result,
        "ok": e.ok,
        "duration": round(e.duration, 3),
    }


def _saved(e: TurnSaved) -> Frame:
    return {
        "type": "saved",
        "turns_until_memory_review": e.turns_until_memory_review,
        "iters_until_skill_review": e.iters_until_skill_review,
        "review_spawned": e.review_spawned,
        "review_running": e.review_spawned or review.is_running(e.session_id),
    }


# Event type -> frame builder. ModelCalled is bookkeeping for the runner; the page ignores it.
FRAME_BUILDERS: dict[type, Callable[[Any], Frame | None]] = {
    TurnStarted: lambda e: {"type": "turn_started", "message_id": e.user_message_id, "text": e.text},
    TextDelta: lambda e: {"type": "delta", "text": e.text},
    # The model's thinking while it streams: the page shows it in a collapsed "Thinking" block.
    ReasoningDelta: lambda e: {"type": "reasoning", "text": e.text},
    # A feature the server lacks, learned this turn (e.g. no tool calls): one line for the person.
    ModelNotice: lambda e: {"type": "notice", "text": e.text},
    ModelCalled: lambda e: None,
    ToolStarted: lambda e: {"type": "tool_started", "call_id": e.call_id, "name": e.name, "arguments": e.arguments},
    ToolFinished: _tool_finished,
    TurnDone: lambda e: {
        "type": "done",
        "final_html": render_markdown(e.final_text),
        "interrupted": e.interrupted,
        "hit_limit": e.hit_limit,
    },
    TurnError: lambda e: {"type": "error", "error": e.message, "partial": e.partial_text, "retry": True},
    TurnSaved: _saved,
}


def event_frame(event: object) -> Frame | None:
    builder = FRAME_BUILDERS.get(type(event))
    return builder(event) if builder is not None else None


def _stored_title(session: ChatSession) -> str:
    """The title as stored now: the person or the model may have renamed the chat since this
    agent loaded it, and the page must not be set back to an older one."""
    session.title = ChatSession.objects.filter(pk=session.pk).values_list("title", flat=True).first() or session.title
    return session.display_title


def submit_turn(session_id: str, text: str, interrupt: threading.Event, emit: Emit) -> None:
    _turn_pool.submit(_drive_turn, session_id, text, interrupt, emit)


def _drive_turn(session_id: str, text: str, interrupt: threading.Event, emit: Emit) -> None:
    try:
        agent = _agent_for_turn(session_id)
        renewed = timezone.now()
        for event in agent.run_turn(text, interrupt):
            if timezone.now() - renewed > turns.RENEW_EVERY:  # a long turn keeps its lease
                renewed = timezone.now()
                turns.renew(session_id, now=renewed)
            frame = event_frame(event)
            if frame is not None:
                if frame["type"] == "saved":
                    frame["title"] = _stored_title(agent.session)  # the first message titles the chat
                emit(frame)
    except InputTooLarge as exc:
        emit({"type": "error", "error": str(exc), "retry": False})
    except ChatSession.DoesNotExist:
        _agents.pop(session_id)
        emit({"type": "error", "error": "This chat no longer exists (it was deleted).", "retry": False})
    except LLMError as exc:
        # Raised before the loop starts (e.g. no model configured); the user message is stored.
        emit({"type": "error", "error": exc.message, "partial": "", "retry": True})
    except Exception as exc:  # the page must hear about any failure instead of waiting forever
        log.exception("chat turn failed in session %s", session_id)
        emit({"type": "error", "error": f"The turn failed: {type(exc).__name__}: {exc}", "retry": True})
    finally:
        _finish_turn(session_id)
        close_old_connections()
        emit(None)


# -- sessions ----------------------------------------------------------------------------------


def create_session() -> ChatSession:
    """A new web session with its frozen system prompt (SPEC §2: snapshot at session start)."""
    agent = AgentSession.open(source="web")
    agent.close()
    return agent.session


# -- the stored conversation, shaped for the page ---------------------------------------------------


@dataclass
class ToolCard:
    call_id: str
    name: str
    arguments: str
    result: str = ""
    ok: bool = True
    duration: float | None = None
    pending: bool = True


# How an answer ended, when it did not end normally: kept with the message (finish_reason),
# so a reload shows a stopped answer as stopped (issue 13, defect 3).
ENDINGS = {
    "interrupted": "Stopped. What was written so far is kept.",
    "error": "Cut off by an error. What was written so far is kept.",
}


@dataclass
class Item:
    kind: str  # "user" | "assistant" | "tool"
    content: str = ""
    message_id: int = 0
    tool: ToolCard | None = None
    reasoning: str = ""  # the model's thinking, for a collapsed "Thinking" block
    ending: str = ""  # how an answer ended when it did not end normally (ENDINGS)
    verdict: str = ""  # the person's 👍/👎 on an answer: "good" | "bad"


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, TypeError):
        return arguments


def conversation(session: ChatSession) -> list[Item]:
    """User and assistant messages in order, each tool call a card joined to its result."""
    items: list[Item] = []
    cards: dict[str, tuple[ToolCard, Message]] = {}
    verdicts = dict(AnswerFeedback.objects.filter(message__session=session).values_list("message_id", "verdict"))
    for msg in Message.objects.filter(session=session).order_by("id"):
        if msg.role == "user":
            items.append(Item("user", msg.content, msg.pk))
        elif msg.role == "assistant":
            if msg.content:
                ending = ENDINGS.get(msg.finish_reason, "")
                verdict = verdicts.get(msg.pk, "")
                items.append(
                    Item("assistant", msg.content, msg.pk, reasoning=msg.reasoning, ending=ending, verdict=verdict)
                )
            for call in msg.tool_calls or []:
                fn = call.get("function") or {}
                card = ToolCard(str(call.get("id", "")), str(fn.get("name", "?")), _pretty(fn.get("arguments", "")))
                cards[card.call_id] = (card, msg)
                items.append(Item("tool", message_id=msg.pk, tool=card))
        elif msg.role == "tool" and msg.tool_call_id in cards:
            card, asked = cards[msg.tool_call_id]
            card.result = _pretty(msg.content[:MAX_RESULT_CHARS])
            card.ok = stored_ok(msg.content)
            # Durations are not stored; the gap between the call and its result is close to it.
            card.duration = max(0.0, (msg.created_at - asked.created_at).total_seconds())
            card.pending = False
    return items


def counters(session: ChatSession) -> dict[str, int | None]:
    """Turns until the next memory review / model calls until the next skill review."""
    config = hermes_config.get()
    # As the runner's counters: no memory tool (both targets off), no memory review.
    memory_tool = bool(config.get("memory", "memory_enabled") or config.get("memory", "user_profile_enabled"))
    mem = int(config.get("memory", "nudge_interval")) if memory_tool else 0
    skill = int(config.get("skills", "creation_nudge_interval"))
    return {
        "turns_until_memory_review": mem - session.turns_since_memory if mem > 0 else None,
        "iters_until_skill_review": skill - session.iters_since_skill if skill > 0 else None,
    }
