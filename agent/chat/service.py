"""The browser chat's synchronous side: live agents per session and turns run on worker threads.

The websocket consumer stays a translator: it asks this module to start a turn, and receives
the turn's frames (plain dicts, in order, built by agent/chat/frames.py) through the `emit`
callback it passes in. Everything here runs in ordinary threads, so the ORM is used directly.
The stored conversation shaped for the page is agent/chat/presenter.py.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections

from agent.chat.frames import Frame, TurnFrames
from agent.chat.runner import AgentSession, InputTooLarge, TurnShape, default_client_factory
from agent.chat.versions import TurnRequest
from agent.llm import LLMError, StopSignal
from agent.loop import ModelClient
from foundation.config import Config
from knowledge.history import runs, turns
from knowledge.history.heartbeat import LeaseKeeper
from knowledge.models import ChatSession
from knowledge.versions import VersionError

log = logging.getLogger(__name__)

Emit = Callable[[Frame | None], None]  # None marks the end of a turn's frames

BUSY_MESSAGE = "A reply is still being written… wait for it to finish or press Stop."

# Turns run here, not on the event loop: the runner is a blocking generator (HTTP + ORM).
# A turn spends nearly all its time waiting for the model (a real model streams for seconds),
# so threads, not cores, bound how many chats answer at once: with 8 the 9th chat waited for a
# free thread and 20 chats at a real model's pace got 37% of the possible turns/s (bench/live.py).
# Idle threads cost only their stacks; each keeps one SQLite connection.
TURN_THREADS = 128
# Made by the first turn, not at import: a management command or a test that imports this module
# starts no threads.
_turn_pool: ThreadPoolExecutor | None = None
_turn_pool_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _turn_pool
    if _turn_pool is None:
        with _turn_pool_lock:
            if _turn_pool is None:
                _turn_pool = ThreadPoolExecutor(max_workers=TURN_THREADS, thread_name_prefix="chat-turn")
    return _turn_pool


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

    def get(self, session_id: str, shape: TurnShape | None) -> AgentSession:
        """The cached agent if it is still current for the stored chat (`shape`, just read), else
        the chat reopened from its stored rows."""
        with self._lock:
            agent = self._agents.pop(session_id, None)
        if agent is None or not agent.is_current(shape):
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


def _agent_for_turn(session_id: str) -> tuple[AgentSession, TurnShape]:
    """The agent for this turn and the chat's shape it follows (one read of the row). Called
    while this turn holds the session's lease, so no turn is using a client that gets closed."""
    shape = TurnShape.read(session_id)
    if shape is None:
        raise ChatSession.DoesNotExist(f"chat session {session_id} does not exist")
    return _agents.get(session_id, shape), shape


# Interrupt flags of the turns running on this process's threads, by session id.
_running: dict[str, threading.Event] = {}
_running_lock = threading.Lock()
# Renews the leases of those turns every few seconds, however slowly their model answers; a
# lease lost anyway (this process froze past it) stops its turn.
heartbeat = LeaseKeeper()


def try_begin_turn(session_id: str) -> threading.Event | None:
    """Claim the session for a turn; None when a turn (from any tab, on any server) is running.

    Raises ChatSession.DoesNotExist for a deleted session."""
    if not turns.claim(session_id):
        return None
    interrupt = StopSignal()
    with _running_lock:
        _running[session_id] = interrupt
    heartbeat.hold(session_id, interrupt.set)
    return interrupt


def stop_turn(session_id: str) -> bool:
    """Interrupt the session's turn if it runs in this process (Stop pressed on any socket
    reaches the process running the turn through its hub, agent/chat/turn_hub.py)."""
    with _running_lock:
        interrupt = _running.get(session_id)
    if interrupt is None:
        return False
    interrupt.set()
    return True


def is_busy(session_id: str) -> bool:
    return turns.is_busy(session_id)


def _finish_turn(session_id: str) -> None:
    heartbeat.drop(session_id)
    with _running_lock:
        _running.pop(session_id, None)
    turns.release(session_id)


def take_agent(session_id: str) -> AgentSession | None:
    """This process's live agent of the session, no longer cached (the session is being ended)."""
    return _agents.pop(session_id)


def forget(session_id: str) -> None:
    """The session was deleted: stop its turn here (no lease left to renew) and drop its cached agent."""
    stop_turn(session_id)
    heartbeat.drop(session_id)
    agent = _agents.pop(session_id)
    if agent is not None:
        agent.close()


def _saved_state(session: ChatSession, frame: Frame) -> None:
    """The title as stored now (the person or the model may have renamed the chat since this agent
    loaded it, and the page must not be set back to an older one) and whether a review is running."""
    title, reviewing = runs.title_and_review(session.pk)
    session.title = title or session.title
    frame["title"] = session.display_title  # the first message titles the chat
    frame["review_running"] = bool(frame.get("review_running")) or reviewing


def submit_turn(
    session_id: str, text: str, interrupt: threading.Event, emit: Emit, request: TurnRequest | None = None
) -> None:
    """Run the turn of a session claimed already (`try_begin_turn`) on a turn thread."""
    _pool().submit(_drive_turn, session_id, text, interrupt, emit, request)


Claimed = Callable[[threading.Event | None | Exception], None]


def start_turn(session_id: str, text: str, emit: Emit, claimed: Claimed, request: TurnRequest | None = None) -> None:
    """Claim the session and run its turn, both on a turn thread: `claimed` hears the claim's
    outcome first (the turn's Stop flag; None when a turn of the session runs elsewhere; or the
    error, e.g. `ChatSession.DoesNotExist`), then `emit` the turn's frames if it was claimed.

    One hop from the event loop instead of two (the claim on a thread of its own, then the
    turn on another): on this kind of machine each thread woken costs 0.2-0.3 ms of CPU."""
    _pool().submit(_claim_and_drive, session_id, text, emit, claimed, request)


def _claim_and_drive(session_id: str, text: str, emit: Emit, claimed: Claimed, request: TurnRequest | None) -> None:
    try:
        interrupt = try_begin_turn(session_id)
    except Exception as exc:  # noqa: BLE001 - the caller tells the page (a deleted chat, a database error)
        close_old_connections()
        claimed(exc)
        return
    try:
        claimed(interrupt)
    except RuntimeError:  # the event loop closed (the server stops): nobody waits for this turn
        if interrupt is not None:
            _finish_turn(session_id)  # the lease given back; nothing was stored
        close_old_connections()
        return
    if interrupt is None:
        close_old_connections()
        return
    _drive_turn(session_id, text, interrupt, emit, request)


def _drive_turn(
    session_id: str, text: str, interrupt: threading.Event, emit: Emit, request: TurnRequest | None = None
) -> None:
    try:
        agent, shape = _agent_for_turn(session_id)
        shaped = TurnFrames()  # this turn's answers rendered as they stream
        for event in agent.run_turn(text, interrupt, request, shape):
            for frame in shaped.frames(event):
                if frame["type"] == "saved":
                    _saved_state(agent.session, frame)
                emit(frame)
    except (InputTooLarge, VersionError) as exc:  # nothing was stored
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
    """A new web session with its frozen system prompt (memory is read into it once, at session start)."""
    agent = AgentSession.open(source="web")
    agent.close()
    return agent.session
