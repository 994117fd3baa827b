"""The browser chat's synchronous side: the busy state through knowledge.history.turns, turns on
worker threads, and live agents that notice another server process moved the conversation on."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from agent.chat import presenter
from agent.chat import service as chat_service
from knowledge.history import turns
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[3]


def test_the_page_counter_and_the_turns_saved_frame_agree_when_memory_is_off(home, llm):
    write_config(home, "memory:\n  memory_enabled: false\n  user_profile_enabled: false\n")
    session = chat_service.create_session()
    saved = _run_turn(session.pk, "hello")[-1]
    chat_service.forget(session.pk)
    assert saved["turns_until_memory_review"] is None
    session.refresh_from_db()
    assert presenter.counters(session)["turns_until_memory_review"] is None


def test_one_turn_at_a_time_stop_reaches_it_and_the_busy_state_is_on_the_row():
    s = ChatSession.objects.create()
    interrupt = chat_service.try_begin_turn(s.pk)
    assert interrupt is not None and chat_service.is_busy(s.pk) and turns.is_busy(s.pk)
    assert chat_service.try_begin_turn(s.pk) is None  # a second tab
    assert chat_service.stop_turn(s.pk) and interrupt.is_set()
    assert not chat_service.stop_turn("not-running-here")
    chat_service.forget(s.pk)
    # Another server's expired claim does not hold the chat.
    turns.release(s.pk)
    past = turns.LEASE + timedelta(minutes=1)
    assert turns.claim(s.pk, worker="elsewhere:1", now=s.started_at - past)
    assert not chat_service.is_busy(s.pk)
    assert chat_service.try_begin_turn(s.pk) is not None
    chat_service.stop_turn(s.pk)
    chat_service.forget(s.pk)  # no heartbeat left renewing this test's chat
    turns.release(s.pk)


def test_a_deleted_chat_cannot_begin_a_turn():
    with pytest.raises(ChatSession.DoesNotExist):
        chat_service.try_begin_turn("gone")


def test_start_turn_claims_on_the_turns_thread_and_says_how_it_went(home, llm):
    session = chat_service.create_session()
    outcomes: queue.Queue = queue.Queue()
    frames: queue.Queue = queue.Queue()
    chat_service.start_turn(session.pk, "hello", frames.put, outcomes.put)
    assert isinstance(outcomes.get(timeout=30), threading.Event)
    while frames.get(timeout=30) is not None:
        pass
    # Busy elsewhere: told so, and nothing runs.
    held = chat_service.try_begin_turn(session.pk)
    assert held is not None
    chat_service.start_turn(session.pk, "again", frames.put, outcomes.put)
    assert outcomes.get(timeout=30) is None and frames.empty()
    chat_service.forget(session.pk)
    turns.release(session.pk)
    # A deleted chat: the error is handed over.
    chat_service.start_turn("0" * 32, "hi", frames.put, outcomes.put)
    assert isinstance(outcomes.get(timeout=30), ChatSession.DoesNotExist)


def test_a_claim_nobody_can_hear_gives_the_chat_back(home, llm):
    """The server stops while a turn is being claimed: its event loop is gone, so the turn would
    run unseen; the lease is given back and nothing is stored."""
    session = chat_service.create_session()
    heard: queue.Queue = queue.Queue()

    def loop_closed(outcome: object) -> None:
        heard.put(outcome)
        raise RuntimeError("Event loop is closed")

    frames: queue.Queue = queue.Queue()
    chat_service.start_turn(session.pk, "hello", frames.put, loop_closed)
    assert isinstance(heard.get(timeout=30), threading.Event)
    deadline = time.monotonic() + 10
    while chat_service.is_busy(session.pk) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not chat_service.is_busy(session.pk)
    assert frames.empty() and not Message.objects.filter(session=session, role="user").exists()


def _run_turn(session_id: str, text: str) -> list[dict]:
    interrupt = chat_service.try_begin_turn(session_id)
    assert interrupt is not None
    frames: queue.Queue = queue.Queue()
    chat_service.submit_turn(session_id, text, interrupt, frames.put)
    out = []
    while (frame := frames.get(timeout=30)) is not None:
        out.append(frame)
    return out


def test_a_turn_frees_the_chat_and_the_cached_agent_sees_what_another_process_stored(home, llm):
    llm.default = lambda body: Reply(text=f"seen {len(body['messages'])} messages")
    session = chat_service.create_session()
    frames = _run_turn(session.pk, "first")
    assert [f["type"] for f in frames if f["type"] != "delta"] == ["turn_started", "usage", "done", "saved"]
    assert "".join(f["text"] for f in frames if f["type"] == "delta") == "seen 2 messages"
    assert frames[-1]["title"] == "first" and not chat_service.is_busy(session.pk)
    # Another server process answers a turn of this chat: its rows land in the shared database.
    Message.objects.create(session=session, role="user", content="from the other server")
    Message.objects.create(session=session, role="assistant", content="answered there")
    ChatSession.objects.filter(pk=session.pk).update(message_count=4)
    _run_turn(session.pk, "second")
    sent = [m["content"] for m in llm.chat_requests()[-1]["messages"][1:]]
    assert sent == ["first", "seen 2 messages", "from the other server", "answered there", "second"]
    chat_service.forget(session.pk)


def test_a_turn_of_a_deleted_chat_reports_it_instead_of_hanging(home, llm):
    session = chat_service.create_session()
    interrupt = chat_service.try_begin_turn(session.pk)
    assert interrupt is not None
    ChatSession.objects.filter(pk=session.pk).delete()
    frames: queue.Queue = queue.Queue()
    chat_service.submit_turn(session.pk, "hello?", interrupt, frames.put)
    first = frames.get(timeout=30)
    assert first == {"type": "error", "error": "This chat no longer exists (it was deleted).", "retry": False}
    assert frames.get(timeout=30) is None


@pytest.mark.slow  # a fresh Python process imports the service
def test_importing_the_service_starts_no_turn_threads(tmp_path):
    # A management command or a worker that imports the chat only for its helpers pays for no pool.
    script = (
        "import django, threading; django.setup()\n"
        "import agent.chat.service as service\n"
        "print(service._turn_pool is None, any(t.name.startswith('chat-turn') for t in threading.enumerate()))\n"
    )
    env = {**os.environ, "HERMES_HOME": str(tmp_path), "DJANGO_SETTINGS_MODULE": "hermes_site.settings"}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "False"], out.stderr


def test_a_running_turn_is_kept_alive_by_the_heartbeat_until_it_ends(home, llm, monkeypatch):
    session = chat_service.create_session()
    llm.push(Reply(text="done"))
    held: list[list[str]] = []
    real_hold = chat_service.heartbeat.hold

    def hold(session_id: str, on_lost: Callable[[], None]) -> None:
        real_hold(session_id, on_lost)
        held.append(chat_service.heartbeat.held())

    monkeypatch.setattr(chat_service.heartbeat, "hold", hold)
    frames = _run_turn(session.pk, "hello")
    assert held == [[session.pk]]  # from the claim on
    assert session.pk not in chat_service.heartbeat.held() and not turns.is_busy(session.pk)
    assert frames[-1]["type"] == "saved"
